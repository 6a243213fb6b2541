/**
 * What every stream-buffer backend shares: the argument checks (so every backend refuses the same
 * input with the same error), the chunk codec (identity, or the session codec's encryption applied
 * to each chunk), and the waits a follower does between reads.
 */
import { ConfigurationError } from "../core/errors.js";
import { quoted } from "../core/json.js";
import { checkId } from "./common.js";
import { type Binding, open as openEnvelope, isEncryptedText, seal } from "./encryption/envelope.js";
import type { EncryptionInfo } from "./encryption/codec.js";
import { DecryptionError } from "./encryption/errors.js";
import type { OpenStreamOptions, StreamFollowOptions, StreamReadOptions, StreamStatus } from "./stream-buffer.js";
import type { SessionCodec } from "./types.js";

/**
 * A `running` stream whose writer's lease passed this long ago (and that no process ended) is
 * removed by `purgeExpired` like a finished one: a writer that died and was never recovered does
 * not keep its chunks forever.
 */
export const ABANDONED_STREAM_KEEP_MS = 24 * 60 * 60 * 1000;

/**
 * An append renews the writer's lease only once a tenth of `leaseMs` has run down (or when it was
 * set further ahead than `leaseMs`, by a longer lease earlier); `renew` always does. So after an
 * append at `now` the lease ends no earlier than `now + leaseMs - leaseMs / LEASE_RENEW_FRACTION`
 * and no later than `now + leaseMs`: a writer that appends (or renews) less than nine tenths of its
 * lease apart is never taken for abandoned, and a dead writer's lease still passes at most
 * `leaseMs` after its last write. Most appends then leave the stream's lease (and its index) as it
 * is, which is most of what an append costs beyond the chunk's own insert.
 */
export const LEASE_RENEW_FRACTION = 10;

/**
 * Whether a write at `now` with `leaseMs` must write the lease: always for a renewal (`renewal`),
 * else when less than `leaseMs - leaseMs / LEASE_RENEW_FRACTION` is left, or more than `leaseMs`.
 */
export function leaseNeedsWrite(leaseExpiresAt: number, now: number, leaseMs: number, renewal: boolean): boolean {
  return (
    renewal ||
    leaseExpiresAt < now + leaseMs - Math.floor(leaseMs / LEASE_RENEW_FRACTION) ||
    leaseExpiresAt > now + leaseMs
  );
}

/**
 * How many chunks a follower's first read takes: a replay yields its first chunk after reading
 * these (not the whole reply); the reads after it take everything there is.
 */
export const FIRST_PAGE = 32;

export const FINAL_STATUSES: readonly Exclude<StreamStatus, "running">[] = ["done", "stopped", "failed", "interrupted"];

export function checkStreamId(id: unknown): string {
  return checkId(id, "streamId");
}

function checkMs(value: unknown, what: string, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigurationError(
      `${what} must be ${min === 0 ? "a non-negative" : "a positive"} integer number of milliseconds, got ${typeof value === "string" ? quoted(value, 40) : String(value)}`,
      `pass ${what} as a whole number of milliseconds, e.g. 30000`,
    );
  }
  return value;
}

export function checkLeaseMs(leaseMs: unknown): number {
  return checkMs(leaseMs, "leaseMs", 1);
}

export function checkOpen(
  streamId: unknown,
  options: OpenStreamOptions,
): OpenStreamOptions & { chunks: readonly string[] } {
  checkStreamId(streamId);
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError("streams.open needs options { sessionId, leaseMs, owner? }");
  const sessionId = checkId(options.sessionId, "sessionId");
  const owner = options.owner;
  if (owner !== undefined) checkId(owner, "owner");
  const leaseMs = checkLeaseMs(options.leaseMs);
  const chunks = options.chunks === undefined ? [] : checkChunks(options.chunks);
  return { sessionId, leaseMs, chunks, ...(owner !== undefined ? { owner } : {}) };
}

/**
 * Chunks must be strings every backend stores exactly: well-formed Unicode (PostgreSQL and Redis
 * keep UTF-8, which has no lone surrogate) without NUL (PostgreSQL text refuses it). JSON text, what
 * the chat server writes, always is.
 */
