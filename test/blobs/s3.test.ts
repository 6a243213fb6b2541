/**
 * Blobs in an S3-compatible bucket, against a loopback S3 server (s3rver, a filesystem-backed
 * server from the npm registry) the way the model clients are tested against a loopback OpenAI
 * server: the store contract's blob clauses (plain and encrypted), a blob large enough for a
 * multipart upload, a put that fails after its first part, and the package missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import S3rver from "s3rver";
import * as vitest from "vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encryptedSessionCodec, openStore, s3BlobStore, type SessionStore } from "../../src/stores.js";
import { storeConformance } from "../../src/testing.js";
import { repoModule, runWithoutPackage } from "../helpers/without-package.js";

const BUCKET = "statebag-test";
const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 5) } };
let server: S3rver;
let directory: string;
let endpoint = "";
let counter = 0;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "statebag-s3rver-"));
  server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: BUCKET }],
  });
  const address: AddressInfo = await server.run();
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await server?.close();
  rmSync(directory, { recursive: true, force: true });
});

/** A fresh prefix of the test bucket, as a blobs URL. */
function blobsUrl(): string {
  const prefix = `run-${process.pid}-${++counter}`;
  return `s3://S3RVER:S3RVER@${BUCKET}/${prefix}?region=us-east-1&forcePathStyle=true&endpoint=${encodeURIComponent(endpoint)}`;
}

for (const encrypted of [false, true]) {
  storeConformance({
    name: `memory store, blobs in S3${encrypted ? ", encrypted" : ""}`,
    runner: vitest,
    async open({ codec, messageCodec, blobs }) {
      return openStore("memory:", {
        codec: encrypted ? encryptedSessionCodec({ keyring, store: "s3-test", inner: codec }) : codec,
        messageCodec,
        blobs: { ...blobs, url: blobsUrl() },
      });
    },
    skip: encrypted ? { verbatimText: "rows are encrypted" } : {},
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  return Buffer.concat(parts);
}

describe("S3 blob store", () => {
  it("puts a blob past one part as a multipart upload and reads it back whole and by range", async () => {
    const blobs = s3BlobStore({
      bucket: BUCKET,
      prefix: `multipart-${process.pid}`,
      clientConfig: {
        region: "us-east-1",
        endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
      },
    });
    try {
      const data = Buffer.alloc(20 * 1024 * 1024 + 123);
      for (let i = 0; i < data.length; i += 4096) data.writeUInt32BE(i, i);
      async function* pieces() {
        for (let at = 0; at < data.length; at += 1_000_000) yield data.subarray(at, at + 1_000_000);
      }
      const put = await blobs.put(pieces(), { owner: "ann", mediaType: "video/mp4" });
      expect(put.hash).toBe(createHash("sha256").update(data).digest("hex"));
      expect((await readAll((await blobs.get(put.hash, { owner: "ann" }))!.stream)).equals(data)).toBe(true);
      const range = await blobs.get(put.hash, { owner: "ann", range: { start: 9_000_000, end: 17_000_001 } });
      expect((await readAll(range!.stream)).equals(data.subarray(9_000_000, 17_000_001))).toBe(true);
      expect(await blobs.eraseOwner("ann")).toEqual({ blobs: 1, bytes: data.length });
    } finally {
      await blobs.close();
    }
  });

  it("a put that fails after a part was uploaded leaves no blob, and a sweep leaves no upload", async () => {
    const store: SessionStore = await openStore("memory:", { blobs: { url: blobsUrl() } });
    try {
      const blobs = store.blobs!;
      async function* failing() {
        yield Buffer.alloc(9 * 1024 * 1024, 1);
        throw new Error("the client went away");
      }
      await expect(blobs.put(failing(), { owner: "bob", mediaType: "image/png" })).rejects.toThrow("went away");
      expect(await blobs.list({ owner: "bob" })).toEqual({ items: [] });
      expect(await blobs.sweep({ allOwners: true, referenced: new Set(), graceMs: 0 })).toEqual({ blobs: 0, bytes: 0 });
    } finally {
      await store.close();
    }
  });

  it("without @aws-sdk/client-s3 the store opens, and its first blob call says what to install", async () => {
    const run = await runWithoutPackage(
      "@aws-sdk/client-s3",
      `import { openStore } from ${repoModule("src/stores.ts")};
const store = await openStore("memory:", { blobs: { url: "s3://bucket/prefix?region=us-east-1" } });
try {
  await store.blobs!.put(new Uint8Array(3), { mediaType: "text/plain" });
} catch (error) {
  console.log(JSON.stringify({ code: (error as { code: string }).code, message: (error as Error).message }));
}`,
    );
    expect(run.lines, run.stderr).toEqual([
      {
        code: "missing-dependency",
        message: expect.stringContaining('the S3 blob store needs the "@aws-sdk/client-s3" package'),
      },
    ]);
  });
});
