/**
 * Store throughput probe: save (create), update (compare-and-swap) and load of N sessions with M
 * history messages each, through statebag's store vs the raw driver running the same statements
 * with the same JSON (`JSON.stringify(session)` / `JSON.parse`), one operation at a time.
 *
 * statebag's side additionally validates every tagged value on save (serializeSession with
 * `validate: true`), checks the envelope and runs migrations/validation on load; the probe shows
 * what that costs against a database round trip. Target: ours >= 80% of raw throughput.
 *
 * Each round uses fresh, isolated locations (temp SQLite file, PostgreSQL schema, Redis prefix);
 * the two sides run interleaved in chunks of 50 sessions, alternating which goes first, so
 * background load hits both alike; the median over rounds is reported.
 *
 *   npx tsx bench/stores-probe.ts [sqlite|sqlite-better|postgres|redis ...] [--sessions 1000] [--messages 20] [--rounds 5]
 *
 * For the bench suite: `probeStore(kind, options)` returns the numbers for one backend.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import type BetterSqlite3 from "better-sqlite3";
import type pg from "pg";
import type { Redis as RedisClient } from "ioredis";
import type { AgentSession } from "../src/runtime/core/session.js";
import { openStore } from "../src/runtime/open-store/open-store.js";
import { postgresStatements, quoteIdent } from "../src/runtime/stores/postgres/sql.js";
import { PostgresSessionStore } from "../src/runtime/stores/postgres/store.js";
import { RedisSessionStore } from "../src/runtime/stores/redis/store.js";
import { REDIS_LUA } from "../src/runtime/stores/redis/scripts.js";
import { SQLITE_SQL } from "../src/runtime/stores/sqlite/sql.js";
import type { SessionCodec, SessionStore } from "../src/runtime/stores/types.js";
import { makeSessions } from "./sessions.js";

const require = createRequire(import.meta.url);

/** `sqlite`: the default node:sqlite driver; `sqlite-better`: the optional better-sqlite3 driver. */
export type ProbeKind = "sqlite" | "sqlite-better" | "postgres" | "redis";

export interface StoreProbeOptions {
  /** Server URL for postgres/redis (defaults: local test servers; env STATEBAG_BENCH_PG_URL / STATEBAG_BENCH_REDIS_URL). */
  url?: string;
  sessions?: number;
  messages?: number;
  rounds?: number;
}

export interface PhaseNumbers {
  /** Operations per second, median over rounds. */
  save: number;
  update: number;
  load: number;
  /** save+update+load of all sessions, ms (median). */
  totalMs: number;
}

export interface StoreProbeResult {
  kind: ProbeKind;
  sessions: number;
  messages: number;
  rounds: number;
  /** Average stored size of one session (statebag's stored text), bytes. */
  bytesPerSession: number;
  ours: PhaseNumbers;
  raw: PhaseNumbers;
  /** ours throughput / raw throughput over all three phases (1.0 = same speed). */
  ratio: number;
  /** ratio >= 0.8 */
  pass: boolean;
}

/** One side of a store comparison (exported for the turn and concurrency cases). */
export interface Side {
  save(session: AgentSession): Promise<number>;
  update(session: AgentSession, revision: number): Promise<number>;
  load(id: string): Promise<AgentSession>;
  /** The session and the revision to pass back to `update`. */
  loadWithRevision(id: string): Promise<{ session: AgentSession; revision: number }>;
  close(): Promise<void>;
  /** statebag's store (the ours side only). */
  store?: SessionStore;
}

/** The bench's servers (every probe and case uses these): env overrides, else the local test servers. */
export const PG_URL = process.env.STATEBAG_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const REDIS_URL = process.env.STATEBAG_BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

function unique(): string {
  return `${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`;
}

/** statebag's store as a Side. */
function oursSide(store: SessionStore, close: () => Promise<void>): Side {
  return {
    save: (s) => store.save(s, { expectedRevision: null }),
    update: (s, revision) => store.save(s, { expectedRevision: revision }),
    load: async (id) => (await store.get(id))!.session,
    loadWithRevision: async (id) => (await store.get(id))!,
    close,
    store,
  };
}

