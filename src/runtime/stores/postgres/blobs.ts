/**
 * The PostgreSQL store's blobs: `statebag_blobs` (one row per blob) and `statebag_blob_chunks`
 * (its chunks, bytea), tables of storage format 4 (sql.ts), behind the shared blob engine
 * (blobs/chunked.ts).
 *
 * Each chunk is one INSERT (a put holds no transaction while it waits for its content). The blob
 * row goes in last, in one transaction that takes an advisory lock per owner (and one for the
 * store when it has a budget), so budget checks and dedupe of concurrent puts are exact across
 * processes; it checks that every chunk is still there. Deletes take the row and its chunks in
 * one statement. Reads take the chunks a few at a time (about 2 MiB per statement).
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
import type { PgPoolClient } from "./driver.js";
import { type PostgresStatements, type Row, TRANSACTION } from "./sql.js";

/** What the blobs use of their store (PostgresSessionStore). */
export interface PgBlobHost {
  readonly schema: string;
  readonly sql: PostgresStatements;
  withClient<T>(operation: string, write: boolean, fn: (client: PgPoolClient) => Promise<T>): Promise<T>;
}

const READ_BATCH = 8;

function recordOf(row: Row): BlobRecord {
  return {
    owner: row.owner as string,
    hash: row.hash as string,
    size: Number(row.size),
    uploadId: row.upload_id as string,
    chunkSize: Number(row.chunk_size),
    chunks: Number(row.chunks),
    stride: Number(row.stride),
    meta: row.meta as Uint8Array,
    createdAt: Number(row.created_at),
    touchedAt: Number(row.touched_at),
  };
}

function usageOf(row: Row | undefined): BlobUsage {
  return { blobs: Number(row?.blobs ?? 0), bytes: Number(row?.bytes ?? 0) };
}

