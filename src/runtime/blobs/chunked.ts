/**
 * The blob store every backend shares: chunking, hashing while streaming, budgets, sealing
 * (encryption), verified and ranged reads, sweeps. A backend (memory, folder, SQLite, PostgreSQL,
 * Redis, S3) only keeps records and chunks (`BlobBackend`).
 *
 * How a put becomes visible atomically: its chunks are written under a fresh upload id nobody
 * knows, and only then is the record `(owner, hash) -> upload id` committed (one transaction, one
 * script, one rename). A put that dies before its commit leaves chunks no record points to; sweeps
 * remove them once older than the grace window. A commit that finds the owner's record already
 * there (the same bytes put before, or concurrently) keeps that one, refreshes its put time (so a
 * sweep spares it) and drops the new chunks.
 *
 * Encryption (`BlobSealer`): every chunk is sealed bound to the owner, the upload id and its
 * index; the record's description (media type, name, size, upload id, chunk layout) is sealed
 * bound to the owner and the hash. A chunk moved to another blob or owner, or a record moved to
 * another owner or hash, fails to open (decryption-failed): never plaintext, never another's bytes.
 */
import { createHash, randomBytes } from "node:crypto";
import { ConfigurationError, StatebagError } from "../core/errors.js";
import {
  BlobBudgetExceededError,
  type BlobContent,
  BlobCorruptError,
  type BlobInfo,
  type BlobLimits,
  BlobNotFoundError,
  type BlobOwnerOptions,
  type BlobPage,
  BlobRangeError,
  type BlobRead,
  type BlobStore,
  type BlobUsage,
  checkBlobHash,
  type GetBlobOptions,
  type ListBlobsOptions,
  type PutBlobOptions,
  type PutBlobResult,
  type SweepBlobsOptions,
} from "./blob-store.js";

/** What a backend keeps per blob. `owner` "" is the namespace of blobs put without an owner. */
export interface BlobRecord {
  owner: string;
  hash: string;
  size: number;
  /** The id the blob's chunks are stored under (random, 22 base64url characters). */
  uploadId: string;
  /** Plaintext bytes per chunk (the last one may be shorter). */
  chunkSize: number;
  /** How many chunks (0 for an empty blob). */
  chunks: number;
  /** Stored bytes per chunk but the last (`chunkSize` plus the sealing overhead): offsets in one-object backends. */
  stride: number;
  /** The description: JSON `{ mediaType, name? }` in plain stores, sealed (with the layout) in encrypting ones. */
  meta: Uint8Array;
  /** Ms since the epoch: first stored, and last put (the sweep's grace window counts from it). */
  createdAt: number;
  touchedAt: number;
}

/** An upload in progress: chunks written in order, then either finished (and committed) or aborted. */
export interface BlobUpload {
  write(index: number, bytes: Uint8Array): Promise<void>;
  /** Every chunk is written (and durable where the backend can tell). */
  finish(): Promise<void>;
  /** Removes the upload's chunks (after a failure, or when the commit found the blob there already). Idempotent. */
  abort(): Promise<void>;
}

export interface BlobBudgetCheck extends BlobLimits {
  /** Now, in ms: the touched time of a dedupe hit. */
  now: number;
}

/** Where blobs are kept. Every method is atomic on its own; the engine never needs more. */
export interface BlobBackend {
  /** Starts an upload under `uploadId` (no record yet). */
  begin(owner: string, uploadId: string, now: number): Promise<BlobUpload>;
  /**
   * Atomically: when `(owner, hash)` has a record, sets its `touchedAt` to `check.now` and returns it
   * (`created: false`); otherwise checks the budgets against what is stored (throwing
   * `BlobBudgetExceededError`) and inserts `record`.
   */
  commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }>;
  record(owner: string, hash: string): Promise<BlobRecord | undefined>;
  /** Sets the record's `touchedAt` to `now` (a put of bytes already stored); returns it, or undefined when absent. */
  touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined>;
  /** The stored chunks `from` to `to` (exclusive) of `record`, in order; fewer when they are gone. */
  chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array>;
  /**
   * Deletes the record and its chunks; with `touchedBefore`, only if the record's `touchedAt` is
   * still before it (checked atomically with the delete). Returns the deleted record.
   */
  remove(owner: string, hash: string, options?: { touchedBefore?: number }): Promise<BlobRecord | undefined>;
  /** Records in `(owner, hash)` order after `after`: one owner's, or (`owner` null) every owner's. */
  list(owner: string | null, after: { owner: string; hash: string } | undefined, limit: number): Promise<BlobRecord[]>;
  /** Blobs and bytes of one owner, or (null) of the store. */
  usage(owner: string | null): Promise<BlobUsage>;
  /** Deletes every record and upload of `owner`; returns the blobs and bytes of the records. */
  eraseOwner(owner: string): Promise<BlobUsage>;
  /** Deletes uploads no record points to that began before `before` (one owner's, or null: all). Returns how many. */
  purgeUploads(owner: string | null, before: number): Promise<number>;
  /**
   * Re-encryption's one step (`reencrypt`), atomic on its own: when the record of
   * `(expected.owner, expected.hash)` still points at `expected.uploadId` (nothing deleted, swept,
   * erased or replaced it since it was read), replaces it by `next`, whose chunks are already
   * written under `next.uploadId` (begun for `next.owner`), and deletes the old upload's chunks.
   * The stored `createdAt` and `touchedAt` are kept (a put meanwhile keeps its refreshed time), not
   * `next`'s. `next` may be under another owner or hash form (the keyed forms of a rotated key):
   * when that key already has a record (the same bytes put under the new form meanwhile), that one
   * is kept, its `touchedAt` raised to the old one's when later, and the old record removed
   * (`"merged"`: the caller drops `next`'s chunks). `"changed"`: the record is not the one read (or
   * gone); nothing was done and the caller drops `next`'s chunks. Throws `BlobUploadLostError` when
   * `next`'s chunks are not all there (swept or erased meanwhile). No budget is checked: the bytes
   * stored stay the same.
   */
  swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed">;
  close(): Promise<void>;
}

