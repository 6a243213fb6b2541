/**
 * The default session codec recognizes a row it wrote when it reads it back unchanged (and then
 * does not check it again); everything else is checked in full. These tests hold it to what a user
 * relies on: a read gives exactly what a full load gives, a row changed in the database (by hand,
 * by another process, by an older version) is checked and refused or migrated as before, the
 * session handed out is the caller's own, and the memory it keeps is bounded in size and age.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { DEFAULT_WRITTEN_CACHE, WrittenTexts } from "../../src/runtime/stores/written-texts.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { counterSession } from "./helpers.js";

const HISTORY = "statebag.chatHistory";

/** A session of statebag's own types, as an agent leaves it after `turns` turns. */
async function chatSession(id: string, turns = 3): Promise<AgentSession> {
  const agent = new ChatClientAgent({
    client: new ScriptedChatClient({ rules: [{ when: /.*/, reply: "Sunny, 21 degrees." }] }),
  });
  const session = agent.createSession({ id });
  for (let i = 0; i < turns; i++) await agent.run(`What is the weather like in city ${i}?`, session);
  return session;
}

function messagesOf(session: AgentSession): { contents: { $type: string; text?: string }[] }[] {
  return (session.stateBag[HISTORY] as unknown as { messages: { contents: { $type: string; text?: string }[] }[] })
    .messages;
}

describe("WrittenTexts", () => {
  afterEach(() => vi.useRealTimers());

  it("holds the text last written for a key, and only that text", () => {
    const texts = new WrittenTexts();
    texts.remember("a", '{"x":1}');
    expect(texts.holds("a", '{"x":1}')).toBe(true);
    expect(texts.holds("a", '{"x":2}')).toBe(false);
    expect(texts.holds("b", '{"x":1}')).toBe(false);
    texts.remember("a", '{"x":2}');
    expect(texts.holds("a", '{"x":1}')).toBe(false);
    expect(texts.holds("a", '{"x":2}')).toBe(true);
    texts.forget("a");
    expect(texts.holds("a", '{"x":2}')).toBe(false);
    expect(texts.size).toBe(0);
  });

  it("keeps at most maxChars, dropping the least recently written first", () => {
    const texts = new WrittenTexts({ maxChars: 100 });
    const text = (c: string) => c.repeat(20);
    for (const key of ["a", "b", "c", "d", "e"]) texts.remember(key, text(key));
    expect(texts.size).toBe(100);
    texts.remember("a", text("A")); // written again: now the newest
    texts.remember("f", text("f"));
    expect(texts.size).toBe(100);
    expect(texts.holds("b", text("b"))).toBe(false);
    for (const key of ["c", "d", "e", "f"]) expect(texts.holds(key, text(key))).toBe(true);
    expect(texts.holds("a", text("A"))).toBe(true);
    // A text over a quarter of the budget is not kept (it would push the others out), and what
    // was held for its key is dropped.
    texts.remember("d", "x".repeat(26));
    expect(texts.holds("d", "x".repeat(26))).toBe(false);
    expect(texts.holds("d", text("d"))).toBe(false);
  });

  it("drops an entry older than maxAgeMs", () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const texts = new WrittenTexts({ maxAgeMs: 1000 });
    texts.remember("a", "first");
    vi.setSystemTime(1_000_900);
    texts.remember("b", "second");
    expect(texts.holds("a", "first")).toBe(true);
    vi.setSystemTime(1_001_001);
    expect(texts.holds("a", "first")).toBe(false);
    expect(texts.size).toBe("second".length);
    // Writing drops expired entries too, not only reading them.
    vi.setSystemTime(1_002_000);
    texts.remember("c", "third");
    expect(texts.size).toBe("third".length);
    expect(texts.holds("b", "second")).toBe(false);
  });

  it("refuses bounds that are not numbers >= 0, saying how to fix them", () => {
    expect(() => new WrittenTexts({ maxChars: -1 })).toThrow(/writtenCache\.maxChars must be a finite number >= 0/);
    expect(() => new WrittenTexts({ maxAgeMs: Number.NaN })).toThrow(
      expect.objectContaining({ code: "configuration", hint: expect.stringContaining("writtenCache: false") }),
    );
    expect(() => defaultSessionCodec({ writtenCache: { maxChars: "big" as never } })).toThrow(/got string/);
    expect(new WrittenTexts().size).toBe(0);
    expect(DEFAULT_WRITTEN_CACHE.maxChars).toBeGreaterThan(0);
  });

  it("with a zero budget or age keeps nothing", () => {
    for (const options of [{ maxChars: 0 }, { maxAgeMs: 0 }]) {
      const texts = new WrittenTexts(options);
      texts.remember("a", "text");
      expect(texts.holds("a", "text")).toBe(false);
      expect(texts.size).toBe(0);
    }
  });
});

