/**
 * The SQLite store's stream buffer: `statebag_streams` (one row per stream) and
 * `statebag_stream_chunks` (its chunks by position), tables of storage format 3 (sql.ts). Every
 * write is one `BEGIN IMMEDIATE` transaction through the store's `run` (lock waits, error mapping),
 * so the status check and the write cannot interleave with another process's.
 *
 * Followers: SQLite has no notifications across processes, so a follower polls, with a short
 * backoff (from 5 ms up to 200 ms while nothing comes, back to 5 ms after a chunk), and is woken at
 * once by appends and finishes made in this process on the same file (any store object).
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
  FIRST_PAGE,
  leaseNeedsWrite,
  Wakeups,
} from "../stream-common.js";
import type { Access, Statements, StreamRow, StreamStatements } from "./sql.js";

/** What the buffer uses of its store (SqliteSessionStore). */
export interface SqliteStreamStore {
  readonly path: string;
  run<T>(operation: string, access: Access, fn: (s: Statements) => T): Promise<T>;
}

/** Appends and finishes in this process, by file and stream id: followers skip their poll wait. */
const wakeups = new Wakeups();

const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 200;

/** Whether a stream row is past its keepMs (or abandoned for a day): invisible, purged. */
function gone(row: StreamRow, now: number): boolean {
  if (row.status === "running") return row.lease_expires_at + ABANDONED_STREAM_KEEP_MS <= now;
  return row.expires_at !== null && row.expires_at <= now;
}

function infoOf(streamId: string, row: StreamRow): StreamInfo {
  return {
    streamId,
    sessionId: row.session_id,
    status: row.status as StreamStatus,
    length: row.length,
    stopRequested: row.stop_requested === 1,
    leaseExpiresAt: row.lease_expires_at,
  };
}

/** The live row of a stream (undefined when absent or gone). */
function live(s: StreamStatements, streamId: string, now: number): StreamRow | undefined {
  const row = s.get.get(streamId);
  return row && !gone(row, now) ? row : undefined;
}

/**
 * Removes the streams of a session inside the caller's write transaction (the store's `delete`);
 * returns how many were visible. @internal
 */
export function deleteSessionStreams(s: Statements, sessionId: string, now = Date.now()): number {
  const count = s.streams.ofSession.get(sessionId, now, now - ABANDONED_STREAM_KEEP_MS)?.n ?? 0;
  s.streams.removeSessionChunks.run(sessionId);
  s.streams.removeSession.run(sessionId);
  return count;
}

export class SqliteStreamBuffer implements StreamBuffer {
  constructor(
    private readonly store: SqliteStreamStore,
    private readonly codec: ChunkCodec,
  ) {}

  private key(streamId: string): string {
    return `${this.store.path}\u0000${streamId}`;
  }

