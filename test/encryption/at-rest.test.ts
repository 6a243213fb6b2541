/**
 * Encrypted stores as someone with raw access to the database sees them, on every backend
 * (memory, SQLite, PostgreSQL, Redis, Redis Cluster): a session row is bound to the revision it was
 * written under, so an older body copied back over the row (a rollback) is refused while
 * compare-and-swap works as before, and rows of the earlier envelope (version 1, no revision
 * bound) keep loading until `migrate --reencrypt` rewrites them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSessionData } from "../../src/index.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import type { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import type { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import type { SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import {
  ConflictError,
  DecryptionError,
  encryptionCodecs,
  migrateEncryption,
  openStore,
  type SessionStore,
} from "../../src/stores.js";
import {
  type Backend,
  memoryBackend,
  postgresBackend,
  redisBackend,
  redisClusterBackend,
  serverUp,
  sqliteBackend,
} from "../stores/helpers.js";

/** Raw access to one session's stored body, as an attacker with database access has. */
interface Raw {
  get(id: string): Promise<string>;
  set(id: string, text: string): Promise<void>;
}

function rawAccess(store: SessionStore): Raw {
  switch (store.kind) {
    case "memory": {
      const rows = (store as unknown as { rows: Map<string, { text: string }> }).rows;
      return {
        get: async (id) => rows.get(id)!.text,
        set: async (id, text) => void (rows.get(id)!.text = text),
      };
    }
    case "sqlite": {
      const s = store as SqliteSessionStore;
      return {
        get: (id) => s.run("raw", "read", (st) => (st.get.get(id, Date.now()) as { data: string }).data as string),
        // The store's statements hold no raw UPDATE: through its connection, inside its write transaction.
        set: (id, text) =>
          s.run("raw", "write", () => {
            const db = (s as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
            db.prepare("UPDATE statebag_sessions SET data = ? WHERE id = ?").run(text, id);
          }),
      };
    }
    case "postgres": {
      const s = store as PostgresSessionStore;
      const table = `"${s.schema}".statebag_sessions`;
      return {
        get: (id) =>
          s.withClient("raw", false, async (c) => {
            const { rows } = await c.query<{ data: string }>({ text: `SELECT data FROM ${table} WHERE id = $1` }, [id]);
            return rows[0].data;
          }),
        set: (id, text) =>
          s.withClient("raw", true, async (c) => {
            await c.query({ text: `UPDATE ${table} SET data = $2 WHERE id = $1` }, [id, text]);
          }),
      };
    }
    case "redis": {
      const s = store as RedisSessionStore;
      const key = (id: string) =>
        (s as unknown as { keys: { of(id: string): { session: string } } }).keys.of(id).session;
      return {
        get: (id) => s.call("raw", false, async (c) => (await c.hget(key(id), "d"))!),
        set: (id, text) => s.call("raw", true, async (c) => void (await c.hset(key(id), "d", text))),
      };
    }
  }
}

const backends: Backend[] = [
  memoryBackend,
  sqliteBackend,
  ...(serverUp.postgres ? [postgresBackend()] : []),
  ...(serverUp.redis ? [redisBackend(), redisClusterBackend] : []),
];

/** A row written by statebag before revisions were bound (envelope version 1): key 32 bytes of 7, store "app", owner "alice". */
const V1_SESSION =
  '{"format":"statebag.encrypted","v":1,"kid":"k1","iv":"EvJv13H5ugdLQkLG","ct":"Uszp0_VP1ErJyKGVODT-Wt9MkdBy7qOvkCXgGqC3yDl6U_PDlNA691hTZ1RKilsOtdf_4h8h3dT8J99dRb1NyfkGphCwaoxdm2SqvCuk-MnEC2rmwX1a1g","tag":"QVlrw0hqlL1AXWNprcACow","b":{"s":"PeK5_a9eUZrS","i":"fUsY_T5iogtW","o":"6_hcfr52Yn7E"}}';
const ring7 = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };

const session = (id: string, conversationId: string): AgentSession => createSessionData({ id, conversationId });

async function decryptionFailure(p: Promise<unknown>): Promise<DecryptionError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DecryptionError);
  return error as DecryptionError;
}

