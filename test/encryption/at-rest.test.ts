/**
 * Encrypted stores as someone with raw access to the database sees them, on every backend
 * (memory, SQLite, PostgreSQL, Redis, Redis Cluster): a session row is bound to the revision it was
 * written under, so an older body copied back over the row (a rollback) is refused while
 * compare-and-swap works as before, and rows of the earlier envelope (version 1, no revision
 * bound) keep loading until `migrate --reencrypt` rewrites them. No owner id and no title is in
 * plaintext anywhere in the store (rows, columns, key names, index members), while listing,
 * erasure and retention by owner work; rows written before keep loading, a listing of their owner
 * refuses until `migrate --reencrypt` has moved them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createSessionData } from "../../src/index.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import type { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import type { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { SQLITE_SCHEMA_VERSION, type SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import {
  ConflictError,
  DecryptionError,
  defaultSessionCodec,
  encryptionCodecs,
  migrateEncryption,
  openStore,
  type SessionStore,
  StoreNotSetUpError,
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

/**
 * Raw access to one session's stored body, as an attacker with database access has. A binary row
 * (bytes at rest) is handled as its binary string (one character per byte), as a scan returns it.
 */
interface Raw {
  get(id: string): Promise<string>;
  set(id: string, text: string): Promise<void>;
}

const isBinary = (text: string) => text.startsWith("\u0000SBE");
const asText = (row: string | Uint8Array) => (typeof row === "string" ? row : Buffer.from(row).toString("latin1"));
const asStored = (text: string) => (isBinary(text) ? Buffer.from(text, "latin1") : text);

/** The fixed header of a binary row (version 3): version, key id and the bound revision. */
function binaryHeader(text: string): { version: number; kid: string; revision?: number } {
  const bytes = Buffer.from(text, "latin1");
  const flags = bytes[5];
  const kidLength = bytes[6];
  let at = 7 + kidLength + 12 + 16 + 9 + 9 + (flags & 4 ? 9 : 0) + (flags & 1 ? 8 : 0);
  const revision = flags & 2 ? Number(bytes.readBigUInt64BE(at)) : undefined;
  at += flags & 2 ? 8 : 0;
  return {
    version: bytes[4],
    kid: bytes.subarray(7, 7 + kidLength).toString("latin1"),
    ...(revision === undefined ? {} : { revision }),
  };
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
        get: (id) => s.run("raw", "read", (st) => asText(st.get.get(id, Date.now())![1])),
        // The store's statements hold no raw UPDATE: through its connection, inside its write transaction.
        set: (id, text) =>
          s.run("raw", "write", () => {
            const db = (s as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
            db.prepare("UPDATE statebag_sessions SET data = ? WHERE id = ?").run(asStored(text), id);
          }),
      };
    }
    case "postgres": {
      const s = store as PostgresSessionStore;
      const table = `"${s.schema}".statebag_sessions`;
      return {
        get: (id) =>
          s.withClient("raw", false, async (c) => {
            const { rows } = await c.query<{ data: string | null; data_bytes: Buffer | null }>(
              { text: `SELECT data, data_bytes FROM ${table} WHERE id = $1` },
              [id],
            );
            return asText(rows[0].data_bytes ?? rows[0].data!);
          }),
        // A row has its body in one of the columns (text, or bytea for a binary row).
        set: (id, text) =>
          s.withClient("raw", true, async (c) => {
            const sql = isBinary(text)
              ? `UPDATE ${table} SET data = NULL, data_bytes = $2 WHERE id = $1`
              : `UPDATE ${table} SET data = $2, data_bytes = NULL WHERE id = $1`;
            await c.query({ text: sql }, [id, asStored(text)]);
          }),
      };
    }
    case "redis": {
      const s = store as RedisSessionStore;
      const key = (id: string) =>
        (s as unknown as { keys: { of(id: string): { session: string } } }).keys.of(id).session;
      return {
        get: (id) =>
          s.call("raw", false, async (c) => {
            const [row] = await c.hmgetBuffer(key(id), "d");
            return isBinary(row!.toString("latin1")) ? row!.toString("latin1") : row!.toString("utf8");
          }),
        set: (id, text) =>
          s.call("raw", true, async (c) => void (await c.hset(key(id), "d", asStored(text) as string))),
      };
    }
  }
}