  async open(streamId: string, options: OpenStreamOptions): Promise<void> {
    const { sessionId, owner, leaseMs, chunks } = checkOpen(streamId, options);
    const sealedOwner = this.codec.sealOwner(streamId, owner);
    const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, i, owner, chunk));
    await this.store.run("streams.open", "write", ({ streams: s }) => {
      const now = Date.now();
      // The insert first: a new id (every turn's) needs no read. A row there is left as it was.
      if (s.insert.run(streamId, sessionId, sealedOwner, sealed.length, now + leaseMs).changes === 0) {
        const row = s.get.get(streamId);
        if (row && !gone(row, now)) throw streamExistsError(streamId);
        // An expired stream's id opens anew: its old chunks go first.
        s.removeChunks.run(streamId);
        s.remove.run(streamId);
        s.insert.run(streamId, sessionId, sealedOwner, sealed.length, now + leaseMs);
      }
      // With its first chunks, in the same transaction: nobody sees the stream without them.
      sealed.forEach((text, position) => s.chunk.run(streamId, position, text));
    });
  }

  async append(
    streamId: string,
    chunks: readonly string[],
    leaseMs: number,
  ): Promise<{ length: number; stopRequested: boolean }> {
    checkStreamId(streamId);
    checkChunks(chunks);
    checkLeaseMs(leaseMs);
    const result = await this.store.run("streams.append", "write", ({ streams: s }) => {
      const now = Date.now();
      // Grows the running stream first (renewing its lease when a tenth of it has run down, or
      // always without chunks: a renewal), then writes the chunks at the positions it grew by; the
      // transaction makes it one step (nothing is seen half-written).
      const grown = s.grow.get(chunks.length, streamId, now - ABANDONED_STREAM_KEEP_MS);
      if (!grown) throw new StreamClosedError(streamId, live(s, streamId, now)?.status as never);
      if (leaseNeedsWrite(grown.lease_expires_at, now, leaseMs, chunks.length === 0))
        s.renewLease.run(now + leaseMs, streamId);
      const owner = chunks.length > 0 && this.codec.encrypts ? this.codec.openOwner(streamId, grown.owner) : undefined;
      let position = grown.length - chunks.length;
      for (const chunk of chunks) s.chunk.run(streamId, position, this.codec.seal(streamId, position++, owner, chunk));
      return { length: grown.length, stopRequested: grown.stop_requested === 1 };
    });
    if (chunks.length > 0) wakeups.wake(this.key(streamId));
    return result;
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
    const ended = await this.store.run("streams.finish", "write", ({ streams: s }) => {
      const now = Date.now();
      const row = live(s, streamId, now);
      if (row?.status !== "running") return false;
      if (checked.onlyIfAbandoned && row.lease_expires_at > now) return false;
      s.finish.run(checked.status, now + checked.keepMs, streamId);
      return true;
    });
    if (ended) wakeups.wake(this.key(streamId));
    return ended;
  }

  async finishWith(
    streamId: string,
    chunks: readonly string[],
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number },
  ): Promise<boolean> {
    const checked = checkFinishWith(streamId, chunks, status, options);
    // One transaction: the growth and the final status in one statement (only a running stream
    // not abandoned grows and ends), then the chunks at the positions it grew by.
    const ended = await this.store.run("streams.finish", "write", ({ streams: s }) => {
      const now = Date.now();
      const grown = s.growFinish.get(
        chunks.length,
        checked.status,
        now + checked.keepMs,
        streamId,
        now - ABANDONED_STREAM_KEEP_MS,
      );
      if (!grown) return false;
      const owner = chunks.length > 0 && this.codec.encrypts ? this.codec.openOwner(streamId, grown.owner) : undefined;
      let position = grown.length - chunks.length;
      for (const chunk of chunks) s.chunk.run(streamId, position, this.codec.seal(streamId, position++, owner, chunk));
      return true;
    });
    if (ended) wakeups.wake(this.key(streamId));
    return ended;
  }

  async requestStop(streamId: string): Promise<boolean> {
    checkStreamId(streamId);
    return this.store.run("streams.requestStop", "write", ({ streams: s }) => {
      const row = live(s, streamId, Date.now());
      if (row?.status !== "running") return false;
      s.stop.run(streamId);
      return true;
    });
  }

  async info(streamId: string): Promise<StreamInfo | undefined> {
    checkStreamId(streamId);
    const row = await this.store.run("streams.info", "read", ({ streams: s }) => live(s, streamId, Date.now()));
    return row && infoOf(streamId, row);
  }

  /** The row and the chunks from `from` (up to `limit`), from one read transaction, opened. */
  private async snapshot(
    streamId: string,
    from: number,
    limit: number | undefined,
  ): Promise<{ chunks: string[]; row: StreamRow } | undefined> {
    const read = await this.store.run("streams.read", "snapshot", ({ streams: s }) => {
      const row = live(s, streamId, Date.now());
      if (!row) return undefined;
      const end = limit === undefined ? row.length : Math.min(row.length, from + limit);
      return { row, bodies: from < end ? s.chunks.all(streamId, from, end).map((r) => r.body) : [] };
    });
    if (!read) return undefined;
    const owner =
      read.bodies.length > 0 && this.codec.encrypts ? this.codec.openOwner(streamId, read.row.owner) : undefined;
    const chunks = read.bodies.map((body, i) => this.codec.open(streamId, from + i, owner, body));
    return { chunks, row: read.row };
  }

  async read(
    streamId: string,
    options: StreamReadOptions,
  ): Promise<{ chunks: string[]; info: StreamInfo } | undefined> {
    checkStreamId(streamId);
    const { from, limit } = checkRead(options);
    const read = await this.snapshot(streamId, from, limit);
    return read && { chunks: read.chunks, info: infoOf(streamId, read.row) };
  }

  async *follow(streamId: string, options?: StreamFollowOptions): AsyncIterable<string> {
    checkStreamId(streamId);
    const { from, signal } = checkFollow(options);
    let position = from;
    let pause = FIRST_POLL_MS;
    // The first read takes a first page (the first chunk is not kept waiting for a long reply's
    // whole replay), the next ones everything there is.
    let limit: number | undefined = FIRST_PAGE;
    for (;;) {
      if (signal?.aborted) return;
      // Armed before the read: an append in this process while it runs wakes the wait below.
      const waiter = wakeups.arm(this.key(streamId), signal);
      let read: Awaited<ReturnType<SqliteStreamBuffer["snapshot"]>>;
      const readAt = Date.now();
      try {
        read = await this.snapshot(streamId, position, limit);
      } catch (error) {
        waiter.cancel();
        throw error;
      }
      limit = undefined;
      if (!read || read.chunks.length > 0) waiter.cancel();
      if (!read) return;
      for (const chunk of read.chunks) {
        yield chunk;
        position++;
        if (signal?.aborted) return;
      }
      // A finished stream read to its end: nothing more can come.
      if (read.row.status !== "running" && position >= read.row.length) {
        waiter.cancel();
        return;
      }
      const now = Date.now();
      if (read.chunks.length > 0) {
        pause = FIRST_POLL_MS;
        continue;
      }
      // The lease judged as of the read (not after the yields): one renewed since is read again.
      if (read.row.status !== "running" || read.row.lease_expires_at <= readAt) {
        waiter.cancel();
        return;
      }
      await waiter.wait(Math.min(pause, Math.max(1, read.row.lease_expires_at - now + 1)));
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  async deleteForSession(sessionId: string): Promise<number> {
    checkId(sessionId, "sessionId");
    const removed = await this.store.run("streams.deleteForSession", "write", (s) =>
      deleteSessionStreams(s, sessionId),
    );
    // Followers in this process notice at once (others at their next poll).
    if (removed > 0) wakeups.wakeAll();
    return removed;
  }

  async purgeExpired(): Promise<number> {
    return this.store.run("streams.purgeExpired", "write", ({ streams: s }) => {
      const now = Date.now();
      const abandoned = now - ABANDONED_STREAM_KEEP_MS;
      s.purgeChunks.run(now, abandoned);
      return s.purge.run(now, abandoned).changes;
    });
  }
}
