/**
 * `StatebagSession` against the Agents SDK's Session contract (contract.ts) on every backend,
 * with the SDK's own `MemorySession` through the same suite as the control; then what statebag
 * adds: how items are stored (statebag chat messages, verbatim where they do not map), owners,
 * encryption, strict registries, refused input, and writers racing on one session.
 */
import { MemorySession } from "@openai/agents-core";
import * as vitest from "vitest";
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/agent.js";
import { TypeRegistry, defaultRegistry } from "../../src/index.js";
import { ScriptedChatClient } from "../../src/testing.js";
import {
  OPENAI_AGENTS_ITEM_TYPE,
  OpenAIAgentsItemError,
  StatebagSession,
  registerOpenAIAgentsTypes,
} from "../../src/openai-agents.js";
import { defaultSessionCodec, encryptedSessionCodec, openStore, type SessionStore } from "../../src/stores.js";
import { allBackends, freshStore, sqliteBackend } from "../stores/helpers.js";
import { sampleItems, sessionContract } from "./contract.js";

sessionContract({
  name: "the SDK's MemorySession (control)",
  runner: vitest,
  async open() {
    return { session: new MemorySession(), done: async () => undefined };
  },
});

for (const backend of allBackends) {
  let shared: { store: SessionStore; url: string; done: () => Promise<void> } | undefined;
  let users = 0;
  const restarted: SessionStore[] = [];
  sessionContract({
    name: `StatebagSession on ${backend.name}`,
    runner: vitest,
    async open() {
      // One store location per backend while any session of the suite is open; each session its own id.
      shared ??= await freshStore(backend);
      users++;
      return {
        session: new StatebagSession({ store: shared.store }),
        done: async () => {
          if (--users > 0) return;
          const s = shared!;
          shared = undefined;
          for (const r of restarted.splice(0)) await r.close();
          await s.done();
        },
      };
    },
    async reopen(session) {
      const s = session as StatebagSession;
      // A restarted process: a new store object on the same location (memory: the same store, as it lives in-process).
      const store = backend.durable ? await openStore(shared!.url) : s.store;
      if (store !== s.store) restarted.push(store);
      return new StatebagSession({ store, sessionId: s.sessionId });
    },
  });
}

const userItem = (text: string) => ({ type: "message", role: "user", content: text });

