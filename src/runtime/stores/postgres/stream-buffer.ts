/**
 * The PostgreSQL store's stream buffer: `statebag_streams` and `statebag_stream_chunks` (storage
 * format 3, sql.ts). Each write is one statement (an append: the stream's row update, which orders
 * concurrent appends by its row lock, the chunk inserts and a NOTIFY), except an encrypted append,
 * which locks the row first to seal each chunk at its position.
 *
 * Followers wait on LISTEN: one connection per store, held while someone follows, listens on the
 * store's channel (the payload is the stream id) and wakes that stream's followers; they read again
 * at the latest every second anyway (a notification lost with a dropped connection costs that
 * much). Behind PgBouncer in transaction pooling (`?pgbouncer=true`, `preparedStatements: false`)
 * LISTEN is not available: followers poll with a short backoff (5 ms to 250 ms while nothing
 * comes), and appends in the same process wake them at once.
 */
import { createHash } from "node:crypto";
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
  Wakeups,
} from "../stream-common.js";
import type { PgPoolClient } from "./driver.js";
import { type PostgresStatements, quoteIdent, type Row, TRANSACTION } from "./sql.js";

/** What the buffer uses of its store (PostgresSessionStore). */
export interface PgStreamStore {
  readonly schema: string;
  readonly sql: PostgresStatements;
  withClient<T>(operation: string, write: boolean, fn: (client: PgPoolClient) => Promise<T>): Promise<T>;
}

export interface PgStreamOptions {
  /** A dedicated connection for LISTEN (false behind a transaction-pooling PgBouncer: poll instead). */
  listen: boolean;
  /** Checks a connection out for LISTEN (the store's pool). */
  connect(): Promise<PgPoolClient>;
}

const ABANDONED = ABANDONED_STREAM_KEEP_MS;
const FIRST_POLL_MS = 5;
const MAX_POLL_MS = 250;
/** With LISTEN working, how long a follower waits for a notification before reading anyway. */
const LISTEN_FALLBACK_MS = 1000;
const NO_END = Number.MAX_SAFE_INTEGER;

type Notification = { channel: string; payload?: string };

/** The NOTIFY channel of a schema (a short, valid identifier whatever the schema's name). */
export function streamChannel(schema: string): string {
  return `statebag_streams_${createHash("sha256").update(schema).digest("hex").slice(0, 16)}`;
}

function infoOf(streamId: string, row: Row): StreamInfo {
  return {
    streamId,
    sessionId: row.session_id as string,
    status: row.status as StreamStatus,
    length: Number(row.length),
    stopRequested: row.stop_requested === true,
    leaseExpiresAt: Number(row.lease_expires_at),
  };
}

/**
 * Removes the streams of a session on the caller's connection (the store's `delete`); returns how
 * many were visible. @internal
 */
export async function deleteSessionStreams(
  client: PgPoolClient,
  sql: PostgresStatements,
  schema: string,
  sessionId: string,
): Promise<number> {
  const { rows } = await client.query<Row>(sql.streams.deleteSession, [sessionId, ABANDONED, streamChannel(schema)]);
  return Number(rows[0].removed);
}

export class PostgresStreamBuffer implements StreamBuffer {
  private readonly channel: string;
  /** Followers of this store by stream id, woken by notifications and by this process's writes. */
  private readonly wakeups = new Wakeups();
  private listener: PgPoolClient | undefined;
  private listening: Promise<boolean> | undefined;
  private followers = 0;
  private closed = false;

  constructor(
    private readonly store: PgStreamStore,
    private readonly codec: ChunkCodec,
    private readonly options: PgStreamOptions,
  ) {
    this.channel = streamChannel(store.schema);
  }

  private get s() {
    return this.store.sql.streams;
  }