/** Everything the store holds at rest, as one text: every row and column, every key name and value. */
async function dump(store: SessionStore): Promise<string> {
  switch (store.kind) {
    case "memory": {
      const m = store as unknown as { rows: Map<string, unknown>; byOwner: Map<string, Set<string>>; logs: unknown };
      return JSON.stringify({ rows: [...m.rows], owners: [...m.byOwner].map(([o, ids]) => [o, [...ids]]) });
    }
    case "sqlite": {
      const s = store as SqliteSessionStore;
      return s.run("raw", "read", () => {
        const db = (s as unknown as { db: { prepare(sql: string): { all(): unknown[] } } }).db;
        return JSON.stringify(db.prepare("SELECT * FROM statebag_sessions").all());
      });
    }
    case "postgres": {
      const s = store as PostgresSessionStore;
      return s.withClient("raw", false, async (c) =>
        JSON.stringify((await c.query({ text: `SELECT * FROM "${s.schema}".statebag_sessions` })).rows),
      );
    }
    case "redis": {
      const s = store as RedisSessionStore;
      return s.call("raw", false, async (c) => {
        const nodes = (c as unknown as { nodes?: (role: string) => (typeof c)[] }).nodes?.("master") ?? [c];
        const out: unknown[] = [];
        for (const node of nodes) {
          let cursor = "0";
          do {
            const [next, keys] = await node.scan(cursor, "MATCH", `${s.prefix}*`, "COUNT", 1000);
            cursor = next;
            for (const key of keys) {
              const type = await node.type(key);
              const value =
                type === "hash"
                  ? await node.hmget(key, ...(await node.hkeys(key)))
                  : type === "zset"
                    ? await node.zrange(key, 0, -1)
                    : type === "list"
                      ? await node.lrange(key, 0, -1)
                      : type;
              out.push([key, value]);
            }
          } while (cursor !== "0");
        }
        return JSON.stringify(out);
      });
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
    const locate = async () => {
      const { url, cleanup } = await backend.location();
      cleanups.push(cleanup);
      return url;
    };
    const openAt = async (url: string, options: Parameters<typeof openStore>[1]) => {
      const store = await openStore(url, options);
      cleanups.push(() => store.close());
      return store;
    };
    const open = async (options: Parameters<typeof openStore>[1]) => openAt(await locate(), options);

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
      // Rewritten as a binary row (version 3) bound to the revision it was written under.
      expect(binaryHeader(rewritten)).toEqual({ version: 3, kid: "k1", revision: after.revision });
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

    it("stores a session as a binary row; rows of the text envelope (version 2) load and migrate --reencrypt moves them", async () => {
      const codecs = encryptionCodecs({ keyring: ring7, store: "app" });
      const store = await open(codecs);
      const raw = rawAccess(store);
      const r1 = await store.save(session("s1", "first"), { expectedRevision: null, meta: { owner: "alice" } });
      const stored = await raw.get("s1");
      expect(binaryHeader(stored)).toEqual({ version: 3, kid: "k1", revision: r1 });
      expect(stored).not.toContain("first");
      // No base64 and no JSON: the row is the header (72 bytes here: key id "k1", an owner and a
      // revision bound) and the ciphertext, as long as the plaintext.
      expect(stored.length).toBe(defaultSessionCodec().serialize(session("s1", "first")).length + 72);

      // A row written by the release before (the text envelope, version 2, bound to its revision) loads.
      const r2 = await store.save(session("s1", "second"), { expectedRevision: r1 });
      await raw.set("s1", codecs.codec.serialize(session("s1", "second"), { owner: "alice", revision: r2 }));
      expect(JSON.parse(await raw.get("s1"))).toMatchObject({ v: 2, kid: "k1", b: { r: r2 } });
      expect(await store.get("s1")).toMatchObject({ revision: r2, session: { conversationId: "second" } });
      const report = await migrateEncryption(store, { ...codecs, mode: "reencrypt" });
      expect(report).toMatchObject({ scanned: 1, stale: 1, rewritten: 1, failedCount: 0 });
      const after = (await store.get("s1"))!;
      expect(after.session.conversationId).toBe("second");
      expect(binaryHeader(await raw.get("s1"))).toEqual({ version: 3, kid: "k1", revision: after.revision });
      expect(await migrateEncryption(store, { ...codecs, mode: "reencrypt" })).toMatchObject({
        stale: 0,
        rewritten: 0,
        current: 1,
      });
    });

    it("a binary row truncated, of another version, under a swapped key id or moved to another session or owner is refused, naming no secret", async () => {
      const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7), k2: Buffer.alloc(32, 9) } };
      const store = await open(encryptionCodecs({ keyring, store: "app" }));
      const raw = rawAccess(store);
      await store.save(session("s1", "secret-first"), { expectedRevision: null, meta: { owner: "alice" } });
      await store.save(session("s2", "secret-second"), { expectedRevision: null, meta: { owner: "alice" } });
      await store.save(session("s3", "secret-third"), { expectedRevision: null, meta: { owner: "bob" } });
      const row = await raw.get("s1");
      const kidAt = 7;
      const cases: [string, string, Partial<DecryptionError>][] = [
        ["truncated in the header", row.slice(0, 20), { reason: "malformed" }],
        ["truncated in the ciphertext", row.slice(0, -5), { reason: "tampered" }],
        ["another version", `${row.slice(0, 4)}\u0009${row.slice(5)}`, { reason: "malformed" }],
        [
          "unknown flags",
          `${row.slice(0, 5)}${String.fromCharCode(row.charCodeAt(5) | 64)}${row.slice(6)}`,
          { reason: "malformed" },
        ],
        // The key id says k2 (in the keyring): the associated data names the key id, so the tag fails.
        ["a swapped key id", `${row.slice(0, kidAt + 1)}2${row.slice(kidAt + 2)}`, { reason: "wrong-key", kid: "k2" }],
        [
          "a key id not in the keyring",
          `${row.slice(0, kidAt + 1)}9${row.slice(kidAt + 2)}`,
          { reason: "missing-key", kid: "k9" },
        ],
      ];
      for (const [what, tampered, expected] of cases) {
        await raw.set("s1", tampered);
        const error = await decryptionFailure(store.get("s1"));
        expect(error, what).toMatchObject({ code: "decryption-failed", ...expected });
        expect(error.message).toMatch(/the session "s1"/);
        for (const secret of [
          "secret-first",
          "alice",
          Buffer.alloc(32, 7).toString("base64"),
          Buffer.alloc(32, 7).toString("hex"),
        ])
          expect(`${error.message} ${error.hint}`).not.toContain(secret);
      }
      // Moved to another session of the same owner, and to another owner's session (on a cluster
      // the sessions' buckets count revisions apart: the revision may match too).
      await raw.set("s2", row);
      const elsewhere = await decryptionFailure(store.get("s2"));
      expect(elsewhere.reason).toBe("binding");
      expect(elsewhere.mismatched.filter((binding) => binding !== "revision")).toEqual(["id"]);
      await raw.set("s3", row);
      const moved = await decryptionFailure(store.get("s3"));
      expect(moved.reason).toBe("binding");
      expect(moved.mismatched.filter((binding) => binding !== "revision")).toEqual(["id", "owner"]);
      expect(moved.message).toMatch(/written for another session id and owner/);
      expect(moved.message).not.toContain("alice");
    });

    it("keeps no owner id and no title in plaintext at rest; get, list, erasure and retention by owner work", async () => {
      const alice = "alice@example.com";
      const bob = "bob.builder@example.org";
      const codecs = encryptionCodecs({ keyring: ring7, store: "app" });
      const store = await open({ ...codecs, retention: { owners: { [bob]: { maxAgeMs: 1 } } } });
      for (const [id, owner, title] of [
        ["s-a1", alice, "Plan the Zanzibar trip"],
        ["s-a2", alice, "Quarterly numbers draft"],
        ["s-a3", alice, undefined],
        ["s-b1", bob, "Bob's private question"],
      ] as const)
        await store.save(createSessionData({ id }), {
          expectedRevision: null,
          meta: { owner, ...(title ? { title } : {}), labels: { kind: "chat" } },
        });
      // An update that renames the title without naming the owner.
      const r = (await store.get("s-a2"))!.revision;
      await store.save(createSessionData({ id: "s-a2" }), { expectedRevision: r, meta: { title: "Final numbers" } });

      const atRest = await dump(store);
      for (const secret of [
        alice,
        bob,
        "alice",
        "bob.builder",
        "Zanzibar",
        "Quarterly",
        "Final numbers",
        "private question",
      ])
        expect(atRest, `${secret} at rest`).not.toContain(secret);
      expect(atRest).toContain("chat"); // labels stay plaintext (documented)

      expect((await store.get("s-a2"))!.meta).toMatchObject({ owner: alice, title: "Final numbers" });
      const listed = (await store.list({ owner: alice, order: "id" })).items;
      expect(listed.map((i) => [i.id, i.meta.owner, i.meta.title])).toEqual([
        ["s-a1", alice, "Plan the Zanzibar trip"],
        ["s-a2", alice, "Final numbers"],
        ["s-a3", alice, undefined],
      ]);
      const paged = await store.list({ owner: alice, limit: 2, labels: { kind: "chat" } });
      expect(paged.items).toHaveLength(2);
      expect((await store.list({ owner: alice, limit: 2, cursor: paged.cursor })).items).toHaveLength(1);
      expect((await store.scan()).items.map((i) => i.meta?.owner)).toEqual([alice, alice, alice, bob]);
      await expect(
        store.save(createSessionData({ id: "s-a1" }), {
          expectedRevision: (await store.get("s-a1"))!.revision,
          meta: { owner: bob },
        }),
      ).rejects.toMatchObject({ code: "configuration" });

      // Retention by owner matches the owner given in the policy.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await store.purgeExpired()).toBe(1);
      expect(await store.get("s-b1")).toBeUndefined();
      expect((await store.list({ owner: alice })).items).toHaveLength(3);

      // Erasure by owner.
      const receipt = await store.eraseOwner(alice);
      expect(receipt).toMatchObject({ sessions: 3, complete: true });
      expect((await store.list({ owner: alice })).items).toEqual([]);
      expect(await store.get("s-a1")).toBeUndefined();
    });

    it.skipIf(backend.name === "memory")(
      "rows written before keep loading; a listing of their owner refuses until migrate --reencrypt moves them",
      async () => {
        const alice = "alice@example.com";
        const url = await locate();
        const before = await openAt(url, encryptionCodecs({ keyring: ring7, store: "app", protectMeta: false }));
        await before.save(createSessionData({ id: "old-1" }), {
          expectedRevision: null,
          meta: { owner: alice, title: "Old secret title" },
        });
        await before.save(createSessionData({ id: "old-2" }), { expectedRevision: null, meta: { owner: alice } });
        expect(await dump(before)).toContain(alice);

        const codecs = encryptionCodecs({ keyring: ring7, store: "app" });
        const store = await openAt(url, codecs);
        expect((await store.get("old-1"))!.meta).toMatchObject({ owner: alice, title: "Old secret title" });
        const refused = await store.list({ owner: alice }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(StoreNotSetUpError);
        expect((refused as Error).message).not.toContain(alice);
        expect((refused as StoreNotSetUpError).hint).toMatch(/migrate --reencrypt/);
        // A save naming the owner still works on a row written before (and moves it).
        const r = (await store.get("old-2"))!.revision;
        await store.save(createSessionData({ id: "old-2" }), { expectedRevision: r, meta: { owner: alice } });

        const report = await migrateEncryption(store, { ...codecs, mode: "reencrypt" });
        expect(report).toMatchObject({ scanned: 2, stale: 1, rewritten: 1, failedCount: 0 });
        const atRest = await dump(store);
        for (const secret of [alice, "Old secret title"]) expect(atRest).not.toContain(secret);
        const listed = (await store.list({ owner: alice, order: "id" })).items;
        expect(listed.map((i) => [i.id, i.meta.title])).toEqual([
          ["old-1", "Old secret title"],
          ["old-2", undefined],
        ]);
        expect(await migrateEncryption(store, { ...codecs, mode: "reencrypt" })).toMatchObject({
          stale: 0,
          rewritten: 0,
        });
        expect(await store.eraseOwner(alice)).toMatchObject({ sessions: 2 });
        expect(await dump(store)).not.toContain(alice);
      },
    );

    it.skipIf(backend.name === "memory")(
      "a key rotation: a pinned ownerKey keeps listings whole; the default refuses until migrate --reencrypt re-forms owners",
      async () => {
        const alice = "alice@example.com";
        const k8 = Buffer.alloc(32, 8);
        const url = await locate();
        const v1 = await openAt(url, encryptionCodecs({ keyring: ring7, store: "app" }));
        await v1.save(createSessionData({ id: "r-1" }), { expectedRevision: null, meta: { owner: alice, title: "T" } });
        const ring78 = { current: "k8", keys: { k1: ring7.keys.k1, k8 } };
        // Pinned to the first key: the same forms after the rotation, nothing to wait for.
        const pinned = await openAt(url, encryptionCodecs({ keyring: ring78, store: "app", ownerKey: "k1" }));
        expect((await pinned.list({ owner: alice })).items.map((i) => i.meta.title)).toEqual(["T"]);
        // The default (the current key) forms owners anew: refused until the rows are rewritten.
        const codecs = encryptionCodecs({ keyring: ring78, store: "app" });
        const rotated = await openAt(url, codecs);
        await expect(rotated.list({ owner: alice })).rejects.toBeInstanceOf(StoreNotSetUpError);
        expect(await migrateEncryption(rotated, { ...codecs, mode: "reencrypt" })).toMatchObject({
          rewritten: 1,
          failedCount: 0,
        });
        const onlyK8 = await openAt(url, encryptionCodecs({ keyring: { current: "k8", keys: { k8 } }, store: "app" }));
        expect((await onlyK8.list({ owner: alice })).items.map((i) => [i.meta.owner, i.meta.title])).toEqual([
          [alice, "T"],
        ]);
      },
    );
  });
}

