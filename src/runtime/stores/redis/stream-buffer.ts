/**
 * The Redis store's stream buffer: per stream a metadata hash and a Redis Stream of chunks (entry
 * `0-(p+1)` holds chunk p), in the session's hash slot with the session's set of streams (keys.ts),
 * so each write is one Lua script in one slot, on a Cluster too. Times are the server's clock (TIME).
 *
 * Expiry is Redis's own: a running stream's keys live for its lease plus a day (renewed by every
 * append), a finished one's for `keepMs`; `purgeExpired` has nothing left to do. A call that names
 * only the stream finds its session through a locator key in the stream id's slot (cached per process).
 *
 * Followers replay with one script (the hash and XRANGE together), then wait with XREAD BLOCK on a
 * connection of their own (a duplicate of the store's, opened when the first wait comes and closed
 * when the follower ends); `finish` adds an end entry after the last chunk, which wakes them. They
 * read again at the latest every second (a deleted stream, a lease that passes).
 */
import type {
  OpenStreamOptions,
  StreamBuffer,
  StreamFollowOptions,
  StreamInfo,
  StreamReadOptions,
  StreamStatus,
} from "../stream-buffer.js";
import { checkId } from "../common.js";
import { StreamClosedError, streamExistsError } from "../errors.js";
import {
  ABANDONED_STREAM_KEEP_MS,
  type ChunkCodec,
  checkChunks,
  checkFinish,
  checkFinishWith,
  checkFollow,
  checkLeaseMs,
  checkOpen,
  checkRead,
  checkStreamId,
  delay,
  FIRST_PAGE,
  LEASE_RENEW_FRACTION,
} from "../stream-common.js";
import type { RedisKeys, StreamKeys } from "./keys.js";
import { RedisReplyError, type ScriptedClient } from "./scripts.js";
import type { RedisClientLike } from "./types.js";

/** What the buffer uses of its store (RedisSessionStore). */
export interface RedisStreamStore {
  readonly keys: RedisKeys;
  readonly cluster: boolean;
  call<T>(operation: string, write: boolean, fn: (client: ScriptedClient) => Promise<T>): Promise<T>;
}

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS: meta, chunks, session set. ARGV: stream, session, sealed owner, lease, abandoned, meta
 * prefix, chunks prefix, first chunks... (positions 0, 1, ...). Reply 1 opened, 0 a stream under
 * this id exists in this session.
 */
const OPEN = `${NOW}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2])
local lease = tonumber(ARGV[4])
local keep = lease + tonumber(ARGV[5])
local n = 0
for i = 8, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[2], '0-' .. n, 'c', ARGV[i])
end
redis.call('HSET', KEYS[1], 'sid', ARGV[2], 'st', 'running', 'n', n, 'sr', 0, 'le', now + lease)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'o', ARGV[3]) end
redis.call('PEXPIRE', KEYS[1], keep)
if n > 0 then redis.call('PEXPIRE', KEYS[2], keep) end
for _, m in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  if redis.call('EXISTS', ARGV[6] .. m) == 0 then
    redis.call('SREM', KEYS[3], m)
    redis.call('DEL', ARGV[7] .. m)
  end
end
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;

/**
 * An open taken back (the id turned out to be held by a stream of another session): KEYS: meta,
 * chunks, session set. ARGV: stream, session. Only the stream this call opened (still running,
 * this session's) is removed.
 */
const UNDO_OPEN = `if redis.call('HGET', KEYS[1], 'sid') ~= ARGV[2] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return 1`;

/**
 * The id's locator moved to this open's session, only if it still names the holder read before
 * (KEYS: locator. ARGV: that holder, '' for none; session; its expiry in ms): else 0, and the open
 * decides again.
 */
const TAKE_LOCATOR = `local holder = redis.call('GET', KEYS[1])
if (holder or '') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/**
 * A locator naming another session's stream whose keys are not there may be that stream's open on
 * its way (on a Cluster its locator and its keys go to different nodes, sent together): looked for
 * this many times more, this far apart, before the id is taken over as a leftover of an expired stream.
 */
