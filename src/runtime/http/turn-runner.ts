/**
 * One accepted turn, running in the background of the process that accepted it, to its end,
 * whoever is listening. Every UI message stream chunk it produces goes to the turn's stream in the
 * store's buffer (one append in flight at a time: chunks produced meanwhile go in the next one,
 * so a token stream costs a round trip per batch, not per token) and to the listeners in this
 * process (the POST that started it, resumes served here). The writer's lease is renewed every
 * third of its length; a stop requested through the store is seen on the next append or renewal.
 *
 * At the end the answer is committed with compare-and-swap against the revision of the accept
 * save (which holds the user's message and the `statebag.activeStream` label), the label is
 * removed in the same save, the last chunks are written, and the stream is finished. A stopped
 * or failed turn commits the partial answer the chunks hold, marked in its UI metadata. A turn
 * whose chat was deleted, erased or recovered meanwhile commits nothing.
 */
import { randomUUID } from "node:crypto";
import { answerToolApprovals } from "../agent/approval-store.js";
import { messageIdAt } from "../agent/providers/history-branches.js";
import { approveToolCall, rejectToolCall } from "../agent/approvals.js";
import type { AgentResponseUpdate } from "../agent/response.js";
import { StatebagError } from "../core/errors.js";
import type { ChatMessage, ToolApprovalRequestContent } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { tracingOf } from "../core/tracing-hooks.js";
import { ConflictError } from "../stores/errors.js";
import type { StreamStatus } from "../stores/stream-buffer.js";
import {
  ACTIVE_STREAM_LABEL,
  appendToHistory,
  copyForTurn,
  historyOf,
  historyTree,
  withoutActive,
  withUniqueIds,
  type TurnContext,
  type TurnInput,
  type TurnRecord,
} from "./chat-data.js";
import { partialAnswer, type TurnFinish } from "./partial-answer.js";
import { answeredCalls, turnMessage } from "./turn-message.js";
import { UIMessageStreamEncoder, type UIStreamChunk } from "./ui-message-stream.js";

/** Someone reading the turn's chunks in this process. */
export interface TurnListener {
  /** One chunk, as JSON text. */
  chunk(text: string): void;
  /** The turn ended (its commit is done or failed): no more chunks. */
  end(): void;
}

export interface TurnRunnerInit {
  chats: TurnContext;
  owner: string;
  chatId: string;
  storageId: string;
  streamId: string;
  input: TurnInput;
  /** The user's message (a message turn), as committed at accept. */
  message: ChatMessage | undefined;
  /** The approval requests answered (an approvals turn). */
  requests: ToolApprovalRequestContent[];
  /** The chat before the turn (a new session for a new chat). */
  before: AgentSession;
  /**
   * The chat as saved at accept (with the user's message). Absent: `before` with `message` after
   * its active leaf (a turn that saved nothing at accept), built when a partial answer needs it.
   */
  accepted?: AgentSession;
  /** The revision of that save. */
  revision: number;
  labels: Readonly<Record<string, string>>;
  /** Whether the accept save created the chat. */
  created: boolean;
  /**
   * The message the turn branches from (an edit: the edited message's parent, `null` for a first
   * message; a regeneration: the question); undefined for a turn after the active leaf.
   */
  branchFrom?: string | null;
  /**
   * A turn that wrote nothing to the chat at accept: what its stream's first chunk records (the
   * user's message). `revision` is then the chat's as read, and the commit is the turn's only
   * write of the chat.
   */
  record?: TurnRecord;
}

type Ending = "stop" | "lost" | "abort";

/** Most chunks in one append. */
const MAX_BATCH = 512;
/** How long chunks are gathered before an append, in ms. */
const BATCH_MS = 20;
const DAY_MS = 24 * 60 * 60_000;

export class TurnRunner {
  readonly streamId: string;
  readonly chatId: string;
  /** The id the answer's first message gets (announced in the `start` chunk). */
  readonly messageId: string;
  /** Resolves when the turn is over (committed or not) and its stream finished. */
  readonly done: Promise<void>;
  /** True once the turn's end was committed to the chat. */
  finished = false;
  /**
   * The committed answer as a reload shows it (found: whether the history holds anything of the
   * turn; its metadata, e.g. the turn's summed usage), sent as the `finish` chunk's metadata so the
   * streamed message and the reloaded one agree.
   */
  private committedAnswer: { found: boolean; metadata: unknown } | undefined;
  private resolveDone!: () => void;
  private readonly chunks: string[] = [];
  private readonly listeners = new Set<TurnListener>();
  private pending: string[] = [];
  private flushing: Promise<void> | undefined;
  private readonly abort = new AbortController();
  private ending: Ending | undefined;
  private lost = false;
  /** The last chunk is out: listeners here have ended (see `settle`). */
  private ended = false;
  /** The run and its stream's tail are over (`done` resolves). */
  private over = false;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  /** Set at the end: what is pending is appended without waiting for more. */
  private draining = false;
  /** Set at the end when the buffer has `finishWith`: what is pending is left for it. */
  private finishing = false;
  private wake: (() => void) | undefined;