describe("StatebagSession: what is stored", () => {
  it("keeps user and assistant text, function calls and results as statebag chat messages, the rest verbatim", async () => {
    const store = await openStore("memory:");
    const session = new StatebagSession({ store, sessionId: "s1" });
    await session.addItems(sampleItems);
    const stored = await store.get("s1");
    const history = stored!.session.stateBag["statebag.chatHistory"] as unknown as {
      $type: string;
      messages: { role: string; contents: { $type: string; [k: string]: unknown }[] }[];
    };
    expect(history.$type).toBe("InMemoryChatHistoryState");
    const types = history.messages.map((m) => `${m.role}:${m.contents.map((c) => c.$type).join(",")}`);
    expect(types).toEqual([
      "user:text",
      "user:text",
      "system:text",
      `assistant:${OPENAI_AGENTS_ITEM_TYPE}`, // reasoning
      "assistant:functionCall",
      "assistant:functionCall", // arguments text not canonical: the text rides along
      "assistant:functionCall", // empty arguments
      "tool:functionResult",
      "tool:functionResult",
      `assistant:${OPENAI_AGENTS_ITEM_TYPE}`, // hosted tool call
      "assistant:text",
      `assistant:${OPENAI_AGENTS_ITEM_TYPE}`, // refusal: no statebag text
      `assistant:${OPENAI_AGENTS_ITEM_TYPE}`, // computer call
      `assistant:${OPENAI_AGENTS_ITEM_TYPE}`, // compaction
      `assistant:${OPENAI_AGENTS_ITEM_TYPE}`, // unknown kind
    ]);
    expect(history.messages[0]!.contents[0]).toEqual({ $type: "text", text: "What is the weather in Paris?" });
    expect(history.messages[4]!.contents[0]).toEqual({
      $type: "functionCall",
      callId: "call_1",
      name: "get_weather",
      arguments: { city: "Paris" },
    });
    expect(history.messages[10]).toMatchObject({ role: "assistant", messageId: "msg_1" });
    expect(history.messages[3]!.contents[0]).toEqual({ $type: OPENAI_AGENTS_ITEM_TYPE, item: sampleItems[3] });
    await store.close();
  });

  it("refuses an item JSON cannot hold, naming where, and writes nothing", async () => {
    const store = await openStore("memory:");
    const session = new StatebagSession({ store, sessionId: "s1" });
    await session.addItems([userItem("kept")]);
    const bad = {
      type: "function_call_result",
      callId: "c",
      name: "f",
      status: "completed",
      output: new Uint8Array(2),
    };
    const error = await session.addItems([userItem("x"), bad]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAIAgentsItemError);
    expect((error as OpenAIAgentsItemError).code).toBe("json-value");
    expect((error as Error).message).toContain("/1/output");
    expect(await session.getItems()).toEqual([userItem("kept")]);
    await store.close();
  });

  it("the owner is the session's meta.owner: listed, erased, and another owner's session is neither read nor written", async () => {
    const store = await openStore("memory:");
    const alice = new StatebagSession({ store, sessionId: "chat-1", owner: "alice" });
    await alice.addItems([userItem("hello")]);
    expect((await store.list({ owner: "alice" })).items.map((i) => i.id)).toEqual(["chat-1"]);
    const mallory = new StatebagSession({ store, sessionId: "chat-1", owner: "mallory" });
    expect(await mallory.getItems()).toEqual([]);
    await expect(mallory.addItems([userItem("injected")])).rejects.toMatchObject({ name: "SessionOwnerError" });
    await expect(mallory.popItem()).rejects.toMatchObject({ name: "SessionOwnerError" });
    await expect(mallory.clearSession()).rejects.toMatchObject({ name: "SessionOwnerError" });
    expect(await alice.getItems()).toEqual([userItem("hello")]);
    const receipt = await store.eraseOwner("alice");
    expect(receipt.sessions).toBe(1);
    expect(await alice.getItems()).toEqual([]);
    await store.close();
  });

  it("an encrypting store keeps items encrypted, and they read back the same", async () => {
    const { store: plain, done } = await freshStore(sqliteBackend);
    await plain.close();
    const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };
    const url = plain.url;
    const store = await openStore(url, { codec: encryptedSessionCodec({ keyring, store: "agents" }) });
    const session = new StatebagSession({ store, sessionId: "secret", owner: "alice" });
    await session.addItems(sampleItems);
    const page = await store.scan({ includeText: true });
    expect(page.items[0]!.text).not.toContain("Paris");
    expect(await session.getItems()).toEqual(sampleItems);
    await store.close();
    await done().catch(() => undefined);
  });

  it("a strict store refuses the verbatim items until registerOpenAIAgentsTypes registers them", async () => {
    const strict = await openStore("memory:", { codec: defaultSessionCodec({ strict: true }) });
    const refused = new StatebagSession({ store: strict, sessionId: "s" });
    await expect(refused.addItems([sampleItems[3]!])).rejects.toMatchObject({ code: "session-invalid" });
    await strict.close();

    const registry = TypeRegistry.compose(defaultRegistry());
    registerOpenAIAgentsTypes(registry);
    const store = await openStore("memory:", { codec: defaultSessionCodec({ strict: true, registry }) });
    const session = new StatebagSession({ store, sessionId: "s" });
    await session.addItems(sampleItems);
    await session.saveRunState("{}");
    expect(await session.getItems()).toEqual(sampleItems);
    await store.close();
  });

  it("writers racing on one session through separate objects lose no item (conflicts are retried)", async () => {
    for (const backend of allBackends.filter((b) => b.durable)) {
      const { store, url, done } = await freshStore(backend);
      const others = await Promise.all([openStore(url), openStore(url)]);
      try {
        const writers = [store, ...others].map((s) => new StatebagSession({ store: s, sessionId: "race" }));
        await Promise.all(
          writers.flatMap((w, i) => Array.from({ length: 5 }, (_, j) => w.addItems([userItem(`${i}-${j}`)]))),
        );
        const texts = (await writers[0]!.getItems()).map((i) => i.content).sort();
        expect(texts, backend.name).toEqual([0, 1, 2].flatMap((i) => [0, 1, 2, 3, 4].map((j) => `${i}-${j}`)).sort());
      } finally {
        for (const o of others) await o.close();
        await done();
      }
    }
  }, 60_000);

  it("a change never acts on a stale copy: pop and clear see what another object wrote since", async () => {
    const store = await openStore("memory:");
    const a = new StatebagSession({ store, sessionId: "shared" });
    const b = new StatebagSession({ store, sessionId: "shared" });
    await a.addItems([userItem("1")]);
    await b.addItems([userItem("2")]);
    expect(await a.popItem()).toEqual(userItem("2"));
    await a.clearSession();
    await b.addItems([userItem("3")]);
    await a.clearSession(); // a's own copy says "already empty": it must not be believed
    expect(await b.getItems()).toEqual([]);
    await b.saveRunState("{}");
    expect(await a.clearRunState()).toBe(true);
    expect(await b.getRunStateString()).toBeUndefined();
    await store.close();
  });

  it("is a statebag chat session both ways: a statebag agent continues it, and the SDK session reads the agent's turn", async () => {
    const store = await openStore("memory:");
    const session = new StatebagSession({ store, sessionId: "both" });
    await session.addItems([userItem("hi"), sampleItems[10]!]);
    const agent = new ChatClientAgent({
      name: "statebag",
      client: new ScriptedChatClient({ rules: [{ when: "weather", reply: "Still sunny." }], usage: false }),
    });
    const stored = await store.get("both");
    const sb = stored!.session;
    const reply = await agent.run("and the weather now?", sb);
    expect(reply.text).toBe("Still sunny.");
    await store.save(sb, { expectedRevision: stored!.revision });
    const items = await session.getItems();
    expect(items.slice(0, 2)).toEqual([userItem("hi"), sampleItems[10]]);
    expect(items.slice(2)).toMatchObject([
      { type: "message", role: "user", content: "and the weather now?" },
      {
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Still sunny." }],
      },
    ]);
    await store.close();
  });

  it("reads a session stored with an older history version (migrated on load) and writes it at the current one", async () => {
    const store = await openStore("memory:");
    const legacy = {
      id: "old",
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 1,
          messages: [{ role: "user", contents: [{ $type: "text", text: "from v1" }] }],
        },
      },
    };
    await store.save(legacy as never, { expectedRevision: null });
    const session = new StatebagSession({ store, sessionId: "old" });
    expect(await session.getItems()).toEqual([{ type: "message", role: "user", content: "from v1" }]);
    await session.addItems([userItem("now")]);
    const history = (await store.get("old"))!.session.stateBag["statebag.chatHistory"]!;
    expect(history).toMatchObject({ $version: 3, droppedMessageCount: 0, branches: [] });
    await store.close();
  });

  it("refuses construction without a store, with a hint", () => {
    expect(() => new StatebagSession(undefined as never)).toThrow(/needs \{ store \}/);
  });
});