const HOLDER_CHECKS = 3;
const HOLDER_CHECK_MS = 25;

/**
 * KEYS: meta, chunks. ARGV: lease, abandoned, expected start ('' = any), chunks...
 * Reply {1, length, stop} | {0} absent | {2, status} not running | {3, length} not at the expected start.
 * The lease (and the keys' expiry, a day after it) is renewed as LEASE_RENEW_FRACTION says (always
 * without chunks); the chunks' key gets the hash's expiry when its first chunk creates it.
 */
const APPEND = `${NOW}
local m = redis.call('HMGET', KEYS[1], 'st', 'n', 'sr', 'le')
if not m[1] then return {0} end
if m[1] ~= 'running' then return {2, m[1]} end
local n = tonumber(m[2])
local before = n
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= n then return {3, n} end
for i = 4, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[2], '0-' .. n, 'c', ARGV[i])
end
local lease = tonumber(ARGV[1])
local le = tonumber(m[4])
if #ARGV == 3 or le < now + lease - math.floor(lease / ${LEASE_RENEW_FRACTION}) or le > now + lease then
  le = now + lease
  redis.call('HSET', KEYS[1], 'n', n, 'le', le)
  redis.call('PEXPIRE', KEYS[1], lease + tonumber(ARGV[2]))
  if n > 0 then redis.call('PEXPIRE', KEYS[2], lease + tonumber(ARGV[2])) end
else
  redis.call('HSET', KEYS[1], 'n', n)
  if before == 0 and n > 0 then redis.call('PEXPIRE', KEYS[2], le - now + tonumber(ARGV[2])) end
end
return {1, n, tonumber(m[3])}`;

/** KEYS: meta, chunks. ARGV: status, keep ms, only if abandoned (1/0). Adds the end entry that wakes followers. */
const FINISH = `${NOW}
local m = redis.call('HMGET', KEYS[1], 'st', 'n', 'le')
if m[1] ~= 'running' then return 0 end
if ARGV[3] == '1' and tonumber(m[3]) > now then return 0 end
redis.call('HSET', KEYS[1], 'st', ARGV[1])
redis.call('XADD', KEYS[2], '0-' .. (tonumber(m[2]) + 1), 'end', ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]))
return 1`;

/**
 * `append` of the writer's last chunks and `finish`, as one script. KEYS: meta, chunks. ARGV:
 * status, keep ms, expected start ('' = any), chunks... Reply 1 ended, 0 not running (or gone),
 * 2 not at the expected start (encrypted chunks sealed for other positions: nothing written).
 */
const FINISH_WITH = `${NOW}
local m = redis.call('HMGET', KEYS[1], 'st', 'n')
if m[1] ~= 'running' then return 0 end
local n = tonumber(m[2])
if ARGV[3] ~= '' and tonumber(ARGV[3]) ~= n then return 2 end
for i = 4, #ARGV do
  n = n + 1
  redis.call('XADD', KEYS[2], '0-' .. n, 'c', ARGV[i])
end
redis.call('HSET', KEYS[1], 'st', ARGV[1], 'n', n)
redis.call('XADD', KEYS[2], '0-' .. (n + 1), 'end', ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]))
return 1`;

const STOP = `if redis.call('HGET', KEYS[1], 'st') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'sr', 1)
return 1`;

/** KEYS: meta, chunks. ARGV: from, limit (-1: all). Reply: nil, or {sid, status, length, stop, lease end, owner, {chunks}}. */
const READ = `local m = redis.call('HMGET', KEYS[1], 'sid', 'st', 'n', 'sr', 'le', 'o')
if not m[1] then return false end
local n = tonumber(m[3])
local from = tonumber(ARGV[1])
local last = n
if tonumber(ARGV[2]) >= 0 then last = math.min(n, from + tonumber(ARGV[2])) end
local bodies = {}
if from < last then
  for i, e in ipairs(redis.call('XRANGE', KEYS[2], '0-' .. (from + 1), '0-' .. last)) do bodies[i] = e[2][2] end
end
return {m[1], m[2], m[3], m[4], m[5], m[6] or '', bodies}`;

