/**
 * Faults: a server that stops mid-run (PostgreSQL and Redis, through a local TCP proxy the test
 * kills and restarts, never the shared servers), a SQLite lock held too long, a store whose tables
 * were never set up, and a process SIGKILLed in the middle of a save.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ConflictError, StoreNotSetUpError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { POSTGRES_SCHEMA_VERSION, PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { REDIS_FORMAT_VERSION, RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { sqlitePath } from "../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { betterSqliteDriver } from "../../src/runtime/stores/sqlite/better-sqlite3.js";
import { nodeSqliteDriver } from "../../src/runtime/stores/sqlite/node-sqlite.js";
import { redactUrl } from "../../src/runtime/stores/url.js";
import {
  PG_URL,
  REDIS_URL,
  TcpProxy,
  counterOf,
  counterSession,
  available,
  serverUp,
  durableBackends,
  postgresBackend,
  redisBackend,
  sleep,
  sqliteBackend,
  betterSqliteBackend,
  uniqueName,
  type Backend,
} from "./helpers.js";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

interface ServerCase {
  name: string;
  target: URL;
  /** The store URL, pointing at the proxy port. */
  urlVia(port: number, location: string): string;
  backend: Backend;
}

const pgTarget = new URL(PG_URL);
const redisTarget = new URL(REDIS_URL);

const serverCases: ServerCase[] = (<ServerCase[]>[
  {
    name: "postgres",
    target: pgTarget,
    backend: postgresBackend(),
    urlVia(port, location) {
      // A password in the URL (trust auth ignores it) to check it never shows in errors.
      const u = new URL(location);
      u.port = String(port);
      u.password = "s3cret-pw";
      if (!u.username) u.username = "postgres";
      return u.toString();
    },
  },
  {
    name: "redis",
    target: redisTarget,
    backend: redisBackend(),
    urlVia(port, location) {
      const u = new URL(location);
      u.port = String(port);
      return u.toString();
    },
  },
]).filter((c) => available(c.backend));

