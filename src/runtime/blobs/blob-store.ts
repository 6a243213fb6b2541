/**
 * The blob-store contract: files (images, PDFs, audio) kept once beside the session store, named by
 * the SHA-256 of their bytes, so that a session holds a small reference instead of the bytes.
 *
 * - **Content-addressed, per owner.** A blob is found by `(owner, hash)`. Putting the same bytes
 *   again for the same owner stores nothing new (deduplicated) and returns the stored blob; two
 *   owners putting the same bytes get two blobs (an owner never sees, shares or erases another
 *   owner's bytes, and encryption is bound to the owner and hash). `owner` undefined is the
 *   namespace of blobs put without an owner.
 * - **Streamed.** Content goes in as chunks (a `ReadableStream`, an async iterable or one
 *   `Uint8Array`), hashed while it streams, and comes out as a `ReadableStream`; neither side
 *   holds the whole file (stores keep it in chunks of `chunkSize` bytes, 256 KiB by default).
 * - **Atomic.** A blob is visible only once complete: a put that fails, is aborted or whose process
 *   dies (`kill -9`) leaves nothing another reader can see (its partial chunks are removed by
 *   `sweep`, or expire).
 * - **Verified.** A full read hashes what it returns and errors (`BlobCorruptError`) instead of
 *   ending when the bytes are not the blob's; a range read checks every chunk's size. When the
 *   store encrypts, every chunk is authenticated instead, bound to the owner and the blob (a
 *   changed or moved chunk is `decryption-failed`).
 * - **Budgeted.** `maxBytes` for the whole store and `maxBytesPerOwner` per owner: a put that would
 *   pass either is refused with `BlobBudgetExceededError` and keeps nothing.
 * - **Swept safely.** Blobs have no reference count: `sweep` deletes the blobs its caller says are
 *   unreferenced, except those put (or put again) within `graceMs`, so a put followed by the save
 *   of the session that references it is never lost to a sweep running in between.
 */
import { ConfigurationError, StatebagError } from "../core/errors.js";

/** A stored blob, as `put`, `stat` and `list` describe it. */
export interface BlobInfo {
  /** The SHA-256 of the bytes, 64 lowercase hex digits. */
  hash: string;
  /** The size in bytes. */
  size: number;
  /** The media type given to the first put of these bytes (e.g. `image/png`). */
  mediaType: string;
  /** The file name given to the first put of these bytes, if any. */
  name?: string;
  /** When the blob was first stored (ISO 8601, UTC, millisecond precision). */
  createdAt: string;
}

/** What `put` reads: one byte array, a web stream, or any async iterable of byte chunks (a Node stream). */
export type BlobContent = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface PutBlobOptions {
  /** Whose blob it is (the session's `SessionMeta.owner`). Absent: the blobs of no owner. */
  owner?: string;
  /** The media type, e.g. `image/png` (kept as given; the first put of the bytes sets it). */
  mediaType: string;
  /** A file name to keep with the blob (the first put of the bytes sets it). */
  name?: string;
  /**
   * The size the caller expects (e.g. from `Content-Length`): a put over the budget is refused
   * before reading anything, and one whose bytes end at another size fails and keeps nothing.
   */
  size?: number;
  /** Aborting it fails the put (with the signal's reason) and keeps nothing. */
  signal?: AbortSignal;
}

/** The result of `put`: the stored blob and whether this put stored it (false: the owner had these bytes). */
export interface PutBlobResult extends BlobInfo {
  created: boolean;
}

/** Which bytes `get` returns: `start` (inclusive) to `end` (exclusive, default the blob's size), as `Uint8Array#slice` counts. */
export interface BlobRange {
  start: number;
  end?: number;
}

export interface GetBlobOptions {
  owner?: string;
  /** Only these bytes. A range starting at or past the size (of a non-empty blob) is a `BlobRangeError`; `end` past the size is cut to it. */
  range?: BlobRange;
  /** Aborting it cancels the returned stream. */
  signal?: AbortSignal;
}