  async open(streamId: string, options: OpenStreamOptions): Promise<void> {
    const { sessionId, owner, leaseMs, chunks } = checkOpen(streamId, options);
    const sealedOwner = this.codec.sealOwner(streamId, owner);
    const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, i, owner, chunk));
    await this.store.withClient("streams.open", true, async (c) => {
      const values = [streamId, sessionId, sealedOwner, leaseMs, sealed];
      // One statement: the stream and its first chunks. Refused: the id is taken, or held by an
      // expired stream, whose id opens anew once it (and its chunks) went.
      if ((await c.query<Row>(this.s.insert, values)).rows.length > 0) return;
      await c.query(this.s.clearGone, [streamId, ABANDONED]);
      if ((await c.query<Row>(this.s.insert, values)).rows.length === 0) throw streamExistsError(streamId);
    });
  }

  /** Why a write found no running stream. */
  private async closedError(c: PgPoolClient, streamId: string): Promise<StreamClosedError> {
    const { rows } = await c.query<Row>(this.s.get, [streamId, ABANDONED]);
    const status = rows[0]?.status as Exclude<StreamStatus, "running"> | undefined;
    return new StreamClosedError(streamId, status);
  }

  async append(
    streamId: string,
    chunks: readonly string[],
    leaseMs: number,
  ): Promise<{ length: number; stopRequested: boolean }> {
    checkStreamId(streamId);
    checkChunks(chunks);
    checkLeaseMs(leaseMs);
    const result = await this.store.withClient("streams.append", true, async (c) => {
      if (this.codec.encrypts && chunks.length > 0) return this.appendSealed(c, streamId, chunks, leaseMs);
      const { rows } = await c.query<Row>(this.s.append, [
        streamId,
        chunks,
        chunks.length,
        leaseMs,
        ABANDONED,
        this.channel,
      ]);
      if (rows.length === 0) throw await this.closedError(c, streamId);
      return { length: Number(rows[0].length), stopRequested: rows[0].stop_requested === true };
    });
    if (chunks.length > 0) this.wakeups.wake(streamId);
    return result;
  }

  /** An encrypted append: the row locked for the positions, each chunk sealed at its own. */
  private async appendSealed(
    c: PgPoolClient,
    streamId: string,
    chunks: readonly string[],
    leaseMs: number,
  ): Promise<{ length: number; stopRequested: boolean }> {
    await c.query(TRANSACTION.begin);
    try {
      const { rows } = await c.query<Row>(this.s.lock, [streamId, ABANDONED]);
      if (rows.length === 0) {
        await c.query(TRANSACTION.rollback);
        throw await this.closedError(c, streamId);
      }
      const start = Number(rows[0].length);
      const owner = this.codec.openOwner(streamId, rows[0].owner as string | null);
      const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, start + i, owner, chunk));
      await c.query(this.s.insertChunks, [streamId, sealed, start]);
      const grown = await c.query<Row>(this.s.grow, [streamId, start + sealed.length, leaseMs, this.channel, true]);
      await c.query(TRANSACTION.commit);
      return { length: start + sealed.length, stopRequested: grown.rows[0].stop_requested === true };
    } catch (error) {
      if (!(error instanceof StreamClosedError)) await c.query(TRANSACTION.rollback).catch(() => undefined);
      throw error;
    }
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
    const ended = await this.store.withClient("streams.finish", true, async (c) => {
      const { rows } = await c.query<Row>(this.s.finish, [
        streamId,
        checked.status,
        checked.keepMs,
        checked.onlyIfAbandoned,
        ABANDONED,
        this.channel,
      ]);
      return Number(rows[0].ended) === 1;
    });
    if (ended) this.wakeups.wake(streamId);
    return ended;
  }

  async finishWith(
    streamId: string,
    chunks: readonly string[],
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number },
  ): Promise<boolean> {
    const checked = checkFinishWith(streamId, chunks, status, options);
    const ended = await this.store.withClient("streams.finish", true, async (c) => {
      if (this.codec.encrypts && chunks.length > 0) return this.finishSealed(c, streamId, chunks, checked);
      const { rows } = await c.query<Row>(this.s.finishWith, [
        streamId,
        chunks,
        chunks.length,
        checked.status,
        checked.keepMs,
        ABANDONED,
        this.channel,
      ]);
      return Number(rows[0].ended) === 1;
    });
    if (ended) this.wakeups.wake(streamId);
    return ended;
  }

  /** An encrypted `finishWith`: the row locked for the positions, each chunk sealed at its own, then the end. */
  private async finishSealed(
    c: PgPoolClient,
    streamId: string,
    chunks: readonly string[],
    checked: { status: Exclude<StreamStatus, "running">; keepMs: number },
  ): Promise<boolean> {
    await c.query(TRANSACTION.begin);
    try {
      const { rows } = await c.query<Row>(this.s.lock, [streamId, ABANDONED]);
      if (rows.length === 0) {
        await c.query(TRANSACTION.rollback);
        return false;
      }
      const start = Number(rows[0].length);
      const owner = this.codec.openOwner(streamId, rows[0].owner as string | null);
      const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, start + i, owner, chunk));
      // The row is locked: the statement puts them at the positions they were sealed for.
      const { rows: ended } = await c.query<Row>(this.s.finishWith, [
        streamId,
        sealed,
        sealed.length,
        checked.status,
        checked.keepMs,
        ABANDONED,
        this.channel,
      ]);
      await c.query(TRANSACTION.commit);
      return Number(ended[0].ended) === 1;
    } catch (error) {
      await c.query(TRANSACTION.rollback).catch(() => undefined);
      throw error;
    }
  }

  async requestStop(streamId: string): Promise<boolean> {
    checkStreamId(streamId);
    return this.store.withClient(
      "streams.requestStop",
      true,
      async (c) => (await c.query<Row>(this.s.stop, [streamId, ABANDONED])).rows.length === 1,
    );
  }

  async info(streamId: string): Promise<StreamInfo | undefined> {
    checkStreamId(streamId);
    const { rows } = await this.store.withClient("streams.info", false, (c) =>
      c.query<Row>(this.s.get, [streamId, ABANDONED]),
    );
    return rows.length === 0 ? undefined : infoOf(streamId, rows[0]);
  }

  /** The stream and its chunks in [from, end), from one statement, opened. */
  private async snapshot(
    streamId: string,
    from: number,
    end: number,
  ): Promise<{ chunks: string[]; info: StreamInfo } | undefined> {
    const { rows } = await this.store.withClient("streams.read", false, (c) =>
      c.query<Row>(this.s.read, [streamId, from, end, ABANDONED]),
    );
    if (rows.length === 0) return undefined;
    const bodies = rows[0].body === null ? [] : rows.map((r) => r.body as string);
    const owner =
      bodies.length > 0 && this.codec.encrypts
        ? this.codec.openOwner(streamId, rows[0].owner as string | null)
        : undefined;
    return {
      chunks: bodies.map((body, i) => this.codec.open(streamId, from + i, owner, body)),
      info: infoOf(streamId, rows[0]),
    };
  }

  async read(
    streamId: string,
    options: StreamReadOptions,
  ): Promise<{ chunks: string[]; info: StreamInfo } | undefined> {
    checkStreamId(streamId);
    const { from, limit } = checkRead(options);
    return this.snapshot(streamId, from, limit === undefined ? NO_END : Math.min(NO_END, from + limit));
  }

  async *follow(streamId: string, options?: StreamFollowOptions): AsyncIterable<string> {
    checkStreamId(streamId);
    const { from, signal } = checkFollow(options);
    this.followers++;
    try {
      // LISTEN starts when the follower first has to wait (a finished reply replays without it).
      let listening = false;
      let position = from;
      let pause = FIRST_POLL_MS;
      // The first read takes a first page (the first chunk is not kept waiting for a long reply's
      // whole replay), the next ones everything there is.
      let page = FIRST_PAGE;
      for (;;) {
        if (signal?.aborted || this.closed) return;
        // Armed before the read: a notification that arrives while it runs wakes the wait below.
        const waiter = this.wakeups.arm(streamId, signal);
        let read: Awaited<ReturnType<PostgresStreamBuffer["snapshot"]>>;
        const readAt = Date.now();
        try {
          read = await this.snapshot(streamId, position, Math.min(NO_END, position + page));
        } catch (error) {
          waiter.cancel();
          throw error;
        }
        page = NO_END;
        if (!read || read.chunks.length > 0) waiter.cancel();
        if (!read) return;
        for (const chunk of read.chunks) {
          yield chunk;
          position++;
          if (signal?.aborted) return;
        }
        // A finished stream read to its end: nothing more can come.
        if (read.info.status !== "running" && position >= read.info.length) {
          waiter.cancel();
          return;
        }
        if (read.chunks.length > 0) {
          pause = FIRST_POLL_MS;
          continue;
        }
        const now = Date.now();
        // The lease judged as of the read (not after the yields): one renewed since is read again.
        if (read.info.status !== "running" || read.info.leaseExpiresAt <= readAt) {
          waiter.cancel();
          return;
        }
        if (!listening && this.options.listen) {
          listening = true;
          if (await this.listen()) {
            // Listening from now on: read again at once (a chunk may have come before LISTEN did).
            waiter.cancel();
            continue;
          }
        }
        const wait = this.listener ? LISTEN_FALLBACK_MS : pause;
        await waiter.wait(Math.min(wait, Math.max(1, read.info.leaseExpiresAt - now + 1)));
        pause = Math.min(pause * 2, MAX_POLL_MS);
      }
    } finally {
      if (--this.followers === 0) this.unlisten();
    }
  }

  /** Starts LISTEN on a connection of its own (once; again after it was lost). False: poll. */
  private listen(): Promise<boolean> {
    if (!this.options.listen || this.closed) return Promise.resolve(false);
    if (this.listener) return Promise.resolve(true);
    this.listening ??= (async () => {
      let client: PgPoolClient | undefined;
      try {
        client = await this.options.connect();
        const onNotification = (message: Notification) => {
          if (message.channel === this.channel && message.payload !== undefined) this.wakeups.wake(message.payload);
        };
        const lost = (error: Error) => {
          // The connection dropped: followers poll until the next follow listens again.
          if (this.listener !== client) return;
          this.listener = undefined;
          client!.release(error);
          this.wakeups.wakeAll();
        };
        const events = client as unknown as {
          on(event: "notification", listener: (message: Notification) => void): unknown;
          on(event: "error", listener: (error: Error) => void): unknown;
        };
        events.on("notification", onNotification);
        events.on("error", lost);
        await client.query(`LISTEN ${quoteIdent(this.channel)}`);
        if (this.closed || this.followers === 0) {
          client.release(true);
          return false;
        }
        this.listener = client;
        return true;
      } catch {
        // No listening connection now (the server is away, or a pooler refuses LISTEN): poll.
        client?.release(true);
        return false;
      } finally {
        this.listening = undefined;
      }
    })();
    return this.listening;
  }

  private unlisten(): void {
    const client = this.listener;
    this.listener = undefined;
    // Released destroyed: a connection that listened goes back to no pool (LISTEN is session state).
    client?.release(true);
  }

  async deleteForSession(sessionId: string): Promise<number> {
    checkId(sessionId, "sessionId");
    const removed = await this.store.withClient("streams.deleteForSession", true, (c) =>
      deleteSessionStreams(c, this.store.sql, this.store.schema, sessionId),
    );
    if (removed > 0) this.wakeups.wakeAll();
    return removed;
  }

  async purgeExpired(): Promise<number> {
    const { rows } = await this.store.withClient("streams.purgeExpired", true, (c) =>
      c.query<Row>(this.s.purge, [ABANDONED]),
    );
    return Number(rows[0].removed);
  }

  /** Ends every follower and the LISTEN connection (the store is closing). */
  close(): void {
    this.closed = true;
    this.unlisten();
    this.wakeups.wakeAll();
  }
}