/**
 * Seals and opens bytes bound to a context (an encrypting store's keyring, bound to the store as
 * well). `open` throws a coded decryption-failed error when the bytes were changed, sealed under
 * another context or with a key the keyring lacks. Sealing adds the same number of bytes to
 * every input of one put (`stride` relies on it).
 */
export interface BlobSealer {
  seal(plain: Uint8Array, context: readonly string[]): Uint8Array;
  open(sealed: Uint8Array, context: readonly string[], what: string): Uint8Array;
  /** The error for a record whose plaintext fields disagree with its sealed description (changed or moved). */
  tampered(what: string): Error;
  /**
   * Whether `sealed` was sealed under the key `seal` uses now (a re-encryption rewrites the others).
   * A sealer without it has one key: everything is current.
   */
  isCurrent?(sealed: Uint8Array): boolean;
}

/**
 * How owners and hashes are written to the backend. An encrypting store keeps neither in
 * plaintext (an owner id is personal; a hash would confirm who holds a known file): it writes
 * deterministic, keyed forms (the same value, the same form, so lookups work by equality) and
 * reads them back. `""` (no owner) is always written as `""`.
 */
export interface BlobNames {
  owner(owner: string): string;
  readOwner(stored: string): string;
  hash(hash: string): string;
  readHash(stored: string): string;
  /**
   * The other stored forms the same owner may have in records written before (its plaintext, its
   * form under the keyring's other keys, until a re-encryption moves them): an erasure erases them too.
   */
  otherOwners?(owner: string): string[];
}

const PLAIN_NAMES: BlobNames = {
  owner: (owner) => owner,
  readOwner: (stored) => stored,
  hash: (hash) => hash,
  readHash: (stored) => stored,
};

export interface ChunkedBlobStoreOptions {
  backend: BlobBackend;
  /** Where the blobs are, safe to show (a store URL with any password redacted). */
  where: string;
  limits?: BlobLimits;
  /** Plaintext bytes per stored chunk (default 256 KiB; 1 KiB to 16 MiB). */
  chunkSize?: number;
  sealer?: BlobSealer;
  /** How owners and hashes are stored (default: as they are). */
  names?: BlobNames;
  /** The clock (ms since the epoch); tests move it. */
  now?: () => number;
}

/** Throws `BlobBudgetExceededError` when `size` more bytes do not fit, given what the owner and the store hold. */
export function checkBudgets(check: BlobBudgetCheck, size: number, owner: BlobUsage, store: BlobUsage): void {
  if (check.maxBytesPerOwner !== undefined && owner.bytes + size > check.maxBytesPerOwner)
    throw new BlobBudgetExceededError("owner", check.maxBytesPerOwner, owner.bytes, size);
  if (check.maxBytes !== undefined && store.bytes + size > check.maxBytes)
    throw new BlobBudgetExceededError("store", check.maxBytes, store.bytes, size);
}

/** Compares `(owner, hash)` keys as the backends order them (code units, owner first). */
export function compareKeys(a: { owner: string; hash: string }, b: { owner: string; hash: string }): number {
  if (a.owner !== b.owner) return a.owner < b.owner ? -1 : 1;
  return a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0;
}

/** A commit found its upload's chunks gone: a sweep removed them (the put took longer than its grace window). */
export class BlobUploadLostError extends StatebagError {
  constructor() {
    super("blob-not-found", "the blob's upload was removed before it completed; nothing was stored", {
      hint: "put it again; if it keeps happening, give blobs.sweep a graceMs longer than your slowest upload",
    });
  }
}

const locks = new Map<string, Promise<unknown>>();

/**
 * Runs `fn` after every earlier call with the same `key` in this process has settled: the folder
 * and S3 backends serialize their commits and deletes with it (one folder, one blob's key).
 */
export function locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const before = locks.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.catch(() => {});
  locks.set(key, tail);
  void tail.then(() => {
    if (locks.get(key) === tail) locks.delete(key);
  });
  return run;
}

export interface BlobReencryptOptions {
  /** Count what would be rewritten; write nothing. */
  dryRun?: boolean;
  /** Stops between blobs (the report says `aborted`; its `cursor` resumes). */
  signal?: AbortSignal;
  /** Go on after this `cursor` (of a report or a progress). */
  startAfter?: string;
  onProgress?: (progress: BlobReencryptProgress) => void;
  /** Attempts on a blob the application keeps changing before it is a failure (default 10). */
  maxRetries?: number;
  /** Failures listed (all are counted). Default 1000. */
  maxReportedFailures?: number;
  /**
   * Also seal blobs stored before the store encrypted (a plain description and chunks, checked
   * against their hash): `migrate --encrypt`. Without it such a blob is a failure.
   */
  acceptPlaintext?: boolean;
}

