/**
 * The batched save of a bulk migration (src/runtime/stores/batch-save.ts): on SQLite and PostgreSQL
 * a page of migrated sessions is written in one transaction (SQLite: each row under its own
 * savepoint; PostgreSQL: a refused row changes nothing); on a standalone Redis, with a codec that
 * ignores its context, in one round trip (one MULTI ... EXEC of the sessions' save scripts).
 * - The batch save equals `save` one session at a time: the same results, the same errors, the
 *   same stored rows and revisions (failure paths included), plaintext and encrypted.
 * - A failure of the unit (not a refusal of one row) writes nothing of the batch, and
 *   `migrateStore` then saves the page one session at a time, with the report it would give.
 * - `migrateStore` on a batching store: a concurrent writer on one row of a batch, a row failing
 *   validation (on load, and on save) in the middle of a batch, an abort in the middle of a batch
 *   and the resumed run, an encrypted store (rows still bound to store, session, owner, revision;
 *   on Redis, where such a codec gets no batch, saved one at a time).
 * - Redis: a page of 100 sessions is one write of one transaction; a session whose script fails
 *   inside it fails alone; a unit whose EXEC never reaches the server writes nothing; the one
 *   ambiguous case (EXEC run, its reply lost) writes the page whole and says the outcome is unknown.
 */
import { DatabaseSync } from "node:sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { StatebagError } from "../../src/runtime/core/errors.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { deserializeSession } from "../../src/runtime/persistence/serialization.js";
import {
  SAVE_BATCH,
  type BatchSaveEntry,
  type BatchSaveResult,
  saveBatchOf,
} from "../../src/runtime/stores/batch-save.js";
import { encryptedSessionCodec } from "../../src/runtime/stores/encryption/codec.js";
import { StoreKeyConflictError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { usesContext } from "../../src/runtime/stores/listing.js";
import { migrateStore, type MigrateStoreReport } from "../../src/runtime/stores/migrate.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import type { ScanItem, SessionCodec, SessionStore } from "../../src/runtime/stores/types.js";
import {
  available,
  betterSqliteBackend,
  postgresBackend,
  REDIS_URL,
  redisBackend,
  sleep,
  sqliteBackend,
  TcpProxy,
  uniqueName,
  type Backend,
} from "../stores/helpers.js";
import { canonical, envelope, expectedV2, testCodec, testRegistry, v1Session } from "./helpers.js";
import { SeedingCodec, seededStore, type SeededStore } from "./store-helpers.js";

const registry = testRegistry();
const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };
/** The stores that save a batch in one unit of work (standalone Redis only: a transaction stays on one node). */
const batchingBackends = [sqliteBackend, betterSqliteBackend, postgresBackend(), redisBackend()].filter(available);
const redisUp = available(redisBackend());

/**
 * Whether the backend's store saves batches with this codec: Redis only with a codec that ignores
 * its context (one that uses it has the revision drawn first, a round trip per session).
 */
function batchesWith(backend: Backend, codec: SessionCodec): boolean {
  return backend.name !== "redis" || !usesContext(codec);
}

const open: { done(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.done();
});
async function seeded(backend: Backend): Promise<SeededStore> {
  // Redis batches only with a codec that ignores its context: the seeding codec is marked so there.
  const s = await seededStore(backend, { contextFree: backend.name === "redis" });
  open.push(s);
  return s;
}

/** Records every batch the store is asked to save (the number of sessions in each). */
function spyBatches(store: SessionStore): number[] {
  const sizes: number[] = [];
  const batch = saveBatchOf(store)!;
  expect(batch).toBeDefined();
  (store as unknown as Record<symbol, unknown>)[SAVE_BATCH] = (entries: readonly BatchSaveEntry[]) => {
    sizes.push(entries.length);
    return batch(entries);
  };
  return sizes;
}

/** What a result says, comparable across stores: the revision, or the error's class, code and message. */
function outcome(result: BatchSaveResult): unknown {
  if (result.ok) return { revision: result.revision };
  const error = result.error as Error & { code?: string };
  return { error: error.constructor.name, code: error.code, message: error.message };
}

