/**
 * listing.<sqlite|postgres|redis|redis-cluster>.<first|later> (issue #23): one page of the 50 newest
 * sessions of one owner (`store.list({ owner, order: "updatedAt desc", limit: 50 })`) among N
 * stored sessions held by N/10 owners, against a raw indexed query through the driver:
 *
 *   sqlite / postgres: SELECT id, revision, owner, title, labels, created_at, updated_at, expires_at
 *                        FROM statebag_sessions WHERE owner = ? [AND (updated_at, id) < (?, ?)]
 *                        ORDER BY updated_at DESC, id DESC LIMIT 50
 *                      (the fields a page item carries, through the store's own owner index)
 *   redis (+cluster):  ZREVRANGE key <from> <from + 49> WITHSCORES on a sorted set holding the
 *                      owner's sessions scored by updatedAt (the size of the owner's index), then
 *                      HMGET of each listed session's metadata fields, sent together
 *
 * `first` is the first page; `later` is page 11 (sessions 501-550 of the owner), reached with the
 * cursor of page 10 (walked untimed beforehand). The listed owner holds 1,000 sessions spread evenly
 * over the update times of all N; the other owners share the rest (about 10 each).
 *
 * N = 1,000,000 (full), 20,000 (--quick); STATEBAG_BENCH_LISTING_N overrides both. Each backend is
 * seeded once, in bulk and in the store's own format (SQLite: prepared inserts in transactions;
 * PostgreSQL: INSERT ... SELECT generate_series; Redis: pipelines), bodies small but valid (an
 * empty session, as the default codec writes it). The seeding is timed and logged apart, never part
 * of the measurement; every sample of both sides reads the same seeded data. Before timing, both
 * pages are checked against the expected ids (and, on SQL, against the raw query), and one seeded
 * session is loaded through the store.
 *
 * Locations are fresh and removed afterwards (temp file, PostgreSQL schema, Redis key prefix). The
 * cluster is three local nodes started like the tests' (test/stores/servers.ts); without
 * redis-server/redis-cli, or any other unreachable server, the case is skipped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { DatabaseSync } from "node:sqlite";
import { createSessionData } from "../../src/index.js";
import { RedisKeys } from "../../src/runtime/stores/redis/keys.js";
import { defaultSessionCodec, openStore, type SessionStore } from "../../src/stores.js";
import { findBinary, startRedisCluster, type RedisClusterHandle } from "../../test/stores/servers.js";
import { compare, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { storeUrls, unreachable } from "./stores.js";

const PAGE = 50;
/**
 * What the raw side reads per row: the fields a page item carries (id, revision, the metadata
 * columns, the expiry), as the store's own list query reads them, so both sides read the same
 * columns through the same index.
 */
const RAW_COLUMNS = "id, revision, owner, title, labels, created_at, updated_at, expires_at";
/** The timed later page (1-based): sessions 501-550 of the owner. */
const LATER_PAGE = 11;
/** Sessions of the listed owner. */
const TARGET_SESSIONS = 1000;
const TARGET = "owner-listed";

type Backend = "sqlite" | "postgres" | "redis" | "redis-cluster";

/** The seeded data set: session i (0-based) has id `s-<i>`, updatedAt = t0 + i ms. */
class Layout {
  readonly owners: number;
  readonly stride: number;
  readonly t0: number;
  constructor(readonly n: number) {
    if (n < TARGET_SESSIONS * 10)
      throw new Error(`listing bench: N must be at least ${TARGET_SESSIONS * 10}, got ${n}`);
    this.owners = Math.floor(n / 10);
    this.stride = Math.floor(n / TARGET_SESSIONS);
    this.t0 = Date.now() - n - 60_000;
  }
  id(i: number): string {
    return `s-${String(i).padStart(8, "0")}`;
  }
  owner(i: number): string {
    if (i % this.stride === this.stride - 1 && i < this.stride * TARGET_SESSIONS) return TARGET;
    return `o-${String(i % (this.owners - 1)).padStart(7, "0")}`;
  }
  updated(i: number): number {
    return this.t0 + i;
  }
  /** The listed owner's session indexes, newest first. */
  targetNewestFirst(): number[] {
    const out: number[] = [];
    for (let k = TARGET_SESSIONS - 1; k >= 0; k--) out.push(k * this.stride + this.stride - 1);
    return out;
  }
  /** Expected ids of a 1-based page, newest first. */
  pageIds(page: number): string[] {
    return this.targetNewestFirst()
      .slice((page - 1) * PAGE, page * PAGE)
      .map((i) => this.id(i));
  }
}

