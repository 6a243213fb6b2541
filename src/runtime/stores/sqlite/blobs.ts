/**
 * The SQLite store's blobs: `statebag_blobs` (one row per blob) and `statebag_blob_chunks` (its
 * chunks), tables of storage format 4 (sql.ts), behind the shared blob engine (blobs/chunked.ts).
 *
 * Each chunk is written in its own short transaction (a put never holds the write lock while it
 * waits for its content); the blob row is inserted last, in one `BEGIN IMMEDIATE` transaction that
 * also checks the owner's and the store's budgets and that every chunk is still there. Reads take
 * the chunks a few at a time (about 2 MiB per statement), so a large blob never sits in memory.
 */
import type { BlobUsage } from "../../blobs/blob-store.js";
import {
  type BlobBackend,
  type BlobBudgetCheck,
  type BlobRecord,
  type BlobUpload,
  BlobUploadLostError,
  checkBudgets,
} from "../../blobs/chunked.js";
import type { Access, BlobRow, Statements } from "./sql.js";

/** What the blobs use of their store (SqliteSessionStore). */
export interface SqliteBlobHost {
  run<T>(operation: string, access: Access, fn: (s: Statements) => T): Promise<T>;
}

/** Chunks read per statement: the bytes a read holds at most, about `READ_BATCH` x the chunk size. */
const READ_BATCH = 8;

function recordOf(row: BlobRow): BlobRecord {
  return {
    owner: row.owner,
    hash: row.hash,
    size: row.size,
    uploadId: row.upload_id,
    chunkSize: row.chunk_size,
    chunks: row.chunks,
    stride: row.stride,
    meta: row.meta,
    createdAt: row.created_at,
    touchedAt: row.touched_at,
  };
}

function usageOf(row: { blobs: number; bytes: number } | undefined): BlobUsage {
  return { blobs: Number(row?.blobs ?? 0), bytes: Number(row?.bytes ?? 0) };
}

export class SqliteBlobBackend implements BlobBackend {
  constructor(private readonly host: SqliteBlobHost) {}

  async begin(owner: string, uploadId: string, now: number): Promise<BlobUpload> {
    let aborted = false;
    return {
      write: (index, bytes) =>
        this.host.run("blobs.put", "write", (s) => {
          s.blobs.chunk.run(uploadId, index, owner, now, bytes);
        }),
      finish: async () => {},
      abort: async () => {
        if (aborted) return;
        aborted = true;
        await this.host.run("blobs.put", "write", (s) => s.blobs.removeChunks.run(uploadId));
      },
    };
  }

  commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }> {
    return this.host.run("blobs.put", "write", (s) => {
      const existing = s.blobs.get.get(record.owner, record.hash);
      if (existing) {
        s.blobs.touch.run(check.now, record.owner, record.hash);
        return {
          record: { ...recordOf(existing), touchedAt: Math.max(existing.touched_at, check.now) },
          created: false,
        };
      }
      if (Number(s.blobs.chunkCount.get(record.uploadId)?.n ?? 0) !== record.chunks) throw new BlobUploadLostError();
      checkBudgets(
        check,
        record.size,
        check.maxBytesPerOwner === undefined ? { blobs: 0, bytes: 0 } : usageOf(s.blobs.usageOwner.get(record.owner)),
        check.maxBytes === undefined ? { blobs: 0, bytes: 0 } : usageOf(s.blobs.usageAll.get()),
      );
      s.blobs.insert.run(
        record.owner,
        record.hash,
        record.uploadId,
        record.size,
        record.chunkSize,
        record.chunks,
        record.stride,
        record.meta,
        record.createdAt,
        record.touchedAt,
      );
      return { record, created: true };
    });
  }

  async record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    const row = await this.host.run("blobs.get", "read", (s) => s.blobs.get.get(owner, hash));
    return row && recordOf(row);
  }

  touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    return this.host.run("blobs.put", "write", (s) => {
      s.blobs.touch.run(now, owner, hash);
      const row = s.blobs.get.get(owner, hash);
      return row && recordOf(row);
    });
  }

  async *chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array> {
    for (let at = from; at < to; at += READ_BATCH) {
      const end = Math.min(to, at + READ_BATCH);
      const rows = await this.host.run("blobs.get", "read", (s) => s.blobs.chunks.all(record.uploadId, at, end));
      for (const row of rows) yield row.data;
      if (rows.length < end - at) return;
    }
  }

  remove(owner: string, hash: string, options: { touchedBefore?: number } = {}): Promise<BlobRecord | undefined> {
    return this.host.run("blobs.delete", "write", (s) => {
      const row = s.blobs.get.get(owner, hash);
      if (!row) return undefined;
      if (options.touchedBefore !== undefined && row.touched_at >= options.touchedBefore) return undefined;
      s.blobs.remove.run(owner, hash);
      s.blobs.removeChunks.run(row.upload_id);
      return recordOf(row);
    });
  }

  /** One write transaction: the record checked, replaced (or merged into the one under `next`'s key), the old chunks deleted. */
  swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed"> {
    return this.host.run("blobs.reencrypt", "write", (s) => {
      const old = s.blobs.get.get(expected.owner, expected.hash);
      if (!old || old.upload_id !== expected.uploadId) return "changed";
      if (Number(s.blobs.chunkCount.get(next.uploadId)?.n ?? 0) !== next.chunks) throw new BlobUploadLostError();
      s.blobs.remove.run(expected.owner, expected.hash);
      s.blobs.removeChunks.run(old.upload_id);
      if (next.owner !== expected.owner || next.hash !== expected.hash) {
        s.blobs.touch.run(old.touched_at, next.owner, next.hash);
        if (s.blobs.get.get(next.owner, next.hash)) return "merged";
      }
      s.blobs.insert.run(
        next.owner,
        next.hash,
        next.uploadId,
        next.size,
        next.chunkSize,
        next.chunks,
        next.stride,
        next.meta,
        old.created_at,
        old.touched_at,
      );
      return "swapped";
    });
  }

  async list(
    owner: string | null,
    after: { owner: string; hash: string } | undefined,
    limit: number,
  ): Promise<BlobRecord[]> {
    const rows = await this.host.run("blobs.list", "read", (s) =>
      owner === null
        ? s.blobs.listAll.all(after?.owner ?? "", after?.hash ?? "", limit)
        : s.blobs.listOwner.all(owner, after?.hash ?? "", limit),
    );
    return rows.map(recordOf);
  }

  async usage(owner: string | null): Promise<BlobUsage> {
    return usageOf(
      await this.host.run("blobs.usage", "read", (s) =>
        owner === null ? s.blobs.usageAll.get() : s.blobs.usageOwner.get(owner),
      ),
    );
  }

  eraseOwner(owner: string): Promise<BlobUsage> {
    return this.host.run("blobs.eraseOwner", "write", (s) => {
      const usage = usageOf(s.blobs.usageOwner.get(owner));
      s.blobs.eraseChunks.run(owner);
      s.blobs.erase.run(owner);
      return usage;
    });
  }

  purgeUploads(owner: string | null, before: number): Promise<number> {
    return this.host.run("blobs.sweep", "write", (s) =>
      owner === null ? s.blobs.purgeAll.run(before).changes : s.blobs.purgeOwner.run(owner, before).changes,
    );
  }

  async close(): Promise<void> {}
}