/** Every row as `get` and `scan` see it (times left out: they differ between two stores). */
async function rows(store: SessionStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const item of (await store.scan({ limit: 1000, includeText: true })).items) {
    const loaded = await store.get(item.id);
    const { createdAt: _c, updatedAt: _u, ...meta } = loaded!.meta;
    out.push({
      id: item.id,
      revision: item.revision,
      hasTtl: item.ttlMs !== undefined,
      meta,
      session: canonical(loaded!.session),
    });
  }
  return out;
}

/** A session the codecs refuse: a history whose messages are not a list. */
function invalid(id: string): AgentSession {
  const session = expectedV2(id, 0);
  (session.stateBag["statebag.chatHistory"] as unknown as { messages: unknown }).messages = "not a list";
  return session;
}

const codecs: { name: string; codec: () => SessionCodec }[] = [
  { name: "plaintext (serialized before the lock)", codec: () => testCodec() },
  {
    name: "encrypted (serialized under the lock, bound to the revision)",
    codec: () => encryptedSessionCodec({ keyring, store: "batch", inner: testCodec() }),
  },
];

describe.each(batchingBackends)("the batch save on $name", (backend: Backend) => {
  it.each(codecs)("equals save one session at a time, refusals included: $name", async ({ codec }) => {
    const stores: SessionStore[] = [];
    const made: SessionCodec[] = [];
    for (let twin = 0; twin < 2; twin++) {
      const { url, cleanup } = await backend.location();
      made.push(codec());
      const store = await openStore(url, { codec: made[twin] });
      open.push({ done: async () => (await store.close(), await cleanup()) });
      for (let i = 0; i < 6; i++)
        await store.save(expectedV2(`s-${i}`, i), {
          expectedRevision: null,
          ...(i === 4 ? { meta: { owner: "ada" } } : {}),
        });
      stores.push(store);
    }
    const revisionOf = async (store: SessionStore, id: string) => (await store.get(id))!.revision;
    const entries = async (store: SessionStore): Promise<BatchSaveEntry[]> => [
      { session: expectedV2("s-0", 10), options: { expectedRevision: await revisionOf(store, "s-0") } },
      { session: expectedV2("s-1", 11), options: { expectedRevision: (await revisionOf(store, "s-1")) - 1 } },
      { session: expectedV2("n-1", 12), options: { expectedRevision: null, meta: { owner: "bob", title: "new" } } },
      { session: expectedV2("s-2", 13), options: { expectedRevision: null } },
      { session: invalid("s-3"), options: { expectedRevision: await revisionOf(store, "s-3") } },
      {
        session: expectedV2("s-4", 14),
        options: { expectedRevision: await revisionOf(store, "s-4"), meta: { owner: "bob" } },
      },
      {
        session: expectedV2("s-5", 15),
        options: {
          expectedRevision: await revisionOf(store, "s-5"),
          ttlMs: 3_600_000,
          meta: { title: "kept", labels: { kind: "batch" } },
        },
      },
      { session: expectedV2("s-4", 16), options: { expectedRevision: await revisionOf(store, "s-4") } },
    ];
    const [batched, single] = stores;
    if (!batchesWith(backend, made[0])) {
      // Redis with an encrypting codec: no batch offered (migrateStore saves one at a time; see
      // "an encrypted store" below).
      expect(saveBatchOf(batched)).toBeUndefined();
      return;
    }
    const batchResults = await saveBatchOf(batched)!(await entries(batched));
    const singleResults: BatchSaveResult[] = [];
    for (const entry of await entries(single)) {
      try {
        singleResults.push({ ok: true, revision: await single.save(entry.session, entry.options) });
      } catch (error) {
        singleResults.push({ ok: false, error });
      }
    }
    expect(batchResults.map(outcome)).toEqual(singleResults.map(outcome));
    // Saved, conflict, created, conflict, invalid, owner refused, saved with TTL and metadata, saved.
    expect(batchResults.map((r) => (r.ok ? "ok" : (r.error as StatebagError).code))).toEqual([
      "ok",
      "conflict",
      "ok",
      "conflict",
      expect.any(String),
      "configuration",
      "ok",
      "ok",
    ]);
    expect(await rows(batched)).toEqual(await rows(single));
  });

  // Redis offers no batch with a codec that uses its context; its unit failures are tested below.
  it.skipIf(backend.name === "redis")(
    "a failure of the unit (not a refusal of a row) writes nothing of the batch",
    async () => {
      const { url, cleanup } = await backend.location();
      // A codec that uses its context (it runs under the lock) and breaks on one session, as a driver would.
      const inner = testCodec();
      let broken = false;
      const breaking: SessionCodec = {
        serialize(session, context) {
          if (session.id === "u-2" && context?.revision !== undefined && broken) throw new TypeError("disk on fire");
          return inner.serialize(session);
        },
        deserialize: (text) => inner.deserialize(text),
      };
      const store = await openStore(url, { codec: breaking });
      open.push({ done: async () => (await store.close(), await cleanup()) });
      for (let i = 0; i < 4; i++) await store.save(expectedV2(`u-${i}`, i), { expectedRevision: null });
      const before = await rows(store);
      const entries: BatchSaveEntry[] = [];
      for (let i = 0; i < 4; i++)
        entries.push({
          session: expectedV2(`u-${i}`, 20 + i),
          options: { expectedRevision: (await store.get(`u-${i}`))!.revision },
        });
      broken = true;
      await expect(saveBatchOf(store)!(entries)).rejects.toThrow("disk on fire");
      expect(await rows(store)).toEqual(before);
    },
  );
});