/** The stored text of session `id`: an empty session through the default codec (small, loads as written). */
function bodyTemplate(): { text: string; placeholder: string } {
  const placeholder = "s-PLACEHOLDER";
  return {
    text: defaultSessionCodec().serialize(createSessionData({ id: placeholder }), { owner: TARGET }),
    placeholder,
  };
}

interface Seeded {
  store: SessionStore;
  /** Raw page read: `from` is the 0-based position of the page's first session, `after` the previous page's last (updatedAt ms, id). */
  raw(from: number, after: { u: number; id: string } | undefined): Promise<string[]>;
  cleanup(): Promise<void>;
}

const seedLog: string[] = [];
/** What seeding took per backend in this run (for the report). */
export function listingSeedLog(): readonly string[] {
  return seedLog;
}

function same(name: string, got: readonly string[], want: readonly string[]): void {
  if (got.length !== want.length || got.some((id, i) => id !== want[i])) {
    throw new Error(
      `${name}: page holds [${got.slice(0, 3).join(", ")}, ...] (${got.length}), expected [${want.slice(0, 3).join(", ")}, ...] (${want.length})`,
    );
  }
}

// ---------------------------------------------------------------- SQLite

async function seedSqlite(layout: Layout, dir: string): Promise<Seeded> {
  const file = join(dir, "listing.db");
  const created = await openStore(`sqlite:${file}`); // creates the tables and the listing index
  await created.close();
  const { text, placeholder } = bodyTemplate();
  const db = new DatabaseSync(file);
  const insert = db.prepare(
    "INSERT INTO statebag_sessions (id, revision, data, expires_at, updated_at, created_at, owner, title, labels) VALUES (?, ?, ?, NULL, ?, ?, ?, ?, NULL)",
  );
  const BATCH = 50_000;
  for (let start = 0; start < layout.n; start += BATCH) {
    db.exec("BEGIN");
    for (let i = start; i < Math.min(layout.n, start + BATCH); i++) {
      const id = layout.id(i);
      const updated = layout.updated(i);
      insert.run(id, i + 1, text.replace(placeholder, id), updated, updated, layout.owner(i), `Session ${i}`);
    }
    db.exec("COMMIT");
  }
  db.prepare("UPDATE statebag_meta SET value = ? WHERE key = 'revision'").run(layout.n);
  db.close();

  const store = await openStore(`sqlite:${file}`);
  const reader = new DatabaseSync(file, { readOnly: true });
  const first = reader.prepare(
    `SELECT ${RAW_COLUMNS} FROM statebag_sessions WHERE owner = ? ORDER BY updated_at DESC, id DESC LIMIT ${PAGE}`,
  );
  const next = reader.prepare(
    `SELECT ${RAW_COLUMNS} FROM statebag_sessions WHERE owner = ? AND (updated_at, id) < (?, ?) ORDER BY updated_at DESC, id DESC LIMIT ${PAGE}`,
  );
  const plan = reader
    .prepare(
      `EXPLAIN QUERY PLAN SELECT ${RAW_COLUMNS} FROM statebag_sessions WHERE owner = ? ORDER BY updated_at DESC, id DESC LIMIT ${PAGE}`,
    )
    .all(TARGET);
  if (!plan.some((row) => String(row.detail).includes("statebag_sessions_owner_list")))
    throw new Error(`listing.sqlite: the raw query does not use the owner index: ${JSON.stringify(plan)}`);
  return {
    store,
    raw: async (_from, after) => {
      const rows = after ? next.all(TARGET, after.u, after.id) : first.all(TARGET);
      return rows.map((r) => r.id as string);
    },
    cleanup: async () => {
      reader.close();
      await store.close();
    },
  };
}

// ---------------------------------------------------------------- PostgreSQL

