/**
 * The Redis store's Lua scripts: with the key layout (keys.ts), its storage format. Every mutation
 * is one script (plain EVAL/EVALSHA, no modules), so the compare-and-swap is atomic on the server;
 * each touches the keys of one id and its bucket only, so it runs unchanged on a Redis Cluster.
 */
import type { RedisClientLike } from "./types.js";

/**
 * The owner index (keys.ts): helpers shared by the scripts that keep it. `ou`, `oi`, `om` are one
 * owner's keys. `om[id]` is a JSON array of candidates {u: updatedAt ms, r: revision (0 = pending,
 * written before the session on a cluster), l: labels (false = not known), w: write time ms}; each
 * candidate has the member `inv(u) .. id` in `ou` (inv(u): u in 15 digits, so descending byte order
 * is newest first, ties by descending id, as the SQL stores), and the id is in `oi` while it has any candidate.
 */
const IDX = `
local function inv(u) return string.format('%015d', u) end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function idx_get(om, id)
  local v = redis.call('HGET', om, id)
  if v then return cjson.decode(v) end
  return {}
end
local function idx_set(ou, oi, om, id, old, new)
  local keep = {}
  for _, c in ipairs(new) do keep[c.u] = true end
  for _, c in ipairs(old) do
    if not keep[c.u] then redis.call('ZREM', ou, inv(c.u) .. id) end
  end
  if #new == 0 then
    redis.call('HDEL', om, id)
    redis.call('ZREM', oi, id)
    return
  end
  for _, c in ipairs(new) do redis.call('ZADD', ou, 0, inv(c.u) .. id) end
  redis.call('HSET', om, id, cjson.encode(new))
  redis.call('ZADD', oi, 0, id)
end
-- The session is stored at revision r (u, labels l): drop committed candidates up to r and the
-- pending one this save wrote (pu), keep younger pending ones and newer commits.
local function idx_commit(ou, oi, om, id, r, u, l, pu, now, grace)
  local old = idx_get(om, id)
  local new = {}
  local newer = false
  for _, c in ipairs(old) do
    if c.r > r then
      newer = true
      new[#new + 1] = c
    elseif c.r == 0 and c.u ~= pu and now - c.w < grace then
      new[#new + 1] = c
    end
  end
  if not newer then new[#new + 1] = {u = u, r = r, l = l, w = now} end
  idx_set(ou, oi, om, id, old, new)
end
-- The session's revision r (and older ones) is gone (deleted or expired).
local function idx_drop(ou, oi, om, id, r)
  local old = idx_get(om, id)
  local new = {}
  for _, c in ipairs(old) do
    if c.r > r or c.r == 0 then new[#new + 1] = c end
  end
  idx_set(ou, oi, om, id, old, new)
end
local function owner_keys(prefix, owner)
  return prefix .. 'ou:' .. owner, prefix .. 'oi:' .. owner, prefix .. 'om:' .. owner
end
-- Expired sessions of this bucket (at most n): their ids leave idx and exp, and their owner index
-- entries are dropped here (inline, standalone) or returned as {owner, id, revision}... for the caller.
local function sweep(idx, exp, xo, sprefix, now, n, inline, oprefix, out)
  local removed = 0
  local stale = redis.call('ZRANGEBYSCORE', exp, '-inf', now, 'LIMIT', 0, n)
  for _, sid in ipairs(stale) do
    if redis.call('EXISTS', sprefix .. sid) == 0 then
      redis.call('ZREM', idx, sid)
      removed = removed + 1
      local x = xo and redis.call('HGET', xo, sid)
      if x then
        redis.call('HDEL', xo, sid)
        local at = string.find(x, '\0', 1, true)
        local owner, r = string.sub(x, 1, at - 1), tonumber(string.sub(x, at + 1))
        if inline then
          local ou, oi, om = owner_keys(oprefix, owner)
          idx_drop(ou, oi, om, sid, r)
        else
          out[#out + 1] = owner
          out[#out + 1] = sid
          out[#out + 1] = r
        end
      end
    end
    redis.call('ZREM', exp, sid)
  end
  return removed
end
`;

/** Pending candidates younger than this are never dropped by a repair (a save between its two steps). */
export const PENDING_GRACE_MS = 300_000;

