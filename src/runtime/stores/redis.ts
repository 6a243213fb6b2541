/**
 * Redis store (ioredis), for many machines and for sessions that should expire.
 *
 * Every mutation is one Lua script (plain EVAL/EVALSHA, no modules), so the compare-and-swap is
 * atomic on the server. Layout under the key prefix `P` (default `statebag:`):
 *   P s:<id>   hash {r: revision, d: serialized session}; TTL via PEXPIRE
 *   P rev      revision counter (INCR), shared by sessions and message logs
 *   P idx      sorted set (all scores 0) of session ids: `scan` pages through it with ZRANGEBYLEX
 *   P exp      sorted set of ids with a TTL, scored by expiry time, to drop expired ids from `idx`
 *   P ml:<id>  list of serialized messages; P mh:<id> hash {v: version}; P mo:<id> set of operation ids
 *
 * Scripts touch keys derived inside the script, so the store targets a standalone Redis (or one
 * primary), not Redis Cluster.
 *
 * Connections: no background reconnect loop and no offline queue. A call while the server is down
 * tries to connect once (`connectTimeoutMs`) and fails with `StoreUnavailableError`; a command in
 * flight when the connection drops is never re-sent (it may have run), it fails with
 * `outcomeUnknown`. The next call after the server is back connects again.
 */
import type { Redis as RedisClient, RedisOptions } from "ioredis";
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, serializeMessages } from "./codec.js";
import { loadDriver } from "./drivers.js";
import {
  checkDelete,
  checkId,
  checkLast,
  checkOperationId,
  checkReplace,
  checkSave,
  checkScan,
  checkTrim,
  isNetworkError,
  scanItem,
  scanPage,
  sessionId,
} from "./common.js";
import { ConflictError, StoreAuthenticationError, StoreKeyConflictError, StoreNotSetUpError, StoreUnavailableError, logConflict } from "./errors.js";
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
} from "./types.js";
import { redactUrl } from "./url.js";

export const REDIS_FORMAT_VERSION = 1;

export interface RedisStoreOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...`. */
  url: string;
  /** Key prefix (default `statebag:`). */
  prefix?: string;
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** Connect timeout (default 3000 ms). */
  connectTimeoutMs?: number;
  /** Per-command timeout (default 10000 ms). */
  commandTimeoutMs?: number;
  /** Extra ioredis options (merged last). */
  redisOptions?: RedisOptions;
  /** The URL to show in errors (default: `url`, password redacted). */
  displayUrl?: string;
}

type RedisCtor = new (url: string, options: RedisOptions) => RedisClient;
function loadRedis(): RedisCtor {
  const mod = loadDriver<{ default?: RedisCtor; Redis?: RedisCtor }>("ioredis");
  return (mod.Redis ?? mod.default ?? (mod as unknown as RedisCtor)) as RedisCtor;
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

/** ARGV: candidate prefixes. Returns the first one a store uses (it has an index or a format marker), or false. */
const OUTER = `
for _, p in ipairs(ARGV) do
  if redis.call('TYPE', p .. 'idx').ok == 'zset' or redis.call('TYPE', p .. 'rev').ok == 'string' or redis.call('TYPE', p .. 'meta').ok == 'hash' then return p end
