// The chat page: a sidebar of the owner's chats (GET /api/chats) and the open chat, driven by AI SDK
// UI's useChat against statebag/http's handler. A reply runs on the server whoever listens: a
// reload resumes it (useChat's `resume`, GET /api/chat/:id/stream), Stop asks the server to end it
// and keep what was written (POST /api/chat/:id/stop; useChat's own stop() would only disconnect).
// Bundled by esbuild when server.ts starts; type checked with ../tsconfig.json (DOM, react-jsx).
import { useChat } from "@ai-sdk/react";
import {
  DefaultChatTransport,
  getToolName,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatAddToolApproveResponseFunction,
  type FileUIPart,
  type UIMessage,
} from "ai";
import { type ClipboardEvent, type FormEvent, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";

/** A row of GET /api/chats. */
interface ChatSummary {
  id: string;
  title: string;
  updatedAt: string;
  /** For a fork: the chat it was forked from. */
  forkedFrom?: string;
}

/** An `application/problem+json` body, as statebag/http and server.ts answer errors. */
interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
}

// A demo owner: one random id per browser, in a cookie. A real app uses its login instead.
if (!/(?:^|;\s*)owner=/.test(document.cookie)) {
  // biome-ignore lint/suspicious/noDocumentCookie: one cookie set once; the Cookie Store API is not in every browser
  document.cookie = `owner=${crypto.randomUUID().replace(/-/g, "")}; path=/; SameSite=Strict`;
}

const newId = () => crypto.randomUUID().replace(/-/g, "").slice(0, 16);
const chatIdFromPath = () => /^\/c\/([A-Za-z0-9_-]+)$/.exec(location.pathname)?.[1];

function readProblem(text: string | undefined): Problem | undefined {
  try {
    const value = JSON.parse(text ?? "") as unknown;
    return typeof value === "object" && value !== null ? (value as Problem) : undefined;
  } catch {
    return undefined;
  }
}

/** What to tell a person about a refused request: what happened and what to do, never raw JSON. */
function friendly(status: number, problem: Problem | undefined): string {
  const kind = problem?.type?.replace(/^urn:statebag:problem:/, "");
  switch (kind) {
    case "chat-busy":
      return "A reply is still being written in this chat. Wait for it to finish (or stop it), then send your message again.";
    case "tool-approval-pending":
      return "This chat is waiting for your answer to a tool approval above. Approve or deny it, then send your message again.";
    case "tool-approval-not-pending":
      return "This approval was already answered, in another tab or window. The chat above shows what came of it.";
    case "chat-conflict":
    case "message-id-taken":
      return "This chat was changed in another tab or window. Reload the page to see the latest, then send your message again.";
    case "message-too-long":
    case "body-too-large":
      return "Your message is too long to send. Shorten it and send it again.";
    case "file-too-large":
      return "An attached file is too large. Attach a smaller one and send again; your text is still below.";
    case "file-type-not-allowed":
      return "This kind of file cannot be attached (images, PDF and plain text can). Your text is still below.";
    case "too-many-files":
      return "Too many files in one message. Remove some and send again.";
    case "file-storage-full":
      return "There is no room left for more files. Delete older chats, then send again.";
    default:
      break;
  }
  if (status === 401) return "You are not signed in. Sign in again, then send your message again.";
  if (status === 429) return "Too many messages at once. Wait a moment, then send your message again.";
  if (status >= 500)
    return "The server could not take your message right now. Your text is still below: try again in a moment.";
  return problem?.detail ?? `The server refused the message (HTTP ${status}). Your text is still below.`;
}

async function problemText(response: Response): Promise<string> {
  return friendly(response.status, readProblem(await response.text().catch(() => "")));
}

/** How a reply ended early, from the UI metadata statebag/http gives it (`metadata.statebag.finish`). */
function finishOf(message: UIMessage): string | undefined {
  const finish = (message.metadata as { statebag?: { finish?: unknown } } | undefined)?.statebag?.finish;
  return typeof finish === "string" ? finish : undefined;
}

