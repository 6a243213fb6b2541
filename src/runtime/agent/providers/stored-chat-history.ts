/**
 * History kept outside the session, in a store (for long conversations, or apps that keep only an id): the
 * messages live in a store's message log; the session's bag holds the storage id and how many of
 * the log's messages it has committed.
 *
 * When a turn reaches the log depends on how the app keeps sessions (`commit`):
 *
 * - `"session"` (default, for apps that save sessions, e.g. with `withSession`): an outbox. The log
 *   and the session are two records, and only the session is saved with compare-and-swap, so a run
 *   never writes its own messages to the log. It records them in the session (`pending`), the app
 *   saves the session, and the NEXT run (or a reader) applies the committed `pending` to the log,
 *   idempotently by its operation id. A run whose save fails (conflict, outage, crash) leaves
 *   nothing in the log; two runs racing on one session cannot interleave (the session CAS picks
 *   one); messages a lost save left in the log lie beyond `messageCount`, are never shown, and are
 *   cut off by the next write.
 * - `"run"` (for apps that keep only the conversation id and never save sessions): the log is the
 *   record. The turn is appended when the run commits (idempotently, by the run's operation id),
 *   and every run reads the whole log, so turns from other processes are never cut off. A
 *   reduction replaces the log only if nobody wrote to it since this run read it; otherwise this
 *   run's turn is appended and the next run reduces.
 *
 * In both modes the provider never truncates or replaces a log it has not read: a session without
 * this provider's state adopts the log under its storage id (an app that kept only the id
 * creates a session with that id, and one log read brings the history back), and a
 * session moved here from an in-memory history carries its messages into an empty log.
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { ProviderSessionState } from "../../core/state-bag.js";
import { StoredChatHistoryStateType } from "../../../generated/descriptors.js";
import { ConfigurationError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";
import { ConflictError } from "../../stores/errors.js";
import type { MessageLog } from "../../stores/types.js";
import type { ProviderState } from "../../core/tagged.js";
import { ChatHistoryProvider, foreignHistoryStates, HistoryProviderMismatchError } from "./chat-history-provider.js";
import type { ProviderContext } from "./provider.js";
import type { ChatReducer } from "./reducers.js";

/** A committed write the log has not necessarily seen yet. */
export interface PendingLogWrite {
  /** Idempotency key of the write (the run's operation id). */
  operationId: string;
  /** `append`: add after the log's messages; `replace`: the whole history (after a reduction). */
  mode: "append" | "replace";
  messages: ChatMessage[];
}

export interface StoredChatHistoryState extends ProviderState<"StoredChatHistoryState", 1> {
  /** The message log's id in the store. */
  storageId: string;
  /**
   * How many of the log's messages are committed history (before `pending`).
   * @TJS-type integer
   * @minimum 0
   */
  messageCount: number;
  /** The last run's write, applied to the log by the next run or reader. */
  pending?: PendingLogWrite;
}

/** When a run's messages are written to the log (see the module comment). */
export type StoredHistoryCommit = "session" | "run";

export interface StoredChatHistoryOptions {
  /** Where the messages live: `store.messages` of any statebag store. */
  log: MessageLog;
  /** State bag key. Default `"statebag.storedChatHistory"`. */
  key?: string;
  /** The log id for a new session. Default: the session's id, so an app needs to keep only one id. */
  storageIdFor?: (session: Readonly<AgentSession>) => string;
  /** Shrinks the stored history after each run. */
  reducer?: ChatReducer;
  /**
   * `"session"` (default): the turn reaches the log after the app saved the session. `"run"`: the
   * turn is appended to the log when the run commits, for apps that never save sessions.
   */
  commit?: StoredHistoryCommit;
}

/** What one run read: the history it showed the model and the log it came from. */
interface RunView {
  operationId: string;
  storageId: string;
  history: ChatMessage[];
  /** The log's version when read (for replacements in `"run"` mode). */
  version: number;
  /** Messages carried over from another provider's state, not yet in the (empty) log. */
  carried: boolean;
  /** This run's own messages, once `addMessages` has them. */
  turn?: ChatMessage[];
}

export class StoredChatHistoryProvider extends ChatHistoryProvider {
  static readonly defaultKey = "statebag.storedChatHistory";
  readonly key: string;
  readonly commit: StoredHistoryCommit;
  readonly state: ProviderSessionState<StoredChatHistoryState>;
  private readonly log: MessageLog;
  private readonly storageIdFor: (session: Readonly<AgentSession>) => string;
  private readonly reducer?: ChatReducer;
  /**
   * The current run's view per session object (runs on one session object are serialized), so a
   * run reads the log once. Checked against the run's operation id before use.
   */
  private readonly runs = new WeakMap<object, RunView>();

