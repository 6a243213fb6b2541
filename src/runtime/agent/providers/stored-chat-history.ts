/**
 * History kept outside the session (seed 003 "3rd party storage", seed 004 scenario 2b): the
 * messages live in a store's message log; the session's bag holds the storage id and, until the
 * next run, the last run's new messages (an outbox).
 *
 * Why an outbox: the log and the session are two records, and only the session is saved with
 * compare-and-swap. A run therefore never writes its own messages to the log. It records them in
 * the session (`pending`), and the app saves the session; the NEXT run (or a reader) applies the
 * committed `pending` to the log, idempotently by its operation id. So:
 * - a run whose session save fails (conflict, outage, crash) leaves nothing in the log;
 * - two runs racing on one session cannot interleave: the session CAS picks one;
 * - a pending write applied twice (two readers, a retry) lands once;
 * - messages a lost save left in the log (an in-memory session that ran twice, then was dropped)
 *   lie beyond `messageCount` and are never shown; the next write cuts them off.
 * Appends cost only the new messages; a reducer that shortens the history records a replacement.
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { ProviderSessionState } from "../../core/state-bag.js";
import { ConflictError } from "../../stores/errors.js";
import type { MessageLog } from "../../stores/types.js";
import type { ProviderState } from "../../core/tagged.js";
import { ChatHistoryProvider } from "./chat-history-provider.js";
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

export interface StoredChatHistoryOptions {
  /** Where the messages live: `store.messages` of any statebag store. */
  log: MessageLog;
  /** State bag key. Default `"statebag.storedChatHistory"`. */
  key?: string;
  /** The log id for a new session. Default: the session's id (seed 003: reuse the public id). */
  storageIdFor?: (session: Readonly<AgentSession>) => string;
  /** Shrinks the stored history after each run. */
  reducer?: ChatReducer;
}

export class StoredChatHistoryProvider extends ChatHistoryProvider {
  static readonly defaultKey = "statebag.storedChatHistory";
  readonly key: string;
  readonly state: ProviderSessionState<StoredChatHistoryState>;
  private readonly log: MessageLog;
  private readonly storageIdFor: (session: Readonly<AgentSession>) => string;
  private readonly reducer?: ChatReducer;

  constructor(options: StoredChatHistoryOptions) {
    super();
    this.key = options.key ?? StoredChatHistoryProvider.defaultKey;
    this.log = options.log;
    this.reducer = options.reducer;
    this.storageIdFor = options.storageIdFor ?? ((session) => session.id);
    this.state = new ProviderSessionState<StoredChatHistoryState>(this.key, {
      stateType: "StoredChatHistoryState",
      version: 1,
      initial: () => ({ $type: "StoredChatHistoryState", storageId: "", messageCount: 0 }),
    });
  }

  /** Applies the committed pending write to the log (idempotently) and returns the committed history. */
  private async flushed(state: StoredChatHistoryState | undefined): Promise<ChatMessage[]> {
    if (!state) return [];
    const { storageId, pending } = state;
    for (let attempt = 0; ; attempt++) {
      const snapshot = await this.log.readMessages(storageId);
      const view = committedView(snapshot.messages, state);
      if (!pending || view.applied) return view.history;
      try {
        if (pending.mode === "append" && snapshot.messages.length === state.messageCount) {
          await this.log.appendMessages(storageId, pending.messages, { operationId: pending.operationId });
        } else {
          // A replacement, or an append that must also cut off a lost save's leftovers.
          await this.log.replaceMessages(storageId, view.history, { expectedVersion: snapshot.version, operationId: pending.operationId });
        }
        return view.history;
      } catch (error) {
        // Another reader applied it meanwhile: look again.
        if (!(error instanceof ConflictError) || attempt >= 2) throw error;
      }
    }
  }

  async getMessages(context: ProviderContext): Promise<ChatMessage[]> {
    return this.flushed(this.state.read(context.state));
  }

  async addMessages(context: ProviderContext, added: readonly ChatMessage[]): Promise<void> {
    const state = this.state.read(context.state);
    const storageId = state?.storageId ?? this.storageIdFor(context.session);
    const history = await this.flushed(state);
    let next: StoredChatHistoryState = {
      $type: "StoredChatHistoryState",
      storageId,
      messageCount: history.length,
      pending: { operationId: context.operationId, mode: "append", messages: [...added] },
    };
    if (this.reducer) {
      const reduced = await this.reducer([...history, ...added]);
      if (reduced.length !== history.length + added.length) {
        next = { ...next, messageCount: 0, pending: { operationId: context.operationId, mode: "replace", messages: reduced } };
      }
    }
    this.state.write(context.state, next);
  }

  /** The committed history, read without writing anything. */
  async listMessages(session: AgentSession): Promise<ChatMessage[]> {
    const state = this.state.read(session);
    if (!state) return [];
    if (state.pending?.mode === "replace") return [...state.pending.messages];
    return committedView((await this.log.readMessages(state.storageId)).messages, state).history;
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

function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
