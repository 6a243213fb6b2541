/**
 * What the statebag saver adds to LangGraph's contract, and its failure paths: no lost update when
 * writers race on one thread, messages kept as statebag chat messages (and everything else exactly),
 * encryption at rest through the store's codec, owners that never change, typed errors for bad
 * configs and for an id taken by another session.
 */
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { afterEach, describe, expect, it } from "vitest";
import {
  createStatebagSaver,
  LANGGRAPH_STATE_KEY,
  NotALangGraphThreadError,
  registerLangGraphTypes,
} from "../../src/langgraph.js";
import { createSessionData } from "../../src/runtime/core/session.js";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { SessionOwnerError } from "../../src/runtime/stores/errors.js";
import { encryptionCodecs, openStore } from "../../src/stores.js";
import { allBackends, freshStore, memoryBackend, sqliteBackend } from "../stores/helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanups.splice(0)) await done();
});

async function fresh(backend = memoryBackend, options?: Parameters<typeof openStore>[1]) {
  const f = await freshStore(backend, options);
  cleanups.push(f.done);
  return f;
}

const meta = { source: "loop" as const, step: 0, parents: {} };

function checkpointWith(values: Record<string, unknown>) {
  const c = emptyCheckpoint();
  c.id = uuid6(-1);
  c.channel_values = values;
  c.channel_versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return c;
}

describe.each(allBackends.filter((b) => b.name !== "sqlite-better"))("the saver on $name", (backend) => {
  it("loses no write when many tasks and two processes write to one checkpoint at once", async () => {
    const { store, url } = await fresh(backend);
    const other = backend.name === "memory" ? store : await openStore(url);
    if (other !== store) cleanups.unshift(() => other.close());
    const [a, b] = [await createStatebagSaver(store), await createStatebagSaver(other)];
    const config = await a.put({ configurable: { thread_id: "t" } }, checkpointWith({}), meta, {});
    await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        (i % 2 ? a : b).putWrites(config, [["ch", i]], `task-${String(i).padStart(2, "0")}`),
      ),
    );
    const tuple = await a.getTuple(config);
    expect(tuple?.pendingWrites?.map(([task, , value]) => [task, value])).toEqual(
      Array.from({ length: 16 }, (_, i) => [`task-${String(i).padStart(2, "0")}`, i]),
    );
  });

  it("gives a new thread its run's owner when a step's writes are sent beside its first checkpoint", async () => {
    // LangGraph sends the input checkpoint's put and its writes without awaiting one another; a
    // write that reached the store first used to create the thread with no owner, and the put was
    // then refused (a session never changes owner).
    const { store } = await fresh(backend);
    const saver = await createStatebagSaver(store);
    const checkpoint = checkpointWith({ messages: [] });
    const config = { configurable: { thread_id: "race" }, metadata: { owner: "ada" } };
    const written = {
      ...config,
      configurable: { ...config.configurable, checkpoint_ns: "", checkpoint_id: checkpoint.id },
    };
    await Promise.all([
      saver.put(config, checkpoint, meta, { messages: 1 }),
      saver.putWrites(written, [["messages", ["hi"]]], "task-1"),
    ]);
    expect((await store.list({ owner: "ada" })).items.map((i) => i.id)).toEqual(["langgraph:race"]);
    const tuple = await saver.getTuple(written);
    expect(tuple?.checkpoint.id).toBe(checkpoint.id);
    expect(tuple?.pendingWrites).toEqual([["task-1", "messages", ["hi"]]]);

    // The writes alone (the put still to come) create the thread under the config's owner too.
    const alone = { configurable: { thread_id: "writes-first", checkpoint_ns: "", checkpoint_id: checkpoint.id } };
    await saver.putWrites({ ...alone, metadata: { owner: "ada" } }, [["messages", ["x"]]], "task-1");
    await saver.put({ ...alone, metadata: { owner: "ada" } }, checkpointWith({}), meta, {});
    expect((await store.list({ owner: "ada", order: "id" })).items.map((i) => i.id)).toEqual([
      "langgraph:race",
      "langgraph:writes-first",
    ]);
    // A write naming another owner than the thread's is refused, and writes nothing.
    const before = await store.get("langgraph:writes-first");
    await expect(
      saver.putWrites({ ...alone, metadata: { owner: "bob" } }, [["messages", ["y"]]], "task-2"),
    ).rejects.toBeInstanceOf(SessionOwnerError);
    expect((await store.get("langgraph:writes-first"))?.revision).toBe(before?.revision);
  });

  it("applies one saver's calls on a thread in the order they were made", async () => {
    const { store } = await fresh(backend);
    const saver = await createStatebagSaver(store);
    const first = checkpointWith({ n: 1 });
    const config = { configurable: { thread_id: "ordered" } };
    const at = { configurable: { thread_id: "ordered", checkpoint_ns: "", checkpoint_id: first.id } };
    // Not awaited in between: the put (its owner named only in the checkpoint's metadata, which the
    // writes do not carry) comes first, then sixteen writes; none creates the thread before the put.
    const calls: Promise<unknown>[] = [saver.put(config, first, { ...meta, owner: "ada" } as typeof meta, { n: 1 })];
    for (let i = 0; i < 16; i++) calls.push(saver.putWrites(at, [[`ch${i}`, i]], `task-${String(i).padStart(2, "0")}`));
    await Promise.all(calls);
    const tuple = await saver.getTuple(at);
    expect(tuple?.pendingWrites?.map(([task]) => task)).toEqual(
      Array.from({ length: 16 }, (_, i) => `task-${String(i).padStart(2, "0")}`),
    );
    expect((await store.list({ owner: "ada" })).items.map((i) => i.id)).toEqual(["langgraph:ordered"]);
    // A refused call does not stop the ones after it.
    const bad = saver.putWrites(at, [["x", 1]], 42 as unknown as string);
    const after = saver.putWrites(at, [["late", 1]], "task-late");
    await expect(bad).rejects.toBeInstanceOf(ConfigurationError);
    await after;
    expect((await saver.getTuple(at))?.pendingWrites?.at(-1)?.[0]).toBe("task-late");
  });
});