describe.each(batchingBackends)("migrateStore saving in batches on $name", (backend: Backend) => {
  it("saves a page per batch; a failed unit falls back to one session at a time, with the same report", async () => {
    const s = await seeded(backend);
    for (let i = 0; i < 7; i++) await s.seed(v1Session(`p-${i}`, i));
    const batches = spyBatches(s.store);
    const report = await migrateStore(s.store, { registry, batchSize: 3 });
    expect(report).toMatchObject({ scanned: 7, migrated: 7, failedCount: 0, conflicts: 0 });
    expect(batches).toEqual([3, 3, 1]);

    // The same store, a unit that fails every time (nothing of it written): one session at a time.
    const t = await seeded(backend);
    for (let i = 0; i < 7; i++) await t.seed(v1Session(`p-${i}`, i));
    (t.store as unknown as Record<symbol, unknown>)[SAVE_BATCH] = async () => {
      throw new TypeError("the unit failed");
    };
    const fallback = await migrateStore(t.store, { registry, batchSize: 3 });
    expect({ ...fallback, durationMs: 0 }).toEqual({ ...report, durationMs: 0 });
    for (let i = 0; i < 7; i++)
      expect(canonical((await t.store.get(`p-${i}`))!.session)).toEqual(canonical(expectedV2(`p-${i}`, i)));
  });

  it("a session the application saves while its batch waits is re-read and migrated again; the others are saved in the batch", async () => {
    const s = await seeded(backend);
    for (let i = 0; i < 6; i++) await s.seed(v1Session(`c-${i}`, i));
    const batches = spyBatches(s.store);
    // The application writes c-1 (as old code would: v1) after the migration read it, before the batch is saved.
    const readText = async (item: ScanItem) => {
      if (item.id === "c-2") {
        const old = v1Session("c-1", 1);
        (old.stateBag.visits as unknown as { count: number }).count = 100;
        const current = (await s.store.get("c-1"))!.revision;
        s.codec.raw.set("c-1", envelope(old));
        try {
          await s.store.save({ id: "c-1", stateBag: {} }, { expectedRevision: current });
        } finally {
          s.codec.raw.delete("c-1");
        }
      }
      return item;
    };
    const progress: string[] = [];
    const report = await migrateStore(s.store, {
      registry,
      batchSize: 3,
      readText,
      onProgress: (_done, _total, p) => progress.push(p.cursor),
    });
    expect(report).toMatchObject({ scanned: 6, migrated: 6, conflicts: 1, failedCount: 0 });
    expect(batches).toEqual([3, 3]);
    expect(progress).toEqual(["c-0", "c-1", "c-2", "c-3", "c-4", "c-5"]);
    // The application's write was not lost: migrated from it (100 + 1), not from the copy read before.
    expect((await s.store.get("c-1"))!.session.stateBag.visits).toEqual({
      $type: "test.Visits",
      $version: 2,
      visits: 101,
      lastPage: "/p/1",
    });
    for (const i of [0, 2, 3, 4, 5])
      expect(canonical((await s.store.get(`c-${i}`))!.session)).toEqual(canonical(expectedV2(`c-${i}`, i)));
  });

  it("a session that fails on load or on save in the middle of a batch is reported as before; the others are saved", async () => {
    const s = await seeded(backend);
    for (let i = 0; i < 5; i++) {
      if (i === 1) {
        const broken = v1Session("v-1", 1);
        (broken.stateBag["statebag.chatHistory"] as unknown as { messages: unknown }).messages = "not a list";
        await s.seed(broken);
      } else await s.seed(v1Session(`v-${i}`, i));
    }
    // The store's codec refuses v-3 on save (under the lock where the seeding codec uses its
    // context; on Redis, where it is marked context-free, before the batch is sent).
    const serialize = s.codec.serialize.bind(s.codec);
    s.codec.serialize = (session: AgentSession) => {
      if (session.id === "v-3" && !s.codec.raw.has("v-3"))
        throw new StatebagError("session-invalid", "v-3 is refused by the store's codec");
      return serialize(session);
    };
    const before = await s.dump();
    const batches = spyBatches(s.store);
    const report = await migrateStore(s.store, { registry, batchSize: 5 });
    expect(batches).toEqual([4]);
    expect(report).toMatchObject({ scanned: 5, migrated: 3, failedCount: 2, conflicts: 0 });
    expect(report.failed).toEqual([
      expect.objectContaining({
        id: "v-1",
        code: "schema",
        pointer: "/session/stateBag/statebag.chatHistory/messages",
        revision: before.get("v-1")!.revision,
      }),
      expect.objectContaining({
        id: "v-3",
        code: "session-invalid",
        message: "the store refused the migrated session: v-3 is refused by the store's codec",
        revision: before.get("v-3")!.revision,
      }),
    ]);
    const after = await s.dump();
    expect(after.get("v-1")).toEqual(before.get("v-1"));
    expect(after.get("v-3")).toEqual(before.get("v-3"));
    for (const i of [0, 2, 4])
      expect(canonical(deserializeSession(after.get(`v-${i}`)!.text, { registry }))).toEqual(
        canonical(expectedV2(`v-${i}`, i)),
      );
  });

  it("an abort in the middle of a batch saves what was read, reports its cursor; the resumed run does the rest", async () => {
    const s = await seeded(backend);
    for (let i = 0; i < 10; i++) await s.seed(v1Session(`a-${i}`, i));
    const before = await s.dump();
    const controller = new AbortController();
    const progress: string[] = [];
    const first = await migrateStore(s.store, {
      registry,
      batchSize: 3,
      signal: controller.signal,
      // Aborted while a-4 is read: the second page (a-3, a-4, a-5) is half visited.
      readText: async (item) => {
        if (item.id === "a-4") controller.abort();
        return item;
      },
      onProgress: (_done, _total, p) => progress.push(p.cursor),
    });
    expect(first).toMatchObject({ aborted: true, scanned: 5, migrated: 5, cursor: "a-4" });
    expect(progress).toEqual(["a-0", "a-1", "a-2", "a-3", "a-4"]);
    const afterAbort = await s.dump();
    for (let i = 0; i < 10; i++) {
      const id = `a-${i}`;
      if (i <= 4) expect(afterAbort.get(id)!.revision).toBeGreaterThan(before.get(id)!.revision);
      else expect(afterAbort.get(id)).toEqual(before.get(id));
    }
    const rest = await migrateStore(s.store, { registry, batchSize: 3, startAfter: first.cursor });
    expect(rest).toMatchObject({ aborted: false, scanned: 5, migrated: 5, cursor: "a-9" });
    const again = await migrateStore(s.store, { registry });
    expect(again).toMatchObject({ scanned: 10, migrated: 0, unchanged: 10 });
    for (let i = 0; i < 10; i++)
      expect(canonical((await s.store.get(`a-${i}`))!.session)).toEqual(canonical(expectedV2(`a-${i}`, i)));
  });

  it("an encrypted store batches too (Redis: one at a time), and every row stays bound to its store, session, owner and revision", async () => {
    const { url, cleanup } = await backend.location();
    const seeding = new SeedingCodec();
    // The plaintext each load decrypted: migrateStore's readText for an encrypted store.
    const decrypted = new Map<string, string>();
    const inner: SessionCodec = {
      serialize: (session) => seeding.serialize(session),
      deserialize(text, key) {
        if (key !== undefined) decrypted.set(key, text);
        return seeding.deserialize(text);
      },
    };
    const codec = encryptedSessionCodec({ keyring, store: "batch", inner });
    const store = await openStore(url, { codec });
    open.push({ done: async () => (await store.close(), await cleanup()) });
    for (let i = 0; i < 5; i++) {
      seeding.raw.set(`e-${i}`, envelope(v1Session(`e-${i}`, i)));
      await store.save({ id: `e-${i}`, stateBag: {} }, { expectedRevision: null, meta: { owner: `owner-${i % 2}` } });
      seeding.raw.delete(`e-${i}`);
    }
    // The raw file, read and written beside the store (through the same driver only: node:sqlite).
    const raw = backend === sqliteBackend ? new DatabaseSync(url.slice("sqlite:".length)) : undefined;
    const body = (id: string) =>
      (raw!.prepare("SELECT data FROM statebag_sessions WHERE id = ?").get(id) as { data: Uint8Array }).data;
    const oldBody = raw && body("e-2");
    const batching = batchesWith(backend, codec);
    if (!batching) expect(saveBatchOf(store)).toBeUndefined();
    const batches = batching ? spyBatches(store) : [];
    const readText = async (item: ScanItem): Promise<ScanItem | undefined> => {
      decrypted.delete(item.id);
      const loaded = await store.get(item.id);
      const text = decrypted.get(item.id);
      return loaded && text !== undefined ? { ...item, text, revision: loaded.revision } : undefined;
    };
    const report: MigrateStoreReport = await migrateStore(store, { registry, readText });
    expect(report).toMatchObject({ scanned: 5, migrated: 5, failedCount: 0 });
    expect(batches).toEqual(batching ? [5] : []);
    for (let i = 0; i < 5; i++) {
      const loaded = (await store.get(`e-${i}`))!;
      expect(canonical(loaded.session)).toEqual(canonical(expectedV2(`e-${i}`, i)));
      expect(loaded.meta.owner).toBe(`owner-${i % 2}`);
    }
    if (raw === undefined) return;
    try {
      const set = raw.prepare("UPDATE statebag_sessions SET data = ? WHERE id = ?");
      // Another session's body (same owner), and this session's own body from before the migration.
      set.run(body("e-0"), "e-2");
      await expect(store.get("e-2")).rejects.toMatchObject({ code: "decryption-failed" });
      set.run(oldBody!, "e-2");
      await expect(store.get("e-2")).rejects.toMatchObject({ code: "decryption-failed" });
    } finally {
      raw.close();
    }
  });
});

