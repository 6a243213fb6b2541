/**
 * Blob stores (issue #37), per backend (SQLite node:sqlite, PostgreSQL, Redis, a folder on disk):
 *
 * - blob.<backend>.put.1mb: `blobs.put(bytes, { owner, mediaType })` of 1 MiB of new bytes (every
 *   put different, so none is a dedupe hit), against the raw driver writing the same MiB once as
 *   one value (SQLite and PostgreSQL: one INSERT of (key, BLOB/bytea) into a table of that shape,
 *   autocommit; Redis: one SET; folder: one writeFile). What ours adds: the SHA-256 of the bytes,
 *   four chunks of 256 KiB (one statement, script or write each) and the commit (dedupe, budget
 *   check, the record).
 * - blob.<backend>.get.1mb: `blobs.get(hash, { owner })` and reading its stream to the end
 *   (hashing it to verify), against the raw driver reading the value back in one call.
 *
 * Sides alternate in rounds; medians of the rounds, per blob.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type pg from "pg";
import type { Redis as RedisClient } from "ioredis";
import { openStore, PostgresSessionStore, type SessionStore } from "../../src/stores.js";
import { median, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { PG_URL, REDIS_URL } from "../stores-probe.js";
import { unreachable } from "./stores.js";

const require = createRequire(import.meta.url);
const MiB = 1024 * 1024;

interface Raw {
  put(key: string, bytes: Buffer): Promise<unknown>;
  get(key: string): Promise<Uint8Array>;
}

interface Setup {
  ours: SessionStore;
  raw: Raw;
  done(): Promise<void>;
}

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

async function sqliteSetup(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-blobs-"));
  const ours = await openStore(`sqlite:${join(dir, "ours.db")}`);
  const db = new DatabaseSync(join(dir, "raw.db"));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE files (key TEXT PRIMARY KEY, data BLOB NOT NULL)");
  const ins = db.prepare("INSERT INTO files (key, data) VALUES (?, ?)");
  const sel = db.prepare("SELECT data FROM files WHERE key = ?");
  return {
    ours,
    raw: {
      put: async (key, bytes) => ins.run(key, bytes),
      get: async (key) => (sel.get(key) as { data: Uint8Array }).data,
    },
    done: async () => {
      await ours.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresSetup(): Promise<Setup> {
  const schema = `sbblobs_${unique()}`;
  const admin = new PostgresSessionStore({ connectionString: PG_URL, schema, max: 1 });
  await admin.setup();
  const ours = await openStore(`${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`);
  const { Pool } = require("pg") as typeof pg;
  const pool = new Pool({ connectionString: PG_URL, max: 1 });
  // The same storage as the store's chunks: bytea kept uncompressed.
  await pool.query(`CREATE TABLE ${schema}.raw_files (key text COLLATE "C" PRIMARY KEY, data bytea NOT NULL)`);
  await pool.query(`ALTER TABLE ${schema}.raw_files ALTER COLUMN data SET STORAGE EXTERNAL`);
  const insert = { name: "bench_blob_insert", text: `INSERT INTO ${schema}.raw_files (key, data) VALUES ($1, $2)` };
  const select = { name: "bench_blob_select", text: `SELECT data FROM ${schema}.raw_files WHERE key = $1` };
  return {
    ours,
    raw: {
      put: (key, bytes) => pool.query({ ...insert, values: [key, bytes] }),
      get: async (key) => (await pool.query<{ data: Buffer }>({ ...select, values: [key] })).rows[0]!.data,
    },
    done: async () => {
      await ours.close();
      await pool.end();
      await admin.dropSchema();
      await admin.close();
    },
  };
}

async function redisSetup(): Promise<Setup> {
  const prefix = `sbblobs:${unique()}:`;
  const ours = await openStore(`${REDIS_URL}?prefix=${encodeURIComponent(prefix)}`);
  const Redis = (require("ioredis") as { Redis: new (url: string) => RedisClient }).Redis;
  const client = new Redis(REDIS_URL);
  const key = (name: string) => `${prefix}raw:${name}`;
  return {
    ours,
    raw: {
      put: (name, bytes) => client.set(key(name), bytes),
      get: async (name) => (await client.getBuffer(key(name)))!,
    },
    done: async () => {
      await ours.blobs!.eraseOwner("bench");
      for (const pattern of [`${prefix}*`]) {
        const keys = await client.keys(pattern);
        if (keys.length) await client.del(...keys);
      }
      client.disconnect();
      await ours.close();
    },
  };
}

async function folderSetup(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-blobs-"));
  const ours = await openStore("memory:", { blobs: { url: pathToFileURL(join(dir, "ours")).href } });
  return {
    ours,
    raw: {
      put: (name, bytes) => writeFile(join(dir, `raw-${name}`), bytes),
      get: (name) => readFile(join(dir, `raw-${name}`)),
    },
    done: async () => {
      await ours.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const SETUPS = { sqlite: sqliteSetup, postgres: postgresSetup, redis: redisSetup, folder: folderSetup } as const;

async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  const reader = stream.getReader();
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return size;
    size += value.length;
  }
}

export async function blobCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  const base = Buffer.alloc(MiB);
  for (let i = 0; i < MiB; i += 4) base.writeUInt32LE((i * 2654435761) >>> 0, i);
  let serial = 0;
  /** A MiB no put has seen: the base with a counter in its first bytes. */
  const fresh = () => {
    const bytes = Buffer.from(base);
    bytes.writeUInt32LE(++serial, 0);
    bytes.writeUInt32LE(process.pid, 4);
    return bytes;
  };
  for (const kind of ["sqlite", "postgres", "redis", "folder"] as const) {
    const reason = kind === "folder" ? undefined : await unreachable(kind);
    if (reason) {
      out.push(skipped(`blob.${kind}.put.1mb`, `server not reachable: ${reason}`));
      out.push(skipped(`blob.${kind}.get.1mb`, `server not reachable: ${reason}`));
      continue;
    }
    const setup = await SETUPS[kind]();
    try {
      const blobs = setup.ours.blobs!;
      const rounds = ctx.quick ? 3 : 11;
      const perRound = ctx.quick ? 3 : 8;
      ctx.log(`blob.${kind}.put.1mb / get.1mb (${rounds} rounds x ${perRound} blobs per side)`);
      const puts: [number[], number[]] = [[], []];
      const gets: [number[], number[]] = [[], []];
      for (let r = -1; r < rounds; r++) {
        const data = Array.from({ length: perRound }, fresh);
        const names = data.map(() => unique());
        const hashes: string[] = [];
        const putSides = [
          async () => {
            const start = performance.now();
            for (const bytes of data)
              hashes.push((await blobs.put(bytes, { owner: "bench", mediaType: "image/png" })).hash);
            return (performance.now() - start) / perRound;
          },
          async () => {
            const start = performance.now();
            for (let i = 0; i < perRound; i++) await setup.raw.put(names[i] as string, data[i] as Buffer);
            return (performance.now() - start) / perRound;
          },
        ];
        const getSides = [
          async () => {
            const start = performance.now();
            for (const hash of hashes) {
              const read = await blobs.get(hash, { owner: "bench" });
              if ((await drain(read!.stream)) !== MiB) throw new Error("blob read short");
            }
            return (performance.now() - start) / perRound;
          },
          async () => {
            const start = performance.now();
            for (const name of names) if ((await setup.raw.get(name)).length !== MiB) throw new Error("raw read short");
            return (performance.now() - start) / perRound;
          },
        ];
        const order = r % 2 === 0 ? [0, 1] : [1, 0];
        const putTimes: number[] = [];
        const getTimes: number[] = [];
        for (const side of order) putTimes[side] = await (putSides[side] as () => Promise<number>)();
        for (const side of order) getTimes[side] = await (getSides[side] as () => Promise<number>)();
        if (r >= 0) {
          for (const side of [0, 1] as const) {
            puts[side].push(putTimes[side] as number);
            gets[side].push(getTimes[side] as number);
          }
        }
      }
      const what = { sqlite: "INSERT of a BLOB", postgres: "INSERT of a bytea", redis: "SET", folder: "writeFile" }[
        kind
      ];
      const back = { sqlite: "SELECT", postgres: "SELECT", redis: "GET", folder: "readFile" }[kind];
      out.push(
        result(`blob.${kind}.put.1mb`, `raw ${what} of the same MiB`, {
          ours_ms: median(puts[0]),
          baseline_ms: median(puts[1]),
        }),
      );
      out.push(
        result(`blob.${kind}.get.1mb`, `raw ${back} of the same MiB`, {
          ours_ms: median(gets[0]),
          baseline_ms: median(gets[1]),
        }),
      );
    } finally {
      await setup.done();
    }
  }
  return out;
}
