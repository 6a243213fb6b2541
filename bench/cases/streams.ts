/**
 * Stream buffers (issue #32), per backend (SQLite node:sqlite, PostgreSQL, Redis):
 *
 * - stream.<backend>.append: buffering one UI-message chunk (a 100-byte text-delta JSON line, what
 *   the chat server writes per token batch): `streams.append(id, [chunk], leaseMs)`, one call per
 *   chunk, against the raw driver writing the same bytes once (SQLite and PostgreSQL: one INSERT of
 *   (stream id, position, body) into a table of the same shape, autocommit; Redis: one XADD).
 *   What ours adds: the running check, the length, the lease renewal (once a tenth of the lease has
 *   run down) and (PostgreSQL) the NOTIFY, in the same statement or script.
 * - stream.<backend>.first.1000: time to the first replayed chunk of a finished 1,000-chunk reply,
 *   through `follow` on a second store object (a fresh process's view: nothing cached), against the
 *   raw driver reading the reply's 1,000 bodies in one query (SELECT ... ORDER BY seq; XRANGE).
 *   `follow` yields the first chunk after a first read of 32 (stream-common.ts FIRST_PAGE).
 *
 * Sides alternate in rounds of 200 appends (25 replays); medians of the rounds, per chunk / per replay.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type pg from "pg";
import type { Redis as RedisClient } from "ioredis";
import { openStore, PostgresSessionStore, type SessionStore } from "../../src/stores.js";
import { median, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { PG_URL, REDIS_URL } from "../stores-probe.js";
import { unreachable } from "./stores.js";

const require = createRequire(import.meta.url);
const CHUNK = JSON.stringify({ type: "text-delta", id: "txt-0", delta: "The weather in Lisbon is sunny, 24 °C." });
const LEASE = 60_000;
const REPLY = 1000;

interface Raw {
  /** Writes one chunk at a position of a stream. */
  insert(stream: string, seq: number, body: string): Promise<unknown>;
  /** Reads a stream's bodies in order. */
  readAll(stream: string): Promise<string[]>;
  close(): Promise<void>;
}

interface Setup {
  ours: SessionStore;
  /** A second store object on the same location (the follower's process). */
  other: SessionStore;
  raw: Raw;
  done(): Promise<void>;
}

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