describe("what a thread's session holds", () => {
  it("keeps LangChain messages as statebag chat messages and gives them back as the same messages", async () => {
    const { store } = await fresh();
    const saver = await createStatebagSaver(store);
    const messages = [
      new HumanMessage({ content: "weather in Paris?", id: "h1" }),
      new AIMessage({
        content: "",
        id: "a1",
        tool_calls: [{ id: "call-1", name: "weather", args: { city: "Paris" } }],
        response_metadata: { model: "stub" },
        usage_metadata: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
      }),
      new ToolMessage({ content: "sunny", tool_call_id: "call-1", id: "t1" }),
      new AIMessage({ content: "It is sunny.", id: "a2", name: "forecaster" }),
    ];
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpointWith({ messages }), meta, {
      messages: 1,
    });
    const stored = await store.get("langgraph:t");
    const blob = (
      stored!.session.stateBag[LANGGRAPH_STATE_KEY] as unknown as {
        namespaces: { blobs: { value: { messages: unknown[] } }[] }[];
      }
    ).namespaces[0].blobs[0].value.messages;
    expect(blob.map((m) => (m as { role: string }).role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(blob[1]).toMatchObject({
      contents: [
        { $type: "text", text: "" },
        { $type: "functionCall", callId: "call-1", name: "weather", arguments: { city: "Paris" } },
      ],
      messageId: "a1",
    });
    expect(blob[2]).toMatchObject({ contents: [{ $type: "functionResult", callId: "call-1", result: "sunny" }] });
    expect(blob[3]).toMatchObject({ authorName: "forecaster", contents: [{ $type: "text", text: "It is sunny." }] });

    const back = (await saver.getTuple(config))?.checkpoint.channel_values.messages as typeof messages;
    expect(back.map((m) => m.constructor.name)).toEqual(["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]);
    expect(back.map((m) => m.toDict())).toEqual(messages.map((m) => m.toDict()));
  });

  it("keeps values with no chat-message form exactly, through the serializer", async () => {
    const { store } = await fresh();
    const saver = await createStatebagSaver(store);
    const values = {
      // Content blocks (an image) have no lossless statebag mapping here: the channel stays as serialized.
      messages: [
        new HumanMessage({ content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA==" } }] }),
      ],
      when: new Date("2026-01-02T03:04:05.000Z"),
      bytes: new Uint8Array([0, 255, 7]),
      nested: { a: [1, "two", null, { b: true }], __proto__x: 1 },
    };
    const config = await saver.put({ configurable: { thread_id: "t" } }, checkpointWith(values), meta, {
      messages: 1,
      when: 1,
      bytes: 1,
      nested: 1,
    });
    const back = (await saver.getTuple(config))?.checkpoint.channel_values as Record<string, unknown>;
    // Exactly what the serializer alone gives back (JsonPlusSerializer revives a Date as its ISO text).
    for (const [channel, value] of Object.entries(values)) {
      const [type, bytes] = await saver.serde.dumpsTyped(value);
      expect(back[channel], channel).toEqual(await saver.serde.loadsTyped(type, bytes));
    }
    expect((back.messages as HumanMessage[])[0]).toBeInstanceOf(HumanMessage);
    expect(Array.from(back.bytes as Uint8Array)).toEqual([0, 255, 7]);
    expect(back.nested).toEqual(values.nested);
  });

  it("is encrypted at rest when the store encrypts: no message text in the stored body", async () => {
    const { store } = await fresh(
      sqliteBackend,
      encryptionCodecs({ keyring: { current: "k1", keys: { k1: Buffer.alloc(32, 7) } }, store: "app" }),
    );
    const saver = await createStatebagSaver(store);
    const config = await saver.put(
      { configurable: { thread_id: "t" }, metadata: { owner: "ada" } },
      checkpointWith({ messages: [new HumanMessage("my card is 4111 1111")] }),
      meta,
      { messages: 1 },
    );
    const page = await store.scan({ includeText: true });
    expect(page.items).toHaveLength(1);
    expect(page.items[0].text).not.toContain("4111");
    expect(page.items[0].text).not.toContain("HumanMessage");
    const back = (await saver.getTuple(config))?.checkpoint.channel_values.messages as HumanMessage[];
    expect(back[0].content).toBe("my card is 4111 1111");
  });

  it("never moves a thread to another owner: the put is refused and nothing is written", async () => {
    const { store } = await fresh();
    const saver = await createStatebagSaver(store);
    await saver.put({ configurable: { thread_id: "t" }, metadata: { owner: "ada" } }, checkpointWith({}), meta, {});
    const before = await store.get("langgraph:t");
    const error = await saver
      .put({ configurable: { thread_id: "t" }, metadata: { owner: "bob" } }, checkpointWith({}), meta, {})
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionOwnerError);
    expect((await store.get("langgraph:t"))?.revision).toBe(before?.revision);
    const all = [];
    for await (const t of saver.list({ configurable: { thread_id: "t" } })) all.push(t);
    expect(all).toHaveLength(1);
  });

  it("refuses a config without a thread id, and a non-string owner, with typed errors", async () => {
    const { store } = await fresh();
    const saver = await createStatebagSaver(store);
    await expect(saver.put({ configurable: {} }, checkpointWith({}), meta, {})).rejects.toThrow(ConfigurationError);
    await expect(saver.put({ configurable: {} }, checkpointWith({}), meta, {})).rejects.toThrow(/thread_id/);
    await expect(
      saver.put({ configurable: { thread_id: "t" }, metadata: { owner: 42 } }, checkpointWith({}), meta, {}),
    ).rejects.toThrow(/owner/);
    await expect(saver.putWrites({ configurable: { thread_id: "t" } }, [["a", 1]], "task")).rejects.toThrow(
      /checkpoint_id/,
    );
    expect(await store.get("langgraph:t")).toBeUndefined();
  });

  it("refuses to read or overwrite a session of the same id that is not a thread", async () => {
    const { store } = await fresh();
    await store.save(createSessionData({ id: "langgraph:t" }), { expectedRevision: null });
    const saver = await createStatebagSaver(store);
    await expect(saver.getTuple({ configurable: { thread_id: "t" } })).rejects.toThrow(NotALangGraphThreadError);
    await expect(saver.put({ configurable: { thread_id: "t" } }, checkpointWith({}), meta, {})).rejects.toThrow(
      expect.objectContaining({ hint: expect.stringMatching(/idPrefix/) }),
    );
    expect((await store.get("langgraph:t"))?.session.stateBag).toEqual({});
    // Another prefix keeps the threads apart from the app's own sessions.
    const apart = await createStatebagSaver(store, { idPrefix: "lg/" });
    await apart.put({ configurable: { thread_id: "t" } }, checkpointWith({}), meta, {});
    expect(await apart.getTuple({ configurable: { thread_id: "t" } })).toBeDefined();
  });

  it("deleteThread removes the thread's session and nothing else", async () => {
    const { store } = await fresh();
    const saver = await createStatebagSaver(store);
    await saver.put({ configurable: { thread_id: "a" } }, checkpointWith({}), meta, {});
    await saver.put({ configurable: { thread_id: "b" } }, checkpointWith({}), meta, {});
    await saver.deleteThread("a");
    expect(await store.get("langgraph:a")).toBeUndefined();
    expect(await store.get("langgraph:b")).toBeDefined();
  });
});

describe("a strict store", () => {
  it("refuses threads until registerLangGraphTypes registers them, then validates their chat messages", async () => {
    const { defaultSessionCodec } = await import("../../src/stores.js");
    const { TypeRegistry, defaultRegistry } = await import("../../src/index.js");
    const strict = await openStore("memory:", { codec: defaultSessionCodec({ strict: true }) });
    cleanups.push(() => strict.close());
    const refused = await createStatebagSaver(strict);
    await expect(refused.put({ configurable: { thread_id: "t" } }, checkpointWith({}), meta, {})).rejects.toMatchObject(
      { code: "session-invalid" },
    );

    const registry = TypeRegistry.compose(defaultRegistry());
    registerLangGraphTypes(registry);
    const store = await openStore("memory:", { codec: defaultSessionCodec({ strict: true, registry }) });
    cleanups.push(() => store.close());
    const saver = await createStatebagSaver(store);
    const config = await saver.put(
      { configurable: { thread_id: "t" } },
      checkpointWith({ messages: [new HumanMessage("hi")] }),
      meta,
      { messages: 1 },
    );
    expect(((await saver.getTuple(config))!.checkpoint.channel_values.messages as HumanMessage[])[0].content).toBe(
      "hi",
    );

    // A message content that is not a valid AIContent is caught by the registered slots.
    const stored = await store.get("langgraph:t");
    const thread = stored!.session.stateBag[LANGGRAPH_STATE_KEY] as unknown as {
      namespaces: { blobs: { value: { messages: { contents: unknown[] }[] } }[] }[];
    };
    thread.namespaces[0].blobs[0].value.messages[0].contents[0] = { $type: "text", text: 42 };
    await expect(store.save(stored!.session, { expectedRevision: stored!.revision })).rejects.toMatchObject({
      code: "session-invalid",
    });
  });
});