/** A blob being read: its description, the byte range returned, and the bytes. */
export interface BlobRead {
  info: BlobInfo;
  /** The first byte returned (0 without a range). */
  start: number;
  /** One past the last byte returned (`info.size` without a range). */
  end: number;
  /**
   * The bytes, read chunk by chunk as the consumer pulls. Errors (never ends early) when the blob
   * is deleted while it is read and the backend cannot finish it (`BlobNotFoundError`), when the
   * bytes are not the blob's (`BlobCorruptError`), or when a chunk fails its authentication
   * (`decryption-failed`).
   */
  stream: ReadableStream<Uint8Array>;
}

export interface BlobOwnerOptions {
  owner?: string;
}

export interface ListBlobsOptions {
  owner?: string;
  /** The `cursor` of the previous page. */
  cursor?: string;
  /** At most this many (default 100, at most 1,000). */
  limit?: number;
}

export interface BlobPage {
  /** In a stable order (by hash, or by its stored form in an encrypting store). */
  items: BlobInfo[];
  /** Pass it back for the next page; absent on the last page. */
  cursor?: string;
}

export interface BlobUsage {
  blobs: number;
  bytes: number;
}

/** Whether a blob is referenced: a set of hashes, or a function asked once per candidate blob. */
export type BlobReferences =
  | ReadonlySet<string>
  | ((hash: string, owner: string | undefined) => boolean | Promise<boolean>);

export interface SweepBlobsOptions {
  /** Whose blobs to sweep. Absent (and `allOwners` unset): the blobs of no owner. */
  owner?: string;
  /** Sweep every owner's blobs (then `owner` must be absent; `referenced` gets each blob's owner). */
  allOwners?: boolean;
  /**
   * The blobs still referenced (by the owner's sessions): every other blob is deleted unless it was
   * put (or put again) within `graceMs`. Build it from the sessions *before* calling `sweep`.
   */
  referenced: BlobReferences;
  /**
   * Blobs put or put again within this many ms are kept whatever `referenced` says (default one
   * hour; at least 0). It must exceed the longest time between a put and the save of the session
   * referencing it. Partial uploads (a put in flight, or one whose process died) older than it are
   * removed too.
   */
  graceMs?: number;
  signal?: AbortSignal;
}

export interface BlobLimits {
  /** Bytes of blobs the whole store may hold (default: no limit). */
  maxBytes?: number;
  /** Bytes of blobs one owner (and the no-owner namespace) may hold (default: no limit). */
  maxBytesPerOwner?: number;
}

/** How a session store keeps its blobs: `openStore(url, { blobs })`, or a store's `blobs` option. */
export interface BlobOptions extends BlobLimits {
  /** Plaintext bytes per stored chunk (default 256 KiB, 1 KiB to 16 MiB). */
  chunkSize?: number;
  /**
   * Keep the blobs elsewhere than in the session store's own backend: a folder
   * (`file:///srv/blobs`) or an S3-compatible bucket (`s3://bucket/prefix?region=...&endpoint=...`).
   * They are encrypted with the store's keyring when the store encrypts.
   */
  url?: string;
}

/**
 * A blob store. Every built-in session store has one as `store.blobs`; `statebag/testing`'s
 * `storeConformance` checks a third-party one (or `skip: { blobs: true }`).
 */