/** KEYS: session set. ARGV: meta prefix, chunks prefix. Reply: {visible streams removed, stream ids...}. */
const DELETE_SESSION = `local ids = redis.call('SMEMBERS', KEYS[1])
local n = 0
for _, id in ipairs(ids) do
  n = n + redis.call('DEL', ARGV[1] .. id)
  redis.call('DEL', ARGV[2] .. id)
end
redis.call('DEL', KEYS[1])
table.insert(ids, 1, n)
return ids`;

/** Stream scripts as commands of a client (defined once per client object); replies undecoded. */
interface StreamScripts {
  sbStreamOpen(...args: (string | number | readonly string[])[]): Promise<unknown>;
  sbStreamUndoOpen(...args: string[]): Promise<unknown>;
  sbStreamTakeLocator(locator: string, holder: string, sessionId: string, ttlMs: number): Promise<unknown>;
  sbStreamAppend(...args: (string | number | readonly string[])[]): Promise<unknown>;
  sbStreamFinish(...args: (string | number)[]): Promise<unknown>;
  sbStreamFinishWith(...args: (string | number | readonly string[])[]): Promise<unknown>;
  sbStreamStop(meta: string): Promise<unknown>;
  sbStreamRead(...args: (string | number)[]): Promise<unknown>;
  sbStreamDeleteSession(...args: string[]): Promise<unknown>;
}

/** The Lua scripts (exported for the benchmark). @internal */
export const REDIS_STREAM_LUA = {
  open: OPEN,
  append: APPEND,
  finish: FINISH,
  finishWith: FINISH_WITH,
  stop: STOP,
  read: READ,
} as const;

const defined = new WeakSet<object>();

function scripted(client: ScriptedClient): ScriptedClient & StreamScripts {
  if (!defined.has(client)) {
    client.defineCommand("sbStreamOpen", { numberOfKeys: 3, lua: OPEN });
    client.defineCommand("sbStreamUndoOpen", { numberOfKeys: 3, lua: UNDO_OPEN });
    client.defineCommand("sbStreamTakeLocator", { numberOfKeys: 1, lua: TAKE_LOCATOR });
    client.defineCommand("sbStreamAppend", { numberOfKeys: 2, lua: APPEND });
    client.defineCommand("sbStreamFinish", { numberOfKeys: 2, lua: FINISH });
    client.defineCommand("sbStreamFinishWith", { numberOfKeys: 2, lua: FINISH_WITH });
    client.defineCommand("sbStreamStop", { numberOfKeys: 1, lua: STOP });
    client.defineCommand("sbStreamRead", { numberOfKeys: 2, lua: READ });
    client.defineCommand("sbStreamDeleteSession", { numberOfKeys: 1, lua: DELETE_SESSION });
    defined.add(client);
  }
  return client as ScriptedClient & StreamScripts;
}

/*
 * One typed wrapper per script: an options object in, the reply decoded in one place (a reply of
 * another shape fails with RedisReplyError, which names the script and the shape, never the content).
 */

function unexpected(script: string, expected: string, reply: unknown): never {
  const shape = Array.isArray(reply)
    ? `an array of ${reply.length} item(s)`
    : reply === null
      ? "nil"
      : `a ${typeof reply}`;
  throw new RedisReplyError(script, `expected ${expected}, got ${shape}`);
}

/** A 0/1 reply as a boolean. */
function flag(script: string, reply: unknown): boolean {
  if (reply !== 0 && reply !== 1) unexpected(script, "0 or 1", reply);
  return reply === 1;
}

/** An integer reply item (a Lua number, or a decimal string as HMGET returns it). */
function integer(script: string, value: unknown): number {
  const parsed = typeof value === "number" ? value : typeof value === "string" && value !== "" ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed)) unexpected(script, "an integer item", value);
  return parsed;
}

