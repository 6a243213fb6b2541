/**
 * The session flow of a chat server, free of any wire format. A chat is one of the store's owned
 * sessions (`meta.owner`, a title, the label `statebag.type: chat`), stored under
 * `<idPrefix>/<chat id>`: erasure, retention, listing by owner and encryption apply to chats as to
 * every session. A chat whose stored owner is not the requester is absent, on every path.
 *
 * A turn is not bound to the request that started it. The agent runs to its end in the
 * background (turn-runner.ts) and commits its answer with compare-and-swap. Any process can follow
 * the stream, stop it, or, once the writer's lease has passed (its server died), recover the chat:
 * end the stream as interrupted and commit what the turn had (partial-answer.ts). Nothing is
 * locked forever.
 *
 * A turn on a chat that exists writes nothing to the chat before its end: its stream's id is
 * derived from the chat's revision (chat-data.ts, `TurnRecord`), so opening it is the busy lock,
 * and the stream's first chunk holds the user's message, durable before the agent runs. The chat's
 * view shows it while the turn runs; a turn that ended without its commit is folded into the chat
 * by the next load. One write of the whole chat per turn, as an app's own load-run-save has.
 * A turn that creates a chat, and an approvals turn (whose steps save the chat themselves),
 * commit the user's message first with the label `statebag.activeStream` naming their stream.
 */
import { randomUUID } from "node:crypto";
import type { ChatClientAgent } from "../agent/agent.js";
import { pendingToolApprovals } from "../agent/approvals.js";
import { cloneData } from "../agent/run/copy.js";
import { ConfigurationError } from "../core/errors.js";
import { HistoryBranchError, messageIdAt as idAt } from "../agent/providers/history-branches.js";
import type { ChatMessage, ToolApprovalRequestContent } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { BlobStore } from "../blobs/blob-store.js";
import { type BlobReader, blobReader, blobWriter, offloadDataContents } from "../blobs/references.js";
import { ConflictError, InvalidCursorError } from "../stores/errors.js";
import { checkList } from "../stores/listing.js";
import type { StreamBuffer, StreamInfo } from "../stores/stream-buffer.js";
import type { SessionMeta, SessionStore, StoredSession } from "../stores/types.js";
import { partialAnswer, type TurnFinish } from "./partial-answer.js";
import { ChatError, chatBusy, chatNotFound } from "./chat-error.js";
import { TurnRunner, type TurnRunnerInit } from "./turn-runner.js";
import {
  ACTIVE_STREAM_LABEL,
  appendToHistory,
  applyTurnRecord,
  CHAT_TYPE,
  CHAT_TYPE_LABEL,
  copyForTurn,
  historyOf,
  historyTree,
  indexOfMessageId,
  readTurnRecord,
  rewindHistory,
  TURN_RECORD,
  type TurnInput,
  type TurnRecord,
  turnStreamId,
  withoutActive,
  withUniqueIds,
} from "./chat-data.js";

export {
  ACTIVE_STREAM_LABEL,
  appendToHistory,
  CHAT_TYPE,
  CHAT_TYPE_LABEL,
  historyOf,
  messageIds,
  withoutActive,
  withUniqueIds,
} from "./chat-data.js";
export type { ApprovalAnswerInput, TurnContext, TurnInput, TurnResult, TurnSink } from "./chat-data.js";

/** The label of a forked chat naming the chat it was forked from. */
export const FORKED_FROM_LABEL = "statebag.forkedFrom";

/** Characters of the first user message kept as a chat's title. */
const TITLE_CHARS = 80;