describe.each(serverCases)("$name server stopped mid-run", (c: ServerCase) => {
  it("fails clearly, corrupts nothing, and the same store works once it is back", async () => {
    const { url: location, cleanup } = await c.backend.location();
    cleanups.push(cleanup);
    const proxy = new TcpProxy(c.target.hostname, Number(c.target.port));
    await proxy.start();
    cleanups.push(() => proxy.stop());
    const url = c.urlVia(proxy.port, location);
    const store = await openStore(url, { connectTimeoutMs: 1500 });
    cleanups.push(() => store.close());
    const id = "fault";
    await store.save(counterSession(id, 0), { expectedRevision: null });

    // Four concurrent incrementers on the one store object; the "server" stops right after the
    // 20th acknowledged save (others are mid-call) and comes back only once a call has failed: a
    // call that hung while the server is down instead of failing would hold the restart back until
    // vitest's timeout, so no wall-clock bound is needed.
    let acked = 0;
    let unknown = 0;
    let unavailable = 0;
    let conflicts = 0;
    const errors: unknown[] = [];
    let stopped = false;
    let restarted = false;
    let failedWhileDown!: () => void;
    const firstFailure = new Promise<void>((resolve) => (failedWhileDown = resolve));
    const deadline = Date.now() + 20_000;
    const incrementer = async () => {
      while (acked < 60 && Date.now() < deadline) {
        try {
          const loaded = await store.get(id);
          await store.save(counterSession(id, counterOf(loaded!.session) + 1), { expectedRevision: loaded!.revision });
          if (++acked === 20 && !stopped) {
            stopped = true;
            void proxy.stop().then(async () => {
              await firstFailure;
              await proxy.start();
              restarted = true;
            });
          }
        } catch (error) {
          if (error instanceof ConflictError) {
            conflicts++;
            continue;
          }
          if (!(error instanceof StoreUnavailableError)) throw error;
          unavailable++;
          if (error.outcomeUnknown) unknown++;
          errors.push(Object.assign(error, { whileDown: !restarted }));
          failedWhileDown();
          await sleep(50);
        }
      }
    };
    await Promise.all([incrementer(), incrementer(), incrementer(), incrementer()]);
    console.log(
      `${c.name}: ${acked} saves acknowledged, ${conflicts} conflicts, ${unavailable} calls failed while down (${unknown} writes with unknown outcome)`,
    );
    console.log(`  first error: ${(errors[0] as Error)?.message}`);
    expect(stopped && restarted).toBe(true);
    expect(acked).toBeGreaterThanOrEqual(60);
    expect(unavailable).toBeGreaterThan(0);

    const first = errors[0] as StoreUnavailableError;
    expect(first.code).toBe("store-unavailable");
    expect(first.message).toMatch(
      new RegExp(
        `${c.name === "postgres" ? "PostgreSQL" : "Redis"} session store at .*:${proxy.port}.* is unavailable`,
      ),
    );
    expect(first.message).not.toContain("s3cret-pw");
    expect(first.hint).toMatch(/reconnects by itself/);
    // The connection went away: nothing answered, so the hint must not say the server refused.
    for (const e of errors) expect((e as StoreUnavailableError).hint).not.toMatch(/server answered/);
    // The first failure came while the server was still down (the restart waited for it).
    expect((errors[0] as { whileDown?: boolean }).whileDown).toBe(true);

    // No corruption: the stored session is whole and counts every acknowledged save, plus at
    // most the writes whose outcome was unknown (sent, connection cut before the answer).
    const final = await store.get(id);
    expect(counterOf(final!.session)).toBeGreaterThanOrEqual(acked);
    expect(counterOf(final!.session)).toBeLessThanOrEqual(acked + unknown);
    const next = await store.save(counterSession(id, counterOf(final!.session) + 1), {
      expectedRevision: final!.revision,
    });
    expect(next).toBeGreaterThan(final!.revision);
  }, 60_000);

  it("a write whose answer never arrives is reported as outcome unknown; a reload tells", async () => {
    const { url: location, cleanup } = await c.backend.location();
    cleanups.push(cleanup);
    const proxy = new TcpProxy(c.target.hostname, Number(c.target.port));
    await proxy.start();
    cleanups.push(() => proxy.stop());
    const store = await openStore(c.urlVia(proxy.port, location), { connectTimeoutMs: 1500 });
    cleanups.push(() => store.close());
    const r1 = await store.save(counterSession("lost-reply", 1), { expectedRevision: null });
    // The server gets the write and applies it, but the answer is lost with the connection.
    proxy.dropReplies = true;
    const pending = store.save(counterSession("lost-reply", 2), { expectedRevision: r1 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await sleep(300);
    await proxy.stop();
    const error = await pending;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).outcomeUnknown).toBe(true);
    expect((error as Error).message).toMatch(/the write may or may not have been applied/);
    expect((error as StoreUnavailableError).hint).toMatch(/reload the session/);
    proxy.dropReplies = false;
    await proxy.start();
    const now = await store.get("lost-reply");
    expect(now!.revision).toBeGreaterThan(r1);
    expect(counterOf(now!.session)).toBe(2);
    // Blindly retrying the same write would now conflict instead of applying it twice.
    await expect(store.save(counterSession("lost-reply", 2), { expectedRevision: r1 })).rejects.toBeInstanceOf(
      ConflictError,
    );
  }, 30_000);

  it("a server that is down from the start fails fast with a clear error, then works", async () => {
    const { url: location, cleanup } = await c.backend.location();
    cleanups.push(cleanup);
    const proxy = new TcpProxy(c.target.hostname, Number(c.target.port));
    await proxy.start();
    const port = proxy.port;
    await proxy.stop();
    const url = c.urlVia(port, location);
    // A connect timeout beyond the test's own: only a refused connection failing at once (not
    // waiting out the timeout) lets this test finish.
    const store = await openStore(url, { connectTimeoutMs: 120_000 });
    cleanups.push(() => store.close());
    const error = await errorOf(store.save(counterSession("x"), { expectedRevision: null }));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).outcomeUnknown).toBe(false);
    expect(String((error as Error).message)).toContain("ECONNREFUSED");
    expect(String((error as Error).message)).not.toContain("s3cret-pw");
    await expect(store.messages.getMessages("x")).rejects.toBeInstanceOf(StoreUnavailableError);
    proxy.port = port;
    await proxy.start();
    cleanups.push(() => proxy.stop());
    expect(await store.save(counterSession("x"), { expectedRevision: null })).toBeGreaterThan(0);
    expect(await store.get("x")).toBeDefined();
  }, 30_000);
});

