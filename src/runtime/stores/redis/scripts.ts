/**
 * The Redis store's Lua scripts: with the key layout (keys.ts), its storage format. Every mutation
 * is one script (plain EVAL/EVALSHA, no modules), so the compare-and-swap is atomic on the server;
 * each touches the keys of one id and its bucket only, so it runs unchanged on a Redis Cluster.
 *
 * The store never calls a script directly: each has one typed wrapper below (`run...`), which
 * takes an options object, builds the script's positional arguments, and decodes its reply into a
 * discriminated union in one place (a reply of another shape fails with `RedisReplyError`).
 */
import { createHash } from "node:crypto";
import { StatebagError } from "../../core/errors.js";
import { isBinaryRow } from "../encryption/envelope.js";
import type { Bucket, OwnerKeys, RedisIdKeys } from "./keys.js";
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
 * ms ('' none), labels JSON ('' none), then (absent or '': the caller reads the sessions, as on a
 * cluster, where they are in other slots) 7 session key prefix, 8 the owner as stored. Returns flat
 * [id, u|'', om value]*, prefiltered by the candidates, then the last position scanned and 1 when
 * the index has nothing after it (0: scanning stopped early, ask again from there). With a session
 * key prefix (standalone: sessions and owner index in one slot), each candidate also carries its
 * session's fields and PTTL as META reads them ([id, u|'', om value, r, o, t, l, c, u, pttl]*, r
 * nil when the session is absent), and `wanted` counts only candidates whose session agrees (this
 * owner, the filters, for 'u' the same updatedAt), so a page with stale entries is still one call;
 * the caller checks each against its session itself either way and repairs the entries that
 * disagree (at most 64 of them per call).
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
local sp, form = ARGV[7] or '', ARGV[8]
-- The session as stored agrees with the entry: this owner's, within the filters, for 'u' at u.
local function agrees(v, u)
  if not v[1] or v[2] ~= form then return false end
  local su = tonumber(v[6] or '0')
  if (order == 'u' and su ~= u) or (ua and su <= ua) or (ub and su >= ub) then return false end
  if want then
    local l = {}
    if v[4] then l = cjson.decode(v[4]) end
    for k, val in pairs(want) do if l[k] ~= val then return false end end
  end
  return true
