/**
 * The Redis store's blobs, behind the shared blob engine (blobs/chunked.ts). Every key of one
 * owner is in the owner's bucket (`B` = the bucket prefix of `keys.owner(owner)`: `P{}`
 * standalone, `P{n}` on a cluster), so each script runs in one slot:
 *
 *   B br:<owner>   hash stored-hash -> "uploadId size chunkSize chunks stride createdAt"
 *   B bm:<owner>   hash stored-hash -> the description (sealed bytes when the store encrypts)
 *   B bt:<owner>   hash stored-hash -> when last put (ms)
 *   B bi:<owner>   sorted set (scores 0) of stored hashes, for listing in byte order
 *   B bu:<owner>   hash {blobs, bytes}: the owner's usage, kept by the scripts
 *   B bp:<owner>   sorted set of the owner's uploads in progress, scored by when they began
 *   B bc:<upload>  list of an upload's chunks (binary); expires a day after its last chunk until
 *                  its blob is committed (a put whose process died leaves nothing for long)
 * and the store's own (bucket 0): `P{0}bo` the set of owners with blobs, `P{0}bu` the store's usage.
 *
 * A put pushes its chunks to its upload's list; the commit script then checks the list is whole,
 * the owner's budget (and, standalone, the store's), and adds the records in one step. On a
 * cluster the store's usage and owner set live in another slot: they are updated right after the
 * owner's script, and the store budget is checked against the usage read before it (two puts at
 * the same instant may pass it together).
 */
import { BlobBudgetExceededError, type BlobUsage } from "../../blobs/blob-store.js";
import {
  type BlobBackend,
  type BlobBudgetCheck,
  type BlobRecord,
  type BlobUpload,
  BlobUploadLostError,
} from "../../blobs/chunked.js";
import type { RedisKeys } from "./keys.js";
import { RedisReplyError, type ScriptedClient } from "./scripts.js";

/** What the blobs use of their store (RedisSessionStore). */
export interface RedisBlobHost {
  readonly keys: RedisKeys;
  readonly cluster: boolean;
  call<T>(operation: string, write: boolean, fn: (client: ScriptedClient) => Promise<T>): Promise<T>;
}

/** How long the chunks of an upload never committed are kept after its last chunk. */
const UPLOAD_TTL_MS = 24 * 60 * 60 * 1000;
const READ_BATCH = 8;

/** KEYS: chunks, pending. ARGV: index, chunk, ttl ms, upload id, began. */
const PUSH = `if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
if tonumber(ARGV[1]) == 0 then redis.call('ZADD', KEYS[2], ARGV[5], ARGV[4]) end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/**
 * KEYS: rec, meta, touched, idx, usage, pending, chunks, store usage, owners.
 * ARGV: hash, record, meta, size, now, chunks, max per owner ('' none), max store ('' none),
 * store used (cluster: read before), same slot (1: update the store's keys here), upload id, owner.
 * Reply: {0, record, meta, touched} had it | {1} stored | {2} upload lost | {3, used} owner budget | {4, used} store budget.
 */
const COMMIT = `local r = redis.call('HGET', KEYS[1], ARGV[1])
if r then
  local t = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
  if tonumber(ARGV[5]) > t then t = tonumber(ARGV[5]); redis.call('HSET', KEYS[3], ARGV[1], ARGV[5]) end
  return {0, r, redis.call('HGET', KEYS[2], ARGV[1]), tostring(t)}
end
if redis.call('LLEN', KEYS[7]) ~= tonumber(ARGV[6]) then return {2} end
local size = tonumber(ARGV[4])
local used = tonumber(redis.call('HGET', KEYS[5], 'bytes') or '0')
if ARGV[7] ~= '' and used + size > tonumber(ARGV[7]) then return {3, tostring(used)} end
local storeUsed = tonumber(ARGV[9])
if ARGV[10] == '1' then storeUsed = tonumber(redis.call('HGET', KEYS[8], 'bytes') or '0') end
if ARGV[8] ~= '' and storeUsed + size > tonumber(ARGV[8]) then return {4, tostring(storeUsed)} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('HINCRBY', KEYS[5], 'blobs', 1)
redis.call('HINCRBY', KEYS[5], 'bytes', size)
redis.call('ZREM', KEYS[6], ARGV[11])
redis.call('PERSIST', KEYS[7])
if ARGV[10] == '1' then
  redis.call('HINCRBY', KEYS[8], 'blobs', 1)
  redis.call('HINCRBY', KEYS[8], 'bytes', size)
  redis.call('SADD', KEYS[9], ARGV[12])