/**
 * KEYS: session, rev, idx, exp. ARGV: expected ('' = must be absent), data, ttlMs ('' = none), id,
 * nowMs, sessionKeyPrefix, then the metadata (absent: none handled, for the raw-driver baseline):
 * 7 ownerGiven ('1'/'0'), 8 owner, 9 codec owner ('=' .. the owner the body was serialized for, '=' none; '' = not checked),
 * 10 title mode ('1' set, '0' keep, '-' clear), 11 title, 12 labels mode ('1' set, '0' keep), 13 labels JSON,
 * 14 inline ('1': owner index in this slot, standalone), 15 owner key prefix, 16 xo (bucket's
 * expiring-owner hash), 17 the revision to write, drawn beforehand by DRAW ('' or absent: INCR rev here).
 * Returns {1, rev, owner|false, u, c, labels JSON|false, swept...} | {0, current} (conflict) |
 * {2} (another owner) | {3, stored owner} (body serialized for the wrong owner: serialize again).
 */
const SAVE = `${IDX}
local meta = ARGV[7] ~= nil
-- With metadata, the revision and the stored metadata in one read; the hash's fields in one HSET
-- (and one HDEL, only for fields that are there): every call a script makes costs the server time.
local cur, old
if meta then
  old = redis.call('HMGET', KEYS[1], 'r', 'o', 'l', 'c', 'u')
  cur = old[1]
else
  cur = redis.call('HGET', KEYS[1], 'r')
end
if ARGV[1] == '' then
  if cur then return {0, cur} end
elseif cur ~= ARGV[1] then
  return {0, cur}
end
local owner, u, c, labels = false, 0, 0, false
local now = tonumber(ARGV[5])
local inline = meta and ARGV[14] == '1'
local set, del = {'r', 0, 'd', ARGV[2]}, {}
if meta then
  now = now_ms()
  if cur then
    owner = old[2]
    if ARGV[7] == '1' and owner ~= ARGV[8] then return {2} end
    if ARGV[9] ~= '' and '=' .. (owner or '') ~= ARGV[9] then return {3, owner or ''} end
  elseif ARGV[7] == '1' then
    owner = ARGV[8]
    set[#set + 1] = 'o'
    set[#set + 1] = owner
  end
  u = now
  if old[5] and tonumber(old[5]) >= u then u = tonumber(old[5]) + 1 end
  c = tonumber(old[4] or u)
  labels = old[3]
  if ARGV[12] == '1' then labels = ARGV[13] end
  if labels == '{}' then labels = false end
  set[#set + 1] = 'c'
  set[#set + 1] = c
  set[#set + 1] = 'u'
  set[#set + 1] = u
  if ARGV[10] == '1' then
    set[#set + 1] = 't'
    set[#set + 1] = ARGV[11]
  elseif ARGV[10] == '-' then
    del[#del + 1] = 't'
  end
  if labels then
    set[#set + 1] = 'l'
    set[#set + 1] = labels
  elseif old[3] then
    del[#del + 1] = 'l'
  end
end
local rev
if ARGV[17] ~= nil and ARGV[17] ~= '' then rev = tonumber(ARGV[17]) else rev = redis.call('INCR', KEYS[2]) end
set[2] = rev
redis.call('HSET', KEYS[1], unpack(set))
if #del > 0 then redis.call('HDEL', KEYS[1], unpack(del)) end
if ARGV[3] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('ZADD', KEYS[4], tonumber(ARGV[5]) + tonumber(ARGV[3]), ARGV[4])
  if owner then redis.call('HSET', ARGV[16], ARGV[4], owner .. '\0' .. rev) end
else
  redis.call('PERSIST', KEYS[1])
  redis.call('ZREM', KEYS[4], ARGV[4])
  if meta then redis.call('HDEL', ARGV[16], ARGV[4]) end
end
redis.call('ZADD', KEYS[3], 0, ARGV[4])
if inline and owner then
  local ou, oi, om = owner_keys(ARGV[15], owner)
  idx_commit(ou, oi, om, ARGV[4], rev, u, labels and cjson.decode(labels) or {}, -1, now, ${PENDING_GRACE_MS})
end
local out = {1, rev, owner, u, c, labels}
sweep(KEYS[3], KEYS[4], meta and ARGV[16], ARGV[6], tonumber(ARGV[5]), 16, inline, ARGV[15], out)
return out
`;

