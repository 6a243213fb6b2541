/**
 * The Redis store's Lua scripts: with the key layout (keys.ts), its storage format. Every mutation
 * is one script (plain EVAL/EVALSHA, no modules), so the compare-and-swap is atomic on the server;
 * each touches the keys of one id and its bucket only, so it runs unchanged on a Redis Cluster.
 */
import type { RedisClientLike } from "./types.js";

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

/** KEYS: from, to. Returns 1 moved, 0 `to` exists (left alone), 2 `from` is gone (expired meanwhile). */
const MOVE_LEGACY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 2 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
`;

/**
 * KEYS: old idx, old exp, old rev, new idx, new exp, new rev. Merges the index sets (an expiry keeps
 * the later time) and keeps the larger revision counter, so revisions still only grow; then drops
 * the old keys, which is what marks the store as format 2.
 */
const MERGE_LEGACY = `
for i = 1, 2 do
  if redis.call('TYPE', KEYS[i]).ok == 'zset' then
    redis.call('ZUNIONSTORE', KEYS[i + 3], 2, KEYS[i + 3], KEYS[i], 'AGGREGATE', 'MAX')
    redis.call('DEL', KEYS[i])
  end
end
if redis.call('TYPE', KEYS[3]).ok == 'string' then
  local old = tonumber(redis.call('GET', KEYS[3])) or 0
  local cur = tonumber(redis.call('GET', KEYS[6]) or '0') or 0
  if old > cur then redis.call('SET', KEYS[6], old) end
  redis.call('DEL', KEYS[3])
end
return 1
`;

/** The Lua scripts (exported for the benchmark's raw-driver baseline). @internal */
export const REDIS_LUA = { save: SAVE, delete: DELETE, scan: SCAN, purge: PURGE, append: APPEND, read: READ, replace: REPLACE, trim: TRIM, text: TEXT } as const;

export type Reply = [number, string | number | null];

export interface Scripts {
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
export type ScriptedClient = RedisClientLike & Scripts;

/** Defines every script on a new client, as the commands `Scripts` names. */
export function defineScripts(client: RedisClientLike): void {
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
}
