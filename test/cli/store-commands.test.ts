/** inspect, store setup and migrate against real stores (SQLite always; PostgreSQL/Redis when up). */
import { chmodSync, existsSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { SQLITE_SCHEMA_VERSION, SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import { serializeSession } from "../../src/runtime/persistence/serialization.js";
import type { SessionCodec } from "../../src/runtime/stores/types.js";
import { openStore } from "../../src/stores.js";
import { cli, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Stores sessions as they are, valid or not (the stored form, without validation). */
const unchecked: SessionCodec = {
  serialize: (session) => serializeSession(session, { validate: false }),
  deserialize: (text) => JSON.parse(text).session,
};

async function seeded(name: string, sessions: any[], options: { raw?: boolean } = {}): Promise<string> {
  const path = `${tmp.dir}/${name}.db`;
  const store = options.raw ? new SqliteSessionStore({ path, codec: unchecked }) : await openStore(`sqlite:${path}`);
  await store.setup();
  for (const s of sessions) await store.save(s, { expectedRevision: null });
  await store.close();
  return `sqlite:${path}`;
}

const PG = process.env.STATEBAG_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const REDIS = process.env.STATEBAG_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

async function reachable(url: string): Promise<boolean> {
  const store = await openStore(url, { connectTimeoutMs: 1000 });
  try {
    await store.scan({ limit: 1 }).catch((e: { code?: string }) => {
      if (e.code !== "store-not-set-up") throw e;
    });
    return true;
  } catch {
    return false;
  } finally {
    await store.close().catch(() => {});
  }
}

describe("statebag inspect", () => {
  it("opens SQLite read-only: never creates a store, and reads a file it may not write", async () => {
    const missing = `${tmp.dir}/missing/sessions.db`;
    const result = await cli(["inspect", "--store", `sqlite:${missing}`]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`there is no SQLite file at ${missing}`);
    expect(existsSync(`${tmp.dir}/missing`)).toBe(false);

    const url = await seeded("inspect-readonly", [sampleSession("a")]);
    const path = url.slice("sqlite:".length);
    chmodSync(path, 0o444); // root ignores this; the read-only open itself is what is checked
    const list = await cli(["inspect", "--store", url]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^a {2}revision \d+$/m);
    const exported = await cli(["export", "--to", "python", "--id", "a", "--store", url]);
    expect(exported.stderr).toBe("");
    expect(exported.code).toBe(0);
    chmodSync(path, 0o644);
  });

  it("lists sessions, then shows one: revision, stored JSON, validation", async () => {
    const url = await seeded("inspect", [sampleSession("a"), sampleSession("b")]);
    const list = await cli(["inspect", "--store", url]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^a {2}revision \d+$/m);
    expect(list.stdout).toMatch(/^b {2}revision \d+$/m);

    const one = await cli(["inspect", "--store", url, "a"]);
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/session "a"\s+revision \d+/);
    expect(one.stdout).toContain('"format": "statebag.session"');
    expect(one.stdout).toContain("✔ valid");
    expect(one.stdout).toContain("statebag.chatHistory: InMemoryChatHistoryState v3 (2 messages)");

    const json = (await cli(["inspect", "--store", url, "b", "--json"])).json();
    expect(json).toMatchObject({ ok: true, id: "b", validation: { ok: true, migrated: false } });
    expect(json.document.session.id).toBe("b");
    expect(typeof json.revision).toBe("number");
  });

  it("uses $STATEBAG_STORE when --store is absent", async () => {
    const url = await seeded("env", [sampleSession("e")]);
    const r = await cli(["inspect", "e", "--brief"], { env: { STATEBAG_STORE: url } });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('"format"');
  });

  it("exits 1 for a missing session and for a stored session that does not load", async () => {
    const bad = sampleSession("broken");
    bad.stateBag["statebag.chatHistory"].messages[0].contents[0] = { $type: "text" }; // text is required
    const url = await seeded("broken", [bad], { raw: true });
    const missing = await cli(["inspect", "--store", url, "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('session "nope" is not in');
    expect(missing.stderr).toContain("fix:");

    const broken = await cli(["inspect", "--store", url, "broken"]);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toContain("does not load");
    expect(broken.stdout).toContain("/stateBag/statebag.chatHistory/messages/0/contents/0");
  });

  it("exits 2 for an unknown store URL", async () => {
    const r = await cli(["inspect", "--store", "mongodb://x/y", "a"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown session store URL");
  });
});

describe("statebag store setup", () => {
  it("sets up a SQLite file (idempotent) and reports JSON", async () => {
    const url = `sqlite:${tmp.dir}/setup/nested/sessions.db`;
    const first = await cli(["store", "setup", "--store", url, "--json"]);
    expect(first.code).toBe(0);
    expect(first.json()).toMatchObject({ ok: true, kind: "sqlite", version: SQLITE_SCHEMA_VERSION });
    const again = await cli(["store", "setup", "--store", url]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`format version ${SQLITE_SCHEMA_VERSION}`);
  });

  it("exits 3 when the server is unreachable, with a fix", async () => {
    const r = await cli(["store", "setup", "--store", "postgres://nobody@127.0.0.1:1/none"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("unavailable");
    expect(r.stderr).toContain("fix:");
  });

  it("sets up PostgreSQL in its own schema", async (ctx) => {
    if (!(await reachable(PG))) return ctx.skip();
    const schema = `cli_test_${process.pid}`;
    const url = `${PG}?schema=${schema}`;
    try {
      const r = await cli(["store", "setup", "--store", url, "--json"]);
      expect(r.code).toBe(0);
      expect(r.json()).toMatchObject({ ok: true, kind: "postgres", changed: true });
      expect((await cli(["store", "setup", "--store", url, "--json"])).json().changed).toBe(false);
    } finally {
      const pg = await import("pg");
      const client = new pg.default.Client({ connectionString: PG });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  });

  it("sets up Redis", async (ctx) => {
    const url = `${REDIS}?prefix=cli-test-${process.pid}:`;
    if (!(await reachable(url))) return ctx.skip();
    try {
      const r = await cli(["store", "setup", "--store", url]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("redis store");
    } finally {
      const { Redis } = await import("ioredis");
      const redis = new Redis(REDIS);
      const keys = await redis.keys(`cli-test-${process.pid}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe("statebag migrate", () => {
  /** A session as the previous release stored it: history state version 1 (no droppedMessageCount). */
  const v1 = (id: string) => {
    const s = sampleSession(id);
    const { messages } = s.stateBag["statebag.chatHistory"];
    s.stateBag["statebag.chatHistory"] = { $type: "InMemoryChatHistoryState", messages };
    return s;
  };

  it("--dry-run reports what would change and writes nothing; a real run migrates; a re-run finds all current", async () => {
    const url = await seeded("migrate", [v1("m1"), v1("m2"), sampleSession("m3")], { raw: true });
    const dry = await cli(["migrate", "--store", url, "--dry-run", "--json"]);
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    expect(dry.json()).toMatchObject({ ok: true, dryRun: true, scanned: 3, migrated: 2, unchanged: 1, failedCount: 0 });
    expect((await cli(["inspect", "--store", url, "m1", "--json"])).json().validation.migrated).toBe(true);

    const run = await cli(["migrate", "--store", url]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/3 sessions in .*: 2 migrated, 1 already current/);
    expect(run.stdout).toContain("InMemoryChatHistoryState v1 -> v3: 2");
    const after = (await cli(["inspect", "--store", url, "m1", "--json"])).json();
    expect(after.validation.migrated).toBe(false);
    expect(after.document.session.stateBag["statebag.chatHistory"]).toMatchObject({
      $version: 3,
      droppedMessageCount: 0,
    });

    const again = await cli(["migrate", "--store", url, "--json"]);
    expect(again.json()).toMatchObject({ migrated: 0, unchanged: 3 });
  });

  it("exits 1 and names the session when one cannot be migrated (left as stored)", async () => {
    const bad = sampleSession("x");
    bad.stateBag["statebag.chatHistory"].messages = "nope";
    const url = await seeded("migrate-bad", [v1("ok"), bad], { raw: true });
    const r = await cli(["migrate", "--store", url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/1 cannot be migrated/);
    expect(r.stdout).toMatch(/✖ x at \/session\/stateBag\/statebag\.chatHistory/);
    expect((await cli(["inspect", "--store", url, "x"])).code).toBe(1);
  });

  it("exits 2 for a bad --batch-size", async () => {
    expect((await cli(["migrate", "--batch-size", "0", "--store", "memory:"])).code).toBe(2);
  });
});
