/**
 * Blobs in an S3-compatible bucket (`blobs: { url: "s3://bucket/prefix?region=...&endpoint=..." }`
 * or `s3BlobStore`), through `@aws-sdk/client-s3`, an optional peer dependency loaded on first use.
 * Under the prefix `P`, per owner (`<o>` = SHA-256 of the owner as stored):
 *
 *   P<o>/owner           the owner (as stored: a keyed form when the store encrypts)
 *   P<o>/u/<upload>      a put in progress (empty; its time is when it began)
 *   P<o>/d/<upload>      the blob's chunks, one object (a multipart upload above 8 MiB, parts of
 *                        8 MiB, so a put holds at most one part in memory)
 *   P<o>/b/<hash>        the blob's record (JSON: size, chunk layout, upload id, times, description),
 *                        written last: a blob exists once its record does
 *
 * A put whose process dies leaves a `u/` marker and maybe a data object or an unfinished multipart
 * upload: sweeps remove them once older than their grace window. Puts of the same bytes in this
 * process are serialized per owner and hash; across processes the record is written with
 * `If-None-Match: *` where the service honours it, and read back either way (the put that finds
 * another's record drops its own data). Budgets and `usage` read the owner's records (one request
 * each): on S3 they cost a listing, unlike the database backends' counters.
 */
import { createHash } from "node:crypto";
import { ConfigurationError, StatebagError } from "../core/errors.js";
import { importOptional, importPackage } from "../core/optional-dependency.js";
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
} from "./chunked.js";

/** The parts of an S3 client the store uses (`S3Client` from `@aws-sdk/client-s3` is one). */
export interface S3ClientLike {
  send(command: unknown, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
  destroy?(): void;
}

/** The command classes of `@aws-sdk/client-s3` the store sends. */
interface S3Module {
  S3Client: new (config: Record<string, unknown>) => S3ClientLike;
  PutObjectCommand: new (input: Record<string, unknown>) => unknown;
  GetObjectCommand: new (input: Record<string, unknown>) => unknown;
  DeleteObjectCommand: new (input: Record<string, unknown>) => unknown;
  DeleteObjectsCommand: new (input: Record<string, unknown>) => unknown;
  ListObjectsV2Command: new (input: Record<string, unknown>) => unknown;
  CreateMultipartUploadCommand: new (input: Record<string, unknown>) => unknown;
  UploadPartCommand: new (input: Record<string, unknown>) => unknown;
  CompleteMultipartUploadCommand: new (input: Record<string, unknown>) => unknown;
  AbortMultipartUploadCommand: new (input: Record<string, unknown>) => unknown;
  ListMultipartUploadsCommand: new (input: Record<string, unknown>) => unknown;
}

const PACKAGE = "@aws-sdk/client-s3";
let loading: Promise<S3Module> | undefined;

function loadS3(): Promise<S3Module> {
  loading ??= importOptional(PACKAGE, "the S3 blob store", () => importPackage<S3Module>(PACKAGE));
  return loading.catch((error) => {
    loading = undefined;
    throw error;
  });
}

/** Bytes per part of a multipart upload (S3's minimum is 5 MiB, but for the last part). */
const PART_SIZE = 8 * 1024 * 1024;

interface S3Record {
  v: 1;
  uploadId: string;
  size: number;
  chunkSize: number;
  chunks: number;
  stride: number;
  dataBytes: number;
  createdAt: number;
  touchedAt: number;
  meta: string;
}

interface ListOutput {
  Contents?: { Key?: string; LastModified?: Date }[];
  CommonPrefixes?: { Prefix?: string }[];
  IsTruncated?: boolean;
  NextContinuationToken?: string;
}

function status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function isMissing(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  return name === "NoSuchKey" || name === "NotFound" || status(error) === 404;
}

/** The S3 service failed or could not be reached. */
export class S3BlobStoreError extends StatebagError {
  constructor(where: string, operation: string, cause: unknown) {
    const code = (cause as { name?: unknown })?.name;
    super(
      "store-unavailable",
      `the S3 blob store at ${where} is unavailable (${operation}${typeof code === "string" ? `: ${code}` : ""}${status(cause) ? `, HTTP ${status(cause)}` : ""})`,
      {
        cause,
        hint: "check the bucket, the endpoint and region, and the credentials (the SDK's usual chain: environment, profile, role); the same store works again once S3 answers",
      },
    );
  }
}

export interface S3Location {
  bucket: string;
  /** Key prefix, ending in "/" (or empty). */
  prefix: string;
}

/** The size of each record's data object (the last chunk's end), beside the engine's fields. */
const dataSizes = new WeakMap<BlobRecord, number>();

async function bodyBytes(body: unknown): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const piece of body as AsyncIterable<Uint8Array>) parts.push(Buffer.from(piece));
  return Buffer.concat(parts);
}