/**
 * For a codec that binds the revision: KEYS: rev, session. Draws the revision a save will write
 * (INCR of the bucket's counter, so it is greater than any revision the caller has seen) and
 * returns {drawn, current revision|false, owner|false, title|false}.
 */
const DRAW = `
local cur = redis.call('HMGET', KEYS[2], 'r', 'o', 't')
return {redis.call('INCR', KEYS[1]), cur[1], cur[2], cur[3]}
`;

/**
 * Protected owners and titles: a session written before (plaintext owner or title) gets the
 * protected forms right after a save. KEYS: session, xo. ARGV: revision (the save's), owner as
 * stored ('' unowned), its protected form, protected title ('' keep), id. Returns 1 when changed, 0 when the
 * session has moved on (another save, which does the same).
 */
const PROTECT = `
local cur = redis.call('HMGET', KEYS[1], 'r', 'o')
if cur[1] ~= ARGV[1] or (cur[2] or '') ~= ARGV[2] then return 0 end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 't', ARGV[4]) end
if ARGV[2] == '' then return 1 end
redis.call('HSET', KEYS[1], 'o', ARGV[3])
if redis.call('HEXISTS', KEYS[2], ARGV[5]) == 1 then redis.call('HSET', KEYS[2], ARGV[5], ARGV[3] .. '\0' .. ARGV[1]) end
return 1
`;

/**
 * KEYS: session, idx, exp, xo. ARGV: expected ('' = any), id, inline ('1'), owner key prefix.
 * Returns {ok, current|deleted, owner|false, revision}.
 */
const DELETE = `${IDX}
local cur = redis.call('HGET', KEYS[1], 'r')
if ARGV[1] ~= '' and cur ~= ARGV[1] then return {0, cur} end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('HDEL', KEYS[4], ARGV[2])
if not cur then return {1, 0} end
local owner = redis.call('HGET', KEYS[1], 'o')
redis.call('DEL', KEYS[1])
if owner and ARGV[3] == '1' then
  local ou, oi, om = owner_keys(ARGV[4], owner)
  idx_drop(ou, oi, om, ARGV[2], tonumber(cur))
end
return {1, 1, owner, cur}
`;

/**
 * Owner slot. KEYS: ou, oi, om. ARGV: op, id, then
 * 'add' u labelsJSON|'' (a pending candidate before a create) |
 * 'commit' r u labelsJSON|'' pendingU|'' | 'abort' pendingU | 'drop' r |
 * 'repair' om value as read ('' = none), present ('1'/'0'), r, u, labelsJSON|'' (only if om is unchanged).
 */
const INDEX = `${IDX}
local op, id = ARGV[1], ARGV[2]
local now = now_ms()
local function lab(text) if text == '' then return {} end return cjson.decode(text) end
if op == 'add' then
  local old = idx_get(KEYS[3], id)
  local new = {}
  for _, c in ipairs(old) do new[#new + 1] = c end
  new[#new + 1] = {u = tonumber(ARGV[3]), r = 0, l = lab(ARGV[4]), w = now}
  idx_set(KEYS[1], KEYS[2], KEYS[3], id, old, new)
elseif op == 'commit' then
  local pu = -1
  if ARGV[6] ~= '' then pu = tonumber(ARGV[6]) end
  idx_commit(KEYS[1], KEYS[2], KEYS[3], id, tonumber(ARGV[3]), tonumber(ARGV[4]), lab(ARGV[5]), pu, now, ${PENDING_GRACE_MS})
elseif op == 'abort' then
  local old = idx_get(KEYS[3], id)
  local new = {}
  for _, c in ipairs(old) do
    if not (c.r == 0 and c.u == tonumber(ARGV[3])) then new[#new + 1] = c end
  end
  idx_set(KEYS[1], KEYS[2], KEYS[3], id, old, new)
elseif op == 'drop' then
  idx_drop(KEYS[1], KEYS[2], KEYS[3], id, tonumber(ARGV[3]))
elseif op == 'repair' then
  if (redis.call('HGET', KEYS[3], id) or '') ~= ARGV[3] then return 0 end
  local old = idx_get(KEYS[3], id)
  local new = {}
  local r = tonumber(ARGV[5])
  for _, c in ipairs(old) do
    if (c.r == 0 and now - c.w < ${PENDING_GRACE_MS}) or (ARGV[4] == '1' and c.r > r) then new[#new + 1] = c end
  end
  if ARGV[4] == '1' then new[#new + 1] = {u = tonumber(ARGV[6]), r = r, l = lab(ARGV[7]), w = now} end
  idx_set(KEYS[1], KEYS[2], KEYS[3], id, old, new)
end
return 1
`;

