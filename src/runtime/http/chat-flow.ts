/**
 * The session flow of a chat server, free of any wire format: load a chat for its owner, append the
 * new user message (or the answers to pending tool approvals), run the agent, commit once with
 * compare-and-swap, and keep the owner's chat index in step. A protocol adapter (the AI SDK UI
 * message stream in ui-message-stream.ts; AG-UI would be another) parses its request into a
 * `TurnInput` and turns the `TurnSink` calls into its own events.
 *
 * Chats are namespaced per owner inside the store: the storage id is built from the owner and
 * the chat id, so another owner's chat id is simply absent, never loaded.
 */
import type { ChatMessage, ToolApprovalRequestContent } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { answerToolApprovals } from "../agent/approval-store.js";
import { approveToolCall, pendingToolApprovals, rejectToolCall } from "../agent/approvals.js";
import type { ChatClientAgent } from "../agent/agent.js";
import type { AgentResponse, AgentResponseUpdate } from "../agent/response.js";
import { withSession } from "../stores/with-session.js";
import type { SessionStore } from "../stores/types.js";
import { StoreChatIndex, type ChatIndex } from "./chat-index.js";
import { HttpProblem } from "./problem.js";

/** One answer from the UI to a pending approval request. */
export interface ApprovalAnswerInput {
  /** The approval request id (`toolApprovalRequest.requestId`). */
  approvalId: string;
  approved: boolean;
  reason?: string;
}

export type TurnInput =
  | { kind: "message"; message: ChatMessage }
  | { kind: "approvals"; answers: ApprovalAnswerInput[] };

/** What a protocol adapter receives while a turn runs. */
export interface TurnSink {
  /** A streamed update of the run (text deltas, tool calls and results, approval requests, ...). */
  update(update: AgentResponseUpdate): void;
  /** An approval answer was recorded; `callId` is the tool call it answered. */
  approvalAnswered(answer: ApprovalAnswerInput & { callId: string; toolName: string }): void;
}

export interface TurnResult {
  response?: AgentResponse;
  /** The chat's stored revision after the commit. */
  revision: number;
}

/** Characters of the first user message kept as a chat's title. */
const TITLE_CHARS = 80;