async function seedPostgres(layout: Layout): Promise<Seeded> {
  const schema = `bench_listing_${process.pid}_${Date.now()}`;
  const base = storeUrls.postgres;
  const url = `${base}${base.includes("?") ? "&" : "?"}schema=${schema}`;
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  let store: SessionStore | undefined;
  const cleanup = async () => {
    await store?.close().catch(() => {});
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  };
  try {
    const created = await openStore(url);
    await created.setup(); // format 2: tables, metadata columns, listing indexes
    await created.close();
    const { text, placeholder } = bodyTemplate();
    const sessions = `${schema}.statebag_sessions`;
    const stride = layout.stride;
    const BATCH = 100_000;
    for (let start = 0; start < layout.n; start += BATCH) {
      await client.query(
        `INSERT INTO ${sessions} (id, revision, data, expires_at, owner, title, labels, created_at, updated_at)
         SELECT id, g + 1, replace($1::text, $2::text, id), NULL,
                CASE WHEN g % $3::int = $3::int - 1 AND g < $3::int * $4::int THEN $5::text ELSE 'o-' || lpad((g % $6::int)::text, 7, '0') END,
                'Session ' || g, NULL, t, t
         FROM generate_series($7::int, $8::int) AS g,
              LATERAL (SELECT 's-' || lpad(g::text, 8, '0') AS id, timestamptz 'epoch' + ($9::bigint + g) * interval '1 millisecond' AS t) AS x`,
        [
          text,
          placeholder,
          stride,
          TARGET_SESSIONS,
          TARGET,
          layout.owners - 1,
          start,
          Math.min(layout.n, start + BATCH) - 1,
          layout.t0,
        ],
      );
    }
    await client.query(`SELECT setval('${schema}.statebag_revision_seq', $1::bigint)`, [layout.n]);
    await client.query(`VACUUM ANALYZE ${sessions}`);
    // The raw side is planned for its owner at every execution: PostgreSQL's generic plan of a
    // prepared `owner = $1` expects the average owner (10 rows) and picks the (owner, id) index
    // plus a sort of all 1,000 rows of the listed owner (measured: 1.1 ms, slower than list).
    await client.query("SET plan_cache_mode = force_custom_plan");
    store = await openStore(url);
    const first = {
      name: `bench_listing_first_${schema}`,
      text: `SELECT ${RAW_COLUMNS} FROM ${sessions} WHERE owner = $1 ORDER BY updated_at DESC, id DESC LIMIT ${PAGE}`,
    };
    const next = {
      name: `bench_listing_next_${schema}`,
      text: `SELECT ${RAW_COLUMNS} FROM ${sessions} WHERE owner = $1 AND (updated_at, id) < (timestamptz 'epoch' + $2::bigint * interval '1 millisecond', $3::text)
             ORDER BY updated_at DESC, id DESC LIMIT ${PAGE}`,
    };
    const plan = await client.query(`EXPLAIN ${first.text.replace("$1", `'${TARGET}'`)}`);
    const planText = plan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]).join("\n");
    if (!planText.includes("statebag_sessions_owner_updated"))
      throw new Error(`listing.postgres: the raw query does not use the owner index:\n${planText}`);
    return {
      store,
      raw: async (_from, after) => {
        const res = after
          ? await client.query({ ...next, values: [TARGET, after.u, after.id] })
          : await client.query({ ...first, values: [TARGET] });
        return res.rows.map((r: { id: string }) => r.id);
      },
      cleanup,
    };
  } catch (error) {
    await cleanup().catch(() => {});
    throw error;
  }
}

// ---------------------------------------------------------------- Redis (standalone and cluster)

interface RedisLike {
  hset(key: string, ...args: (string | number)[]): Promise<number>;
  zadd(key: string, ...args: (string | number)[]): Promise<number | string>;
  set(key: string, value: string | number): Promise<unknown>;
  zrevrange(key: string, start: number, stop: number, withScores: "WITHSCORES"): Promise<string[]>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>;
  disconnect(): void;
}

/**
 * Writes what the store's save script writes (keys.ts, scripts.ts), for many sessions of one bucket.
 * KEYS[1]: the bucket's id index (routes the call to the bucket's slot). ARGV: bucket prefix, body
 * before and after the id, then ops: S id revision updatedAt owner title (the session hash with its
 * metadata, and its id index entry) | O owner id revision updatedAt member (the owner's index: `ou`
 * member inv(updatedAt) .. id, `oi` id, `om` its one committed candidate).
 */
const SEED_SCRIPT = `
local bp, pre, post = ARGV[1], ARGV[2], ARGV[3]
local i = 4
while i <= #ARGV do
  if ARGV[i] == 'S' then
    local id, r, u = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
    redis.call('HSET', bp .. 's:' .. id, 'r', r, 'd', pre .. id .. post, 'c', u, 'u', u, 'o', ARGV[i + 4], 't', ARGV[i + 5])
    redis.call('ZADD', KEYS[1], 0, id)
    i = i + 6
  else
    local o, id, r, u = ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
    redis.call('ZADD', bp .. 'ou:' .. o, 0, ARGV[i + 5])
    redis.call('ZADD', bp .. 'oi:' .. o, 0, id)
    redis.call('HSET', bp .. 'om:' .. o, id, '[{"u":' .. u .. ',"r":' .. r .. ',"l":{},"w":' .. u .. '}]')
    i = i + 6
  end
end
return 1
`;