end
return false
`;

/** The key tags a store puts between its prefix and an id. */
const ID_TAGS = ["s:", "ml:", "mh:", "mo:"];

/**
 * The prefixes of stores whose id-keyed keys would contain this prefix's keys: for `app:s:x:`,
 * the store `app:` (its session `x:...` is this store's `...`).
 */
function enclosingPrefixes(prefix: string): string[] {
  const out: string[] = [];
  for (const tag of ID_TAGS) {
    for (let at = prefix.indexOf(tag); at >= 0; at = prefix.indexOf(tag, at + 1)) out.push(prefix.slice(0, at));
  }
  return out;
}

/** The Lua scripts (exported for the benchmark's raw-driver baseline). @internal */
export const REDIS_LUA = { save: SAVE, delete: DELETE, scan: SCAN, purge: PURGE, append: APPEND, read: READ, replace: REPLACE, trim: TRIM } as const;

type Reply = [number, string | number | null];

interface ScriptedClient extends RedisClient {
  sbSave(...args: (string | number)[]): Promise<Reply>;
  sbDelete(...args: (string | number)[]): Promise<Reply>;
  sbScan(...args: (string | number)[]): Promise<string[]>;
  sbPurge(...args: (string | number)[]): Promise<number>;
  /** Arrays among the arguments are flattened by ioredis (a long list is passed as one array, never spread). */
  sbAppend(...args: (string | number | readonly string[])[]): Promise<Reply>;
  sbRead(...args: (string | number)[]): Promise<[number, string[]]>;
  sbReplace(...args: (string | number | readonly string[])[]): Promise<Reply>;
  sbTrim(...args: (string | number)[]): Promise<Reply>;
  sbOuter(...args: (string | number)[]): Promise<string | null>;
}

const NETWORK_MESSAGES = /Connection is closed|Stream isn't writeable|Command timed out|connect ETIMEDOUT|MaxRetriesPerRequest|Reached the max retries|^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY|OOM)\b/;

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
  private lastError: unknown;
  private closed = false;
  /** The format marker under `P meta` was read once and is one this code can use (or absent). */
  private formatOk = false;
  /** The format check in flight, shared by the calls that wait for it. */
  private formatCheck: Promise<void> | undefined;
  /** @internal */
  readonly keys: {
    session: (id: string) => string;
    sessionPrefix: string;
    rev: string;
    idx: string;
    exp: string;
    list: (id: string) => string;
    hdr: (id: string) => string;
    ops: (id: string) => string;
    meta: string;
  };

  constructor(options: RedisStoreOptions) {
    this.options = options;
    this.url = options.displayUrl ?? redactUrl(options.url);
    const p = (this.prefix = options.prefix ?? "statebag:");
    this.codec = options.codec ?? defaultSessionCodec();
    this.keys = {
      session: (id) => `${p}s:${id}`,
      sessionPrefix: `${p}s:`,
      rev: `${p}rev`,
      idx: `${p}idx`,
      exp: `${p}exp`,
      list: (id) => `${p}ml:${id}`,
      hdr: (id) => `${p}mh:${id}`,
      ops: (id) => `${p}mo:${id}`,
      meta: `${p}meta`,
    };
    this.messages = new RedisMessageLog(this, options.messageCodec ?? defaultMessageCodec);
  }

  private get client(): ScriptedClient {
    if (this.closed) throw new Error(`the Redis store at ${this.url} was closed`);
    if (!this.client_) {
      const Redis = loadRedis();
      const client = new Redis(this.options.url, {
        lazyConnect: true,
        connectTimeout: this.options.connectTimeoutMs ?? 3000,
        commandTimeout: this.options.commandTimeoutMs ?? 10_000,
        // We reconnect on demand (next call), never in a background loop, and never queue or
        // re-send commands: a re-sent compare-and-swap could report a conflict with itself.
        retryStrategy: () => null,
        enableOfflineQueue: false,
        autoResendUnfulfilledCommands: false,
        maxRetriesPerRequest: 0,
        ...this.options.redisOptions,
      }) as ScriptedClient;
      client.on("error", (error: unknown) => {
        this.lastError = error;
      });
      client.defineCommand("sbSave", { numberOfKeys: 4, lua: SAVE });
      client.defineCommand("sbDelete", { numberOfKeys: 3, lua: DELETE });
      client.defineCommand("sbScan", { numberOfKeys: 1, lua: SCAN });
      client.defineCommand("sbPurge", { numberOfKeys: 2, lua: PURGE });
      client.defineCommand("sbAppend", { numberOfKeys: 4, lua: APPEND });
      client.defineCommand("sbRead", { numberOfKeys: 2, lua: READ });
      client.defineCommand("sbReplace", { numberOfKeys: 4, lua: REPLACE });
      client.defineCommand("sbTrim", { numberOfKeys: 3, lua: TRIM });
      client.defineCommand("sbOuter", { numberOfKeys: 0, lua: OUTER });
      this.client_ = client;
    }
    return this.client_;
  }

  private async connect(operation: string): Promise<ScriptedClient> {
    const client = this.client;
    if (client.status === "ready") return client;
    this.connecting ??= (async () => {
      try {
        if (client.status === "connecting" || client.status === "connect") {
          await new Promise<void>((resolve, reject) => {
            const onReady = () => (cleanup(), resolve());
            const onEnd = () => (cleanup(), reject(this.lastError ?? new Error("Connection is closed.")));
            const cleanup = () => (client.off("ready", onReady), client.off("end", onEnd));
            client.once("ready", onReady);
            client.once("end", onEnd);
          });
        } else {
          this.lastError = undefined;
          await client.connect();
        }
      } catch (error) {
        throw this.lastError ?? error;
      } finally {
        this.connecting = undefined;
      }
    })();
    try {
      await this.connecting;
    } catch (error) {
      if (error instanceof Error && /^(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i.test(error.message)) {
        throw new StoreAuthenticationError(
          "Redis",
          this.url,
          this.username(),
          "check the user name and password in the store URL (redis://user:password@host:6379; percent-encode special characters) against the server's requirepass / ACL users",
        );
      }
      throw new StoreUnavailableError("Redis", this.url, operation, { cause: error });
    }
    return client;
  }

  /**
   * Connects if needed and runs `fn`, mapping connection failures. The first call on this store
   * object (and every call until it passes) first reads the format marker, refusing a newer format
   * with `StoreNotSetUpError`; `checkFormat: false` skips that (setup, teardown). @internal
   */
  async call<T>(operation: string, write: boolean, fn: (client: ScriptedClient) => Promise<T>, checkFormat = true): Promise<T> {
    let client = this.client;
    if (client.status !== "ready") client = await this.connect(operation);
    let sent = false;
    try {
      if (checkFormat && !this.formatOk) await this.checkFormat(client);
      sent = true;
      return await fn(client);
    } catch (error) {
      if (error instanceof StoreNotSetUpError || error instanceof StoreKeyConflictError) throw error;
      if (error instanceof Error && /^WRONGTYPE\b/.test(error.message)) {
        throw new StoreKeyConflictError(this.url, this.prefix, `a key ${operation} uses holds another type of value (${error.message.split("\n")[0]})`);
      }
      if (isUnavailable(error)) {
        // A reply (LOADING, BUSY, READONLY, OOM, ...) means the server is up but refusing work; the
        // client's status is no guide: it can still read "ready" just after the socket closed.
        const refused = (error as Error).name === "ReplyError";
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
    const [format, outer] = await Promise.all([client.hget(this.keys.meta, "format"), this.enclosingStore(client)]);
    if (outer) {
      throw new StoreKeyConflictError(this.url, this.prefix, `its keys lie inside those of the store with prefix "${outer}" (a session or message log there has an id starting with "${this.prefix.slice(outer.length)}")`);
    }
    if (format !== null && Number(format) > REDIS_FORMAT_VERSION) {
      throw this.newerFormat(format, "upgrade statebag in this app to the release that wrote the store, or use another key prefix");
    }
    this.formatOk = true;
  }

  /** The prefix of a store whose keys would contain this one's, if one is in use. */
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
      `the Redis store at ${this.url} (prefix "${this.prefix}") has storage format ${format}, newer than this statebag knows (${REDIS_FORMAT_VERSION})`,
      hint,
    );
  }

  /** Records the format version under `P meta` (Redis needs no DDL). Refuses to mark a newer format as older. */
  async setup(): Promise<SetupResult> {
    const before = await this.call(
      "setup",
      true,
      async (c) => {
        const old = await c.hget(this.keys.meta, "format");
        if (old !== null && Number(old) > REDIS_FORMAT_VERSION) return old;
        if (old !== String(REDIS_FORMAT_VERSION)) await c.hset(this.keys.meta, "format", String(REDIS_FORMAT_VERSION));
        return old;
      },
      false,
    );
    if (before !== null && Number(before) > REDIS_FORMAT_VERSION) {
      throw this.newerFormat(before, "run setup with the newer statebag release that wrote it");
    }
    this.formatOk = true;
    return { version: REDIS_FORMAT_VERSION, changed: before !== String(REDIS_FORMAT_VERSION) };
  }

  async get(id: string): Promise<StoredSession | undefined> {
    checkId(id);
    const [revision, data] = await this.call("get", false, (c) => c.hmget(this.keys.session(id), "r", "d"));
    if (revision === null || data === null) return undefined;
    return { session: this.codec.deserialize(data), revision: Number(revision) };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const text = this.codec.serialize(session);
    const k = this.keys;
    const [ok, value] = await this.call("save", true, (c) =>
      c.sbSave(k.session(id), k.rev, k.idx, k.exp, expected === null ? "" : String(expected), text, ttlMs === undefined ? "" : String(ttlMs), id, Date.now(), k.sessionPrefix),
    );
    if (ok === 1) return Number(value);
    throw new ConflictError(id, expected, value === null ? null : Number(value));
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    const k = this.keys;
    const [ok, value] = await this.call("delete", true, (c) =>
      c.sbDelete(k.session(id), k.idx, k.exp, expected === undefined ? "" : String(expected), id),
    );
    if (ok === 1) return Number(value) === 1;
    throw new ConflictError(id, expected ?? null, value === null ? null : Number(value));
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    const flat = await this.call("scan", false, (c) => c.sbScan(this.keys.idx, cursor ?? "", limit + 1, includeText ? "1" : "0", this.keys.sessionPrefix));
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

  async purgeExpired(): Promise<number> {
    return this.call("purgeExpired", true, (c) => c.sbPurge(this.keys.idx, this.keys.exp, Date.now(), this.keys.sessionPrefix));
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

  /** Deletes every key under this store's prefix (SCAN + UNLINK), whatever its format. For tests and teardown only. */
  async deleteAll(): Promise<number> {
    return this.call("deleteAll", true, async (c) => {
      let removed = 0;
      let cursor = "0";
      do {
        const [next, keys] = await c.scan(cursor, "MATCH", `${escapeGlob(this.prefix)}*`, "COUNT", 1000);
        cursor = next;
        if (keys.length) removed += await c.unlink(keys);
      } while (cursor !== "0");
      return removed;
    }, false);
  }
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
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
    const k = this.store.keys;
    const [ok, version] = await this.store.call("appendMessages", true, (c) =>
      c.sbAppend(k.list(storageId), k.hdr(storageId), k.ops(storageId), k.rev, operationId, texts),
    );
    return { applied: ok === 1, version: Number(version) };
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    if (last === 0) return [];
    const texts = await this.store.call("getMessages", false, (c) => c.lrange(this.store.keys.list(storageId), last === undefined ? 0 : -last, -1));
    return texts.map((t) => this.codec.deserialize(t));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const k = this.store.keys;
    const [version, texts] = await this.store.call("readMessages", false, (c) => c.sbRead(k.list(storageId), k.hdr(storageId)));
    return { messages: texts.map((t) => this.codec.deserialize(t)), version: Number(version) };
  }

  async replaceMessages(storageId: string, messages: readonly ChatMessage[], options: ReplaceOptions = {}): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages);
    const k = this.store.keys;
    const [ok, version] = await this.store.call("replaceMessages", true, (c) =>
      c.sbReplace(k.list(storageId), k.hdr(storageId), k.ops(storageId), k.rev, expected === undefined ? "" : String(expected), operationId ?? "", texts),
    );
    if (ok === 1) return Number(version);
    throw logConflict(storageId, expected!, Number(version));
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    const k = this.store.keys;
    const [ok, value] = await this.store.call("trimMessages", true, (c) =>
      c.sbTrim(k.list(storageId), k.hdr(storageId), k.rev, keepLast, expectedVersion === undefined ? "" : String(expectedVersion)),
    );
    if (ok === 1) return Number(value);
    throw logConflict(storageId, expectedVersion!, Number(value));
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    const k = this.store.keys;
    const removed = await this.store.call("deleteMessages", true, (c) => c.del(k.list(storageId), k.hdr(storageId), k.ops(storageId)));
    return removed > 0;
  }
}