export function checkChunks(chunks: unknown): readonly string[] {
  if (!Array.isArray(chunks)) throw new ConfigurationError("streams.append needs an array of chunk strings");
  for (let i = 0; i < chunks.length; i++) {
    const chunk: unknown = chunks[i];
    if (typeof chunk !== "string")
      throw new ConfigurationError(
        `chunk ${i} of the append is a ${chunk === null ? "null" : typeof chunk}, not a string`,
      );
    if (!wellFormed(chunk) || chunk.includes("\0")) {
      throw new ConfigurationError(
        `chunk ${i} of the append is not storable text: ${chunk.includes("\0") ? "it contains NUL" : "it contains a lone surrogate"}; nothing was appended`,
        "write chunks as JSON text (JSON.stringify escapes both)",
      );
    }
  }
  return chunks as readonly string[];
}

/** `String.prototype.isWellFormed` (Node 20+; not in the compile target's lib): native, linear. */
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

export function checkFinish(
  status: unknown,
  options: { keepMs: number; onlyIfAbandoned?: boolean },
): { status: Exclude<StreamStatus, "running">; keepMs: number; onlyIfAbandoned: boolean } {
  if (!FINAL_STATUSES.includes(status as never)) {
    throw new ConfigurationError(
      `streams.finish status must be one of ${FINAL_STATUSES.join(", ")}, got ${typeof status === "string" ? quoted(status, 40) : String(status)}`,
    );
  }
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError("streams.finish needs options { keepMs, onlyIfAbandoned? }");
  return {
    status: status as Exclude<StreamStatus, "running">,
    keepMs: checkMs(options.keepMs, "keepMs", 0),
    onlyIfAbandoned: options.onlyIfAbandoned === true,
  };
}

/** `finishWith`'s arguments, checked as `finish` and `append` check theirs. */
export function checkFinishWith(
  streamId: string,
  chunks: readonly string[],
  status: unknown,
  options: { keepMs: number },
): { status: Exclude<StreamStatus, "running">; keepMs: number } {
  checkStreamId(streamId);
  checkChunks(chunks);
  const { status: checked, keepMs } = checkFinish(status, options);
  return { status: checked, keepMs };
}

export function checkRead(options: StreamReadOptions): { from: number; limit: number | undefined } {
  const from = options?.from;
  if (typeof from !== "number" || !Number.isSafeInteger(from) || from < 0)
    throw new ConfigurationError(`streams.read from must be a non-negative integer, got ${String(from)}`);
  const limit = options.limit;
  if (limit !== undefined && (typeof limit !== "number" || !Number.isSafeInteger(limit) || limit < 1))
    throw new ConfigurationError(`streams.read limit must be a positive integer, got ${String(limit)}`);
  return { from, limit };
}

export function checkFollow(options: StreamFollowOptions | undefined): { from: number; signal?: AbortSignal } {
  const from = options?.from ?? 0;
  if (typeof from !== "number" || !Number.isSafeInteger(from) || from < 0)
    throw new ConfigurationError(`streams.follow from must be a non-negative integer, got ${String(from)}`);
  return { from, ...(options?.signal ? { signal: options.signal } : {}) };
}

/**
 * How a backend stores a chunk: as given, or sealed in the session codec's encryption envelope
 * bound to the store name, the stream id, the position and the owner (so a chunk copied to
 * another stream, position or owner does not open). No plaintext fallback.
 */
export interface ChunkCodec {
  readonly encrypts: boolean;
  seal(streamId: string, position: number, owner: string | undefined, text: string): string;
  open(streamId: string, position: number, owner: string | undefined, text: string): string;
  /**
   * How a durable backend keeps the stream's owner (which only the chunks' encryption needs):
   * nothing without encryption (null), else the owner sealed to the stream (never in plaintext).
   */
  sealOwner(streamId: string, owner: string | undefined): string | null;
  openOwner(streamId: string, stored: string | null | undefined): string | undefined;
}

const IDENTITY: ChunkCodec = {
  encrypts: false,
  seal: (_id, _p, _o, text) => text,
  open: (_id, _p, _o, text) => text,
  sealOwner: () => null,
  openOwner: () => undefined,
};

