/**
 * Redis store (ioredis), for many machines and for sessions that should expire; standalone Redis
 * (or one primary) and Redis Cluster.
 *
 * Every mutation is one Lua script (plain EVAL/EVALSHA, no modules), so the compare-and-swap is
 * atomic on the server. Layout under the key prefix `P` (default `statebag:`) on a standalone server:
 *   P{}s:<id>   hash {r: revision, d: serialized session}; TTL via PEXPIRE
 *   P{}rev      revision counter (INCR), shared by sessions and message logs
 *   P{}idx      sorted set (all scores 0) of session ids: `scan` pages through it with ZRANGEBYLEX
 *   P{}exp      sorted set of ids with a TTL, scored by expiry time, to drop expired ids from `idx`
 *   P{}ml:<id>  list of serialized messages; P{}mh:<id> hash {v: version}; P{}mo:<id> set of operation ids
 *   P meta      hash {format}
 * `{}` ends the prefix (a prefix may not contain it), so no store's keys start with another
 * store's `P{}`: the stores `p:` and `p:tenant2:` never see, scan or delete each other's keys.
 * Format 1 (earlier releases) had no `{}`; `store setup` moves such keys (redis-upgrade.ts), and
 * until then the store refuses to run (`StoreNotSetUpError`) rather than miss them.
 *
 * On a Redis Cluster (`redis+cluster://h1:p1,h2:p2` or `?cluster=true`) a script may only touch keys
 * of one hash slot, so the same layout is split into 1,024 buckets, each under its own hash tag:
 * `P{n}s:<id>`, `P{n}rev`, `P{n}idx`, `P{n}exp`, `P{n}ml:<id>`, ... with n = CRC16(id) mod 1024.
 * A session, its revision counter, its index entries and its message log (same id) share one
 * slot, so every script above runs unchanged inside one bucket; revisions still increase across
 * delete and re-create (the counter is per bucket, never deleted). `scan` merges the buckets'
 * pages in byte order, which visits every master. A cluster prefix has no braces, so `P{` is
 * prefix-free too (this layout is unchanged since it was introduced). Moving a standalone store
 * into a cluster is a copy through the API (README, "Redis Cluster"), not a key-level import: a
 * cluster store refuses a prefix that holds standalone-layout keys.
 *
 * Connections: no background reconnect loop and no offline queue. A call while the server is down
 * tries to connect `1 + connectRetries` times (`connectTimeoutMs` each, 100 ms, 200 ms, ... apart)
 * and fails with `StoreUnavailableError` naming host:port; a command in flight when the connection
 * drops is never re-sent (it may have run), it fails with `outcomeUnknown`. The next call after the
 * server is back connects again. The database (`/n`) is selected by the store, checked, before any
 * other command on each new connection. On a cluster, replies that mean "not run" (MOVED, ASK,
 * TRYAGAIN, CLUSTERDOWN) are followed as usual; a node that is down fails the calls for its slots
 * with `StoreUnavailableError`, the other nodes keep serving.
 */
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import { quoted, shownText } from "../../core/json.js";
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, loadStoredSession, serializeMessages } from "../codec.js";
import { loadDriver } from "../drivers.js";
import {
  checkDelete,
  checkId,
  checkLast,
  checkOperationId,
  checkReplace,
  checkSave,
  checkScan,
  checkTrim,
  compareIds,
  isNetworkError,
  scanItem,
  scanPage,
  sessionId,
} from "../common.js";
import { ConflictError, StoreAuthenticationError, StoreKeyConflictError, StoreNotSetUpError, StoreUnavailableError, logConflict } from "../errors.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  MessageCodec,
  MessageLog,
  MessageLogSnapshot,
  ReplaceOptions,
  SaveOptions,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionStore,
  SetupResult,
  StoredSession,
  TrimOptions,
} from "../types.js";
import type { RedisClientConstructor, RedisClientLike, RedisClusterConstructor, RedisClusterDriverOptions, RedisClusterLike, RedisDriverOptions } from "./types.js";
import { escapeGlob, LEGACY_TAGS, MERGE_LEGACY, MOVE_LEGACY, upgradeLegacyLayout } from "./upgrade.js";
import {
  checkConnectOption,
  parseRedisStoreUrl,
  REDIS_DEFAULT_CONNECT_RETRIES,
  REDIS_DEFAULT_CONNECT_TIMEOUT_MS,
  redisConnection,
  type RedisClusterNode,
  type RedisConnection,
} from "./url.js";
import { redactUrl } from "../url.js";

export { parseRedisStoreUrl, type RedisClusterNode };
export type { RedisClientLike, RedisClusterDriverOptions, RedisDriverOptions } from "./types.js";

/**
 * 2: standalone keys under `P{}` (prefix-free); 1: standalone keys right after the prefix
 * (read no more: `store setup` moves them). The cluster layout is the same in both.
 */
export const REDIS_FORMAT_VERSION = 2;

