/**
 * The SQLite store's own behaviour, beyond the conformance suite every store runs: its URL
 * options, the two drivers (one file format: written by one, read by the other), waiting for
 * another process's lock without blocking the event loop, read-only opening, a corrupt file, and
 * the node:sqlite warning on Node 22.
 */
import { fork, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError, StatebagError } from "../../src/runtime/core/errors.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { StoreNotSetUpError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { SQLITE_SCHEMA_VERSION, SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";
import type { SqliteDriverName } from "../../src/runtime/stores/sqlite/driver.js";
import { parseSqliteUrl } from "../../src/runtime/stores/sqlite/url.js";
import { betterSqliteInstalled, counterOf, counterSession, sleep } from "./helpers.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const workers = fileURLToPath(new URL("./workers/", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "statebag-sqlite-"));
  dirs.push(dir);
  return dir;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}

const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });

describe("sqlite: URL options", () => {
  it("reads the path and each option, and accepts file: URIs without creating a folder named file:", async () => {
    expect(
      parseSqliteUrl("sqlite:./a.db?busyTimeout=250&synchronous=full&driver=better-sqlite3&readOnly=true"),
    ).toEqual({
      path: "./a.db",
      busyTimeoutMs: 250,
      synchronous: "full",
      driver: "better-sqlite3",
      readOnly: true,
    });
    expect(parseSqliteUrl("sqlite:file:/var/x.db").path).toBe("/var/x.db");
    expect(parseSqliteUrl("sqlite:file:///var/x%20y.db").path).toBe("/var/x y.db");
    expect(parseSqliteUrl("sqlite:file://localhost/var/x.db").path).toBe("/var/x.db");
    expect(parseSqliteUrl("sqlite:file:rel/x.db?driver=node:sqlite")).toEqual({
      path: "rel/x.db",
      driver: "node:sqlite",
    });
    expect(parseSqliteUrl("sqlite::memory:").path).toBe(":memory:");

    const dir = tempDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const store = await openStore(`sqlite:file://${dir}/sub/sessions.db`);
      await store.save(counterSession("s"), { expectedRevision: null });
      await store.close();
      expect(existsSync(join(dir, "sub", "sessions.db"))).toBe(true);
      expect(readdirSync(dir)).toEqual(["sub"]); // no "file:" folder in the working directory
    } finally {
      process.chdir(cwd);
    }
  });

  it.each([
    ["sqlite:./a.db?synchronous=off", /\?synchronous= must be "normal" or "full", got "off"/],
    ["sqlite:./a.db?synchronous=NORMAL;%20PRAGMA%20writable_schema=1", /\?synchronous= must be "normal" or "full"/],
    ["sqlite:./a.db?busyTimeout=-1", /\?busyTimeout= must be a non-negative whole number/],
    ["sqlite:./a.db?busyTimeout=1e3", /\?busyTimeout= must be a non-negative whole number/],
    ["sqlite:./a.db?driver=mysql", /unknown SQLite driver "mysql"/],
    ["sqlite:./a.db?readOnly=yes", /\?readOnly= must be "true" or "false"/],
    ["sqlite:./a.db?busytimeout=10", /unknown option \?busytimeout=/],
    ["sqlite:./a.db?busyTimeout=1&busyTimeout=2", /gives \?busyTimeout= twice/],
    ["sqlite:./a%zz.db", /malformed percent-escape in its path/],
    ["sqlite:./a.db?driver=%zz", /malformed percent-escape in its query string/],
    ["sqlite:file://db.example/x.db", /names the host "db.example"; SQLite opens local files only/],
    ["sqlite:?busyTimeout=1", /has no file path/],
    ["sqlite:./a%00.db", /NUL character/],
  ])("refuses %s with a ConfigurationError", async (url, message) => {
    const error = await errorOf(openStore(url));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(message);
    expect((error as ConfigurationError).hint).toBeTruthy();
  });

  it("checks options given in code the same way", () => {
    expect(() => new SqliteSessionStore({ path: ":memory:", synchronous: "off" as "full" })).toThrow(
      /synchronous must be "normal" or "full"/,
    );
    expect(() => new SqliteSessionStore({ path: ":memory:", busyTimeoutMs: -5 })).toThrow(ConfigurationError);
    expect(() => new SqliteSessionStore({ path: ":memory:", driver: "sqlite3" as SqliteDriverName })).toThrow(
      /unknown SQLite driver/,
    );
    expect(() => new SqliteSessionStore({ path: ":memory:", readOnly: true })).toThrow(
      /read-only SQLite store needs a file/,
    );
  });
});