export interface BlobReencryptProgress {
  scanned: number;
  rewritten: number;
  failed: number;
  /** Every blob up to here is done: pass it as `startAfter` to resume. */
  cursor: string;
}

/** A blob left as it was: named by its owner (absent: no owner, or an owner that does not read) and hash; never its bytes. */
export interface BlobReencryptFailure {
  owner?: string;
  hash?: string;
  message: string;
  code?: string;
}

export interface BlobReencryptReport {
  /** Blobs looked at. */
  scanned: number;
  /** Blobs rewritten under the current key and forms (dry run: that would be). */
  rewritten: number;
  /** Blobs already under the current key and forms. */
  current: number;
  /** Blobs deleted (swept, erased) while being rewritten: nothing to do. */
  vanished: number;
  /** Blobs changed by the application while being rewritten (then read again). */
  conflicts: number;
  /** Blobs that could not be opened (a changed chunk, a key the keyring lacks), left as they are. */
  failed: number;
  failures: BlobReencryptFailure[];
  aborted: boolean;
  /** Where the run stopped (or ended): `startAfter` for the next. */
  cursor?: string;
}

function writeCursor(key: { owner: string; hash: string }): string {
  return Buffer.from(JSON.stringify([key.owner, key.hash]), "utf8").toString("base64url");
}

function readCursor(cursor: unknown): { owner: string; hash: string } {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(String(cursor), "base64url").toString("utf8"));
    if (Array.isArray(parsed) && typeof parsed[0] === "string" && typeof parsed[1] === "string")
      return { owner: parsed[0], hash: parsed[1] };
  } catch {}
  throw new ConfigurationError("blobs.reencrypt: startAfter must be the `cursor` of an earlier run");
}

/** The description of a blob stored by a plain store (JSON `{ mediaType, name? }`). */
function plainDescription(meta: Uint8Array, hash: string, where: string): BlobDescription {
  let parsed: Partial<BlobDescription> | undefined;
  try {
    parsed = JSON.parse(decoder.decode(meta)) as Partial<BlobDescription>;
  } catch {}
  if (typeof parsed !== "object" || parsed === null || typeof parsed.mediaType !== "string")
    throw new BlobCorruptError(hash, where, "its stored description is not valid JSON with a media type");
  return typeof parsed.name === "string"
    ? { mediaType: parsed.mediaType, name: parsed.name }
    : { mediaType: parsed.mediaType };
}

/** A blob that does not open (to report and leave), as opposed to a failing backend (to stop on). */
function isBlobFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return code === "decryption-failed" || code === "blob-corrupt";
}

export const DEFAULT_CHUNK_SIZE = 256 * 1024;
const DEFAULT_GRACE_MS = 60 * 60 * 1000;
const MAX_MEDIA_TYPE = 255;
const MAX_NAME = 1024;
const EMPTY = new Uint8Array(0);
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(?:\s*;[^\r\n]*)?$/;

interface BlobDescription {
  mediaType: string;
  name?: string;
}

interface SealedDescription extends BlobDescription {
  size: number;
  uploadId: string;
  chunkSize: number;
  chunks: number;
  stride: number;
}

function ownerKey(owner: unknown, where: string): string {
  if (owner === undefined) return "";
  if (typeof owner !== "string" || owner.length > 1024)
    throw new ConfigurationError(`${where}: owner must be a string of at most 1,024 characters`);
  return owner;
}

function ownerOf(key: string): string | undefined {
  return key === "" ? undefined : key;
}

function checkLimit(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
    throw new ConfigurationError(`blob ${name} must be a whole number of bytes (0 or more), got ${String(value)}`);
  return value;
}

/** Limits checked and copied. */
export function blobLimits(limits: BlobLimits | undefined): BlobLimits {
  const maxBytes = checkLimit(limits?.maxBytes, "maxBytes");
  const maxBytesPerOwner = checkLimit(limits?.maxBytesPerOwner, "maxBytesPerOwner");
  return {
    ...(maxBytes === undefined ? {} : { maxBytes }),
    ...(maxBytesPerOwner === undefined ? {} : { maxBytesPerOwner }),
  };
}

