/**
 * #23 beyond the conformance kit: the format-1 -> 2 upgrade of SQLite and PostgreSQL (old rows keep
 * loading, are listed by no owner, get their times lazily), and withSession's owner rule.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { createSessionData } from "../../src/index.js";
import {
  MemorySessionStore,
  POSTGRES_SCHEMA_VERSION,
  PostgresSessionStore,
  SessionNotFoundError,
  SessionOwnerError,
  SQLITE_SCHEMA_VERSION,
  SqliteSessionStore,
  StoreNotSetUpError,
  withSession,
} from "../../src/stores.js";
import { PG_URL, uniqueName } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-listing-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const doc = (id: string) => JSON.stringify({ id, stateBag: {} });

describe("SQLite format 1 -> current", () => {
  it("upgrades on a writable open; old rows load, are unowned, and get createdAt from their last update", async () => {
    const path = join(dir, "v1.db");
    const raw = new DatabaseSync(path);
    raw.exec(`CREATE TABLE statebag_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      INSERT INTO statebag_meta VALUES ('revision', 1), ('schema_version', 1);
      CREATE TABLE statebag_sessions (id TEXT PRIMARY KEY, revision INTEGER NOT NULL, data TEXT NOT NULL, expires_at INTEGER, updated_at INTEGER NOT NULL);`);
    raw.prepare("INSERT INTO statebag_sessions VALUES ('old', 1, ?, NULL, 1700000000000)").run(doc("old"));
    raw.close();
    const readOnly = new SqliteSessionStore({ path, readOnly: true });
    await expect(readOnly.get("old")).rejects.toThrow(StoreNotSetUpError);
    await readOnly.close();
    const store = new SqliteSessionStore({ path });
    expect(await store.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
    const old = (await store.get("old"))!;
    expect(old.meta).toEqual({ createdAt: "2023-11-14T22:13:20.000Z", updatedAt: "2023-11-14T22:13:20.000Z" });
    await expect(store.save(old.session, { expectedRevision: old.revision, meta: { owner: "a" } })).rejects.toThrow(
      SessionOwnerError,
    );
    await store.save(old.session, { expectedRevision: old.revision, meta: { title: "kept" } });
    const saved = (await store.get("old"))!.meta;
    expect(saved.createdAt).toBe("2023-11-14T22:13:20.000Z");
    expect(saved.title).toBe("kept");
    expect((await store.list({ owner: "a" })).items).toEqual([]);
    await store.close();
    const again = new SqliteSessionStore({ path });
    expect(await again.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: false });
    await again.close();
  });

  it("the listing queries read an owner index only: by time, the covering index from the page on", async () => {
    const raw = new DatabaseSync(join(dir, "plan.db"));
    const store = new SqliteSessionStore({ path: join(dir, "plan.db") });
    await store.setup();
    const { SQLITE_SQL } = await import("../../src/runtime/stores/sqlite/sql.js");
    const cases: [string, unknown[], RegExp][] = [
      [
        SQLITE_SQL.listNewest,
        ["o", 0, 5, "x", 10],
        /COVERING INDEX statebag_sessions_owner_list \(owner=\? AND \(updated_at,id\)<\(\?,\?\)\)/,
      ],
      [
        SQLITE_SQL.listByTimeAny,
        ["o", 0, 1, 5, "x", 10],
        /COVERING INDEX statebag_sessions_owner_list \(owner=\? AND updated_at>\? AND \(updated_at,id\)<\(\?,\?\)\)/,
      ],
      [
        SQLITE_SQL.listByTime,
        ["o", 0, 1, "{}", 5, "x", 10],
        /COVERING INDEX statebag_sessions_owner_list \(owner=\? AND updated_at>\? AND \(updated_at,id\)<\(\?,\?\)\)/,
      ],
      [SQLITE_SQL.listByIdAny, ["o", 0, 1, 0, "", 10], /statebag_sessions_owner_id/],
      [SQLITE_SQL.listById, ["o", 0, 1, 0, "{}", "", 10], /statebag_sessions_owner_id/],
    ];
    for (const [sql, params, index] of cases) {
      const plan = raw
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...(params as string[]))
        .map((r) => String(r.detail))
        .join("\n");
      expect(plan).toMatch(index);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
    raw.close();
    await store.close();
  });

  it("adds the listing index to a file of the current format written before it, in place of the old index", async () => {
    const path = join(dir, "before-listing-index.db");
    const writer = new SqliteSessionStore({ path });
    for (let i = 0; i < 30; i++) {
      const session = createSessionData({ id: `s${String(i).padStart(2, "0")}` });
      await writer.save(session, {
        expectedRevision: null,
        meta: { owner: i % 3 === 0 ? "a" : "b", title: `t${i}`, labels: { n: String(i % 2) } },
      });
    }
    await writer.close();
    // What the previous release left: format 5 with format 2's narrower owner index.
    const raw = new DatabaseSync(path);
    raw.exec(`DROP INDEX statebag_sessions_owner_list;
      CREATE INDEX statebag_sessions_owner_updated ON statebag_sessions (owner, updated_at DESC, id DESC) WHERE owner IS NOT NULL`);
    raw.close();
    const indexes = () => {
      const db = new DatabaseSync(path, { readOnly: true });
      const names = db
        .prepare(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'statebag_sessions_owner%' ORDER BY name",
        )
        .all()
        .map((r) => r.name);
      db.close();
      return names;
    };
    // A read-only store cannot add it and lists the same through the old index.
    const reader = new SqliteSessionStore({ path, readOnly: true });
    const before = await reader.list({ owner: "a", limit: 4 });
    await reader.close();
    expect(indexes()).toEqual(["statebag_sessions_owner_id", "statebag_sessions_owner_updated"]);
    const store = new SqliteSessionStore({ path });
    expect(await store.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
    expect(indexes()).toEqual(["statebag_sessions_owner_id", "statebag_sessions_owner_list"]);
    const after = await store.list({ owner: "a", limit: 4 });
    expect(after).toEqual(before);
    expect(after.items.map((x) => x.id)).toEqual(["s27", "s24", "s21", "s18"]);
    expect(after.items[0].meta).toMatchObject({ owner: "a", title: "t27", labels: { n: "1" } });
    const rest = await store.list({ owner: "a", limit: 20, cursor: after.cursor });
    expect(rest.items.map((x) => x.id)).toEqual(["s15", "s12", "s09", "s06", "s03", "s00"]);
    expect(rest.cursor).toBeUndefined();
    await store.close();
    const again = new SqliteSessionStore({ path });
    expect(await again.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: false });
    await again.close();
  });

  it("updatedBefore and the cursor bound a page together, whichever is earlier", async () => {
    const store = new SqliteSessionStore({ path: join(dir, "bounds.db") });
    const base = Date.parse("2025-01-01T00:00:00.000Z");
    const raw = new DatabaseSync(join(dir, "bounds.db"));
    for (let i = 0; i < 10; i++)
      await store.save(createSessionData({ id: `b${i}` }), { expectedRevision: null, meta: { owner: "o" } });
    const setTime = raw.prepare("UPDATE statebag_sessions SET updated_at = ? WHERE id = ?");
    for (let i = 0; i < 10; i++) setTime.run(base + i * 1000, `b${i}`);
    raw.close();
    const at = (i: number) => new Date(base + i * 1000).toISOString();
    const ids = (page: { items: { id: string }[] }) => page.items.map((x) => x.id);
    const first = await store.list({ owner: "o", limit: 3 });
    expect(ids(first)).toEqual(["b9", "b8", "b7"]);
    // The cursor is earlier than updatedBefore: the cursor bounds.
    expect(ids(await store.list({ owner: "o", limit: 3, cursor: first.cursor, updatedBefore: at(9) }))).toEqual([
      "b6",
      "b5",
      "b4",
    ]);
    // updatedBefore is earlier than the cursor: it bounds (strictly before).
    expect(ids(await store.list({ owner: "o", limit: 3, cursor: first.cursor, updatedBefore: at(3) }))).toEqual([
      "b2",
      "b1",
      "b0",
    ]);
    // Both bounds and a lower one, with labels to match (the general statement).
    expect(
      ids(await store.list({ owner: "o", limit: 5, updatedBefore: at(6), updatedAfter: at(2), labels: {} })),
    ).toEqual(["b5", "b4", "b3"]);
    await store.close();
  });
});

describe("PostgreSQL format 1 -> 2", () => {
  it("says to run setup, upgrades in setup (idempotent), and old rows keep loading", async () => {
    const schema = `s_${uniqueName()}`;
    const store = new PostgresSessionStore({ connectionString: PG_URL, schema });
    await store.dropSchema();
    const raw = (store as unknown as { pool: { query(sql: string, params?: unknown[]): Promise<unknown> } }).pool;
    await raw.query(`CREATE SCHEMA "${schema}"`);
    await raw.query(`CREATE TABLE "${schema}".statebag_meta (key text PRIMARY KEY, value text NOT NULL)`);
    await raw.query(`INSERT INTO "${schema}".statebag_meta VALUES ('schema_version', '1')`);
    await raw.query(`CREATE SEQUENCE "${schema}".statebag_revision_seq AS bigint`);
    await raw.query(
      `CREATE TABLE "${schema}".statebag_sessions (id text COLLATE "C" PRIMARY KEY, revision bigint NOT NULL, data text NOT NULL, expires_at timestamptz, updated_at timestamptz NOT NULL DEFAULT now())`,
    );
    await raw.query(`INSERT INTO "${schema}".statebag_sessions VALUES ('old', 1, $1, NULL, '2023-11-14T22:13:20Z')`, [
      doc("old"),
    ]);
    try {
      await expect(store.get("old")).rejects.toThrow(
        new RegExp(`storage format 1; this statebag needs ${POSTGRES_SCHEMA_VERSION}`),
      );
      const fresh = new PostgresSessionStore({ connectionString: PG_URL, schema });
      expect(await fresh.setup()).toEqual({ version: POSTGRES_SCHEMA_VERSION, changed: true });
      expect(await fresh.setup()).toEqual({ version: POSTGRES_SCHEMA_VERSION, changed: false });
      const old = (await fresh.get("old"))!;
      expect(old.meta).toEqual({ createdAt: "2023-11-14T22:13:20.000Z", updatedAt: "2023-11-14T22:13:20.000Z" });
      await fresh.save(old.session, { expectedRevision: old.revision, meta: { labels: { k: "v" } } });
      const meta = (await fresh.get("old"))!.meta;
      expect([meta.createdAt, meta.labels, meta.owner]).toEqual(["2023-11-14T22:13:20.000Z", { k: "v" }, undefined]);
      await fresh.close();
    } finally {
      await store.dropSchema();
      await store.close();
    }
  });
});

describe("withSession({ owner })", () => {
  it("never loads or overwrites another owner's session, and says nothing about it", async () => {
    const store = new MemorySessionStore();
    await withSession(store, "s1", () => undefined, {
      owner: "alice",
      meta: { title: "Trip", labels: { kind: "chat" } },
    });
    const saved = (await store.get("s1"))!;
    expect(saved.meta).toMatchObject({ owner: "alice", title: "Trip", labels: { kind: "chat" } });
    let ran = false;
    const error = await withSession(
      store,
      "s1",
      () => {
        ran = true;
      },
      { owner: "mallory" },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionNotFoundError);
    expect(String((error as Error).message) + (error as { hint: string }).hint).not.toContain("alice");
    expect(ran).toBe(false);
    expect((await store.get("s1"))!.revision).toBe(saved.revision);
    await store.save(saved.session, { expectedRevision: saved.revision, meta: {} });
    const unowned = await withSession(store, "s2", () => undefined).then(() =>
      withSession(store, "s2", () => undefined, { owner: "alice" }).catch((e: unknown) => e),
    );
    expect(unowned).toBeInstanceOf(SessionNotFoundError);
    const updated = await withSession(store, "s1", () => undefined, { owner: "alice", meta: { title: "Renamed" } });
    expect(updated.created).toBe(false);
    expect((await store.get("s1"))!.meta).toMatchObject({ owner: "alice", title: "Renamed", labels: { kind: "chat" } });
    expect((await store.list({ owner: "alice" })).items.map((i) => i.id)).toEqual(["s1"]);
  });
});