/** A fresh location and both sides on it (separate tables/prefixes for ours and raw). */
export async function makeSides(
  kind: ProbeKind,
  url: string | undefined,
  /** Our store's session codec (default: the store's own, `defaultSessionCodec()`). */
  codec?: SessionCodec,
): Promise<{ ours: Side; raw: Side }> {
  if (kind === "sqlite" || kind === "sqlite-better") {
    const driver = kind === "sqlite" ? "node:sqlite" : "better-sqlite3";
    const dir = mkdtempSync(join(tmpdir(), "statebag-probe-"));
    const oursStore = await openStore(`sqlite:${join(dir, "ours.db")}`, { sqliteDriver: driver, codec });
    // The raw side's file gets the same tables and pragmas (WAL, synchronous=NORMAL).
    const rawPath = join(dir, "raw.db");
    await (await openStore(`sqlite:${rawPath}`, { sqliteDriver: driver })).close();
    const raw = kind === "sqlite" ? rawNodeSqlite(rawPath) : rawBetterSqlite(rawPath);
    return {
      ours: oursSide(oursStore, async () => {
        await oursStore.close();
        rmSync(dir, { recursive: true, force: true });
      }),
      raw,
    };
  }
  if (kind === "postgres") {
    const base = url ?? PG_URL;
    const oursSchema = `sbprobe_${unique()}`;
    const rawSchema = `${oursSchema}_raw`;
    const oursStore = new PostgresSessionStore({ connectionString: base, schema: oursSchema, codec });
    await oursStore.setup();
    const rawAdmin = new PostgresSessionStore({ connectionString: base, schema: rawSchema, max: 1 });
    await rawAdmin.setup();
    const { Pool } = require("pg") as typeof pg;
    const pool = new Pool({
      connectionString: base,
      max: 10,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 10_000,
      keepAlive: true,
    });
    // Fresh statement names so the raw pool prepares its own.
    const sql = postgresStatements(quoteIdent(rawSchema));
    const raw: Side = {
      save: async (s) =>
        Number(
          (
            await pool.query({
              ...sql.create,
              name: `raw_${sql.create.name}`,
              values: [s.id, JSON.stringify(s), null, null, null, null, null], // $7: no revision drawn beforehand
            })
          ).rows[0].revision,
        ),
      update: async (s, revision) =>
        Number(
          (
            await pool.query({
              ...sql.update,
              name: `raw_${sql.update.name}`,
              values: [s.id, revision, JSON.stringify(s), null, null, false, null, false, null, null], // $10: likewise
            })
          ).rows[0].revision,
        ),
      load: async (id) =>
        JSON.parse(
          (await pool.query({ ...sql.get, name: `raw_${sql.get.name}`, values: [id] })).rows[0].data,
        ) as AgentSession,
      loadWithRevision: async (id) => {
        const row = (await pool.query({ ...sql.get, name: `raw_${sql.get.name}`, values: [id] })).rows[0];
        return { session: JSON.parse(row.data) as AgentSession, revision: Number(row.revision) };
      },
      close: async () => {
        await pool.end();
        await rawAdmin.dropSchema();
        await rawAdmin.close();
      },
    };
    return {
      ours: oursSide(oursStore, async () => {
        await oursStore.dropSchema();
        await oursStore.close();
      }),
      raw,
    };
  }
  const base = url ?? REDIS_URL;
  const prefix = `sbprobe:${unique()}:`;
  const oursStore = new RedisSessionStore({ url: base, prefix, codec });
  // The raw side: the store's key layout under its own prefix, the store's save script with the
  // arguments the contract needs (the metadata a save without owner, title or labels passes: the
  // script keeps createdAt/updatedAt, the expiring-owner hash and the owner index as for the store),
  // and a get reading the same seven fields. (Before 2026-11-28 it passed no metadata, which runs
  // a shorter script path, and read two fields: less work than the contract requires.)
  const rawPrefix = `${prefix}raw:`;
  const bucket = `${rawPrefix}{}`;
  const Redis = (require("ioredis") as { Redis: new (url: string) => RedisClient }).Redis;
  const client = new Redis(base) as RedisClient & { sbSave(...args: (string | number)[]): Promise<[number, string]> };
  client.defineCommand("sbSave", { numberOfKeys: 4, lua: REDIS_LUA.save });
  const keys = {
    s: (id: string) => `${bucket}s:${id}`,
    rev: `${bucket}rev`,
    idx: `${bucket}idx`,
    exp: `${bucket}exp`,
    xo: `${bucket}xo`,
  };
  const write = async (s: AgentSession, expected: string) =>
    Number(
      (
        await client.sbSave(
          keys.s(s.id),
          keys.rev,
          keys.idx,
          keys.exp,
          expected,
          JSON.stringify(s),
          "", // no TTL
          s.id,
          Date.now(),
          `${bucket}s:`,
          // owner not given ('0', ''), body not bound to an owner (''), title and labels kept ('0', ''),
          // owner index inline (standalone) under the bucket, the expiring-owner hash, no revision drawn.
          "0",
          "",
          "",
          "0",
          "",
          "0",
          "",
          "1",
          bucket,
          keys.xo,
          "",
        )
      )[1],
    );
  const read = async (id: string) => {
    const [revision, , , , , , data] = await client.hmget(keys.s(id), "r", "o", "t", "l", "c", "u", "d");
    return { session: JSON.parse(data!) as AgentSession, revision: Number(revision) };
  };
  const raw: Side = {
    save: (s) => write(s, ""),
    update: (s, revision) => write(s, String(revision)),
    load: async (id) => (await read(id)).session,
    loadWithRevision: read,
    close: async () => {
      // The raw side's keys go too (they used to be left behind).
      let cursor = "0";
      do {
        const [next, found] = await client.scan(cursor, "MATCH", `${rawPrefix}*`, "COUNT", 1000);
        cursor = next;
        if (found.length > 0) await client.unlink(...found);
      } while (cursor !== "0");
      await client.quit();
    },
  };
  return {
    ours: oursSide(oursStore, async () => {
      await oursStore.deleteAll();
      await oursStore.close();
    }),
    raw,
  };
}