describe.skipIf(!serverUp.postgres)("PostgreSQL setup is explicit", () => {
  it("a store without tables says to run setup; setup() is idempotent and records its version", async () => {
    const schema = `sbtest_${uniqueName()}`;
    const store = new PostgresSessionStore({ connectionString: PG_URL, schema });
    cleanups.push(async () => {
      await store.dropSchema();
      await store.close();
    });
    const error = await errorOf(store.get("a"));
    expect(error).toBeInstanceOf(StoreNotSetUpError);
    expect((error as Error).message).toContain(`schema "${schema}"`);
    expect((error as StoreNotSetUpError).hint).toContain("statebag store setup --store");
    expect(await store.setup()).toEqual({ version: POSTGRES_SCHEMA_VERSION, changed: true });
    expect(await store.setup()).toEqual({ version: POSTGRES_SCHEMA_VERSION, changed: false });
    expect(await store.get("a")).toBeUndefined();
    await store.save(counterSession("a"), { expectedRevision: null });

    // Setting up twice at once (two deploys racing) is serialized by an advisory lock.
    const other = new PostgresSessionStore({ connectionString: PG_URL, schema: `${schema}_b` });
    cleanups.push(async () => {
      await other.dropSchema();
      await other.close();
    });
    const both = await Promise.all([
      other.setup(),
      new PostgresSessionStore({ connectionString: PG_URL, schema: `${schema}_b` }).setup(),
    ]);
    expect(both.map((r) => r.changed).sort()).toEqual([false, true]);

    // A newer format than this code knows is refused, not misread.
    const pg = createRequire(import.meta.url)("pg") as typeof import("pg");
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`UPDATE "${schema}".statebag_meta SET value = '99' WHERE key = 'schema_version'`);
    await client.end();
    const fresh = new PostgresSessionStore({ connectionString: PG_URL, schema });
    const newer = await errorOf(fresh.get("a"));
    await fresh.close();
    expect(newer).toBeInstanceOf(StoreNotSetUpError);
    expect((newer as Error).message).toMatch(/format 99, newer/);
  });
});