/**
 * Owner slot, one page of index candidates. KEYS: ou, oi, om. ARGV: order ('u' | 'i'), after
 * (exclusive member of ou, or id of oi; '' = start), wanted, updatedAfter ms ('' none), updatedBefore
 * ms ('' none), labels JSON ('' none). Returns flat [id, u|'', om value]*, prefiltered by the
 * candidates (the caller checks each against the session itself), then the last position scanned
 * and 1 when the index has nothing after it (0: scanning stopped early, ask again from there).
 */
const LIST = `${IDX}
local order, wanted = ARGV[1], tonumber(ARGV[3])
local ua, ub = tonumber(ARGV[4]), tonumber(ARGV[5])
local want = false
if ARGV[6] ~= '' then want = cjson.decode(ARGV[6]) end
local function fits(c)
  if ua and c.u <= ua then return false end
  if ub and c.u >= ub then return false end
  if want and c.l ~= false then
    for k, v in pairs(want) do if c.l[k] ~= v then return false end end
  end
  return true
end
local out = {}
local n, last, scanned, done = 0, ARGV[2], 0, 0
local lo, hi = '-', '+'
local key, range = KEYS[2], 'ZRANGEBYLEX'
if order == 'u' then
  key, range = KEYS[1], 'ZREVRANGEBYLEX'
  if ub then hi = '(' .. inv(ub) end
  if ua then lo = '[' .. inv(ua + 1) end
  if last ~= '' and (hi == '+' or last <= string.sub(hi, 2)) then hi = '(' .. last end
elseif last ~= '' then
  lo = '(' .. last
end
while n < wanted and scanned < 5000 do
  local batch
  if order == 'u' then batch = redis.call(range, key, hi, lo, 'LIMIT', 0, wanted - n + 8)
  else batch = redis.call(range, key, lo, hi, 'LIMIT', 0, wanted - n + 8) end
  if #batch == 0 then done = 1 break end
  for _, m in ipairs(batch) do
    scanned = scanned + 1
    local id, u = m, ''
    if order == 'u' then
      id = string.sub(m, 16)
      u = tonumber(string.sub(m, 1, 15))
    end
    local raw = redis.call('HGET', KEYS[3], id)
    local ok = false
    if raw then
      for _, c in ipairs(cjson.decode(raw)) do
        if (order ~= 'u' or c.u == u) and fits(c) then ok = true end
      end
    end
    if ok then
      out[#out + 1] = id
      out[#out + 1] = tostring(u)
      out[#out + 1] = raw
      n = n + 1
    end
    last = m
    if order == 'u' then hi = '(' .. m else lo = '(' .. m end
    if n >= wanted then break end
  end
end
out[#out + 1] = last
out[#out + 1] = done
return out
`;

/** KEYS: session. The metadata without the body: {r, o, t, l, c, u, pttl}, or false when absent. */
const META = `
local v = redis.call('HMGET', KEYS[1], 'r', 'o', 't', 'l', 'c', 'u')
if not v[1] then return false end
v[7] = redis.call('PTTL', KEYS[1])
return v
`;

