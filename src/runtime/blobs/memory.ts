/**
 * Blobs in memory: the memory session store's `blobs`, and the reference backend the others are
 * checked against. Chunks are kept as written (sealed when the store encrypts); a read holds the
 * chunks it started with, so a delete during a read lets it finish.
 */
import type { BlobLimits, BlobUsage } from "./blob-store.js";
import {
  BlobUploadLostError,
  checkBudgets,
  compareKeys,
  type BlobBackend,
  type BlobBudgetCheck,
  type BlobNames,
  type BlobRecord,
  type BlobSealer,
  type BlobUpload,
  ChunkedBlobStore,
} from "./chunked.js";

interface MemoryUpload {
  owner: string;
  began: number;
  chunks: Uint8Array[];
}

export class MemoryBlobBackend implements BlobBackend {
  readonly #records = new Map<string, Map<string, BlobRecord>>();
  readonly #uploads = new Map<string, MemoryUpload>();

  async begin(owner: string, uploadId: string, now: number): Promise<BlobUpload> {
    const upload: MemoryUpload = { owner, began: now, chunks: [] };
    this.#uploads.set(uploadId, upload);
    return {
      write: async (index, bytes) => {
        upload.chunks[index] = bytes;
      },
      finish: async () => {},
      abort: async () => {
        if (this.#uploads.get(uploadId) === upload) this.#uploads.delete(uploadId);
      },
    };
  }

  async commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }> {
    const existing = this.#records.get(record.owner)?.get(record.hash);
    if (existing) {
      existing.touchedAt = Math.max(existing.touchedAt, check.now);
      return { record: { ...existing }, created: false };
    }
    if (this.#uploads.get(record.uploadId)?.chunks.length !== record.chunks) throw new BlobUploadLostError();
    checkBudgets(check, record.size, this.#usage(record.owner), this.#usage(null));
    let owned = this.#records.get(record.owner);
    if (!owned) {
      owned = new Map();
      this.#records.set(record.owner, owned);
    }
    owned.set(record.hash, { ...record });
    return { record: { ...record }, created: true };
  }

  async record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    const record = this.#records.get(owner)?.get(hash);
    return record && { ...record };
  }

  async touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    const record = this.#records.get(owner)?.get(hash);
    if (!record) return undefined;
    record.touchedAt = Math.max(record.touchedAt, now);
    return { ...record };
  }

  async *chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array> {
    const chunks = this.#uploads.get(record.uploadId)?.chunks;
    if (!chunks) return;
    for (let index = from; index < to; index++) {
      const chunk = chunks[index];
      if (chunk === undefined) return;
      yield chunk;
    }
  }

  async remove(owner: string, hash: string, options: { touchedBefore?: number } = {}): Promise<BlobRecord | undefined> {
    const owned = this.#records.get(owner);
    const record = owned?.get(hash);
    if (!owned || !record) return undefined;
    if (options.touchedBefore !== undefined && record.touchedAt >= options.touchedBefore) return undefined;
    owned.delete(hash);
    if (owned.size === 0) this.#records.delete(owner);
    this.#uploads.delete(record.uploadId);
    return record;
  }

  async swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed"> {
    const owned = this.#records.get(expected.owner);
    const old = owned?.get(expected.hash);
    if (!owned || !old || old.uploadId !== expected.uploadId) return "changed";
    if (this.#uploads.get(next.uploadId)?.chunks.length !== next.chunks) throw new BlobUploadLostError();
    const record = { ...next, createdAt: old.createdAt, touchedAt: old.touchedAt };
    owned.delete(expected.hash);
    if (owned.size === 0) this.#records.delete(expected.owner);
    // A read under way holds the old chunks it started with.
    this.#uploads.delete(old.uploadId);
    let target = this.#records.get(next.owner);
    const there = target?.get(next.hash);
    if (there) {
      there.touchedAt = Math.max(there.touchedAt, old.touchedAt);
      return "merged";
    }
    if (!target) {
      target = new Map();
      this.#records.set(next.owner, target);
    }
    target.set(next.hash, record);
    return "swapped";
  }

  async list(
    owner: string | null,
    after: { owner: string; hash: string } | undefined,
    limit: number,
  ): Promise<BlobRecord[]> {
    const all: BlobRecord[] = [];
    for (const [key, owned] of this.#records) {
      if (owner !== null && key !== owner) continue;
      for (const record of owned.values()) if (!after || compareKeys(record, after) > 0) all.push(record);
    }
    return all
      .sort(compareKeys)
      .slice(0, limit)
      .map((record) => ({ ...record }));
  }

  #usage(owner: string | null): BlobUsage {
    const usage = { blobs: 0, bytes: 0 };
    for (const [key, owned] of this.#records) {
      if (owner !== null && key !== owner) continue;
      for (const record of owned.values()) {
        usage.blobs++;
        usage.bytes += record.size;
      }
    }
    return usage;
  }

  async usage(owner: string | null): Promise<BlobUsage> {
    return this.#usage(owner);
  }

  async eraseOwner(owner: string): Promise<BlobUsage> {
    const usage = this.#usage(owner);
    for (const record of this.#records.get(owner)?.values() ?? []) this.#uploads.delete(record.uploadId);
    this.#records.delete(owner);
    for (const [id, upload] of this.#uploads) if (upload.owner === owner) this.#uploads.delete(id);
    return usage;
  }

  async purgeUploads(owner: string | null, before: number): Promise<number> {
    const pointed = new Set<string>();
    for (const owned of this.#records.values()) for (const record of owned.values()) pointed.add(record.uploadId);
    let purged = 0;
    for (const [id, upload] of this.#uploads) {
      if ((owner === null || upload.owner === owner) && upload.began < before && !pointed.has(id)) {
        this.#uploads.delete(id);
        purged++;
      }
    }
    return purged;
  }

  async close(): Promise<void> {}
}

export interface MemoryBlobStoreOptions {
  limits?: BlobLimits;
  chunkSize?: number;
  /** Seals chunks and descriptions (an encrypting store passes its keyring's sealer). */
  sealer?: BlobSealer;
  /** How owners and hashes are kept (an encrypting store passes keyed forms). */
  names?: BlobNames;
  now?: () => number;
}

/** A blob store kept in this process's memory (lost when it exits). */
export function memoryBlobStore(options: MemoryBlobStoreOptions = {}): ChunkedBlobStore {
  return new ChunkedBlobStore({ ...options, backend: new MemoryBlobBackend(), where: "memory" });
}
