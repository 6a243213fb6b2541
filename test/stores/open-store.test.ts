/** `openStore(url)`: picking and configuring a store from a URL. */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { DEFAULT_STORE_URL, openStore, sqlitePath } from "../../src/runtime/open-store/open-store.js";
import { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { SQLITE_SCHEMA_VERSION, SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import { counterSession } from "./helpers.js";

describe("openStore", () => {
  it("defaults to the SQLite file ./.statebag/sessions.db", () => {
    expect(DEFAULT_STORE_URL).toBe("sqlite:./.statebag/sessions.db");
    expect(sqlitePath(DEFAULT_STORE_URL)).toBe("./.statebag/sessions.db");
    expect(sqlitePath("sqlite:///var/lib/app/s.db")).toBe("/var/lib/app/s.db");
    expect(sqlitePath("sqlite:./a%20b.db?busyTimeout=10")).toBe("./a b.db");
    expect(() => sqlitePath("sqlite:")).toThrow(ConfigurationError);
  });

  it("creates the SQLite file's directories and sets the file up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "statebag-open-"));
    try {
      const store = await openStore(`sqlite:${join(dir, "a", "b", "sessions.db")}`);
      expect(store).toBeInstanceOf(SqliteSessionStore);
      expect(store.kind).toBe("sqlite");
      expect(existsSync(join(dir, "a", "b", "sessions.db"))).toBe(true);
      // Opening a new file created its tables: setup() says so (`statebag store setup` prints "set up").
      expect(await store.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
      await store.save(counterSession("s"), { expectedRevision: null });
      await store.close();
      const again = await openStore(`sqlite:${join(dir, "a", "b", "sessions.db")}`);
      expect(await again.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: false });
      expect(await again.get("s")).toBeDefined();
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("SQLite setup() reports whether opening created the tables", async () => {
    const dir = mkdtempSync(join(tmpdir(), "statebag-open-"));
    try {
      const path = join(dir, "sessions.db");
      const fresh = new SqliteSessionStore({ path });
      expect(await fresh.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
      expect(await fresh.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true }); // still the store that created them
      await fresh.close();
      const existing = new SqliteSessionStore({ path });
      expect(await existing.get("none")).toBeUndefined(); // opened by a normal call first
      expect(await existing.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: false });
      await existing.close();
      const memory = new SqliteSessionStore({ path: ":memory:" });
      expect(await memory.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: true });
      await memory.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("picks memory, PostgreSQL and Redis from the scheme, with schema/prefix from the URL", async () => {
    const memory = await openStore("memory:");
    expect(memory).toBeInstanceOf(MemorySessionStore);
    expect(await memory.setup()).toEqual({ version: 1, changed: false });

    const pg = await openStore("postgresql://app:hunter2@db.invalid:5432/prod?schema=tenant_1");
    expect(pg).toBeInstanceOf(PostgresSessionStore);
    expect((pg as PostgresSessionStore).schema).toBe("tenant_1");
    expect(pg.url).toBe("postgresql://app:***@db.invalid:5432/prod?schema=tenant_1");
    await pg.close();
    expect(((await openStore("postgres://db.invalid/x")) as PostgresSessionStore).schema).toBe("public");
    await expect(openStore("postgres://db.invalid/x?schema=bad-name;drop")).rejects.toBeInstanceOf(ConfigurationError);

    const redis = await openStore("redis://:hunter2@cache.invalid:6379/2?prefix=app%3Asessions%3A");
    expect(redis).toBeInstanceOf(RedisSessionStore);
    expect((redis as RedisSessionStore).prefix).toBe("app:sessions:");
    expect(redis.url).not.toContain("hunter2");
    await redis.close();
    expect(((await openStore("redis://cache.invalid")) as RedisSessionStore).prefix).toBe("statebag:");
  });

  it("refuses an unknown scheme, naming the accepted ones", async () => {
    const error = await openStore("mongodb://user:pw@h/db").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain("mongodb://user:***@h/db");
    expect((error as ConfigurationError).hint).toMatch(/memory:.*sqlite:.*postgres:.*redis:/s);
  });
});