/** The chunk codec of a store whose session codec is `codec` (encrypting when it exposes `.encryption`). */
export function chunkCodec(codec: SessionCodec | undefined): ChunkCodec {
  const enc = (codec as { encryption?: EncryptionInfo } | undefined)?.encryption;
  if (!enc?.keyring || typeof enc.store !== "string") return IDENTITY;
  // Kind "stream" in the associated data: a chunk never opens as a session or a message row (the
  // envelope writes the kind into the associated data as it is).
  // The sealed owner of a stream binds no position: every chunk binds one.
  const binding = (id: string, position: number | undefined, owner: string | undefined): Binding => ({
    kind: "stream" as Binding["kind"],
    store: enc.store,
    id,
    position,
    owner,
  });
  return {
    encrypts: true,
    seal: (id, position, owner, text) => seal(enc.keyring, binding(id, position, owner), text),
    open(id, position, owner, text) {
      const what = `chunk ${position} of the stream ${quoted(id, 200)}`;
      if (!isEncryptedText(text)) throw new DecryptionError({ reason: "plaintext", what });
      return openEnvelope(enc.keyring, binding(id, position, owner), text, what);
    },
    sealOwner: (id, owner) =>
      owner === undefined ? null : seal(enc.keyring, binding(id, undefined, undefined), owner),
    openOwner(id, stored) {
      if (stored === null || stored === undefined || stored === "") return undefined;
      const what = `the owner of the stream ${quoted(id, 200)}`;
      if (!isEncryptedText(stored)) throw new DecryptionError({ reason: "plaintext", what });
      return openEnvelope(enc.keyring, binding(id, undefined, undefined), stored, what);
    },
  };
}

/**
 * Resolves after `ms`, or at once when `signal` aborts. Returns a cancel function's promise pair:
 * callers race it against their own wakeup.
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * In-process wakeups by key: a follower waits on `wait(key)`, a writer in the same process calls
 * `wake(key)` after each append or finish. Backends that see other processes' writes some other way
 * (NOTIFY, XREAD, polling) use it only to skip the wait for their own process's writes.
 */
export class Wakeups {
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Resolves on the next `wake(key)`, after `ms`, or when `signal` aborts, whichever comes first. */
  wait(key: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        const waiting = this.waiters.get(key);
        if (waiting) {
          waiting.delete(done);
          if (waiting.size === 0) this.waiters.delete(key);
        }
        resolve();
      };
      set.add(done);
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /**
   * Registers a waiter now, to await later: a `wake(key)` that comes between `arm` and `wait` (while
   * the follower reads) is not lost. `cancel` when not waiting after all.
   */
  arm(key: string, signal?: AbortSignal): { wait(ms: number): Promise<void>; cancel(): void } {
    let woken = false;
    /** The pending wait's settle, while one is pending. */
    let onWake: (() => void) | undefined;
    const wake = () => {
      if (woken) return;
      woken = true;
      const set = this.waiters.get(key);
      if (set) {
        set.delete(wake);
        if (set.size === 0) this.waiters.delete(key);
      }
      const settle = onWake;
      onWake = undefined;
      settle?.();
    };
    let set = this.waiters.get(key);
    if (!set) this.waiters.set(key, (set = new Set()));
    set.add(wake);
    return {
      wait: (ms: number) =>
        new Promise<void>((resolve) => {
          if (woken || signal?.aborted) {
            wake();
            return resolve();
          }
          const settle = () => {
            onWake = undefined;
            clearTimeout(timer);
            signal?.removeEventListener("abort", settle);
            wake();
            resolve();
          };
          onWake = settle;
          const timer = setTimeout(settle, Math.max(0, ms));
          signal?.addEventListener("abort", settle, { once: true });
        }),
      cancel: wake,
    };
  }

  wake(key: string): void {
    const set = this.waiters.get(key);
    if (!set) return;
    for (const done of [...set]) done();
  }

  wakeAll(): void {
    for (const key of [...this.waiters.keys()]) this.wake(key);
  }
}