  constructor(options: StoredChatHistoryOptions) {
    super();
    const commit = options.commit ?? "session";
    if (commit !== "session" && commit !== "run") {
      throw new ConfigurationError(`StoredChatHistoryProvider commit must be "session" or "run", got ${JSON.stringify(commit)}`, 'use "run" when the app never saves sessions');
    }
    this.commit = commit;
    this.key = options.key ?? StoredChatHistoryProvider.defaultKey;
    this.log = options.log;
    this.reducer = options.reducer;
    this.storageIdFor = options.storageIdFor ?? ((session) => session.id);
    this.state = new ProviderSessionState(this.key, StoredChatHistoryStateType, {
      initial: () => ({ $type: "StoredChatHistoryState", storageId: "", messageCount: 0 }),
    });
  }

  async getMessages(context: ProviderContext): Promise<ChatMessage[]> {
    return [...(await this.view(context)).history];
  }

  async addMessages(context: ProviderContext, added: readonly ChatMessage[]): Promise<void> {
    const view = await this.view(context);
    const turn = [...added];
    view.turn = turn;
    // Carried-over messages are not in the log yet: they go with this turn's write.
    let next: StoredChatHistoryState = view.carried
      ? { $type: "StoredChatHistoryState", storageId: view.storageId, messageCount: 0, pending: { operationId: context.operationId, mode: "append", messages: [...view.history, ...turn] } }
      : { $type: "StoredChatHistoryState", storageId: view.storageId, messageCount: view.history.length, pending: { operationId: context.operationId, mode: "append", messages: turn } };
    if (this.reducer) {
      const reduced = await this.reducer([...view.history, ...turn]);
      if (reduced.length !== view.history.length + turn.length) {
        next = { ...next, messageCount: 0, pending: { operationId: context.operationId, mode: "replace", messages: reduced } };
      }
    }
    this.state.write(context.state, next);
  }

  /** In `"run"` mode, writes the turn to the log; the session then records no pending write. */
  override async committing(context: ProviderContext): Promise<void> {
    if (this.commit !== "run") return;
    const state = this.state.read(context.state);
    const view = this.runs.get(context.session);
    if (!state?.pending || state.pending.operationId !== context.operationId || view?.operationId !== context.operationId) return;
    const { storageId, pending } = state;
    const options = { operationId: pending.operationId };
    if (pending.mode === "append" && !view.carried) {
      await this.log.appendMessages(storageId, pending.messages, options);
    } else {
      // A carried-over history or a reduction: only onto the log exactly as this run read it.
      try {
        await this.log.replaceMessages(storageId, pending.messages, { ...options, expectedVersion: view.version });
      } catch (error) {
        // Someone appended meanwhile: keep their messages, add this turn, reduce next time.
        if (!(error instanceof ConflictError) || view.carried || !view.turn) throw error;
        await this.log.appendMessages(storageId, view.turn, options);
      }
    }
    const count = pending.mode === "append" ? state.messageCount + pending.messages.length : pending.messages.length;
    this.state.write(context.state, { $type: "StoredChatHistoryState", storageId, messageCount: count });
  }

  /** The committed history, read without writing anything. */
  async listMessages(session: AgentSession): Promise<ChatMessage[]> {
    const state = this.state.read(session);
    if (!state) return (await this.adopt(session)).history;
    if (state.pending?.mode === "replace") return [...state.pending.messages];
    const log = (await this.log.readMessages(state.storageId)).messages;
    return this.commit === "run" && !state.pending ? log : committedView(log, state).history;
  }

  /**
   * The history this run shows the model, read once per run. A pending write from an earlier
   * (saved) run is applied to the log first; the staged state then records it as applied.
   */
  private async view(context: ProviderContext): Promise<RunView> {
    const cached = this.runs.get(context.session);
    if (cached?.operationId === context.operationId) return cached;
    const state = this.state.read(context.state);
    let view: RunView;
    if (state) {
      const { history, version } = await this.flushed(state);
      view = { operationId: context.operationId, storageId: state.storageId, history, version, carried: false };
      if (state.pending) this.state.write(context.state, { $type: "StoredChatHistoryState", storageId: state.storageId, messageCount: history.length });
    } else {
      const adopted = await this.adopt(context.session);
      view = { operationId: context.operationId, ...adopted };
      // Record the adopted log now, so a session saved after this run keeps reading it.
      if (adopted.history.length > 0 && !adopted.carried) {
        this.state.write(context.state, { $type: "StoredChatHistoryState", storageId: adopted.storageId, messageCount: adopted.history.length });
      }
    }
    this.runs.set(context.session, view);
    return view;
  }

