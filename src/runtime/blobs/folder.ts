/**
 * Blobs in a folder on disk (`blobs: { url: "file:///srv/blobs" }`), one file per blob:
 *
 *   <root>/<sha256(owner)>/owner            the owner (as stored: a keyed form when encrypting)
 *   <root>/<sha256(owner)>/uploads/<id>     a put in progress: chunks appended as they come
 *   <root>/<sha256(owner)>/blobs/<hash>     a blob: its chunks, then a trailer (JSON: size, layout,
 *                                           upload id, creation time, description), its length
 *                                           (4 bytes, big-endian) and "SBLB"
 *
 * A put appends to its upload file, writes the trailer, flushes the file to disk and links it to
 * `blobs/<hash>` in one step (`link` fails when the name exists: a concurrent put of the same bytes
 * won, and this one is dropped). A put killed at any point leaves at most a file in `uploads/`,
 * never a partial blob; sweeps remove such files once older than their grace window. The time a
 * blob was last put is its file's modification time. A read keeps its file open, so a blob deleted
 * meanwhile still reads whole.
 *
 * Budgets are checked in this process under a lock per folder; two processes writing one folder
 * at the same instant may pass a budget together (by at most one blob each). The other backends
 * check it atomically.
 */
import { createHash } from "node:crypto";
import {
  type FileHandle,
  link,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join, resolve } from "node:path";
import { ConfigurationError } from "../core/errors.js";
import { BlobCorruptError, type BlobLimits, type BlobUsage } from "./blob-store.js";
import {
  type BlobBackend,
  type BlobBudgetCheck,
  type BlobNames,
  type BlobRecord,
  type BlobSealer,
  type BlobUpload,
  BlobUploadLostError,
  ChunkedBlobStore,
  locked,
  checkBudgets,
  compareKeys,
  newUploadId,
} from "./chunked.js";

const MAGIC = Buffer.from("SBLB");
const FOOTER = 8;
const MAX_TRAILER = 64 * 1024;
/** Bytes read from a blob file's end to find its trailer (a trailer is a few hundred bytes). */
const TAIL_READ = 4096;
/** Chunks read from the file at once. */
const READ_BATCH = 8;

interface Trailer {
  v: 1;
  size: number;
  uploadId: string;
  chunkSize: number;
  chunks: number;
  stride: number;
  createdAt: number;
  meta: string;
}

function isMissing(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "ENOENT";
}

function dirOf(owner: string): string {
  return createHash("sha256").update(owner).digest("hex");
}

/** A stored hash as a file name: itself when it is a safe name, else its SHA-256 (kept in the trailer's record). */
function fileOf(hash: string): string {
  return /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(hash)
    ? hash
    : `h-${createHash("sha256").update(hash).digest("hex")}`;
}

export class FolderBlobBackend implements BlobBackend {
  readonly root: string;

  constructor(root: string) {
    if (typeof root !== "string" || root === "") throw new ConfigurationError("a blob folder needs a path");
    this.root = resolve(root);
  }