describe("sqlite: drivers", () => {
  it("uses node:sqlite unless the URL or the options pick better-sqlite3", async () => {
    const dir = tempDir();
    const byDefault = (await openStore(`sqlite:${join(dir, "a.db")}`)) as SqliteSessionStore;
    expect(byDefault.driver).toBe("node:sqlite");
    await byDefault.close();
    const fromOption = new SqliteSessionStore({ path: join(dir, "a.db"), driver: "better-sqlite3" });
    expect(fromOption.driver).toBe("better-sqlite3");
    const overridden = new SqliteSessionStore({ path: join(dir, "a.db") });
    expect(overridden.driver).toBe("node:sqlite");
    await overridden.close();
    await fromOption.close();
  });

  it.skipIf(!betterSqliteInstalled)(
    "refuses to open one file through both drivers at once in one process",
    async () => {
      const path = join(tempDir(), "sessions.db");
      const first = await openStore(`sqlite:${path}`);
      const second = await openStore(`sqlite:${path}`); // the same driver twice is fine
      const error = await errorOf(openStore(`sqlite:${path}?driver=better-sqlite3`));
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(/already open in this process through the node:sqlite driver/);
      await first.close();
      await errorOf(openStore(`sqlite:${path}?driver=better-sqlite3`));
      await second.close();
      const better = await openStore(`sqlite:${path}?driver=better-sqlite3`);
      expect(await better.get("none")).toBeUndefined();
      await better.close();
    },
  );

  describe.skipIf(!betterSqliteInstalled)("a file written by one driver opens with the other, nothing lost", () => {
    it.each([
      ["better-sqlite3", "node:sqlite"],
      ["node:sqlite", "better-sqlite3"],
    ] as [SqliteDriverName, SqliteDriverName][])("written by %s, read and written by %s", async (writer, reader) => {
      const path = join(tempDir(), "sessions.db");
      const first = await openStore(`sqlite:${path}`, { sqliteDriver: writer });
      expect((first as SqliteSessionStore).driver).toBe(writer);
      const revisions: number[] = [];
      for (let i = 0; i < 20; i++)
        revisions.push(await first.save(counterSession(`s${i}`, i, { note: `ü ${i} 🙂` }), { expectedRevision: null }));
      revisions[3] = await first.save(counterSession("s3", 33), { expectedRevision: revisions[3] });
      await first.delete("s19");
      await first.save(counterSession("ttl", 1), { expectedRevision: null, ttlMs: 3_600_000 });
      await first.messages.appendMessages("log", [user("one"), user("two"), user("three")], { operationId: "op-1" });
      await first.messages.trimMessages("log", { keepLast: 2 });
      const logVersion = (await first.messages.readMessages("log")).version;
      const page = await first.scan({ limit: 100, includeText: true });
      await first.close();

      const second = await openStore(`sqlite:${path}`, { sqliteDriver: reader });
      expect((second as SqliteSessionStore).driver).toBe(reader);
      expect(await second.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: false });
      // Identical pages, except the TTL left, which has run down a little meanwhile.
      const withoutTtl = (p: typeof page) =>
        p.items.map(({ ttlMs, ...item }) => ({ ...item, hasTtl: ttlMs !== undefined }));
      const again = await second.scan({ limit: 100, includeText: true });
      expect(withoutTtl(again)).toEqual(withoutTtl(page));
      expect(again.items.find((item) => item.id === "ttl")!.ttlMs).toBeGreaterThan(3_500_000);
      for (let i = 0; i < 19; i++) {
        const loaded = await second.get(`s${i}`);
        expect(loaded?.revision).toBe(revisions[i]);
        expect(counterOf(loaded!.session)).toBe(i === 3 ? 33 : i);
      }
      expect(await second.get("s19")).toBeUndefined();
      expect(await second.messages.readMessages("log")).toEqual({
        messages: [user("two"), user("three")],
        version: logVersion,
      });
      // The same operation id is still recognized, and revisions keep increasing across drivers.
      expect(await second.messages.appendMessages("log", [user("one")], { operationId: "op-1" })).toEqual({
        applied: false,
        version: logVersion,
      });
      const next = await second.save(counterSession("s0", 100), { expectedRevision: revisions[0] });
      expect(next).toBeGreaterThan(Math.max(...revisions, logVersion));
      await second.close();

      // And back: the first driver reads what the second wrote.
      const third = await openStore(`sqlite:${path}`, { sqliteDriver: writer });
      expect(counterOf((await third.get("s0"))!.session)).toBe(100);
      await third.close();
    });
  });
});

/** Starts a process that holds the database's write lock until `release()`. */
async function holdLock(path: string): Promise<{ child: ChildProcess; release: () => Promise<void> }> {
  const child = fork(join(workers, "hold-lock.ts"), [path], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      if (out.includes("locked\n")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`lock holder exited with ${code}: ${err}`)));
  });
  return {
    child,
    release: async () => {
      if (child.connected) child.send("release");
      await exited;
    },
  };
}

