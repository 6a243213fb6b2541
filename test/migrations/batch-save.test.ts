/**
 * The batched save of a bulk migration (src/runtime/stores/batch-save.ts): on SQLite and PostgreSQL
 * a page of migrated sessions is written in one transaction (SQLite: each row under its own
 * savepoint; PostgreSQL: a refused row changes nothing).
 * - The batch save equals `save` one session at a time: the same results, the same errors, the
 *   same stored rows and revisions (failure paths included), plaintext and encrypted.
 * - A failure of the unit (not a refusal of one row) writes nothing of the batch, and
 *   `migrateStore` then saves the page one session at a time, with the report it would give.
 * - `migrateStore` on a batching store: a concurrent writer on one row of a batch, a row failing
 *   validation (on load, and on save) in the middle of a batch, an abort in the middle of a batch
 *   and the resumed run, an encrypted store (rows still bound to store, session, owner, revision).
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
import { migrateStore, type MigrateStoreReport } from "../../src/runtime/stores/migrate.js";
import type { ScanItem, SessionCodec, SessionStore } from "../../src/runtime/stores/types.js";
import { available, betterSqliteBackend, postgresBackend, sqliteBackend, type Backend } from "../stores/helpers.js";
import { canonical, envelope, expectedV2, testCodec, testRegistry, v1Session } from "./helpers.js";
import { SeedingCodec, seededStore, type SeededStore } from "./store-helpers.js";

const registry = testRegistry();
const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };
/** The stores that save a batch in one transaction. */
const batchingBackends = [sqliteBackend, betterSqliteBackend, postgresBackend()].filter(available);

const open: { done(): Promise<void> }[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.done();
});
async function seeded(backend: Backend): Promise<SeededStore> {
  const s = await seededStore(backend);
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
    for (let twin = 0; twin < 2; twin++) {
      const { url, cleanup } = await backend.location();
      const store = await openStore(url, { codec: codec() });
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

  it("a failure of the unit (not a refusal of a row) writes nothing of the batch", async () => {
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
  });
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
    // The store's codec refuses v-3 on save (under the lock: the seeding codec uses its context).
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

  it("an encrypted store batches too, and every row stays bound to its store, session, owner and revision", async () => {
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
    const store = await openStore(url, { codec: encryptedSessionCodec({ keyring, store: "batch", inner }) });
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
    const batches = spyBatches(store);
    const readText = async (item: ScanItem): Promise<ScanItem | undefined> => {
      decrypted.delete(item.id);
      const loaded = await store.get(item.id);
      const text = decrypted.get(item.id);
      return loaded && text !== undefined ? { ...item, text, revision: loaded.revision } : undefined;
    };
    const report: MigrateStoreReport = await migrateStore(store, { registry, readText });
    expect(report).toMatchObject({ scanned: 5, migrated: 5, failedCount: 0 });
    expect(batches).toEqual([5]);
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