  #owner(owner: string): string {
    return join(this.root, dirOf(owner));
  }

  #blob(owner: string, hash: string): string {
    return join(this.#owner(owner), "blobs", fileOf(hash));
  }

  #upload(owner: string, uploadId: string): string {
    return join(this.#owner(owner), "uploads", uploadId);
  }

  /** Owner folders this process has made (and not erased): a put skips making them again. */
  readonly #prepared = new Set<string>();

  async #prepare(owner: string): Promise<void> {
    const dir = this.#owner(owner);
    await mkdir(join(dir, "uploads"), { recursive: true });
    await mkdir(join(dir, "blobs"), { recursive: true });
    await writeFile(join(dir, "owner"), owner, { flag: "w" });
    this.#prepared.add(owner);
  }

  async begin(owner: string, uploadId: string): Promise<BlobUpload> {
    if (!this.#prepared.has(owner)) await this.#prepare(owner);
    const path = this.#upload(owner, uploadId);
    let file: FileHandle;
    try {
      file = await open(path, "wx");
    } catch (error) {
      if (!isMissing(error)) throw error;
      await this.#prepare(owner); // erased by another process since
      file = await open(path, "wx");
    }
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await file.close();
    };
    return {
      write: async (_index, bytes) => {
        await file.write(bytes);
      },
      finish: close,
      abort: async () => {
        await close().catch(() => {});
        await rm(path, { force: true });
      },
    };
  }

  commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }> {
    return locked(this.root, async () => {
      const final = this.#blob(record.owner, record.hash);
      const existing = await this.#touch(final, check.now, record.owner, record.hash);
      if (existing) return { record: existing, created: false };
      const upload = this.#upload(record.owner, record.uploadId);
      await this.#finishFile(upload, record);
      checkBudgets(
        check,
        record.size,
        check.maxBytesPerOwner === undefined ? { blobs: 0, bytes: 0 } : await this.usage(record.owner),
        check.maxBytes === undefined ? { blobs: 0, bytes: 0 } : await this.usage(null),
      );
      const at = new Date(record.touchedAt);
      await utimes(upload, at, at);
      try {
        await link(upload, final);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "EEXIST") throw error;
        const winner = await this.#touch(final, check.now, record.owner, record.hash);
        if (winner) return { record: winner, created: false };
        throw error;
      }
      await unlink(upload);
      return { record, created: true };
    });
  }

  /** Appends the trailer of `record` to its upload file and flushes it to disk. */
  async #finishFile(upload: string, record: BlobRecord): Promise<void> {
    const trailer: Trailer = {
      v: 1,
      size: record.size,
      uploadId: record.uploadId,
      chunkSize: record.chunkSize,
      chunks: record.chunks,
      stride: record.stride,
      createdAt: record.createdAt,
      meta: Buffer.from(record.meta).toString("base64"),
    };
    const body = Buffer.from(JSON.stringify(trailer));
    const footer = Buffer.alloc(FOOTER);
    footer.writeUInt32BE(body.length, 0);
    MAGIC.copy(footer, 4);
    let file: FileHandle;
    try {
      file = await open(upload, "a");
    } catch (error) {
      if (isMissing(error)) throw new BlobUploadLostError();
      throw error;
    }
    try {
      await file.write(Buffer.concat([body, footer]));
      await file.sync();
    } finally {
      await file.close();
    }
  }

  /**
   * Under the folder's lock (as commits, deletes and erasures in this process): the blob file is
   * checked to be the one read, the new upload finished with the old times, then renamed over it in
   * one step (or, under another owner or hash form, linked to its name: a file already there is
   * kept and touched, "merged"), and the old file unlinked. A read under way keeps the old file open
   * and finishes it. Across processes the folder is as loose as its budgets (see the module comment).
   */
  swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed"> {
    return locked(this.root, async () => {
      const path = this.#blob(expected.owner, expected.hash);
      const old = await this.#read(path, expected.owner, expected.hash);
      if (!old || old.uploadId !== expected.uploadId) return "changed";
      const upload = this.#upload(next.owner, next.uploadId);
      await this.#finishFile(upload, { ...next, createdAt: old.createdAt });
      const at = new Date(old.touchedAt);
      await utimes(upload, at, at);
      const final = this.#blob(next.owner, next.hash);
      if (final === path) {
        await rename(upload, path);
        return "swapped";
      }
      try {
        await link(upload, final);
      } catch (error) {
        if ((error as { code?: unknown }).code !== "EEXIST") throw error;
        await this.#touch(final, old.touchedAt, next.owner, next.hash);
        await rm(path, { force: true });
        return "merged";
      }
      await unlink(upload);
      await rm(path, { force: true });
      return "swapped";
    });
  }

  /** Sets a blob file's time to `now` (when later) and reads its record; undefined when absent. */
  async #touch(path: string, now: number, owner: string, hash: string): Promise<BlobRecord | undefined> {
    const record = await this.#read(path, owner, hash);
    if (!record) return undefined;
    if (record.touchedAt < now) {
      try {
        const at = new Date(now);
        await utimes(path, at, at);
      } catch (error) {
        if (isMissing(error)) return undefined; // swept meanwhile: the put stores it anew
        throw error;
      }
      record.touchedAt = now;
    }
    return record;
  }

  /** The record of a blob file (undefined when absent). */
  async #read(path: string, owner?: string, hash?: string): Promise<BlobRecord | undefined> {
    let file: FileHandle;
    try {
      file = await open(path, "r");
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    try {
      return (await this.#recordOf(file, path, owner, hash)).record;
    } finally {
      await file.close();
    }
  }

  /** The record in an open blob file, and where its chunks end (its trailer starts). */
  async #recordOf(
    file: FileHandle,
    path: string,
    owner?: string,
    hash?: string,
  ): Promise<{ record: BlobRecord; dataLength: number }> {
    const info = await file.stat();
    const corrupt = (detail: string) => new BlobCorruptError(hash ?? path, path, detail);
    if (info.size < FOOTER) throw corrupt("the file is shorter than its footer");
    // One read of the file's tail: the footer and, almost always, the whole trailer before it.
    const tailLength = Math.min(info.size, TAIL_READ);
    const tail = Buffer.alloc(tailLength);
    await file.read(tail, 0, tailLength, info.size - tailLength);
    const footer = tail.subarray(tailLength - FOOTER);
    const length = footer.readUInt32BE(0);
    if (!footer.subarray(4).equals(MAGIC) || length > MAX_TRAILER || length > info.size - FOOTER)
      throw corrupt("the file does not end with a blob trailer");
    let body: Buffer;
    if (length + FOOTER <= tailLength) body = tail.subarray(tailLength - FOOTER - length, tailLength - FOOTER);
    else {
      body = Buffer.alloc(length);
      await file.read(body, 0, length, info.size - FOOTER - length);
    }
    let trailer: Trailer;
    try {
      trailer = JSON.parse(body.toString("utf8")) as Trailer;
    } catch {
      throw corrupt("its trailer is not JSON");
    }
    if (trailer?.v !== 1 || typeof trailer.meta !== "string") throw corrupt("its trailer is not of version 1");
    const dataLength = info.size - FOOTER - length;
    const expected = trailer.chunks === 0 ? 0 : (trailer.chunks - 1) * trailer.stride;
    if (dataLength < expected) throw corrupt("the file is shorter than its chunks");
    const record: BlobRecord = {
      owner: owner ?? "",
      hash: hash ?? "",
      size: trailer.size,
      uploadId: trailer.uploadId,
      chunkSize: trailer.chunkSize,
      chunks: trailer.chunks,
      stride: trailer.stride,
      meta: Buffer.from(trailer.meta, "base64"),
      createdAt: trailer.createdAt,
      // Rounded, not cut: a time set with utimes (whole milliseconds, passed on as float seconds)
      // can read back a hair below itself, and cut it would lose a millisecond each round trip.
      touchedAt: Math.round(info.mtimeMs),
    };
    return { record, dataLength };
  }

  async record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    return this.#read(this.#blob(owner, hash), owner, hash);
  }

  touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    return locked(this.root, async () => {
      return this.#touch(this.#blob(owner, hash), now, owner, hash);
    });
  }

  async *chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array> {
    let file: FileHandle;
    try {
      file = await open(this.#blob(record.owner, record.hash), "r");
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    try {
      // The file opened may be a blob put again after a delete: it must be the one described.
      const { record: current, dataLength } = await this.#recordOf(file, "", record.owner, record.hash);
      if (current.uploadId !== record.uploadId) return;
      // A few chunks per read (about 2 MiB), handed out one by one.
      for (let batch = from; batch < to; batch += READ_BATCH) {
        const last = Math.min(to, batch + READ_BATCH);
        const start = batch * record.stride;
        const end = last >= record.chunks ? dataLength : last * record.stride;
        const buffer = Buffer.allocUnsafe(end - start);
        const { bytesRead } = await file.read(buffer, 0, buffer.length, start);
        if (bytesRead !== buffer.length) return;
        for (let index = batch; index < last; index++) {
          const at = (index - batch) * record.stride;
          yield buffer.subarray(at, index === record.chunks - 1 ? buffer.length : at + record.stride);
        }
      }
    } finally {
      await file.close();
    }
  }

  async remove(owner: string, hash: string, options: { touchedBefore?: number } = {}): Promise<BlobRecord | undefined> {
    return locked(this.root, async () => {
      const path = this.#blob(owner, hash);
      const record = await this.#read(path, owner, hash);
      if (!record) return undefined;
      if (options.touchedBefore === undefined) {
        await rm(path, { force: true });
        return record;
      }
      if (record.touchedAt >= options.touchedBefore) return undefined;
      // Moved aside first, then checked again: a put of the same bytes from another process that
      // touched it in between finds no file and stores it anew, or is put back here.
      const aside = this.#upload(owner, `${newUploadId()}.swept`);
      try {
        await rename(path, aside);
      } catch (error) {
        if (isMissing(error)) return undefined;
        throw error;
      }
      const moved = await stat(aside);
      if (moved.mtimeMs >= options.touchedBefore) {
        await link(aside, path).catch(() => {});
        await rm(aside, { force: true });
        return undefined;
      }
      await rm(aside, { force: true });
      return record;
    });
  }

  async #owners(): Promise<string[]> {
    let dirs: string[];
    try {
      dirs = await readdir(this.root);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const owners: string[] = [];
    for (const dir of dirs) {
      if (!/^[0-9a-f]{64}$/.test(dir)) continue;
      try {
        owners.push(await readFile(join(this.root, dir, "owner"), "utf8"));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return owners.sort();
  }

  async #hashes(owner: string): Promise<string[]> {
    try {
      return (await readdir(join(this.#owner(owner), "blobs"))).sort();
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }

  async list(
    owner: string | null,
    after: { owner: string; hash: string } | undefined,
    limit: number,
  ): Promise<BlobRecord[]> {
    const owners = owner === null ? await this.#owners() : [owner];
    const out: BlobRecord[] = [];
    for (const each of owners) {
      if (after && each < after.owner) continue;
      for (const name of await this.#hashes(each)) {
        if (after && compareKeys({ owner: each, hash: name }, after) <= 0) continue;
        const record = await this.#read(join(this.#owner(each), "blobs", name), each, name);
        if (!record) continue;
        out.push(record);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  async usage(owner: string | null): Promise<BlobUsage> {
    const usage = { blobs: 0, bytes: 0 };
    for (const each of owner === null ? await this.#owners() : [owner]) {
      for (const name of await this.#hashes(each)) {
        const record = await this.#read(join(this.#owner(each), "blobs", name), each, name);
        if (!record) continue;
        usage.blobs++;
        usage.bytes += record.size;
      }
    }
    return usage;
  }

  eraseOwner(owner: string): Promise<BlobUsage> {
    return locked(this.root, async () => {
      const usage = await this.usage(owner);
      this.#prepared.delete(owner);
      // Renamed away first, so a half-finished erase leaves no half-listed owner behind.
      const dir = this.#owner(owner);
      const aside = join(this.root, `erased-${newUploadId()}`);
      try {
        await rename(dir, aside);
      } catch (error) {
        if (isMissing(error)) return usage;
        throw error;
      }
      await rm(aside, { recursive: true, force: true });
      return usage;
    });
  }

  async purgeUploads(owner: string | null, before: number): Promise<number> {
    let purged = 0;
    for (const each of owner === null ? await this.#owners() : [owner]) {
      const dir = join(this.#owner(each), "uploads");
      let names: string[];
      try {
        names = await readdir(dir);
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      for (const name of names) {
        const path = join(dir, name);
        try {
          if ((await stat(path)).mtimeMs < before) {
            await rm(path, { force: true });
            purged++;
          }
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
    }
    // Erases interrupted half-way.
    for (const name of await readdir(this.root).catch(() => [] as string[]))
      if (name.startsWith("erased-")) await rm(join(this.root, name), { recursive: true, force: true });
    return purged;
  }

  async close(): Promise<void> {}
}

export interface FolderBlobStoreOptions {
  /** The folder (created when missing). */
  path: string;
  limits?: BlobLimits;
  chunkSize?: number;
  /** Seals chunks and descriptions (an encrypting store passes its keyring's sealer). */
  sealer?: BlobSealer;
  /** How owners and hashes are kept (an encrypting store passes keyed forms). */
  names?: BlobNames;
}

/** A blob store in a folder on disk (see the module comment for the layout). */
export function folderBlobStore(options: FolderBlobStoreOptions): ChunkedBlobStore {
  const backend = new FolderBlobBackend(options.path);
  return new ChunkedBlobStore({ ...options, backend, where: `folder ${backend.root}` });
}