function textItem(script: string, value: unknown): string {
  if (typeof value !== "string") unexpected(script, "a string item", value);
  return value;
}

/** True when opened; false when a stream under this id exists in this session. */
async function runOpen(
  client: ScriptedClient,
  input: {
    keys: StreamKeys;
    streamId: string;
    sessionId: string;
    sealedOwner: string;
    leaseMs: number;
    chunks: readonly string[];
  },
): Promise<boolean> {
  const { keys } = input;
  const reply = await scripted(client).sbStreamOpen(
    keys.meta,
    keys.chunks,
    keys.session,
    input.streamId,
    input.sessionId,
    input.sealedOwner,
    input.leaseMs,
    ABANDONED,
    keys.metaPrefix,
    keys.chunksPrefix,
    input.chunks,
  );
  return flag("stream-open", reply);
}

type AppendReply =
  | { status: "appended"; length: number; stopRequested: boolean }
  | { status: "absent" }
  | { status: "closed"; streamStatus: Exclude<StreamStatus, "running"> }
  /** The stream is not at the expected start (another writer). */
  | { status: "moved"; length: number };

async function runAppend(
  client: ScriptedClient,
  input: { keys: StreamKeys; leaseMs: number; expectedStart?: number; chunks: readonly string[] },
): Promise<AppendReply> {
  const { keys } = input;
  const script = "stream-append";
  const reply = await scripted(client).sbStreamAppend(
    keys.meta,
    keys.chunks,
    input.leaseMs,
    ABANDONED,
    input.expectedStart ?? "",
    input.chunks,
  );
  if (!Array.isArray(reply) || reply.length < 1) return unexpected(script, "an array", reply);
  switch (reply[0]) {
    case 1:
      return { status: "appended", length: integer(script, reply[1]), stopRequested: integer(script, reply[2]) === 1 };
    case 0:
      return { status: "absent" };
    case 2:
      return { status: "closed", streamStatus: textItem(script, reply[1]) as Exclude<StreamStatus, "running"> };
    case 3:
      return { status: "moved", length: integer(script, reply[1]) };
    default:
      return unexpected(script, "a status of 0 to 3 first", reply);
  }
}

/** True when this call ended the stream. */
async function runFinish(
  client: ScriptedClient,
  input: { keys: StreamKeys; status: string; keepMs: number; onlyIfAbandoned: boolean },
): Promise<boolean> {
  const { keys } = input;
  const reply = await scripted(client).sbStreamFinish(
    keys.meta,
    keys.chunks,
    input.status,
    input.keepMs,
    input.onlyIfAbandoned ? "1" : "0",
  );
  return flag("stream-finish", reply);
}

/** A stream's metadata and the chunks read (still sealed). */
interface ReadReply {
  sessionId: string;
  status: StreamStatus;
  length: number;
  stopRequested: boolean;
  leaseExpiresAt: number;
  /** '' when none. */
  sealedOwner: string;
  bodies: string[];
}

async function runRead(
  client: ScriptedClient,
  input: { keys: StreamKeys; from: number; limit: number },
): Promise<ReadReply | undefined> {
  const { keys } = input;
  const script = "stream-read";
  const reply = await scripted(client).sbStreamRead(keys.meta, keys.chunks, input.from, input.limit);
  if (reply === null) return undefined;
  if (!Array.isArray(reply) || reply.length !== 7) return unexpected(script, "an array of 7 items", reply);
  const bodies = reply[6];
  if (!Array.isArray(bodies) || bodies.some((body) => typeof body !== "string"))
    return unexpected(script, "the chunks as strings last", reply);
  return {
    sessionId: textItem(script, reply[0]),
    status: textItem(script, reply[1]) as StreamStatus,
    length: integer(script, reply[2]),
    stopRequested: integer(script, reply[3]) === 1,
    leaseExpiresAt: integer(script, reply[4]),
    sealedOwner: textItem(script, reply[5]),
    bodies: bodies as string[],
  };
}

