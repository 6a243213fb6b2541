/**
 * Branches as a property (#33): any sequence of send, regenerate, edit, switch, rewind and fork,
 * on an in-memory history and on a history in a message log (memory and SQLite stores, through
 * `withSession`), keeps
 * - every message written reachable (the tree only grows: nothing here deletes),
 * - the active path well formed (each message's parent is the one before it; exactly the path is
 *   marked active),
 * - the model's input equal to the active path (plus the new input), and the path after a run
 *   equal to that input plus the answer,
 * - a fork's history equal to its source's path up to the message it was forked at.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClientAgent,
  InMemoryChatHistoryProvider,
  StoredChatHistoryProvider,
  forkSession,
  type ChatHistoryProvider,
} from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { messageText, type ChatMessage } from "../../src/index.js";
import { withSession, type SessionStore } from "../../src/stores.js";
import { allBackends, freshStore, memoryBackend, type Backend } from "../stores/helpers.js";

type Op =
  | { kind: "send"; chat: number }
  | { kind: "regenerate"; chat: number }
  | { kind: "edit"; chat: number; pick: number }
  | { kind: "switch"; chat: number; pick: number }
  | { kind: "rewind"; chat: number; pick: number }
  | { kind: "fork"; chat: number; pick: number };

const chat = fc.nat({ max: 3 });
const pick = fc.nat({ max: 1000 });
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: chat.map((c) => ({ kind: "send" as const, chat: c })) },
  { weight: 2, arbitrary: chat.map((c) => ({ kind: "regenerate" as const, chat: c })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("edit" as const), chat, pick }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("switch" as const), chat, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("rewind" as const), chat, pick }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("fork" as const), chat, pick }) },
);

const line = (m: ChatMessage) => `${m.role}:${messageText(m)}`;
const idOf = (m: ChatMessage, i: number) => m.messageId ?? `statebag-${i}`;

const backends: { name: string; backend: Backend; history: "memory" | "log" }[] = [
  { name: "in-memory history", backend: memoryBackend, history: "memory" },
  ...allBackends
    .filter((b) => b.name === "memory" || b.name === "sqlite")
    .map((backend) => ({ name: `message log on ${backend.name}`, backend, history: "log" as const })),
];

describe.each(backends)("branches: $name", ({ backend, history }) => {
  let store: SessionStore;
  let done: () => Promise<void>;
  let run = 0;
  beforeAll(async () => {
    ({ store, done } = await freshStore(backend));
  });
  afterAll(async () => done());

  it("keeps every message reachable, the path well formed, and the model's input the active path", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 14 }), async (ops) => {
        const r = ++run;
        let answers = 0;
        const client = new ScriptedChatClient({
          usage: false,
          rules: [{ when: () => true, reply: () => `answer ${++answers}` }],
        });
        const provider: ChatHistoryProvider =
          history === "memory"
            ? new InMemoryChatHistoryProvider()
            : new StoredChatHistoryProvider({ log: store.messages });
        const agent = new ChatClientAgent({ client, history: provider });
        const chats = [`p${r}-0`];
        const written = new Map<string, Set<string>>(); // chat -> every id it ever showed
        let sent = 0;
        const load = async (id: string) => (await store.get(id))!.session;

        const checkChat = async (id: string) => {
          const session = await load(id);
          const path = await agent.history.listMessages(session);
          const tree = await agent.messageTree(session);
          const ids = new Map(tree.map((n, i) => [n.message.messageId ?? `?${i}`, n]));
          // Well formed: each message's parent is the one before it; exactly the path is active.
          path.forEach((m, i) => {
            const node = tree.find(
              (n) => (n.message.messageId ?? null) === (m.messageId ?? null) && line(n.message) === line(m),
            );
            expect(node, `path message ${i}`).toBeDefined();
            expect(node!.active).toBe(true);
            expect(node!.parentId).toBe(i === 0 ? null : idOf(path[i - 1], i - 1));
          });
          expect(tree.filter((n) => n.active)).toHaveLength(path.length);
          // Reachable: every id this chat ever showed is still in its tree.
          const seen = written.get(id) ?? new Set<string>();
          for (const known of seen) expect(ids.has(known), `message ${known} of ${id}`).toBe(true);
          for (const n of tree) if (n.message.messageId) seen.add(n.message.messageId);
          written.set(id, seen);
          return { session, path, tree };
        };

        await withSession(store, chats[0], (s) => agent.run(`hello ${sent++}`, s));
        await checkChat(chats[0]);
        for (const o of ops) {
          const id = chats[o.chat % chats.length];
          const { path, tree } = await checkChat(id);
          const before = client.requests.length;
          let input: string | undefined;
          let expectedPrefix: string[] | undefined;
          if (o.kind === "send") {
            input = `message ${sent++}`;
            expectedPrefix = [...path.map(line), `user:${input}`];
            await withSession(store, id, (s) => agent.run(input!, s));
          } else if (o.kind === "regenerate") {
            const lastUser = path.map((m) => m.role).lastIndexOf("user");
            if (lastUser < 0) continue;
            expectedPrefix = path.slice(0, lastUser + 1).map(line);
            await withSession(store, id, (s) => agent.regenerate(s));
          } else if (o.kind === "edit") {
            const users = tree.filter((n) => n.message.role === "user");
            const target = users[o.pick % users.length];
            input = `edit ${sent++}`;
            await withSession(store, id, (s) => agent.editMessage(s, target.message.messageId ?? "statebag-0", input!));
            expectedPrefix = undefined; // checked below against the parent's path
            const after = await agent.history.listMessages(await load(id));
            const parentAt = target.parentId === null ? -1 : after.findIndex((m, i) => idOf(m, i) === target.parentId);
            expect(after[parentAt + 1] && line(after[parentAt + 1])).toBe(`user:${input}`);
            expect(client.requests.at(-1)!.messages.map(line)).toEqual(after.slice(0, parentAt + 2).map(line));
          } else if (o.kind === "switch" || o.kind === "rewind") {
            const target = tree[o.pick % tree.length];
            const targetId = target.message.messageId ?? idOf(target.message, path.indexOf(target.message));
            if (o.kind === "switch") await withSession(store, id, (s) => agent.switchBranch(s, targetId));
            else await withSession(store, id, (s) => agent.rewind(s, targetId));
            const after = await agent.history.listMessages(await load(id));
            expect(after.map(idOf)).toContain(targetId);
            if (o.kind === "rewind") expect(idOf(after.at(-1)!, after.length - 1)).toBe(targetId);
          } else {
            if (path.length === 0) continue;
            const at = o.pick % path.length;
            const forkId = `p${r}-${chats.length}`;
            await forkSession(store, agent, id, idOf(path[at], at), { id: forkId });
            chats.push(forkId);
            const forked = await agent.history.listMessages(await load(forkId));
            expect(forked.map(line)).toEqual(path.slice(0, at + 1).map(line));
            await checkChat(forkId);
          }
          if (expectedPrefix) {
            // The model saw exactly the active path (and the new input); the path is that plus the answer.
            expect(client.requests.length).toBe(before + 1);
            expect(client.requests.at(-1)!.messages.map(line)).toEqual(expectedPrefix);
            const after = await agent.history.listMessages(await load(id));
            expect(after.map(line).slice(0, expectedPrefix.length)).toEqual(expectedPrefix);
            expect(after.length).toBe(expectedPrefix.length + 1);
          }
          await checkChat(id);
        }
      }),
      { numRuns: history === "memory" ? 60 : 25 },
    );
  }, 120_000);
});