describe.skipIf(!serverUp.redis)("Redis setup", () => {
  it("records its format version once, and never marks a newer format as older", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const store = new RedisSessionStore({ url: REDIS_URL, prefix });
    cleanups.push(async () => {
      await store.deleteAll();
      await store.close();
    });
    expect(await store.setup()).toEqual({ version: REDIS_FORMAT_VERSION, changed: true });
    expect(await store.setup()).toEqual({ version: REDIS_FORMAT_VERSION, changed: false });
    await store.call("test", true, (c) => c.hset(`${prefix}meta`, "format", "99"));
    const newer = await errorOf(store.setup());
    expect(newer).toBeInstanceOf(StoreNotSetUpError);
    expect((newer as Error).message).toMatch(/format 99, newer/);
    expect(await store.call("test", false, (c) => c.hget(`${prefix}meta`, "format"))).toBe("99");
  });

  it("every call checks the format marker (once per store object): a fresh prefix needs no setup, a newer format is refused", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const store = new RedisSessionStore({ url: REDIS_URL, prefix });
    cleanups.push(async () => {
      await store.deleteAll();
      await store.close();
    });
    // A fresh prefix (no marker) works without setup, as before, and gets no marker from use.
    const client = await store.call("test", false, async (c) => c, false);
    const hget = vi.spyOn(client, "hget");
    await Promise.all([store.get("a"), store.get("b"), store.messages.getMessages("a")]);
    await store.save(counterSession("a"), { expectedRevision: null });
    expect(await store.get("a")).toBeDefined();
    expect(hget.mock.calls.filter(([key]) => key === `${prefix}meta`)).toHaveLength(1);
    hget.mockRestore();
    expect(await store.call("test", false, (c) => c.exists(`${prefix}meta`))).toBe(0);

    // A newer statebag marked the prefix: a new store object refuses every call, and writes nothing.
    await store.call("test", true, (c) => c.hset(`${prefix}meta`, "format", "99"));
    const newer = new RedisSessionStore({ url: REDIS_URL, prefix });
    cleanups.push(() => newer.close());
    for (const call of [
      () => newer.get("a"),
      () => newer.save(counterSession("b"), { expectedRevision: null }),
      () => newer.scan(),
      () => newer.messages.appendMessages("a", [], { operationId: "op-1" }),
    ]) {
      const error = await errorOf(call());
      expect(error).toBeInstanceOf(StoreNotSetUpError);
      expect((error as Error).message).toMatch(
        /Redis store at .* \(prefix "sbtest:.*"\) has storage format 99, newer than this statebag knows \(\d+\)/,
      );
      expect((error as StoreNotSetUpError).hint).toMatch(/upgrade statebag/);
    }
    expect(await store.call("test", false, (c) => c.exists(`${prefix}s:b`, `${prefix}mo:a`))).toBe(0);
    expect(await store.call("test", false, (c) => c.hget(`${prefix}meta`, "format"))).toBe("99");
  });
});

