/**
 * The memory store's stream buffer: streams in a Map, followers woken by a promise each append and
 * finish resolve (no polling), and by a timer at the writer's lease end (a follower of a writer
 * that stopped renewing ends then). Chunks are kept as the store's chunk codec writes them (sealed
 * when the store's session codec encrypts), like every other backend.
 */
import { checkId } from "./common.js";
import { StreamClosedError, streamExistsError } from "./errors.js";
import type {
  OpenStreamOptions,
  StreamBuffer,
  StreamFollowOptions,
  StreamInfo,
  StreamReadOptions,
  StreamStatus,
} from "./stream-buffer.js";
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
  Wakeups,
} from "./stream-common.js";

interface MemoryStream {
  sessionId: string;
  owner: string | undefined;
  status: StreamStatus;
  chunks: string[];
  stopRequested: boolean;
  leaseExpiresAt: number;
  /** Set by `finish`: when `purgeExpired` may remove it (it is invisible from then on). */
  expiresAt: number | undefined;
}

export class MemoryStreamBuffer implements StreamBuffer {
  private readonly streams = new Map<string, MemoryStream>();
  private readonly wakeups = new Wakeups();

  constructor(
    private readonly codec: ChunkCodec,
    private readonly check: () => void = () => undefined,
  ) {}

  /** The stream unless it is gone or past its `keepMs` (then removed now). */
  private live(streamId: string, now = Date.now()): MemoryStream | undefined {
    const stream = this.streams.get(streamId);
    if (stream && expired(stream, now)) {
      this.streams.delete(streamId);
      this.wakeups.wake(streamId);
      return undefined;
    }
    return stream;
  }

  private running(streamId: string): MemoryStream {
    const stream = this.live(streamId);
    if (stream?.status !== "running") throw new StreamClosedError(streamId, stream?.status as never);
    return stream;
  }