async function sqliteSetup(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-streams-"));
  const ours = await openStore(`sqlite:${join(dir, "ours.db")}`);
  const other = await openStore(`sqlite:${join(dir, "ours.db")}`);
  const db = new DatabaseSync(join(dir, "raw.db"));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec(
    "CREATE TABLE chunks (stream_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (stream_id, seq)) WITHOUT ROWID",
  );
  const ins = db.prepare("INSERT INTO chunks (stream_id, seq, body) VALUES (?, ?, ?)");
  const sel = db.prepare("SELECT body FROM chunks WHERE stream_id = ? ORDER BY seq");
  return {
    ours,
    other,
    raw: {
      insert: async (s, n, b) => ins.run(s, n, b),
      readAll: async (s) => (sel.all(s) as { body: string }[]).map((r) => r.body),
      close: async () => db.close(),
    },
    done: async () => {
      await ours.close();
      await other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresSetup(): Promise<Setup> {
  const schema = `sbstreams_${unique()}`;
  const admin = new PostgresSessionStore({ connectionString: PG_URL, schema, max: 1 });
  await admin.setup();
  const url = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
  const ours = await openStore(url);
  const other = await openStore(url);
  const { Pool } = require("pg") as typeof pg;
  const pool = new Pool({ connectionString: PG_URL, max: 1 });
  await pool.query(
    `CREATE TABLE ${schema}.raw_chunks (stream_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, body text NOT NULL, PRIMARY KEY (stream_id, seq))`,
  );
  const insert = {
    name: "bench_raw_insert",
    text: `INSERT INTO ${schema}.raw_chunks (stream_id, seq, body) VALUES ($1, $2, $3)`,
  };
  const select = {
    name: "bench_raw_select",
    text: `SELECT body FROM ${schema}.raw_chunks WHERE stream_id = $1 ORDER BY seq`,
  };
  return {
    ours,
    other,
    raw: {
      insert: (s, n, b) => pool.query({ ...insert, values: [s, n, b] }),
      readAll: async (s) => (await pool.query<{ body: string }>({ ...select, values: [s] })).rows.map((r) => r.body),
      close: async () => undefined,
    },
    done: async () => {
      await ours.close();
      await other.close();
      await pool.end();
      await admin.dropSchema();
      await admin.close();
    },
  };
}

async function redisSetup(): Promise<Setup> {
  const prefix = `sbstreams:${unique()}:`;
  const url = `${REDIS_URL}?prefix=${encodeURIComponent(prefix)}`;
  const ours = await openStore(url);
  const other = await openStore(url);
  const Redis = (require("ioredis") as { Redis: new (url: string) => RedisClient }).Redis;
  const client = new Redis(REDIS_URL);
  const key = (s: string) => `${prefix}raw:${s}`;
  return {
    ours,
    other,
    raw: {
      insert: (s, n, b) => client.xadd(key(s), `0-${n + 1}`, "c", b),
      readAll: async (s) => (await client.xrange(key(s), "-", "+")).map(([, fields]) => fields[1]),
      close: async () => undefined,
    },
    done: async () => {
      await (ours as unknown as { deleteAll(): Promise<number> }).deleteAll();
      const keys = await client.keys(`${prefix}raw:*`);
      if (keys.length) await client.del(...keys);
      client.disconnect();
      await ours.close();
      await other.close();
    },
  };
}

const SETUPS = { sqlite: sqliteSetup, postgres: postgresSetup, redis: redisSetup } as const;

export async function streamCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  for (const kind of ["sqlite", "postgres", "redis"] as const) {
    const reason = await unreachable(kind);
    if (reason) {
      out.push(skipped(`stream.${kind}.append`, `server not reachable: ${reason}`));
      out.push(skipped(`stream.${kind}.first.${REPLY}`, `server not reachable: ${reason}`));
      continue;
    }
    const setup = await SETUPS[kind]();
    try {
      const streams = setup.ours.streams!;
      const rounds = ctx.quick ? 5 : 15;
      const perRound = 200;
      ctx.log(`stream.${kind}.append (${rounds} rounds x ${perRound} chunks per side)`);
      const ours: number[] = [];
      const raw: number[] = [];
      for (let r = -2; r < rounds; r++) {
        const id = `append-${r}`;
        await streams.open(id, { sessionId: "chat", leaseMs: LEASE });
        const sides = [
          async () => {
            const start = performance.now();
            for (let i = 0; i < perRound; i++) await streams.append(id, [CHUNK], LEASE);
            return (performance.now() - start) / perRound;
          },
          async () => {
            const start = performance.now();
            for (let i = 0; i < perRound; i++) await setup.raw.insert(id, i, CHUNK);
            return (performance.now() - start) / perRound;
          },
        ];
        const order = r % 2 === 0 ? [0, 1] : [1, 0];
        const times: number[] = [];
        for (const side of order) times[side] = await sides[side]();
        if (r >= 0) {
          ours.push(times[0]);
          raw.push(times[1]);
        }
      }
      out.push(
        result(`stream.${kind}.append`, `raw ${kind === "redis" ? "XADD" : "INSERT"} of the same chunk`, {
          ours_ms: median(ours),
          baseline_ms: median(raw),
        }),
      );

      // A finished 1,000-chunk reply, replayed from a second store object.
      await streams.open("reply", { sessionId: "chat", leaseMs: LEASE });
      for (let i = 0; i < REPLY; i += 100) await streams.append("reply", Array(100).fill(CHUNK), LEASE);
      await streams.finish("reply", "done", { keepMs: 3_600_000 });
      for (let i = 0; i < REPLY; i++) await setup.raw.insert("reply", i, CHUNK);
      const replays = ctx.quick ? 9 : 25;
      ctx.log(`stream.${kind}.first.${REPLY} (${replays} replays per side)`);
      const first: number[] = [];
      const whole: number[] = [];
      const follower = setup.other.streams!;
      for (let r = -3; r < replays; r++) {
        let start = performance.now();
        for await (const chunk of follower.follow("reply")) {
          if (r >= 0) first.push(performance.now() - start);
          if (chunk !== CHUNK) throw new Error("replayed chunk differs");
          break;
        }
        start = performance.now();
        const bodies = await setup.raw.readAll("reply");
        if (r >= 0) whole.push(performance.now() - start);
        if (bodies.length !== REPLY) throw new Error(`raw read ${bodies.length} chunks`);
      }
      out.push(
        result(`stream.${kind}.first.${REPLY}`, `raw read of the reply's ${REPLY} chunks in one query`, {
          ours_ms: median(first),
          baseline_ms: median(whole),
        }),
      );
    } finally {
      await setup.done();
    }
  }
  return out;
}