describe.each([sqliteBackend, betterSqliteBackend].filter(available))(
  "$name: lock held by another connection",
  (backend: Backend) => {
    it("reports the store unavailable after busyTimeoutMs, and works once the lock is released", async () => {
      const { url, cleanup } = await backend.location();
      cleanups.push(cleanup);
      const store = await openStore(url, { busyTimeoutMs: 150 });
      cleanups.push(() => store.close());
      const r1 = await store.save(counterSession("s", 1), { expectedRevision: null });
      // The lock holder uses the store's own driver: two SQLite libraries in one process do not see each other's locks.
      const other = (backend.name === "sqlite" ? nodeSqliteDriver : betterSqliteDriver).open(sqlitePath(url), {
        readOnly: false,
        busyTimeoutMs: 0,
      });
      other.exec("BEGIN IMMEDIATE");
      const error = await errorOf(store.save(counterSession("s", 2), { expectedRevision: r1 }));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(/SQLite session store at sqlite:.* is unavailable \(save: SQLITE_BUSY/);
      expect((error as StoreUnavailableError).hint).toMatch(/busyTimeoutMs \(150 ms\).*works once it is released/);
      expect((error as StoreUnavailableError).hint).not.toMatch(/reconnects/);
      expect(counterOf((await store.get("s"))!.session)).toBe(1); // readers are not blocked (WAL)
      other.exec("ROLLBACK");

      // It waits for the lock instead of failing at once: with a wait longer than the test's own
      // timeout, a save started while the lock is held is still pending after a few retry pauses,
      // and completes only after the lock is released.
      const patient = await openStore(url, { busyTimeoutMs: 120_000 });
      cleanups.push(() => patient.close());
      const events: string[] = [];
      other.exec("BEGIN IMMEDIATE");
      const pending = patient.save(counterSession("s", 2), { expectedRevision: r1 }).then(
        (revision) => (events.push("saved"), revision),
        (e: unknown) => (events.push("failed"), Promise.reject(e)),
      );
      await sleep(50);
      events.push("released");
      other.exec("ROLLBACK");
      other.close();
      expect(await pending).toBeGreaterThan(r1);
      expect(events).toEqual(["released", "saved"]);
    });
  },
);

describe.each(durableBackends)("$name: a process killed in the middle of a save", (backend: Backend) => {
  it("leaves the previous revision intact and readable", async () => {
    const { url, cleanup } = await backend.location();
    cleanups.push(cleanup);
    const store: SessionStore = await openStore(url);
    cleanups.push(() => store.close());
    const id = "killed";
    await store.save(counterSession(id, 0), { expectedRevision: null });
    const script = fileURLToPath(new URL("./workers/slow-writer.ts", import.meta.url));

    let lastAcked = 0;
    const outcomes: string[] = [];
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, ["--import", "tsx", script, url, id, String(2_000_000)], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on("exit", (_code, signal) => resolve(signal)),
      );
      let buffered = "";
      const acks = 3;
      await new Promise<void>((resolve, reject) => {
        let seen = 0;
        let writingAt = 0;
        const durations: number[] = [];
        child.stdout.on("data", (d: Buffer) => {
          buffered += d.toString();
          const lines = buffered.split("\n");
          buffered = lines.pop()!;
          for (const line of lines) {
            const [word, value] = line.split(" ");
            if (word === "writing") {
              writingAt = performance.now();
              if (seen === acks) {
                // Kill somewhere inside this save (serialize + write), from how long saves took.
                const typical = durations.reduce((a, b) => a + b, 0) / durations.length;
                setTimeout(() => child.kill("SIGKILL"), typical * (0.2 + 0.8 * Math.random()));
                resolve();
              }
            } else if (word === "saved") {
              durations.push(performance.now() - writingAt);
              lastAcked = Number(value);
              seen++;
            }
          }
        });
        child.on("exit", () => reject(new Error(`writer exited before ${acks} saves: ${stderr}`)));
      });
      expect(await exited).toBe("SIGKILL");
      const lines = (buffered + "\n").split("\n").filter((l) => l.startsWith("saved "));
      if (lines.length) lastAcked = Number(lines[lines.length - 1].split(" ")[1]);

      // Either the last acknowledged revision or the one in flight, never a torn mix. On
      // PostgreSQL the server may still commit the dead client's statement a moment later: the
      // compare-and-swap below then conflicts instead of overwriting it, and a reload sees it.
      let lateCommit = false;
      for (;;) {
        const loaded = await store.get(id);
        const state = loaded!.session.stateBag.counter as unknown as { value: number; payload: string };
        expect([lastAcked, lastAcked + 1]).toContain(state.value);
        expect(state.payload).toBe(String(state.value % 10).repeat(2_000_000));
        try {
          const next = await store.save({ ...loaded!.session }, { expectedRevision: loaded!.revision });
          expect(next).toBeGreaterThan(loaded!.revision);
          await expect(store.save(loaded!.session, { expectedRevision: loaded!.revision })).rejects.toBeInstanceOf(
            ConflictError,
          );
          outcomes.push(
            state.value === lastAcked ? "previous" : lateCommit ? "in-flight committed late" : "in-flight committed",
          );
          lastAcked = state.value;
          break;
        } catch (error) {
          if (!(error instanceof ConflictError) || lateCommit || state.value !== lastAcked) throw error;
          lateCommit = true;
        }
      }
    }
    console.log(`${backend.name}: after SIGKILL the store held: ${outcomes.join(", ")}`);
    if (backend.name.startsWith("sqlite")) {
      const driver = backend.name === "sqlite" ? nodeSqliteDriver : betterSqliteDriver;
      const db = driver.open(sqlitePath(url), { readOnly: true, busyTimeoutMs: 1000 });
      expect(db.prepare("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      db.close();
    }
  }, 60_000);
});

describe("redactUrl", () => {
  it("hides passwords and secret parameters", () => {
    expect(redactUrl("postgres://app:hunter2@db.example:5432/prod?schema=s")).toBe(
      "postgres://app:***@db.example:5432/prod?schema=s",
    );
    expect(redactUrl("redis://:hunter2@cache:6379/0")).toBe("redis://:***@cache:6379/0");
    expect(redactUrl("postgres://db/x?password=hunter2")).not.toContain("hunter2");
    expect(redactUrl("sqlite:./x.db")).toBe("sqlite:./x.db");
  });
});