export interface BlobStore {
  /** The budgets the store enforces. */
  readonly limits: Readonly<BlobLimits>;
  /** Stores `content` (streamed, hashed as it goes) unless the owner has these bytes already. */
  put(content: BlobContent, options: PutBlobOptions): Promise<PutBlobResult>;
  /** The blob's bytes (or a range of them) as a stream, or undefined when the owner has no such blob. */
  get(hash: string, options?: GetBlobOptions): Promise<BlobRead | undefined>;
  /** The blob's description, or undefined. */
  stat(hash: string, options?: BlobOwnerOptions): Promise<BlobInfo | undefined>;
  has(hash: string, options?: BlobOwnerOptions): Promise<boolean>;
  /** Deletes the owner's blob; returns whether it was there. A read already under way may finish or fail, never end short. */
  delete(hash: string, options?: BlobOwnerOptions): Promise<boolean>;
  /** One page of the owner's blobs. */
  list(options?: ListBlobsOptions): Promise<BlobPage>;
  /** How many blobs and bytes the owner holds (without `owner`: the blobs of no owner; `allOwners`: the whole store). */
  usage(options?: BlobOwnerOptions & { allOwners?: boolean }): Promise<BlobUsage>;
  /** Deletes every blob of `owner` (and its partial uploads); returns what went. Idempotent. */
  eraseOwner(owner: string): Promise<BlobUsage>;
  /** Deletes unreferenced blobs older than the grace window, and stale partial uploads. Returns what went. */
  sweep(options: SweepBlobsOptions): Promise<BlobUsage>;
  /** Releases what the blob store holds of its own (a store's `close()` calls it). */
  close(): Promise<void>;
}

/** True for a SHA-256 as blobs are named: 64 lowercase hex digits. */
export function isBlobHash(hash: unknown): hash is string {
  return typeof hash === "string" && hash.length === 64 && /^[0-9a-f]{64}$/.test(hash);
}

/** Throws `ConfigurationError` unless `hash` is a blob hash. */
export function checkBlobHash(hash: unknown, where: string): string {
  if (isBlobHash(hash)) return hash;
  throw new ConfigurationError(
    `${where}: a blob hash is 64 lowercase hex digits (a SHA-256), got ${typeof hash === "string" ? `a string of ${hash.length} characters` : typeof hash}`,
    "pass the `hash` a put returned (or a reference content's hash)",
  );
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/** A put would pass the store's or the owner's blob budget. Nothing was kept. */
export class BlobBudgetExceededError extends StatebagError {
  constructor(
    /** Which budget: the whole store's or the owner's. */
    readonly budget: "store" | "owner",
    /** The budget in bytes. */
    readonly limit: number,
    /** What is stored now (for the owner or the store). */
    readonly used: number,
    /** The size of the refused blob, or how much of it had been read when the budget was passed. */
    readonly size: number,
  ) {
    super(
      "blob-budget-exceeded",
      `the blob (${formatBytes(size)}) does not fit the ${budget === "owner" ? "owner's" : "store's"} blob budget of ${formatBytes(limit)} (${formatBytes(used)} used); nothing was stored`,
      {
        hint:
          budget === "owner"
            ? "delete the owner's unreferenced blobs (blobs.sweep, or erase old chats), or raise maxBytesPerOwner"
            : "sweep unreferenced blobs (blobs.sweep), or raise the store's blob maxBytes",
      },
    );
  }
}

/** A blob named by a read (or a stream already under way) is not there (deleted or erased meanwhile). */
export class BlobNotFoundError extends StatebagError {
  constructor(
    readonly hash: string,
    detail = "was deleted while it was being read",
  ) {
    super("blob-not-found", `blob ${hash.slice(0, 12)}… ${detail}; the bytes returned so far are incomplete`, {
      hint: "read it again: a blob deleted by its owner's erasure or a sweep is gone for good",
    });
  }
}

/** The bytes read are not the blob's (wrong size or hash): the backing storage was changed or damaged. */
export class BlobCorruptError extends StatebagError {
  constructor(
    readonly hash: string,
    readonly where: string,
    detail: string,
  ) {
    super("blob-corrupt", `blob ${hash.slice(0, 12)}… in ${where} is corrupt: ${detail}`, {
      hint: "the stored bytes were changed outside statebag; delete the blob and put the file again",
    });
  }
}

/** A range outside the blob (HTTP: 416). */
export class BlobRangeError extends StatebagError {
  constructor(
    readonly hash: string,
    readonly size: number,
    range: BlobRange,
  ) {
    super(
      "blob-range",
      `range ${range.start}-${range.end ?? ""} is outside blob ${hash.slice(0, 12)}… of ${size} bytes`,
      { hint: "ask for a start below the blob's size (stat gives it) and an end after the start" },
    );
  }
}
