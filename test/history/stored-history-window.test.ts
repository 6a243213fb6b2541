/**
 * Issue #25: a run on a stored log reads a window (`window`) or only what was appended since it
 * last read the log (the warm cache), and two processes appending to one log never lose or
 * duplicate a message in what the model sees. Each "process" is its own store connection and its
 * own provider (so its own cache).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClientAgent, StoredChatHistoryProvider } from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { messageText, type AgentSession, type ChatMessage } from "../../src/index.js";
import { openStore, withSession, type MessageLog, type SessionStore } from "../../src/stores.js";
import { LogCache } from "../../src/runtime/agent/providers/log-cache.js";
import { allBackends, type Backend } from "../stores/helpers.js";

const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);
const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });

/** A log that records which reads a run made. */
function counting(log: MessageLog) {
  const calls: string[] = [];
  const wrapped: MessageLog = Object.assign(Object.create(log) as MessageLog, {
    readMessages: (id: string) => (calls.push("readMessages"), log.readMessages(id)),
    getMessages: (id: string, o?: { last?: number }) => (calls.push("getMessages"), log.getMessages(id, o)),
    readMessageWindow: (id: string, o: { last?: number; from?: number }) => (
      calls.push(`window ${JSON.stringify(o)}`), log.readMessageWindow!(id, o)
    ),
  });
  return { log: wrapped, calls };
}