/** The streams of a session deleted: how many were visible, and every stream id (for their locators). */
async function runDeleteSession(
  client: ScriptedClient,
  keys: StreamKeys,
): Promise<{ removed: number; streamIds: string[] }> {
  const script = "stream-delete-session";
  const reply = await scripted(client).sbStreamDeleteSession(keys.session, keys.metaPrefix, keys.chunksPrefix);
  if (!Array.isArray(reply) || reply.length < 1) return unexpected(script, "an array", reply);
  return {
    removed: integer(script, reply[0]),
    streamIds: reply.slice(1).map((id) => textItem(script, id)),
  };
}

/** A blocking connection of a follower's own. */
interface BlockingClient extends RedisClientLike {
  xread(...args: (string | number)[]): Promise<unknown>;
}

const ABANDONED = ABANDONED_STREAM_KEEP_MS;
/** The longest XREAD BLOCK (then the follower reads again: a deleted stream, a passed lease). */
const BLOCK_MS = 1000;
/** How often a writer renews its locator's expiry (it must outlive the stream's hash). */
const LOCATOR_RENEW_MS = ABANDONED / 2;
const LOCATOR_CACHE_MAX = 10_000;

export class RedisStreamBuffer implements StreamBuffer {
  /** stream id -> session id, for the streams this process opened or looked up. */
  private readonly sessions = new Map<string, string>();
  /** stream id -> when its locator's expiry was last pushed out (this process's writes). */
  private readonly locatorRenewed = new Map<string, number>();
  private readonly blocking = new Set<RedisClientLike>();

  constructor(
    private readonly store: RedisStreamStore,
    private readonly codec: ChunkCodec,
    /** A new connection like the store's (for XREAD BLOCK). */
    private readonly duplicate: () => Promise<RedisClientLike>,
  ) {}

  private remember(streamId: string, sessionId: string): void {
    if (this.sessions.size >= LOCATOR_CACHE_MAX) this.sessions.clear();
    this.sessions.set(streamId, sessionId);
  }

  /** The stream's keys (undefined: no locator, so no stream). */
  private async keysOf(streamId: string, operation: string): Promise<StreamKeys | undefined> {
    let sessionId = this.sessions.get(streamId);
    if (sessionId === undefined) {
      const found = await this.store.call(operation, false, (c) =>
        (c as unknown as Locators).get(this.store.keys.streamLocator(streamId)),
      );
      if (found === null) return undefined;
      sessionId = found;
      this.remember(streamId, sessionId);
    }
    return this.store.keys.stream(sessionId, streamId);
  }

