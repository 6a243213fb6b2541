/**
 * The stream-buffer contract: the chunks of one running reply, kept in the session store's own
 * backend so that any process can replay a reply from its first chunk and follow it live (a reply
 * that survives the tab, `useChat({ resume: true })`), stop it, and tell a writer that died from
 * one that is still writing (a lease the writer renews).
 *
 * A stream is written by exactly one writer (the process running the turn) and read by any
 * number of followers. Chunks are opaque strings (the chat server writes one UI message stream
 * chunk, as JSON text, per entry); positions count from 0 and never change. A stream belongs to a
 * session (and so to its owner): erasing or deleting the session removes its streams, and a store
 * that encrypts its sessions encrypts every chunk, bound to the stream and the position.
 */

/** `running` until the writer finishes it; every other status is final. */
export type StreamStatus = "running" | "done" | "stopped" | "failed" | "interrupted";

export interface StreamInfo {
  streamId: string;
  /** The session (chat) the stream belongs to. */
  sessionId: string;
  status: StreamStatus;
  /** How many chunks the stream holds. */
  length: number;
  /** True once `requestStop` was called while the stream was running. */
  stopRequested: boolean;
  /**
   * Milliseconds since the epoch when the writer's lease ends. A `running` stream past it was
   * abandoned (its writer died); another process may then end it as `interrupted`.
   */
  leaseExpiresAt: number;
}

export interface OpenStreamOptions {
  /** The session (chat) the stream belongs to. */
  sessionId: string;
  /** The session's owner (`SessionMeta.owner`), for erasure and as encryption context. */
  owner?: string;
  /** How long the writer's lease lasts without a renewal, in ms. */
  leaseMs: number;
  /**
   * Chunks the stream starts with, at positions 0, 1, ...: written with the open (the open
   * resolves once they are stored), so a writer's first record costs no round trip of its own.
   * Checked as `append` checks chunks; a refused one opens nothing.
   */
  chunks?: readonly string[];
}

export interface StreamReadOptions {
  /** The first position to read (0: from the first chunk). */
  from: number;
  /** At most this many chunks (default: all there are). */
  limit?: number;
}

export interface StreamFollowOptions {
  /** The first position to yield (default 0). */
  from?: number;
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal;
}

export interface StreamBuffer {
  /**
   * Starts a new `running` stream with a lease of `leaseMs` (holding `chunks`, when given). An id
   * that exists already is refused with `ConflictError` and nothing changes.
   */
  open(streamId: string, options: OpenStreamOptions): Promise<void>;
  /**
   * Appends `chunks` (in order) at the end of a running stream and renews the writer's lease: after
   * it the lease ends between `leaseMs - leaseMs / 10` and `leaseMs` from now (a backend may leave a
   * lease that has run down by less than a tenth as it is, so most appends write no lease; a writer
   * that appends or renews less than nine tenths of `leaseMs` apart is never taken for abandoned).
   * An append without chunks renews like `renew`. Returns the new length and whether a stop was requested. A stream that is no longer running
   * (finished, or ended as interrupted by another process) or gone is a `StreamClosedError`
   * (`status`: its final status, undefined when gone). Chunks must be well-formed text without
   * NUL (JSON text always is), else `ConfigurationError`; nothing is appended.
   */
  append(
    streamId: string,
    chunks: readonly string[],
    leaseMs: number,
  ): Promise<{ length: number; stopRequested: boolean }>;
  /**
   * Renews the lease of a running stream to end `leaseMs` from now; same answers and errors as
   * `append` without chunks.
   */
  renew(streamId: string, leaseMs: number): Promise<{ length: number; stopRequested: boolean }>;
  /**
   * Ends a running stream with a final status; followers end after its last chunk. The chunks are
   * kept for `keepMs` more (then removed by `purgeExpired`). With `onlyIfAbandoned`, ends it only
   * if its lease has passed (a recovering process taking over from a dead writer). Returns whether
   * this call ended it (false: it was not running, or its lease had not passed).
   */
  finish(
    streamId: string,
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number; onlyIfAbandoned?: boolean },
  ): Promise<boolean>;
  /**
   * Optional: the writer's last chunks and its end in one write, as `append(streamId, chunks)`
   * followed by `finish(streamId, status, options)` would leave them, in one round trip instead
   * of two (a turn's tail). A stream that is not running (or gone) gets nothing and the answer is
   * false; chunks are checked as `append` checks them. A buffer without it gets the two calls.
   */
  finishWith?(
    streamId: string,
    chunks: readonly string[],
    status: Exclude<StreamStatus, "running">,
    options: { keepMs: number },
  ): Promise<boolean>;
  /** Asks the writer to stop, from any process. False when the stream is not running. */
  requestStop(streamId: string): Promise<boolean>;
  /** The stream's state, or undefined when absent (never opened, expired or deleted). */
  info(streamId: string): Promise<StreamInfo | undefined>;
  /** Chunks from `from`, with the stream's state read consistently with them; undefined when absent. */
  read(streamId: string, options: StreamReadOptions): Promise<{ chunks: string[]; info: StreamInfo } | undefined>;
  /**
   * Yields the stream's chunks from `from`, then follows it live until it is no longer running
   * (or its writer's lease passes, or `signal` aborts): each backend waits for new chunks its own
   * way (LISTEN/NOTIFY, XREAD BLOCK, polling) rather than spinning. Nothing when absent. A long
   * replay yields its first chunks after a first short read, not after reading every chunk.
   */
  follow(streamId: string, options?: StreamFollowOptions): AsyncIterable<string>;
  /**
   * Removes every stream of the session (chat deletion, erasure), running or not, and ends their
   * followers. Returns how many it removed that were still visible (not past their `keepMs`).
   * `store.delete(sessionId)` does this too.
   */
  deleteForSession(sessionId: string): Promise<number>;
  /**
   * Removes finished streams whose `keepMs` has passed, and running streams whose writer's lease
   * ended more than a day ago without anyone ending them (a dead writer never recovered). Both are
   * invisible already. Returns how many; 0 on Redis, which expires stream keys itself.
   */
  purgeExpired(): Promise<number>;
}