for (const backend of backends) {
  describe(`encrypted ${backend.name} store at rest`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });
    const open = async (options: Parameters<typeof openStore>[1]) => {
      const { url, cleanup } = await backend.location();
      const store = await openStore(url, options);
      cleanups.push(cleanup, () => store.close());
      return store;
    };

    it("an older body copied back over its session's row is refused as a rollback; compare-and-swap is unchanged", async () => {
      const store = await open(encryptionCodecs({ keyring: ring7, store: "app" }));
      const raw = rawAccess(store);
      const r1 = await store.save(session("s1", "first"), { expectedRevision: null, meta: { owner: "alice" } });
      const old = await raw.get("s1");
      // An update naming its owner, then one that does not (the store looks the owner up).
      const r2 = await store.save(session("s1", "second"), { expectedRevision: r1, meta: { owner: "alice" } });
      const r3 = await store.save(session("s1", "third"), { expectedRevision: r2 });
      expect(r3).toBeGreaterThan(r2);
      expect(r2).toBeGreaterThan(r1);
      const current = await raw.get("s1");

      await raw.set("s1", old);
      const rolledBack = await decryptionFailure(store.get("s1"));
      expect(rolledBack.reason).toBe("binding");
      expect(rolledBack.mismatched).toEqual(["revision"]);
      expect(rolledBack.message).toMatch(/written for another revision of the session/);

      await raw.set("s1", current);
      const loaded = await store.get("s1");
      expect(loaded).toMatchObject({ revision: r3, session: { conversationId: "third" } });
      await expect(store.save(session("s1", "stale"), { expectedRevision: r2 })).rejects.toBeInstanceOf(ConflictError);
      await expect(store.save(session("s1", "dup"), { expectedRevision: null })).rejects.toBeInstanceOf(ConflictError);
      const r4 = await store.save(session("s1", "fourth"), { expectedRevision: r3 });
      expect(await store.get("s1")).toMatchObject({ revision: r4, session: { conversationId: "fourth" } });

      // Deleted and created again: a new revision, and the body before the delete does not open.
      await store.delete("s1");
      const r5 = await store.save(session("s1", "again"), { expectedRevision: null });
      expect(r5).toBeGreaterThan(r4);
      expect((await store.get("s1"))!.session.conversationId).toBe("again");
      await raw.set("s1", current);
      expect((await decryptionFailure(store.get("s1"))).mismatched).toEqual(["owner", "revision"]);
    });

    it("rows of the envelope before revisions were bound load; migrate --reencrypt binds them", async () => {
      const codecs = encryptionCodecs({ keyring: ring7, store: "app" });
      const store = await open(codecs);
      const raw = rawAccess(store);
      const revision = await store.save(createSessionData({ id: "alice-1" }), {
        expectedRevision: null,
        meta: { owner: "alice" },
      });
      await raw.set("alice-1", V1_SESSION);
      expect(await store.get("alice-1")).toMatchObject({ revision, session: { id: "alice-1" } });

      const report = await migrateEncryption(store, { ...codecs, mode: "reencrypt" });
      expect(report).toMatchObject({ scanned: 1, stale: 1, rewritten: 1, failedCount: 0 });
      const rewritten = await raw.get("alice-1");
      const after = (await store.get("alice-1"))!;
      expect(after.revision).toBeGreaterThan(revision);
      expect(JSON.parse(rewritten)).toMatchObject({ v: 2, b: { r: after.revision } });
      expect(await migrateEncryption(store, { ...codecs, mode: "reencrypt" })).toMatchObject({
        stale: 0,
        rewritten: 0,
        current: 1,
      });
      // Once every row is bound, `requireRevisionBinding` refuses a version-1 body copied back (a
      // rollback to before the migration); without it such a body still loads (the upgrade window).
      await raw.set("alice-1", V1_SESSION);
      expect(await store.get("alice-1")).toMatchObject({ session: { id: "alice-1" } });
      const strict = await open(encryptionCodecs({ keyring: ring7, store: "app", requireRevisionBinding: true }));
      const strictRaw = rawAccess(strict);
      await strict.save(createSessionData({ id: "alice-1" }), { expectedRevision: null, meta: { owner: "alice" } });
      expect((await strict.get("alice-1"))!.session.id).toBe("alice-1");
      await strictRaw.set("alice-1", V1_SESSION);
      const refused = await decryptionFailure(strict.get("alice-1"));
      expect(refused).toMatchObject({ reason: "binding", mismatched: ["revision"] });
    });
  });
}