  async open(streamId: string, options: OpenStreamOptions): Promise<void> {
    const { sessionId, owner, leaseMs, chunks } = checkOpen(streamId, options);
    const sealedOwner = this.codec.sealOwner(streamId, owner) ?? "";
    const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, i, owner, chunk));
    const keys = this.store.keys.stream(sessionId, streamId);
    const locator = this.store.keys.streamLocator(streamId);
    await this.store.call("streams.open", true, async (c) => {
      const locators = c as unknown as Locators;
      const ttl = leaseMs + ABANDONED + LOCATOR_RENEW_MS;
      // One round trip: the id is taken (its locator, SET NX) and the stream opened with its first
      // chunks, sent together. On a cluster the same id under another session would be other keys
      // (that session's slot), which the script cannot see: a refused SET is settled after.
      const [taken, opened] = await Promise.all([
        locators.set(locator, sessionId, "PX", ttl, "NX"),
        runOpen(c, { keys, streamId, sessionId, sealedOwner, leaseMs, chunks: sealed }),
      ]);
      if (taken === null) {
        const undo = async () => {
          if (opened) await scripted(c).sbStreamUndoOpen(keys.meta, keys.chunks, keys.session, streamId, sessionId);
        };
        for (let attempt = 0; ; attempt++) {
          const holder = await locators.get(locator);
          // The holder's stream, unless its keys are this open's (standalone: one bucket, so the
          // script has seen it already).
          const held = holder === null ? undefined : this.store.keys.stream(holder, streamId).meta;
          if (held !== undefined && held !== keys.meta) {
            let exists = (await c.exists(held)) === 1;
            for (let check = 0; !exists && check < HOLDER_CHECKS; check++) {
              await new Promise((resolve) => setTimeout(resolve, HOLDER_CHECK_MS));
              exists = (await c.exists(held)) === 1;
            }
            if (exists) {
              // The id is another session's running or kept stream: the one just opened is taken back.
              await undo();
              throw streamExistsError(streamId);
            }
          }
          if (!opened) break;
          // A leftover of an expired stream (or this session's own): the locator is this stream's
          // now, unless it changed since it was read (another open took it: decide again).
          if ((await scripted(c).sbStreamTakeLocator(locator, holder ?? "", sessionId, ttl)) === 1) break;
          if (attempt >= 2) {
            await undo();
            throw streamExistsError(streamId);
          }
        }
      }
      if (!opened) throw streamExistsError(streamId);
    });
    this.remember(streamId, sessionId);
    this.locatorRenewed.set(streamId, Date.now());
  }

  async append(
    streamId: string,
    chunks: readonly string[],
    leaseMs: number,
  ): Promise<{ length: number; stopRequested: boolean }> {
    checkStreamId(streamId);
    checkChunks(chunks);
    checkLeaseMs(leaseMs);
    const keys = await this.keysOf(streamId, "streams.append");
    if (!keys) throw new StreamClosedError(streamId, undefined);
    return this.store.call("streams.append", true, async (c) => {
      let input: { keys: StreamKeys; leaseMs: number; expectedStart?: number; chunks: readonly string[] } = {
        keys,
        leaseMs,
        chunks,
      };
      if (this.codec.encrypts && chunks.length > 0) {
        // Sealed at their positions: the start is read first and checked by the script (one writer per stream).
        const [length, sealedOwner] = await c.hmget(keys.meta, "n", "o");
        if (length === null) throw new StreamClosedError(streamId, undefined);
        const start = Number(length);
        const owner = this.codec.openOwner(streamId, sealedOwner);
        input = {
          keys,
          leaseMs,
          expectedStart: start,
          chunks: chunks.map((chunk, index) => this.codec.seal(streamId, start + index, owner, chunk)),
        };
      }
      const reply = await runAppend(c, input);
      if (reply.status === "closed") throw new StreamClosedError(streamId, reply.streamStatus);
      if (reply.status !== "appended") throw new StreamClosedError(streamId, undefined);
      await this.renewLocator(c, streamId, leaseMs);
      return { length: reply.length, stopRequested: reply.stopRequested };
    });
  }

  /** Keeps the locator alive as long as the stream's hash (rarely: every half day of writing). */
  private async renewLocator(c: ScriptedClient, streamId: string, leaseMs: number): Promise<void> {
    const now = Date.now();
    const last = this.locatorRenewed.get(streamId);
    if (last !== undefined && now - last < LOCATOR_RENEW_MS) return;
    await (c as unknown as Locators).pexpire(
      this.store.keys.streamLocator(streamId),
      leaseMs + ABANDONED + LOCATOR_RENEW_MS,
    );
    if (this.locatorRenewed.size >= LOCATOR_CACHE_MAX) this.locatorRenewed.clear();
    this.locatorRenewed.set(streamId, now);
  }

  async renew(streamId: string, leaseMs: number): Promise<{ length: number; stopRequested: boolean }> {
    return this.append(streamId, [], leaseMs);
  }

  async finish(
    streamId: string,
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number; onlyIfAbandoned?: boolean },
  ): Promise<boolean> {
    checkStreamId(streamId);
    const checked = checkFinish(status, options);
    const keys = await this.keysOf(streamId, "streams.finish");
    if (!keys) return false;
    return this.store.call("streams.finish", true, async (c) => {
      const ended = await runFinish(c, {
        keys,
        status: checked.status,
        keepMs: checked.keepMs,
        onlyIfAbandoned: checked.onlyIfAbandoned === true,
      });
      // The locator expires with the stream (never before: a finish would not find it).
      if (ended) await (c as unknown as Locators).pexpire(this.store.keys.streamLocator(streamId), checked.keepMs + 1);
      return ended;
    });
  }

  async finishWith(
    streamId: string,
    chunks: readonly string[],
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number },
  ): Promise<boolean> {
    const checked = checkFinishWith(streamId, chunks, status, options);
    const keys = await this.keysOf(streamId, "streams.finish");
    if (!keys) return false;
    const locator = this.store.keys.streamLocator(streamId);
    return this.store.call("streams.finish", true, async (c) => {
      const run = (start: number | "", sealed: readonly string[]) =>
        scripted(c).sbStreamFinishWith(keys.meta, keys.chunks, checked.status, checked.keepMs, start, sealed);
      const expireLocator = () => (c as unknown as Locators).pexpire(locator, checked.keepMs + 1);
      if (!this.codec.encrypts || chunks.length === 0) {
        // The locator expires with the stream; its expiry goes with the script (on a Cluster, to
        // its node at the same time): a stream this call does not end is no longer running (its
        // finisher set such an expiry) or gone, so this takes nothing from a running stream.
        const [reply] = await Promise.all([run("", chunks), expireLocator()]);
        return flag("stream-finish-with", reply);
      }
      for (let tries = 0; tries < 3; tries++) {
        // Sealed at their positions: the start is read first and checked by the script (one writer per stream).
        const [length, sealedOwner] = await c.hmget(keys.meta, "n", "o");
        if (length === null) return false;
        const start = Number(length);
        const owner = this.codec.openOwner(streamId, sealedOwner);
        const reply = await run(
          start,
          chunks.map((chunk, index) => this.codec.seal(streamId, start + index, owner, chunk)),
        );
        if (reply === 2) continue; // moved meanwhile: sealed again at the new positions
        if (flag("stream-finish-with", reply)) await expireLocator();
        return reply === 1;
      }
      throw new StreamClosedError(streamId, undefined);
    });
  }

  async requestStop(streamId: string): Promise<boolean> {
    checkStreamId(streamId);
    const keys = await this.keysOf(streamId, "streams.requestStop");
    if (!keys) return false;
    return this.store.call("streams.requestStop", true, async (c) =>
      flag("stream-stop", await scripted(c).sbStreamStop(keys.meta)),
    );
  }

  private async snapshot(
    streamId: string,
    from: number,
    limit: number,
    operation: string,
  ): Promise<{ chunks: string[]; info: StreamInfo; keys: StreamKeys } | undefined> {
    const cached = this.sessions.has(streamId);
    const keys = await this.keysOf(streamId, operation);
    if (!keys) return undefined;
    const reply = await this.store.call(operation, false, (c) => runRead(c, { keys, from, limit }));
    if (!reply) {
      // A cached session may be of an earlier stream under this id: look the locator up again, once.
      if (!cached) return undefined;
      this.sessions.delete(streamId);
      return this.snapshot(streamId, from, limit, operation);
    }
    const { bodies } = reply;
    const owner =
      bodies.length > 0 && this.codec.encrypts ? this.codec.openOwner(streamId, reply.sealedOwner) : undefined;
    return {
      chunks: bodies.map((body, index) => this.codec.open(streamId, from + index, owner, body)),
      info: {
        streamId,
        sessionId: reply.sessionId,
        status: reply.status,
        length: reply.length,
        stopRequested: reply.stopRequested,
        leaseExpiresAt: reply.leaseExpiresAt,
      },
      keys,
    };
  }

  async info(streamId: string): Promise<StreamInfo | undefined> {
    checkStreamId(streamId);
    return (await this.snapshot(streamId, 0, 0, "streams.info"))?.info;
  }

  async read(
    streamId: string,
    options: StreamReadOptions,
  ): Promise<{ chunks: string[]; info: StreamInfo } | undefined> {
    checkStreamId(streamId);
    const { from, limit } = checkRead(options);
    const read = await this.snapshot(streamId, from, limit ?? -1, "streams.read");
    return read && { chunks: read.chunks, info: read.info };
  }

  async *follow(streamId: string, options?: StreamFollowOptions): AsyncIterable<string> {
    checkStreamId(streamId);
    const { from, signal } = checkFollow(options);
    let position = from;
    let blocking: BlockingClient | undefined;
    // The first read takes a first page (the first chunk is not kept waiting for a long reply's
    // whole replay), the next ones everything there is.
    let limit = FIRST_PAGE;
    try {
      for (;;) {
        if (signal?.aborted) return;
        const readAt = Date.now();
        const read = await this.snapshot(streamId, position, limit, "streams.follow");
        limit = -1;
        if (!read) return;
        for (const chunk of read.chunks) {
          yield chunk;
          position++;
          if (signal?.aborted) return;
        }
        // A finished stream read to its end: nothing more can come.
        if (read.info.status !== "running" && position >= read.info.length) return;
        if (read.chunks.length > 0) continue;
        const now = Date.now();
        // The lease judged as of the read (not after the yields): one renewed since is read again.
        if (read.info.status !== "running" || read.info.leaseExpiresAt <= readAt) return;
        const wait = Math.max(1, Math.min(BLOCK_MS, read.info.leaseExpiresAt - now + 1));
        blocking ??= await this.blockingClient();
        if (!blocking) {
          await delay(Math.min(wait, 50), signal);
          continue;
        }
        // Entries after position `position` (IDs are position + 1): a chunk or the end entry.
        const waiting = blocking
          .xread("BLOCK", wait, "COUNT", 1, "STREAMS", read.keys.chunks, `0-${position}`)
          .catch(() => {
            // The connection failed: drop it; the next wait opens another (or polls).
            const broken = blocking;
            blocking = undefined;
            if (broken) this.release(broken);
          });
        if (signal) {
          // An abort ends the wait at once: the blocked connection is closed (it is this follower's own).
          const aborted = new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => resolve(), { once: true }),
          );
          await Promise.race([waiting, aborted]);
          if (signal.aborted) return;
        } else {
          await waiting;
        }
      }
    } finally {
      if (blocking) this.release(blocking);
    }
  }

  private async blockingClient(): Promise<BlockingClient | undefined> {
    try {
      const client = (await this.duplicate()) as BlockingClient;
      this.blocking.add(client);
      return client;
    } catch {
      return undefined; // no second connection now: poll
    }
  }

  private release(client: RedisClientLike): void {
    this.blocking.delete(client);
    client.disconnect();
  }

  async deleteForSession(sessionId: string): Promise<number> {
    checkId(sessionId, "sessionId");
    const keys = this.store.keys.stream(sessionId, "");
    return this.store.call("streams.deleteForSession", true, async (c) => {
      const { removed, streamIds } = await runDeleteSession(c, keys);
      // Their locators, each in its stream id's slot.
      for (const id of streamIds) {
        await c.del(this.store.keys.streamLocator(id));
        this.sessions.delete(id);
        this.locatorRenewed.delete(id);
      }
      return removed;
    });
  }

  /** Nothing to do: Redis expires stream keys itself (PEXPIRE), so there is never anything to purge. */
  async purgeExpired(): Promise<number> {
    return 0;
  }

  /** Closes the followers' blocking connections (the store is closing). */
  close(): void {
    for (const client of [...this.blocking]) this.release(client);
  }
}

interface Locators {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, px: "PX", ms: number, nx?: "NX"): Promise<string | null>;
  pexpire(key: string, ms: number): Promise<number>;
}