async function seedRedis(layout: Layout, cluster: RedisClusterHandle | undefined): Promise<Seeded> {
  const ioredis = await import("ioredis");
  const prefix = `bench-listing-${process.pid}-${Date.now()}:`;
  const keys = new RedisKeys(prefix, cluster !== undefined);
  let client: RedisLike;
  let url: string;
  if (cluster) {
    url = `${cluster.url}?prefix=${prefix}`;
    client = new ioredis.Cluster(cluster.ports.map((port) => ({ host: "127.0.0.1", port }))) as unknown as RedisLike;
  } else {
    const base = storeUrls.redis;
    url = `${base}${base.includes("?") ? "&" : "?"}prefix=${prefix}`;
    client = new ioredis.Redis(base) as unknown as RedisLike;
  }
  const rawKey = `${keys.owner(TARGET).prefix}bench-raw:${TARGET}`; // in the owner's slot on a cluster
  let store: SessionStore | undefined;
  const cleanup = async () => {
    await store?.close().catch(() => {});
    if (!cluster) {
      // Only this run's keys: the prefix is unique to it.
      const redis = client as unknown as InstanceType<typeof ioredis.Redis>;
      let cursor = "0";
      do {
        const [nextCursor, found] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 10_000);
        if (found.length) await redis.unlink(...found);
        cursor = nextCursor;
      } while (cursor !== "0");
    } // a cluster started for this run is stopped whole by the caller
    client.disconnect();
  };
  try {
    const { text, placeholder } = bodyTemplate();
    const [pre, post] = text.split(placeholder);
    if (text.split(placeholder).length !== 2)
      throw new Error("listing.redis: the body template holds its id more than once");
    const pad = (u: number) => String(u).padStart(15, "0");
    // One script per bucket and batch (server-side writes: a million sessions are millions of commands).
    // Per bucket: S ops write a session hash and its id index entry; O ops the owner index entries.
    const BATCH = cluster ? 50_000 : 5_000;
    for (let start = 0; start < layout.n; start += BATCH) {
      const perBucket = new Map<string, (string | number)[]>();
      const args = (bucketPrefix: string) => {
        let list = perBucket.get(bucketPrefix);
        if (!list) perBucket.set(bucketPrefix, (list = []));
        return list;
      };
      for (let i = start; i < Math.min(layout.n, start + BATCH); i++) {
        const id = layout.id(i);
        const owner = layout.owner(i);
        const updated = layout.updated(i);
        args(keys.of(id).prefix).push("S", id, i + 1, updated, owner, `Session ${i}`);
        args(keys.owner(owner).prefix).push("O", owner, id, i + 1, updated, pad(updated) + id);
      }
      await Promise.all(
        [...perBucket].map(([bucketPrefix, ops]) =>
          client.eval(SEED_SCRIPT, 1, `${bucketPrefix}idx`, bucketPrefix, pre, post, ...ops),
        ),
      );
    }
    await client.zadd(rawKey, ...layout.targetNewestFirst().flatMap((i) => [layout.updated(i), layout.id(i)]));
    await Promise.all(keys.buckets.map((b) => client.set(b.rev, layout.n)));
    await client.hset(keys.meta, "format", 3);
    store = await openStore(url);
    return {
      store,
      raw: async (from) => {
        const flat = await client.zrevrange(rawKey, from, from + PAGE - 1, "WITHSCORES");
        const ids: string[] = [];
        for (let i = 0; i < flat.length; i += 2) ids.push(flat[i]);
        // The fields a page item carries (revision, owner, title, labels, times), read from each
        // session's hash, the reads sent together (one more round trip), as the store reads them.
        const metas = await Promise.all(
          ids.map((id) => client.hmget(keys.of(id).session, "r", "o", "t", "l", "c", "u")),
        );
        if (metas.some((m) => m[0] === null)) throw new Error("listing.redis: a listed session has no hash");
        return ids;
      },
      cleanup,
    };
  } catch (error) {
    await cleanup().catch(() => {});
    throw error;
  }
}

// ---------------------------------------------------------------- the cases

