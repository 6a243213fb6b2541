/**
 * The state statebag's in-memory chat history keeps in a session (`InMemoryChatHistoryProvider`),
 * its stored versions' migrations and its initial value. Kept apart from the provider class so the
 * generated registry (and so `import "statebag"`) loads the state's shape and migrations without
 * loading the agent.
 *
 * A history is a tree (version 3): `messages` is the active path (root first: what the model,
 * context providers, reducers and UIs see), `branches` holds every other message with its parent's
 * id. A history of version 1 or 2 is a tree of one branch.
 */
import type { ChatMessage } from "../core/messages.js";
import type { ProviderState } from "../core/tagged.js";
import { defineMigration } from "../registry/migrations.js";

/** A message on a branch that is not the active one, and the message it follows. */
export interface BranchMessage {
  /** The `messageId` of the message this one follows; `null` for a first message (a sibling of the history's root). */
  parentId: string | null;
  /** The message (its `messageId` is set). */
  message: ChatMessage;
}

/** Where a forked session's history came from. */
export interface ForkOrigin {
  /** The id of the session it was forked from. */
  sessionId: string;
  /** The last message the fork took over (the fork's history is the source's path up to it). */
  messageId: string;
  /**
   * When the fork was made (ISO 8601).
   * @format date-time
   */
  forkedAt: string;
}

/** A branch point: a message (or the root) with more than one message after it, in the order they were written. */
export interface BranchPoint {
  /** The message the branches follow; `null` for the root (two versions of the first message). */
  parentId: string | null;
  /** The ids of the messages that follow it, oldest first (a UI shows them as ‹ 1/n ›). */
  childIds: string[];
}

/** A local session's history, kept in the session itself. */
export interface InMemoryChatHistoryState extends ProviderState<"InMemoryChatHistoryState", 3> {
  /**
   * The active path, oldest first: what the model and UIs see. A message without a `messageId`
   * goes by `statebag-<its index>`; every message written since version 3 has one.
   */
  messages: ChatMessage[];
  /**
   * How many messages the history's reducer has removed so far (messages in minus messages out,
   * summed over runs), so a UI can say "12 earlier messages hidden" and a summary knows the
   * history was trimmed. 0 for a history that was never reduced. Added in version 2.
   * @TJS-type integer
   * @minimum 0
   */
  droppedMessageCount: number;
  /** Messages off the active path (regenerated answers, edited messages and what followed them), oldest first. Added in version 3. */
  branches: BranchMessage[];
  /** The places where the history branches, each with its children in the order they were written. Added in version 3. */
  branchPoints: BranchPoint[];
  /** Set on a session made by forking another one. Added in version 3. */
  forkedFrom?: ForkOrigin;
}

/**
 * The earlier versions as stored (their frozen schemas are in schemas/history/; this room stands
 * below src/generated/, so its version types are written out here).
 */
interface InMemoryChatHistoryStateV1 {
  $type: "InMemoryChatHistoryState";
  $version?: 1;
  messages: ChatMessage[];
}
interface InMemoryChatHistoryStateV2 {
  $type: "InMemoryChatHistoryState";
  $version: 2;
  messages: ChatMessage[];
  droppedMessageCount: number;
}

/**
 * Version 1 had no `droppedMessageCount`. Whether a v1 history was ever reduced is not recorded,
 * so it starts counting at 0 (what it shows is exactly what is kept).
 *
 * Version 3 made the history a tree. A linear history is a tree of one branch: its messages stay
 * the active path, unchanged, with no other branches. A message without a `messageId` goes by the
 * id a UI already showed it by, `statebag-<its index>` (`toUIMessages`' default); the first branch
 * writes those ids into the messages, so a later reduction cannot renumber them.
 */
export const inMemoryChatHistoryMigrations = [
  defineMigration<InMemoryChatHistoryStateV1, InMemoryChatHistoryStateV2>({
    type: "InMemoryChatHistoryState",
    from: 1,
    to: 2,
    up: (v) => ({ ...v, droppedMessageCount: 0 }),
  }),
  defineMigration<InMemoryChatHistoryStateV2, InMemoryChatHistoryState>({
    type: "InMemoryChatHistoryState",
    from: 2,
    to: 3,
    up: (v) => ({ ...v, branches: [], branchPoints: [] }),
  }),
];

/** A history state at the current version (empty unless `messages` are given), as the provider writes it. */
export function chatHistoryState(messages: ChatMessage[] = []): InMemoryChatHistoryState {
  return {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    messages,
    droppedMessageCount: 0,
    branches: [],
    branchPoints: [],
  };
}
