/**
 * What a history's branches look like from outside (siblings, the tree as a list of nodes) and the
 * errors of branch operations, shared by the history providers; and the in-memory history's tree
 * operations (pure functions over its state, returning a new state, never changing one in place).
 *
 * An in-memory history keeps the active path in `messages` and every other message in `branches`
 * with its parent's id; `branchPoints` lists, for each message followed by more than one, its
 * children in the order they were written (so ‹ 1/2 › keeps its order whichever branch is active).
 */
import { randomUUID } from "node:crypto";
import { StatebagError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";
import type { ChatMessage } from "../../core/messages.js";
import type { BranchMessage, BranchPoint, InMemoryChatHistoryState } from "../../builtins/chat-history-state.js";

/** A message's place among the messages that follow the same parent (what a UI shows as ‹ index+1/count ›). */
export interface MessageSiblings {
  messageId: string;
  /** The message it follows; `null` for a first message. */
  parentId: string | null;
  /** Its index among `siblingIds` (0-based). */
  index: number;
  /** How many versions there are (1 when the message never branched). */
  count: number;
  /** The ids of all versions, oldest first (the message's own included). */
  siblingIds: string[];
}

/** One message of a history's tree. */
export interface HistoryTreeNode {
  message: ChatMessage;
  /** The id of the message it follows; `null` for a first message. */
  parentId: string | null;
  /** Whether it is on the active path. */
  active: boolean;
}

/** The id a message goes by: its `messageId`, or `statebag-<index on its path>` (what `toUIMessages` shows) without one. */
export function messageIdAt(message: ChatMessage, depth: number): string {
  return message.messageId ?? `statebag-${depth}`;
}

/** No message with this id in the session's history (on any branch). */
export class MessageNotFoundError extends StatebagError {
  constructor(
    readonly sessionId: string,
    readonly messageId: string,
  ) {
    super(
      "message-not-found",
      `session ${quoted(sessionId)} has no message ${quoted(messageId)} on any branch of its history`,
      {
        hint: "name a message by the id the history gives it (ChatMessage.messageId, or the id toUIMessages shows); list them with agent.messageTree(session)",
      },
    );
  }
}

/** A branch operation that cannot apply to this message or history (what and how to fix in the message). */
export class HistoryBranchError extends StatebagError {
  constructor(message: string, hint: string) {
    super("history-branch", message, { hint });
  }
}

/** Where a message is in an in-memory history: its index on the active path, or in `branches`. */
type Place = { path: number } | { branch: number };

/**
 * Which of `ids` the history holds (on its path or in a branch): one pass comparing each stored id
 * with the few asked about, not a set of every id of a long history.
 */
function heldIds(state: InMemoryChatHistoryState, ids: ReadonlySet<string>): Set<string> {
  const held = new Set<string>();
  if (ids.size === 0) return held;
  const { messages } = state;
  for (let i = 0; i < messages.length; i++) {
    const id = messageIdAt(messages[i], i);
    if (ids.has(id)) held.add(id);
  }
  for (const branch of state.branches) {
    const id = branch.message.messageId;
    if (id !== undefined && ids.has(id)) held.add(id);
  }
  return held;
}

function locate(state: InMemoryChatHistoryState, id: string): Place | undefined {
  for (let i = state.messages.length - 1; i >= 0; i--) if (messageIdAt(state.messages[i], i) === id) return { path: i };
  const branch = state.branches.findIndex((b) => b.message.messageId === id);
  return branch >= 0 ? { branch } : undefined;
}

function place(state: InMemoryChatHistoryState, sessionId: string, id: string): Place {
  const found = locate(state, id);
  if (!found) throw new MessageNotFoundError(sessionId, id);
  return found;
}

export function inMemoryParentOf(state: InMemoryChatHistoryState, sessionId: string, id: string): string | null {
  const at = place(state, sessionId, id);
  if ("path" in at) return at.path === 0 ? null : messageIdAt(state.messages[at.path - 1], at.path - 1);
  return state.branches[at.branch].parentId;
}

/** The path from the root to `id` (inclusive); `null`: the empty path. */
export function inMemoryPathTo(state: InMemoryChatHistoryState, sessionId: string, id: string | null): ChatMessage[] {
  if (id === null) return [];
  const chain: ChatMessage[] = [];
  let current: string | null = id;
  // At most one step per message: a parent cycle in hand-edited state ends here, not in a loop.
  for (let steps = 0; current !== null && steps <= state.branches.length; steps++) {
    const at = place(state, sessionId, current);
    if ("path" in at) {
      const path = state.messages.slice(0, at.path + 1);
      for (let i = chain.length - 1; i >= 0; i--) path.push(chain[i]);
      return path;
    }
    chain.push(state.branches[at.branch].message);
    current = state.branches[at.branch].parentId;
  }
  if (current !== null)
    throw new HistoryBranchError(
      `the branches of session ${quoted(sessionId)} form a cycle`,
      "repair the session's history state",
    );
  return chain.reverse();
}

/** Every message's children in the order they were written. */
function childrenMap(state: InMemoryChatHistoryState): Map<string | null, string[]> {
  const children = new Map<string | null, string[]>();
  const add = (parent: string | null, id: string) => {
    const list = children.get(parent);
    if (list) list.push(id);
    else children.set(parent, [id]);
  };
  state.messages.forEach((m, i) => add(i === 0 ? null : messageIdAt(state.messages[i - 1], i - 1), messageIdAt(m, i)));
  for (const branch of state.branches)
    if (branch.message.messageId !== undefined) add(branch.parentId, branch.message.messageId);
  for (const point of state.branchPoints) {
    const list = children.get(point.parentId);
    if (!list) continue;
    // The recorded order first, then any child it does not name (hand-made state).
    const ordered = point.childIds.filter((c) => list.includes(c));
    for (const childId of list) if (!ordered.includes(childId)) ordered.push(childId);
    children.set(point.parentId, ordered);
  }
  return children;
}

export function inMemorySiblings(state: InMemoryChatHistoryState, sessionId: string, id: string): MessageSiblings {
  const parentId = inMemoryParentOf(state, sessionId, id);
  const siblingIds = childrenMap(state).get(parentId) ?? [id];
  return { messageId: id, parentId, index: siblingIds.indexOf(id), count: siblingIds.length, siblingIds };
}

export function inMemoryTree(state: InMemoryChatHistoryState): HistoryTreeNode[] {
  const nodes: HistoryTreeNode[] = state.messages.map((message, i) => ({
    message,
    parentId: i === 0 ? null : messageIdAt(state.messages[i - 1], i - 1),
    active: true,
  }));
  for (const branch of state.branches)
    nodes.push({ message: branch.message, parentId: branch.parentId, active: false });
  return nodes;
}

/**
 * The path with every message's id written into it: branches name their parents by id, and a
 * position would change under a reducer. Done once, at the first branch of a history from before
 * version 3 (every message written since has an id).
 */
function pinned(path: ChatMessage[]): ChatMessage[] {
  return path.some((m) => m.messageId === undefined)
    ? path.map((m, i) => (m.messageId === undefined ? { ...m, messageId: messageIdAt(m, i) } : m))
    : path;
}

/**
 * The state with `path` (a path of this tree, root first) as its active path: the old path's
 * messages that are not on it go to `branches`, the new path's leave it.
 */
function activate(state: InMemoryChatHistoryState, path: ChatMessage[]): InMemoryChatHistoryState {
  const onPath = new Set(path.map((m, i) => messageIdAt(m, i)));
  const branches: BranchMessage[] = state.branches.filter(
    (b) => b.message.messageId === undefined || !onPath.has(b.message.messageId),
  );
  state.messages.forEach((message, i) => {
    const id = messageIdAt(message, i);
    if (onPath.has(id)) return;
    branches.push({
      parentId: i === 0 ? null : messageIdAt(state.messages[i - 1], i - 1),
      // Off the path its position no longer names it: it keeps the id it went by.
      message: message.messageId === undefined ? { ...message, messageId: id } : message,
    });
  });
  return { ...state, messages: pinned(path), branches };
}

/** Switches to the branch holding `id`: the path to it, then on to the newest message after it. */
export function inMemorySwitch(
  state: InMemoryChatHistoryState,
  sessionId: string,
  id: string,
): InMemoryChatHistoryState {
  const path = inMemoryPathTo(state, sessionId, id);
  const children = childrenMap(state);
  const byId = new Map<string, ChatMessage>();
  for (const branch of state.branches)
    if (branch.message.messageId !== undefined) byId.set(branch.message.messageId, branch.message);
  state.messages.forEach((m, i) => byId.set(messageIdAt(m, i), m));
  for (let current = id; ; ) {
    const next = children.get(current);
    if (!next || next.length === 0 || path.length > byId.size) break;
    current = next[next.length - 1];
    path.push(byId.get(current)!);
  }
  return activate(state, path);
}

/** Makes `id` the active leaf: what followed it stays, as a branch. */
export function inMemoryRewind(
  state: InMemoryChatHistoryState,
  sessionId: string,
  id: string,
): InMemoryChatHistoryState {
  return activate(state, inMemoryPathTo(state, sessionId, id));
}

/**
 * Gives each new message an id no message of the history holds (keeping the one it has when free),
 * so a branch can name it.
 */
export function withMessageIds(state: InMemoryChatHistoryState, messages: readonly ChatMessage[]): ChatMessage[] {
  const asked = new Set<string>();
  for (const message of messages) if (message.messageId !== undefined) asked.add(message.messageId);
  // The history's ids that matter here: those a new message brings (then each id given out).
  const taken = heldIds(state, asked);
  return messages.map((message) => {
    let id = message.messageId;
    if (id === undefined || taken.has(id)) id = `msg-${randomUUID()}`;
    taken.add(id);
    return id === message.messageId ? message : { ...message, messageId: id };
  });
}

/**
 * Adds `messages` after `parentId` (`null`: as first messages; undefined: after the active leaf)
 * and makes them the active path's end. Branching off an earlier message records the branch point.
 */
export function inMemoryAppend(
  state: InMemoryChatHistoryState,
  sessionId: string,
  parentId: string | null | undefined,
  messages: readonly ChatMessage[],
): InMemoryChatHistoryState {
  const added = withMessageIds(state, messages);
  const leafId = state.messages.length ? messageIdAt(state.messages.at(-1)!, state.messages.length - 1) : null;
  if (parentId === undefined) parentId = leafId;
  // A linear history growing at its end (the common turn): nothing to look up.
  if (added.length === 0 || (parentId === leafId && state.branches.length === 0))
    return { ...state, messages: [...state.messages, ...added] };
  const siblings = childrenMap(state).get(parentId) ?? [];
  const base =
    parentId === leafId
      ? { ...state, messages: pinned(state.messages) }
      : activate(state, inMemoryPathTo(state, sessionId, parentId));
  const next = { ...base, messages: [...base.messages, ...added] };
  if (siblings.length === 0) return next;
  const firstId = added[0].messageId!;
  const points: BranchPoint[] = [];
  let found = false;
  for (const point of base.branchPoints) {
    if (point.parentId === parentId) {
      found = true;
      points.push({ parentId, childIds: [...point.childIds, firstId] });
    } else points.push(point);
  }
  if (!found) points.push({ parentId, childIds: [...siblings, firstId] });
  return { ...next, branchPoints: points };
}

/**
 * After a reducer shortened the active path: the branches still reachable (their parent kept), the
 * branch points among what is left. A first message that was removed takes its siblings with it.
 */
export function inMemoryPrune(
  state: InMemoryChatHistoryState,
  before: readonly ChatMessage[],
): InMemoryChatHistoryState {
  if (state.branches.length === 0 && state.branchPoints.length === 0) return state;
  const kept = new Set<string | null>();
  state.messages.forEach((m, i) => kept.add(messageIdAt(m, i)));
  if (before.length > 0 && state.messages[0] === before[0]) kept.add(null);
  const branches: BranchMessage[] = [];
  let pending = state.branches;
  for (let changed = true; changed; ) {
    changed = false;
    const rest: BranchMessage[] = [];
    for (const branch of pending) {
      if (kept.has(branch.parentId) && branch.message.messageId !== undefined) {
        branches.push(branch);
        kept.add(branch.message.messageId);
        changed = true;
      } else rest.push(branch);
    }
    pending = rest;
  }
  const branchPoints: BranchPoint[] = [];
  for (const point of state.branchPoints) {
    if (!kept.has(point.parentId)) continue;
    const childIds = point.childIds.filter((c) => kept.has(c));
    if (childIds.length > 1) branchPoints.push({ parentId: point.parentId, childIds });
  }
  return { ...state, branches, branchPoints };
}