/** The driver's client of a Redis store (connected, its format read). */
async function clientOf(store: SessionStore): Promise<unknown> {
  expect(store).toBeInstanceOf(RedisSessionStore);
  return (store as RedisSessionStore).call("probe", false, async (c) => c);
}

/** Counts what a Redis client sends from now on: each command's name, and the writes to its socket (round trips). */
function countTraffic(client: unknown): { names: string[]; writes: () => number } {
  const driver = client as {
    sendCommand(command: { name: string }, stream?: unknown): unknown;
    stream: { write(...args: unknown[]): boolean };
  };
  const names: string[] = [];
  let writes = 0;
  const send = driver.sendCommand;
  driver.sendCommand = function (this: unknown, command: { name: string }, stream?: unknown) {
    names.push(command.name);
    return send.call(this, command, stream);
  };
  const socket = driver.stream;
  const write = socket.write;
  socket.write = function (this: unknown, ...args: unknown[]) {
    writes++;
    return write.apply(this, args);
  };
  return { names, writes: () => writes };
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

describe.skipIf(!redisUp)("the batch save on redis: one round trip, and the unit's failures", () => {
  /**
   * A store at its own prefix (through `port`, a proxy, when given), with the test registry's codec,
   * and a second store at the same prefix connected directly, to look at what was written.
   */
  async function redisStores(options: { port?: number; commandTimeoutMs?: number } = {}) {
    const prefix = `sbtest:${uniqueName()}:`;
    const via = new URL(REDIS_URL);
    if (options.port !== undefined) {
      via.hostname = "127.0.0.1";
      via.port = String(options.port);
    }
    const store = new RedisSessionStore({
      url: via.toString(),
      prefix,
      codec: testCodec(),
      connectTimeoutMs: 1500,
      connectRetries: 0,
      ...(options.commandTimeoutMs === undefined ? {} : { commandTimeoutMs: options.commandTimeoutMs }),
    });
    const direct = new RedisSessionStore({ url: REDIS_URL, prefix, codec: testCodec() });
    open.push({
      done: async () => {
        await store.close();
        await direct.deleteAll();
        await direct.close();
      },
    });
    return { store, direct };
  }

  /** `count` stored sessions and the entries that update each at its revision. */
  async function updates(store: SessionStore, count: number, prefix = "r"): Promise<BatchSaveEntry[]> {
    const entries: BatchSaveEntry[] = [];
    for (let i = 0; i < count; i++) {
      const id = `${prefix}-${String(i).padStart(3, "0")}`;
      const revision = await store.save(expectedV2(id, i), { expectedRevision: null });
      entries.push({ session: expectedV2(id, 1000 + i), options: { expectedRevision: revision } });
    }
    return entries;
  }

  const proxyTarget = new URL(REDIS_URL);
  async function proxy(): Promise<TcpProxy> {
    const p = new TcpProxy(proxyTarget.hostname, Number(proxyTarget.port || 6379));
    await p.start();
    open.push({ done: () => p.stop() });
    return p;
  }

  it("is offered standalone with a codec that ignores its context only", async () => {
    const plain = new RedisSessionStore({ url: REDIS_URL, codec: testCodec() });
    const encrypted = new RedisSessionStore({
      url: REDIS_URL,
      codec: encryptedSessionCodec({ keyring, store: "batch", inner: testCodec() }),
    });
    const cluster = new RedisSessionStore({ url: REDIS_URL, cluster: true, codec: testCodec() });
    try {
      expect(saveBatchOf(plain)).toBeDefined();
      expect(saveBatchOf(encrypted)).toBeUndefined();
      expect(saveBatchOf(cluster)).toBeUndefined();
    } finally {
      for (const store of [plain, encrypted, cluster]) await store.close();
    }
  });

  it("a page of 100 sessions is one write to the server: one MULTI ... EXEC", async () => {
    const { store } = await redisStores();
    const entries = await updates(store, 100);
    const traffic = countTraffic(await clientOf(store));
    const results = await saveBatchOf(store)!(entries);
    expect(results.map((r) => r.ok)).toEqual(entries.map(() => true));
    expect(traffic.writes()).toBe(1);
    expect(traffic.names).toEqual(["multi", "script", ...entries.map(() => "evalsha"), "exec"]);
    for (const [i, entry] of entries.entries()) {
      const stored = (await store.get(entry.session.id))!;
      expect(stored.revision).toBe((results[i] as { revision: number }).revision);
      expect(canonical(stored.session)).toEqual(canonical(entry.session));
    }

    // migrateStore: a page of 100 migrated sessions, one transaction.
    const s = await seeded(redisBackend());
    for (let i = 0; i < 100; i++) await s.seed(v1Session(`m-${String(i).padStart(3, "0")}`, i));
    const batches = spyBatches(s.store);
    const during = countTraffic(await clientOf(s.store));
    const report = await migrateStore(s.store, { registry, batchSize: 100 });
    expect(report).toMatchObject({ scanned: 100, migrated: 100, failedCount: 0, conflicts: 0 });
    expect(batches).toEqual([100]);
    expect(during.names.filter((name) => name === "exec")).toHaveLength(1);
    const inside = during.names.slice(during.names.indexOf("multi"), during.names.indexOf("exec") + 1);
    expect(inside).toEqual(["multi", "script", ...Array.from({ length: 100 }, () => "evalsha"), "exec"]);
  });

  it("a session whose script fails inside the transaction fails alone, as its save would; a flushed script cache fails none", async () => {
    const { store, direct } = await redisStores();
    const entries = await updates(store, 3, "k");
    // Another program's key where k-new's session would be: its script fails (WRONGTYPE).
    const raw = (await clientOf(direct)) as {
      set(key: string, value: string): Promise<unknown>;
      script(subcommand: string): Promise<unknown>;
    };
    await raw.set(store.keys.session("k-new"), "not a hash");
    const create: BatchSaveEntry = { session: expectedV2("k-new", 7), options: { expectedRevision: null } };
    // The server forgets its scripts: the transaction loads the script itself before its calls.
    await raw.script("FLUSH");
    const results = await saveBatchOf(store)!([entries[0], create, entries[1], entries[2]]);
    expect(results.map((r) => r.ok)).toEqual([true, false, true, true]);
    const failed = (results[1] as { error: unknown }).error;
    expect(failed).toBeInstanceOf(StoreKeyConflictError);
    const alone = await errorOf(store.save(create.session, create.options));
    expect(outcome({ ok: false, error: failed })).toEqual(outcome({ ok: false, error: alone }));
    for (const [i, entry] of entries.entries()) {
      expect((await direct.get(entry.session.id))!.revision).toBe(
        (results[i === 0 ? 0 : i + 1] as { revision: number }).revision,
      );
    }
  });

  it("a unit whose EXEC never reaches the server rejects and writes nothing (a deadline, a closed connection)", async () => {
    // The requests are lost on the way: the deadline passes, the server never saw the transaction.
    const lossy = await proxy();
    const first = await redisStores({ port: lossy.port, commandTimeoutMs: 300 });
    const entries = await updates(first.store, 5, "d");
    const before = await rows(first.direct);
    lossy.dropRequests = true;
    const late = await errorOf(saveBatchOf(first.store)!(entries));
    expect(late).toBeInstanceOf(StoreUnavailableError);
    expect((late as StoreUnavailableError).outcomeUnknown).toBe(true);
    await sleep(100);
    expect(await rows(first.direct)).toEqual(before);

    // The connection closes as the transaction is written: nothing of it reaches the server.
    const cut = await proxy();
    const second = await redisStores({ port: cut.port });
    const more = await updates(second.store, 5, "c");
    const untouched = await rows(second.direct);
    const stopped = cut.stop();
    const closed = await errorOf(saveBatchOf(second.store)!(more));
    await stopped;
    expect(closed).toBeInstanceOf(StoreUnavailableError);
    await sleep(100);
    expect(await rows(second.direct)).toEqual(untouched);
  });

  it("the one ambiguous case, EXEC run and its reply lost: rejects with the outcome unknown, the page written whole", async () => {
    const lossy = await proxy();
    const { store, direct } = await redisStores({ port: lossy.port });
    const entries = await updates(store, 5, "a");
    lossy.dropReplies = true;
    const pending = errorOf(saveBatchOf(store)!(entries));
    await sleep(300);
    await lossy.stop();
    const error = await pending;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).outcomeUnknown).toBe(true);
    for (const entry of entries) {
      const stored = (await direct.get(entry.session.id))!;
      expect(stored.revision).toBeGreaterThan(entry.options.expectedRevision!);
      expect(canonical(stored.session)).toEqual(canonical(entry.session));
    }
  });
});
