/**
 * What an export of a branched history's active path (`toUIMessages`, the Agent Framework
 * exporters) leaves out: the branches beside the path, by id. Kept on this floor so the exporters
 * and `statebag/ui-messages` share it.
 */
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";

/** One branch an export of the active path leaves out: where it starts and what it holds. */
export interface BranchLeftOut {
  /** The message on the active path the branch follows (`null`: it is another first message). */
  parentId: string | null;
  /** Its first message. */
  messageId: string;
  /** Messages in it (with everything branching off it). */
  messageCount: number;
}

/** What an export of a session's active path leaves out of its history's tree. */
export interface BranchesLeftOut {
  sessionId: string;
  historyKey: string;
  /** The branches beside the active path, oldest first. */
  branches: BranchLeftOut[];
  /** Messages in them, all told. */
  messageCount: number;
}

/**
 * The branches of a session's in-memory history that are not on its active path (regenerated
 * answers, edited messages and what followed them), or undefined when it has none: what an export
 * of the active path (`toUIMessages`, the Agent Framework exporters) leaves out.
 */
export function branchesLeftOut(
  session: AgentSession,
  historyKey = "statebag.chatHistory",
): BranchesLeftOut | undefined {
  if (
    typeof session?.stateBag !== "object" ||
    session.stateBag === null ||
    !Object.hasOwn(session.stateBag, historyKey)
  )
    return undefined;
  const state = session.stateBag[historyKey] as { $type?: unknown; branches?: unknown };
  if (state?.$type !== "InMemoryChatHistoryState" || !Array.isArray(state.branches) || state.branches.length === 0)
    return undefined;
  const entries = state.branches as { parentId: string | null; message: ChatMessage }[];
  const inBranches = new Set<string>();
  for (const entry of entries) if (entry.message.messageId !== undefined) inBranches.add(entry.message.messageId);
  const children = new Map<string | null, string[]>();
  for (const entry of entries) {
    if (entry.message.messageId === undefined) continue;
    const list = children.get(entry.parentId) ?? [];
    list.push(entry.message.messageId);
    children.set(entry.parentId, list);
  }
  const sizeOf = (id: string): number => {
    let count = 0;
    const stack = [id];
    while (stack.length > 0 && count <= entries.length) {
      count++;
      stack.push(...(children.get(stack.pop()!) ?? []));
    }
    return count;
  };
  const branches: BranchLeftOut[] = [];
  for (const entry of entries) {
    const id = entry.message.messageId;
    if (id === undefined || (entry.parentId !== null && inBranches.has(entry.parentId))) continue;
    branches.push({ parentId: entry.parentId, messageId: id, messageCount: sizeOf(id) });
  }
  return {
    sessionId: session.id,
    historyKey,
    branches,
    messageCount: branches.reduce((sum, b) => sum + b.messageCount, 0),
  };
}