export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` (with `cluster`: any one node, for its credentials and TLS). */
  url: string;
  /**
   * Redis Cluster: `true` to start from the node in `url`, or the nodes to start from. Keys are
   * hash-tagged per bucket (see the module comment); the prefix may not contain `{` or `}`.
   */
  cluster?: boolean | readonly RedisClusterNode[];
  /** Key prefix (default `statebag:`). */
  prefix?: string;
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** Time one connection attempt may take (default 2000 ms; `?connectTimeout=` in the URL). */
  connectTimeoutMs?: number;
  /**
   * Extra connection attempts when one fails (default 1, so 2 in all, 100 ms then 200 ms ... apart;
   * `?connectRetries=` in the URL). After the last, the call fails with `StoreUnavailableError`.
   */
  connectRetries?: number;
  /** Per-command timeout (default 10000 ms). */
  commandTimeoutMs?: number;
  /** Extra Redis driver options (merged last; on a cluster, into every node's options). */
  redisOptions?: RedisDriverOptions;
  /** Extra Redis Cluster driver options (merged last). */
  clusterOptions?: RedisClusterDriverOptions;
  /** The URL to show in errors (default: `url`, password redacted). */
  displayUrl?: string;
}

function ioredis(): { Redis: RedisClientConstructor; Cluster: RedisClusterConstructor } {
  type Module = { default?: RedisClientConstructor & { Cluster?: RedisClusterConstructor }; Redis?: RedisClientConstructor; Cluster?: RedisClusterConstructor };
  const mod = loadDriver<Module>("ioredis");
  return {
    Redis: (mod.Redis ?? mod.default ?? (mod as unknown as RedisClientConstructor)) as RedisClientConstructor,
    Cluster: (mod.Cluster ?? mod.default?.Cluster) as RedisClusterConstructor,
  };
}

/** Buckets of the cluster layout. Part of the storage format: changing it would hide existing keys. */
export const REDIS_CLUSTER_BUCKETS = 1024;

/** CRC16-XMODEM, the hash Redis Cluster uses for slots; here only to spread ids over buckets. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let j = 0; j < 8; j++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    table[i] = c;
  }
  return table;
})();

function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text, "utf8")) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc;
}

/** The keys one bucket shares: its revision counter and its index sets. */
interface Bucket {
  /** Prefix of the bucket's keys: `P` standalone, `P{n}` on a cluster. */
  prefix: string;
  rev: string;
  idx: string;
  exp: string;
  /** Prefix of session keys in this bucket (the scripts append the id). */
  sessionPrefix: string;
}

function bucketAt(prefix: string): Bucket {
  return { prefix, rev: `${prefix}rev`, idx: `${prefix}idx`, exp: `${prefix}exp`, sessionPrefix: `${prefix}s:` };
}

/** Every key of one id, with its bucket's shared keys. */
export interface RedisIdKeys extends Bucket {
  session: string;
  list: string;
  hdr: string;
  ops: string;
}

// --- Lua scripts ------------------------------------------------------------------------------

/** KEYS: session, rev, idx, exp. ARGV: expected ('' = must be absent), data, ttlMs ('' = none), id, nowMs, sessionKeyPrefix. */
const SAVE = `
local cur = redis.call('HGET', KEYS[1], 'r')
if ARGV[1] == '' then
  if cur then return {0, cur} end
elseif cur ~= ARGV[1] then
  return {0, cur}
end
local rev = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'r', rev, 'd', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('ZADD', KEYS[4], tonumber(ARGV[5]) + tonumber(ARGV[3]), ARGV[4])
else
  redis.call('PERSIST', KEYS[1])
  redis.call('ZREM', KEYS[4], ARGV[4])
end
redis.call('ZADD', KEYS[3], 0, ARGV[4])
local stale = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[5], 'LIMIT', 0, 16)
for _, sid in ipairs(stale) do
  if redis.call('EXISTS', ARGV[6] .. sid) == 0 then
    redis.call('ZREM', KEYS[3], sid)
    redis.call('ZREM', KEYS[4], sid)
  end