export class S3BlobBackend implements BlobBackend {
  readonly where: string;
  readonly #client: () => Promise<{ client: S3ClientLike; s3: S3Module }>;
  readonly #bucket: string;
  readonly #prefix: string;
  #owned: S3ClientLike | undefined;

  constructor(
    location: S3Location,
    client: S3ClientLike | undefined,
    clientConfig: Record<string, unknown> | undefined,
    where: string,
  ) {
    this.#bucket = location.bucket;
    this.#prefix = location.prefix;
    this.where = where;
    let made: Promise<{ client: S3ClientLike; s3: S3Module }> | undefined;
    this.#client = () => {
      made ??= loadS3().then((s3) => {
        if (client) return { client, s3 };
        this.#owned = new s3.S3Client({ ...clientConfig });
        return { client: this.#owned, s3 };
      });
      return made.catch((error) => {
        made = undefined;
        throw error;
      });
    };
  }

  async #send<T>(operation: string, build: (s3: S3Module) => unknown): Promise<T> {
    const { client, s3 } = await this.#client();
    try {
      return (await client.send(build(s3))) as T;
    } catch (error) {
      if (isMissing(error) || status(error) === 412) throw error;
      throw new S3BlobStoreError(this.where, operation, error);
    }
  }

  /** One object from bytes in memory (a record, a marker, a data object below one part). */
  #put(operation: string, key: string, body: Buffer, extra: Record<string, unknown> = {}): Promise<unknown> {
    return this.#send(
      operation,
      (s3) =>
        new s3.PutObjectCommand({ Bucket: this.#bucket, Key: key, Body: body, ContentLength: body.length, ...extra }),
    );
  }

  #dir(owner: string): string {
    return `${this.#prefix}${createHash("sha256").update(owner).digest("hex")}/`;
  }

  #recordKey(owner: string, hash: string): string {
    return `${this.#dir(owner)}b/${hash}`;
  }

  async begin(owner: string, uploadId: string): Promise<BlobUpload> {
    const dir = this.#dir(owner);
    const bucket = this.#bucket;
    const dataKey = `${dir}d/${uploadId}`;
    await this.#put("blobs.put", `${dir}owner`, Buffer.from(owner, "utf8"));
    await this.#put("blobs.put", `${dir}u/${uploadId}`, Buffer.alloc(0));
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let multipart: string | undefined;
    const parts: { ETag?: string; PartNumber: number }[] = [];
    let total = 0;
    const uploadPart = async (body: Buffer) => {
      if (multipart === undefined) {
        const created = await this.#send<{ UploadId?: string }>(
          "blobs.put",
          (s3) => new s3.CreateMultipartUploadCommand({ Bucket: bucket, Key: dataKey }),
        );
        multipart = created.UploadId;
      }
      const number = parts.length + 1;
      const done = await this.#send<{ ETag?: string }>(
        "blobs.put",
        (s3) =>
          new s3.UploadPartCommand({
            Bucket: bucket,
            Key: dataKey,
            UploadId: multipart,
            PartNumber: number,
            Body: body,
            ContentLength: body.length,
          }),
      );
      parts.push({ ETag: done.ETag, PartNumber: number });
    };
    let aborted = false;
    const upload: BlobUpload & { dataBytes: () => number } = {
      write: async (_index, bytes) => {
        pending.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        pendingBytes += bytes.byteLength;
        total += bytes.byteLength;
        if (pendingBytes >= PART_SIZE) {
          const body = Buffer.concat(pending);
          pending = [];
          pendingBytes = 0;
          await uploadPart(body);
        }
      },
      finish: async () => {
        const body = Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
        if (multipart === undefined) {
          await this.#put("blobs.put", dataKey, body);
          return;
        }
        if (body.length > 0) await uploadPart(body);
        await this.#send(
          "blobs.put",
          (s3) =>
            new s3.CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: dataKey,
              UploadId: multipart,
              MultipartUpload: { Parts: parts },
            }),
        );
      },
      abort: async () => {
        if (aborted) return;
        aborted = true;
        pending = [];
        this.#uploads.delete(uploadId);
        if (multipart !== undefined) {
          const id = multipart;
          await this.#send(
            "blobs.put",
            (s3) => new s3.AbortMultipartUploadCommand({ Bucket: bucket, Key: dataKey, UploadId: id }),
          ).catch(() => {});
        }
        await this.#deleteKeys([dataKey, `${dir}u/${uploadId}`]);
      },
      dataBytes: () => total,
    };
    this.#uploads.set(uploadId, upload);
    return upload;
  }

  /** Uploads of this process, for the data size the record keeps. */
  readonly #uploads = new Map<string, { dataBytes: () => number }>();

  async #readRecord(key: string, owner: string, hash: string): Promise<BlobRecord | undefined> {
    let output: { Body?: unknown };
    try {
      output = await this.#send("blobs.get", (s3) => new s3.GetObjectCommand({ Bucket: this.#bucket, Key: key }));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
    let stored: S3Record;
    try {
      stored = JSON.parse((await bodyBytes(output.Body)).toString("utf8")) as S3Record;
    } catch {
      throw new BlobCorruptError(hash, this.where, "its record is not JSON");
    }
    if (stored?.v !== 1 || typeof stored.meta !== "string")
      throw new BlobCorruptError(hash, this.where, "its record is not of version 1");
    const record: BlobRecord = {
      owner,
      hash,
      size: stored.size,
      uploadId: stored.uploadId,
      chunkSize: stored.chunkSize,
      chunks: stored.chunks,
      stride: stored.stride,
      meta: Buffer.from(stored.meta, "base64"),
      createdAt: stored.createdAt,
      touchedAt: stored.touchedAt,
    };
    dataSizes.set(record, stored.dataBytes);
    return record;
  }

  async #writeRecord(record: BlobRecord, dataBytes: number, ifAbsent: boolean): Promise<boolean> {
    const body: S3Record = {
      v: 1,
      uploadId: record.uploadId,
      size: record.size,
      chunkSize: record.chunkSize,
      chunks: record.chunks,
      stride: record.stride,
      dataBytes,
      createdAt: record.createdAt,
      touchedAt: record.touchedAt,
      meta: Buffer.from(record.meta).toString("base64"),
    };
    try {
      await this.#put("blobs.put", this.#recordKey(record.owner, record.hash), Buffer.from(JSON.stringify(body)), {
        ContentType: "application/json",
        ...(ifAbsent ? { IfNoneMatch: "*" } : {}),
      });
      return true;
    } catch (error) {
      if (status(error) === 412) return false;
      throw error;
    }
  }

  commit(record: BlobRecord, check: BlobBudgetCheck): Promise<{ record: BlobRecord; created: boolean }> {
    const key = this.#recordKey(record.owner, record.hash);
    return locked(`${this.#bucket}\u0000${key}`, async () => {
      const existing = await this.#touchRecord(record.owner, record.hash, check.now);
      if (existing) return { record: existing, created: false };
      const upload = this.#uploads.get(record.uploadId);
      if (!upload) throw new BlobUploadLostError();
      checkBudgets(
        check,
        record.size,
        check.maxBytesPerOwner === undefined ? { blobs: 0, bytes: 0 } : await this.usage(record.owner),
        check.maxBytes === undefined ? { blobs: 0, bytes: 0 } : await this.usage(null),
      );
      const written = await this.#writeRecord(record, upload.dataBytes(), true);
      const stored = await this.#readRecord(key, record.owner, record.hash);
      if (!written || (stored && stored.uploadId !== record.uploadId)) {
        if (stored) return { record: stored, created: false };
        throw new BlobUploadLostError();
      }
      this.#uploads.delete(record.uploadId);
      await this.#deleteKeys([`${this.#dir(record.owner)}u/${record.uploadId}`]);
      return { record, created: true };
    });
  }

  async #touchRecord(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    const record = await this.#readRecord(this.#recordKey(owner, hash), owner, hash);
    if (!record) return undefined;
    if (record.touchedAt < now) {
      record.touchedAt = now;
      await this.#writeRecord(record, dataSizes.get(record) ?? 0, false);
    }
    return record;
  }

  record(owner: string, hash: string): Promise<BlobRecord | undefined> {
    return this.#readRecord(this.#recordKey(owner, hash), owner, hash);
  }

  touch(owner: string, hash: string, now: number): Promise<BlobRecord | undefined> {
    const key = this.#recordKey(owner, hash);
    return locked(`${this.#bucket}\u0000${key}`, () => this.#touchRecord(owner, hash, now));
  }

  async *chunks(record: BlobRecord, from: number, to: number): AsyncIterable<Uint8Array> {
    if (from >= to) return;
    const dataBytes = dataSizes.get(record) ?? record.chunks * record.stride;
    const start = from * record.stride;
    const end = to >= record.chunks ? dataBytes : to * record.stride;
    let output: { Body?: unknown };
    try {
      output = await this.#send(
        "blobs.get",
        (s3) =>
          new s3.GetObjectCommand({
            Bucket: this.#bucket,
            Key: `${this.#dir(record.owner)}d/${record.uploadId}`,
            Range: `bytes=${start}-${end - 1}`,
          }),
      );
    } catch (error) {
      if (isMissing(error) || status(error) === 416) return;
      throw error;
    }
    let held: Buffer[] = [];
    let heldBytes = 0;
    let index = from;
    const body = output.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
    try {
      for await (const piece of body) {
        held.push(Buffer.from(piece));
        heldBytes += piece.byteLength;
        while (index < to - 1 && heldBytes >= record.stride) {
          const all = held.length === 1 ? (held[0] as Buffer) : Buffer.concat(held);
          yield all.subarray(0, record.stride);
          const rest = all.subarray(record.stride);
          held = rest.length > 0 ? [rest] : [];
          heldBytes = rest.length;
          index++;
        }
      }
    } finally {
      body.destroy?.();
    }
    if (index === to - 1 && heldBytes > 0) yield Buffer.concat(held);
  }

  async #deleteKeys(keys: string[]): Promise<void> {
    for (let at = 0; at < keys.length; at += 1000) {
      const batch = keys.slice(at, at + 1000);
      if (batch.length === 1) {
        await this.#send(
          "blobs.delete",
          (s3) => new s3.DeleteObjectCommand({ Bucket: this.#bucket, Key: batch[0] }),
        ).catch((error) => {
          if (!isMissing(error)) throw error;
        });
        continue;
      }
      await this.#send(
        "blobs.delete",
        (s3) =>
          new s3.DeleteObjectsCommand({
            Bucket: this.#bucket,
            Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
          }),
      );
    }
  }

  remove(owner: string, hash: string, options: { touchedBefore?: number } = {}): Promise<BlobRecord | undefined> {
    const key = this.#recordKey(owner, hash);
    return locked(`${this.#bucket}\u0000${key}`, async () => {
      const record = await this.#readRecord(key, owner, hash);
      if (!record) return undefined;
      if (options.touchedBefore !== undefined && record.touchedAt >= options.touchedBefore) return undefined;
      // The record first: from then on the blob is gone for every reader.
      await this.#deleteKeys([key]);
      await this.#deleteKeys([`${this.#dir(owner)}d/${record.uploadId}`]);
      return record;
    });
  }

  /**
   * Under the lock of the record's key (and of `next`'s when it is another): the record checked to
   * point at the upload read, `next` written with the old times (under another key only if absent:
   * a record there is kept and touched, "merged"), then the old record (when moved) and the old
   * data deleted. A read under way whose data object went goes on from `next`'s (the engine's
   * `get`). Across processes, like `touch`, the write is not conditional on what another process
   * did in between.
   */
  swap(
    expected: { owner: string; hash: string; uploadId: string },
    next: BlobRecord,
  ): Promise<"swapped" | "merged" | "changed"> {
    const key = this.#recordKey(expected.owner, expected.hash);
    const nextKey = this.#recordKey(next.owner, next.hash);
    const run = async (): Promise<"swapped" | "merged" | "changed"> => {
      const old = await this.#readRecord(key, expected.owner, expected.hash);
      if (!old || old.uploadId !== expected.uploadId) return "changed";
      const upload = this.#uploads.get(next.uploadId);
      if (!upload) throw new BlobUploadLostError();
      const record = { ...next, createdAt: old.createdAt, touchedAt: old.touchedAt };
      let outcome: "swapped" | "merged" = "swapped";
      if (nextKey === key) await this.#writeRecord(record, upload.dataBytes(), false);
      else if (
        (await this.#touchRecord(next.owner, next.hash, old.touchedAt)) ||
        !(await this.#writeRecord(record, upload.dataBytes(), true))
      )
        outcome = "merged";
      if (nextKey !== key) await this.#deleteKeys([key]);
      await this.#deleteKeys([`${this.#dir(expected.owner)}d/${old.uploadId}`]);
      if (outcome === "swapped") {
        this.#uploads.delete(next.uploadId);
        await this.#deleteKeys([`${this.#dir(next.owner)}u/${next.uploadId}`]);
      }
      return outcome;
    };
    const lock = (k: string, fn: () => Promise<"swapped" | "merged" | "changed">) =>
      locked(`${this.#bucket}\u0000${k}`, fn);
    return nextKey === key ? lock(key, run) : lock(key, () => lock(nextKey, run));
  }

  /**
   * Keys under `prefix` after `startAfter`, at most `limit`. Pages by StartAfter (the last key seen)
   * rather than continuation tokens, and asks for full pages (1,000 keys) whatever the limit.
   */
  async #keys(prefix: string, options: { delimiter?: boolean; startAfter?: string; limit?: number } = {}) {
    const out: { key: string; modified: number }[] = [];
    const prefixes: string[] = [];
    let startAfter = options.startAfter;
    for (;;) {
      const after = startAfter;
      const page = await this.#send<ListOutput>(
        "blobs.list",
        (s3) =>
          new s3.ListObjectsV2Command({
            Bucket: this.#bucket,
            Prefix: prefix,
            ...(options.delimiter ? { Delimiter: "/" } : {}),
            ...(after ? { StartAfter: after } : {}),
          }),
      );
      let last: string | undefined;
      for (const item of page.Contents ?? []) {
        if (!item.Key) continue;
        last = item.Key;
        if (options.limit === undefined || out.length < options.limit)
          out.push({ key: item.Key, modified: item.LastModified?.getTime() ?? 0 });
      }
      for (const common of page.CommonPrefixes ?? []) {
        if (!common.Prefix) continue;
        prefixes.push(common.Prefix);
        if (last === undefined || common.Prefix > last) last = common.Prefix;
      }
      if (!page.IsTruncated || last === undefined || (options.limit !== undefined && out.length >= options.limit))
        return { keys: out, prefixes };
      startAfter = last;
    }
  }

  /** Every owner with something stored, sorted (as stored). */
  async #owners(): Promise<string[]> {
    const { prefixes } = await this.#keys(this.#prefix, { delimiter: true });
    const owners: string[] = [];
    for (const dir of prefixes) {
      try {
        const output = await this.#send<{ Body?: unknown }>(
          "blobs.list",
          (s3) => new s3.GetObjectCommand({ Bucket: this.#bucket, Key: `${dir}owner` }),
        );
        owners.push((await bodyBytes(output.Body)).toString("utf8"));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return owners.sort();
  }

  async list(
    owner: string | null,
    after: { owner: string; hash: string } | undefined,
    limit: number,
  ): Promise<BlobRecord[]> {
    const out: BlobRecord[] = [];
    for (const each of owner === null ? await this.#owners() : [owner]) {
      if (after && each < after.owner) continue;
      const base = `${this.#dir(each)}b/`;
      const startAfter = after && after.owner === each ? base + after.hash : undefined;
      const { keys } = await this.#keys(base, { startAfter, limit: limit - out.length });
      for (const { key } of keys) {
        const record = await this.#readRecord(key, each, key.slice(base.length));
        if (record) out.push(record);
      }
      if (out.length >= limit) break;
    }
    return out;
  }

  async usage(owner: string | null): Promise<BlobUsage> {
    const usage = { blobs: 0, bytes: 0 };
    let after: { owner: string; hash: string } | undefined;
    for (;;) {
      const page = await this.list(owner, after, 500);
      for (const record of page) {
        usage.blobs++;
        usage.bytes += record.size;
      }
      const last = page[page.length - 1];
      if (page.length < 500 || !last) return usage;
      after = { owner: last.owner, hash: last.hash };
    }
  }

  async eraseOwner(owner: string): Promise<BlobUsage> {
    const usage = await this.usage(owner);
    const dir = this.#dir(owner);
    // Records first (the blobs are gone for readers at once), then the rest, the owner marker last.
    const records = (await this.#keys(`${dir}b/`)).keys.map((k) => k.key);
    await this.#deleteKeys(records);
    const rest = (await this.#keys(dir)).keys.map((k) => k.key).filter((key) => key !== `${dir}owner`);
    await this.#deleteKeys(rest);
    await this.#abortMultipart(dir, Number.POSITIVE_INFINITY);
    await this.#deleteKeys([`${dir}owner`]);
    return usage;
  }

  async #abortMultipart(dir: string, before: number): Promise<void> {
    let output: { Uploads?: { Key?: string; UploadId?: string; Initiated?: Date }[] };
    try {
      output = await this.#send(
        "blobs.sweep",
        (s3) => new s3.ListMultipartUploadsCommand({ Bucket: this.#bucket, Prefix: `${dir}d/` }),
      );
    } catch {
      return; // a service without the listing: its unfinished uploads expire by the bucket's lifecycle rules
    }
    for (const upload of output.Uploads ?? []) {
      if (!upload.Key || !upload.UploadId || (upload.Initiated?.getTime() ?? 0) >= before) continue;
      const { Key, UploadId } = upload;
      await this.#send(
        "blobs.sweep",
        (s3) => new s3.AbortMultipartUploadCommand({ Bucket: this.#bucket, Key, UploadId }),
      ).catch(() => {});
    }
  }

  async purgeUploads(owner: string | null, before: number): Promise<number> {
    let purged = 0;
    for (const each of owner === null ? await this.#owners() : [owner]) {
      const dir = this.#dir(each);
      const { keys } = await this.#keys(`${dir}u/`);
      for (const { key, modified } of keys) {
        if (modified >= before) continue;
        const uploadId = key.slice(`${dir}u/`.length);
        if (this.#uploads.has(uploadId)) continue; // still running in this process
        await this.#deleteKeys([`${dir}d/${uploadId}`, key]);
        purged++;
      }
      await this.#abortMultipart(dir, before);
    }
    return purged;
  }

  async close(): Promise<void> {
    this.#owned?.destroy?.();
  }
}

/** `s3://bucket/prefix?region=..&endpoint=..&forcePathStyle=true` (credentials from the SDK's chain, or `s3://key:secret@bucket`). */
export function parseS3Url(url: string): {
  location: S3Location;
  clientConfig: Record<string, unknown>;
  where: string;
} {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigurationError("blobs.url: not a URL", "write it as s3://bucket/prefix?region=us-east-1");
  }
  if (parsed.protocol !== "s3:" || parsed.hostname === "")
    throw new ConfigurationError(
      "blobs.url: an S3 URL names a bucket: s3://bucket/prefix",
      "write it as s3://bucket/prefix?region=us-east-1",
    );
  const bucket = decodeURIComponent(parsed.hostname);
  const path = decodeURIComponent(parsed.pathname.replace(/^\/+/, ""));
  const prefix = path === "" ? "" : path.endsWith("/") ? path : `${path}/`;
  const clientConfig: Record<string, unknown> = {};
  for (const [name, value] of parsed.searchParams) {
    if (name === "region") clientConfig.region = value;
    else if (name === "endpoint") clientConfig.endpoint = value;
    else if (name === "forcePathStyle") clientConfig.forcePathStyle = value === "true" || value === "1";
    else
      throw new ConfigurationError(
        `blobs.url: unknown S3 option ?${name.slice(0, 40)}=`,
        "the options are region, endpoint and forcePathStyle",
      );
  }
  if (parsed.username || parsed.password)
    clientConfig.credentials = {
      accessKeyId: decodeURIComponent(parsed.username),
      secretAccessKey: decodeURIComponent(parsed.password),
    };
  return { location: { bucket, prefix }, clientConfig, where: `s3://${bucket}/${prefix}` };
}

export interface S3BlobStoreOptions {
  bucket: string;
  /** Key prefix (default none; "/" is added when missing). */
  prefix?: string;
  /** A client of your own (`new S3Client(...)`); else one is made from `clientConfig`. */
  client?: S3ClientLike;
  /** `S3ClientConfig` (region, endpoint, credentials, forcePathStyle...) for the client made here. */
  clientConfig?: Record<string, unknown>;
  limits?: BlobLimits;
  chunkSize?: number;
  sealer?: BlobSealer;
  names?: BlobNames;
}

/** A blob store in an S3-compatible bucket (needs `npm i @aws-sdk/client-s3`). */
export function s3BlobStore(options: S3BlobStoreOptions): ChunkedBlobStore {
  if (typeof options?.bucket !== "string" || options.bucket === "")
    throw new ConfigurationError("s3BlobStore needs a bucket");
  const raw = options.prefix ?? "";
  const prefix = raw === "" || raw.endsWith("/") ? raw : `${raw}/`;
  const where = `s3://${options.bucket}/${prefix}`;
  const backend = new S3BlobBackend({ bucket: options.bucket, prefix }, options.client, options.clientConfig, where);
  return new ChunkedBlobStore({ ...options, backend, where });
}