describe("the default codec reading back what it wrote", () => {
  it("gives what a full load gives, as the caller's own objects", async () => {
    const session = await chatSession("chat-1");
    for (const codec of [defaultSessionCodec(), defaultSessionCodec({ writtenCache: false })]) {
      const text = codec.serialize(session);
      expect(text).toBe(serializeSession(session, { validate: true }));
      const first = codec.deserialize(text, "chat-1");
      expect(first).toEqual(deserializeSession(text));
      expect(first).toEqual(JSON.parse(JSON.stringify(session)));
      // Changing what a read handed out changes nothing the next read sees.
      messagesOf(first)[0].contents[0].text = "changed";
      messagesOf(first).push(messagesOf(first)[0]);
      const second = codec.deserialize(text, "chat-1");
      expect(second).toEqual(deserializeSession(text));
      expect(second).not.toBe(first);
    }
  });

  it("checks a changed text in full: an invalid value is refused, an older version migrated", async () => {
    const codec = defaultSessionCodec();
    const session = await chatSession("chat-2");
    const text = codec.serialize(session);
    // The same row with a value its schema refuses (a message's role a number).
    const bad = JSON.parse(text);
    bad.session.stateBag[HISTORY].messages[1].role = 42;
    expect(() => codec.deserialize(JSON.stringify(bad), "chat-2")).toThrow(/cannot load session/);
    // The same row with a duplicate key JSON.parse would hide: refused, though the parse equals the written value.
    const duplicated = text.replace('"id":"chat-2"', '"id":"other","id":"chat-2"');
    expect(duplicated).not.toBe(text);
    expect(() => codec.deserialize(duplicated, "chat-2")).toThrow(/"id" twice/);
    // The text written for another key is checked as any text (and loads: it is valid).
    expect(codec.deserialize(text, "someone-else")).toEqual(deserializeSession(text));
    // And the written text itself still reads back.
    expect(codec.deserialize(text, "chat-2")).toEqual(deserializeSession(text));
  });

  it("migrates a row an older version wrote over what this codec wrote, as a full load does", async () => {
    const codec = defaultSessionCodec();
    const session = await chatSession("chat-old");
    const text = codec.serialize(session);
    // The same chat as a version 1 history (no droppedMessageCount, no branches), written by an older release.
    const old = JSON.parse(text);
    const history = old.session.stateBag[HISTORY];
    old.session.stateBag[HISTORY] = { $type: history.$type, $version: 1, messages: history.messages };
    const migrated = codec.deserialize(JSON.stringify(old), "chat-old");
    expect(migrated.stateBag[HISTORY]).toMatchObject({
      $version: 3,
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    });
    expect(migrated).toEqual(deserializeSession(text));
  });

  it("a session written at an older version reads back migrated: only a current text is taken as written", async () => {
    const codec = defaultSessionCodec();
    const session = await chatSession("chat-v1");
    const history = session.stateBag[HISTORY] as unknown as { $type: string; messages: unknown[] };
    // An application still holding a version 1 history (valid at its version) saves it.
    session.stateBag[HISTORY] = { $type: history.$type, $version: 1, messages: history.messages } as never;
    const text = codec.serialize(session);
    expect(text).toContain('"$version":1');
    const read = codec.deserialize(text, "chat-v1");
    expect(read.stateBag[HISTORY]).toMatchObject({ $version: 3, branches: [], branchPoints: [] });
    expect(read).toEqual(deserializeSession(text));
  });

  it("sessions holding types the fused check does not know read back as a full load reads them", () => {
    const codec = defaultSessionCodec();
    const text = codec.serialize(counterSession("counted", 3));
    expect(codec.deserialize(text, "counted")).toEqual(deserializeSession(text));
    const changed = text.replace('"value":3', '"value":4');
    expect(codec.deserialize(changed, "counted")).toEqual(deserializeSession(changed));
  });
});

describe("a SQLite store whose rows are changed beside it", () => {
  let dir: string | undefined;
  let store: SessionStore | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    store = dir = undefined;
  });

  it("reads the row as it is now, never as this process last wrote it", async () => {
    dir = mkdtempSync(join(tmpdir(), "statebag-written-"));
    const path = join(dir, "chats.db");
    store = await openStore(`sqlite:${path}`);
    const session = await chatSession("chat-3");
    const revision = await store.save(session, { expectedRevision: null });
    expect((await store.get("chat-3"))!.session).toEqual(JSON.parse(JSON.stringify(session)));

    const raw = new DatabaseSync(path);
    try {
      const text = (raw.prepare("SELECT data FROM statebag_sessions WHERE id = ?").get("chat-3") as { data: string })
        .data;
      const set = raw.prepare("UPDATE statebag_sessions SET data = ? WHERE id = ?");
      // Another program changed a message: the store reads the change, checked.
      const edited = JSON.parse(text);
      edited.session.stateBag[HISTORY].messages[0].contents[0].text = "edited elsewhere";
      set.run(JSON.stringify(edited), "chat-3");
      const loaded = (await store.get("chat-3"))!.session;
      expect(messagesOf(loaded)[0].contents[0].text).toBe("edited elsewhere");
      // ... and made it invalid: refused, naming where.
      edited.session.stateBag[HISTORY].messages[0].contents[0].text = 7;
      set.run(JSON.stringify(edited), "chat-3");
      await expect(store.get("chat-3")).rejects.toThrow(/contents\/0\/text/);
      // Put back as this process wrote it: read again.
      set.run(text, "chat-3");
      expect((await store.get("chat-3"))!.session).toEqual(JSON.parse(JSON.stringify(session)));
      // A save after that goes on from the revision stored.
      expect(await store.save(session, { expectedRevision: revision })).toBe(revision + 1);
    } finally {
      raw.close();
    }
  });
});