end
return {1, rev}
`;

/** KEYS: session, idx, exp. ARGV: expected ('' = any), id. Returns {ok, current|deleted}. */
const DELETE = `
local cur = redis.call('HGET', KEYS[1], 'r')
if ARGV[1] ~= '' and cur ~= ARGV[1] then return {0, cur} end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
if not cur then return {1, 0} end
redis.call('DEL', KEYS[1])
return {1, 1}
`;

/** KEYS: idx. ARGV: cursor ('' = start), wanted, withText ('1'/'0'), sessionKeyPrefix. Returns flat [id, rev, (text, pttl)]*. */
const SCAN = `
local start = '-'
if ARGV[1] ~= '' then start = '(' .. ARGV[1] end
local wanted = tonumber(ARGV[2])
local out = {}
local n = 0
while n < wanted do
  local ids = redis.call('ZRANGEBYLEX', KEYS[1], start, '+', 'LIMIT', 0, wanted - n)
  if #ids == 0 then break end
  for _, sid in ipairs(ids) do
    local v = redis.call('HMGET', ARGV[4] .. sid, 'r', 'd')
    if v[1] then
      out[#out + 1] = sid
      out[#out + 1] = v[1]
      if ARGV[3] == '1' then
        out[#out + 1] = v[2]
        out[#out + 1] = redis.call('PTTL', ARGV[4] .. sid)
      end
      n = n + 1
    else
      redis.call('ZREM', KEYS[1], sid)
    end
    start = '(' .. sid
  end
end
return out
`;

/** KEYS: session. Returns {revision, text, pttl}, or false when absent (one bucket's part of a cluster scan). */
const TEXT = `
local v = redis.call('HMGET', KEYS[1], 'r', 'd')
if not v[1] then return false end
return {v[1], v[2], redis.call('PTTL', KEYS[1])}
`;

/** KEYS: idx, exp. ARGV: nowMs, sessionKeyPrefix. Drops index entries of expired sessions. */
const PURGE = `
local removed = 0
local stale = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 1000)
for _, sid in ipairs(stale) do
  if redis.call('EXISTS', ARGV[2] .. sid) == 0 then
    redis.call('ZREM', KEYS[1], sid)
    removed = removed + 1
  end
  redis.call('ZREM', KEYS[2], sid)
end
return removed
`;

const PUSH = `
local function push(key, from)
  for i = from, #ARGV, 1000 do
    redis.call('RPUSH', key, unpack(ARGV, i, math.min(i + 999, #ARGV)))
  end
end
`;

/** KEYS: list, hdr, ops, rev. ARGV: operationId, messages... */
const APPEND = `${PUSH}
if redis.call('SADD', KEYS[3], ARGV[1]) == 0 then
  return {0, tonumber(redis.call('HGET', KEYS[2], 'v') or '0')}
end
push(KEYS[1], 2)
local v = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], 'v', v)
return {1, v}
`;

/** KEYS: list, hdr. Returns {version, messages}. */
const READ = `
return {tonumber(redis.call('HGET', KEYS[2], 'v') or '0'), redis.call('LRANGE', KEYS[1], 0, -1)}
`;

/** KEYS: list, hdr, ops, rev. ARGV: expected ('' = any), operationId ('' = none), messages... */
const REPLACE = `${PUSH}
local cur = tonumber(redis.call('HGET', KEYS[2], 'v') or '0')
if ARGV[2] ~= '' and redis.call('SISMEMBER', KEYS[3], ARGV[2]) == 1 then return {1, cur} end
if ARGV[1] ~= '' and tonumber(ARGV[1]) ~= cur then return {0, cur} end
if ARGV[2] ~= '' then redis.call('SADD', KEYS[3], ARGV[2]) end
redis.call('DEL', KEYS[1])
push(KEYS[1], 3)
local v = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[2], 'v', v)
return {1, v}
`;

/** KEYS: list, hdr, rev. ARGV: keepLast, expected ('' = any). Returns {ok, removed|current}. */
const TRIM = `
local cur = tonumber(redis.call('HGET', KEYS[2], 'v') or '0')
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= cur then return {0, cur} end
local len = redis.call('LLEN', KEYS[1])
local keep = tonumber(ARGV[1])
if len <= keep then return {1, 0} end
if keep == 0 then redis.call('DEL', KEYS[1]) else redis.call('LTRIM', KEYS[1], -keep, -1) end
redis.call('HSET', KEYS[2], 'v', redis.call('INCR', KEYS[3]))
return {1, len - keep}
`;

/**
 * ARGV: candidate prefixes. Returns the first one holding a store of the earlier standalone layout
 * (format 1: an index or a revision counter right after the prefix), or false.
 */
const OUTER = `
for _, p in ipairs(ARGV) do
  if redis.call('TYPE', p .. 'idx').ok == 'zset' or redis.call('TYPE', p .. 'rev').ok == 'string' then return p end
end
return false
`;

/**
 * The prefixes of format-1 stores whose id-keyed keys would contain this prefix's keys: for
 * `app:s:x:`, the store `app:` (its session `x:...` is this store's `...`). Format-2 keys never
 * nest, but a format-1 store's upgrade would take such keys for its own.
 */
function enclosingPrefixes(prefix: string): string[] {
  const out: string[] = [];
  for (const [tag] of LEGACY_TAGS) {
    for (let at = prefix.indexOf(tag); at >= 0; at = prefix.indexOf(tag, at + 1)) out.push(prefix.slice(0, at));
  }
  return out;
}

/**
 * What a standalone store's keys start with: the prefix and `{}`. A prefix may not contain `{}`,
 * so no store's `P{}` starts another's (`p:{}` vs `p:tenant2:{}`), and a key scan of one store
 * (`P{}*`) never matches another store's keys. A cluster store's `P{n}` is prefix-free the same
 * way (its prefix has no braces at all).
 */
const STANDALONE_TAG = "{}";

/** The Lua scripts (exported for the benchmark's raw-driver baseline). @internal */
export const REDIS_LUA = { save: SAVE, delete: DELETE, scan: SCAN, purge: PURGE, append: APPEND, read: READ, replace: REPLACE, trim: TRIM, text: TEXT } as const;

type Reply = [number, string | number | null];

interface Scripts {
  sbSave(...args: (string | number)[]): Promise<Reply>;
  sbDelete(...args: (string | number)[]): Promise<Reply>;
  sbScan(...args: (string | number)[]): Promise<string[]>;
  sbPurge(...args: (string | number)[]): Promise<number>;
  /** Arrays among the arguments are flattened by the driver (a long list is passed as one array, never spread). */
  sbAppend(...args: (string | number | readonly string[])[]): Promise<Reply>;
  sbRead(...args: (string | number)[]): Promise<[number, string[]]>;
  sbReplace(...args: (string | number | readonly string[])[]): Promise<Reply>;
  sbTrim(...args: (string | number)[]): Promise<Reply>;
  sbOuter(...args: (string | number)[]): Promise<string | null>;
  sbText(key: string): Promise<[string, string, number] | null>;
  sbMoveLegacy(from: string, to: string): Promise<number>;
  sbMergeLegacy(...keys: string[]): Promise<number>;
}

/** A standalone client or a cluster client, with the scripts defined on it. */
type ScriptedClient = RedisClientLike & Scripts;

const NETWORK_MESSAGES =
  /Connection is closed|Stream isn't writeable|Command timed out|connect ETIMEDOUT|MaxRetriesPerRequest|Reached the max retries|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready|^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|OOM)\b/;

/** The URL names the wrong kind of server: a standalone client's command hit a cluster node, or a cluster client a standalone server. */
const WRONG_KIND = { standalone: /^(MOVED|ASK) \d+ |^CROSSSLOT\b/, cluster: /cluster support disabled/ };

/** Why connecting failed: the last error, after how many attempts (turned into a typed error by `connect`). */
class ConnectFailure {
  constructor(
    readonly error: unknown,
    readonly attempts: number,
  ) {}
}

function isAuthFailure(error: unknown): boolean {
  return error instanceof Error && /^(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i.test(error.message);
}

/** An error's message (with its code when the message lacks it), for the text of a wrapping error. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return error === undefined ? "" : String(error);
  const code = (error as { code?: unknown }).code;
  const message = error.message || error.name;
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
}

function isUnavailable(error: unknown): boolean {
  return isNetworkError(error) || (error instanceof Error && NETWORK_MESSAGES.test(error.message));
}

export class RedisSessionStore implements SessionStore {
  readonly kind = "redis" as const;
  readonly url: string;
  readonly prefix: string;
  readonly messages: MessageLog;
  private readonly codec: SessionCodec;
  private readonly options: RedisStoreOptions;
  private client_: ScriptedClient | undefined;
  private connecting: Promise<void> | undefined;
  /** The URL's parts, checked: what the driver gets, the database, host:port. */
  private readonly connection: RedisConnection;
  private readonly connectTimeoutMs: number;
  private readonly connectRetries: number;
  /** The current connection has selected the URL's database (false again once it closes). */
  private selected = false;
  private lastError: unknown;
  private closed = false;
  /** The format marker under `P meta` was read once and is one this code can use (or absent). */
  private formatOk = false;
  /** The format check in flight, shared by the calls that wait for it. */
  private formatCheck: Promise<void> | undefined;
  /** True on a Redis Cluster (hash-tagged buckets). */
  readonly cluster: boolean;
  /** The buckets: one (the prefix itself) standalone, `REDIS_CLUSTER_BUCKETS` on a cluster. @internal */
  readonly buckets: readonly Bucket[];
  /** @internal */
  readonly keys: { of: (id: string) => RedisIdKeys; meta: string };

  constructor(options: RedisStoreOptions) {
    this.options = options;
    this.url = options.displayUrl ?? redactUrl(options.url);
    const p = (this.prefix = options.prefix ?? "statebag:");
    this.cluster = Boolean(options.cluster);
    if (this.cluster && /[{}]/.test(p)) {
      // A brace in the prefix would become (part of) the hash tag and put keys of one id in different slots.
      throw new ConfigurationError(`the Redis Cluster key prefix ${quoted(p, 200)} contains "{" or "}"`, "use a prefix without braces (statebag adds its own hash tags on a cluster)");
    }
    if (p.includes(STANDALONE_TAG)) {
      // `{}` ends the prefix in every key: inside it, one store's keys could start another's.
      throw new ConfigurationError(`the Redis key prefix ${quoted(p, 200)} contains "{}"`, 'use a prefix without "{}" (statebag puts "{}" after the prefix to keep stores apart)');
    }
    // Every part of the URL is checked now: a bad database or option fails here, before any connection.
    this.connection = redisConnection(options.url, this.url);
    this.connectTimeoutMs = checkConnectOption("connectTimeoutMs", options.connectTimeoutMs) ?? this.connection.connectTimeoutMs ?? REDIS_DEFAULT_CONNECT_TIMEOUT_MS;
    this.connectRetries = checkConnectOption("connectRetries", options.connectRetries) ?? this.connection.connectRetries ?? REDIS_DEFAULT_CONNECT_RETRIES;
    const optionDb = options.redisOptions?.db;
    if (optionDb !== undefined && optionDb !== this.connection.db) {
      throw new ConfigurationError(`the Redis store option redisOptions.db (${String(optionDb).slice(0, 40)}) differs from the database in the store URL (${this.connection.db})`, "name the database once, in the URL path (redis://host:6379/2)");
    }
    if (this.cluster && this.connection.db !== 0) {
      throw new ConfigurationError(`the store URL ${quoted(this.url, 200)} selects a database other than 0`, "Redis Cluster has only database 0: drop the /<db> path and ?db=, and separate stores by ?prefix=");
    }
    this.codec = options.codec ?? defaultSessionCodec();
    this.buckets = this.cluster ? Array.from({ length: REDIS_CLUSTER_BUCKETS }, (_, n) => bucketAt(`${p}{${n}}`)) : [bucketAt(`${p}${STANDALONE_TAG}`)];
    const buckets = this.buckets;
    const single = buckets.length === 1;
    this.keys = {
      of: (id) => {
        const b = single ? buckets[0] : buckets[crc16(id) % REDIS_CLUSTER_BUCKETS];
        const bp = b.prefix;
        return { ...b, session: `${bp}s:${id}`, list: `${bp}ml:${id}`, hdr: `${bp}mh:${id}`, ops: `${bp}mo:${id}` };
      },
      meta: `${p}meta`,
    };
    this.messages = new RedisMessageLog(this, options.messageCodec ?? defaultMessageCodec);
  }

  private get client(): ScriptedClient {
    if (this.closed) throw new StatebagError("store-closed", `the Redis store at ${this.url} was closed`, { hint: "open a new store with openStore()" });
    if (!this.client_) {
      const { db: _db, ...extra } = this.options.redisOptions ?? {};
      const nodeOptions: RedisDriverOptions = {
        lazyConnect: true,
        connectTimeout: this.connectTimeoutMs,
        commandTimeout: this.options.commandTimeoutMs ?? 10_000,
        // We reconnect on demand (next call), never in a background loop, and never queue or
        // re-send commands: a re-sent compare-and-swap could report a conflict with itself.
        retryStrategy: () => null,
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        ...extra,
        // The store selects the database itself, checked, before any command (see `open`).
        db: 0,
      };
      const { Redis } = ioredis();
      const client = (this.options.cluster ? this.newCluster(nodeOptions) : new Redis(this.connection.url, nodeOptions)) as ScriptedClient;
      // Every failure is reported through the calls; an "error" event without a listener would crash the process.
      // Events of a client given up on (see `connectOnce`) no longer speak for the store.
      client.on("error", (error: unknown) => {
        if (this.client_ === client) this.lastError = error;
      });
      client.on("node error", () => undefined);
      // A closed connection must select the database again before it is used.
      const unselect = () => {
        if (this.client_ === client) this.selected = false;
      };
      client.on("close", unselect);
      client.on("end", unselect);
      client.defineCommand("sbSave", { numberOfKeys: 4, lua: SAVE });
      client.defineCommand("sbDelete", { numberOfKeys: 3, lua: DELETE });
      client.defineCommand("sbScan", { numberOfKeys: 1, lua: SCAN });
      client.defineCommand("sbPurge", { numberOfKeys: 2, lua: PURGE });
      client.defineCommand("sbAppend", { numberOfKeys: 4, lua: APPEND });
      client.defineCommand("sbRead", { numberOfKeys: 2, lua: READ });
      client.defineCommand("sbReplace", { numberOfKeys: 4, lua: REPLACE });
      client.defineCommand("sbTrim", { numberOfKeys: 3, lua: TRIM });
      client.defineCommand("sbOuter", { numberOfKeys: 0, lua: OUTER });
      client.defineCommand("sbText", { numberOfKeys: 1, lua: TEXT });
      client.defineCommand("sbMoveLegacy", { numberOfKeys: 2, lua: MOVE_LEGACY });
      client.defineCommand("sbMergeLegacy", { numberOfKeys: 6, lua: MERGE_LEGACY });
      this.client_ = client;
    }
    return this.client_;
  }

  /** A driver Cluster client with the same no-retry policy, nodes logging in as `url` says. */
  private newCluster(nodeOptions: RedisDriverOptions): RedisClusterLike {
    const seed = new URL(this.connection.url);
    const nodes = Array.isArray(this.options.cluster) ? [...this.options.cluster] : [{ host: seed.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(seed.port || 6379) }];
    const { Cluster } = ioredis();
    return new Cluster(nodes, {
      lazyConnect: true,
      // Node connections open on first use: commands wait (unsent) while one is being opened,
      // and fail if it cannot be. Commands already sent are still never re-sent.
      enableOfflineQueue: true,
      // One try to learn the slots per connection attempt (see `open`); no background loop.
      clusterRetryStrategy: () => null,
      // 0: a command whose connection closed may have run, so it is never re-sent. MOVED, ASK,
      // TRYAGAIN and CLUSTERDOWN replies (the command did not run) are still followed.
      retryDelayOnFailover: 0,
      // ioredis itself gives node connections retryStrategy null and an offline queue.
      redisOptions: {
        ...nodeOptions,
        username: seed.username ? decodeURIComponent(seed.username) : nodeOptions.username,
        password: seed.password ? decodeURIComponent(seed.password) : nodeOptions.password,
        ...(seed.protocol === "rediss:" && !nodeOptions.tls ? { tls: {} } : {}),
      },
      ...this.options.clusterOptions,
    });
  }

  /** Where the store connects, for messages: `host:port` (every start node on a cluster), never credentials. */
  private get address(): string {
    const nodes = Array.isArray(this.options.cluster) ? this.options.cluster.map((n) => `${n.host.includes(":") ? `[${n.host}]` : n.host}:${n.port}`) : [this.connection.address];
    return nodes.join(",");
  }

  private async connect(operation: string): Promise<ScriptedClient> {
    const client = this.client;
    if (client.status === "ready" && this.selected) return client;
    this.connecting ??= this.open().finally(() => {
      this.connecting = undefined;
    });
    try {
      await this.connecting;
    } catch (failure) {
      if (!(failure instanceof ConnectFailure)) throw failure;
      const { error, attempts } = failure;
      // A cluster client that could not learn the slots keeps the node's answer in lastNodeError.
      const nodeError = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
      for (const e of [error, nodeError]) if (this.isWrongKind(e)) throw this.wrongKind(e as Error);
      if ([error, nodeError].some(isAuthFailure)) {
        throw new StoreAuthenticationError(
          "Redis",
          this.url,
          this.username(),
          "check the user name and password in the store URL (redis://user:password@host:6379; percent-encode special characters) against the server's requirepass / ACL users",
        );
      }
      const reason = describeError(nodeError ?? error);
      const cause = new Error(`no connection to ${this.address} after ${attempts} attempt${attempts === 1 ? "" : "s"}${reason ? ` (${reason})` : ""}`, { cause: error });
      throw new StoreUnavailableError("Redis", this.url, operation, {
        cause,
        hint: `check that the Redis server is running and reachable at ${this.address}; each call tries ${this.connectRetries + 1} time(s), ${this.connectTimeoutMs} ms each at most (?connectRetries=, ?connectTimeout= in the URL)`,
      });
    }
    return this.client;
  }

  /**
   * Connects, trying `1 + connectRetries` times (100 ms, 200 ms, ... apart) while the failure is a
   * network one, then selects the database. A refused login, the wrong kind of server or a database
   * the server does not have fails at once: trying again would not change the answer.
   */
  private async open(): Promise<void> {
    const attempts = this.connectRetries + 1;
    let client = this.client;
    for (let attempt = 1; ; attempt++) {
      client = this.client;
      // A connection still closing ("close", "disconnecting", ...) would finish closing after a
      // new one opened on the same client, and take it down: start from a new client instead.
      if (!["wait", "end", "ready", "connecting", "connect"].includes(client.status)) {
        this.discard(client);
        client = this.client;
      }
      try {
        await this.connectOnce(client);
        break;
      } catch (error) {
        const nodeError = (error as { lastNodeError?: unknown } | undefined)?.lastNodeError;
        const final = attempt >= attempts || this.isWrongKind(error) || this.isWrongKind(nodeError) || isAuthFailure(error) || isAuthFailure(nodeError);
        if (final) throw new ConnectFailure(error, attempt);
        // A client left half-open is closed first; a refused one is already "end" (and disconnect()
        // would mark it closed by us, so ioredis would not report the next attempt's error).
        if (this.client_ === client && client.status !== "end" && client.status !== "wait") client.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
    await this.selectDatabase(client);
  }

  /**
   * One connection attempt, bounded by `connectTimeoutMs` as a whole: the driver's own timeout ends at
   * the TCP handshake, so a server that accepts connections but never answers (a proxy whose
   * backend is gone, another service on the port) would otherwise hold the call forever.
   */
  private async connectOnce(client: ScriptedClient): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const attempt = (async () => {
      if (client.status === "connecting" || client.status === "connect") {
        await new Promise<void>((resolve, reject) => {
          const onReady = () => (cleanup(), resolve());
          const onEnd = () => (cleanup(), reject(this.lastError ?? new Error("Connection is closed.")));
          const cleanup = () => (client.off("ready", onReady), client.off("end", onEnd));
          client.once("ready", onReady);
          client.once("end", onEnd);
        });
      } else if (client.status !== "ready") {
        this.lastError = undefined;
        await client.connect();
      }
    })();
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`connect timed out after ${this.connectTimeoutMs} ms (no ready reply from the server)`);
        (error as { code?: string }).code = "ETIMEDOUT";
        reject(error);
      }, this.connectTimeoutMs);
    });
    try {
      await Promise.race([attempt, timeout]);
    } catch (error) {
      // The losing attempt rejects once the connection is closed: handled here, never unhandled.
      attempt.catch(() => undefined);
      if (error instanceof Error && /^connect timed out after/.test(error.message)) {
        // disconnect() only half-closes a socket the server never answered on: destroy it, and
        // start the next attempt from a new client rather than one still half-connected.
        this.discard(client);
        throw error;
      }
      throw this.lastError ?? error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes a client for good (its socket destroyed, not half-closed); the next call starts a new one. */
  private discard(client: ScriptedClient): void {
    (client as { stream?: { destroy?: () => void } }).stream?.destroy?.();
    client.disconnect();
    if (this.client_ === client) {
      this.client_ = undefined;
      this.selected = false;
    }
  }

  /**
   * SELECTs the URL's database on a new connection, before any other command of the store. A
   * database the server does not have is a `ConfigurationError` naming the server's limit; the
   * connection is closed, so nothing reaches database 0 instead.
   */
  private async selectDatabase(client: ScriptedClient): Promise<void> {
    const db = this.connection.db;
    if (db !== 0) {
      try {
        await client.select(db);
      } catch (error) {
        if (isUnavailable(error)) throw new ConnectFailure(error, 1);
        if (error instanceof Error && /cluster mode/i.test(error.message)) {
          this.discard(client);
          throw this.wrongKind(error);
        }
        if (!(error instanceof Error && /invalid DB index|out of range/i.test(error.message))) {
          this.discard(client);
          throw new ConfigurationError(
            `the Redis server at ${this.address} refused SELECT ${db} (store URL ${quoted(this.url, 200)}): ${shownText(String((error as Error)?.message ?? error).split("\n")[0], 200)}; nothing was read or written`,
            "check that the store's Redis user may use that database (ACL: the select command)",
          );
        }
        const limit = await client.config("GET", "databases").then(
          (reply) => (Array.isArray(reply) && /^\d+$/.test(String(reply[1])) ? Number(reply[1]) : undefined),
          () => undefined,
        );
        this.discard(client);
        throw new ConfigurationError(
          `the Redis server at ${this.address} has no database ${db} (store URL ${quoted(this.url, 200)}): ${limit === undefined ? "it refused SELECT" : `it has ${limit} (0 to ${limit - 1})`}; nothing was read or written`,
          limit === undefined
            ? "use a database number the server has (its `databases` setting in redis.conf, 16 by default)"
            : `use a database from 0 to ${limit - 1} in the URL path (redis://host:6379/<db>), or raise \`databases\` in the server's redis.conf`,
        );
      }
    }
    this.selected = true;
  }

  /**
   * Connects if needed and runs `fn`, mapping connection failures. The first call on this store
   * object (and every call until it passes) first reads the format marker, refusing a newer format
   * with `StoreNotSetUpError`; `checkFormat: false` skips that (setup, teardown). @internal
   */
  async call<T>(operation: string, write: boolean, fn: (client: ScriptedClient) => Promise<T>, checkFormat = true): Promise<T> {
    let client = this.client;
    if (client.status !== "ready" || !this.selected) client = await this.connect(operation);
    let sent = false;
    try {
      if (checkFormat && !this.formatOk) await this.checkFormat(client);
      sent = true;
      return await fn(client);
    } catch (error) {
      if (error instanceof StoreNotSetUpError || error instanceof StoreKeyConflictError) throw error;
      if (this.isWrongKind(error)) throw this.wrongKind(error as Error);
      if (error instanceof Error && /^WRONGTYPE\b/.test(error.message)) {
        throw new StoreKeyConflictError(this.url, this.prefix, `a key ${operation} uses holds another type of value (${error.message.split("\n")[0]})`);
      }
      if (isUnavailable(error)) {
        // A reply (LOADING, BUSY, READONLY, OOM, ...) means the server is up but refusing work; the
        // client's status is no guide: it can still read "ready" just after the socket closed.
        const refused = (error as Error).name === "ReplyError";
        // The server closed the socket (the client has not seen it yet): the next call starts a new
        // connection rather than fail on this one until ioredis notices.
        if (!this.cluster && /Stream isn't writeable/.test((error as Error).message)) this.discard(client);
        throw new StoreUnavailableError("Redis", this.url, operation, {
          cause: error,
          // "Stream isn't writeable" means it was never sent (nor was anything when the format check failed).
          outcomeUnknown: write && sent && !/Stream isn't writeable/.test((error as Error).message),
          hint: refused ? "the server answered with an error meaning it cannot serve requests right now" : undefined,
        });
      }
      throw error;
    }
  }

  private isWrongKind(error: unknown): boolean {
    return error instanceof Error && WRONG_KIND[this.cluster ? "cluster" : "standalone"].test(error.message);
  }

  private wrongKind(error: Error): ConfigurationError {
    return this.cluster
      ? new ConfigurationError(`the Redis server at ${this.url} is not a Redis Cluster (${error.message.split("\n")[0]})`, "drop ?cluster=true / use redis:// instead of redis+cluster:// for a standalone server")
      : new ConfigurationError(
          `the Redis server at ${this.url} is a Redis Cluster node (it answered ${error.message.split(" ")[0]}; nothing was written)`,
          "open the store with redis+cluster://host1:port1,host2:port2 (or add ?cluster=true) so keys are hash-tagged per slot",
        );
  }

  /**
   * Reads the format marker once (concurrent first calls share the read). An absent marker (a
   * prefix never set up) is fine: Redis needs no setup. A newer format is refused, and checked
   * again on the next call.
   */
  private checkFormat(client: ScriptedClient): Promise<void> {
    return (this.formatCheck ??= this.readFormat(client).finally(() => {
      this.formatCheck = undefined;
    }));
  }

  private async readFormat(client: ScriptedClient): Promise<void> {
    const [format] = await Promise.all([client.hget(this.keys.meta, "format"), this.cluster ? this.standaloneKeys(client) : this.checkStandaloneLayout(client)]);
    if (format !== null && Number(format) > REDIS_FORMAT_VERSION) {
      throw this.newerFormat(format, "upgrade statebag in this app to the release that wrote the store, or use another key prefix");
    }
    this.formatOk = true;
  }

  /**
   * Standalone: refuses a prefix inside a format-1 store's keys (that store's upgrade would take
   * this one's keys), and a prefix that still holds format-1 keys (not moved by `store setup` yet).
   */
  private async checkStandaloneLayout(client: ScriptedClient): Promise<void> {
    const [outer, legacy] = await Promise.all([this.enclosingStore(client), this.hasLegacyKeys(client)]);
    if (outer !== null) throw this.insideLegacy(outer);
    if (legacy) {
      throw new StoreNotSetUpError(
        this.url,
        `the Redis store at ${this.url} (prefix ${quoted(this.prefix, 200)}) holds sessions in the key layout of earlier statebag releases (format 1, not isolated from stores whose prefix starts with this one), which this release does not read`,
        `stop the apps that run an earlier statebag, then run \`statebag store setup --store <this URL>\` once: it moves the keys to the current layout (nothing is lost; safe to run again if interrupted)`,
      );
    }
  }

  private insideLegacy(outer: string): StoreKeyConflictError {
    return new StoreKeyConflictError(
      this.url,
      this.prefix,
      `its keys lie inside those of the store with prefix ${quoted(outer, 200)}, which has the key layout of earlier releases (a session or message log there has an id starting with ${quoted(this.prefix.slice(outer.length), 200)}); run \`statebag store setup\` for that store first (it moves its keys to the current layout), or use another prefix`,
    );
  }

  /** Whether format-1 keys are under the prefix: its revision counter or index, right after the prefix. */
  private async hasLegacyKeys(client: RedisClientLike): Promise<boolean> {
    const old = bucketAt(this.prefix);
    const [idx, rev] = await Promise.all([client.type(old.idx), client.type(old.rev)]);
    return idx === "zset" || rev === "string";
  }

  /**
   * On a cluster: refuses a prefix holding keys of a standalone layout (copied in at key level,
   * e.g. by `redis-cli --cluster import`), which this store would not see. Cluster stores cannot
   * nest (their keys are `P{n}...` or `Pmeta`, and a prefix has no braces), so no other check is needed.
   */
  private async standaloneKeys(client: ScriptedClient): Promise<null> {
    const keys = [bucketAt(this.prefix), bucketAt(`${this.prefix}${STANDALONE_TAG}`)].flatMap((b) => [b.idx, b.rev]);
    const counts = await Promise.all(keys.map((key) => client.exists(key)));
    const first = keys.find((_, i) => counts[i] > 0);
    if (first !== undefined) {
      throw new StoreNotSetUpError(
        this.url,
        `the Redis Cluster store at ${this.url} (prefix ${quoted(this.prefix, 200)}) holds keys of the standalone layout (${quoted(first, 200)}), which a cluster store does not read`,
        'copy the sessions and message logs through the API from a standalone store into the cluster store (README, "Redis Cluster"), or use another prefix',
      );
    }
    return null;
  }

  /** The prefix of a format-1 store whose keys would contain this one's, if one is in use. */
  private async enclosingStore(client: ScriptedClient): Promise<string | null> {
    const candidates = enclosingPrefixes(this.prefix);
    return candidates.length === 0 ? null : client.sbOuter(...candidates);
  }

  private username(): string | undefined {
    try {
      const user = new URL(this.options.url).username;
      return user ? decodeURIComponent(user) : undefined;
    } catch {
      return undefined;
    }
  }

  private newerFormat(format: string, hint: string): StoreNotSetUpError {
    return new StoreNotSetUpError(
      this.url,
      `the Redis store at ${this.url} (prefix ${quoted(this.prefix, 200)}) has storage format ${shownText(format, 40)}, newer than this statebag knows (${REDIS_FORMAT_VERSION})`,
      hint,
    );
  }

  /**
   * Records the format version under `P meta` (Redis needs no DDL). Refuses to mark a newer format
   * as older. On a standalone server, first moves keys of the format-1 layout (earlier releases) to
   * the current one (redis-upgrade.ts).
   */
  async setup(): Promise<SetupResult> {
    const { before, moved } = await this.call(
      "setup",
      true,
      async (c) => {
        const old = await c.hget(this.keys.meta, "format");
        if (old !== null && Number(old) > REDIS_FORMAT_VERSION) return { before: old, moved: 0 };
        let moved = 0;
        if (!this.cluster) {
          const outer = await this.enclosingStore(c);
          if (outer !== null) throw this.insideLegacy(outer);
          if (await this.hasLegacyKeys(c)) moved = await this.upgrade(c);
        } else {
          await this.standaloneKeys(c);
        }
        if (old !== String(REDIS_FORMAT_VERSION)) await c.hset(this.keys.meta, "format", String(REDIS_FORMAT_VERSION));
        return { before: old, moved };
      },
      false,
    );
    if (before !== null && Number(before) > REDIS_FORMAT_VERSION) {
      throw this.newerFormat(before, "run setup with the newer statebag release that wrote it");
    }
    this.formatOk = true;
    return { version: REDIS_FORMAT_VERSION, changed: before !== String(REDIS_FORMAT_VERSION) || moved > 0 };
  }

  /** Moves this prefix's format-1 keys to format 2. */
  private upgrade(c: ScriptedClient): Promise<number> {
    const old = bucketAt(this.prefix);
    const cur = this.buckets[0];
    return upgradeLegacyLayout(
      c,
      { from: this.prefix, to: cur.prefix, idx: old.idx, exp: old.exp, rev: old.rev, newIdx: cur.idx, newExp: cur.exp, newRev: cur.rev },
      (detail) => new StoreKeyConflictError(this.url, this.prefix, `upgrading its keys to the current layout: ${detail}`),
    );
  }

  async get(id: string): Promise<StoredSession | undefined> {
    checkId(id);
    const [revision, data] = await this.call("get", false, (c) => c.hmget(this.keys.of(id).session, "r", "d"));
    if (revision === null || data === null) return undefined;
    return { session: loadStoredSession(this.codec, id, data, this.url), revision: Number(revision) };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const text = this.codec.serialize(session);
    const k = this.keys.of(id);
    const [ok, value] = await this.call("save", true, (c) =>
      c.sbSave(k.session, k.rev, k.idx, k.exp, expected === null ? "" : String(expected), text, ttlMs === undefined ? "" : String(ttlMs), id, Date.now(), k.sessionPrefix),
    );
    if (ok === 1) return Number(value);
    throw new ConflictError(id, expected, value === null ? null : Number(value));
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    const k = this.keys.of(id);
    const [ok, value] = await this.call("delete", true, (c) =>
      c.sbDelete(k.session, k.idx, k.exp, expected === undefined ? "" : String(expected), id),
    );
    if (ok === 1) return Number(value) === 1;
    throw new ConflictError(id, expected ?? null, value === null ? null : Number(value));
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    if (this.cluster) return this.call("scan", false, (c) => this.scanBuckets(c, cursor, limit, includeText));
    const b = this.buckets[0];
    const flat = await this.call("scan", false, (c) => c.sbScan(b.idx, cursor ?? "", limit + 1, includeText ? "1" : "0", b.sessionPrefix));
    const items = [];
    for (let i = 0; i < flat.length; i += includeText ? 4 : 2) {
      if (!includeText) {
        items.push(scanItem(flat[i], Number(flat[i + 1])));
        continue;
      }
      // PTTL: -1 no expiry (a positive value is the time left).
      const pttl = Number(flat[i + 3]);
      items.push(scanItem(flat[i], Number(flat[i + 1]), flat[i + 2], pttl > 0 ? pttl : undefined));
    }
    return scanPage(items, limit);
  }

  /**
   * One page of a cluster scan: the first `limit + 1` live ids after `cursor` over all buckets. Each
   * bucket is asked for a share (its SCAN script drops index entries of expired sessions, as on a
   * standalone server); a bucket that filled its share and might still hold ids below the page's
   * last one is asked again for more, so the merge is exact. Texts are then read per session.
   */
  private async scanBuckets(c: ScriptedClient, cursor: string | undefined, limit: number, includeText: boolean): Promise<ScanPage> {
    const want = limit + 1;
    const parts = this.buckets.map((bucket) => ({ bucket, ids: [] as string[], revisions: [] as number[], full: true, share: Math.max(4, Math.ceil((2 * want) / this.buckets.length)) }));
    let pending = parts;
    for (;;) {
      await Promise.all(
        pending.map(async (part) => {
          const after = part.ids.length ? part.ids[part.ids.length - 1] : (cursor ?? "");
          const flat = await c.sbScan(part.bucket.idx, after, part.share, "0", part.bucket.sessionPrefix);
          for (let i = 0; i < flat.length; i += 2) {
            part.ids.push(flat[i]);
            part.revisions.push(Number(flat[i + 1]));
          }
          part.full = flat.length / 2 === part.share;
          part.share *= 2;
        }),
      );
      const merged = parts.flatMap((part) => part.ids).sort(compareIds);
      const bound = merged.length >= want ? merged[want - 1] : undefined;
      pending = parts.filter((part) => part.full && (bound === undefined || compareIds(part.ids[part.ids.length - 1], bound) < 0));
      if (pending.length === 0) break;
    }
    const all = parts.flatMap((part) => part.ids.map((id, i) => ({ id, revision: part.revisions[i] }))).sort((a, b) => compareIds(a.id, b.id));
    const page = all.slice(0, limit);
    const next = all.length > limit ? page[page.length - 1].id : undefined;
    if (!includeText) return { items: page.map((x) => scanItem(x.id, x.revision)), ...(next === undefined ? {} : { cursor: next }) };
    // A session deleted or expired since its id was listed is left out; the cursor still moves on.
    const texts = await Promise.all(page.map((x) => c.sbText(this.keys.of(x.id).session)));
    const items = [];
    for (const [i, x] of page.entries()) {
      const found = texts[i];
      if (!found) continue;
      const pttl = Number(found[2]);
      items.push(scanItem(x.id, Number(found[0]), found[1], pttl > 0 ? pttl : undefined));
    }
    return { items, ...(next === undefined ? {} : { cursor: next }) };
  }

  async purgeExpired(): Promise<number> {
    return this.call("purgeExpired", true, async (c) => {
      const now = Date.now();
      const removed = await Promise.all(this.buckets.map((b) => c.sbPurge(b.idx, b.exp, now, b.sessionPrefix)));
      return removed.reduce((sum, n) => sum + Number(n), 0);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const client = this.client_;
    this.client_ = undefined;
    if (!client) return;
    if (client.status === "ready") await client.quit().catch(() => client.disconnect());
    else client.disconnect();
  }

  /**
   * Deletes every key of this store (SCAN + UNLINK): `P{}*` standalone, `P{*` on a cluster, and
   * `P meta`. Never another store's keys, whatever its prefix (`P{` starts no other store's keys).
   * Keys of the format-1 layout are left alone (`store setup` moves them first). For tests and teardown only.
   */
  async deleteAll(): Promise<number> {
    return this.call("deleteAll", true, async (c) => {
      let removed = 0;
      // `P*` lists other stores' keys too (`p:tenant2:...` under `p:`): only `P{...` and `P meta` are this store's.
      const root = `${this.prefix}${this.cluster ? "{" : STANDALONE_TAG}`;
      const own = (key: string) => key.startsWith(root) || key === this.keys.meta;
      const pattern = `${escapeGlob(this.prefix)}*`;
      // On a cluster every master holds part of the keys; one UNLINK per key (a multi-key UNLINK must stay in one slot).
      const servers: RedisClientLike[] = this.cluster ? (c as unknown as RedisClusterLike).nodes("master") : [c];
      for (const server of servers) {
        let cursor = "0";
        do {
          const [next, found] = await server.scan(cursor, "MATCH", pattern, "COUNT", 1000);
          const keys = found.filter(own);
          cursor = next;
          if (keys.length === 0) continue;
          if (!this.cluster) removed += await server.unlink(...keys);
          else removed += (await Promise.all(keys.map((key) => server.unlink(key)))).reduce((sum, n) => sum + n, 0);
        } while (cursor !== "0");
      }
      return removed;
    }, false);
  }
}

class RedisMessageLog implements MessageLog {
  constructor(
    private readonly store: RedisSessionStore,
    private readonly codec: MessageCodec,
  ) {}

  async appendMessages(storageId: string, messages: readonly ChatMessage[], options: AppendOptions): Promise<AppendResult> {
    checkId(storageId, "storageId");
    const operationId = checkOperationId(options?.operationId);
    const texts = serializeMessages(this.codec, messages);
    const k = this.store.keys.of(storageId);
    const [ok, version] = await this.store.call("appendMessages", true, (c) => c.sbAppend(k.list, k.hdr, k.ops, k.rev, operationId, texts));
    return { applied: ok === 1, version: Number(version) };
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    if (last === 0) return [];
    const texts = await this.store.call("getMessages", false, (c) => c.lrange(this.store.keys.of(storageId).list, last === undefined ? 0 : -last, -1));
    return texts.map((t) => this.codec.deserialize(t));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const k = this.store.keys.of(storageId);
    const [version, texts] = await this.store.call("readMessages", false, (c) => c.sbRead(k.list, k.hdr));
    return { messages: texts.map((t) => this.codec.deserialize(t)), version: Number(version) };
  }

  async replaceMessages(storageId: string, messages: readonly ChatMessage[], options: ReplaceOptions = {}): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages);
    const k = this.store.keys.of(storageId);
    const [ok, version] = await this.store.call("replaceMessages", true, (c) =>
      c.sbReplace(k.list, k.hdr, k.ops, k.rev, expected === undefined ? "" : String(expected), operationId ?? "", texts),
    );
    if (ok === 1) return Number(version);
    throw logConflict(storageId, expected!, Number(version));
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    const k = this.store.keys.of(storageId);
    const [ok, value] = await this.store.call("trimMessages", true, (c) =>
      c.sbTrim(k.list, k.hdr, k.rev, keepLast, expectedVersion === undefined ? "" : String(expectedVersion)),
    );
    if (ok === 1) return Number(value);
    throw logConflict(storageId, expectedVersion!, Number(value));
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    const k = this.store.keys.of(storageId);
    const removed = await this.store.call("deleteMessages", true, (c) => c.del(k.list, k.hdr, k.ops));
    return removed > 0;
  }
}