end
return {1}`;

/** KEYS: rec, meta, touched. ARGV: hash, now ('' = read only). Reply: nil | {record, meta, touched}. */
const READ = `local r = redis.call('HGET', KEYS[1], ARGV[1])
if not r then return false end
local t = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if ARGV[2] ~= '' and tonumber(ARGV[2]) > t then t = tonumber(ARGV[2]); redis.call('HSET', KEYS[3], ARGV[1], ARGV[2]) end
return {r, redis.call('HGET', KEYS[2], ARGV[1]), tostring(t)}`;

/**
 * KEYS: rec, meta, touched, idx, usage, store usage. ARGV: hash, touched before ('' always), chunk
 * key prefix, same slot. Reply: nil | {record, meta, touched}.
 */
const REMOVE = `local r = redis.call('HGET', KEYS[1], ARGV[1])
if not r then return false end
local t = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
if ARGV[2] ~= '' and t >= tonumber(ARGV[2]) then return false end
local m = redis.call('HGET', KEYS[2], ARGV[1])
local upload, size = string.match(r, '^(%S+) (%d+)')
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[5], 'blobs', -1) -- (0 - n, never -n: Lua writes -0 for a zero, which HINCRBY refuses)
redis.call('HINCRBY', KEYS[5], 'bytes', 0 - tonumber(size))
if ARGV[4] == '1' then
  redis.call('HINCRBY', KEYS[6], 'blobs', -1)
  redis.call('HINCRBY', KEYS[6], 'bytes', 0 - tonumber(size))
end
redis.call('UNLINK', ARGV[3] .. upload)
return {r, m, tostring(t)}`;

/**
 * KEYS: rec, meta, touched, idx, usage, pending, store usage, owners. ARGV: chunk key prefix, same
 * slot, owner. Reply: {blobs, bytes}.
 */
const ERASE = `local u = redis.call('HMGET', KEYS[5], 'blobs', 'bytes')
local blobs = tonumber(u[1] or '0')
local bytes = tonumber(u[2] or '0')
for _, r in ipairs(redis.call('HVALS', KEYS[1])) do
  redis.call('UNLINK', ARGV[1] .. string.match(r, '^(%S+)'))
end
for _, upload in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do redis.call('UNLINK', ARGV[1] .. upload) end
redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
if ARGV[2] == '1' then
  redis.call('HINCRBY', KEYS[7], 'blobs', 0 - blobs)
  redis.call('HINCRBY', KEYS[7], 'bytes', 0 - bytes)
  redis.call('SREM', KEYS[8], ARGV[3])
end
return {blobs, bytes}`;

/** KEYS: idx, rec, meta, touched. ARGV: after ('' from the start), limit. Reply: {hash, record, meta, touched}... flat. */
const LIST = `local from = '-'
if ARGV[1] ~= '' then from = '(' .. ARGV[1] end
local out = {}
for _, h in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], from, '+', 'LIMIT', 0, tonumber(ARGV[2]))) do
  local r = redis.call('HGET', KEYS[2], h)
  if r then
    table.insert(out, h)
    table.insert(out, r)
    table.insert(out, redis.call('HGET', KEYS[3], h))
    table.insert(out, redis.call('HGET', KEYS[4], h) or '0')
  end
end
return out`;

/** KEYS: pending. ARGV: before, chunk key prefix. Reply: how many uploads went. */
const PURGE = `local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
for _, upload in ipairs(gone) do redis.call('UNLINK', ARGV[2] .. upload) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
return #gone`;

/**
 * A re-encryption's swap, when both owners' keys share a slot. KEYS: the old owner's rec, meta,
 * touched, idx, usage; the new owner's rec, meta, touched, idx, usage, pending; the new chunks.
 * ARGV: old hash, expected upload, new hash, new upload, new record without its creation time,
 * new meta, new chunk count, old chunk key prefix. Reply: 0 changed | 1 swapped | 2 merged | 3 upload lost.
 */