  /**
   * The history of a session that has no state under this provider's key: the log under its
   * storage id (one read), or, when that log is empty, the messages an in-memory history provider
   * kept in the session. Both non-empty and different: refused, naming where the history is.
   */
  private async adopt(session: Readonly<AgentSession>): Promise<{ storageId: string; history: ChatMessage[]; version: number; carried: boolean }> {
    const storageId = this.storageIdFor(session);
    const foreign = foreignHistoryStates(session, this.key);
    const otherLog = foreign.find((f) => f.$type === "StoredChatHistoryState");
    if (otherLog) {
      throw new HistoryProviderMismatchError(
        session.id,
        otherLog,
        "StoredChatHistoryProvider",
        `this provider uses the key "${this.key}"`,
        `give the provider the session's key: new StoredChatHistoryProvider({ log, key: ${JSON.stringify(otherLog.key)} })`,
      );
    }
    const inMemory = foreign.filter((f) => Array.isArray(f.value.messages) && (f.value.messages as unknown[]).length > 0);
    const snapshot = await this.log.readMessages(storageId);
    if (inMemory.length === 0) return { storageId, history: snapshot.messages, version: snapshot.version, carried: false };
    if (inMemory.length > 1) {
      throw new HistoryProviderMismatchError(
        session.id,
        inMemory[0],
        "StoredChatHistoryProvider",
        `the session holds in-memory histories under ${inMemory.map((f) => `"${f.key}"`).join(" and ")}, and which one is current is not recorded`,
        "remove the stale one from session.stateBag before running it with a StoredChatHistoryProvider",
      );
    }
    const source = inMemory[0];
    const messages = source.value.messages as ChatMessage[];
    if (snapshot.messages.length === 0) return { storageId, history: structuredClone(messages), version: snapshot.version, carried: true };
    // The log already took these messages over (an earlier carry-over whose session was not saved).
    if (snapshot.messages.length >= messages.length && messages.every((m, i) => sameMessage(m, snapshot.messages[i]))) {
      return { storageId, history: snapshot.messages, version: snapshot.version, carried: false };
    }
    throw new HistoryProviderMismatchError(
      session.id,
      source,
      "StoredChatHistoryProvider",
      `it holds ${messages.length} message(s) there, and the message log ${quoted(storageId)} already holds ${snapshot.messages.length} other message(s); statebag merges or drops neither`,
      "run the session with an agent whose history is an InMemoryChatHistoryProvider, or move the log aside (store.messages.deleteMessages, or a storageIdFor naming an empty log) to carry the in-memory history over",
    );
  }

  /**
   * Applies a pending write of an earlier, committed run to the log (idempotently) and returns the
   * committed history and the log's version after it.
   */
  private async flushed(state: StoredChatHistoryState): Promise<{ history: ChatMessage[]; version: number }> {
    const { storageId, pending } = state;
    for (let attempt = 0; ; attempt++) {
      const snapshot = await this.log.readMessages(storageId);
      if (!pending) {
        // In "run" mode the log is the record: every message in it is history.
        return { history: this.commit === "run" ? snapshot.messages : snapshot.messages.slice(0, state.messageCount), version: snapshot.version };
      }
      const view = committedView(snapshot.messages, state);
      if (view.applied) return { history: view.history, version: snapshot.version };
      try {
        let version: number;
        if (pending.mode === "append" && snapshot.messages.length === state.messageCount) {
          version = (await this.log.appendMessages(storageId, pending.messages, { operationId: pending.operationId })).version;
        } else {
          // A replacement, or an append that must also cut off a lost save's leftovers: onto the
          // log as just read, never blindly.
          version = await this.log.replaceMessages(storageId, view.history, { expectedVersion: snapshot.version, operationId: pending.operationId });
        }
        return { history: view.history, version };
      } catch (error) {
        // Another reader applied it meanwhile: look again.
        if (!(error instanceof ConflictError) || attempt >= 2) throw error;
      }
    }
  }
}

/** The history a state commits to, given the log as it is, and whether the log already holds it. */
function committedView(log: readonly ChatMessage[], state: StoredChatHistoryState): { history: ChatMessage[]; applied: boolean } {
  const { pending, messageCount } = state;
  if (!pending) return { history: log.slice(0, messageCount), applied: true };
  if (pending.mode === "replace") {
    return { history: pending.messages, applied: log.length >= pending.messages.length && pending.messages.every((m, i) => sameMessage(m, log[i])) };
  }
  // The first `messageCount` messages are the log's own; only the pending tail needs comparing.
  const applied = log.length >= messageCount + pending.messages.length && pending.messages.every((m, i) => sameMessage(m, log[messageCount + i]));
  return { history: [...log.slice(0, messageCount), ...pending.messages], applied };
}

function sameMessage(a: ChatMessage, b: ChatMessage | undefined): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
