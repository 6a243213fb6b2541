/**
 * One app with every feature on at once, as docs/production.md's "A chat server with everything
 * on" describes it: an encrypted store (sessions and message logs) with a retention policy and
 * tracing, a chat handler whose chats are owned by the request's user, and for one of the users a
 * LangGraph thread and an OpenAI Agents session in the same store. Each feature is tested elsewhere
 * on its own; here they run together, because each one touches the others' rows (encryption seals
 * the owner that listing, retention and erasure match on; erasure must find the adapters'
 * sessions as well as the chats; traces must stay clear of what encryption hides). A chat carries a
 * file (a blob beside the session, sealed at rest, served to its owner only, erased with them) and
 * one is regenerated and forked (the branches survive a migration; the fork is listed, traced and
 * erased like any chat).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { HumanMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStudio } from "../../src/cli/commands/studio.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { createChatHandler, type ChatHandler } from "../../src/runtime/http/handler.js";
import { createStatebagSaver, registerLangGraphTypes } from "../../src/langgraph.js";
import { registerOpenAIAgentsTypes, StatebagSession } from "../../src/openai-agents.js";
import { defaultRegistry } from "../../src/index.js";
import {
  defaultSessionCodec,
  encryptedMessageCodec,
  encryptedSessionCodec,
  migrateStore,
  openStore,
  type ScanItem,
  type SessionCodec,
  type SessionStore,
} from "../../src/stores.js";
import { seedProject, studioContext } from "../studio/seed.js";
import { readReply, userTurn } from "../http/setup.js";
import { PG_URL, postgresBackend, serverUp } from "../stores/helpers.js";

const DAY = 86_400_000;
const KEY = Buffer.alloc(32, 11);
const keyring = { current: "k1", keys: { k1: KEY } };
// Distinctive strings: none of them may show in a span or a stored row.
const ADA = "owner-ada-91f2";
const BOB = "owner-bob-47c8";
const ADA_TEXTS = ["PLAIN-ada-first Lisbon question", "PLAIN-ada-second about trains"];
const BOB_TEXT = "PLAIN-bob-only about Porto";
const THREAD_TEXT = "PLAIN-thread card 4111";
const AGENTS_TEXT = "PLAIN-agents hello";
const OLD_TEXT = "PLAIN-old stale chat";
const FILE_TEXT = "PLAIN-file-bytes of Ada's notes. ".repeat(300);
const FILE_HASH = createHash("sha256").update(FILE_TEXT).digest("hex");
const SECRETS = [ADA, BOB, ...ADA_TEXTS, BOB_TEXT, THREAD_TEXT, AGENTS_TEXT, OLD_TEXT, "PLAIN-"];

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

const registry = defaultRegistry();
registerLangGraphTypes(registry);
registerOpenAIAgentsTypes(registry);

let loc: Location;
let store: SessionStore;
let handler: ChatHandler;
/** Each chat's final assistant message, as the stream built it. */
const streamed = new Map<string, UIMessage>();

/**
 * The plaintext each load decrypted, by session id: `migrateStore`'s `readText` for an encrypted
 * store (the documented way from code: `store.get` through an inner codec that hands the text over).
 */
const decrypted = new Map<string, string>();
const plainCodec = defaultSessionCodec({ registry });
const capturing: SessionCodec = {
  serialize: (session, context) => plainCodec.serialize(session, context),
  deserialize(text, key, context) {
    if (key !== undefined) decrypted.set(key, text);
    return plainCodec.deserialize(text, key, context);
  },
};

function openApp(): Promise<SessionStore> {
  return openStore(loc.url, {
    codec: encryptedSessionCodec({ keyring, store: "one-app", inner: capturing }),
    messageCodec: encryptedMessageCodec({ keyring, store: "one-app" }),
    retention: {
      default: { maxAgeMs: 365 * DAY },
      labels: [{ match: { "statebag.type": "chat" }, maxIdleMs: 90 * DAY }],
    },
    tracing: { tracerProvider: provider },
  });
}