/** The raw better-sqlite3 side: the store's statements, in `BEGIN IMMEDIATE` transactions. */
function rawBetterSqlite(path: string): Side {
  const Database = require("better-sqlite3") as typeof BetterSqlite3;
  const db = new Database(path, { timeout: 5000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  const st = {
    get: db.prepare(SQLITE_SQL.get),
    bump: db.prepare(SQLITE_SQL.bump),
    create: db.prepare(SQLITE_SQL.create),
    update: db.prepare(SQLITE_SQL.update),
  };
  const create = db.transaction((id: string, text: string) => {
    const now = Date.now();
    const revision = (st.bump.get() as { value: number }).value;
    if (st.create.run(id, revision, text, null, now, now, null, null, null, now).changes !== 1)
      throw new Error("conflict");
    return revision;
  });
  const update = db.transaction((id: string, expected: number, text: string) => {
    const now = Date.now();
    const revision = (st.bump.get() as { value: number }).value;
    if (st.update.run(revision, text, null, now, 0, null, 0, null, id, expected, now, null, null).changes !== 1)
      throw new Error("conflict");
    return revision;
  });
  return {
    save: async (s) => create.immediate(s.id, JSON.stringify(s)),
    update: async (s, revision) => update.immediate(s.id, revision, JSON.stringify(s)),
    load: async (id) => JSON.parse((st.get.get(id, Date.now()) as { data: string }).data) as AgentSession,
    loadWithRevision: async (id) => {
      const row = st.get.get(id, Date.now()) as { revision: number; data: string };
      return { session: JSON.parse(row.data) as AgentSession, revision: Number(row.revision) };
    },
    close: async () => {
      db.close();
    },
  };
}

/** The raw node:sqlite side: the same statements and transactions through `DatabaseSync`. */
function rawNodeSqlite(path: string): Side {
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite") as typeof import("node:sqlite");
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  const st = {
    get: db.prepare(SQLITE_SQL.get),
    bump: db.prepare(SQLITE_SQL.bump),
    create: db.prepare(SQLITE_SQL.create),
    update: db.prepare(SQLITE_SQL.update),
  };
  const immediate = <T>(fn: () => T): T => {
    db.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      db.exec("ROLLBACK");
      throw error;
    }
  };
  const write = (statement: "create" | "update", id: string, text: string, expected?: number) =>
    immediate(() => {
      const now = Date.now();
      const revision = (st.bump.get() as { value: number }).value;
      const changes =
        statement === "create"
          ? st.create.run(id, revision, text, null, now, now, null, null, null, now).changes
          : st.update.run(revision, text, null, now, 0, null, 0, null, id, expected!, now, null, null).changes;
      if (changes !== 1) throw new Error("conflict");
      return revision;
    });
  return {
    save: async (s) => write("create", s.id, JSON.stringify(s)),
    update: async (s, revision) => write("update", s.id, JSON.stringify(s), revision),
    load: async (id) => JSON.parse((st.get.get(id, Date.now()) as { data: string }).data) as AgentSession,
    loadWithRevision: async (id) => {
      const row = st.get.get(id, Date.now()) as { revision: number; data: string };
      return { session: JSON.parse(row.data) as AgentSession, revision: Number(row.revision) };
    },
    close: async () => {
      db.close();
    },
  };
}

type Phases = { save: number; update: number; load: number };

/**
 * Runs save, update and load of every session on both sides, interleaved in chunks of 50
 * (alternating which side goes first) so background load on the machine hits both sides alike.
 */
async function runInterleaved(a: Side, b: Side, sessions: AgentSession[]): Promise<[Phases, Phases]> {
  const sides = [a, b];
  const times: Phases[] = [
    { save: 0, update: 0, load: 0 },
    { save: 0, update: 0, load: 0 },
  ];
  const revisions = [new Array<number>(sessions.length), new Array<number>(sessions.length)];
  const CHUNK = 50;
  let flip = 0;
  const phase = async (name: keyof Phases, op: (side: Side, i: number, k: number) => Promise<void>) => {
    for (let from = 0; from < sessions.length; from += CHUNK) {
      const to = Math.min(sessions.length, from + CHUNK);
      const order = flip++ % 2 === 0 ? [0, 1] : [1, 0];
      for (const step of order) {
        const started = performance.now();
        for (let i = from; i < to; i++) await op(sides[step], i, step);
        times[step][name] += performance.now() - started;
      }
    }
  };
  await phase("save", async (side, i, k) => {
    revisions[k][i] = await side.save(sessions[i]);
  });
  await phase("update", async (side, i, k) => {
    revisions[k][i] = await side.update(sessions[i], revisions[k][i]);
  });
  let check = 0;
  await phase("load", async (side, i) => {
    check += Object.keys((await side.load(sessions[i].id)).stateBag).length;
  });
  if (check !== 2 * sessions.length) throw new Error("probe loaded unexpected sessions");
  return [times[0], times[1]];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function summarize(runs: Phases[], n: number): PhaseNumbers {
  const save = median(runs.map((r) => r.save));
  const update = median(runs.map((r) => r.update));
  const load = median(runs.map((r) => r.load));
  const ops = (ms: number) => Math.round((n / ms) * 1000);
  return {
    save: ops(save),
    update: ops(update),
    load: ops(load),
    totalMs: Math.round(median(runs.map((r) => r.save + r.update + r.load))),
  };
}

/** Measures one backend. Creates and removes its own isolated tables/keys/files. */
export async function probeStore(kind: ProbeKind, options: StoreProbeOptions = {}): Promise<StoreProbeResult> {
  const sessionCount = options.sessions ?? 1000;
  const messages = options.messages ?? 20;
  const rounds = options.rounds ?? 5;
  const sessions = makeSessions(sessionCount, messages, "probe");
  const oursRuns: Phases[] = [];
  const rawRuns: Phases[] = [];
  // Warm-up: JIT, prepared statements, connections.
  {
    const { ours, raw } = await makeSides(kind, options.url);
    await runInterleaved(ours, raw, sessions.slice(0, Math.min(200, sessionCount)));
    await ours.close();
    await raw.close();
  }
  for (let round = 0; round < rounds; round++) {
    const { ours, raw } = await makeSides(kind, options.url);
    try {
      const [oursRun, rawRun] = await runInterleaved(ours, raw, sessions);
      oursRuns.push(oursRun);
      rawRuns.push(rawRun);
    } finally {
      await ours.close();
      await raw.close();
    }
  }
  const ours = summarize(oursRuns, sessionCount);
  const raw = summarize(rawRuns, sessionCount);
  const { serializeSession } = await import("../src/runtime/persistence/serialization.js");
  const bytes = sessions.reduce((sum, s) => sum + Buffer.byteLength(serializeSession(s)), 0) / sessionCount;
  const ratio = Math.round((raw.totalMs / ours.totalMs) * 1000) / 1000;
  return {
    kind,
    sessions: sessionCount,
    messages,
    rounds,
    bytesPerSession: Math.round(bytes),
    ours,
    raw,
    ratio,
    pass: ratio >= 0.8,
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string, fallback: number) => {
    const index = args.indexOf(`--${name}`);
    return index >= 0 ? Number(args[index + 1]) : fallback;
  };
  const kinds = args.filter(
    (a) => a === "sqlite" || a === "sqlite-better" || a === "postgres" || a === "redis",
  ) as ProbeKind[];
  const options = { sessions: flag("sessions", 1000), messages: flag("messages", 20), rounds: flag("rounds", 5) };
  console.log(
    `store probe: ${options.sessions} sessions x ${options.messages} messages, ${options.rounds} rounds, sequential (one call at a time)\n`,
  );
  console.log("backend   side   save/s  update/s  load/s  total ms");
  const results: StoreProbeResult[] = [];
  for (const kind of kinds.length ? kinds : (["sqlite", "sqlite-better", "postgres", "redis"] as ProbeKind[])) {
    const probe = await probeStore(kind, options);
    results.push(probe);
    for (const [side, timings] of [
      ["ours", probe.ours],
      ["raw", probe.raw],
    ] as const) {
      console.log(
        `${kind.padEnd(9)} ${side.padEnd(5)} ${String(timings.save).padStart(7)} ${String(timings.update).padStart(9)} ${String(timings.load).padStart(7)} ${String(timings.totalMs).padStart(9)}`,
      );
    }
    console.log(
      `${"".padEnd(9)} ours/raw throughput ${(probe.ratio * 100).toFixed(0)}% (target >= 80%) ${probe.pass ? "PASS" : "FAIL"}; ${probe.bytesPerSession} bytes/session\n`,
    );
  }
  if (args.includes("--json")) console.log(JSON.stringify(results, null, 2));
  if (results.some((r) => !r.pass)) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
