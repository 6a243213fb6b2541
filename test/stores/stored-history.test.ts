/** History kept in a store's message log, driven by a real agent through the hosted-app flow. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClientAgent, StoredChatHistoryProvider, keepLastMessages } from "../../src/agent.js";
import { ConflictError, withSession, type SessionStore } from "../../src/stores.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { messageText } from "../../src/index.js";
import { allBackends, freshStore, type Backend } from "./helpers.js";

describe.each(allBackends)("StoredChatHistoryProvider on $name", (backend: Backend) => {
  let store: SessionStore;
  let done: () => Promise<void>;
  let n = 0;
  const id = () => `chat-${++n}`;
  const agentOn = (s: SessionStore, reducer?: ReturnType<typeof keepLastMessages>) =>
    new ChatClientAgent({
      client: new ScriptedChatClient({ usage: false }),
      history: new StoredChatHistoryProvider({ log: s.messages, reducer }),
    });

  beforeAll(async () => {
    ({ store, done } = await freshStore(backend));
  });
  afterAll(async () => done());

  it("keeps messages in the log and only the storage id and count in the session", async () => {
    const pid = id();
    const agent = agentOn(store);
    await withSession(store, pid, (session) => agent.run("my name is Noor", session));
    const { value } = await withSession(store, pid, (session) => agent.run("what is my name?", session));
    expect(value.text).toBe("Your name is Noor.");
    const stored = (await store.get(pid))!.session;
    // The session holds the storage id and only the last turn, waiting to be applied to the log.
    expect(stored.stateBag["statebag.storedChatHistory"]).toMatchObject({
      $type: "StoredChatHistoryState",
      storageId: pid,
      messageCount: 2,
      pending: { mode: "append" },
    });
    expect((await store.messages.getMessages(pid)).map(messageText)).toEqual([
      "my name is Noor",
      "Nice to meet you, Noor.",
    ]);
    const all = ["my name is Noor", "Nice to meet you, Noor.", "what is my name?", "Your name is Noor."];
    expect((await agent.history.listMessages(stored)).map(messageText)).toEqual(all);
    await withSession(store, pid, (session) => agent.run("bye", session));
    expect((await store.messages.getMessages(pid)).map(messageText)).toEqual(all);
  });

  it("a run whose session was never saved leaves no trace in the history the next run sees", async () => {
    const pid = id();
    const agent = agentOn(store);
    await withSession(store, pid, (session) => agent.run("first", session));
    // Two runs on an in-memory copy whose saves are lost (crash, conflict, outage): the second
    // run applies the first one's messages to the log, but neither was ever committed.
    const loaded = (await store.get(pid))!;
    await agent.run("lost turn 1", loaded.session);
    await agent.run("lost turn 2", loaded.session);
    expect(await store.messages.getMessages(pid)).toHaveLength(4);

    const { value } = await withSession(store, pid, (session) => agent.run("second", session));
    expect(value.text).toBe('You said: "second". I can see 2 earlier messages.');
    const history = await agent.history.listMessages((await store.get(pid))!.session);
    expect(history.map(messageText)).toEqual([
      "first",
      'You said: "first". I can see 0 earlier messages.',
      "second",
      value.text,
    ]);
    // The leftovers were cut off when the committed turn was applied.
    await withSession(store, pid, (session) => agent.run("third", session));
    expect((await store.messages.getMessages(pid)).map(messageText).slice(2)).toEqual(["second", value.text]);
  });

  it("concurrent turns on one session: no lost update, no duplicated message", async () => {
    const pid = id();
    const agent = agentOn(store);
    await withSession(store, pid, (session) => agent.run("start", session));
    const turns = Array.from({ length: 6 }, (_, i) => `turn ${i}`);
    const results = await Promise.allSettled(
      turns.map((t) =>
        withSession(store, pid, (session) => agent.run(t, session), {
          onConflict: "retry",
          retries: 20,
          retryDelayMs: () => 2,
        }),
      ),
    );
    const saved = results.filter((r) => r.status === "fulfilled").length;
    for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(ConflictError);
    const history = await agent.history.listMessages((await store.get(pid))!.session);
    const userTexts = history.filter((m) => m.role === "user").map(messageText);
    expect(userTexts[0]).toBe("start");
    expect(userTexts.length).toBe(1 + saved);
    expect(new Set(userTexts).size).toBe(userTexts.length);
    expect(history).toHaveLength(2 * (1 + saved));
  });

  it("reduction applies to the stored log", async () => {
    const pid = id();
    const agent = agentOn(store, keepLastMessages(4));
    for (let i = 0; i < 5; i++) await withSession(store, pid, (session) => agent.run(`q${i}`, session));
    const session = (await store.get(pid))!.session;
    const history = await agent.history.listMessages(session);
    expect(history.map(messageText).filter((t) => t.startsWith("q"))).toEqual(["q3", "q4"]);
    expect(session.stateBag["statebag.storedChatHistory"]).toMatchObject({ pending: { mode: "replace" } });
    await withSession(store, pid, (s) => agent.run("q5", s));
    expect((await store.messages.getMessages(pid)).map(messageText).filter((t) => t.startsWith("q"))).toEqual([
      "q3",
      "q4",
    ]);
  });
});
