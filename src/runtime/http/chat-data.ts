/**
 * What the chat flow (chat-flow.ts), the turn runner (turn-runner.ts) and the protocol adapters
 * share: the turn's input and sink types, the labels a chat carries, the history helpers, and
 * `TurnContext`, what a running turn needs of the chat server. Kept apart so the flow, which
 * starts turns, and the runner, which writes them, depend on this file and not on each other.
 */
import type { BlobReader } from "../blobs/references.js";
import { randomUUID } from "node:crypto";
import type { ChatClientAgent } from "../agent/agent.js";
import type { AgentResponse, AgentResponseUpdate } from "../agent/response.js";
import type { ChatMessage } from "../core/messages.js";
import type { InMemoryChatHistoryState } from "../builtins/chat-history-state.js";
import { inMemoryAppend, inMemoryRewind } from "../agent/providers/history-branches.js";
import type { AgentSession } from "../core/session.js";
import type { StreamBuffer } from "../stores/stream-buffer.js";
import type { SessionStore } from "../stores/types.js";

/** One answer from the UI to a pending approval request. */
export interface ApprovalAnswerInput {
  /** The approval request id (`toolApprovalRequest.requestId`). */
  approvalId: string;
  approved: boolean;
  reason?: string;
}

/**
 * A turn: a user message (a new one, or, with the id of an earlier user message, an edit of it: a
 * new branch from its parent), a regeneration of an answer (default: the last one; the previous
 * answer stays as its sibling), or answers to tool approvals.
 */
export type TurnInput =
  | { kind: "message"; message: ChatMessage }
  | { kind: "regenerate"; messageId?: string }
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

/** The label every chat carries (`statebag.type: chat`): what `GET /chats` lists. */
export const CHAT_TYPE_LABEL = "statebag.type";
export const CHAT_TYPE = "chat";
/** The label naming the stream of the turn running in a chat (absent when none runs). */
export const ACTIVE_STREAM_LABEL = "statebag.activeStream";

/**
 * A turn after the chat's active leaf or an edit or regeneration of it, on a chat that exists,
 * writes nothing to the chat until its end: its stream, whose id is derived from the chat's
 * revision (`turnStreamId`), is the busy lock (a second open of the same id is refused) and holds,
 * as its chunk 0, what the turn adds before the answer (`TurnRecord`). Any chat reader finds it
 * there: the chat's view shows it, and a turn that ended without its commit (its writer died, or
 * the commit failed) is folded into the chat by the next load. A commit always moves the
 * revision, so a stream at the chat's current revision is one whose turn was never committed.
 */
export interface TurnRecord {
  /** Not a UI message stream chunk: never sent to a client (a replay starts after it). */
  type: typeof TURN_RECORD;
  /** The user's message (a message turn), as the chat will keep it. */
  message?: ChatMessage;
  /** The message the turn branches from (an edit, a regeneration); absent: after the active leaf. */
  branchFrom?: string | null;
}

export const TURN_RECORD = "statebag-turn";

export { turnStreamId } from "../stores/turn-stream.js";

/** The record in a turn stream's first chunk; undefined when `text` is not one. */
export function readTurnRecord(text: string | undefined): TurnRecord | undefined {
  if (text === undefined) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof record !== "object" || record === null || (record as TurnRecord).type !== TURN_RECORD) return undefined;
  const { message, branchFrom } = record as TurnRecord;
  const out: TurnRecord = { type: TURN_RECORD };
  if (typeof message === "object" && message !== null && Array.isArray(message.contents)) out.message = message;
  if (typeof branchFrom === "string" || branchFrom === null) out.branchFrom = branchFrom;
  return out;
}

/**
 * Adds what a turn recorded before its answer (the user's message, or the rewind a regeneration
 * starts from) to `session`, as the accept of a labelled turn saves it. When the message it
 * branched from is no longer in the chat (changed meanwhile), the user's message goes after the
 * active leaf: what the user typed is never dropped.
 */
export function applyTurnRecord(session: AgentSession, key: string, record: TurnRecord): void {
  try {
    if (record.message) appendToHistory(session, key, [record.message], record.branchFrom);
    else if (record.branchFrom) rewindHistory(session, key, record.branchFrom);
  } catch {
    if (record.message) appendToHistory(session, key, [record.message]);
  }
}

/** What a running turn needs of the chat server (`ChatSessions` is one). */
export interface TurnContext {
  readonly agent: ChatClientAgent;
  readonly store: SessionStore;
  readonly streams: StreamBuffer;
  readonly ttlMs: number | undefined;
  readonly leaseMs: number;
  readonly streamKeepMs: number;
  readonly historyKey: string;
  readonly onError: (error: unknown) => void;
  /** Reads the owner's files (reference contents) for the model requests; undefined without a blob store. */
  blobReader(owner: string): BlobReader | undefined;
}

/** The chat's history messages (the agent's in-memory history state). */
export function historyOf(session: AgentSession, key: string): readonly ChatMessage[] {
  const state = Object.hasOwn(session.stateBag, key) ? (session.stateBag[key] as { messages?: unknown }) : undefined;
  return Array.isArray(state?.messages) ? (state.messages as ChatMessage[]) : [];
}