describe.skipIf(!serverUp.postgres)("a PostgreSQL store of format 4 with encrypted rows", () => {
  it("is refused until `store setup` upgrades it to format 5; its rows then load and migrate --reencrypt makes them binary", async () => {
    const { url, cleanup } = await postgresBackend().location();
    const codecs = encryptionCodecs({ keyring: ring7, store: "app" });
    const stores: SessionStore[] = [];
    try {
      // A database as the release before left it: format 4, the body in `data` (text), rows in the
      // text envelope (version 2) bound to their revision.
      const before = (await openStore(url, codecs)) as PostgresSessionStore;
      stores.push(before);
      const revisions: number[] = [];
      for (const id of ["s1", "s2"])
        revisions.push(
          await before.save(session(id, `${id}-body`), { expectedRevision: null, meta: { owner: "alice" } }),
        );
      const table = `"${before.schema}".statebag_sessions`;
      await before.withClient("raw", true, async (c) => {
        for (const [index, id] of ["s1", "s2"].entries()) {
          const text = codecs.codec.serialize(session(id, `${id}-body`), {
            owner: "alice",
            revision: revisions[index],
          });
          await c.query({ text: `UPDATE ${table} SET data = $2, data_bytes = NULL WHERE id = $1` }, [id, text]);
        }
        await c.query({ text: `ALTER TABLE ${table} DROP COLUMN data_bytes, ALTER COLUMN data SET NOT NULL` });
        await c.query({ text: `UPDATE "${before.schema}".statebag_meta SET value = '4' WHERE key = 'schema_version'` });
      });

      const store = (await openStore(url, codecs)) as PostgresSessionStore;
      stores.push(store);
      const refused = await store.get("s1").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(StoreNotSetUpError);
      expect((refused as Error).message).toMatch(/storage format 4; this statebag needs 5/);

      expect(await store.setup()).toEqual({ version: 5, changed: true });
      expect(await store.setup()).toEqual({ version: 5, changed: false });
      expect(await store.get("s1")).toMatchObject({ revision: revisions[0], session: { conversationId: "s1-body" } });
      const report = await migrateEncryption(store, { ...codecs, mode: "reencrypt" });
      expect(report).toMatchObject({ scanned: 2, stale: 2, rewritten: 2, failedCount: 0 });
      const raw = rawAccess(store);
      for (const id of ["s1", "s2"]) {
        const row = await raw.get(id);
        expect(binaryHeader(row)).toMatchObject({ version: 3, kid: "k1" });
        expect((await store.get(id))!.session.conversationId).toBe(`${id}-body`);
      }
      const columns = await store.withClient("raw", false, async (c) => {
        const { rows } = await c.query<{ text: number; bytes: number }>({
          text: `SELECT count(data) AS text, count(data_bytes) AS bytes FROM ${table}`,
        });
        return rows[0];
      });
      expect(columns).toEqual({ text: "0", bytes: "2" });
    } finally {
      for (const store of stores) await store.close().catch(() => undefined);
      await cleanup();
    }
  });
});