/** Counts timer ticks, and the longest the event loop went without one. */
function watchEventLoop(): { ticks: () => number; longestGapMs: () => number; stop: () => void } {
  let ticks = 0;
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    ticks++;
  }, 5);
  return { ticks: () => ticks, longestGapMs: () => longest, stop: () => clearInterval(timer) };
}

describe.each([["node:sqlite"], ...(betterSqliteInstalled ? [["better-sqlite3"]] : [])] as [SqliteDriverName][])(
  "sqlite (%s): waiting for another process's write lock",
  (driver) => {
    it("keeps the event loop running while it waits, and writes once the lock is released", async () => {
      const path = join(tempDir(), "sessions.db");
      const store = await openStore(`sqlite:${path}`, { sqliteDriver: driver, busyTimeoutMs: 20_000 });
      const r1 = await store.save(counterSession("s", 1), { expectedRevision: null });
      const lock = await holdLock(path);
      const loop = watchEventLoop();
      let settled = false;
      const saving = store.save(counterSession("s", 2), { expectedRevision: r1 }).finally(() => (settled = true));
      await sleep(600);
      const ticksWhileLocked = loop.ticks();
      expect(settled).toBe(false); // still waiting for the lock...
      expect(ticksWhileLocked).toBeGreaterThanOrEqual(10); // ...and timers kept firing meanwhile
      expect(counterOf((await store.get("s"))!.session)).toBe(1); // reads go on (WAL)
      await lock.release();
      const r2 = await saving;
      loop.stop();
      expect(r2).toBeGreaterThan(r1);
      expect(counterOf((await store.get("s"))!.session)).toBe(2);
      // The loop was never blocked for the whole wait: one attempt blocks only briefly.
      expect(loop.longestGapMs()).toBeLessThan(400);
      await store.close();
    }, 30_000);

    it("fails with a clear timeout error when the lock outlasts busyTimeoutMs, and works after", async () => {
      const path = join(tempDir(), "sessions.db");
      const store = await openStore(`sqlite:${path}`, { sqliteDriver: driver, busyTimeoutMs: 300 });
      const r1 = await store.save(counterSession("s", 1), { expectedRevision: null });
      await store.messages.appendMessages("log", [user("a")], { operationId: "op-a" });
      const lock = await holdLock(path);
      const loop = watchEventLoop();
      const started = performance.now();
      const error = await errorOf(store.save(counterSession("s", 2), { expectedRevision: r1 }));
      const waited = performance.now() - started;
      loop.stop();
      expect(waited).toBeGreaterThanOrEqual(250);
      expect(loop.ticks()).toBeGreaterThanOrEqual(5);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(/SQLite session store at sqlite:.* is unavailable \(save: SQLITE_BUSY/);
      expect((error as StoreUnavailableError).hint).toMatch(/longer than busyTimeoutMs \(300 ms\)/);
      const logError = await errorOf(store.messages.appendMessages("log", [user("b")], { operationId: "op-b" }));
      expect((logError as Error).message).toMatch(/appendMessages: SQLITE_BUSY/);
      await lock.release();
      expect(await store.save(counterSession("s", 2), { expectedRevision: r1 })).toBeGreaterThan(r1);
      expect((await store.messages.appendMessages("log", [user("b")], { operationId: "op-b" })).applied).toBe(true);
      await store.close();
    }, 30_000);
  },
);

describe("sqlite: read-only", () => {
  async function seeded(): Promise<{ dir: string; path: string; revision: number }> {
    const dir = tempDir();
    const path = join(dir, "sessions.db");
    const store = await openStore(`sqlite:${path}`);
    const revision = await store.save(counterSession("s", 7), { expectedRevision: null });
    await store.messages.appendMessages("s", [user("hi")], { operationId: "op-1" });
    await store.close();
    return { dir, path, revision };
  }

  it("reads an existing file and refuses every write, changing nothing", async () => {
    const { path, revision } = await seeded();
    const store = await openStore(`sqlite:${path}?readOnly=true`);
    expect(await store.setup()).toEqual({ version: SQLITE_SCHEMA_VERSION, changed: false });
    expect((await store.get("s"))?.revision).toBe(revision);
    expect(await store.messages.getMessages("s")).toEqual([user("hi")]);
    expect((await store.messages.readMessages("s")).messages).toHaveLength(1);
    for (const write of [
      () => store.save(counterSession("s", 8), { expectedRevision: revision }),
      () => store.delete("s"),
      () => store.purgeExpired(),
      () => store.messages.appendMessages("s", [user("x")], { operationId: "op-2" }),
      () => store.messages.deleteMessages("s"),
    ]) {
      const error = await errorOf(write());
      expect(error).toBeInstanceOf(StatebagError);
      expect((error as StatebagError).code).toBe("store-read-only");
      expect((error as StatebagError).hint).toMatch(/readOnly/);
    }
    await store.close();
    const again = await openStore(`sqlite:${path}`);
    expect(counterOf((await again.get("s"))!.session)).toBe(7);
    await again.close();
  });

  it("never creates a missing file, and says when a file has no statebag tables", async () => {
    const dir = tempDir();
    const missing = join(dir, "none", "sessions.db");
    const error = await errorOf(openStore(`sqlite:${missing}`, { readOnly: true }));
    expect(error).toBeInstanceOf(StoreNotSetUpError);
    expect((error as Error).message).toContain(`there is no SQLite file at ${missing}`);
    expect(existsSync(join(dir, "none"))).toBe(false);

    const { DatabaseSync } = await import("node:sqlite");
    const other = new DatabaseSync(join(dir, "other.db"));
    other.exec("CREATE TABLE t (a)");
    other.close();
    const foreign = await errorOf(openStore(`sqlite:${join(dir, "other.db")}?readOnly=true`));
    expect(foreign).toBeInstanceOf(StoreNotSetUpError);
    expect((foreign as Error).message).toMatch(/has no statebag tables/);
  });

  // Root ignores file permissions, so the unprivileged reader runs as "nobody" when the tests run as root.
  const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  it.skipIf(process.platform === "win32")(
    "opens a file in a read-only directory (as on a read-only mount)",
    async () => {
      const { dir, path, revision } = await seeded();
      chmodSync(path, 0o444);
      chmodSync(dir, 0o555);
      const run = (url: string) =>
        new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
          const child = spawn(process.execPath, ["--import", "tsx", join(workers, "read-only.ts"), url, "s"], {
            cwd: root,
            stdio: ["ignore", "pipe", "pipe"],
            ...asUser,
          });
          let out = "";
          let err = "";
          child.stdout.on("data", (d) => (out += d));
          child.stderr.on("data", (d) => (err += d));
          child.on("exit", (code) => resolve({ code, out, err }));
        });
      const result = await run(`sqlite:${path}?readOnly=true`);
      expect(result.err).toBe("");
      expect(JSON.parse(result.out)).toEqual({ revision, ids: ["s"], messages: 1, writeError: "store-read-only" });
      expect(readdirSync(dir)).toEqual(["sessions.db"]);
      if (betterSqliteInstalled) {
        // better-sqlite3 cannot read a WAL file there (no URI filenames): it says which driver can.
        const better = await run(`sqlite:${path}?readOnly=true&driver=better-sqlite3`);
        expect(better.code).not.toBe(0);
        expect(better.err).toMatch(
          /directory is read-only, and the better-sqlite3 driver cannot read a WAL file there: use the default node:sqlite driver/,
        );
      }
      // Opened for writing, the same file fails with a hint that points at readOnly.
      const writable = await run(`sqlite:${path}`);
      expect(writable.code).not.toBe(0);
      expect(writable.err).toMatch(/hint: .*(read-only|writable)/);
    },
    30_000,
  );
});