function bytes(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

export class PostgresBlobBackend implements BlobBackend {
  constructor(private readonly host: PgBlobHost) {}

  private get sql() {
    return this.host.sql.blobs;
  }

  async begin(owner: string, uploadId: string, now: number): Promise<BlobUpload> {
    let aborted = false;
    return {
      write: async (index, data) => {
        await this.host.withClient("blobs.put", true, (c) =>
          c.query(this.sql.chunk, [uploadId, index, owner, now, bytes(data)]),
        );
      },
      finish: async () => {},
      abort: async () => {
        if (aborted) return;
        aborted = true;
        await this.host.withClient("blobs.put", true, (c) => c.query(this.sql.removeChunks, [uploadId]));
      },
    };
  }

  commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }> {
    return this.host.withClient("blobs.put", true, async (c) => {
      await c.query(TRANSACTION.begin);
      try {
        await c.query(this.sql.lock, [`statebag.blobs.${this.host.schema}.${record.owner}`]);
        if (check.maxBytes !== undefined) await c.query(this.sql.lock, [`statebag.blobs.${this.host.schema}`]);
        const touched = (await c.query<Row>(this.sql.touch, [record.owner, record.hash, check.now])).rows[0];
        if (touched) {
          await c.query(TRANSACTION.commit);
          return { record: recordOf(touched), created: false };
        }
        const count = Number((await c.query<Row>(this.sql.chunkCount, [record.uploadId])).rows[0]?.n ?? 0);
        if (count !== record.chunks) throw new BlobUploadLostError();
        checkBudgets(
          check,
          record.size,
          check.maxBytesPerOwner === undefined
            ? { blobs: 0, bytes: 0 }
            : usageOf((await c.query<Row>(this.sql.usageOwner, [record.owner])).rows[0]),
          check.maxBytes === undefined
            ? { blobs: 0, bytes: 0 }
            : usageOf((await c.query<Row>(this.sql.usageAll)).rows[0]),
        );
        await c.query(this.sql.insert, [
          record.owner,
          record.hash,
          record.uploadId,
          record.size,
          record.chunkSize,
          record.chunks,
          record.stride,
          bytes(record.meta),
          record.createdAt,
          record.touchedAt,
        ]);
        await c.query(TRANSACTION.commit);
        return { record, created: true };
      } catch (error) {
        await c.query(TRANSACTION.rollback).catch(() => undefined);
        throw error;
      }
    });
  }

  async record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    const row = await this.host.withClient("blobs.get", false, async (c) => {
      return (await c.query<Row>(this.sql.get, [owner, hash])).rows[0];
    });
    return row && recordOf(row);
  }

  async touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    const row = await this.host.withClient("blobs.put", true, async (c) => {
      return (await c.query<Row>(this.sql.touch, [owner, hash, now])).rows[0];
    });
    return row && recordOf(row);
  }

  async *chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array> {
    for (let at = from; at < to; at += READ_BATCH) {
      const end = Math.min(to, at + READ_BATCH);
      const rows = await this.host.withClient("blobs.get", false, async (c) => {
        return (await c.query<Row>(this.sql.chunks, [record.uploadId, at, end])).rows;
      });
      for (const row of rows) yield row.data as Uint8Array;
      if (rows.length < end - at) return;
    }
  }

  async remove(owner: string, hash: string, options: { touchedBefore?: number } = {}): Promise<BlobRecord | undefined> {
    const row = await this.host.withClient("blobs.delete", true, async (c) => {
      return (await c.query<Row>(this.sql.remove, [owner, hash, options.touchedBefore ?? null])).rows[0];
    });
    return row && recordOf(row);
  }

  /**
   * One transaction under the owners' advisory locks (the commit's, so a put of the same bytes waits
   * for it): the old row deleted with its chunks (`remove`, which returns the row as it was, times
   * included), rolled back unless it pointed at the upload read; then `next` inserted with those
   * times, or merged into the row under its key.
   */
  swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed"> {
    return this.host.withClient("blobs.reencrypt", true, async (c) => {
      await c.query(TRANSACTION.begin);
      try {
        for (const owner of [...new Set([expected.owner, next.owner])].sort())
          await c.query(this.sql.lock, [`statebag.blobs.${this.host.schema}.${owner}`]);
        const old = (await c.query<Row>(this.sql.remove, [expected.owner, expected.hash, null])).rows[0];
        if (!old || old.upload_id !== expected.uploadId) {
          await c.query(TRANSACTION.rollback);
          return "changed";
        }
        const count = Number((await c.query<Row>(this.sql.chunkCount, [next.uploadId])).rows[0]?.n ?? 0);
        if (count !== next.chunks) throw new BlobUploadLostError();
        if (next.owner !== expected.owner || next.hash !== expected.hash) {
          const merged = (await c.query<Row>(this.sql.touch, [next.owner, next.hash, Number(old.touched_at)])).rows[0];
          if (merged) {
            await c.query(TRANSACTION.commit);
            return "merged";
          }
        }
        await c.query(this.sql.insert, [
          next.owner,
          next.hash,
          next.uploadId,
          next.size,
          next.chunkSize,
          next.chunks,
          next.stride,
          bytes(next.meta),
          Number(old.created_at),
          Number(old.touched_at),
        ]);
        await c.query(TRANSACTION.commit);
        return "swapped";
      } catch (error) {
        await c.query(TRANSACTION.rollback).catch(() => undefined);
        throw error;
      }
    });
  }

  async list(
    owner: string | null,
    after: { owner: string; hash: string } | undefined,
    limit: number,
  ): Promise<BlobRecord[]> {
    const rows = await this.host.withClient("blobs.list", false, async (c) => {
      return (
        owner === null
          ? await c.query<Row>(this.sql.listAll, [after?.owner ?? "", after?.hash ?? "", limit])
          : await c.query<Row>(this.sql.listOwner, [owner, after?.hash ?? "", limit])
      ).rows;
    });
    return rows.map(recordOf);
  }

  async usage(owner: string | null): Promise<BlobUsage> {
    const row = await this.host.withClient("blobs.usage", false, async (c) => {
      return (owner === null ? await c.query<Row>(this.sql.usageAll) : await c.query<Row>(this.sql.usageOwner, [owner]))
        .rows[0];
    });
    return usageOf(row);
  }

  async eraseOwner(owner: string): Promise<BlobUsage> {
    const row = await this.host.withClient("blobs.eraseOwner", true, async (c) => {
      return (await c.query<Row>(this.sql.erase, [owner])).rows[0];
    });
    return usageOf(row);
  }

  async purgeUploads(owner: string | null, before: number): Promise<number> {
    const result = await this.host.withClient("blobs.sweep", true, (c) =>
      owner === null ? c.query(this.sql.purgeAll, [before]) : c.query(this.sql.purgeOwner, [before, owner]),
    );
    return (result as { rowCount?: number | null }).rowCount ?? 0;
  }

  async close(): Promise<void> {}
}