describe("a SQLite file of format 4 with encrypted rows", () => {
  it("reads read-only as it is; a writable open records format 5, and migrate --reencrypt makes its rows BLOBs", async () => {
    const { url, cleanup } = await sqliteBackend.location();
    const codecs = encryptionCodecs({ keyring: ring7, store: "app" });
    const stores: SessionStore[] = [];
    const openAt = async (at: string) => {
      const store = (await openStore(at, codecs)) as SqliteSessionStore;
      stores.push(store);
      return store;
    };
    try {
      // A file as the release before left it: format 4, rows in the text envelope (version 2).
      const before = await openAt(url);
      const revision = await before.save(session("s1", "kept"), { expectedRevision: null, meta: { owner: "alice" } });
      await before.run("raw", "write", () => {
        const db = (before as unknown as { db: { prepare(sql: string): { run(...a: unknown[]): unknown } } }).db;
        const text = codecs.codec.serialize(session("s1", "kept"), { owner: "alice", revision });
        db.prepare("UPDATE statebag_sessions SET data = ? WHERE id = ?").run(text, "s1");
        db.prepare("UPDATE statebag_meta SET value = 4 WHERE key = 'schema_version'").run();
      });
      await before.close();

      const readOnly = await openAt(`${url}${url.includes("?") ? "&" : "?"}readOnly=true`);
      expect(await readOnly.get("s1")).toMatchObject({ revision, session: { conversationId: "kept" } });
      await readOnly.close();

      const store = await openAt(url);
      expect(await store.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
      expect(await store.get("s1")).toMatchObject({ revision, session: { conversationId: "kept" } });
      expect(await migrateEncryption(store, { ...codecs, mode: "reencrypt" })).toMatchObject({
        scanned: 1,
        stale: 1,
        rewritten: 1,
        failedCount: 0,
      });
      const row = await rawAccess(store).get("s1");
      expect(binaryHeader(row)).toMatchObject({ version: 3, kid: "k1" });
      const stored = await store.run("raw", "read", (statements) => statements.get.get("s1", Date.now())![1]);
      expect(stored).toBeInstanceOf(Uint8Array);
    } finally {
      for (const store of stores) await store.close().catch(() => undefined);
      await cleanup();
    }
  });
});