/** Escapes the separator (and the escape character) so a chat id can never reach into another namespace. */
export function escapeSegment(text: string): string {
  return text.replace(/%/g, "%25").replace(/\//g, "%2F");
}

function unescapeSegment(text: string): string {
  return text.replace(/%2F/g, "/").replace(/%25/g, "%");
}

export interface ChatSessionsOptions {
  agent: ChatClientAgent;
  store: SessionStore;
  /** Prefix of every storage id this flow writes. Default `"ui-chat"`. */
  idPrefix?: string;
  /** Time to live of every saved chat revision, in ms. */
  ttlMs?: number;
  /**
   * The stream buffer (default `store.streams`). A store without one gets an in-process buffer:
   * resume and stop then work within this process only.
   */
  streams?: StreamBuffer;
  /** The running turn's lease, in ms (renewed every third of it). Default 15,000. */
  leaseMs?: number;
  /** How long a finished turn's chunks stay readable, in ms. Default 10 minutes. */
  streamKeepMs?: number;
  /** `"continue"` (default): a client that goes away leaves the turn running. `"abort"`: it ends the turn, and nothing of it is kept. */
  disconnect?: "continue" | "abort";
  /** Called with unexpected errors of background work (a turn's commit, a recovery). */
  onError?: (error: unknown) => void;
  /**
   * Where the files of user messages go (default `store.blobs`): a file of at least
   * `blobThresholdBytes` is put there before the message is committed, and the chat keeps a
   * reference. Without a blob store, files stay inline in the messages.
   */
  blobs?: BlobStore;
  /** Files from this many bytes up go to the blob store. Default 4096. */
  blobThresholdBytes?: number;
}

/** A turn `accept` checked and is about to commit. */
interface AcceptedTurn {
  /** The chat as read (undefined: a new chat). */
  stored: StoredSession | undefined;
  /** The chat before the turn. */
  before: AgentSession;
  /**
   * A copy of it with the user's message (or the rewind a regeneration starts from). Undefined for
   * a message after the active leaf of a chat that exists: that turn saves nothing at accept, and
   * its runner builds this copy only if it needs it (a partial answer).
   */
  accepted: AgentSession | undefined;
  message: ChatMessage | undefined;
  requests: ToolApprovalRequestContent[];
  branchFrom: string | null | undefined;
}

/** A chat of the owner's list. */
export interface ChatSummary {
  /** The chat id the client knows (not the storage id). */
  id: string;
  /** The first user message, shortened. */
  title: string;
  /** ISO 8601 time of the last save. */
  updatedAt: string;
  /** For a fork (`POST /chats/:id/fork`): the chat it was forked from. */
  forkedFrom?: string;
}

export interface ChatPage {
  /** Newest first. */
  chats: ChatSummary[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  cursor?: string;
}

/** What a stop request found and did. */
export interface StopOutcome {
  /** False when no turn was running (nothing to stop). */
  stopped: boolean;
  /** True once the stopped turn's commit was observed (its partial answer is in the history). */
  committed: boolean;
  /** The stream that was stopped. */
  streamId?: string;
}

/** A turn running in a chat, as a load found it. */
interface RunningTurn {
  streamId: string;
  /** What the turn adds before its answer (a turn that wrote nothing to the chat yet). */
  record?: TurnRecord;
}

/** A chat as loaded: the stored chat and the turn running in it, if any. */
interface LoadedChat {
  stored: StoredSession;
  running?: RunningTurn;
}

export class ChatSessions {
  readonly agent: ChatClientAgent;
  readonly store: SessionStore;
  readonly streams: StreamBuffer;
  readonly prefix: string;
  readonly ttlMs: number | undefined;
  readonly leaseMs: number;
  readonly streamKeepMs: number;
  readonly disconnect: "continue" | "abort";
  readonly onError: (error: unknown) => void;
  readonly blobs: BlobStore | undefined;
  readonly blobThresholdBytes: number;
  /** Turns running in this process, by stream id: followed and stopped without a round trip. */
  private readonly runners = new Map<string, TurnRunner>();

  constructor(options: ChatSessionsOptions) {
    this.agent = options.agent;
    this.store = options.store;
    this.prefix = options.idPrefix ?? "ui-chat";
    this.ttlMs = options.ttlMs;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.streamKeepMs = options.streamKeepMs ?? 10 * 60_000;
    this.disconnect = options.disconnect ?? "continue";
    this.onError = options.onError ?? (() => undefined);
    this.blobs = options.blobs ?? options.store.blobs;
    this.blobThresholdBytes = options.blobThresholdBytes ?? 4096;
    const streams = options.streams ?? options.store.streams;
    if (!streams)
      throw new ConfigurationError(
        "the chat handler's store has no stream buffer (store.streams), which keeps running replies for resume, stop and recovery",
        "use a built-in store (openStore: memory, SQLite, PostgreSQL, Redis), or pass a StreamBuffer as the streams option",
      );
    this.streams = streams;
  }

  /** The store id of a chat. */
  storageId(chatId: string): string {
    return `${this.prefix}/${escapeSegment(chatId)}`;
  }

  /** The history key of the agent's history provider. */
  get historyKey(): string {
    return this.agent.history.key;
  }

  /** Reads the owner's files for the model requests of a turn (undefined without a blob store). */
  blobReader(owner: string): BlobReader | undefined {
    return this.blobs ? blobReader(this.blobs, owner) : undefined;
  }

  /** Resolves once no turn of this process is running (each over and its stream finished). */
  async idle(): Promise<void> {
    while (this.runners.size > 0) await Promise.allSettled([...this.runners.values()].map((runner) => runner.done));
  }

  /** The turn running in this process on `streamId`, if any. */
  runner(streamId: string): TurnRunner | undefined {
    return this.runners.get(streamId);
  }

  /**
   * The owner's chat as stored, or undefined (another owner's chat with this id is just as
   * absent). A turn whose writer died (lease passed), or that ended without its commit, is
   * recovered first.
   */
  async load(owner: string, chatId: string): Promise<StoredSession | undefined> {
    return (await this.loadChat(owner, chatId))?.stored;
  }

  /**
   * The owner's chat as a reader sees it: with what a running turn added before its answer (the
   * user's message), which is in the chat's stream until the turn commits. Not for saving.
   */
  async view(owner: string, chatId: string): Promise<StoredSession | undefined> {
    const loaded = await this.loadChat(owner, chatId);
    if (!loaded?.running?.record) return loaded?.stored;
    const session = copyForTurn(loaded.stored.session, this.historyKey);
    applyTurnRecord(session, this.historyKey, loaded.running.record);
    return { ...loaded.stored, session };
  }

  private async loadChat(owner: string, chatId: string): Promise<LoadedChat | undefined> {
    const stored = await this.store.get(this.storageId(chatId));
    if (!stored || stored.meta.owner !== owner) return undefined;
    return this.settle(stored, owner);
  }

  /** The stream of the turn that runs, or ran, on `stored`: the label's, else the one its revision gives. */
  private streamOf(stored: StoredSession): { streamId: string; labelled: boolean } {
    const labelled = stored.meta.labels?.[ACTIVE_STREAM_LABEL];
    if (labelled !== undefined) return { streamId: labelled, labelled: true };
    return {
      streamId: turnStreamId(stored.session.id, stored.revision, stored.meta.updatedAt),
      labelled: false,
    };
  }

  /** The stream id of the turn running in `stored`, when its writer is alive. */
  async activeStream(stored: StoredSession): Promise<{ streamId: string; info?: StreamInfo } | undefined> {
    const { streamId } = this.streamOf(stored);
    if (this.runners.has(streamId)) return { streamId };
    const info = await this.streams.info(streamId);
    return info?.status === "running" ? { streamId, info } : undefined;
  }

  /**
   * Ends a turn nobody is writing any more: its stream is no longer running, or its writer's
   * lease passed. The partial answer the buffer holds is committed, marked interrupted (or
   * stopped, when a stop had ended it), and the chat is free. Returns the chat as stored after.
   */
  async recover(stored: StoredSession, owner: string): Promise<StoredSession | undefined> {
    return (await this.settle(stored, owner))?.stored;
  }

  /**
   * `recover`, also telling which turn still runs. A turn that wrote nothing to the chat yet is
   * looked for under the stream id the chat's revision gives: any stream there belongs to a turn
   * not committed (a commit moves the revision), so one that no longer runs is folded in, with the
   * user's message its first chunk holds.
   */
  private async settle(stored: StoredSession, owner: string): Promise<LoadedChat | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const { streamId, labelled } = this.streamOf(stored);
      const local = this.runners.get(streamId);
      if (local && !local.answered)
        return { stored, running: { streamId, ...(local.record ? { record: local.record } : {}) } };
      if (local) {
        // Committed (or its commit failed) a moment ago; its stream's tail is being written. Read
        // the chat again once that is over: as this read found it, it may predate the commit.
        await local.done;
        const fresh = await this.store.get(stored.session.id);
        if (!fresh || fresh.meta.owner !== owner) return undefined;
        stored = fresh;
        continue;
      }
      // The first chunk only: a light turn's record (one round trip, and a miss when no turn ran).
      const head = await this.streams.read(streamId, { from: 0, limit: 1 });
      if (!labelled && !head) return { stored };
      const info = head?.info;
      const record = labelled ? undefined : readTurnRecord(head?.chunks[0]);
      if (info?.status === "running") {
        if (info.leaseExpiresAt > Date.now()) return { stored, running: { streamId, ...(record ? { record } : {}) } };
        const ended = await this.streams.finish(streamId, "interrupted", {
          keepMs: this.streamKeepMs,
          onlyIfAbandoned: true,
        });
        if (!ended) {
          // Renewed meanwhile, or ended by someone else: look again.
          const fresh = await this.store.get(stored.session.id);
          if (!fresh || fresh.meta.owner !== owner) return undefined;
          stored = fresh;
          continue;
        }
      }
      const finish: TurnFinish = info?.status === "stopped" || info?.stopRequested ? "stopped" : "interrupted";
      const chunks = (await this.streams.read(streamId, { from: 0 }))?.chunks ?? [];
      const session = copyForTurn(stored.session, this.historyKey);
      if (record) applyTurnRecord(session, this.historyKey, record);
      const history = historyOf(session, this.historyKey);
      appendToHistory(
        session,
        this.historyKey,
        withUniqueIds(partialAnswer(chunks, startIdOf(chunks), finish), history),
      );
      try {
        // Also when nothing is added: the save moves the revision, which frees the chat.
        await this.store.save(session, {
          expectedRevision: stored.revision,
          ttlMs: this.ttlMs,
          meta: { owner, labels: withoutActive(stored.meta.labels) },
        });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
      const fresh = await this.store.get(stored.session.id);
      if (!fresh || fresh.meta.owner !== owner) return undefined;
      stored = fresh;
    }
    return { stored };
  }

  /** One page of the owner's chats, newest first. A cursor that is not the store's is an `InvalidCursorError`. */
  async list(owner: string, options: { cursor?: string; limit: number }): Promise<ChatPage> {
    const listOptions = {
      owner,
      labels: { [CHAT_TYPE_LABEL]: CHAT_TYPE },
      order: "updatedAt desc" as const,
      cursor: options.cursor,
      limit: options.limit,
    };
    try {
      checkList(listOptions); // checked before any store sees it; only the cursor came from the client
    } catch (error) {
      if (error instanceof InvalidCursorError) throw error;
      throw new InvalidCursorError("list cursor", "is not one this server gave out");
    }
    const page = await this.store.list(listOptions);
    const head = `${this.prefix}/`;
    const chats = page.items
      .filter((item) => item.id.startsWith(head) && !item.id.slice(head.length).includes("/"))
      .map((item) => {
        const forkedFrom = item.meta.labels?.[FORKED_FROM_LABEL];
        return {
          id: unescapeSegment(item.id.slice(head.length)),
          title: item.meta.title ?? "",
          updatedAt: item.meta.updatedAt,
          ...(forkedFrom !== undefined ? { forkedFrom } : {}),
        };
      });
    return page.cursor === undefined ? { chats } : { chats, cursor: page.cursor };
  }

  /**
   * Deletes the owner's chat with its message log and its streams (a turn still running there
   * ends: its next write finds its stream gone). Returns whether a chat was deleted.
   */
  async delete(owner: string, chatId: string): Promise<boolean> {
    const id = this.storageId(chatId);
    const stored = await this.store.get(id);
    if (!stored || stored.meta.owner !== owner) return false;
    this.runners.get(this.streamOf(stored).streamId)?.cancel();
    await this.streams.deleteForSession(id);
    await this.store.messages.deleteMessages(id);
    try {
      return await this.store.delete(id, { expectedRevision: stored.revision });
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      // Saved meanwhile (a turn's commit): delete what is there now, if it is still this owner's.
      const fresh = await this.store.get(id);
      if (!fresh || fresh.meta.owner !== owner) return false;
      await this.streams.deleteForSession(id);
      return this.store.delete(id);
    }
  }

  /**
   * Accepts a turn: checks the input against the chat (a `ChatError` before anything runs: a chat
   * of another owner is `chat-not-found`; a turn running is `chat-busy`; a new message while an
   * approval waits, a reused message id or an answer to a request that is not pending is
   * `chat-approval-pending`, `chat-message-id-taken`, `chat-approval-not-pending`), makes the
   * user's message durable, and starts the run in the background. A refused turn opens nothing.
   *
   * On a chat that exists (a message, an edit, a regeneration) the turn's stream is opened under
   * the id the chat's revision gives, and its first chunk records the user's message: a second
   * turn on the same revision finds the stream there (busy); the chat itself is written once, at
   * the end. A new chat, and an approvals turn, open a stream and save the chat with its label.
   */
  async accept(owner: string, chatId: string, input: TurnInput): Promise<TurnRunner> {
    const id = this.storageId(chatId);
    for (let attempt = 0; ; attempt++) {
      const turn = await this.prepareTurn(owner, chatId, id, input);
      const runner =
        !turn.stored || input.kind === "approvals"
          ? await this.acceptLabelled(owner, chatId, id, input, turn)
          : await this.acceptRecorded(owner, chatId, id, input, turn);
      if (runner) return runner;
      // A turn on that revision ended without its commit and was folded in: read the chat again.
      if (attempt >= 2) throw chatBusy();
    }
  }

  /** A turn on an existing chat: its stream is its lock and holds the user's message (see `accept`). Undefined: read again. */
  private async acceptRecorded(
    owner: string,
    chatId: string,
    id: string,
    input: TurnInput,
    turn: AcceptedTurn,
  ): Promise<TurnRunner | undefined> {
    const stored = turn.stored!;
    const record: TurnRecord = { type: TURN_RECORD };
    if (turn.message) record.message = turn.message;
    if (turn.branchFrom !== undefined) record.branchFrom = turn.branchFrom;
    // The record is the stream's first chunk, written with its open.
    const streamId = await this.openTurnStream(owner, id, stored, [JSON.stringify(record)]);
    if (streamId === undefined) return undefined;
    return this.startRunner(
      turn,
      { owner, chatId, storageId: id, input, streamId },
      { revision: stored.revision, labels: withoutActive(stored.meta.labels), created: false, record },
    );
  }

  /**
   * A turn that creates its chat, or answers approvals: its stream is opened, then the chat is
   * saved with the user's message and the label naming the stream (a reader never finds a label
   * naming a stream not there yet, which recovery would take for a dead turn).
   */
  private async acceptLabelled(
    owner: string,
    chatId: string,
    id: string,
    input: TurnInput,
    turn: AcceptedTurn,
  ): Promise<TurnRunner | undefined> {
    const streamId = await this.openTurnStream(owner, id, turn.stored);
    if (streamId === undefined) return undefined;
    const { stored, message } = turn;
    const accepted = turn.accepted!;
    const meta: SessionMeta = {
      owner,
      labels: { ...stored?.meta.labels, [CHAT_TYPE_LABEL]: CHAT_TYPE, [ACTIVE_STREAM_LABEL]: streamId },
    };
    if (!stored) meta.title = titleOf(message);
    let revision: number;
    try {
      revision = await this.store.save(accepted, {
        expectedRevision: stored?.revision ?? null,
        ttlMs: this.ttlMs,
        meta,
      });
    } catch (error) {
      await this.streams.finish(streamId, "failed", { keepMs: 0 }).catch(() => undefined);
      if (error instanceof ConflictError) {
        // Another request got there first: a chat another owner just created is as absent as ever.
        const now = await this.store.get(id).catch(() => undefined);
        if (now && now.meta.owner !== owner) throw chatNotFound();
        throw chatBusy();
      }
      throw error;
    }
    return this.startRunner(
      turn,
      { owner, chatId, storageId: id, input, streamId },
      { revision, labels: meta.labels ?? {}, created: !stored },
    );
  }

  /**
   * Opens the stream of a turn on `stored` (a new chat: a stream of a fresh id): the id its
   * revision gives, so that of two turns on one revision only one opens. Undefined when a turn on
   * that revision had ended without its commit (folded in now: read the chat again); a running
   * one is `chat-busy`.
   */
  private async openTurnStream(
    owner: string,
    id: string,
    stored: StoredSession | undefined,
    chunks?: string[],
  ): Promise<string | undefined> {
    const streamId = stored ? turnStreamId(id, stored.revision, stored.meta.updatedAt) : randomUUID();
    try {
      await this.streams.open(streamId, { sessionId: id, owner, leaseMs: this.leaseMs, ...(chunks ? { chunks } : {}) });
      return streamId;
    } catch (error) {
      if (!(error instanceof ConflictError) || !stored) throw error;
      const now = await this.settle(stored, owner);
      if (!now) throw chatNotFound();
      if (now.running) throw chatBusy();
      return undefined;
    }
  }

  /** Starts the accepted turn's run in the background, known to this process by its stream id. */
  private startRunner(
    turn: AcceptedTurn,
    at: Pick<TurnRunnerInit, "owner" | "chatId" | "storageId" | "input" | "streamId">,
    commit: Pick<TurnRunnerInit, "revision" | "labels" | "created" | "record">,
  ): TurnRunner {
    const { message, requests, before, accepted, branchFrom } = turn;
    const runner = new TurnRunner({ chats: this, ...at, message, requests, before, accepted, branchFrom, ...commit });
    const { streamId } = at;
    this.runners.set(streamId, runner);
    void runner.done.finally(() => this.runners.delete(streamId));
    runner.start();
    return runner;
  }

  /** What `accept` checks and builds before its save: the chat as read, the turn's input, the chat with the user's message. */
  private async prepareTurn(owner: string, chatId: string, id: string, input: TurnInput): Promise<AcceptedTurn> {
    let stored = await this.store.get(id);
    if (stored && stored.meta.owner !== owner) throw chatNotFound();
    // A labelled turn (a new chat's first, an approvals turn) is settled here; a turn that wrote
    // nothing to the chat yet is found by the open of this revision's stream (see `accept`), or,
    // for an approvals turn, looked for here.
    if (stored && (stored.meta.labels?.[ACTIVE_STREAM_LABEL] !== undefined || input.kind === "approvals")) {
      const loaded = await this.settle(stored, owner);
      if (!loaded) throw chatNotFound();
      if (loaded.running) throw chatBusy();
      stored = loaded.stored;
    }
    const before = stored?.session ?? this.agent.createSession({ id, kind: "local" });
    const history = historyOf(before, this.historyKey);
    const pending = pendingToolApprovals(before);
    let requests: ToolApprovalRequestContent[] = [];
    let message: ChatMessage | undefined;
    // Where the turn branches from (undefined: it follows the active leaf, as a plain turn does).
    let branchFrom: string | null | undefined;
    if (input.kind !== "approvals" && pending.length > 0)
      throw new ChatError("chat-approval-pending", "this chat is waiting for a tool approval", {
        hint: "approve or deny the approval the chat shows before sending a new message",
      });
    if (input.kind === "regenerate") {
      if (!stored) throw chatNotFound();
      branchFrom = await this.agent.regenerationPoint(before, input.messageId);
    } else if (input.kind === "message") {
      message = cloneData(input.message);
      const at = message.messageId === undefined ? -1 : indexOfMessageId(history, message.messageId);
      if (at >= 0) {
        // useChat's sendMessage({ messageId }): an edit of that message, a new branch from its parent;
        // the edited message and what followed it stay, as a sibling branch (‹ 1/2 ›).
        if (history[at].role !== "user")
          throw new ChatError("chat-message-id-taken", "a message with this id is already in the chat", {
            hint: "give every new message a new id (useChat does); only a user message can be edited",
          });
        branchFrom = at === 0 ? null : idAt(history[at - 1], at - 1);
        message.messageId = undefined;
      }
      message.messageId ??= `msg-${randomUUID()}`;
      // The files go to the blob store before the message is committed: the chat holds references.
      if (this.blobs && message.contents.some((c) => c.$type === "data"))
        [message] = (
          await offloadDataContents([message], blobWriter(this.blobs, owner), {
            thresholdBytes: this.blobThresholdBytes,
          })
        ).messages;
    } else {
      if (!stored) throw chatNotFound();
      requests = input.answers.map((answer) => {
        const request = pending.find((waiting) => waiting.requestId === answer.approvalId);
        if (!request)
          throw new ChatError("chat-approval-not-pending", "the approval answered is not waiting in this chat", {
            hint: "it was answered already, or never asked: reload the chat to see its approvals",
          });
        return request;
      });
    }
    // A message after the active leaf of a chat that exists: its accept writes only the turn's
    // stream, so the chat with the message (a copy of the history with one more message) is left
    // to the runner, which needs it only for a partial answer (that append cannot fail).
    if (stored && message && branchFrom === undefined)
      return { stored, before, accepted: undefined, message, requests, branchFrom };
    const accepted = copyForTurn(before, this.historyKey);
    if (branchFrom !== undefined && !historyTree(accepted, this.historyKey))
      throw new HistoryBranchError(
        `chat ${JSON.stringify(chatId)} keeps no branching history`,
        "the chat server's agent needs an in-memory history (the default) to regenerate or edit",
      );
    if (message) appendToHistory(accepted, this.historyKey, [message], branchFrom);
    else if (branchFrom) rewindHistory(accepted, this.historyKey, branchFrom);
    return { stored, before, accepted, message, requests, branchFrom };
  }

  /**
   * Makes the branch holding `messageId` the chat's active path (one compare-and-swap save; a turn
   * running is `chat-busy`, a save meanwhile a `ConflictError`). Returns the chat as saved.
   */
  async switchBranch(owner: string, chatId: string, messageId: string): Promise<StoredSession> {
    const stored = await this.load(owner, chatId);
    if (!stored) throw chatNotFound();
    if (await this.activeStream(stored)) throw chatBusy();
    const session = copyForTurn(stored.session, this.historyKey);
    await this.agent.switchBranch(session, messageId);
    const revision = await this.store.save(session, {
      expectedRevision: stored.revision,
      ttlMs: this.ttlMs,
      meta: { owner, labels: withoutActive(stored.meta.labels) },
    });
    return { ...stored, session, revision };
  }

  /**
   * Forks the owner's chat up to `messageId` into a new chat of the same owner (id `newId`, or a
   * new one): its history holds that path and `forkedFrom`, its labels name the source chat
   * (`statebag.forkedFrom`), so it is listed, retained and erased like any chat of the owner.
   * Returns the new chat's id; undefined when the source is not the owner's. A taken id is a
   * `ConflictError`.
   */
  async fork(owner: string, chatId: string, messageId: string, newId?: string): Promise<string | undefined> {
    const stored = await this.load(owner, chatId);
    if (!stored) return undefined;
    const id = newId ?? randomUUID();
    const session = await this.agent.fork(stored.session, messageId, { id: this.storageId(id) });
    await this.store.save(session, {
      expectedRevision: null,
      ttlMs: this.ttlMs,
      meta: {
        owner,
        ...(stored.meta.title !== undefined ? { title: stored.meta.title } : {}),
        labels: { ...withoutActive(stored.meta.labels), [FORKED_FROM_LABEL]: chatId },
      },
    });
    return id;
  }

  /**
   * Stops the turn running in the owner's chat, from any process: asks through the store (or
   * directly, when it runs here) and waits, up to `waitMs`, until its commit is seen.
   */
  async stop(owner: string, chatId: string, waitMs: number): Promise<StopOutcome> {
    const stored = await this.load(owner, chatId);
    if (!stored) throw chatNotFound();
    const { streamId } = this.streamOf(stored);
    const local = this.runners.get(streamId);
    if (local) {
      if (!local.stop()) return { stopped: false, committed: false };
      await Promise.race([local.done, delay(waitMs)]);
      return { stopped: true, committed: local.finished, streamId };
    }
    if (!(await this.streams.requestStop(streamId))) {
      // Not running any more: ended on its own, or abandoned (recovered by the next load).
      await this.load(owner, chatId);
      return { stopped: false, committed: false };
    }
    const deadline = Date.now() + waitMs;
    for (let wait = 10; Date.now() < deadline; wait = Math.min(wait * 2, 200)) {
      const now = await this.load(owner, chatId);
      // Committed: the label is gone, or the revision moved on (another stream id).
      if (!now || this.streamOf(now).streamId !== streamId) return { stopped: true, committed: true, streamId };
      await delay(wait);
    }
    return { stopped: true, committed: false, streamId };
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.());

/** The message id a stream announced in its `start` chunk. */
function startIdOf(chunks: readonly string[]): string {
  for (const text of chunks.slice(0, 4)) {
    try {
      const chunk = JSON.parse(text) as { type?: unknown; messageId?: unknown };
      if (chunk.type === "start" && typeof chunk.messageId === "string") return chunk.messageId;
    } catch {
      // not a chunk of ours
    }
  }
  return `msg-${randomUUID()}`;
}

function titleOf(message: ChatMessage | undefined): string {
  const text = (message?.contents ?? [])
    .flatMap((content) => (content.$type === "text" ? [content.text] : []))
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  return text.length > TITLE_CHARS ? `${text.slice(0, TITLE_CHARS - 1)}…` : text;
}