/** A fresh upload id: 16 random bytes, base64url. */
export function newUploadId(): string {
  return randomBytes(16).toString("base64url");
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

async function* pieces(content: BlobContent, signal: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
  signal?.throwIfAborted();
  if (content instanceof Uint8Array) {
    yield content;
    return;
  }
  if (typeof (content as ReadableStream<Uint8Array>)?.getReader === "function") {
    const reader = (content as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        signal?.throwIfAborted();
        yield checkPiece(value);
      }
    } finally {
      await reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
  if (content === null || typeof content !== "object" || !(Symbol.asyncIterator in content))
    throw new ConfigurationError(
      "blobs.put: content must be a Uint8Array, a ReadableStream of Uint8Array or an async iterable of Uint8Array",
      "wrap text with new TextEncoder().encode(text); pass a Node stream or a fetch body as it is",
    );
  for await (const value of content as AsyncIterable<Uint8Array>) {
    signal?.throwIfAborted();
    yield checkPiece(value);
  }
}

function checkPiece(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw new ConfigurationError(
    `blobs.put: the content stream gave ${typeof value === "string" ? "a string" : typeof value}, not a Uint8Array`,
    "stream bytes (a Node stream without an encoding set, or a fetch body)",
  );
}

export class ChunkedBlobStore implements BlobStore {
  readonly limits: Readonly<BlobLimits>;
  readonly #backend: BlobBackend;
  readonly #where: string;
  readonly #chunkSize: number;
  readonly #sealer: BlobSealer | undefined;
  readonly #names: BlobNames;
  readonly #now: () => number;

  constructor(options: ChunkedBlobStoreOptions) {
    this.#backend = options.backend;
    this.#where = options.where;
    this.limits = Object.freeze(blobLimits(options.limits));
    const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (!Number.isSafeInteger(chunkSize) || chunkSize < 1024 || chunkSize > 16 * 1024 * 1024)
      throw new ConfigurationError(`blob chunkSize must be a whole number from 1,024 to 16 MiB, got ${chunkSize}`);
    this.#chunkSize = chunkSize;
    this.#sealer = options.sealer;
    this.#names = options.names ?? PLAIN_NAMES;
    this.#now = options.now ?? Date.now;
  }

  async put(content: BlobContent, options: PutBlobOptions): Promise<PutBlobResult> {
    if (typeof options !== "object" || options === null)
      throw new ConfigurationError("blobs.put needs options: { mediaType, owner?, name? }");
    const owner = ownerKey(options.owner, "blobs.put");
    const stored = this.#storedOwner(owner);
    const description = describe(options);
    const expected = options.size;
    if (expected !== undefined && (!Number.isSafeInteger(expected) || expected < 0))
      throw new ConfigurationError(`blobs.put: size must be a whole number of bytes, got ${String(expected)}`);
    const { maxBytes, maxBytesPerOwner } = this.limits;
    const ownerUsed = maxBytesPerOwner === undefined ? 0 : (await this.#backend.usage(stored)).bytes;
    const storeUsed = maxBytes === undefined ? 0 : (await this.#backend.usage(null)).bytes;
    // Early refusals: a declared size over the budget, or the bytes read so far. The commit checks
    // again atomically (a dedupe hit adds nothing and always passes there).
    const overBudget = (size: number): BlobBudgetExceededError | undefined => {
      if (maxBytesPerOwner !== undefined && ownerUsed + size > maxBytesPerOwner)
        return new BlobBudgetExceededError("owner", maxBytesPerOwner, ownerUsed, size);
      if (maxBytes !== undefined && storeUsed + size > maxBytes)
        return new BlobBudgetExceededError("store", maxBytes, storeUsed, size);
      return undefined;
    };
    if (expected !== undefined) {
      const refused = overBudget(expected);
      if (refused) throw refused;
    }
    const uploadId = newUploadId();
    const started = this.#now();
    const upload = await this.#backend.begin(stored, uploadId, started);
    let finished = false;
    const chunkSize = this.#chunkSize;
    const sealer = this.#sealer;
    try {
      const hasher = createHash("sha256");
      let buffer = new Uint8Array(chunkSize);
      let fill = 0;
      let index = 0;
      let total = 0;
      let stride = chunkSize;
      let refused: BlobBudgetExceededError | undefined;
      const flush = async (bytes: Uint8Array) => {
        hasher.update(bytes);
        const written = sealer ? sealer.seal(bytes, ["blob-chunk", owner, uploadId, String(index)]) : bytes;
        if (index === 0) stride = written.length;
        await upload.write(index, written);
        index++;
      };
      for await (const piece of pieces(content, options.signal)) {
        total += piece.length;
        if (expected !== undefined && total > expected)
          throw new ConfigurationError(
            `blobs.put: the content is longer than the declared size of ${expected} bytes; nothing was stored`,
          );
        if (refused === undefined) {
          // Over the budget: stop storing (the upload goes now), keep hashing. Stored bytes the
          // owner puts again are found at the end and are no refusal; new bytes are.
          refused = overBudget(total);
          if (refused) {
            await upload.abort();
            hasher.update(buffer.subarray(0, fill)); // read but not yet hashed
            fill = 0;
          }
        }
        if (refused) {
          hasher.update(piece);
          continue;
        }
        let offset = 0;
        while (offset < piece.length) {
          const take = Math.min(chunkSize - fill, piece.length - offset);
          buffer.set(piece.subarray(offset, offset + take), fill);
          fill += take;
          offset += take;
          if (fill === chunkSize) {
            const full = buffer;
            buffer = new Uint8Array(chunkSize);
            fill = 0;
            await flush(full);
          }
        }
      }
      if (fill > 0 && !refused) await flush(buffer.subarray(0, fill));
      options.signal?.throwIfAborted();
      if (expected !== undefined && total !== expected)
        throw new ConfigurationError(
          `blobs.put: the content ended after ${total} bytes, not the declared ${expected}; nothing was stored`,
        );
      const hash = hasher.digest("hex");
      const now = this.#now();
      if (refused) {
        const existing = await this.#backend.touch(stored, this.#names.hash(hash), now);
        if (existing) return { ...this.#info(existing, owner, hash), created: false };
        throw refused;
      }
      await upload.finish();
      const record: BlobRecord = {
        owner: stored,
        hash: this.#names.hash(hash),
        size: total,
        uploadId,
        chunkSize,
        chunks: index,
        stride: index === 0 ? chunkSize : stride,
        meta: EMPTY,
        createdAt: now,
        touchedAt: now,
      };
      record.meta = this.#sealMeta(record, owner, hash, description);
      const committed = await this.#backend.commit(record, { ...this.limits, now });
      // Past the commit the chunks are the blob's (or, for a blob stored before, dropped here).
      finished = true;
      if (!committed.created) await upload.abort();
      const info = this.#info(committed.record, owner, hash);
      return { ...info, created: committed.created };
    } catch (error) {
      if (!finished) await upload.abort().catch(() => {});
      throw error;
    }
  }

  async stat(hash: string, options: BlobOwnerOptions = {}): Promise<BlobInfo | undefined> {
    checkBlobHash(hash, "blobs.stat");
    const owner = ownerKey(options.owner, "blobs.stat");
    const record = await this.#record(owner, hash);
    return record && this.#info(record, owner, hash);
  }

  async has(hash: string, options: BlobOwnerOptions = {}): Promise<boolean> {
    checkBlobHash(hash, "blobs.has");
    return (await this.#record(ownerKey(options.owner, "blobs.has"), hash)) !== undefined;
  }

  async get(hash: string, options: GetBlobOptions = {}): Promise<BlobRead | undefined> {
    checkBlobHash(hash, "blobs.get");
    const owner = ownerKey(options.owner, "blobs.get");
    const record = await this.#record(owner, hash);
    if (!record) return undefined;
    const info = this.#info(record, owner, hash);
    let start = 0;
    let end = record.size;
    const range = options.range;
    if (range !== undefined) {
      const { start: from, end: to } = range;
      if (!Number.isSafeInteger(from) || from < 0 || (to !== undefined && (!Number.isSafeInteger(to) || to < from)))
        throw new ConfigurationError(
          `blobs.get: range must be { start, end? } whole numbers with start <= end, got ${JSON.stringify(range)}`,
        );
      if (from >= record.size && !(from === 0 && record.size === 0)) throw new BlobRangeError(hash, record.size, range);
      start = from;
      end = Math.min(to ?? record.size, record.size);
    }
    const full = start === 0 && end === record.size;
    const { chunkSize } = record;
    const first = Math.floor(start / chunkSize);
    const last = end === start ? first : Math.ceil(end / chunkSize);
    let source = this.#backend.chunks(record, first, last)[Symbol.asyncIterator]();
    /** The record whose chunks are read: another upload of the same blob once a re-encryption replaced it. */
    let reading = record;
    let switches = 0;
    // A plain store's whole read is checked against the hash. A sealed one needs no second check:
    // each chunk is authenticated for its owner, upload and index, and the sealed description binds
    // the upload, size and chunk count to the hash, so the bytes can only be those the writer hashed.
    const hasher = full && !this.#sealer ? createHash("sha256") : undefined;
    const sealer = this.#sealer;
    const where = this.#where;
    let index = first;
    let held: Uint8Array | undefined;
    const step = async (controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> => {
      for (;;) {
        if (index >= last) {
          if (hasher && hasher.digest("hex") !== hash)
            throw new BlobCorruptError(hash, where, "its bytes do not hash to its name");
          if (held && held.length > 0) controller.enqueue(held);
          held = undefined;
          await source.return?.(); // the backend's reader is done: let it close its file or statement
          controller.close();
          return;
        }
        const next = await source.next();
        if (next.done) {
          // The chunks went: deleted, or replaced by a re-encryption (`reencrypt`) under another
          // upload of the same bytes. The read goes on from that upload's chunk when there is one.
          const replaced = switches < 3 ? await this.#replacement(reading, owner, hash) : undefined;
          if (!replaced) throw new BlobNotFoundError(hash);
          switches++;
          await source.return?.().catch(() => {});
          reading = replaced;
          source = this.#backend.chunks(replaced, index, last)[Symbol.asyncIterator]();
          continue;
        }
        const stored = next.value;
        const plain = sealer
          ? sealer.open(stored, ["blob-chunk", owner, reading.uploadId, String(index)], `blob ${hash} chunk ${index}`)
          : stored;
        const expectedLength = index === record.chunks - 1 ? record.size - index * chunkSize : chunkSize;
        if (plain.length !== expectedLength)
          throw new BlobCorruptError(hash, where, `chunk ${index} holds ${plain.length} bytes, not ${expectedLength}`);
        hasher?.update(plain);
        const chunkStart = index * chunkSize;
        const slice = plain.subarray(Math.max(0, start - chunkStart), Math.min(plain.length, end - chunkStart));
        index++;
        const out = held;
        held = slice;
        if (out && out.length > 0) {
          controller.enqueue(out);
          return;
        }
      }
    };
    const stream = new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            await step(controller);
          } catch (error) {
            // The backend's reader is let go (its file or statement closed) before the error surfaces.
            await source.return?.().catch(() => {});
            throw error;
          }
        },
        cancel: async () => {
          await source.return?.();
        },
      },
      { highWaterMark: 0 },
    );
    if (options.signal) {
      const signal = options.signal;
      signal.throwIfAborted();
      signal.addEventListener("abort", () => void stream.cancel(signal.reason).catch(() => {}), { once: true });
    }
    return { info, start, end, stream };
  }

  async delete(hash: string, options: BlobOwnerOptions = {}): Promise<boolean> {
    checkBlobHash(hash, "blobs.delete");
    const owner = ownerKey(options.owner, "blobs.delete");
    return (await this.#backend.remove(this.#storedOwner(owner), this.#names.hash(hash))) !== undefined;
  }

  async list(options: ListBlobsOptions = {}): Promise<BlobPage> {
    const owner = ownerKey(options.owner, "blobs.list");
    const limit = options.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
      throw new ConfigurationError(`blobs.list: limit must be a whole number from 1 to 1,000, got ${String(limit)}`);
    const stored = this.#storedOwner(owner);
    let after: { owner: string; hash: string } | undefined;
    if (options.cursor !== undefined) {
      if (typeof options.cursor !== "string" || options.cursor === "" || options.cursor.length > 512)
        throw new ConfigurationError("blobs.list: cursor must be the `cursor` of the page before");
      after = { owner: stored, hash: options.cursor };
    }
    const records = await this.#backend.list(stored, after, limit + 1);
    const page = records.slice(0, limit);
    const items = page.map((record) => this.#info(record, owner, this.#names.readHash(record.hash)));
    const last = page[page.length - 1];
    return records.length > limit && last ? { items, cursor: last.hash } : { items };
  }

  async usage(options: BlobOwnerOptions & { allOwners?: boolean } = {}): Promise<BlobUsage> {
    if (options.allOwners) {
      if (options.owner !== undefined)
        throw new ConfigurationError("blobs.usage: give either owner or allOwners, not both");
      return this.#backend.usage(null);
    }
    return this.#backend.usage(this.#storedOwner(ownerKey(options.owner, "blobs.usage")));
  }

  async eraseOwner(owner: string): Promise<BlobUsage> {
    if (typeof owner !== "string" || owner === "")
      throw new ConfigurationError("blobs.eraseOwner needs the owner (a non-empty string)");
    const key = ownerKey(owner, "blobs.eraseOwner");
    const erased = { ...(await this.#backend.eraseOwner(this.#storedOwner(key))) };
    // Files stored under the owner's earlier forms (before a key rotation's re-encryption moved
    // them, or before the store encrypted) are the same person's: erased too.
    for (const other of new Set(this.#names.otherOwners?.(key) ?? [])) {
      if (other === "" || other === this.#storedOwner(key)) continue;
      const more = await this.#backend.eraseOwner(other);
      erased.blobs += more.blobs;
      erased.bytes += more.bytes;
    }
    return erased;
  }

  async sweep(options: SweepBlobsOptions): Promise<BlobUsage> {
    if (typeof options !== "object" || options === null)
      throw new ConfigurationError("blobs.sweep needs { referenced, owner? | allOwners?, graceMs? }");
    if (options.allOwners && options.owner !== undefined)
      throw new ConfigurationError("blobs.sweep: give either owner or allOwners, not both");
    const scope = options.allOwners ? null : this.#storedOwner(ownerKey(options.owner, "blobs.sweep"));
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
    if (!Number.isSafeInteger(graceMs) || graceMs < 0)
      throw new ConfigurationError(
        `blobs.sweep: graceMs must be a whole number of ms (0 or more), got ${String(graceMs)}`,
      );
    const referenced = options.referenced;
    const isReferenced =
      typeof referenced === "function"
        ? referenced
        : referenced instanceof Set || (referenced && typeof (referenced as ReadonlySet<string>).has === "function")
          ? (hash: string) => (referenced as ReadonlySet<string>).has(hash)
          : undefined;
    if (!isReferenced)
      throw new ConfigurationError(
        "blobs.sweep: referenced must be a Set of hashes or a function (hash, owner) => boolean",
      );
    const cutoff = this.#now() - graceMs;
    const swept: BlobUsage = { blobs: 0, bytes: 0 };
    let after: { owner: string; hash: string } | undefined;
    for (;;) {
      options.signal?.throwIfAborted();
      const page = await this.#backend.list(scope, after, 200);
      for (const record of page) {
        if (record.touchedAt >= cutoff) continue;
        const owner = this.#names.readOwner(record.owner);
        if (await isReferenced(this.#names.readHash(record.hash), ownerOf(owner))) continue;
        const removed = await this.#backend.remove(record.owner, record.hash, { touchedBefore: cutoff });
        if (removed) {
          swept.blobs++;
          swept.bytes += removed.size;
        }
      }
      if (page.length < 200) break;
      const tail = page[page.length - 1] as BlobRecord;
      after = { owner: tail.owner, hash: tail.hash };
    }
    await this.#backend.purgeUploads(scope, cutoff);
    return swept;
  }

  /**
   * Rewrites every blob (of every owner) whose chunks and description are sealed under a key other
   * than the keyring's current one, or whose owner or hash is stored in a keyed form of another key,
   * under the current key and forms: `statebag migrate --reencrypt` runs it after the session rows.
   *
   * Per blob: its chunks are opened and sealed again, in order, into a new upload (nothing else sees
   * it), then `BlobBackend.swap` replaces the record atomically, only if it still points at the
   * upload read, and removes the old chunks. A put of the same bytes meanwhile keeps its refreshed
   * time (the swap keeps the stored times); a delete, sweep or erasure meanwhile makes the swap find
   * the record changed or gone, and the new chunks are dropped (nothing comes back); a read under
   * way goes on from the new upload (`get`). A blob that does not open (a changed chunk, a key the
   * keyring lacks) is a failure, named by owner and hash, and left as it is. A store that does not
   * encrypt its blobs has nothing to rewrite. Resumable (`startAfter` a report's `cursor`; a rerun
   * skips what is current) and abortable between blobs (`signal`).
   */
  async reencrypt(options: BlobReencryptOptions = {}): Promise<BlobReencryptReport> {
    const report: BlobReencryptReport = {
      scanned: 0,
      rewritten: 0,
      current: 0,
      vanished: 0,
      conflicts: 0,
      failed: 0,
      failures: [],
      aborted: false,
    };
    const sealer = this.#sealer;
    if (!sealer) return report;
    const maxReported = options.maxReportedFailures ?? 1000;
    const fail = (failure: BlobReencryptFailure) => {
      report.failed++;
      if (report.failures.length < maxReported) report.failures.push(failure);
    };
    let after = options.startAfter === undefined ? undefined : readCursor(options.startAfter);
    /** Uploads written by this run: a blob moved to a later key (another owner form) is met again there. */
    const written = new Set<string>();
    const PAGE = 100;
    for (;;) {
      if (options.signal?.aborted) {
        report.aborted = true;
        break;
      }
      const page = await this.#backend.list(null, after, PAGE);
      for (const record of page) {
        if (options.signal?.aborted) {
          report.aborted = true;
          return report;
        }
        if (!written.has(record.uploadId)) {
          report.scanned++;
          await this.#reencryptOne(record, sealer, report, fail, written, options);
        }
        after = { owner: record.owner, hash: record.hash };
        report.cursor = writeCursor(after);
        options.onProgress?.({
          scanned: report.scanned,
          rewritten: report.rewritten,
          failed: report.failed,
          cursor: report.cursor,
        });
      }
      if (page.length < PAGE) break;
    }
    return report;
  }

  async #reencryptOne(
    first: BlobRecord,
    sealer: BlobSealer,
    report: BlobReencryptReport,
    fail: (failure: BlobReencryptFailure) => void,
    written: Set<string>,
    options: BlobReencryptOptions,
  ): Promise<void> {
    const maxRetries = options.maxRetries ?? 10;
    let record = first;
    let owner: string | undefined;
    let hash: string | undefined;
    const failed = (error: unknown) =>
      fail({
        ...(owner !== undefined && owner !== "" ? { owner } : {}),
        ...(hash !== undefined ? { hash } : {}),
        message: error instanceof Error ? error.message : String(error),
        ...(error instanceof StatebagError ? { code: error.code } : {}),
      });
    /** The record again after it changed: undefined (counted) when it is gone. */
    const reread = async (): Promise<BlobRecord | undefined> => {
      const again = await this.#backend.record(record.owner, record.hash);
      if (!again) report.vanished++;
      return again;
    };
    for (let attempt = 0; ; attempt++) {
      if (attempt > maxRetries) {
        failed(
          new StatebagError(
            "conflict",
            `the blob changed ${attempt} times while being rewritten; left for the next run`,
          ),
        );
        return;
      }
      let description: BlobDescription;
      // A blob stored before the store encrypted (its description plain JSON): sealed when accepted.
      const plaintext = options.acceptPlaintext === true && record.meta[0] === 0x7b;
      try {
        owner = this.#names.readOwner(record.owner);
        hash = this.#names.readHash(record.hash);
        description = plaintext
          ? plainDescription(record.meta, hash, this.#where)
          : this.#description(record, owner, hash);
      } catch (error) {
        if (!isBlobFailure(error)) throw error;
        failed(error);
        return;
      }
      const storedOwner = this.#storedOwner(owner);
      const storedHash = this.#names.hash(hash);
      if (
        !plaintext &&
        storedOwner === record.owner &&
        storedHash === record.hash &&
        (sealer.isCurrent === undefined || sealer.isCurrent(record.meta))
      ) {
        report.current++;
        return;
      }
      if (options.dryRun) {
        report.rewritten++;
        return;
      }
      const uploadId = newUploadId();
      const upload = await this.#backend.begin(storedOwner, uploadId, this.#now());
      let settled = false;
      try {
        let index = 0;
        let stride = record.chunkSize;
        // Plain chunks are checked against the hash (as a plain store's read does) before they are sealed.
        const hasher = plaintext ? createHash("sha256") : undefined;
        for await (const stored of this.#backend.chunks(record, 0, record.chunks)) {
          const plain = plaintext
            ? stored
            : sealer.open(stored, ["blob-chunk", owner, record.uploadId, String(index)], `blob ${hash} chunk ${index}`);
          hasher?.update(plain);
          const expectedLength =
            index === record.chunks - 1 ? record.size - index * record.chunkSize : record.chunkSize;
          if (plain.length !== expectedLength)
            throw new BlobCorruptError(
              hash,
              this.#where,
              `chunk ${index} holds ${plain.length} bytes, not ${expectedLength}`,
            );
          const sealed = sealer.seal(plain, ["blob-chunk", owner, uploadId, String(index)]);
          if (index === 0) stride = sealed.length;
          await upload.write(index, sealed);
          index++;
        }
        if (index < record.chunks) {
          // Its chunks went while they were read: deleted, swept, erased or rewritten meanwhile.
          settled = true;
          await upload.abort();
          const again = await reread();
          if (!again) return;
          report.conflicts++;
          record = again;
          continue;
        }
        if (hasher && hasher.digest("hex") !== hash)
          throw new BlobCorruptError(hash, this.#where, "its bytes do not hash to its name");
        await upload.finish();
        const next: BlobRecord = { ...record, owner: storedOwner, hash: storedHash, uploadId, stride, meta: EMPTY };
        next.meta = this.#sealMeta(next, owner, hash, description);
        const outcome = await this.#backend.swap(
          { owner: record.owner, hash: record.hash, uploadId: record.uploadId },
          next,
        );
        settled = true;
        if (outcome === "swapped") {
          written.add(uploadId);
          report.rewritten++;
          return;
        }
        await upload.abort();
        if (outcome === "merged") {
          report.rewritten++;
          return;
        }
        const again = await reread();
        if (!again) return;
        report.conflicts++;
        record = again;
      } catch (error) {
        if (!settled) await upload.abort().catch(() => {});
        if (error instanceof BlobUploadLostError) {
          // The new chunks were swept or erased before the swap: look at the blob again.
          const again = await reread();
          if (!again) return;
          report.conflicts++;
          record = again;
          continue;
        }
        if (!isBlobFailure(error)) throw error;
        failed(error);
        return;
      }
    }
  }

  /** Another upload of the same blob that replaced `record` (a re-encryption), or undefined. */
  async #replacement(record: BlobRecord, owner: string, hash: string): Promise<BlobRecord | undefined> {
    const again = await this.#record(owner, hash);
    if (
      !again ||
      again.uploadId === record.uploadId ||
      again.size !== record.size ||
      again.chunkSize !== record.chunkSize ||
      again.chunks !== record.chunks
    )
      return undefined;
    this.#description(again, owner, hash); // its sealed description vouches for its layout
    return again;
  }

  close(): Promise<void> {
    return this.#backend.close();
  }

  #storedOwner(owner: string): string {
    return owner === "" ? "" : this.#names.owner(owner);
  }

  #record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    return this.#backend.record(this.#storedOwner(owner), this.#names.hash(hash));
  }

  #sealMeta(record: BlobRecord, owner: string, hash: string, description: BlobDescription): Uint8Array {
    if (!this.#sealer) return encoder.encode(JSON.stringify(description));
    const sealed: SealedDescription = {
      ...description,
      size: record.size,
      uploadId: record.uploadId,
      chunkSize: record.chunkSize,
      chunks: record.chunks,
      stride: record.stride,
    };
    return this.#sealer.seal(encoder.encode(JSON.stringify(sealed)), ["blob-meta", owner, hash]);
  }

  /** The description of a record found as `owner`'s blob `hash` (plaintext both). */
  #info(record: BlobRecord, owner: string, hash: string): BlobInfo {
    const meta = this.#description(record, owner, hash);
    return {
      hash,
      size: record.size,
      mediaType: meta.mediaType,
      ...(typeof meta.name === "string" ? { name: meta.name } : {}),
      createdAt: new Date(record.createdAt).toISOString(),
    };
  }

  /** The stored description of a record (opened and checked against the record when sealed). */
  #description(record: BlobRecord, owner: string, hash: string): BlobDescription {
    let parsed: unknown;
    try {
      const bytes = this.#sealer
        ? this.#sealer.open(record.meta, ["blob-meta", owner, hash], `the description of blob ${hash}`)
        : record.meta;
      parsed = JSON.parse(decoder.decode(bytes));
    } catch (error) {
      if (this.#sealer && (error as { code?: unknown }).code === "decryption-failed") throw error;
      throw new BlobCorruptError(hash, this.#where, "its stored description is not valid JSON");
    }
    const meta = parsed as Partial<SealedDescription>;
    if (typeof meta !== "object" || meta === null || typeof meta.mediaType !== "string")
      throw new BlobCorruptError(hash, this.#where, "its stored description has no media type");
    if (
      this.#sealer &&
      (meta.size !== record.size ||
        meta.uploadId !== record.uploadId ||
        meta.chunkSize !== record.chunkSize ||
        meta.chunks !== record.chunks ||
        meta.stride !== record.stride)
    )
      throw this.#sealer.tampered(`the record of blob ${hash} (it does not match its sealed description)`);
    return typeof meta.name === "string"
      ? { mediaType: meta.mediaType, name: meta.name }
      : { mediaType: meta.mediaType };
  }
}

function describe(options: PutBlobOptions): BlobDescription {
  const { mediaType, name } = options;
  if (typeof mediaType !== "string" || mediaType.length > MAX_MEDIA_TYPE || !MEDIA_TYPE.test(mediaType))
    throw new ConfigurationError(
      `blobs.put: mediaType must be a media type such as "image/png" (type/subtype, at most ${MAX_MEDIA_TYPE} characters)`,
    );
  if (name !== undefined && (typeof name !== "string" || name.length > MAX_NAME))
    throw new ConfigurationError(`blobs.put: name must be a string of at most ${MAX_NAME} characters`);
  return name === undefined ? { mediaType } : { mediaType, name };
}