const SWAP = `local r = redis.call('HGET', KEYS[1], ARGV[1])
if not r then return 0 end
local upload, size = string.match(r, '^(%S+) (%d+)')
if upload ~= ARGV[2] then return 0 end
if redis.call('LLEN', KEYS[12]) ~= tonumber(ARGV[7]) then return 3 end
local created = string.match(r, '(%d+)$')
local t = redis.call('HGET', KEYS[3], ARGV[1]) or '0'
local code = 1
if KEYS[1] ~= KEYS[6] or ARGV[1] ~= ARGV[3] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[4], ARGV[1])
  redis.call('HINCRBY', KEYS[5], 'blobs', -1)
  redis.call('HINCRBY', KEYS[5], 'bytes', 0 - tonumber(size))
  if redis.call('HEXISTS', KEYS[6], ARGV[3]) == 1 then
    local nt = tonumber(redis.call('HGET', KEYS[8], ARGV[3]) or '0')
    if tonumber(t) > nt then redis.call('HSET', KEYS[8], ARGV[3], t) end
    code = 2
  else
    redis.call('ZADD', KEYS[9], 0, ARGV[3])
    redis.call('HINCRBY', KEYS[10], 'blobs', 1)
    redis.call('HINCRBY', KEYS[10], 'bytes', size)
    redis.call('HSET', KEYS[8], ARGV[3], t)
  end
end
if code == 1 then
  redis.call('HSET', KEYS[6], ARGV[3], ARGV[5] .. ' ' .. created)
  redis.call('HSET', KEYS[7], ARGV[3], ARGV[6])
  redis.call('ZREM', KEYS[11], ARGV[4])
  redis.call('PERSIST', KEYS[12])
end
redis.call('UNLINK', ARGV[8] .. upload)
return code`;

/**
 * A cluster's swap to an owner in another slot, first half (the new owner's slot): adopts the new
 * upload as the blob unless the new key has one (then touched: merged). KEYS: rec, meta, touched,
 * idx, usage, pending, chunks. ARGV: hash, record (with its creation time), meta, touched, chunk
 * count, upload, size. Reply: 1 adopted | 2 merged | 3 upload lost.
 */
const ADOPT = `if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local t = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '0')
  if tonumber(ARGV[4]) > t then redis.call('HSET', KEYS[3], ARGV[1], ARGV[4]) end
  return 2
end
if redis.call('LLEN', KEYS[7]) ~= tonumber(ARGV[5]) then return 3 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('HINCRBY', KEYS[5], 'blobs', 1)
redis.call('HINCRBY', KEYS[5], 'bytes', tonumber(ARGV[7]))
redis.call('ZREM', KEYS[6], ARGV[6])
redis.call('PERSIST', KEYS[7])
return 1`;

/**
 * The second half (the old owner's slot), and the undo of the first: removes the record only if it
 * still points at the upload. KEYS: rec, meta, touched, idx, usage. ARGV: hash, upload, chunk key
 * prefix. Reply: nil (not it) | its touched time.
 */
const DROP = `local r = redis.call('HGET', KEYS[1], ARGV[1])
if not r then return false end
local upload, size = string.match(r, '^(%S+) (%d+)')
if upload ~= ARGV[2] then return false end
local t = redis.call('HGET', KEYS[3], ARGV[1]) or '0'
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('HINCRBY', KEYS[5], 'blobs', -1)
redis.call('HINCRBY', KEYS[5], 'bytes', 0 - tonumber(size))
redis.call('UNLINK', ARGV[3] .. upload)
return t`;

type Arg = string | number | Buffer;