describe.each(allBackends)("stored history windows and warm logs on $name", (backend: Backend) => {
  let a: SessionStore;
  let b: SessionStore;
  let cleanup: () => Promise<void>;
  let n = 0;
  const id = (label: string) => `${label}-${++n}`;

  beforeAll(async () => {
    const location = await backend.location();
    cleanup = location.cleanup;
    a = await openStore(location.url);
    // The memory store lives in its process: the second "process" shares it.
    b = backend.name === "memory" ? a : await openStore(location.url);
  });
  afterAll(async () => {
    await a.close();
    if (b !== a) await b.close();
    await cleanup();
  });

  const agentOn = (
    log: MessageLog,
    options: { window?: number; commit?: "session" | "run"; cacheBytes?: number } = {},
  ) => {
    const client = new ScriptedChatClient({ usage: false });
    const history = new StoredChatHistoryProvider({
      log,
      commit: options.commit ?? "run",
      window: options.window,
      cacheBytes: options.cacheBytes,
    });
    return { agent: new ChatClientAgent({ client, history }), client };
  };
  /** What the model was sent before this run's input (the history it saw). */
  const seen = (client: ScriptedChatClient) => {
    const request = client.requests.at(-1)!.messages;
    return texts(request.slice(0, -1));
  };

  it("two processes taking turns on one log: each run sees every message exactly once, in order (warm caches)", async () => {
    const conversationId = id("two");
    const p1 = agentOn(a.messages);
    const p2 = agentOn(b.messages);
    for (let i = 0; i < 6; i++) {
      const p = i % 3 === 2 ? p1 : i % 2 === 0 ? p1 : p2;
      const before = texts(await a.messages.getMessages(conversationId));
      await p.agent.run(`turn ${i}`, p.agent.createSession({ id: conversationId }));
      expect(seen(p.client)).toEqual(before);
    }
    expect(texts(await a.messages.getMessages(conversationId))).toHaveLength(12);
  });

  it("two processes racing on one log: nothing lost or duplicated, and the next run of each sees the log as it is", async () => {
    const conversationId = id("race");
    const p1 = agentOn(a.messages);
    const p2 = agentOn(b.messages);
    await p1.agent.run("seed", p1.agent.createSession({ id: conversationId }));
    await p2.agent.run("seed 2", p2.agent.createSession({ id: conversationId }));
    for (let round = 0; round < 4; round++) {
      await Promise.all([
        p1.agent.run(`p1 r${round}`, p1.agent.createSession({ id: conversationId })),
        p2.agent.run(`p2 r${round}`, p2.agent.createSession({ id: conversationId })),
      ]);
    }
    const log = texts(await a.messages.getMessages(conversationId));
    expect(log).toHaveLength(2 * 2 + 8 * 2);
    expect(new Set(log.filter((t) => /^p\d r\d$/.test(t))).size).toBe(8);
    for (const p of [p1, p2]) {
      await p.agent.run("check", p.agent.createSession({ id: conversationId }));
      const now = texts(await a.messages.getMessages(conversationId));
      expect(seen(p.client)).toEqual(now.slice(0, -2));
    }
  });

  it("a warm process reloads when another one replaced, trimmed or deleted the log", async () => {
    const conversationId = id("changed");
    const p1 = agentOn(a.messages);
    for (const t of ["q0", "q1", "q2"]) await p1.agent.run(t, p1.agent.createSession({ id: conversationId }));
    const changes: [string, () => Promise<unknown>][] = [
      ["replace", () => b.messages.replaceMessages(conversationId, [user("summary"), user("kept")])],
      ["trim", () => b.messages.trimMessages(conversationId, { keepLast: 3 })],
      [
        "trim and append",
        async () => {
          await b.messages.trimMessages(conversationId, { keepLast: 1 });
          await b.messages.appendMessages(conversationId, [user("x"), user("y")], { operationId: id("op") });
        },
      ],
      [
        "delete and rebuild",
        async () => {
          const old = await b.messages.getMessages(conversationId);
          await b.messages.deleteMessages(conversationId);
          await b.messages.appendMessages(conversationId, [user("fresh"), ...old.slice(1), user("more")], {
            operationId: id("op"),
          });
        },
      ],
    ];
    for (const [what, change] of changes) {
      await p1.agent.run(`before ${what}`, p1.agent.createSession({ id: conversationId }));
      await change();
      const expected = texts(await a.messages.getMessages(conversationId));
      await p1.agent.run(`after ${what}`, p1.agent.createSession({ id: conversationId }));
      expect(seen(p1.client), what).toEqual(expected);
    }
  });

  it("a warm run reads only what was appended (no whole-log read), and writes only its turn", async () => {
    const conversationId = id("warm");
    const { log, calls } = counting(a.messages);
    const p = agentOn(log);
    await a.messages.appendMessages(
      conversationId,
      Array.from({ length: 50 }, (_, i) => user(`m${i}`)),
      { operationId: "seed" },
    );
    await p.agent.run("first", p.agent.createSession({ id: conversationId }));
    expect(calls).toContain("readMessages");
    calls.length = 0;
    await b.messages.appendMessages(conversationId, [user("other")], { operationId: "other" });
    await p.agent.run("second", p.agent.createSession({ id: conversationId }));
    // A Redis list keeps no positions: there a changed log is read whole again.
    if (backend.name !== "redis") expect(calls).not.toContain("readMessages");
    expect(seen(p.client)).toEqual(texts(await a.messages.getMessages(conversationId)).slice(0, -2));
    expect((await a.messages.getMessages(conversationId)).length).toBe(50 + 2 + 1 + 2);
  });

  it("withSession (commit: session) with a warm cache: every turn lands once and the model sees all of them", async () => {
    const conversationId = id("session");
    const p = agentOn(a.messages, { commit: "session" });
    for (let i = 0; i < 4; i++) {
      await withSession(a, conversationId, (session: AgentSession) => p.agent.run(`s${i}`, session));
      expect(seen(p.client)).toHaveLength(i * 2);
    }
    await withSession(a, conversationId, (session: AgentSession) => p.agent.run("last", session));
    expect(seen(p.client).filter((_, i) => i % 2 === 0)).toEqual(["s0", "s1", "s2", "s3"]);
    expect(texts(await a.messages.getMessages(conversationId)).filter((t) => /^s\d$/.test(t))).toEqual([
      "s0",
      "s1",
      "s2",
      "s3",
    ]);
  });

  for (const commit of ["run", "session"] as const) {
    it(`window (commit: ${commit}): the model sees the newest messages, the log keeps all, a run appends only its turn and reads only the window`, async () => {
      const conversationId = id(`window-${commit}`);
      await a.messages.appendMessages(
        conversationId,
        Array.from({ length: 40 }, (_, i) => user(`m${i}`)),
        { operationId: "seed" },
      );
      const { log, calls } = counting(a.messages);
      const p = agentOn(log, { window: 6, commit });
      const run = (t: string) =>
        commit === "session"
          ? withSession(a, conversationId, (session: AgentSession) => p.agent.run(t, session))
          : p.agent.run(t, p.agent.createSession({ id: conversationId }));
      await run("w0");
      expect(seen(p.client)).toEqual(["m34", "m35", "m36", "m37", "m38", "m39"]);
      for (let i = 1; i < 4; i++) {
        await run(`w${i}`);
        const all = texts(await a.messages.getMessages(conversationId));
        // In "session" mode the last turn reaches the log with the next run (the outbox).
        const committed = commit === "run" ? all.slice(0, -2) : all;
        expect(seen(p.client)).toEqual(committed.slice(-6));
      }
      expect(calls.filter((c) => c === "readMessages" || c === "getMessages")).toEqual([]);
      expect(calls.every((c) => c.startsWith('window {"last"') && JSON.parse(c.slice(7)).last <= 8)).toBe(true);
      const all = texts(await a.messages.getMessages(conversationId));
      expect(all.slice(0, 40)).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
      expect(all.length).toBe(commit === "run" ? 48 : 46);
    });
  }

  it("one warm provider running concurrent turns on one log: each sees the log once, in order", async () => {
    const conversationId = id("same-process");
    const p = agentOn(a.messages);
    await p.agent.run("seed", p.agent.createSession({ id: conversationId }));
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => p.agent.run(`c${i}`, p.agent.createSession({ id: conversationId }))),
    );
    const log = texts(await a.messages.getMessages(conversationId));
    expect(log).toHaveLength(14);
    await p.agent.run("check", p.agent.createSession({ id: conversationId }));
    expect(seen(p.client)).toEqual(log);
    // listMessages is the whole history (not a window), and a copy the caller may edit.
    const listed = await p.agent.history.listMessages(p.agent.createSession({ id: conversationId }));
    expect(texts(listed)).toEqual(texts(await a.messages.getMessages(conversationId)));
    listed[0].contents = [];
    await p.agent.run("again", p.agent.createSession({ id: conversationId }));
    expect(seen(p.client)[0]).toBe("seed");
  });

  it("listMessages with a window returns the whole history", async () => {
    const conversationId = id("window-list");
    await a.messages.appendMessages(
      conversationId,
      Array.from({ length: 10 }, (_, i) => user(`m${i}`)),
      { operationId: "seed" },
    );
    const p = agentOn(a.messages, { window: 3 });
    expect(await p.agent.history.listMessages(p.agent.createSession({ id: conversationId }))).toHaveLength(10);
  });

  it("window with two processes: each run's window is the log's newest messages", async () => {
    const conversationId = id("window-two");
    const p1 = agentOn(a.messages, { window: 4 });
    const p2 = agentOn(b.messages, { window: 4 });
    for (let i = 0; i < 5; i++) {
      const p = i % 2 ? p2 : p1;
      const before = texts(await a.messages.getMessages(conversationId));
      await p.agent.run(`t${i}`, p.agent.createSession({ id: conversationId }));
      expect(seen(p.client)).toEqual(before.slice(-4));
    }
  });
});

describe("LogCache", () => {
  it("evicts least recently used logs past its byte bound and keeps none larger than it", () => {
    const cache = new LogCache(100);
    const entry = (bytes: number) => ({ version: 1, end: 1, length: 1, messages: [user("x")], bytes });
    cache.set("a", entry(40));
    cache.set("b", entry(40));
    cache.get("a");
    cache.set("c", entry(40));
    expect([cache.get("a"), cache.get("b"), cache.get("c")].map(Boolean)).toEqual([true, false, true]);
    cache.set("big", entry(101));
    expect(cache.get("big")).toBeUndefined();
    expect(cache.size).toBe(80);
  });
});
