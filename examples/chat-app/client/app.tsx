// The chat page: a sidebar of the owner's chats (GET /api/chats) and the open chat, driven by AI SDK
// UI's useChat against statebag/http's handler. Bundled by esbuild when server.ts starts; type
// checked with ../tsconfig.json (DOM, react-jsx).
import { useChat } from "@ai-sdk/react";
import {
  DefaultChatTransport,
  getToolName,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatAddToolApproveResponseFunction,
  type UIMessage,
} from "ai";
import { useCallback, useEffect, useState, type FormEvent } from "react";
import { createRoot } from "react-dom/client";

/** A row of GET /api/chats. */
interface ChatSummary {
  id: string;
  title: string;
  updatedAt: string;
}

// A demo owner: one random id per browser, in a cookie. A real app uses its login instead.
if (!/(?:^|;\s*)owner=/.test(document.cookie)) {
  // biome-ignore lint/suspicious/noDocumentCookie: one cookie set once; the Cookie Store API is not in every browser
  document.cookie = `owner=${crypto.randomUUID().replace(/-/g, "")}; path=/; SameSite=Strict`;
}

const newId = () => crypto.randomUUID().replace(/-/g, "").slice(0, 16);
const chatIdFromPath = () => /^\/c\/([A-Za-z0-9_-]+)$/.exec(location.pathname)?.[1];

async function problemText(response: Response): Promise<string> {
  try {
    const problem = (await response.json()) as { detail?: string; title?: string };
    return problem.detail || problem.title || `HTTP ${response.status}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

function App() {
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const [current, setCurrent] = useState<{ id: string; stored: boolean }>(() => ({
    id: chatIdFromPath() ?? newId(),
    stored: Boolean(chatIdFromPath()),
  }));
  const [initial, setInitial] = useState<UIMessage[] | undefined>(current.stored ? undefined : []);
  const [loadError, setLoadError] = useState<string>();

  const refreshChats = useCallback(async () => {
    const response = await fetch("/api/chats?limit=50");
    if (response.ok) setChats(((await response.json()) as { chats: ChatSummary[] }).chats);
  }, []);

  useEffect(() => void refreshChats(), [refreshChats]);

  useEffect(() => {
    if (!current.stored) return;
    let cancelled = false;
    setInitial(undefined);
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
              </a>
            </li>
          ))}
        </ul>
      </aside>
      <main>
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
            initialMessages={initial}
            onTurn={() => {
              if (chatIdFromPath() !== current.id) history.replaceState(null, "", `/c/${current.id}`);
              void refreshChats();
            }}
          />
        )}
      </main>
    </div>
  );
}

function Chat({ id, initialMessages, onTurn }: { id: string; initialMessages: UIMessage[]; onTurn: () => void }) {
  const [input, setInput] = useState("");
  const { messages, sendMessage, addToolApprovalResponse, status, stop, error } = useChat({
    id,
    messages: initialMessages,
    transport: new DefaultChatTransport({
      api: "/api/chat",
      // Only the new message goes up: the server keeps the history.
      prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
        body: { id, message: messages[messages.length - 1], trigger, messageId },
      }),
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    onFinish: onTurn,
  });
  const busy = status === "submitted" || status === "streaming";
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!input.trim() || busy) return;
    void sendMessage({ text: input });
    setInput("");
  };
  return (
    <div className="chat">
      <div className="messages" data-testid="messages">
        {messages.length === 0 && (
          <p className="muted">Ask about the weather in a city, ask me to email someone, or ask for a story.</p>
        )}
        {messages.map((message) => (
          <div key={message.id} className={`message ${message.role}`} data-role={message.role}>
            <div className="who">{message.role === "user" ? "You" : "Assistant"}</div>
            {message.parts.map((part, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a message's parts never reorder; the index is their identity
              <Part key={i} part={part} onAnswer={addToolApprovalResponse} />
            ))}
          </div>
        ))}
        {error && (
          <p className="error" role="alert">
            {error.message}
          </p>
        )}
      </div>
      <form onSubmit={submit}>
        <input
          value={input}
          onChange={(e) => setInput(e.target.value)}
          placeholder="Message"
          aria-label="Message"
          data-testid="input"
        />
        {busy ? (
          <button type="button" onClick={() => stop()}>
            Stop
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

function Part({ part, onAnswer }: { part: UIMessage["parts"][number]; onAnswer: ChatAddToolApproveResponseFunction }) {
  if (part.type === "text") return <p className="text">{part.text}</p>;
  if (part.type === "reasoning") return <p className="reasoning">{part.text}</p>;
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