interface BlobScripts {
  sbBlobPush(...args: Arg[]): Promise<unknown>;
  sbBlobCommitBuffer(...args: Arg[]): Promise<unknown>;
  sbBlobReadBuffer(...args: Arg[]): Promise<unknown>;
  sbBlobRemoveBuffer(...args: Arg[]): Promise<unknown>;
  sbBlobErase(...args: Arg[]): Promise<unknown>;
  sbBlobListBuffer(...args: Arg[]): Promise<unknown>;
  sbBlobPurge(...args: Arg[]): Promise<unknown>;
  sbBlobSwap(...args: Arg[]): Promise<unknown>;
  sbBlobAdopt(...args: Arg[]): Promise<unknown>;
  sbBlobDrop(...args: Arg[]): Promise<unknown>;
  lrangeBuffer(key: string, start: number, stop: number): Promise<Buffer[]>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hincrby(key: string, field: string, by: number): Promise<number>;
  sadd(key: string, member: string): Promise<number>;
  srem(key: string, member: string): Promise<number>;
  smembers(key: string): Promise<string[]>;
  zrem(key: string, member: string): Promise<number>;
}

const defined = new WeakSet<object>();

function scripted(client: ScriptedClient): ScriptedClient & BlobScripts {
  if (!defined.has(client)) {
    client.defineCommand("sbBlobPush", { numberOfKeys: 2, lua: PUSH });
    client.defineCommand("sbBlobCommit", { numberOfKeys: 9, lua: COMMIT });
    client.defineCommand("sbBlobRead", { numberOfKeys: 3, lua: READ });
    client.defineCommand("sbBlobRemove", { numberOfKeys: 6, lua: REMOVE });
    client.defineCommand("sbBlobErase", { numberOfKeys: 8, lua: ERASE });
    client.defineCommand("sbBlobList", { numberOfKeys: 4, lua: LIST });
    client.defineCommand("sbBlobPurge", { numberOfKeys: 1, lua: PURGE });
    client.defineCommand("sbBlobSwap", { numberOfKeys: 12, lua: SWAP });
    client.defineCommand("sbBlobAdopt", { numberOfKeys: 7, lua: ADOPT });
    client.defineCommand("sbBlobDrop", { numberOfKeys: 5, lua: DROP });
    defined.add(client);
  }
  return client as ScriptedClient & BlobScripts;
}

interface OwnerBlobKeys {
  rec: string;
  meta: string;
  touched: string;
  idx: string;
  usage: string;
  pending: string;
  /** Prefix of the owner's upload lists (append the upload id). */
  chunks: string;
}

function text(script: string, value: unknown): string {
  if (Buffer.isBuffer(value)) return value.toString("utf8");
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw new RedisReplyError(script, `expected a string item, got ${value === null ? "nil" : typeof value}`);
}

function binary(script: string, value: unknown): Uint8Array {
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === "string") return Buffer.from(value, "utf8");
  throw new RedisReplyError(script, `expected a bulk string item, got ${value === null ? "nil" : typeof value}`);
}

/** A record from its stored text, description and put time. */
function recordOf(
  script: string,
  owner: string,
  hash: string,
  stored: unknown,
  meta: unknown,
  touched: unknown,
): BlobRecord {
  const fields = text(script, stored).split(" ");
  const numbers = fields.slice(1).map(Number);
  if (fields.length !== 6 || numbers.some((n) => !Number.isSafeInteger(n)))
    throw new RedisReplyError(script, `expected a blob record of 6 fields, got ${fields.length}`);
  const [size, chunkSize, chunks, stride, createdAt] = numbers as [number, number, number, number, number];
  return {
    owner,
    hash,
    uploadId: fields[0] as string,
    size,
    chunkSize,
    chunks,
    stride,
    createdAt,
    meta: binary(script, meta),
    touchedAt: Number(text(script, touched)),
  };
}

export class RedisBlobBackend implements BlobBackend {
  constructor(private readonly host: RedisBlobHost) {}

