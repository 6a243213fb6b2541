/**
 * The tree of a branched chat history (`InMemoryChatHistoryState` version 3): beside the active
 * path (the history's `messages`, shown as the chat), each branch that leaves it (a regenerated
 * answer, an edited message and what followed) as its own marked block: where it starts on the
 * path, how many messages it holds, and its messages.
 */
import { cut, h } from "./dom.js";
import type { Marks } from "./json-tree.js";

type Chat = (messages: unknown[], pointer: string, marks: Marks) => HTMLElement;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const idOf = (message: unknown): string | undefined =>
  isObject(message) && typeof message.messageId === "string" ? message.messageId : undefined;

/** The branches of `history` beside its active path, or null when it has none. */
export function branchesView(
  history: Record<string, unknown>,
  pointer: string,
  marks: Marks,
  chat: Chat,
): HTMLElement | null {
  const entries = Array.isArray(history.branches) ? history.branches.filter(isObject) : [];
  if (entries.length === 0) return null;
  const inBranches = new Set(entries.map((b) => idOf(b.message)).filter((id): id is string => id !== undefined));
  const children = new Map<string | null, Record<string, unknown>[]>();
  for (const entry of entries) {
    const parent = typeof entry.parentId === "string" ? entry.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), entry]);
  }
  const box = h("div", { class: "branches", "data-testid": "history-branches" }, [
    h("h3", null, `Branches beside the active path (${entries.length} messages)`),
  ]);
  entries.forEach((root, i) => {
    const parent = typeof root.parentId === "string" ? root.parentId : null;
    if (parent !== null && inBranches.has(parent)) return; // inside another branch
    // The branch's messages, each after the one it follows (depth first, in the order written).
    const messages: unknown[] = [];
    const stack = [root];
    while (stack.length > 0 && messages.length <= entries.length) {
      const next = stack.pop()!;
      messages.push(next.message);
      const id = idOf(next.message);
      if (id !== undefined) stack.push(...(children.get(id) ?? []).slice().reverse());
    }
    box.appendChild(
      h("div", { class: "branch", "data-testid": "branch" }, [
        h(
          "div",
          { class: "dim" },
          `branch ${parent === null ? "from the start" : `after ${cut(parent, 80)}`} · ${messages.length} message${messages.length === 1 ? "" : "s"} · not on the active path`,
        ),
        chat(messages, `${pointer}/branches/${i}`, marks),
      ]),
    );
  });
  return box;
}