const FINISH_TEXT: Record<string, string> = {
  stopped: "Stopped: the reply was cut off here at your request.",
  interrupted: "Interrupted: the server went away before the reply was finished. What was written is kept.",
  failed: "The reply failed before it was finished. What was written is kept.",
};

function App() {
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const [current, setCurrent] = useState<{ id: string; stored: boolean }>(() => ({
    id: chatIdFromPath() ?? newId(),
    stored: Boolean(chatIdFromPath()),
  }));
  const [initial, setInitial] = useState<UIMessage[] | undefined>(current.stored ? undefined : []);
  const [loadError, setLoadError] = useState<string>();
  const [notice, setNotice] = useState<string>();

  const refreshChats = useCallback(async () => {
    const response = await fetch("/api/chats?limit=50");
    if (response.ok) setChats(((await response.json()) as { chats: ChatSummary[] }).chats);
  }, []);

  useEffect(() => void refreshChats(), [refreshChats]);

  useEffect(() => {
    if (!current.stored) return;
    let cancelled = false;
    setInitial(undefined);
    setLoadError(undefined);
    fetch(`/api/chats/${current.id}`).then(async (response) => {
      if (cancelled) return;
      if (response.ok) setInitial((await response.json()) as UIMessage[]);
      else if (response.status === 404) setInitial([]);
      else setLoadError(await problemText(response));
    });
    return () => {
      cancelled = true;
    };
  }, [current]);

  const open = (id: string) => {
    history.pushState(null, "", `/c/${id}`);
    setCurrent({ id, stored: true });
  };
  const startNew = () => {
    history.pushState(null, "", "/");
    setInitial([]);
    setLoadError(undefined);
    setCurrent({ id: newId(), stored: false });
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: registered once; startNew only calls state setters, which React keeps stable
  useEffect(() => {
    const onPop = () => {
      const id = chatIdFromPath();
      if (id) setCurrent({ id, stored: true });
      else startNew();
    };
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  /** An erasure request for the signed-in owner: every chat, with everything the store keeps of it. */
  const eraseMyData = async () => {
    if (!confirm("Erase all your chats and everything kept with them? This cannot be undone.")) return;
    const response = await fetch("/api/erase", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    if (!response.ok) {
      setNotice(`Nothing was erased: ${await problemText(response)}`);
      return;
    }
    const receipt = (await response.json()) as { sessions: number };
    setChats([]);
    startNew();
    setNotice(`Erased: ${receipt.sessions} chat${receipt.sessions === 1 ? "" : "s"} and everything kept with them.`);
    void refreshChats();
  };

  return (
    <div className="layout">
      <aside>
        <button type="button" className="new" onClick={startNew} data-testid="new-chat">
          + New chat
        </button>
        <ul data-testid="chat-list">
          {chats.map((chat) => (
            <li key={chat.id}>
              <a
                href={`/c/${chat.id}`}
                className={chat.id === current.id ? "active" : ""}
                onClick={(e) => (e.preventDefault(), open(chat.id))}
              >
                {chat.title || "Untitled chat"}
                {chat.forkedFrom && <span className="muted small"> (fork)</span>}
              </a>
            </li>
          ))}
        </ul>
        {chats.length === 0 && <p className="muted small">No chats yet.</p>}
        <button type="button" className="erase" onClick={() => void eraseMyData()} data-testid="erase">
          Erase my data
        </button>
      </aside>
      <main>
        {notice && (
          <p className="notice" role="status" data-testid="notice">
            {notice}{" "}
            <button type="button" className="link" onClick={() => setNotice(undefined)}>
              Dismiss
            </button>
          </p>
        )}
        {loadError ? (
          <p className="error" role="alert">
            {loadError}
          </p>
        ) : initial === undefined ? (
          <p className="muted">Loading…</p>
        ) : (
          <Chat
            key={current.id}
            id={current.id}
            stored={current.stored}
            initialMessages={initial}
            // Once the server has the message (the reply starts, or ends), the chat has its address:
            // a reload from here on comes back to it, and the list shows it.
            onTurn={() => {
              if (chatIdFromPath() !== current.id) history.replaceState(null, "", `/c/${current.id}`);
              void refreshChats();
            }}
            onForked={(forkId) => {
              void refreshChats();
              open(forkId);
            }}
          />
        )}
      </main>
    </div>
  );
}

function Chat({
  id,
  stored,
  initialMessages,
  onTurn,
  onForked,
}: {
  id: string;
  stored: boolean;
  initialMessages: UIMessage[];
  onTurn: () => void;
  onForked: (forkId: string) => void;
}) {
  const [input, setInput] = useState("");
  /** Files attached to the next message (file input or paste), as data: URLs. */
  const [files, setFiles] = useState<FileUIPart[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
  const [problem, setProblem] = useState<string>();
  const [stopping, setStopping] = useState(false);
  /** The text of the message in flight: put back in the input if the server refuses it. */
  const sent = useRef<string | undefined>(undefined);
  /** The files of the message in flight: attached again if the server refuses it. */
  const sentFiles = useRef<FileUIPart[]>([]);
  const messagesBox = useRef<HTMLDivElement>(null);
  /** Whether the list is scrolled to its end: new text keeps it there, unless the reader scrolled up. */
  const atEnd = useRef(true);

  /** Automatic recoveries since the last reply that ended well: a server that keeps failing is not retried forever. */
  const recoveries = useRef(0);

  /** Set while a regeneration or an edit runs: when it ends, the chat is read again for its ‹ n/count › marks. */
  const branching = useRef(false);

  const { messages, setMessages, sendMessage, regenerate, resumeStream, addToolApprovalResponse, status } = useChat({
    id,
    messages: initialMessages,
    // A reply still running on the server (this chat was reloaded mid-reply) continues here. A chat
    // not stored yet has nothing to resume (its stream route would answer 404).
    resume: stored && initialMessages.length > 0,
    transport: new DefaultChatTransport({
      api: "/api/chat",
      // Only the new message goes up: the server keeps the history.
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
        body: { id, message: messages[messages.length - 1], trigger, messageId },
      }),
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: ({ isError }) => {
      sent.current = undefined;
      if (!isError) {
        setProblem(undefined);
        recoveries.current = 0;
      }
      if (branching.current) {
        branching.current = false;
        void reloadChat();
      }
      onTurn();
    },
    onError: (error) => void onError(error),
  });

  /**
   * After a reply broke off: the chat as the server has it (what was kept, with its mark), and the
   * reply itself if it still runs (a lost connection, not a dead server). False when the server
   * cannot be reached.
   */
  const recover = async (): Promise<boolean> => {
    if (recoveries.current >= 2) return false;
    recoveries.current++;
    const response = await fetch(`/api/chats/${id}`).catch(() => undefined);
    if (!response?.ok) return false;
    setMessages((await response.json()) as UIMessage[]);
    void resumeStream(); // 204 (nothing runs) leaves the chat as loaded
    return true;
  };

  /** The chat as the server has it now (after a branch operation: with the ‹ n/count › marks). */
  const reloadChat = async () => {
    const response = await fetch(`/api/chats/${id}`).catch(() => undefined);
    if (response?.ok) setMessages((await response.json()) as UIMessage[]);
  };

  const onError = async (error: Error) => {
    const { statusCode, responseBody } = error as Error & { statusCode?: number; responseBody?: string };
    if (statusCode === undefined) {
      // The stream broke off: an error chunk from the server (its text is written for people), or a
      // lost connection (a TypeError from fetch). The server keeps what was written either way.
      setProblem(
        error.name === "TypeError" || !error.message
          ? "The connection to the server was lost. Reload the page when it is back: a reply still running goes on, and what was written is kept."
          : error.message,
      );
      // Reloaded from the server, the chat shows what was kept and how it ended: nothing more to say.
      if (await recover()) setProblem(undefined);
      return;
    }
    // The server refused the request: nothing of it was kept. Take the unsent message back into
    // the input, so nothing typed is lost.
    const problem = readProblem(responseBody);
    setProblem(friendly(statusCode, problem));
    if (branching.current) {
      // A refused regeneration or edit (the chat changed meanwhile): show the chat as stored; an
      // edit's text goes back into the input, so nothing typed is lost.
      branching.current = false;
      const text = sent.current;
      sent.current = undefined;
      if (text !== undefined) setInput((typed) => (typed.trim() === "" ? text : typed));
      // Busy: another tab's reply runs here; follow it live, as for a refused new message.
      if (problem?.type === "urn:statebag:problem:chat-busy") await recover();
      else await reloadChat();
      return;
    }
    const text = sent.current;
    const unsentFiles = sentFiles.current;
    sent.current = undefined;
    sentFiles.current = [];
    if (text === undefined) {
      // Not a new message (an approval answer): what this page shows may be out of date (answered
      // in another tab). Show the chat as the server has it, and follow a reply still running.
      await recover();
      return;
    }
    setMessages((all) => {
      const last = all[all.length - 1];
      const unsent =
        last?.role === "user" &&
        (last.parts.some((p) => p.type === "text" && p.text === text) || (text === "" && unsentFiles.length > 0))
          ? all.slice(0, -1)
          : all;
      return unsent;
    });
    setInput((typed) => (typed.trim() === "" ? text : typed));
    setFiles((attached) => (attached.length === 0 ? unsentFiles : attached));
    // Busy: a reply started elsewhere (another tab) is running in this chat. Show it here, live, with
    // its question; the text stays in the input for when it is done (or stopped).
    if (problem?.type === "urn:statebag:problem:chat-busy") await recover();
  };

  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when a reply starts streaming, not when the callback's identity changes
  useEffect(() => {
    if (status !== "streaming") return;
    sent.current = undefined; // the server has it: nothing to give back any more
    onTurn();
  }, [status]);

  const busy = status === "submitted" || status === "streaming";
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const text = input;
    if ((!text.trim() && files.length === 0) || busy) return;
    setProblem(undefined);
    sent.current = text;
    sentFiles.current = files;
    atEnd.current = true;
    void sendMessage(files.length > 0 ? { text, files } : { text });
    setInput("");
    setFiles([]);
  };

  /** Reads picked or pasted files into data: URLs (the server keeps them in its blob store). */
  const attach = async (picked: readonly File[]) => {
    const read = (file: File) =>
      new Promise<FileUIPart>((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () =>
          resolve({
            type: "file",
            mediaType: file.type || "application/octet-stream",
            filename: file.name || undefined,
            url: String(reader.result),
          });
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(file);
      });
    const parts = await Promise.all(picked.map(read));
    setFiles((attached) => [...attached, ...parts]);
  };
  const onPaste = (e: ClipboardEvent) => {
    const pasted = [...e.clipboardData.files];
    if (pasted.length === 0) return;
    e.preventDefault();
    void attach(pasted);
  };

  const stopReply = async () => {
    setStopping(true);
    try {
      // The server ends the reply, keeps what was written and marks it stopped; the stream this page
      // reads ends with that mark. 202: the stop is under way, a reload shows the result.
      // A JSON body, as the route requires: a page of another site cannot send one without the
      // browser asking first, so it cannot stop your reply.
      const response = await fetch(`/api/chat/${encodeURIComponent(id)}/stop`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      if (!response.ok) setProblem(`Could not stop the reply: ${await problemText(response)}`);
    } catch {
      setProblem("Could not reach the server to stop the reply. Try again.");
    } finally {
      setStopping(false);
    }
  };

  // Keep the newest message in view while it grows, unless the reader has scrolled up.
  useLayoutEffect(() => {
    const box = messagesBox.current;
    if (box && atEnd.current) box.scrollTop = box.scrollHeight;
  });
  const onScroll = () => {
    const box = messagesBox.current;
    if (box) atEnd.current = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
  };

  return (
    <div className="chat">
      <div className="messages" data-testid="messages" ref={messagesBox} onScroll={onScroll}>
        {messages.length === 0 && (
          <p className="muted">Ask about the weather in a city, ask me to email someone, or ask for a story.</p>
        )}
        {messages.map((message) => {
          const finish = message.role === "assistant" ? finishOf(message) : undefined;
          return (
            <div key={message.id} className={`message ${message.role}`} data-role={message.role}>
              <div className="who">{message.role === "user" ? "You" : "Assistant"}</div>
              {message.parts.map((part, i) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a message's parts never reorder; the index is their identity
                <Part key={i} part={part} onAnswer={addToolApprovalResponse} />
              ))}
              {finish && (
                <div className={`finish ${finish}`} data-testid="finish-marker" data-finish={finish}>
                  {FINISH_TEXT[finish] ?? `Ended early (${finish}).`}
                </div>
              )}
              <BranchControls
                chatId={id}
                message={message}
                busy={busy}
                onRegenerate={() => {
                  branching.current = true;
                  setProblem(undefined);
                  void regenerate({ messageId: message.id });
                }}
                onEdit={(text) => {
                  branching.current = true;
                  sent.current = text;
                  setProblem(undefined);
                  void sendMessage({ text, messageId: message.id });
                }}
                onSwitched={setMessages}
                onForked={onForked}
                onProblem={setProblem}
              />
            </div>
          );
        })}
        {status === "submitted" && <p className="muted">Thinking…</p>}
      </div>
      {problem && (
        <p className="problem" role="alert" data-testid="chat-error">
          {problem}
        </p>
      )}
      {files.length > 0 && (
        <div className="attachments" data-testid="attachments">
          {files.map((file, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: attachments are only appended or removed by index
            <span key={i} className="attachment">
              {file.mediaType.startsWith("image/") ? <img src={file.url} alt={file.filename ?? "image"} /> : null}
              {file.filename ?? file.mediaType}
              <button
                type="button"
                aria-label="Remove"
                onClick={() => setFiles((all) => all.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </span>
          ))}
        </div>
      )}
      <form onSubmit={submit}>
        <input
          ref={fileInput}
          type="file"
          accept="image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain"
          multiple
          hidden
          data-testid="file-input"
          onChange={(e) => {
            void attach([...(e.target.files ?? [])]);
            e.target.value = "";
          }}
        />
        <button
          type="button"
          className="attach"
          onClick={() => fileInput.current?.click()}
          data-testid="attach"
          aria-label="Attach a file"
        >
          +
        </button>
        <input
          value={input}
          onPaste={onPaste}
          onChange={(e) => setInput(e.target.value)}
          placeholder="Message"
          aria-label="Message"
          data-testid="input"
        />
        {busy ? (
          <button type="button" onClick={() => void stopReply()} disabled={stopping} data-testid="stop">
            {stopping ? "Stopping…" : "Stop"}
          </button>
        ) : (
          <button type="submit" data-testid="send">
            Send
          </button>
        )}
      </form>
    </div>
  );
}

/** Where a message stands among its versions (`metadata.branch` of GET /api/chats/:id). */
interface BranchMark {
  index: number;
  count: number;
  siblingIds: string[];
}

const branchOf = (message: UIMessage) => (message.metadata as { branch?: BranchMark } | undefined)?.branch;

/** POSTs a JSON body to a branch route of the chat; the parsed answer, or the sentence to show. */
async function postBranch(chatId: string, route: "switch" | "fork", body: unknown): Promise<unknown> {
  const response = await fetch(`/api/chats/${encodeURIComponent(chatId)}/${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(await problemText(response));
  return response.json();
}

/**
 * A message's branch controls: ‹ n/count › between its versions (POST /api/chats/:id/switch),
 * Regenerate for an answer, Edit for a question (sent again as a new version), Fork (a new chat
 * with the conversation up to here).
 */
function BranchControls({
  chatId,
  message,
  busy,
  onRegenerate,
  onEdit,
  onSwitched,
  onForked,
  onProblem,
}: {
  chatId: string;
  message: UIMessage;
  busy: boolean;
  onRegenerate: () => void;
  onEdit: (text: string) => void;
  onSwitched: (messages: UIMessage[]) => void;
  onForked: (forkId: string) => void;
  onProblem: (text: string) => void;
}) {
  const [editing, setEditing] = useState<string>();
  const branch = branchOf(message);
  const text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  const go = (to: number) =>
    void postBranch(chatId, "switch", { messageId: branch!.siblingIds[to] })
      .then((messages) => onSwitched(messages as UIMessage[]))
      .catch((error: Error) => onProblem(error.message));
  const fork = () =>
    void postBranch(chatId, "fork", { messageId: message.id })
      .then((answer) => onForked((answer as { id: string }).id))
      .catch((error: Error) => onProblem(error.message));
  if (editing !== undefined)
    return (
      <form
        className="edit"
        onSubmit={(e) => {
          e.preventDefault();
          if (!editing.trim()) return;
          setEditing(undefined);
          onEdit(editing);
        }}
      >
        <input
          value={editing}
          onChange={(e) => setEditing(e.target.value)}
          aria-label="Edit message"
          data-testid="edit-input"
        />
        <button type="submit" data-testid="edit-send">
          Send
        </button>
        <button type="button" className="link" onClick={() => setEditing(undefined)}>
          Cancel
        </button>
      </form>
    );
  return (
    <div className="branch-controls">
      {branch && branch.count > 1 && (
        <span className="versions" data-testid="versions">
          <button
            type="button"
            aria-label="Previous version"
            disabled={busy || branch.index === 0}
            onClick={() => go(branch.index - 1)}
            data-testid="version-prev"
          >
            ‹
          </button>
          <span data-testid="version-label">
            {branch.index + 1}/{branch.count}
          </span>
          <button
            type="button"
            aria-label="Next version"
            disabled={busy || branch.index === branch.count - 1}
            onClick={() => go(branch.index + 1)}
            data-testid="version-next"
          >
            ›
          </button>
        </span>
      )}
      {message.role === "assistant" && (
        <button type="button" className="link" disabled={busy} onClick={onRegenerate} data-testid="regenerate">
          Regenerate
        </button>
      )}
      {message.role === "user" && text !== "" && (
        <button type="button" className="link" disabled={busy} onClick={() => setEditing(text)} data-testid="edit">
          Edit
        </button>
      )}
      <button type="button" className="link" disabled={busy} onClick={fork} data-testid="fork">
        Fork
      </button>
    </div>
  );
}

function Part({ part, onAnswer }: { part: UIMessage["parts"][number]; onAnswer: ChatAddToolApproveResponseFunction }) {
  if (part.type === "text") return <p className="text">{part.text}</p>;
  if (part.type === "reasoning") return <p className="reasoning">{part.text}</p>;
  if (part.type === "file")
    return part.mediaType.startsWith("image/") ? (
      <img className="file-image" src={part.url} alt={part.filename ?? "image"} data-testid="file-image" />
    ) : (
      <a className="file" href={part.url} target="_blank" rel="noreferrer" data-testid="file-link">
        {part.filename ?? part.mediaType}
      </a>
    );
  if (!isToolUIPart(part)) return null;
  const name = getToolName(part);
  return (
    <div className={`tool ${part.state}`} data-testid={`tool-${name}`} data-state={part.state}>
      <div className="tool-head">
        <code>{name}</code> <span className="muted">{JSON.stringify(part.input)}</span>
      </div>
      {part.state === "approval-requested" && (
        <div className="approval">
          <span>This tool needs your approval.</span>
          <button
            type="button"
            data-testid="approve"
            onClick={() => onAnswer({ id: part.approval.id, approved: true })}
          >
            Approve
          </button>
          <button
            type="button"
            data-testid="deny"
            onClick={() => onAnswer({ id: part.approval.id, approved: false, reason: "denied in the page" })}
          >
            Deny
          </button>
        </div>
      )}
      {part.state === "approval-responded" && (
        <div className="muted">{part.approval.approved ? "Approved, running…" : "Denied"}</div>
      )}
      {part.state === "output-available" && (
        <pre className="output" data-testid="tool-output">
          {JSON.stringify(part.output, null, 2)}
        </pre>
      )}
      {part.state === "output-error" && <div className="error">{part.errorText}</div>}
      {part.state === "output-denied" && (
        <div className="muted">Denied{part.approval?.reason ? `: ${part.approval.reason}` : ""}</div>
      )}
    </div>
  );
}

createRoot(document.getElementById("root")!).render(<App />);