  /**
   * The turn's commit is done (or failed) and its last chunk is out: only its stream's tail (the
   * last append, the finish) may still run. The chat as stored is then the turn's outcome.
   */
  get answered(): boolean {
    return this.ended;
  }

  /** What the turn's stream records before its answer (a turn that wrote nothing to the chat yet). */
  get record(): TurnRecord | undefined {
    return this.init.record;
  }

  private readonly init: Omit<TurnRunnerInit, "before" | "accepted">;
  /**
   * The chat as read and as accepted: whole session graphs, needed up to the commit and let go
   * there (`release`), before the turn's tail yields to the event loop. A garbage collection
   * meanwhile would otherwise copy a whole chat from the young generation into the old one, on
   * every turn (it was most of what a 1,000-message turn cost the handler over withSession).
   */
  private chat: Pick<TurnRunnerInit, "before" | "accepted"> | undefined;

  constructor(init: TurnRunnerInit) {
    const { before, accepted, ...rest } = init;
    this.init = rest;
    this.chat = accepted === undefined ? { before } : { before, accepted };
    this.streamId = init.streamId;
    this.chatId = init.chatId;
    this.messageId = `msg-${init.streamId}`;
    this.done = new Promise<void>((resolve) => (this.resolveDone = resolve));
  }

  /** Starts the run (once). */
  start(): void {
    const { chats } = this.init;
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, Math.floor(chats.leaseMs / 3)));
    this.renewTimer.unref?.();
    const tracing = tracingOf(chats.store);
    const run = () => this.run();
    void (tracing?.chat ? tracing.chat("turn", this.init.storageId, run) : run())
      .catch((error: unknown) => chats.onError(error))
      .finally(() => {
        clearInterval(this.renewTimer);
        this.over = true;
        this.settle();
        this.resolveDone();
      });
  }

  /**
   * Follows the turn: every chunk from the first, then live, then `end`. Returns the function
   * that stops following (the turn goes on).
   */
  subscribe(listener: TurnListener): () => void {
    for (const text of this.chunks) listener.chunk(text);
    if (this.ended) {
      listener.end();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The turn's last chunk is out (its commit is done or failed): the listeners here end now, and
   * a later `subscribe` gets every chunk and its end at once. Writing the last chunks to the
   * store's buffer and finishing the stream go on after (`done` waits for them): a reader in
   * this process need not wait for those round trips, a follower elsewhere gets them from the
   * buffer.
   */
  private settle(): void {
    if (this.ended) return;
    this.ended = true;
    for (const listener of this.listeners) listener.end();
    this.listeners.clear();
  }

  /** Asks the turn to stop and keep its partial answer. False when it is over already. */
  stop(): boolean {
    return this.end("stop");
  }

  /** Ends the turn keeping nothing of it (`disconnect: "abort"`). */
  abandon(): boolean {
    return this.end("abort");
  }

  /** Ends the turn without a commit: its chat is being deleted. */
  cancel(): void {
    this.end("lost");
  }

  private end(ending: Ending): boolean {
    if (this.over || this.ending !== undefined) return false;
    this.ending = ending;
    if (ending === "lost") this.lost = true;
    this.abort.abort(new StatebagError("stream-abandoned", `the turn was ended (${ending})`));
    return true;
  }

  private emit(chunk: UIStreamChunk): void {
    const text = JSON.stringify(chunk);
    this.chunks.push(text);
    for (const listener of this.listeners) listener.chunk(text);
    if (this.lost) return;
    this.pending.push(text);
    this.flushing ??= this.flush();
  }

  /** Appends what is pending, one append at a time, until nothing is. */
  private async flush(): Promise<void> {
    const { chats } = this.init;
    try {
      while (this.pending.length > 0 && !this.lost && !this.finishing) {
        // Gather what the model writes for a moment: one append for a run of tokens, not one each
        // (followers elsewhere see chunks that much later; this process's listeners at once).
        if (!this.draining && this.pending.length < MAX_BATCH)
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, BATCH_MS);
            timer.unref?.();
            // Woken early (the turn's end): the timer goes too, not left to fire for nothing.
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        this.wake = undefined;
        // The turn is ending: what is pending goes with the stream's end (`finishStream`).
        if (this.finishing) return;
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          const { stopRequested } = await chats.streams.append(this.streamId, batch, chats.leaseMs);
          if (stopRequested) this.stop();
        } catch (error) {
          if (isClosed(error)) {
            this.lose();
          } else {
            this.pending.unshift(...batch); // kept for the next try (a renewal or the next chunk)
            chats.onError(error);
          }
          return;
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private async drain(): Promise<void> {
    this.draining = true;
    this.wake?.();
    for (let tries = 0; tries < 3 && !this.lost; tries++) {
      while (this.flushing) await this.flushing;
      if (this.pending.length === 0) return;
      this.flushing = this.flush();
    }
    while (this.flushing) await this.flushing;
  }

  private async renew(): Promise<void> {
    if (this.over || this.lost) return;
    if (this.pending.length > 0 && !this.flushing) this.flushing = this.flush();
    try {
      const { stopRequested } = await this.init.chats.streams.renew(this.streamId, this.init.chats.leaseMs);
      if (stopRequested) this.stop();
    } catch (error) {
      if (isClosed(error)) this.lose();
    }
  }

  /** The stream was ended by someone else (recovered, deleted, erased): nothing more is written or committed. */
  private lose(): void {
    this.lost = true;
    this.pending = [];
    this.end("lost");
  }

  private async run(): Promise<void> {
    const { chats, input } = this.init;
    const encoder = new UIMessageStreamEncoder((chunk) => this.emit(chunk), {
      newMessage: input.kind !== "approvals",
      // Block ids unique in the message: an approval's continuation streams into an earlier message.
      blockIdPrefix: this.streamId.slice(0, 8),
    });
    // An approvals turn continues the message on screen (useChat resumes its last assistant
    // message): its start names no new id.
    encoder.begin(input.kind !== "approvals" ? this.messageId : undefined);
    const signal = this.abort.signal;
    let outcome: "done" | "stopped" | "failed" | "lost" | "aborted";
    let session: AgentSession | undefined;
    try {
      if (input.kind !== "approvals") session = await this.runMessage(encoder, signal);
      else await this.runAnswers(encoder, signal);
      outcome = "done";
    } catch (error) {
      outcome =
        this.ending === "stop" ? "stopped" : this.ending === "abort" ? "aborted" : this.lost ? "lost" : "failed";
      if (outcome === "failed") chats.onError(error);
    }
    if (outcome === "done" && this.ending === "lost") outcome = "lost";

    let committed = false;
    if (outcome !== "lost") {
      try {
        committed = await this.commit(outcome, session);
      } catch (error) {
        if (!(error instanceof ConflictError)) chats.onError(error);
      }
    }
    session = undefined;
    this.release();
    this.finished = committed;
    if (outcome === "aborted") {
      // Nobody listens (the client left): no last chunks.
    } else if (!committed) {
      encoder.fail("The chat was changed or deleted while this reply was written; the reply was not saved.");
    } else if (outcome === "done") {
      encoder.finish(this.committedAnswer?.metadata);
    } else if (outcome === "stopped") {
      encoder.finish(this.committedAnswer?.found ? this.committedAnswer.metadata : { statebag: { finish: "stopped" } });
    } else {
      encoder.fail("The reply failed; your message and what was written so far are saved.");
    }
    this.settle();
    // The stream's tail (its last append, its finish) waits for the event loop's next turn, so the
    // responses ending above are written out first: with a buffer whose writes are synchronous
    // (SQLite) the last append would otherwise run before the reader's last read, and end the
    // reply as late as the write takes.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const status: Exclude<StreamStatus, "running"> =
      outcome === "done" ? "done" : outcome === "stopped" ? "stopped" : "failed";
    // A recorded turn that could not commit (the store failed) keeps its stream a day: the next
    // load folds the user's message and the answer in from it.
    const keepMs =
      this.init.record && !committed && outcome !== "aborted"
        ? Math.max(chats.streamKeepMs, DAY_MS)
        : chats.streamKeepMs;
    await this.finishStream(status, keepMs);
  }

  /**
   * The stream's tail: the chunks not appended yet and the end. One write where the buffer has
   * `finishWith` (the batch the flush was gathering is not appended apart); else the last appends,
   * then `finish`.
   */
  private async finishStream(status: Exclude<StreamStatus, "running">, keepMs: number): Promise<void> {
    const { streams, onError } = this.init.chats;
    const finishWith = streams.finishWith?.bind(streams);
    if (finishWith !== undefined) {
      this.finishing = true;
      this.wake?.();
      while (this.flushing) await this.flushing;
      // More than one batch (appends failed meanwhile): the earlier ones first, as appends.
      if (this.pending.length > MAX_BATCH) {
        this.finishing = false;
        await this.drain();
      } else {
        for (let tries = 0; tries < 3 && !this.lost; tries++) {
          const batch = this.pending.splice(0);
          try {
            // False: no longer running (ended by someone else); nothing more to write.
            await finishWith(this.streamId, batch, status, { keepMs });
            return;
          } catch (error) {
            if (isClosed(error)) return;
            this.pending.unshift(...batch);
            onError(error);
          }
        }
        return;
      }
    } else {
      await this.drain();
    }
    if (!this.lost)
      await streams.finish(this.streamId, status, { keepMs }).catch((error: unknown) => {
        if (!isClosed(error)) onError(error);
      });
  }

  private async runMessage(encoder: UIMessageStreamEncoder, signal: AbortSignal): Promise<AgentSession> {
    const session = copyForTurn(this.held().before, this.init.chats.historyKey);
    const blobs = this.init.chats.blobReader(this.init.owner);
    const { branchFrom, message } = this.init;
    const stream = this.init.chats.agent.runStream(message ?? [], session, {
      signal,
      blobs,
      ...(branchFrom !== undefined ? { branchFrom } : {}),
    });
    let next: IteratorResult<AgentResponseUpdate, unknown>;
    while (!(next = await stream.next()).done) {
      signal.throwIfAborted();
      encoder.update(next.value);
    }
    signal.throwIfAborted();
    return session;
  }

  /** Answers through `answerToolApprovals`: approved tools run exactly once, each step saved with compare-and-swap. */
  private async runAnswers(encoder: UIMessageStreamEncoder, signal: AbortSignal): Promise<void> {
    const { chats, storageId, requests } = this.init;
    const answers = (this.init.input as Extract<TurnInput, { kind: "approvals" }>).answers;
    const result = await answerToolApprovals(
      chats.store,
      storageId,
      chats.agent,
      answers.map((a) =>
        a.approved ? approveToolCall(a.approvalId, a.reason) : rejectToolCall(a.approvalId, a.reason),
      ),
      { signal, ttlMs: chats.ttlMs, blobs: chats.blobReader(this.init.owner) },
    );
    answers.forEach((answer, i) => {
      const call = requests[i].toolCall;
      encoder.approvalAnswered({
        ...answer,
        callId: call.$type === "functionCall" ? call.callId : answer.approvalId,
      });
    });
    // The continuation is not streamed by answerToolApprovals: replay its messages as updates.
    for (const message of result.response?.messages ?? []) {
      encoder.update({
        role: message.role,
        contents: message.contents,
        messageId: message.messageId,
        sessionId: storageId,
      });
    }
  }

  /** Commits the turn's end; false when the chat was no longer the one this turn started on. */
  private async commit(
    outcome: "done" | "stopped" | "failed" | "aborted",
    session: AgentSession | undefined,
  ): Promise<boolean> {
    const { chats, owner, storageId, revision, labels, created } = this.init;
    const { before } = this.held();
    const meta = { owner, labels: withoutActive(labels) };
    const save = (value: AgentSession, expectedRevision: number, metaLabels = meta.labels) =>
      chats.store.save(value, { expectedRevision, ttlMs: chats.ttlMs, meta: { owner, labels: metaLabels } });
    if (outcome === "aborted") {
      // `disconnect: "abort"`: the turn leaves nothing, not even the user's message.
      if (created) return chats.store.delete(storageId, { expectedRevision: revision });
      await save(copyForTurn(before, chats.historyKey), revision);
      return true;
    }
    const finish: TurnFinish | undefined = outcome === "done" ? undefined : outcome;
    if (this.init.input.kind !== "approvals") {
      let next: AgentSession;
      /** The messages this turn adds, after its branch point (for a commit on a chat that moved on). */
      let added: ChatMessage[];
      const { branchFrom, message } = this.init;
      if (outcome === "done" && session) {
        next = session;
        const all = historyOf(next, chats.historyKey) as ChatMessage[];
        // Where the turn's messages start on the new active path: after the message it branched from.
        const base =
          branchFrom === undefined
            ? historyOf(before, chats.historyKey).length
            : branchFrom === null
              ? 0
              : all.findIndex((m, i) => messageIdAt(m, i) === branchFrom) + 1;
        const renamed = assignAnswerIds(all, base, message, this.messageId);
        renameBranchPoints(next, chats.historyKey, renamed);
        added = all.slice(base);
      } else {
        next = this.acceptedCopy();
        const history = historyOf(next, chats.historyKey);
        const answer = withUniqueIds(
          partialAnswer(this.chunks, this.messageId, finish ?? "failed"),
          history,
          this.messageId,
        );
        appendToHistory(next, chats.historyKey, answer);
        added = message ? [message, ...answer] : answer;
      }
      this.noteAnswer(next);
      try {
        await save(next, revision);
      } catch (error) {
        // A recorded turn's chat was saved meanwhile by someone else: its messages go on what is there now.
        if (!(error instanceof ConflictError) || !this.init.record) throw error;
        return this.commitOnto(added, branchFrom);
      }
      return true;
    }
    // An approvals turn saved its steps itself: clear the label on what is stored now.
    for (let attempt = 0; attempt < 5; attempt++) {
      const stored = await chats.store.get(storageId);
      if (!stored || stored.meta.owner !== owner || stored.meta.labels?.[ACTIVE_STREAM_LABEL] !== this.streamId)
        return false;
      // Just read, and this turn's own: changed and saved as it is (no copy).
      const next = stored.session;
      // Messages the continuation added get ids no earlier message has (a model may reuse its own).
      const all = historyOf(next, chats.historyKey) as ChatMessage[];
      const kept = historyOf(this.held().accepted ?? this.acceptedCopy(), chats.historyKey).length;
      if (all.length > kept) withUniqueIds(all.slice(kept), all.slice(0, kept));
      if (finish !== undefined) {
        const history = historyOf(next, chats.historyKey);
        appendToHistory(
          next,
          chats.historyKey,
          withUniqueIds(partialAnswer(this.chunks, this.messageId, finish), history, this.messageId),
        );
      }
      this.noteAnswer(next);
      try {
        await save(next, stored.revision, withoutActive(stored.meta.labels));
        return true;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return false;
  }

  /**
   * Commits a recorded turn's messages onto the chat as stored now (it was saved meanwhile, e.g. a
   * branch switch): after the message the turn branched from when it is still there, else after
   * the active leaf. Nothing when the turn is no longer this chat's (deleted, erased, or taken for
   * dead and folded in by a recovery: its stream is no longer running).
   */
  private async commitOnto(added: ChatMessage[], branchFrom: string | null | undefined): Promise<boolean> {
    const { chats, owner, storageId, labels } = this.init;
    const key = chats.historyKey;
    for (let attempt = 0; attempt < 5; attempt++) {
      if ((await chats.streams.info(this.streamId))?.status !== "running") return false;
      const stored = await chats.store.get(storageId);
      if (!stored || stored.meta.owner !== owner) return false;
      const next = copyForTurn(stored.session, key);
      const history = historyOf(next, key);
      const ids = new Set(history.map((m, i) => messageIdAt(m, i)));
      const parent = branchFrom === undefined || (branchFrom !== null && !ids.has(branchFrom)) ? undefined : branchFrom;
      appendToHistory(
        next,
        key,
        withUniqueIds(
          added.map((m) => ({ ...m })),
          history,
          added[0]?.messageId,
        ),
        parent,
      );
      this.noteAnswer(next);
      try {
        await chats.store.save(next, {
          expectedRevision: stored.revision,
          ttlMs: chats.ttlMs,
          meta: { owner, labels: withoutActive(stored.meta.labels ?? labels) },
        });
        return true;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return false;
  }

  /** The chat as read and as accepted (until `release`). */
  private held(): Pick<TurnRunnerInit, "before" | "accepted"> {
    if (!this.chat) throw new Error("statebag: a turn's chat was read after its commit (a bug in the turn runner)");
    return this.chat;
  }

  /** The commit is over: the chat's graphs go (nothing after it reads them). */
  private release(): void {
    this.chat = undefined;
  }

  /** A copy of the chat as accepted (with the user's message), to change. */
  private acceptedCopy(): AgentSession {
    const { message, chats } = this.init;
    const { accepted, before } = this.held();
    if (accepted) return copyForTurn(accepted, chats.historyKey);
    const next = copyForTurn(before, chats.historyKey);
    if (message) appendToHistory(next, chats.historyKey, [message]);
    return next;
  }

  /** Reads what a reload will show of this turn's answer in `session` (about to be committed). */
  private noteAnswer(session: AgentSession): void {
    const history = historyOf(session, this.init.chats.historyKey);
    const calls = answeredCalls(this.chunks);
    for (const request of this.init.requests)
      if (request.toolCall.$type === "functionCall") calls.add(request.toolCall.callId);
    // Only the tail from the last message the user typed: a turn's UI message starts after it.
    const start = lastTypedIndex(history);
    const found = turnMessage(session, history.slice(Math.max(0, start)), this.messageId, calls);
    this.committedAnswer = { found: found !== undefined, metadata: found?.metadata };
  }
}

/** The index of the last user message with content of its own (not only approval answers or results); -1 when none. */
function lastTypedIndex(history: readonly ChatMessage[]): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i];
    if (
      message.role === "user" &&
      message.contents.some((c) => c.$type !== "toolApprovalResponse" && c.$type !== "functionResult")
    )
      return i;
  }
  return -1;
}

/**
 * Server ids for what a run added after `base` (the history before the turn): the user's message
 * keeps its id; the first assistant message after it gets `answerId` (the id its stream
 * announced); any other message without an id, or with one the chat holds already, gets a new one.
 * (A run may add messages before the user's, e.g. the results of an approval round it closed.)
 * @internal exported for its test
 */
export function assignAnswerIds(
  all: ChatMessage[],
  base: number,
  user: ChatMessage | undefined,
  answerId: string,
): Map<string, string> {
  const renamed = new Map<string, string>();
  // The ids of the chat before `base` that a message after it brings: one pass over the chat
  // comparing with those few, not a set of every id (the lookups below ask only about these).
  const asked = new Set<string>();
  for (let i = base; i < all.length; i++) {
    const id = all[i].messageId;
    if (id !== undefined) asked.add(id);
  }
  const taken = new Set<string>();
  if (asked.size > 0) {
    // The stored ids compared with the few asked about (no id built, no hash of each stored id):
    // a message without an id shows `statebag-<index>`, which only the message at that index can be.
    const few = asked.size <= 8 ? [...asked] : undefined;
    for (let i = 0; i < base; i++) {
      const id = all[i].messageId;
      if (id !== undefined && (few ? few.includes(id) : asked.has(id))) taken.add(id);
    }
    for (const id of asked) {
      if (!id.startsWith("statebag-")) continue;
      const at = Number(id.slice("statebag-".length));
      if (
        Number.isSafeInteger(at) &&
        at >= 0 &&
        at < base &&
        `statebag-${at}` === id &&
        all[at].messageId === undefined
      )
        taken.add(id);
    }
  }
  if (user?.messageId !== undefined) taken.add(user.messageId);
  // A regeneration has no user message of its own: its answer follows the question at `base - 1`.
  let seenUser = user === undefined;
  let answered = false;
  for (let i = base; i < all.length; i++) {
    const message = all[i];
    if (!seenUser && message.role === "user" && message.messageId === user?.messageId) {
      seenUser = true;
      continue;
    }
    let id = message.messageId;
    if (seenUser && !answered && message.role === "assistant") {
      id = answerId;
      answered = true;
    } else if (id === undefined || taken.has(id)) id = `${answerId}-${i}-${randomUUID().slice(0, 8)}`;
    if (message.messageId !== undefined && message.messageId !== id) renamed.set(message.messageId, id);
    message.messageId = id;
    taken.add(id);
  }
  return renamed;
}

/** The history's branch points name the turn's messages by the ids `assignAnswerIds` gave them. */
function renameBranchPoints(session: AgentSession, key: string, renamed: ReadonlyMap<string, string>): void {
  const state = historyTree(session, key);
  if (!state || renamed.size === 0 || state.branchPoints.length === 0) return;
  const branchPoints = state.branchPoints.map((point) => ({
    parentId: point.parentId === null ? null : (renamed.get(point.parentId) ?? point.parentId),
    childIds: point.childIds.map((id) => renamed.get(id) ?? id),
  }));
  Object.defineProperty(session.stateBag, key, {
    value: { ...state, branchPoints },
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** A stream that is no longer running (finished by another process, deleted or erased). */
function isClosed(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  return code === "stream-closed" || name === "StreamClosedError";
}