  #keys(owner: string): OwnerBlobKeys {
    const bp = this.host.keys.owner(owner).prefix;
    return {
      rec: `${bp}br:${owner}`,
      meta: `${bp}bm:${owner}`,
      touched: `${bp}bt:${owner}`,
      idx: `${bp}bi:${owner}`,
      usage: `${bp}bu:${owner}`,
      pending: `${bp}bp:${owner}`,
      chunks: `${bp}bc:`,
    };
  }

  /** The store's own keys (bucket 0): its usage and the set of owners with blobs. */
  get #store(): { usage: string; owners: string } {
    const bp = (this.host.keys.buckets[0] as { prefix: string }).prefix;
    return { usage: `${bp}bu`, owners: `${bp}bo` };
  }

  /** Whether the owner's keys and the store's share a slot (standalone): then one script updates both. */
  get #sameSlot(): boolean {
    return !this.host.cluster;
  }

  async begin(owner: string, uploadId: string, now: number): Promise<BlobUpload> {
    const keys = this.#keys(owner);
    const list = keys.chunks + uploadId;
    // Listed before its first chunk, so a sweep of every owner finds its partial uploads too.
    await this.host.call("blobs.put", true, (c) => scripted(c).sadd(this.#store.owners, owner));
    let aborted = false;
    return {
      write: async (index, bytes) => {
        const pushed = await this.host.call("blobs.put", true, (c) =>
          scripted(c).sbBlobPush(
            list,
            keys.pending,
            index,
            Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
            UPLOAD_TTL_MS,
            uploadId,
            now,
          ),
        );
        if (pushed !== 1) throw new BlobUploadLostError();
      },
      finish: async () => {},
      abort: async () => {
        if (aborted) return;
        aborted = true;
        await this.host.call("blobs.put", true, async (c) => {
          await c.unlink(list);
          await scripted(c).zrem(keys.pending, uploadId);
        });
      },
    };
  }

  async commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }> {
    const keys = this.#keys(record.owner);
    const store = this.#store;
    const sameSlot = this.#sameSlot;
    const storeUsed = check.maxBytes === undefined || sameSlot ? 0 : (await this.usage(null)).bytes;
    const reply = await this.host.call("blobs.put", true, (c) =>
      scripted(c).sbBlobCommitBuffer(
        keys.rec,
        keys.meta,
        keys.touched,
        keys.idx,
        keys.usage,
        keys.pending,
        keys.chunks + record.uploadId,
        // On a cluster the script does not touch these (another slot): named for the standalone case.
        sameSlot ? store.usage : keys.usage,
        sameSlot ? store.owners : keys.usage,
        record.hash,
        [record.uploadId, record.size, record.chunkSize, record.chunks, record.stride, record.createdAt].join(" "),
        Buffer.from(record.meta.buffer, record.meta.byteOffset, record.meta.byteLength),
        record.size,
        check.now,
        record.chunks,
        check.maxBytesPerOwner ?? "",
        check.maxBytes ?? "",
        storeUsed,
        sameSlot ? "1" : "0",
        record.uploadId,
        record.owner,
      ),
    );
    if (!Array.isArray(reply)) throw new RedisReplyError("blob commit", "expected an array reply");
    const code = Number(text("blob commit", reply[0]));
    if (code === 0)
      return {
        record: recordOf("blob commit", record.owner, record.hash, reply[1], reply[2], reply[3]),
        created: false,
      };
    if (code === 2) throw new BlobUploadLostError();
    if (code === 3 && check.maxBytesPerOwner !== undefined)
      throw new BlobBudgetExceededError(
        "owner",
        check.maxBytesPerOwner,
        Number(text("blob commit", reply[1])),
        record.size,
      );
    if (code === 4 && check.maxBytes !== undefined)
      throw new BlobBudgetExceededError("store", check.maxBytes, Number(text("blob commit", reply[1])), record.size);
    if (code !== 1) throw new RedisReplyError("blob commit", `unexpected reply code ${code}`);
    if (!sameSlot) {
      await this.host.call("blobs.put", true, async (c) => {
        const script = scripted(c);
        await script.hincrby(store.usage, "blobs", 1);
        await script.hincrby(store.usage, "bytes", record.size);
        await script.sadd(store.owners, record.owner);
      });
    }
    return { record, created: true };
  }

  async #read(owner: string, hash: string, now: number | undefined): Promise<BlobRecord | undefined> {
    const keys = this.#keys(owner);
    const reply = await this.host.call("blobs.get", now !== undefined, (c) =>
      scripted(c).sbBlobReadBuffer(keys.rec, keys.meta, keys.touched, hash, now ?? ""),
    );
    if (reply === null) return undefined;
    if (!Array.isArray(reply)) throw new RedisReplyError("blob read", "expected an array reply or nil");
    return recordOf("blob read", owner, hash, reply[0], reply[1], reply[2]);
  }

  record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    return this.#read(owner, hash, undefined);
  }

  touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    return this.#read(owner, hash, now);
  }

  async *chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array> {
    const list = this.#keys(record.owner).chunks + record.uploadId;
    for (let at = from; at < to; at += READ_BATCH) {
      const end = Math.min(to, at + READ_BATCH);
      const rows = await this.host.call("blobs.get", false, (c) => scripted(c).lrangeBuffer(list, at, end - 1));
      for (const row of rows) yield row;
      if (rows.length < end - at) return;
    }
  }

  async remove(owner: string, hash: string, options: { touchedBefore?: number } = {}): Promise<BlobRecord | undefined> {
    const keys = this.#keys(owner);
    const store = this.#store;
    const sameSlot = this.#sameSlot;
    const reply = await this.host.call("blobs.delete", true, (c) =>
      scripted(c).sbBlobRemoveBuffer(
        keys.rec,
        keys.meta,
        keys.touched,
        keys.idx,
        keys.usage,
        sameSlot ? store.usage : keys.usage,
        hash,
        options.touchedBefore ?? "",
        keys.chunks,
        sameSlot ? "1" : "0",
      ),
    );
    if (reply === null) return undefined;
    if (!Array.isArray(reply)) throw new RedisReplyError("blob remove", "expected an array reply or nil");
    const record = recordOf("blob remove", owner, hash, reply[0], reply[1], reply[2]);
    if (!sameSlot) {
      await this.host.call("blobs.delete", true, async (c) => {
        await scripted(c).hincrby(store.usage, "blobs", -1);
        await scripted(c).hincrby(store.usage, "bytes", -record.size);
      });
    }
    return record;
  }

  /**
   * One script when both owners' keys share a slot (always standalone; on a cluster, the same owner
   * or owners in one bucket). Across slots (a cluster, the owner's form changed) two: the new record
   * adopted in the new owner's slot, then the old one dropped only if still the one read; when it
   * is not, the adoption is dropped again ("changed"), so for that moment both names hold the blob,
   * never neither. The store's usage is unchanged (the same bytes) and the new owner was listed in
   * the store's owner set by `begin`.
   */
  async swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed"> {
    const from = this.#keys(expected.owner);
    const to = this.#keys(next.owner);
    const meta = Buffer.from(next.meta.buffer, next.meta.byteOffset, next.meta.byteLength);
    const head = [next.uploadId, next.size, next.chunkSize, next.chunks, next.stride].join(" ");
    const outcome = (code: number): "swapped" | "merged" | "changed" => {
      if (code === 3) throw new BlobUploadLostError();
      if (code === 0 || code === 1 || code === 2) return code === 0 ? "changed" : code === 1 ? "swapped" : "merged";
      throw new RedisReplyError("blob swap", `unexpected reply code ${code}`);
    };
    if (!this.host.cluster || from.chunks === to.chunks) {
      const reply = await this.host.call("blobs.reencrypt", true, (c) =>
        scripted(c).sbBlobSwap(
          from.rec,
          from.meta,
          from.touched,
          from.idx,
          from.usage,
          to.rec,
          to.meta,
          to.touched,
          to.idx,
          to.usage,
          to.pending,
          to.chunks + next.uploadId,
          expected.hash,
          expected.uploadId,
          next.hash,
          next.uploadId,
          head,
          meta,
          next.chunks,
          from.chunks,
        ),
      );
      return outcome(Number(reply));
    }
    const old = await this.#read(expected.owner, expected.hash, undefined);
    if (!old || old.uploadId !== expected.uploadId) return "changed";
    const adopted = outcome(
      Number(
        await this.host.call("blobs.reencrypt", true, (c) =>
          scripted(c).sbBlobAdopt(
            to.rec,
            to.meta,
            to.touched,
            to.idx,
            to.usage,
            to.pending,
            to.chunks + next.uploadId,
            next.hash,
            `${head} ${old.createdAt}`,
            meta,
            old.touchedAt,
            next.chunks,
            next.uploadId,
            next.size,
          ),
        ),
      ),
    );
    const dropped = await this.host.call("blobs.reencrypt", true, (c) =>
      scripted(c).sbBlobDrop(
        from.rec,
        from.meta,
        from.touched,
        from.idx,
        from.usage,
        expected.hash,
        expected.uploadId,
        from.chunks,
      ),
    );
    if (dropped === null) {
      if (adopted === "swapped")
        await this.host.call("blobs.reencrypt", true, (c) =>
          scripted(c).sbBlobDrop(to.rec, to.meta, to.touched, to.idx, to.usage, next.hash, next.uploadId, to.chunks),
        );
      return "changed";
    }
    // A put under the old form between the read and the drop refreshed its time: the new record gets it too.
    const touched = Number(text("blob swap", dropped));
    if (touched > old.touchedAt) await this.touch(next.owner, next.hash, touched);
    return adopted === "swapped" ? "swapped" : "merged";
  }

  async #owners(): Promise<string[]> {
    const owners = await this.host.call("blobs.list", false, (c) => scripted(c).smembers(this.#store.owners));
    return owners.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  }

  async list(
    owner: string | null,
    after: { owner: string; hash: string } | undefined,
    limit: number,
  ): Promise<BlobRecord[]> {
    const owners = owner === null ? await this.#owners() : [owner];
    const out: BlobRecord[] = [];
    for (const each of owners) {
      if (after && owner === null && Buffer.compare(Buffer.from(each), Buffer.from(after.owner)) < 0) continue;
      const from = after && after.owner === each ? after.hash : "";
      const keys = this.#keys(each);
      const reply = await this.host.call("blobs.list", false, (c) =>
        scripted(c).sbBlobListBuffer(keys.idx, keys.rec, keys.meta, keys.touched, from, limit - out.length),
      );
      if (!Array.isArray(reply)) throw new RedisReplyError("blob list", "expected an array reply");
      for (let i = 0; i + 3 < reply.length; i += 4)
        out.push(recordOf("blob list", each, text("blob list", reply[i]), reply[i + 1], reply[i + 2], reply[i + 3]));
      if (out.length >= limit) break;
    }
    return out;
  }

  async usage(owner: string | null): Promise<BlobUsage> {
    const key = owner === null ? this.#store.usage : this.#keys(owner).usage;
    const [blobs, bytes] = await this.host.call("blobs.usage", false, (c) => scripted(c).hmget(key, "blobs", "bytes"));
    return { blobs: Number(blobs ?? 0), bytes: Number(bytes ?? 0) };
  }

  async eraseOwner(owner: string): Promise<BlobUsage> {
    const keys = this.#keys(owner);
    const store = this.#store;
    const sameSlot = this.#sameSlot;
    const reply = await this.host.call("blobs.eraseOwner", true, (c) =>
      scripted(c).sbBlobErase(
        keys.rec,
        keys.meta,
        keys.touched,
        keys.idx,
        keys.usage,
        keys.pending,
        sameSlot ? store.usage : keys.usage,
        sameSlot ? store.owners : keys.usage,
        keys.chunks,
        sameSlot ? "1" : "0",
        owner,
      ),
    );
    if (!Array.isArray(reply)) throw new RedisReplyError("blob erase", "expected an array reply");
    const usage = { blobs: Number(reply[0]), bytes: Number(reply[1]) };
    if (!sameSlot) {
      await this.host.call("blobs.eraseOwner", true, async (c) => {
        const script = scripted(c);
        if (usage.blobs !== 0) await script.hincrby(store.usage, "blobs", -usage.blobs);
        if (usage.bytes !== 0) await script.hincrby(store.usage, "bytes", -usage.bytes);
        await script.srem(store.owners, owner);
      });
    }
    return usage;
  }

  async purgeUploads(owner: string | null, before: number): Promise<number> {
    let purged = 0;
    for (const each of owner === null ? await this.#owners() : [owner]) {
      const keys = this.#keys(each);
      purged += Number(
        await this.host.call("blobs.sweep", true, (c) => scripted(c).sbBlobPurge(keys.pending, before, keys.chunks)),
      );
    }
    return purged;
  }

  async close(): Promise<void> {}
}