async function measure(
  ctx: BenchContext,
  backend: Backend,
  layout: Layout,
  seeded: Seeded,
  baseline: string,
): Promise<CaseOutcome[]> {
  const { store, raw } = seeded;
  // Correctness first: one seeded session loads through the store; pages 1..LATER_PAGE are the expected ids.
  const probe = layout.pageIds(1)[0];
  const loaded = await store.get(probe);
  if (loaded?.meta.owner !== TARGET)
    throw new Error(`listing.${backend}: seeded session ${probe} did not load with its owner`);
  let cursor: string | undefined;
  let laterCursor: string | undefined;
  for (let page = 1; page <= LATER_PAGE; page++) {
    if (page === LATER_PAGE) laterCursor = cursor;
    const got = await store.list({ owner: TARGET, limit: PAGE, cursor });
    same(
      `listing.${backend} page ${page}`,
      got.items.map((x) => x.id),
      layout.pageIds(page),
    );
    cursor = got.cursor;
  }
  const laterFrom = (LATER_PAGE - 1) * PAGE;
  const lastBefore = layout.targetNewestFirst()[laterFrom - 1];
  const after = { u: layout.updated(lastBefore), id: layout.id(lastBefore) };
  same(`listing.${backend} raw first page`, await raw(0, undefined), layout.pageIds(1));
  same(`listing.${backend} raw page ${LATER_PAGE}`, await raw(laterFrom, after), layout.pageIds(LATER_PAGE));

  const out: CaseOutcome[] = [];
  ctx.log(`listing.${backend}.first`);
  out.push(
    result(
      `listing.${backend}.first`,
      baseline,
      await compare(
        () => store.list({ owner: TARGET, limit: PAGE }),
        () => raw(0, undefined),
        ctx.fast,
      ),
    ),
  );
  ctx.log(`listing.${backend}.later`);
  out.push(
    result(
      `listing.${backend}.later`,
      baseline,
      await compare(
        () => store.list({ owner: TARGET, limit: PAGE, cursor: laterCursor }),
        () => raw(laterFrom, after),
        ctx.fast,
      ),
    ),
  );
  return out;
}

const BASELINE: Record<Backend, string> = {
  sqlite:
    "raw node:sqlite: SELECT id, revision, meta columns ... WHERE owner = ? ORDER BY updated_at DESC, id DESC LIMIT 50 (store's index)",
  postgres:
    "raw pg: SELECT id, revision, meta columns ... WHERE owner = $1 ORDER BY updated_at DESC, id DESC LIMIT 50 (store's index)",
  redis: "raw ioredis: ZREVRANGE of 50 on a sorted set of the owner's 1,000 sessions + HMGET of each one's metadata",
  "redis-cluster":
    "raw ioredis Cluster: ZREVRANGE of 50 on a sorted set of the owner's 1,000 sessions + HMGET of each one's metadata",
};

function listingN(ctx: BenchContext): number {
  const env = process.env.STATEBAG_BENCH_LISTING_N;
  if (env !== undefined) {
    const count = Number(env.replace(/_/g, ""));
    if (!Number.isSafeInteger(count) || count <= 0)
      throw new Error(`STATEBAG_BENCH_LISTING_N must be a positive integer, got ${env}`);
    return count;
  }
  return ctx.quick ? 20_000 : 1_000_000;
}

export async function listingCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const layout = new Layout(listingN(ctx));
  const out: CaseOutcome[] = [];
  const names = (b: Backend) => [`listing.${b}.first`, `listing.${b}.later`];
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-listing-"));
  try {
    for (const backend of ["sqlite", "postgres", "redis", "redis-cluster"] as const) {
      let cluster: RedisClusterHandle | undefined;
      if (backend === "redis-cluster") {
        if (!findBinary("redis-server") || !findBinary("redis-cli")) {
          out.push(
            ...names(backend).map((n) =>
              skipped(n, "redis-server / redis-cli not installed (the bench starts a local 3-node cluster)"),
            ),
          );
          continue;
        }
        if (!(await import("../../src/runtime/stores/drivers.js")).driverInstalled("ioredis")) {
          out.push(...names(backend).map((n) => skipped(n, "ioredis is not installed")));
          continue;
        }
        cluster = await startRedisCluster();
      } else {
        const reason = await unreachable(backend);
        if (reason) {
          out.push(...names(backend).map((n) => skipped(n, `server not reachable: ${reason}`)));
          continue;
        }
      }
      try {
        const started = performance.now();
        ctx.log(
          `listing.${backend}: seeding ${layout.n.toLocaleString("en")} sessions of ${layout.owners.toLocaleString("en")} owners`,
        );
        const seeded =
          backend === "sqlite"
            ? await seedSqlite(layout, dir)
            : backend === "postgres"
              ? await seedPostgres(layout)
              : await seedRedis(layout, cluster);
        const line = `listing.${backend}: seeded ${layout.n.toLocaleString("en")} sessions in ${((performance.now() - started) / 1000).toFixed(1)} s (not measured)`;
        seedLog.push(line);
        ctx.log(line);
        try {
          out.push(...(await measure(ctx, backend, layout, seeded, BASELINE[backend])));
        } finally {
          await seeded.cleanup();
        }
      } finally {
        await cluster?.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
