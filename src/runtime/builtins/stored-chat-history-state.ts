/**
 * The state `StoredChatHistoryProvider` keeps in a session (where its message log is, how much of
 * it is committed, the write the log has not seen yet, and the history's branches) and its stored
 * versions' migrations, kept apart from the provider class so the generated registry loads them
 * without loading the agent.
 *
 * A branched history (version 2) is a tree whose messages are entries of message logs, never copied:
 * `tree.runs` names runs of log entries (each entry follows the one before it) and what each run's
 * first entry follows; `tree.active` names the active leaf. The active path is read run by run
 * (windowed reads of those entries only, whatever the log's length); a new branch appends its
 * messages to the log and adds one run. A fork names runs of its source's log by `storageId`.
 * Without `tree` the history is linear: the log's first `messageCount` messages, then `pending`.
 */
import type { ChatMessage } from "../core/messages.js";
import type { ProviderState } from "../core/tagged.js";
import { defineMigration } from "../registry/migrations.js";
import type { ForkOrigin } from "./chat-history-state.js";

/** A committed write the log has not necessarily seen yet. */
export interface PendingLogWrite {
  /** Idempotency key of the write (the run's operation id). */
  operationId: string;
  /** `append`: add after the log's messages; `replace`: the whole history (after a reduction). */
  mode: "append" | "replace";
  messages: ChatMessage[];
}

/** An entry of a tree: entry `offset` of run `run` (both indexes from 0). */
export interface LogEntryRef {
  /**
   * @TJS-type integer
   * @minimum 0
   */
  run: number;
  /**
   * @TJS-type integer
   * @minimum 0
   */
  offset: number;
}

/** `count` consecutive messages of a log, each following the one before it. */
export interface LogRun {
  /** The log holding them, when it is not the history's own (`storageId`): a fork's source. */
  storageId?: string;
  /**
   * The index of the run's first message in its log (0: the log's first message).
   * @TJS-type integer
   * @minimum 0
   */
  start: number;
  /**
   * @TJS-type integer
   * @minimum 1
   */
  count: number;
  /** The entry the run's first message follows (in an earlier run); absent for a first message. */
  parent?: LogEntryRef;
}

/** A branched history: its runs of log entries (oldest first) and its active leaf. */
export interface StoredHistoryTree {
  runs: LogRun[];
  /** The last message of the active path; absent for an empty history. */
  active?: LogEntryRef;
}

export interface StoredChatHistoryState extends ProviderState<"StoredChatHistoryState", 2> {
  /** The message log's id in the store. */
  storageId: string;
  /**
   * How many of the log's messages are committed history (before `pending`). With a `tree`: how
   * many of the log's messages the tree may name (the branches' entries), `pending` going after.
   * @TJS-type integer
   * @minimum 0
   */
  messageCount: number;
  /** The last run's write, applied to the log by the next run or reader. */
  pending?: PendingLogWrite;
  /** The history's branches; absent while it has one (the log's first `messageCount` messages). Added in version 2. */
  tree?: StoredHistoryTree;
  /** Set on a session made by forking another one. Added in version 2. */
  forkedFrom?: ForkOrigin;
}

/** Version 1 as stored (schemas/history/; this room stands below src/generated/, so it is written out here). */
interface StoredChatHistoryStateV1 {
  $type: "StoredChatHistoryState";
  $version?: 1;
  storageId: string;
  messageCount: number;
  pending?: PendingLogWrite;
}

/**
 * Version 2 made the history a tree. A version 1 history is linear, which version 2 writes the
 * same way (no `tree`): it loads unchanged, and its first branch adds the tree.
 */
export const storedChatHistoryMigrations = [
  defineMigration<StoredChatHistoryStateV1, StoredChatHistoryState>({
    type: "StoredChatHistoryState",
    from: 1,
    to: 2,
    up: (v) => ({ ...v }),
  }),
];