/**
 * KEYS: idx. ARGV: cursor ('' = start), wanted, withText ('1'/'0'), sessionKeyPrefix. Returns flat
 * [id, rev, owner, title, labels JSON, createdAt, updatedAt, (text, pttl)]* (absent fields nil).
 */
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
    local v = redis.call('HMGET', ARGV[4] .. sid, 'r', 'o', 't', 'l', 'c', 'u', 'd')
    if v[1] then
      out[#out + 1] = sid
      for i = 1, 6 do out[#out + 1] = v[i] end
      if ARGV[3] == '1' then
        out[#out + 1] = v[7]
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

/**
 * KEYS: session. Returns {revision, text, pttl, owner, title, labels JSON, createdAt, updatedAt}, or
 * false when absent (one bucket's part of a cluster scan).
 */
const TEXT = `
local v = redis.call('HMGET', KEYS[1], 'r', 'd', 'o', 't', 'l', 'c', 'u')
if not v[1] then return false end
return {v[1], v[2], redis.call('PTTL', KEYS[1]), v[3], v[4], v[5], v[6], v[7]}
`;

/**
 * KEYS: idx, exp, xo. ARGV: nowMs, sessionKeyPrefix, inline ('1'), owner key prefix. Drops index
 * entries of expired sessions. Returns {removed, owner, id, revision, ...} (owner entries left to the caller).
 */
const PURGE = `${IDX}
local out = {0}
out[1] = sweep(KEYS[1], KEYS[2], KEYS[3], ARGV[2], tonumber(ARGV[1]), 1000, ARGV[3] == '1', ARGV[4], out)
return out
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
export const REDIS_LUA = {
  save: SAVE,
  draw: DRAW,
  protect: PROTECT,
  index: INDEX,
  list: LIST,
  meta: META,
  delete: DELETE,
  scan: SCAN,
  purge: PURGE,
  append: APPEND,
  read: READ,
  replace: REPLACE,
  trim: TRIM,
  text: TEXT,
} as const;

export type Reply = [number, string | number | null];

export interface Scripts {
  sbSave(...args: (string | number)[]): Promise<(string | number | null)[]>;
  sbDraw(rev: string, session: string): Promise<[number, string | null, string | null, string | null]>;
  sbProtect(...args: string[]): Promise<number>;
  sbDelete(...args: (string | number)[]): Promise<(string | number | null)[]>;
  sbScan(...args: (string | number)[]): Promise<(string | null)[]>;
  sbPurge(...args: (string | number)[]): Promise<(string | number)[]>;
  sbIndex(...args: (string | number)[]): Promise<number>;
  sbList(...args: (string | number)[]): Promise<string[]>;
  sbMeta(key: string): Promise<(string | number | null)[] | null>;
  /** Arrays among the arguments are flattened by the driver (a long list is passed as one array, never spread). */
  sbAppend(...args: (string | number | readonly string[])[]): Promise<Reply>;
  sbRead(...args: (string | number)[]): Promise<[number, string[]]>;
  sbReplace(...args: (string | number | readonly string[])[]): Promise<Reply>;
  sbTrim(...args: (string | number)[]): Promise<Reply>;
  sbOuter(...args: (string | number)[]): Promise<string | null>;
  sbText(key: string): Promise<[string, string, number, ...(string | null)[]] | null>;
  sbMoveLegacy(from: string, to: string): Promise<number>;
  sbMergeLegacy(...keys: string[]): Promise<number>;
}

/** A standalone client or a cluster client, with the scripts defined on it. */
export type ScriptedClient = RedisClientLike & Scripts;

/** Defines every script on a new client, as the commands `Scripts` names. */
export function defineScripts(client: RedisClientLike): void {
  client.defineCommand("sbSave", { numberOfKeys: 4, lua: SAVE });
  client.defineCommand("sbDraw", { numberOfKeys: 2, lua: DRAW });
  client.defineCommand("sbProtect", { numberOfKeys: 2, lua: PROTECT });
  client.defineCommand("sbDelete", { numberOfKeys: 4, lua: DELETE });
  client.defineCommand("sbIndex", { numberOfKeys: 3, lua: INDEX });
  client.defineCommand("sbList", { numberOfKeys: 3, lua: LIST });
  client.defineCommand("sbMeta", { numberOfKeys: 1, lua: META });
  client.defineCommand("sbScan", { numberOfKeys: 1, lua: SCAN });
  client.defineCommand("sbPurge", { numberOfKeys: 3, lua: PURGE });
  client.defineCommand("sbAppend", { numberOfKeys: 4, lua: APPEND });
  client.defineCommand("sbRead", { numberOfKeys: 2, lua: READ });
  client.defineCommand("sbReplace", { numberOfKeys: 4, lua: REPLACE });
  client.defineCommand("sbTrim", { numberOfKeys: 3, lua: TRIM });
  client.defineCommand("sbOuter", { numberOfKeys: 0, lua: OUTER });
  client.defineCommand("sbText", { numberOfKeys: 1, lua: TEXT });
  client.defineCommand("sbMoveLegacy", { numberOfKeys: 2, lua: MOVE_LEGACY });
  client.defineCommand("sbMergeLegacy", { numberOfKeys: 6, lua: MERGE_LEGACY });
}