/** Escapes the separator (and the escape character) so an owner can never reach into another's namespace. */
export function escapeSegment(text: string): string {
  return text.replace(/%/g, "%25").replace(/\//g, "%2F");
}

export interface ChatSessionsOptions {
  agent: ChatClientAgent;
  store: SessionStore;
  /** Prefix of every storage id this flow writes. Default `"ui-chat"`. */
  idPrefix?: string;
  /** The owner's chat list; default: a document per owner in `store`. */
  index?: ChatIndex;
  /** Time to live of every saved chat revision, in ms. */
  ttlMs?: number;
}

/** An in-progress turn: holds the chat's in-process lock until `run` ends or `release` is called. */
export interface Turn {
  readonly owner: string;
  readonly chatId: string;
  /** The session as loaded before the turn (undefined for a new chat). */
  readonly before: AgentSession | undefined;
  run(sink: TurnSink, signal: AbortSignal): Promise<TurnResult>;
  release(): void;
}

export class ChatSessions {
  readonly agent: ChatClientAgent;
  readonly store: SessionStore;
  readonly index: ChatIndex;
  private readonly prefix: string;
  private readonly ttlMs: number | undefined;
  /** Storage ids with a turn running in this process: a second send is refused (409), never queued behind. */
  private readonly busy = new Set<string>();

  constructor(options: ChatSessionsOptions) {
    this.agent = options.agent;
    this.store = options.store;
    this.prefix = options.idPrefix ?? "ui-chat";
    this.ttlMs = options.ttlMs;
    this.index =
      options.index ?? new StoreChatIndex(options.store, (owner) => `${this.prefix}-index/${escapeSegment(owner)}`);
  }

  /** The store id of an owner's chat. */
  storageId(owner: string, chatId: string): string {
    return `${this.prefix}/${escapeSegment(owner)}/${escapeSegment(chatId)}`;
  }

  /** The owner's chat, or undefined (another owner's chat with this id is just as absent). */
  async load(owner: string, chatId: string): Promise<AgentSession | undefined> {
    return (await this.store.get(this.storageId(owner, chatId)))?.session;
  }

  async delete(owner: string, chatId: string): Promise<boolean> {
    const deleted = await this.store.delete(this.storageId(owner, chatId));
    await this.index.remove(owner, chatId);
    return deleted;
  }

  /**
   * Starts a turn: takes the chat's lock (a turn already running on it is a 409 `chat-busy`), loads
   * it, and checks the input against its state (a new message while an approval waits, or an
   * answer to a request that is not pending, is a 409 / 404 before anything runs).
   */
  async begin(owner: string, chatId: string, input: TurnInput): Promise<Turn> {
    const id = this.storageId(owner, chatId);
    if (this.busy.has(id)) {
      throw new HttpProblem(
        409,
        "chat-busy",
        "Chat busy",
        "A reply is still being written in this chat; wait for it to finish (or stop it), then send again.",
      );
    }
    this.busy.add(id);
    let released = false;
    const release = () => {
      if (!released) this.busy.delete(id);
      released = true;
    };
    try {
      const before = await this.load(owner, chatId);
      const pending = before ? pendingToolApprovals(before) : [];
      if (input.kind === "message" && pending.length > 0) {
        throw new HttpProblem(
          409,
          "tool-approval-pending",
          "Approval pending",
          "This chat is waiting for a tool approval; approve or deny it before sending a new message.",
        );
      }
      let requests: ToolApprovalRequestContent[] = [];
      if (input.kind === "approvals") {
        if (!before) throw new HttpProblem(404, "chat-not-found", "Chat not found", "There is no chat with this id.");
        requests = input.answers.map((answer) => {
          const request = pending.find((r) => r.requestId === answer.approvalId);
          if (!request)
            throw new HttpProblem(
              409,
              "tool-approval-not-pending",
              "Approval not pending",
              "The approval answered is not waiting in this chat (answered already, or never asked).",
            );
          return request;
        });
      }
      const turn: Turn = {
        owner,
        chatId,
        before,
        release,
        run: async (sink, signal) => {
          try {
            const result =
              input.kind === "message"
                ? await this.runMessage(id, input.message, sink, signal)
                : await this.runAnswers(id, input.answers, requests, sink, signal);
            await this.index.touch(owner, {
              id: chatId,
              title: titleOf(input, before),
              updatedAt: new Date().toISOString(),
            });
            return result;
          } finally {
            release();
          }
        },
      };
      return turn;
    } catch (error) {
      release();
      throw error;
    }
  }

  private async runMessage(id: string, message: ChatMessage, sink: TurnSink, signal: AbortSignal): Promise<TurnResult> {
    const { value, revision } = await withSession(
      this.store,
      id,
      async (session) => {
        const stream = this.agent.runStream(message, session, { signal });
        let next: IteratorResult<AgentResponseUpdate, AgentResponse | undefined>;
        while (!(next = await stream.next()).done) {
          signal.throwIfAborted();
          sink.update(next.value);
        }
        signal.throwIfAborted();
        return { response: next.value };
      },
      { create: (sessionId) => this.agent.createSession({ id: sessionId, kind: "local" }), ttlMs: this.ttlMs },
    );
    return { response: value.response, revision };
  }

  /** Answers through `answerToolApprovals`: approved tools run exactly once, each step saved with compare-and-swap. */
  private async runAnswers(
    id: string,
    answers: ApprovalAnswerInput[],
    requests: ToolApprovalRequestContent[],
    sink: TurnSink,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    const result = await answerToolApprovals(
      this.store,
      id,
      this.agent,
      answers.map((a) =>
        a.approved ? approveToolCall(a.approvalId, a.reason) : rejectToolCall(a.approvalId, a.reason),
      ),
      { signal, ttlMs: this.ttlMs },
    );
    answers.forEach((answer, i) => {
      const call = requests[i].toolCall;
      sink.approvalAnswered({
        ...answer,
        callId: call.$type === "functionCall" ? call.callId : answer.approvalId,
        toolName: call.$type === "functionCall" ? call.name : "tool",
      });
    });
    // The continuation is not streamed by answerToolApprovals: replay its messages as updates.
    for (const message of result.response?.messages ?? []) {
      sink.update({ role: message.role, contents: message.contents, messageId: message.messageId, sessionId: id });
    }
    return { response: result.response, revision: result.revision };
  }
}

function titleOf(input: TurnInput, before: AgentSession | undefined): string {
  if (input.kind !== "message" || before) return "";
  const text = input.message.contents
    .flatMap((c) => (c.$type === "text" ? [c.text] : []))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > TITLE_CHARS ? `${text.slice(0, TITLE_CHARS - 1)}…` : text;
}