/**
 * Appends messages to the session's history state (a new state: it is never changed in place),
 * after `parentId` when given (a new branch from it, made the active path), else after the
 * active leaf.
 */
export function appendToHistory(
  session: AgentSession,
  key: string,
  messages: readonly ChatMessage[],
  parentId?: string | null,
): void {
  if (messages.length === 0) return;
  const current = Object.hasOwn(session.stateBag, key) ? (session.stateBag[key] as Record<string, unknown>) : undefined;
  const next = current
    ? isTree(current)
      ? inMemoryAppend(current, session.id, parentId, messages)
      : { ...current, messages: [...((current.messages as ChatMessage[] | undefined) ?? []), ...messages] }
    : {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: [...messages],
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      };
  Object.defineProperty(session.stateBag, key, { value: next, enumerable: true, writable: true, configurable: true });
}

/** Makes `messageId` the end of the history's active path (what followed stays, as a branch). */
export function rewindHistory(session: AgentSession, key: string, messageId: string): void {
  const current = Object.hasOwn(session.stateBag, key) ? session.stateBag[key] : undefined;
  if (!isTree(current)) return;
  const next = inMemoryRewind(current, session.id, messageId);
  Object.defineProperty(session.stateBag, key, { value: next, enumerable: true, writable: true, configurable: true });
}

/** The in-memory history's state as a tree (version 3, with `branches`), as the chat server writes it. */
export function historyTree(session: AgentSession, key: string): InMemoryChatHistoryState | undefined {
  const current = Object.hasOwn(session.stateBag, key) ? session.stateBag[key] : undefined;
  return isTree(current) ? current : undefined;
}

function isTree(state: unknown): state is InMemoryChatHistoryState {
  const tree = state as { $type?: unknown; branches?: unknown; branchPoints?: unknown; messages?: unknown } | null;
  return (
    tree?.$type === "InMemoryChatHistoryState" &&
    Array.isArray(tree.messages) &&
    Array.isArray(tree.branches) &&
    Array.isArray(tree.branchPoints)
  );
}

/** The ids the UI shows for a history's messages (a message without one shows `statebag-<index>`). */
export function messageIds(history: readonly ChatMessage[]): Set<string> {
  return new Set(history.map((m, i) => m.messageId ?? `statebag-${i}`));
}

/**
 * The index of the first message of `history` whose UI id is `id` (`messageIdAt`: its `messageId`,
 * else `statebag-<index>`); -1 when none. One pass comparing stored ids, without a closure or an id
 * built per message: an id of the form `statebag-<n>` can only name the message at `n`.
 */
export function indexOfMessageId(history: readonly ChatMessage[], id: string): number {
  let positional = -1;
  if (id.startsWith("statebag-")) {
    const n = Number(id.slice("statebag-".length));
    if (Number.isSafeInteger(n) && n >= 0 && n < history.length && `statebag-${n}` === id) {
      if (history[n].messageId === undefined) positional = n;
    }
  }
  const end = positional === -1 ? history.length : positional;
  for (let i = 0; i < end; i++) if (history[i].messageId === id) return i;
  return positional;
}

/**
 * Gives each new message an id the chat does not hold yet: the first keeps `firstId` (the id the
 * stream announced), the others get `<firstId>-<n>`.
 */
export function withUniqueIds(
  messages: ChatMessage[],
  history: readonly ChatMessage[],
  firstId?: string,
): ChatMessage[] {
  const taken = messageIds(history);
  messages.forEach((message, i) => {
    let id = i === 0 && firstId !== undefined ? firstId : message.messageId;
    if (id === undefined || taken.has(id)) id = `${firstId ?? "msg"}-${i}-${randomUUID().slice(0, 8)}`;
    message.messageId = id;
    taken.add(id);
  });
  return messages;
}

export function withoutActive(labels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const next: Record<string, string> = { [CHAT_TYPE_LABEL]: CHAT_TYPE };
  for (const [key, value] of Object.entries(labels ?? {})) if (key !== ACTIVE_STREAM_LABEL) next[key] = value;
  return next;
}

/**
 * A copy of `session` a turn may change without touching the original: every state is cloned
 * except an in-memory chat history under `historyKey`, whose provider never changes its message
 * array in place (it writes a new one), so the copy shares the messages. A deep clone of a long
 * chat was the largest cost of a turn (two per turn, each more than a whole serialization).
 */
export function copyForTurn(session: AgentSession, historyKey: string): AgentSession {
  const stateBag: AgentSession["stateBag"] = {};
  for (const [key, value] of Object.entries(session.stateBag)) {
    const shared = key === historyKey && (value as { $type?: unknown } | null)?.$type === "InMemoryChatHistoryState";
    Object.defineProperty(stateBag, key, {
      value: shared ? { ...value } : structuredClone(value),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const { stateBag: _stateBag, ...rest } = session;
  // Usually the id and the kind only: a spread copies those (a structured clone costs a few µs each).
  return { ...(Object.values(rest).every(isPrimitive) ? rest : structuredClone(rest)), stateBag };
}

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== "object" && typeof value !== "function" && typeof value !== "symbol");
}