function request(method: string, path: string, owner: string, body?: unknown): Promise<Response> {
  return handler(
    new Request(`http://app.test/api${path}`, {
      method,
      headers: { "x-owner": owner, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    }),
  );
}

async function send(owner: string, chatId: string, text: string): Promise<void> {
  const { message, errors } = await readReply(await request("POST", "/chat", owner, userTurn(chatId, text)));
  expect(errors).toEqual([]);
  streamed.set(chatId, message);
}

/** The chat as a reload shows it (GET /chats/:id). */
async function chatOf(owner: string, chatId: string): Promise<UIMessage[]> {
  const response = await request("GET", `/chats/${chatId}`, owner);
  expect(response.status).toBe(200);
  return (await response.json()) as UIMessage[];
}

const branchOf = (message: UIMessage) =>
  (message.metadata as { branch?: { index: number; count: number; siblingIds: string[] } } | undefined)?.branch;

async function chatIds(owner: string): Promise<string[]> {
  const response = await request("GET", "/chats?limit=100", owner);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { chats: { id: string }[] };
  return body.chats.map((c) => c.id).sort();
}

/** The backend's rows read directly (not through the store): what an attacker with the database sees. */
interface Raw {
  /** Every row of every statebag table, as one string. */
  rows(): Promise<string>;
  count(table: string): Promise<number>;
  /** Stream buffers stored for a session id. */
  streamsOf(sessionId: string): Promise<number>;
  /** Moves a session's last save back by `ms` (instead of waiting). */
  backdate(sessionId: string, ms: number): Promise<void>;
}

interface Location {
  name: string;
  url: string;
  raw: Raw;
  cleanup(): Promise<void>;
  /** The studio's keyring file and project live here. */
  dir: string;
}

async function sqliteLocation(): Promise<Location> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-one-app-"));
  const file = join(dir, "app.db");
  // A connection of its own per read: the store's stays as the app uses it.
  const withDb = <T>(run: (db: DatabaseSync) => T, readOnly = true): T => {
    const db = new DatabaseSync(file, { readOnly });
    try {
      return run(db);
    } finally {
      db.close();
    }
  };
  return {
    name: "sqlite",
    url: `sqlite:${file}`,
    dir,
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    raw: {
      rows: async () =>
        withDb((db) => {
          const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
          return JSON.stringify(tables.map((t) => [t.name, db.prepare(`SELECT * FROM "${t.name}"`).all()]));
        }),
      count: async (table) =>
        withDb((db) => (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n),
      streamsOf: async (id) =>
        withDb(
          (db) =>
            (db.prepare("SELECT count(*) AS n FROM statebag_streams WHERE session_id = ?").get(id) as { n: number }).n,
        ),
      backdate: async (id, ms) =>
        withDb((db) => {
          db.prepare("UPDATE statebag_sessions SET updated_at = updated_at - ? WHERE id = ?").run(ms, id);
        }, false),
    },
  };
}

async function postgresLocation(): Promise<Location> {
  const { url, cleanup } = await postgresBackend().location();
  const schema = new URL(url).searchParams.get("schema")!;
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const dir = mkdtempSync(join(tmpdir(), "statebag-one-app-"));
  const q = async (sql: string, values: unknown[] = []) => (await client.query(sql, values)).rows;
  return {
    name: "postgres",
    url,
    dir,
    cleanup: async () => {
      await client.end();
      await cleanup();
      rmSync(dir, { recursive: true, force: true });
    },
    raw: {
      rows: async () => {
        const tables = await q("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema]);
        const all = [];
        for (const t of tables) all.push([t.table_name, await q(`SELECT * FROM "${schema}"."${t.table_name}"`)]);
        return JSON.stringify(all);
      },
      count: async (table) => Number((await q(`SELECT count(*) AS n FROM "${schema}"."${table}"`))[0].n),
      streamsOf: async (id) =>
        Number((await q(`SELECT count(*) AS n FROM "${schema}".statebag_streams WHERE session_id = $1`, [id]))[0].n),
      backdate: async (id, ms) => {
        await q(
          `UPDATE "${schema}".statebag_sessions SET updated_at = updated_at - make_interval(secs => $1::double precision / 1000) WHERE id = $2`,
          [ms, id],
        );
      },
    },
  };
}

const backends: { name: string; location: () => Promise<Location>; up: boolean }[] = [
  { name: "sqlite", location: sqliteLocation, up: true },
  { name: "postgres", location: postgresLocation, up: serverUp.postgres },
];

const checkpointMeta = { source: "loop" as const, step: 0, parents: {} };

describe.each(backends)("one app on an encrypted $name store", (backend) => {
  beforeAll(async () => {
    if (!backend.up) return;
    loc = await backend.location();
    exporter.reset();
    streamed.clear();
    store = await openApp();
    handler = createChatHandler({
      agent: new ChatClientAgent({
        client: new ScriptedChatClient({ usage: false, rules: [{ when: /.*/, reply: "PLAIN-reply noted." }] }),
        name: "one-app",
      }),
      store,
      owner: (r) => r.headers.get("x-owner") ?? "",
      disconnect: "continue",
    });
    await send(ADA, "ada-1", ADA_TEXTS[0]);
    await send(ADA, "ada-2", ADA_TEXTS[1]);
    await send(BOB, "bob-1", BOB_TEXT);
    await send(ADA, "ada-old", OLD_TEXT);

    // A file with a message: stored once as a blob, the chat keeps a reference.
    const withFile = userTurn("ada-file", ADA_TEXTS[1]);
    const fileMessage = (withFile.messages as { parts: unknown[] }[])[0];
    fileMessage.parts.push({
      type: "file",
      mediaType: "text/plain",
      filename: "notes.txt",
      url: `data:text/plain;base64,${Buffer.from(FILE_TEXT).toString("base64")}`,
    });
    const filed = await readReply(await request("POST", "/chat", ADA, withFile));
    expect(filed.errors).toEqual([]);

    // useChat's regenerate() on the first chat, then a fork of it up to its question.
    const regenerated = await readReply(
      await request("POST", "/chat", ADA, {
        id: "ada-1",
        trigger: "regenerate-message",
        messageId: streamed.get("ada-1")!.id,
        messages: [{ id: "m-ada-1", role: "user", parts: [{ type: "text", text: ADA_TEXTS[0] }] }],
      }),
    );
    expect(regenerated.errors).toEqual([]);
    const forked = await request("POST", "/chats/ada-1/fork", ADA, { messageId: "m-ada-1", id: "ada-1-fork" });
    expect(forked.status).toBe(201);

    const saver = await createStatebagSaver(store);
    const checkpoint = emptyCheckpoint();
    checkpoint.id = uuid6(-1);
    checkpoint.channel_values = { messages: [new HumanMessage(THREAD_TEXT)] };
    checkpoint.channel_versions = { messages: 1 };
    await saver.put(
      { configurable: { thread_id: "ada-thread" }, metadata: { owner: ADA } },
      checkpoint,
      checkpointMeta,
      {
        messages: 1,
      },
    );
    await new StatebagSession({ store, sessionId: "ada-agents", owner: ADA }).addItems([
      { type: "message", role: "user", content: AGENTS_TEXT },
    ]);
  }, 60_000);

  afterAll(async () => {
    if (!backend.up) return;
    await store?.close();
    await loc?.cleanup();
  });

  it.skipIf(!backend.up)("GET /api/chats lists each owner's chats and only theirs", async () => {
    expect(await chatIds(ADA)).toEqual(["ada-1", "ada-1-fork", "ada-2", "ada-file", "ada-old"]);
    expect(await chatIds(BOB)).toEqual(["bob-1"]);
  });

  it.skipIf(!backend.up)(
    "a regenerated answer keeps its sibling (‹ 1/2 ›) and the fork starts at its question",
    async () => {
      const chat = await chatOf(ADA, "ada-1");
      expect(chat.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(branchOf(chat[1])).toMatchObject({ index: 1, count: 2 });
      expect(branchOf(chat[1])!.siblingIds).toContain(streamed.get("ada-1")!.id);
      expect((await chatOf(ADA, "ada-1-fork")).map((m) => m.id)).toEqual(["m-ada-1"]);
      expect((await request("GET", "/chats/ada-1-fork", BOB)).status).toBe(404);
    },
  );

  it.skipIf(!backend.up)(
    "the file is a blob of its owner, served to them only, and the chat holds a reference",
    async () => {
      const stored = JSON.stringify((await store.get("ui-chat/ada-file"))!.session);
      expect(stored).toContain(FILE_HASH);
      expect(stored).not.toContain(Buffer.from(FILE_TEXT).toString("base64").slice(0, 64));
      const served = await request("GET", `/chat/ada-file/files/${FILE_HASH}`, ADA);
      expect(served.status).toBe(200);
      expect(await served.text()).toBe(FILE_TEXT);
      expect((await request("GET", `/chat/ada-file/files/${FILE_HASH}`, BOB)).status).toBe(404);
      expect(await store.blobs!.has(FILE_HASH, { owner: ADA })).toBe(true);
      expect(await store.blobs!.has(FILE_HASH, { owner: BOB })).toBe(false);
    },
  );

  it.skipIf(!backend.up)(
    "store.list({ owner }) returns the chats, the LangGraph thread and the agents session",
    async () => {
      const ids = (await store.list({ owner: ADA, limit: 100 })).items.map((i) => i.id).sort();
      expect(ids).toHaveLength(7);
      expect(ids.filter((id) => id.startsWith("ui-chat/"))).toEqual([
        "ui-chat/ada-1",
        "ui-chat/ada-1-fork",
        "ui-chat/ada-2",
        "ui-chat/ada-file",
        "ui-chat/ada-old",
      ]);
      expect(ids.some((id) => id.includes("ada-thread"))).toBe(true);
      expect(ids).toContain("ada-agents");
      expect((await store.list({ owner: BOB })).items.map((i) => i.id)).toEqual(["ui-chat/bob-1"]);
    },
  );

  it.skipIf(!backend.up)("traces the chat operations and no span carries an owner or any text", () => {
    const spans = exporter.getFinishedSpans();
    const operations = new Set(spans.map((s) => s.attributes["statebag.chat.operation"]).filter(Boolean));
    expect(operations).toContain("send");
    expect(operations).toContain("turn");
    expect(operations).toContain("list");
    expect(operations).toContain("fork");
    const exported = JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events, s.status]));
    for (const secret of [...SECRETS, FILE_HASH]) expect(exported, secret).not.toContain(secret);
  });

  it.skipIf(!backend.up)("keeps no owner, title or message text in plaintext in any stored row", async () => {
    const rows = await loc.raw.rows();
    // The rows are there (the check is not vacuous): chats, logs, streams.
    expect(await loc.raw.count("statebag_sessions")).toBe(8);
    expect(await loc.raw.count("statebag_stream_chunks")).toBeGreaterThan(0);
    expect(await loc.raw.count("statebag_blob_chunks")).toBeGreaterThan(0);
    expect(rows).not.toContain(FILE_HASH);
    for (const secret of SECRETS) expect(rows, secret).not.toContain(secret);
  });

  it.skipIf(!backend.up)(
    "the studio's API shows the owner's chat with its messages, decrypted with the keyring",
    async () => {
      const { dir, url } = loc;
      const keyFile = join(dir, "keyring.json");
      writeFileSync(keyFile, JSON.stringify({ current: "k1", keys: { k1: KEY.toString("base64") }, store: "one-app" }));
      seedProject(dir, url);
      const studio = await openStudio(studioContext(dir), {
        port: "0",
        host: "127.0.0.1",
        store: url,
        keyring: keyFile,
      });
      try {
        const page = await studio.api.sessions({ limit: 50, owner: ADA });
        expect(page.items.map((i) => i.id)).toContain("ui-chat/ada-1");
        expect(page.items.map((i) => i.id)).not.toContain("ui-chat/bob-1");
        const session = JSON.stringify(await studio.api.session("ui-chat/ada-1"));
        expect(session).toContain(ADA_TEXTS[0]);
        expect(session).toContain("PLAIN-reply noted.");
      } finally {
        await studio.closeAll();
      }
    },
  );

  it.skipIf(!backend.up)("migrateStore runs clean, dry run then real, and every session still loads", async () => {
    const before = (await store.scan({ limit: 100 })).items.map((i) => i.id).sort();
    const readText = async (item: ScanItem): Promise<ScanItem | undefined> => {
      decrypted.delete(item.id);
      const loaded = await store.get(item.id);
      const text = decrypted.get(item.id);
      return loaded && text !== undefined ? { ...item, text, revision: loaded.revision } : undefined;
    };
    const dry = await migrateStore(store, { registry, readText, dryRun: true });
    expect(dry.failed).toEqual([]);
    expect(dry).toMatchObject({ scanned: before.length, failedCount: 0, aborted: false });
    const real = await migrateStore(store, { registry, readText });
    expect(real).toMatchObject({ scanned: before.length, failedCount: 0, aborted: false });
    expect((await store.scan({ limit: 100 })).items.map((i) => i.id).sort()).toEqual(before);
    for (const id of before) expect(await store.get(id), id).toBeDefined();
    expect(await chatIds(ADA)).toEqual(["ada-1", "ada-1-fork", "ada-2", "ada-file", "ada-old"]);
    // The branches and the file reference come through the migration as they were.
    expect(branchOf((await chatOf(ADA, "ada-1"))[1])).toMatchObject({ index: 1, count: 2 });
    expect((await request("GET", `/chat/ada-file/files/${FILE_HASH}`, ADA)).status).toBe(200);
  });

  it.skipIf(!backend.up)("retention purges an idle chat with its stream buffer, and keeps the rest", async () => {
    const streamsBefore = await loc.raw.streamsOf("ui-chat/ada-old");
    expect(streamsBefore).toBeGreaterThan(0);
    // Backdate the chat's last save past the chat rule's 90 idle days (no waiting).
    await loc.raw.backdate("ui-chat/ada-old", 91 * DAY);
    expect(await store.purgeExpired()).toBe(1);
    expect(await store.get("ui-chat/ada-old")).toBeUndefined();
    expect(await loc.raw.streamsOf("ui-chat/ada-old")).toBe(0);
    expect(await chatIds(ADA)).toEqual(["ada-1", "ada-1-fork", "ada-2", "ada-file"]);
    expect((await request("GET", "/chats/ada-old", ADA)).status).toBe(404);
  });

  it.skipIf(!backend.up)(
    "eraseOwner removes the owner's chats, logs, streams, thread and agents session, with a true receipt",
    async () => {
      const owned = (await store.list({ owner: ADA, limit: 100 })).items.map((i) => i.id);
      expect(owned).toHaveLength(6);
      const logs = await loc.raw.count("statebag_message_logs");
      const streams = await loc.raw.count("statebag_streams");
      const sessions = await loc.raw.count("statebag_sessions");
      const receipt = await store.eraseOwner(ADA);
      expect(receipt.complete).toBe(true);
      expect(receipt.sessions).toBe(owned.length);
      expect(await loc.raw.count("statebag_sessions")).toBe(sessions - owned.length);
      expect(receipt.messageLogs).toBe(logs - (await loc.raw.count("statebag_message_logs")));
      expect(receipt.streams).toBe(streams - (await loc.raw.count("statebag_streams")));
      expect(receipt.streams).toBeGreaterThan(0);
      expect(receipt.blobs).toBe(1);
      expect(await store.blobs!.has(FILE_HASH, { owner: ADA })).toBe(false);
      expect((await request("GET", `/chat/ada-file/files/${FILE_HASH}`, ADA)).status).toBe(404);
      expect((await request("GET", "/chats/ada-1-fork", ADA)).status).toBe(404);
      for (const id of owned) expect(await store.get(id), id).toBeUndefined();
      expect((await store.list({ owner: ADA })).items).toEqual([]);
      expect(await chatIds(ADA)).toEqual([]);
      expect(await new StatebagSession({ store, sessionId: "ada-agents", owner: ADA }).getItems()).toEqual([]);
      const saver = await createStatebagSaver(store);
      expect(await saver.getTuple({ configurable: { thread_id: "ada-thread" } })).toBeUndefined();
      // The other owner's data is intact.
      expect(await chatIds(BOB)).toEqual(["bob-1"]);
      expect((await store.list({ owner: BOB })).items.map((i) => i.id)).toEqual(["ui-chat/bob-1"]);
    },
  );

  it.skipIf(!backend.up)("a reload of the other owner's chat shows its messages exactly as streamed", async () => {
    const response = await request("GET", "/chats/bob-1", BOB);
    expect(response.status).toBe(200);
    const messages = (await response.json()) as UIMessage[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(messages[0].parts).toEqual([{ type: "text", text: BOB_TEXT }]);
    expect(messages[1]).toEqual(streamed.get("bob-1"));
  });
});