  async open(streamId: string, options: OpenStreamOptions): Promise<void> {
    this.check();
    const { sessionId, owner, leaseMs, chunks } = checkOpen(streamId, options);
    if (this.live(streamId)) throw streamExistsError(streamId);
    // Sealed before anything changes: a codec that throws opens nothing.
    const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, i, owner, chunk));
    this.streams.set(streamId, {
      sessionId,
      owner,
      status: "running",
      chunks: sealed,
      stopRequested: false,
      leaseExpiresAt: Date.now() + leaseMs,
      expiresAt: undefined,
    });
  }

  async append(
    streamId: string,
    chunks: readonly string[],
    leaseMs: number,
  ): Promise<{ length: number; stopRequested: boolean }> {
    this.check();
    checkStreamId(streamId);
    checkChunks(chunks);
    checkLeaseMs(leaseMs);
    const stream = this.running(streamId);
    // Sealed before anything changes: a codec that throws leaves the stream as it was.
    const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, stream.chunks.length + i, stream.owner, chunk));
    for (const text of sealed) stream.chunks.push(text);
    stream.leaseExpiresAt = Date.now() + leaseMs;
    if (sealed.length > 0) this.wakeups.wake(streamId);
    return { length: stream.chunks.length, stopRequested: stream.stopRequested };
  }

  async renew(streamId: string, leaseMs: number): Promise<{ length: number; stopRequested: boolean }> {
    return this.append(streamId, [], leaseMs);
  }

  async finish(
    streamId: string,
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number; onlyIfAbandoned?: boolean },
  ): Promise<boolean> {
    this.check();
    checkStreamId(streamId);
    const checked = checkFinish(status, options);
    const stream = this.live(streamId);
    const now = Date.now();
    if (stream?.status !== "running") return false;
    if (checked.onlyIfAbandoned && stream.leaseExpiresAt > now) return false;
    stream.status = checked.status;
    stream.expiresAt = now + checked.keepMs;
    this.wakeups.wake(streamId);
    return true;
  }

  async finishWith(
    streamId: string,
    chunks: readonly string[],
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number },
  ): Promise<boolean> {
    this.check();
    const checked = checkFinishWith(streamId, chunks, status, options);
    const stream = this.live(streamId);
    if (stream?.status !== "running") return false;
    // Sealed before anything changes: a codec that throws leaves the stream as it was.
    const sealed = chunks.map((chunk, i) => this.codec.seal(streamId, stream.chunks.length + i, stream.owner, chunk));
    for (const text of sealed) stream.chunks.push(text);
    stream.status = checked.status;
    stream.expiresAt = Date.now() + checked.keepMs;
    this.wakeups.wake(streamId);
    return true;
  }

  async requestStop(streamId: string): Promise<boolean> {
    this.check();
    checkStreamId(streamId);
    const stream = this.live(streamId);
    if (stream?.status !== "running") return false;
    stream.stopRequested = true;
    return true;
  }

  async info(streamId: string): Promise<StreamInfo | undefined> {
    this.check();
    checkStreamId(streamId);
    const stream = this.live(streamId);
    return stream && infoOf(streamId, stream);
  }

  async read(
    streamId: string,
    options: StreamReadOptions,
  ): Promise<{ chunks: string[]; info: StreamInfo } | undefined> {
    this.check();
    checkStreamId(streamId);
    const { from, limit } = checkRead(options);
    const stream = this.live(streamId);
    if (!stream) return undefined;
    const end = limit === undefined ? stream.chunks.length : Math.min(stream.chunks.length, from + limit);
    const chunks: string[] = [];
    for (let i = from; i < end; i++) chunks.push(this.codec.open(streamId, i, stream.owner, stream.chunks[i]));
    return { chunks, info: infoOf(streamId, stream) };
  }

  async *follow(streamId: string, options?: StreamFollowOptions): AsyncIterable<string> {
    this.check();
    checkStreamId(streamId);
    const { from, signal } = checkFollow(options);
    let position = from;
    for (;;) {
      if (signal?.aborted) return;
      const stream = this.live(streamId);
      if (!stream) return;
      // What is there now, opened before yielding (the consumer may take its time).
      const batch: string[] = [];
      for (let i = position; i < stream.chunks.length; i++)
        batch.push(this.codec.open(streamId, i, stream.owner, stream.chunks[i]));
      for (const chunk of batch) {
        yield chunk;
        position++;
        if (signal?.aborted) return;
      }
      if (batch.length > 0) continue; // more may have come while the consumer had a chunk
      const now = Date.now();
      if (stream.status !== "running" || stream.leaseExpiresAt <= now) return;
      // Woken by the next append or finish, or at the lease's end (then checked again above).
      await this.wakeups.wait(streamId, stream.leaseExpiresAt - now + 1, signal);
    }
  }

  async deleteForSession(sessionId: string): Promise<number> {
    this.check();
    checkId(sessionId, "sessionId");
    let removed = 0;
    for (const [streamId, stream] of [...this.streams]) {
      if (stream.sessionId !== sessionId) continue;
      this.streams.delete(streamId);
      this.wakeups.wake(streamId);
      if (!expired(stream, Date.now())) removed++;
    }
    return removed;
  }

  async purgeExpired(): Promise<number> {
    this.check();
    const now = Date.now();
    let removed = 0;
    for (const [streamId, stream] of [...this.streams]) {
      if (!expired(stream, now)) continue;
      this.streams.delete(streamId);
      this.wakeups.wake(streamId);
      removed++;
    }
    return removed;
  }

  /** Ends every follower (the store was closed). */
  close(): void {
    this.wakeups.wakeAll();
  }
}

function expired(s: MemoryStream, now: number): boolean {
  if (s.status === "running") return s.leaseExpiresAt + ABANDONED_STREAM_KEEP_MS <= now;
  return s.expiresAt !== undefined && s.expiresAt <= now;
}

function infoOf(streamId: string, s: MemoryStream): StreamInfo {
  return {
    streamId,
    sessionId: s.sessionId,
    status: s.status,
    length: s.chunks.length,
    stopRequested: s.stopRequested,
    leaseExpiresAt: s.leaseExpiresAt,
  };
}