describe("sqlite: a damaged file", () => {
  it("is reported as damaged, without claiming that retrying or reconnecting will help", async () => {
    const path = join(tempDir(), "sessions.db");
    writeFileSync(path, "this is not a database, just some text that fills the SQLite header and more ".repeat(100));
    const error = await errorOf(openStore(`sqlite:${path}`));
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/SQLITE_NOTADB/);
    expect((error as StoreUnavailableError).hint).toMatch(
      /damaged or is not a SQLite database.*restore it from a backup/,
    );
    expect((error as StoreUnavailableError).hint).not.toMatch(/reconnects/);
  });
});

describe("sqlite: node:sqlite's experimental warning", () => {
  const node22 = join(root, "node_modules", "node22", "bin", "node");
  it.each([
    ["this Node", process.execPath],
    ["Node 22", node22],
  ])(
    "is not printed on %s, while other warnings still are",
    async (_label, nodeBinary) => {
      if (!existsSync(nodeBinary)) {
        console.warn(
          `[statebag tests] ${nodeBinary} is not installed (the node22 devDependency): checking this Node only`,
        );
        return;
      }
      const path = join(tempDir(), "sessions.db");
      const { code, err } = await new Promise<{ code: number | null; err: string }>((resolve) => {
        const child = spawn(nodeBinary, ["--import", "tsx", join(workers, "quiet-sqlite.ts"), path], {
          cwd: root,
          stdio: ["ignore", "ignore", "pipe"],
        });
        let stderr = "";
        child.stderr.on("data", (d) => (stderr += d));
        child.on("exit", (exitCode) => resolve({ code: exitCode, err: stderr }));
      });
      expect(code).toBe(0);
      expect(err).not.toMatch(/SQLite is an experimental feature/);
      expect(err).toMatch(/ExperimentalWarning: a different experimental feature/);
    },
    30_000,
  );
});
