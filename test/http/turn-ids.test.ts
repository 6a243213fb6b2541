/**
 * The ids a turn gives its messages, found without a set of every id of the chat (#36): the
 * in-memory history's `withMessageIds` and the chat server's `assignAnswerIds` look up only the
 * ids the new messages bring. Against the previous implementations (a set of every id), on random
 * histories whose ids collide on purpose (reused ids, ids missing, `statebag-<index>` ids, ids only
 * a branch holds), they give the same ids, the same renames and the same messages. The chat
 * server's lookup of an edited message (`indexOfMessageId`, a loop without a closure or an id built
 * per message) finds what `findIndex` over `messageIdAt` found.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageIdAt, withMessageIds } from "../../src/runtime/agent/providers/history-branches.js";
import type { InMemoryChatHistoryState } from "../../src/runtime/builtins/chat-history-state.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { indexOfMessageId, messageIds } from "../../src/runtime/http/chat-data.js";
import { assignAnswerIds } from "../../src/runtime/http/turn-runner.js";

/** A small id space, so ids collide often; undefined: a message without an id. */
const idArb = fc.option(
  fc.oneof(
    fc.constantFrom("a", "b", "c", "d"),
    fc.integer({ min: 0, max: 6 }).map((i) => `statebag-${i}`),
    // Not the form a message without an id shows: never positional.
    fc.constantFrom("statebag-", "statebag-01", "statebag-1.0", "statebag--1", "statebag-1e0"),
  ),
  { nil: undefined },
);
const roleArb = fc.constantFrom<ChatMessage["role"]>("user", "assistant", "tool");
const messageArb = fc.record({ role: roleArb, messageId: idArb }).map(
  ({ role, messageId }): ChatMessage => ({
    role,
    contents: [{ $type: "text", text: "x" }],
    ...(messageId !== undefined ? { messageId } : {}),
  }),
);

/** A uuid-free rendering: generated ids are random, so compare where they were given, not their value. */
function shape(ids: (string | undefined)[], original: (string | undefined)[]): unknown[] {
  return ids.map((id, i) => (id === original[i] ? ["kept", id] : ["new", typeof id]));
}

/** The previous `withMessageIds`: a set of every id of the history. */
function withMessageIdsBefore(state: InMemoryChatHistoryState, messages: readonly ChatMessage[]): ChatMessage[] {
  const taken = new Set<string>();
  state.messages.forEach((m, i) => taken.add(messageIdAt(m, i)));
  for (const branch of state.branches) if (branch.message.messageId !== undefined) taken.add(branch.message.messageId);
  return messages.map((message) => {
    let id = message.messageId;
    if (id === undefined || taken.has(id)) id = `msg-${crypto.randomUUID()}`;
    taken.add(id);
    return id === message.messageId ? message : { ...message, messageId: id };
  });
}

/** The previous `assignAnswerIds`: `taken` was every id before `base`. */
function assignAnswerIdsBefore(
  all: ChatMessage[],
  base: number,
  user: ChatMessage | undefined,
  answerId: string,
): Map<string, string> {
  const renamed = new Map<string, string>();
  const taken = messageIds(all.slice(0, base));
  if (user?.messageId !== undefined) taken.add(user.messageId);
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
    } else if (id === undefined || taken.has(id)) id = `${answerId}-${i}-${crypto.randomUUID().slice(0, 8)}`;
    if (message.messageId !== undefined && message.messageId !== id) renamed.set(message.messageId, id);
    message.messageId = id;
    taken.add(id);
  }
  return renamed;
}

describe("turn message ids without a set of every id", () => {
  it("withMessageIds keeps and replaces the same ids as a set of every id did (path and branches)", () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 12 }),
        fc.array(messageArb, { maxLength: 4 }),
        fc.array(messageArb, { maxLength: 5 }),
        (path, branchMessages, added) => {
          const state: InMemoryChatHistoryState = {
            $type: "InMemoryChatHistoryState",
            $version: 3,
            messages: path,
            droppedMessageCount: 0,
            branches: branchMessages.map((message) => ({ parentId: null, message })),
            branchPoints: [],
          } as unknown as InMemoryChatHistoryState;
          const original = added.map((m) => m.messageId);
          const now = withMessageIds(state, added);
          const before = withMessageIdsBefore(state, added);
          expect(
            shape(
              now.map((m) => m.messageId),
              original,
            ),
          ).toEqual(
            shape(
              before.map((m) => m.messageId),
              original,
            ),
          );
          // Unchanged messages are the same objects; a renamed one is a copy (the input untouched).
          now.forEach((m, i) => expect(m === added[i]).toBe(before[i] === added[i]));
          expect(added.map((m) => m.messageId)).toEqual(original);
          // Every id given out is unique among the new messages and free in the history.
          const given = now.map((m) => m.messageId!);
          expect(new Set(given).size).toBe(given.length);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("assignAnswerIds gives the same ids and renames as a set of every id before the turn did", () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 12 }),
        fc.array(messageArb, { maxLength: 6 }),
        fc.option(fc.nat(), { nil: undefined }),
        (history, run, userAt) => {
          // The user's message is one of the run's (as the agent records it), or none (a regeneration).
          const users = run.filter((m) => m.role === "user" && m.messageId !== undefined);
          const user = userAt === undefined || users.length === 0 ? undefined : users[userAt % users.length];
          const copy = (list: ChatMessage[]) => list.map((m) => ({ ...m }));
          const now = [...copy(history), ...copy(run)];
          const before = [...copy(history), ...copy(run)];
          const original = now.map((m) => m.messageId);
          const renamedNow = assignAnswerIds(now, history.length, user, "msg-answer");
          const renamedBefore = assignAnswerIdsBefore(before, history.length, user, "msg-answer");
          // A generated id ends in 8 random hex digits: compared without them.
          const generated = (id: string | undefined) => id?.replace(/^(msg-answer-\d+)-[0-9a-f]{8}$/, "$1");
          expect(now.map((m) => generated(m.messageId))).toEqual(before.map((m) => generated(m.messageId)));
          expect(
            shape(
              now.map((m) => m.messageId),
              original,
            ),
          ).toEqual(
            shape(
              before.map((m) => m.messageId),
              original,
            ),
          );
          expect([...renamedNow.keys()]).toEqual([...renamedBefore.keys()]);
          expect([...renamedNow.values()].map(generated)).toEqual([...renamedBefore.values()].map(generated));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("indexOfMessageId finds the message findIndex over messageIdAt found", () => {
    fc.assert(
      fc.property(fc.array(messageArb, { maxLength: 12 }), idArb, (history, asked) => {
        const id = asked ?? "a";
        expect(indexOfMessageId(history, id)).toBe(history.findIndex((m, i) => messageIdAt(m, i) === id));
      }),
      { numRuns: 1000 },
    );
    // Every id a history shows finds its message (the first one showing it).
    const history: ChatMessage[] = [
      { role: "user", contents: [] },
      { role: "assistant", contents: [], messageId: "statebag-0" },
      { role: "user", contents: [], messageId: "u" },
      { role: "assistant", contents: [] },
    ];
    expect(
      ["statebag-0", "u", "statebag-3", "statebag-1", "statebag-4"].map((id) => indexOfMessageId(history, id)),
    ).toEqual([0, 2, 3, -1, -1]);
  });
});