end
local out = {}
local n, last, scanned, done, stale = 0, ARGV[2], 0, 0, 0
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
      if sp ~= '' then
        local key = sp .. id
        local v = redis.call('HMGET', key, 'r', 'o', 't', 'l', 'c', 'u')
        for i = 1, 6 do out[#out + 1] = v[i] end
        out[#out + 1] = redis.call('PTTL', key)
        if agrees(v, u) then n = n + 1 else stale = stale + 1 end
      else
        n = n + 1
      end
    end
    last = m
    if order == 'u' then hi = '(' .. m else lo = '(' .. m end
    if n >= wanted or stale >= 64 then break end
  end
  if stale >= 64 then break end
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

/**
 * A script's reply had a shape this release does not read: another program (or another statebag
 * release) writes under the prefix, or a script of the same name from elsewhere ran. Nothing of
 * the reply's content is in the message, only its shape.
 */
export class RedisReplyError extends StatebagError {
  constructor(
    readonly script: string,
    detail: string,
  ) {
    super("store-key-conflict", `the Redis script ${script} returned a reply this statebag does not read: ${detail}`, {
      hint: "give every store its own key prefix and let no other program (nor another statebag release) write keys or scripts under it",
    });
  }
}

/** What a reply value is, without its content (for errors). */
function shapeOf(value: unknown): string {
  if (value === null || value === undefined) return "nil";
  if (Array.isArray(value)) return `an array of ${value.length} item(s)`;
  return typeof value === "string" ? `a string of ${value.length} character(s)` : `a ${typeof value}`;
}

/** Reads one script's reply: each accessor checks the item it reads and fails with `RedisReplyError`. */
class ReplyReader {
  private constructor(
    private readonly script: string,
    private readonly items: readonly unknown[],
  ) {}

  /** The reply as an array of at least `min` items. */
  static of(script: string, reply: unknown, min: number): ReplyReader {
    if (!Array.isArray(reply) || reply.length < min)
      throw new RedisReplyError(script, `expected an array of at least ${min} item(s), got ${shapeOf(reply)}`);
    return new ReplyReader(script, reply);
  }

  get length(): number {
    return this.items.length;
  }

  fail(index: number, expected: string): never {
    throw new RedisReplyError(
      this.script,
      `item ${index + 1} should be ${expected}, got ${shapeOf(this.items[index])}`,
    );
  }

  /** An integer (a Lua number, or a decimal string as HGET returns it). */
  int(index: number): number {
    const value = this.items[index];
    const parsed = typeof value === "number" ? value : typeof value === "string" && value !== "" ? Number(value) : NaN;
    if (!Number.isSafeInteger(parsed)) return this.fail(index, "an integer");
    return parsed;
  }

  intOrNull(index: number): number | null {
    return this.items[index] == null ? null : this.int(index);
  }

  text(index: number): string {
    const value = this.items[index];
    if (typeof value !== "string") return this.fail(index, "a string");
    return value;
  }

  /** A session body: text, or the bytes of a binary row. */
  body(index: number): string | Buffer {
    const value = this.items[index];
    return Buffer.isBuffer(value) ? value : this.text(index);
  }

  /** The item is nil (an absent hash field, a script's `false`). */
  isNull(index: number): boolean {
    return this.items[index] == null;
  }

  textOrNull(index: number): string | null {
    return this.items[index] == null ? null : this.text(index);
  }

  texts(index: number): string[] {
    const value = this.items[index];
    if (!Array.isArray(value) || value.some((item) => typeof item !== "string"))
      return this.fail(index, "an array of strings");
    return value as string[];
  }

  /** The status code in item 1, one of `codes`. */
  status<C extends number>(codes: readonly C[]): C {
    const code = this.int(0);
    if (!codes.includes(code as C)) return this.fail(0, `one of ${codes.join(", ")}`);
    return code as C;
  }
}

/** A whole-number reply (a script that returns one status), one of `codes`. */
function statusReply<C extends number>(script: string, reply: unknown, codes: readonly C[]): C {
  if (typeof reply !== "number" || !codes.includes(reply as C))
    throw new RedisReplyError(script, `expected one of ${codes.join(", ")}, got ${shapeOf(reply)}`);
  return reply as C;
}

/** A session hash's metadata fields (absent `c`/`u`: 0, as sessions of format 2 have none). */
export interface SessionFields {
  revision: number;
  /** As stored (the protected form under an encrypting codec). */
  owner: string | null;
  /** As stored (the protected form under an encrypting codec). */
  title: string | null;
  /** The labels as JSON, or null. */
  labels: string | null;
  createdAt: number;
  updatedAt: number;
}

/** The fields at `from`..`from + 5` of a reply: revision, owner, title, labels, createdAt, updatedAt. */
function fieldsAt(reply: ReplyReader, from: number): SessionFields {
  return {
    revision: reply.int(from),
    owner: reply.textOrNull(from + 1),
    title: reply.textOrNull(from + 2),
    labels: reply.textOrNull(from + 3),
    createdAt: reply.intOrNull(from + 4) ?? 0,
    updatedAt: reply.intOrNull(from + 5) ?? 0,
  };
}

/** `HMGET session r o t l c u ...` as read by `get` (null: no session); items past the sixth are not read. */
export function sessionFields(script: string, values: readonly (string | Buffer | null)[]): SessionFields | null {
  return values[0] == null ? null : fieldsAt(ReplyReader.of(script, values, 6), 0);
}

/** An owner index entry of an expired session, left to the caller on a cluster (another slot). */
export interface ExpiredOwnerEntry {
  owner: string;
  id: string;
  revision: number;
}

/** The (owner, id, revision)* triples from `from` on. */
function expiredFrom(reply: ReplyReader, from: number): ExpiredOwnerEntry[] {
  const out: ExpiredOwnerEntry[] = [];
  for (let index = from; index + 2 < reply.length; index += 3)
    out.push({ owner: reply.text(index), id: reply.text(index + 1), revision: reply.int(index + 2) });
  return out;
}

/** One save (SAVE). */
export interface SaveScriptInput {
  keys: RedisIdKeys;
  id: string;
  /** The revision the caller read (null: the session must be absent). */
  expected: number | null;
  /** The body: text, or the bytes of a binary row (kept as a binary string in the hash). */
  text: string | Buffer;
  ttlMs?: number;
  nowMs: number;
  /** The metadata; absent, none is handled (the raw-driver baseline's form). */
  meta?: SaveScriptMeta;
}

export interface SaveScriptMeta {
  /** The owner as stored (its protected form under an encrypting codec); undefined: none given. */
  owner?: string;
  /**
   * The owner the body was serialized for (a codec that binds it): refused (`codec-owner`) when
   * the stored one differs. `null`: serialized for none. Undefined: not checked.
   */
  codecOwner?: string | null;
  /** Undefined: keep the stored title. */
  title?: string;
  /** The labels as JSON; undefined: keep the stored ones. */
  labels?: string;
  /** Standalone: the owner index is kept by this script (its keys are under `ownerPrefix`). */
  inlineIndex: boolean;
  ownerPrefix: string;
  /** The revision to write, drawn beforehand (`runDraw`); undefined: the script draws it. */
  drawnRevision?: number;
}

export type SaveScriptReply =
  | {
      status: "saved";
      revision: number;
      /** The owner as stored, or null. */
      owner: string | null;
      updatedAt: number;
      createdAt: number;
      /** The stored labels as JSON, or null. */
      labels: string | null;
      /** Cluster: owner index entries of sessions this call found expired. */
      expired: ExpiredOwnerEntry[];
    }
  | { status: "conflict"; current: number | null }
  | { status: "other-owner" }
  /** The body was serialized for another owner than the stored one: serialize again for `storedOwner`. */
  | { status: "codec-owner"; storedOwner: string | null };

/**
 * Runs SAVE. Only `sbSave` is used: the batch save (batch-save.ts) passes a client that queues
 * the call in its transaction, so a batched save sends the very arguments and reads the very reply.
 */
export function runSave(client: Pick<Scripts, "sbSave">, input: SaveScriptInput): Promise<SaveScriptReply> {
  const { keys, meta } = input;
  const expected = input.expected === null ? "" : String(input.expected);
  const ttl = input.ttlMs === undefined ? "" : String(input.ttlMs);
  // The arguments passed as they are (no array built, then spread): a save is one script call.
  const sent =
    meta === undefined
      ? client.sbSave(
          keys.session,
          keys.rev,
          keys.idx,
          keys.exp,
          expected,
          input.text,
          ttl,
          input.id,
          input.nowMs,
          keys.sessionPrefix,
        )
      : client.sbSave(
          keys.session,
          keys.rev,
          keys.idx,
          keys.exp,
          expected,
          input.text,
          ttl,
          input.id,
          input.nowMs,
          keys.sessionPrefix,
          meta.owner === undefined ? "0" : "1",
          meta.owner ?? "",
          meta.codecOwner === undefined ? "" : `=${meta.codecOwner ?? ""}`,
          meta.title === undefined ? "0" : "1",
          meta.title ?? "",
          meta.labels === undefined ? "0" : "1",
          meta.labels ?? "",
          meta.inlineIndex ? "1" : "0",
          meta.ownerPrefix,
          keys.xo,
          meta.drawnRevision === undefined ? "" : String(meta.drawnRevision),
        );
  return sent.then(saveReply);
}

const SAVE_STATUSES = [0, 1, 2, 3] as const;

function saveReply(raw: unknown): SaveScriptReply {
  const reply = ReplyReader.of("save", raw, 1);
  switch (reply.status(SAVE_STATUSES)) {
    case 1:
      return {
        status: "saved",
        revision: reply.int(1),
        owner: reply.textOrNull(2),
        updatedAt: reply.int(3),
        createdAt: reply.int(4),
        labels: reply.textOrNull(5),
        expired: expiredFrom(reply, 6),
      };
    case 0:
      return { status: "conflict", current: reply.intOrNull(1) };
    case 2:
      return { status: "other-owner" };
    case 3:
      return { status: "codec-owner", storedOwner: reply.textOrNull(1) || null };
  }
}

/** What DRAW read with the revision it drew. */
export interface DrawScriptReply {
  /** The revision the save will write. */
  drawn: number;
  current: number | null;
  /** The stored owner and title, as stored. */
  owner: string | null;
  title: string | null;
}

export async function runDraw(client: ScriptedClient, keys: RedisIdKeys): Promise<DrawScriptReply> {
  const reply = ReplyReader.of("draw", await client.sbDraw(keys.rev, keys.session), 4);
  return {
    drawn: reply.int(0),
    current: reply.intOrNull(1),
    owner: reply.textOrNull(2),
    title: reply.textOrNull(3),
  };
}

/** The protected owner and title of a row written before (PROTECT). */
export interface ProtectScriptInput {
  keys: RedisIdKeys;
  id: string;
  /** The revision the save wrote: nothing changes once the session has moved on. */
  revision: number;
  /** The owner as stored ('' unowned) and its protected form. */
  from: string;
  to: string;
  /** The protected title ('' keeps the stored one). */
  title: string;
}

/** True when changed; false when the session has moved on (another save, which does the same). */
export async function runProtect(client: ScriptedClient, input: ProtectScriptInput): Promise<boolean> {
  const { keys } = input;
  const reply = await client.sbProtect(
    keys.session,
    keys.xo,
    String(input.revision),
    input.from,
    input.to,
    input.title,
    input.id,
  );
  return statusReply("protect", reply, [0, 1]) === 1;
}

export interface DeleteScriptInput {
  keys: RedisIdKeys;
  id: string;
  /** Undefined: any revision. */
  expected?: number;
  /** Standalone: the owner index entry is dropped by this script (its keys under `ownerPrefix`). */
  inlineIndex: boolean;
  ownerPrefix: string;
}

export type DeleteScriptReply =
  | { status: "deleted"; owner: string | null; revision: number }
  | { status: "absent" }
  | { status: "conflict"; current: number | null };

export async function runDelete(client: ScriptedClient, input: DeleteScriptInput): Promise<DeleteScriptReply> {
  const { keys } = input;
  const raw = await client.sbDelete(
    keys.session,
    keys.idx,
    keys.exp,
    keys.xo,
    input.expected === undefined ? "" : String(input.expected),
    input.id,
    input.inlineIndex ? "1" : "0",
    input.ownerPrefix,
  );
  const reply = ReplyReader.of("delete", raw, 2);
  if (reply.status([0, 1]) === 0) return { status: "conflict", current: reply.intOrNull(1) };
  if (reply.int(1) === 0) return { status: "absent" };
  return { status: "deleted", owner: reply.textOrNull(2), revision: reply.int(3) };
}

/** One change to an owner's index (INDEX); labels are JSON or '' (none). */
export type IndexScriptOp =
  /** A pending candidate, written before a create (cluster). */
  | { op: "add"; id: string; updatedAt: number; labels: string }
  /** The session is stored at `revision`: drop older candidates and the pending one `pendingUpdatedAt` names. */
  | { op: "commit"; id: string; revision: number; updatedAt: number; labels: string; pendingUpdatedAt?: number }
  /** A create that failed: its pending candidate goes. */
  | { op: "abort"; id: string; pendingUpdatedAt: number }
  /** The session's `revision` (and older) is gone. */
  | { op: "drop"; id: string; revision: number }
  /**
   * The entry as the session implies, if the entry still reads `seen` ('' none): one committed
   * candidate for `session`, or none when the session is not the owner's.
   */
  | {
      op: "repair";
      id: string;
      seen: string;
      session: { revision: number; updatedAt: number; labels: string } | undefined;
    };

/** True when applied (a repair finds the entry changed since it was read: false). */
export async function runIndex(client: ScriptedClient, keys: OwnerKeys, change: IndexScriptOp): Promise<boolean> {
  const args: (string | number)[] = [keys.ou, keys.oi, keys.om, change.op, change.id];
  switch (change.op) {
    case "add":
      args.push(change.updatedAt, change.labels);
      break;
    case "commit":
      args.push(change.revision, change.updatedAt, change.labels, change.pendingUpdatedAt ?? "");
      break;
    case "abort":
      args.push(change.pendingUpdatedAt);
      break;
    case "drop":
      args.push(change.revision);
      break;
    case "repair": {
      const session = change.session;
      args.push(
        change.seen,
        session ? "1" : "0",
        session?.revision ?? 0,
        session?.updatedAt ?? 0,
        session?.labels ?? "",
      );
      break;
    }
  }
  return statusReply("index", await client.sbIndex(...args), [0, 1]) === 1;
}

export interface ListScriptInput {
  keys: OwnerKeys;
  order: "updatedAt desc" | "id";
  /** The last position scanned (an `ou` member or an id), exclusive; '' = start. */
  after: string;
  wanted: number;
  updatedAfter?: number;
  updatedBefore?: number;
  /** The labels to match, as JSON; undefined: any. */
  labels?: string;
  /**
   * Standalone (sessions in the owner index's slot): each candidate's session is read in the same
   * call, and `wanted` counts the candidates whose session agrees (`sessionPrefix`: the bucket's
   * session key prefix; `owner`: the owner as stored). Undefined: the caller reads the sessions.
   */
  sessions?: { sessionPrefix: string; owner: string };
}

/** One index candidate: the id, its updatedAt in the newest-first order, and its entry (`om`) as read. */
export interface ListCandidate {
  id: string;
  updatedAt: number | undefined;
  entry: string;
}

export interface ListScriptReply {
  candidates: ListCandidate[];
  /**
   * With `sessions` asked for: each candidate's session as META reads it (undefined: absent),
   * aligned with `candidates`. Undefined otherwise.
   */
  sessions?: (MetaScriptReply | undefined)[];
  /** The position to ask again from. */
  last: string;
  /** The index has nothing after `last`. */
  exhausted: boolean;
}

export async function runList(client: ScriptedClient, input: ListScriptInput): Promise<ListScriptReply> {
  const { keys } = input;
  const raw = await client.sbList(
    keys.ou,
    keys.oi,
    keys.om,
    input.order === "updatedAt desc" ? "u" : "i",
    input.after,
    input.wanted,
    input.updatedAfter ?? "",
    input.updatedBefore ?? "",
    input.labels ?? "",
    ...(input.sessions === undefined ? [] : [input.sessions.sessionPrefix, input.sessions.owner]),
  );
  const reply = ReplyReader.of("list", raw, 2);
  const end = reply.length - 2;
  // A candidate: id, updatedAt, entry, then (sessions read) its session's six fields and PTTL.
  const width = input.sessions === undefined ? 3 : 10;
  if (end % width !== 0)
    reply.fail(end, `the position after whole candidates of ${width} items (id, updatedAt, entry, ...)`);
  const candidates: ListCandidate[] = [];
  const sessions: (MetaScriptReply | undefined)[] = [];
  for (let index = 0; index < end; index += width) {
    const updated = reply.text(index + 1);
    candidates.push({
      id: reply.text(index),
      updatedAt: updated === "" ? undefined : reply.int(index + 1),
      entry: reply.text(index + 2),
    });
    if (width === 10)
      sessions.push(
        reply.isNull(index + 3) ? undefined : { ...fieldsAt(reply, index + 3), pttl: reply.int(index + 9) },
      );
  }
  const page: ListScriptReply = { candidates, last: reply.text(end), exhausted: reply.int(end + 1) === 1 };
  if (input.sessions !== undefined) page.sessions = sessions;
  return page;
}

/** A session's metadata and time to live (PTTL: -1 none). */
export interface MetaScriptReply extends SessionFields {
  pttl: number;
}

/** The metadata without the body, or undefined when the session is absent. */
export async function runMeta(client: ScriptedClient, sessionKey: string): Promise<MetaScriptReply | undefined> {
  return metaOf(await client.sbMeta(sessionKey));
}

/**
 * The metadata of many sessions (META each, aligned with `sessionKeys`) in as few round trips as
 * the layout allows: one pipeline on a standalone server; on a cluster one pipeline per node
 * (a session's hash is in its id's slot, and a script may touch one slot only, so the reads stay
 * one per session), the nodes read at once. `nodeOf` names the node serving a key (undefined:
 * not known). A pipeline with any failed read (a slot moved meanwhile, a connection lost) is
 * read again one call per session, where the driver follows redirections and each failure is the
 * call's own.
 */
export async function runMetas(
  client: ScriptedClient,
  sessionKeys: readonly string[],
  nodeOf: (key: string) => string | undefined = () => "",
): Promise<(MetaScriptReply | undefined)[]> {
  const out: (MetaScriptReply | undefined)[] = new Array(sessionKeys.length);
  const groups = new Map<string, number[]>();
  const single: number[] = [];
  for (const [index, key] of sessionKeys.entries()) {
    const node = nodeOf(key);
    if (node === undefined) {
      single.push(index);
      continue;
    }
    const group = groups.get(node);
    if (group === undefined) groups.set(node, [index]);
    else group.push(index);
  }
  const one = async (index: number) => {
    out[index] = await runMeta(client, sessionKeys[index]);
  };
  const batch = async (indexes: number[]) => {
    if (indexes.length === 1) return one(indexes[0]);
    const pipeline = client.pipeline();
    for (const index of indexes) pipeline.sbMeta(sessionKeys[index]);
    const replies = await pipeline.exec().catch(() => null);
    if (replies === null || replies.length !== indexes.length || replies.some(([error]) => error !== null)) {
      await Promise.all(indexes.map(one));
      return;
    }
    for (const [at, index] of indexes.entries()) out[index] = metaOf(replies[at][1]);
  };
  await Promise.all([...[...groups.values()].map(batch), ...single.map(one)]);
  return out;
}

function metaOf(raw: unknown): MetaScriptReply | undefined {
  if (raw === null) return undefined;
  const reply = ReplyReader.of("meta", raw, 7);
  return { ...fieldsAt(reply, 0), pttl: reply.int(6) };
}

export interface ScanScriptInput {
  bucket: Bucket;
  /** The last id of the previous page, exclusive ('' = start). */
  after: string;
  wanted: number;
  withText: boolean;
  /** The bodies may be binary rows: read the reply as bytes (the body kept as bytes when it is one). */
  binary?: boolean;
}

/**
 * A reply read as bytes (a script's `...Buffer` form) as the text form would be, except the item
 * at each of `bodies` (a session body), which stays bytes when it is a binary row.
 */
function decodeBinaryReply(reply: unknown, isBody: (index: number) => boolean): unknown {
  if (!Array.isArray(reply)) return reply;
  return reply.map((item, index) =>
    Buffer.isBuffer(item) ? (isBody(index) && isBinaryRow(item) ? item : item.toString("utf8")) : item,
  );
}

/** One live session of a scan page; `text` and `pttl` only when asked for. */
export interface ScanScriptItem {
  id: string;
  fields: SessionFields;
  /** The body: text, or the bytes of a binary row (when asked for with `binary`). */
  text?: string | Buffer;
  pttl?: number;
}

export async function runScan(client: ScriptedClient, input: ScanScriptInput): Promise<ScanScriptItem[]> {
  const { bucket, withText } = input;
  const width = withText ? 9 : 7;
  const args = [bucket.idx, input.after, input.wanted, withText ? "1" : "0", bucket.sessionPrefix];
  const raw =
    withText && input.binary
      ? decodeBinaryReply(await client.sbScanBuffer(...args), (index) => index % width === 7)
      : await client.sbScan(...args);
  const reply = ReplyReader.of("scan", raw, 0);
  if (reply.length % width !== 0) reply.fail(reply.length - 1, `the end of a record of ${width} items`);
  const items: ScanScriptItem[] = [];
  for (let index = 0; index < reply.length; index += width) {
    const item: ScanScriptItem = { id: reply.text(index), fields: fieldsAt(reply, index + 1) };
    if (withText) {
      item.text = reply.body(index + 7);
      item.pttl = reply.int(index + 8);
    }
    items.push(item);
  }
  return items;
}

/** A session's body and metadata (one bucket's part of a cluster scan). */
export interface TextScriptReply {
  /** The body: text, or the bytes of a binary row (when asked for with `binary`). */
  text: string | Buffer;
  pttl: number;
  fields: SessionFields;
}

export async function runText(
  client: ScriptedClient,
  sessionKey: string,
  binary = false,
): Promise<TextScriptReply | undefined> {
  const raw = binary
    ? decodeBinaryReply(await client.sbTextBuffer(sessionKey), (index) => index === 1)
    : await client.sbText(sessionKey);
  if (raw === null) return undefined;
  const reply = ReplyReader.of("text", raw, 8);
  return {
    text: reply.body(1),
    pttl: reply.int(2),
    fields: {
      revision: reply.int(0),
      owner: reply.textOrNull(3),
      title: reply.textOrNull(4),
      labels: reply.textOrNull(5),
      createdAt: reply.intOrNull(6) ?? 0,
      updatedAt: reply.intOrNull(7) ?? 0,
    },
  };
}

export interface PurgeScriptReply {
  removed: number;
  /** Cluster: the owner index entries of the sessions removed (in their owners' slots). */
  expired: ExpiredOwnerEntry[];
}

export async function runPurge(
  client: ScriptedClient,
  input: { bucket: Bucket; nowMs: number; inlineIndex: boolean },
): Promise<PurgeScriptReply> {
  const { bucket } = input;
  const raw = await client.sbPurge(
    bucket.idx,
    bucket.exp,
    bucket.xo,
    input.nowMs,
    bucket.sessionPrefix,
    input.inlineIndex ? "1" : "0",
    bucket.prefix,
  );
  const reply = ReplyReader.of("purge", raw, 1);
  return { removed: reply.int(0), expired: expiredFrom(reply, 1) };
}

/** The version a message log change left, and whether it was applied (an operation seen before: not). */
export interface AppendScriptReply {
  applied: boolean;
  version: number;
}

export async function runAppend(
  client: ScriptedClient,
  input: { keys: RedisIdKeys; operationId: string; messages: readonly string[] },
): Promise<AppendScriptReply> {
  const { keys } = input;
  const raw = await client.sbAppend(keys.list, keys.hdr, keys.ops, keys.rev, input.operationId, input.messages);
  const reply = ReplyReader.of("append", raw, 2);
  return { applied: reply.status([0, 1]) === 1, version: reply.int(1) };
}

export async function runRead(
  client: ScriptedClient,
  keys: RedisIdKeys,
): Promise<{ version: number; messages: string[] }> {
  const reply = ReplyReader.of("read", await client.sbRead(keys.list, keys.hdr), 2);
  return { version: reply.int(0), messages: reply.texts(1) };
}

/** A replace or trim: done (the new version, or the messages removed), or refused at `current`. */
export type ReplaceScriptReply = { status: "replaced"; version: number } | { status: "conflict"; current: number };
export type TrimScriptReply = { status: "trimmed"; removed: number } | { status: "conflict"; current: number };

export async function runReplace(
  client: ScriptedClient,
  input: { keys: RedisIdKeys; expected?: number; operationId?: string; messages: readonly string[] },
): Promise<ReplaceScriptReply> {
  const { keys } = input;
  const raw = await client.sbReplace(
    keys.list,
    keys.hdr,
    keys.ops,
    keys.rev,
    input.expected === undefined ? "" : String(input.expected),
    input.operationId ?? "",
    input.messages,
  );
  const reply = ReplyReader.of("replace", raw, 2);
  return reply.status([0, 1]) === 1
    ? { status: "replaced", version: reply.int(1) }
    : { status: "conflict", current: reply.int(1) };
}

export async function runTrim(
  client: ScriptedClient,
  input: { keys: RedisIdKeys; keepLast: number; expected?: number },
): Promise<TrimScriptReply> {
  const { keys } = input;
  const raw = await client.sbTrim(
    keys.list,
    keys.hdr,
    keys.rev,
    input.keepLast,
    input.expected === undefined ? "" : String(input.expected),
  );
  const reply = ReplyReader.of("trim", raw, 2);
  return reply.status([0, 1]) === 1
    ? { status: "trimmed", removed: reply.int(1) }
    : { status: "conflict", current: reply.int(1) };
}

/** The first of `prefixes` that holds a store of the format-1 layout, or null. */
export async function runOuter(client: ScriptedClient, prefixes: readonly string[]): Promise<string | null> {
  const reply = await client.sbOuter(...prefixes);
  if (reply !== null && typeof reply !== "string")
    throw new RedisReplyError("outer", `expected a prefix or nil, got ${shapeOf(reply)}`);
  return reply;
}

/** One format-1 key moved to the current layout; `exists`: the new key exists (left alone); `gone`: expired meanwhile. */
export async function runMoveLegacy(
  client: UpgradeScripts,
  from: string,
  to: string,
): Promise<"moved" | "exists" | "gone"> {
  const code = statusReply("move-legacy", await client.sbMoveLegacy(from, to), [0, 1, 2]);
  return code === 1 ? "moved" : code === 0 ? "exists" : "gone";
}

/** Merges the format-1 index sets and revision counter into the current ones (upgrade.ts). */
export async function runMergeLegacy(
  client: UpgradeScripts,
  keys: { idx: string; exp: string; rev: string; newIdx: string; newExp: string; newRev: string },
): Promise<void> {
  const reply = await client.sbMergeLegacy(keys.idx, keys.exp, keys.rev, keys.newIdx, keys.newExp, keys.newRev);
  statusReply("merge-legacy", reply, [1]);
}

/**
 * The scripts as commands of the driver's client (positional; replies undecoded). Only the
 * wrappers above call them; a test may set up a state through them. @internal
 */
export interface Scripts extends UpgradeScripts {
  sbSave(...args: (string | number | Buffer)[]): Promise<unknown>;
  sbDraw(rev: string, session: string): Promise<unknown>;
  sbProtect(...args: string[]): Promise<unknown>;
  sbDelete(...args: (string | number)[]): Promise<unknown>;
  sbScan(...args: (string | number)[]): Promise<unknown>;
  /** The reply's strings as bytes (bodies that are binary rows). */
  sbScanBuffer(...args: (string | number)[]): Promise<unknown>;
  sbPurge(...args: (string | number)[]): Promise<unknown>;
  sbIndex(...args: (string | number)[]): Promise<unknown>;
  sbList(...args: (string | number)[]): Promise<unknown>;
  sbMeta(key: string): Promise<unknown>;
  /** Arrays among the arguments are flattened by the driver (a long list is passed as one array, never spread). */
  sbAppend(...args: (string | number | readonly string[])[]): Promise<unknown>;
  sbRead(...args: (string | number)[]): Promise<unknown>;
  sbReplace(...args: (string | number | readonly string[])[]): Promise<unknown>;
  sbTrim(...args: (string | number)[]): Promise<unknown>;
  sbOuter(...args: (string | number)[]): Promise<unknown>;
  sbText(key: string): Promise<unknown>;
  sbTextBuffer(key: string): Promise<unknown>;
}

/**
 * The SAVE script as a transaction sends it itself (batch-save.ts: SCRIPT LOAD, then EVALSHA per
 * session): its source, hash and number of keys, as `sbSave` sends them. @internal
 */
export const SAVE_SCRIPT = {
  lua: SAVE,
  sha: createHash("sha1").update(SAVE).digest("hex"),
  numberOfKeys: 4,
} as const;

/** The format-1 upgrade's scripts (upgrade.ts needs only these). */
export interface UpgradeScripts extends RedisClientLike {
  sbMoveLegacy(from: string, to: string): Promise<unknown>;
  sbMergeLegacy(...keys: string[]): Promise<unknown>;
}

/** A standalone client or a cluster client, with the scripts defined on it. */
export type ScriptedClient = RedisClientLike & Scripts;

/** The store's scripts: the command each is called as, its number of keys, its source. */
const SCRIPTS: readonly (readonly [name: string, numberOfKeys: number, lua: string])[] = [
  ["sbSave", SAVE_SCRIPT.numberOfKeys, SAVE],
  ["sbDraw", 2, DRAW],
  ["sbProtect", 2, PROTECT],
  ["sbDelete", 4, DELETE],
  ["sbIndex", 3, INDEX],
  ["sbList", 3, LIST],
  ["sbMeta", 1, META],
  ["sbScan", 1, SCAN],
  ["sbPurge", 3, PURGE],
  ["sbAppend", 4, APPEND],
  ["sbRead", 2, READ],
  ["sbReplace", 4, REPLACE],
  ["sbTrim", 3, TRIM],
  ["sbOuter", 0, OUTER],
  ["sbText", 1, TEXT],
  ["sbMoveLegacy", 2, MOVE_LEGACY],
  ["sbMergeLegacy", 6, MERGE_LEGACY],
];

/** The driver's plain EVAL/EVALSHA, and the socket of a standalone client's current connection. */
interface EvalClient {
  isCluster?: boolean;
  stream?: unknown;
  eval(...args: unknown[]): Promise<unknown>;
  evalsha(...args: unknown[]): Promise<unknown>;
}

/**
 * A script as a standalone client's command, sent as the driver's own scripts are: EVAL (the
 * source) the first time on a connection, EVALSHA after that, and EVAL again after a NOSCRIPT
 * reply (the script did not run: the server lost it, SCRIPT FLUSH). The driver's script commands
 * do the same at a visible cost per call (a command subclass, a closure on every command, an extra
 * promise and argument copies: about 4 us per call against a plain EVALSHA on the bench machine).
 * Only for the client's own calls; pipelines keep the driver's definitions (`defineCommand`). @internal
 */
export function plainScript(
  client: EvalClient,
  lua: string,
  numberOfKeys: number,
): (...args: unknown[]) => Promise<unknown> {
  const sha = createHash("sha1").update(lua).digest("hex");
  // The connection (socket) the source was last sent on: later calls on it send only the hash.
  let loadedOn: unknown;
  const send = (args: unknown[]): Promise<unknown> => {
    const stream = client.stream;
    if (stream !== undefined && stream === loadedOn) return client.evalsha(sha, numberOfKeys, ...args);
    loadedOn = stream;
    return client.eval(lua, numberOfKeys, ...args);
  };
  const retry = (args: unknown[], error: unknown): Promise<unknown> => {
    if (!(error instanceof Error) || !error.message.includes("NOSCRIPT")) throw error;
    loadedOn = undefined;
    return send(args);
  };
  return (...args) => send(args).catch((error: unknown) => retry(args, error));
}

/**
 * Defines every script on a new client, as the commands `Scripts` names (and their `...Buffer`
 * forms, and in pipelines). A standalone client's own calls send them through `plainScript`.
 */
export function defineScripts(client: RedisClientLike): void {
  for (const [name, numberOfKeys, lua] of SCRIPTS) client.defineCommand(name, { numberOfKeys, lua });
  const plain = client as unknown as EvalClient & Record<string, unknown>;
  if (plain.isCluster === true || typeof plain.eval !== "function" || typeof plain.evalsha !== "function") return;
  for (const [name, numberOfKeys, lua] of SCRIPTS) plain[name] = plainScript(plain, lua, numberOfKeys);
}
