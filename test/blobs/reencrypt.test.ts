/**
 * Re-encrypting blobs after a key rotation (`ChunkedBlobStore.reencrypt`, the blob pass of
 * `migrateEncryption` / `statebag migrate --reencrypt`), on every backend: memory, a folder, S3
 * (a loopback s3rver), SQLite, PostgreSQL, Redis and Redis Cluster.
 *
 * - Files put under key A, the keyring rotated to B, re-encrypted: a store holding only B reads
 *   every file byte for byte (chunks, descriptions and the keyed owner and hash forms moved to B);
 *   a dry run changes nothing; a second run has nothing left.
 * - Concurrent writers during the run (at the moment of each blob's swap): a put of the same bytes
 *   keeps its refreshed time, a delete, a sweep and an owner's erasure are not undone, a new file is
 *   kept, and a read under way finishes whole and correct.
 * - A blob that does not open (a chunk sealed for another place, a key the keyring lacks) is a
 *   reported failure naming its owner and hash, left as it is; the rest migrates.
 */
import { createHash, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import S3rver from "s3rver";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BlobBackend,
  type BlobRecord,
  type BlobSealer,
  ChunkedBlobStore,
} from "../../src/runtime/blobs/chunked.js";
import { FolderBlobBackend } from "../../src/runtime/blobs/folder.js";
import { MemoryBlobBackend } from "../../src/runtime/blobs/memory.js";
import { parseS3Url, S3BlobBackend } from "../../src/runtime/blobs/s3.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { blobProtectionFor } from "../../src/runtime/stores/blob-sealer.js";
import { encryptionCodecs, type KeyringSpec } from "../../src/runtime/stores/encryption/index.js";
import { migrateEncryption } from "../../src/runtime/stores/encryption/migrate.js";
import { PostgresBlobBackend } from "../../src/runtime/stores/postgres/blobs.js";
import { RedisBlobBackend } from "../../src/runtime/stores/redis/blobs.js";
import { SqliteBlobBackend } from "../../src/runtime/stores/sqlite/blobs.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { sampleSession } from "../cli/helpers.js";
import {
  type Backend,
  postgresBackend,
  redisBackend,
  redisClusterBackend,
  serverUp,
  sqliteBackend,
} from "../stores/helpers.js";
import { available } from "../stores/helpers.js";

const KA = randomBytes(32);
const KB = randomBytes(32);
const A: KeyringSpec = { current: "ka", keys: { ka: KA } };
const AB: KeyringSpec = { current: "kb", keys: { ka: KA, kb: KB } };
const B: KeyringSpec = { current: "kb", keys: { kb: KB } };
const STORE = "app";
const CHUNK = 4096;

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  return Buffer.concat(parts);
}

/** A place blobs are kept, reopened with any keyring; `store` is set for the session-store backends. */
interface Place {
  backend: BlobBackend;
  store?: SessionStore;
  url?: string;
  close(): Promise<void>;
}

interface PlaceKind {
  name: string;
  skip?: boolean;
  /** Session stores for migrateEncryption: opened at the place's URL with the given codecs. */
  open(): Promise<Place>;
}

const codecsFor = (keyring: KeyringSpec, ownerKey?: string) =>
  encryptionCodecs({ keyring, store: STORE, ...(ownerKey ? { ownerKey } : {}) });

function storeKind(backend: Backend, make: (store: SessionStore) => BlobBackend): PlaceKind {
  return {
    name: backend.name,
    skip: !available(backend),
    async open() {
      const { url, cleanup } = await backend.location();
      // A plain store for its backend (the tests seal through their own ChunkedBlobStores over it).
      const store = await openStore(url);
      await store.setup();
      return {
        backend: make(store),
        store,
        url,
        close: async () => {
          await store.close();
          await cleanup();
        },
      };
    },
  };
}

/** A loopback S3 server (s3rver), started by the first S3 test, as in test/blobs/s3.test.ts. */
const BUCKET = "statebag-reencrypt";
let s3Server: S3rver | undefined;
let s3Directory = "";
let s3Url: Promise<string> | undefined;
let s3Runs = 0;
function s3Endpoint(): Promise<string> {
  s3Url ??= (async () => {
    s3Directory = mkdtempSync(join(tmpdir(), "statebag-reencrypt-s3-"));
    s3Server = new S3rver({
      address: "127.0.0.1",
      port: 0,
      silent: true,
      directory: s3Directory,
      configureBuckets: [{ name: BUCKET }],
    });
    const address: AddressInfo = await s3Server.run();
    return `http://127.0.0.1:${address.port}`;
  })();
  return s3Url;
}
afterAll(async () => {
  await s3Server?.close();
  if (s3Directory) rmSync(s3Directory, { recursive: true, force: true });
});

const kinds: PlaceKind[] = [
  {
    name: "memory",
    async open() {
      return { backend: new MemoryBlobBackend(), close: async () => {} };
    },
  },
  {
    name: "folder",
    async open() {
      const dir = mkdtempSync(join(tmpdir(), "statebag-reencrypt-"));
      return {
        backend: new FolderBlobBackend(dir),
        url: `memory:?blobs=${encodeURIComponent(pathToFileURL(dir).href)}`,
        close: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: "s3",
    async open() {
      const endpoint = await s3Endpoint();
      const url = `s3://S3RVER:S3RVER@${BUCKET}/run-${process.pid}-${++s3Runs}?region=us-east-1&forcePathStyle=true&endpoint=${encodeURIComponent(endpoint)}`;
      const { location, clientConfig, where } = parseS3Url(url);
      const backend = new S3BlobBackend(location, undefined, clientConfig, where);
      return {
        backend,
        url: `memory:?blobs=${encodeURIComponent(url)}`,
        close: () => backend.close(),
      };
    },
  },
  storeKind(sqliteBackend, (store) => new SqliteBlobBackend(store as never)),
  { ...storeKind(postgresBackend(), (store) => new PostgresBlobBackend(store as never)), skip: !serverUp.postgres },
  { ...storeKind(redisBackend(), (store) => new RedisBlobBackend(store as never)), skip: !serverUp.redis },
  storeKind(redisClusterBackend, (store) => new RedisBlobBackend(store as never)),
];

/** A blob store over `backend` sealed with `keyring` (its names by `ownerKey`, default the current key). */
function blobsAt(backend: BlobBackend, keyring: KeyringSpec, options: { ownerKey?: string; sealer?: BlobSealer } = {}) {
  const protection = blobProtectionFor(codecsFor(keyring, options.ownerKey).codec);
  return new ChunkedBlobStore({
    backend,
    where: "test",
    chunkSize: CHUNK,
    ...protection,
    ...(options.sealer ? { sealer: options.sealer } : {}),
  });
}

/** `backend` with `hook` run once per record just before the engine's swap of it. */
function hooked(backend: BlobBackend, hook: (expected: { owner: string; hash: string }) => Promise<void>): BlobBackend {
  return new Proxy(backend, {
    get(target, key) {
      if (key === "swap")
        return async (expected: { owner: string; hash: string; uploadId: string }, next: BlobRecord) => {
          await hook(expected);
          return target.swap(expected, next);
        };
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const files = {
  big: { bytes: randomBytes(CHUNK * 3 + 100), owner: "ann", mediaType: "image/png", name: "scan.png" },
  small: { bytes: randomBytes(500), owner: "bob", mediaType: "text/plain", name: "note.txt" },
  anonymous: { bytes: randomBytes(CHUNK), owner: undefined, mediaType: "application/pdf", name: "a.pdf" },
  empty: { bytes: new Uint8Array(0), owner: "ann", mediaType: "text/plain", name: "empty.txt" },
};

async function putAll(blobs: ChunkedBlobStore): Promise<void> {
  for (const file of Object.values(files))
    await blobs.put(file.bytes, {
      ...(file.owner ? { owner: file.owner } : {}),
      mediaType: file.mediaType,
      name: file.name,
    });
}

async function expectAllRead(blobs: ChunkedBlobStore): Promise<void> {
  for (const file of Object.values(files)) {
    const read = await blobs.get(sha(file.bytes), file.owner ? { owner: file.owner } : {});
    expect(read, file.name).toBeDefined();
    expect(read!.info).toMatchObject({ mediaType: file.mediaType, name: file.name, size: file.bytes.length });
    expect((await readAll(read!.stream)).equals(Buffer.from(file.bytes))).toBe(true);
  }
}

for (const kind of kinds) {
  describe.skipIf(kind.skip)(`re-encrypting blobs: ${kind.name}`, () => {
    it("after a rotation: a dry run changes nothing; the run moves every file to B, which alone reads them", async () => {
      const place = await kind.open();
      try {
        await putAll(blobsAt(place.backend, A));
        const rotated = blobsAt(place.backend, AB);
        const dry = await rotated.reencrypt({ dryRun: true });
        expect(dry).toMatchObject({ scanned: 4, rewritten: 4, current: 0, failed: 0, aborted: false });
        await expectAllRead(blobsAt(place.backend, A)); // untouched: A's forms and seals still

        const progress: number[] = [];
        const run = await rotated.reencrypt({ onProgress: (p) => progress.push(p.scanned) });
        expect(run).toMatchObject({ scanned: 4, rewritten: 4, failed: 0, failures: [] });
        expect(progress.at(-1)).toBe(4);
        expect(await rotated.reencrypt()).toMatchObject({ scanned: 4, rewritten: 0, current: 4, failed: 0 });

        const onlyB = blobsAt(place.backend, B);
        await expectAllRead(onlyB);
        expect((await onlyB.list({ owner: "ann" })).items.map((i) => i.hash).sort()).toEqual(
          [sha(files.big.bytes), sha(files.empty.bytes)].sort(),
        );
        expect(await onlyB.usage({ owner: "ann" })).toEqual({
          blobs: 2,
          bytes: files.big.bytes.length,
        });
        expect(await onlyB.usage({ allOwners: true })).toEqual({
          blobs: 4,
          bytes: Object.values(files).reduce((n, f) => n + f.bytes.length, 0),
        });
        // Nothing of A is left: no record, and no upload a sweep would still find.
        expect(await onlyB.sweep({ allOwners: true, referenced: () => true, graceMs: 0 })).toEqual({
          blobs: 0,
          bytes: 0,
        });
        await expectAllRead(onlyB);
      } finally {
        await place.close();
      }
    });

    it("with acceptPlaintext (migrate --encrypt), seals blobs stored before the store encrypted; without, reports them", async () => {
      const place = await kind.open();
      try {
        await putAll(new ChunkedBlobStore({ backend: place.backend, where: "test", chunkSize: CHUNK }));
        const sealed = blobsAt(place.backend, A);
        const refused = await sealed.reencrypt();
        expect(refused).toMatchObject({ scanned: 4, rewritten: 0, failed: 4 });
        expect(refused.failures[0]).toMatchObject({ code: "decryption-failed" });
        expect(await sealed.reencrypt({ acceptPlaintext: true, dryRun: true })).toMatchObject({ rewritten: 4 });
        expect(await sealed.reencrypt({ acceptPlaintext: true })).toMatchObject({ rewritten: 4, failed: 0 });
        await expectAllRead(sealed);
        expect(await sealed.reencrypt({ acceptPlaintext: true })).toMatchObject({ rewritten: 0, current: 4 });
      } finally {
        await place.close();
      }
    });

    it("is resumable and abortable: a stopped run says where, the next goes on from there", async () => {
      const place = await kind.open();
      try {
        await putAll(blobsAt(place.backend, A));
        const rotated = blobsAt(place.backend, AB, { ownerKey: "ka" });
        const abort = new AbortController();
        const first = await rotated.reencrypt({
          signal: abort.signal,
          onProgress: (p) => {
            if (p.scanned === 2) abort.abort();
          },
        });
        expect(first).toMatchObject({ scanned: 2, rewritten: 2, aborted: true });
        const rest = await rotated.reencrypt({ startAfter: first.cursor! });
        expect(rest).toMatchObject({ scanned: 2, rewritten: 2, aborted: false });
        expect(await rotated.reencrypt()).toMatchObject({ current: 4, rewritten: 0 });
        await expectAllRead(blobsAt(place.backend, { current: "kb", keys: { kb: KB, ka: KA } }, { ownerKey: "ka" }));
      } finally {
        await place.close();
      }
    });

    it("keeps what writers do meanwhile, lets a read under way finish, and reports blobs that do not open", async () => {
      const place = await kind.open();
      try {
        // The owner form pinned to ka: the application's puts and deletes meet the records being rewritten.
        const before = blobsAt(place.backend, A);
        const app = blobsAt(place.backend, AB, { ownerKey: "ka" });
        const names = blobProtectionFor(codecsFor(AB, "ka").codec).names!;
        const file = (owner: string, size = CHUNK * 2 + 7) => ({ owner, bytes: randomBytes(size) });
        const f = {
          reader: file("reader", CHUNK * 10 + 3),
          putter: file("putter"),
          deleter: file("deleter"),
          sweeper: file("sweeper"),
          erased: file("erased"),
          quiet: file("quiet"),
          badChunk: file("bad-chunk"),
          unknownKey: file("unknown-key"),
        };
        for (const [key, { owner, bytes }] of Object.entries(f)) {
          if (key === "badChunk" || key === "unknownKey") continue;
          await before.put(bytes, { owner, mediaType: "application/octet-stream" });
        }
        // A chunk sealed for another index: its description opens, its second chunk does not.
        const realSealer = blobProtectionFor(codecsFor(A).codec).sealer!;
        const swapping: BlobSealer = {
          ...realSealer,
          seal: (plain, context) =>
            realSealer.seal(
              plain,
              context[0] === "blob-chunk" && context[3] === "1" ? [...context.slice(0, 3), "9"] : context,
            ),
        };
        await blobsAt(place.backend, A, { sealer: swapping }).put(f.badChunk.bytes, {
          owner: f.badChunk.owner,
          mediaType: "application/octet-stream",
        });
        // Sealed under a key id the keyring does not hold (names under ka: it is found, and does not open).
        const unknown = blobProtectionFor(codecsFor({ current: "kz", keys: { kz: randomBytes(32) } }).codec).sealer!;
        await blobsAt(place.backend, A, { sealer: unknown }).put(f.unknownKey.bytes, {
          owner: f.unknownKey.owner,
          mediaType: "application/octet-stream",
        });

        // A read started before the run, one chunk taken.
        const reading = await app.get(sha(f.reader.bytes), { owner: "reader" });
        const reader = reading!.stream.getReader();
        const firstPart = await reader.read();

        const ownerOf = (stored: string) => names.readOwner(stored);
        let putAt = 0;
        const newcomer = file("newcomer");
        const migrating = blobsAt(
          hooked(place.backend, async ({ owner }) => {
            switch (ownerOf(owner)) {
              case "putter":
                putAt = Date.now() + 60_000;
                await blobsAt(place.backend, AB, { ownerKey: "ka" }).put(f.putter.bytes, {
                  owner: "putter",
                  mediaType: "application/octet-stream",
                });
                await place.backend.touch(owner, names.hash(sha(f.putter.bytes)), putAt);
                break;
              case "deleter":
                expect(await app.delete(sha(f.deleter.bytes), { owner: "deleter" })).toBe(true);
                break;
              case "sweeper":
                await app.sweep({ owner: "sweeper", referenced: new Set(), graceMs: 0 });
                break;
              case "erased":
                await app.eraseOwner("erased");
                await app.put(newcomer.bytes, { owner: "newcomer", mediaType: "application/octet-stream" });
                break;
            }
          }),
          AB,
          { ownerKey: "ka" },
        );
        const report = await migrating.reencrypt();
        expect(report).toMatchObject({ rewritten: 3, failed: 2, vanished: 3 }); // reader, putter, quiet; deleter, sweeper, erased
        const failures = report.failures.map((failure) => ({ ...failure, message: undefined }));
        expect(failures).toEqual(
          expect.arrayContaining([
            { owner: "bad-chunk", hash: sha(f.badChunk.bytes), code: "decryption-failed", message: undefined },
            { owner: "unknown-key", hash: sha(f.unknownKey.bytes), code: "decryption-failed", message: undefined },
          ]),
        );
        const text = JSON.stringify(report);
        expect(text).not.toContain(KA.toString("base64"));
        expect(text).not.toContain(KB.toString("base64"));
        expect(report.failures.find((x) => x.owner === "unknown-key")!.message).toContain("kz");

        // The read under way finishes whole and correct, from the new chunks.
        const rest: Uint8Array[] = [firstPart.value!];
        for (;;) {
          const next = await reader.read();
          if (next.done) break;
          rest.push(next.value);
        }
        expect(Buffer.concat(rest).equals(f.reader.bytes)).toBe(true);

        const after = blobsAt(place.backend, AB, { ownerKey: "ka" });
        for (const key of ["reader", "putter", "quiet"] as const) {
          const read = await after.get(sha(f[key].bytes), { owner: f[key].owner });
          expect((await readAll(read!.stream)).equals(f[key].bytes), key).toBe(true);
          const record = await place.backend.record(names.owner(f[key].owner), names.hash(sha(f[key].bytes)));
          expect(blobProtectionFor(codecsFor(AB).codec).sealer!.isCurrent!(record!.meta)).toBe(true);
        }
        // The put meanwhile kept its refreshed time (a sweep spares it).
        const putter = await place.backend.record(names.owner("putter"), names.hash(sha(f.putter.bytes)));
        expect(putter!.touchedAt).toBe(putAt);
        // Deleted, swept and erased meanwhile: still gone.
        expect(await after.has(sha(f.deleter.bytes), { owner: "deleter" })).toBe(false);
        expect(await after.has(sha(f.sweeper.bytes), { owner: "sweeper" })).toBe(false);
        expect(await after.has(sha(f.erased.bytes), { owner: "erased" })).toBe(false);
        expect(await after.usage({ owner: "erased" })).toEqual({ blobs: 0, bytes: 0 });
        // The new file is there.
        expect(await readAll((await after.get(sha(newcomer.bytes), { owner: "newcomer" }))!.stream)).toEqual(
          Buffer.from(newcomer.bytes),
        );
        // The failures are left as they were: the bad chunk still fails, under A.
        const bad = await after.get(sha(f.badChunk.bytes), { owner: "bad-chunk" });
        await expect(readAll(bad!.stream)).rejects.toMatchObject({ code: "decryption-failed" });
        const badRecord = await place.backend.record(names.owner("bad-chunk"), names.hash(sha(f.badChunk.bytes)));
        expect(blobProtectionFor(codecsFor(A).codec).sealer!.isCurrent!(badRecord!.meta)).toBe(true);
        // No orphan chunks of the run remain (the dropped uploads were removed).
        expect(await after.sweep({ allOwners: true, referenced: () => true, graceMs: 0 })).toEqual({
          blobs: 0,
          bytes: 0,
        });
        const again = await after.reencrypt();
        expect(again).toMatchObject({ rewritten: 0, failed: 2 });
      } finally {
        await place.close();
      }
    });

    it.skipIf(kind.name === "memory")("migrateEncryption: sessions and files, counted in its report", async () => {
      const place = await kind.open();
      const url = place.url!;
      await place.store?.close();
      const open = async (keyring: KeyringSpec) => {
        const codecs = codecsFor(keyring);
        const store = await openStore(url, { ...codecs, blobs: { chunkSize: CHUNK } });
        return { store, codecs };
      };
      try {
        const first = await open(A);
        await first.store.save(
          sampleSession("s1") as never,
          { expectedRevision: null, meta: { owner: "ann" } } as never,
        );
        await first.store.blobs!.put(files.big.bytes, { owner: "ann", mediaType: "image/png", name: "scan.png" });
        await first.store.blobs!.put(files.small.bytes, { owner: "bob", mediaType: "text/plain", name: "note.txt" });
        await first.store.close();

        const rotated = await open(AB);
        try {
          const dry = await migrateEncryption(rotated.store, { ...rotated.codecs, mode: "reencrypt", dryRun: true });
          expect(dry.blobs).toMatchObject({ scanned: 2, rewritten: 2, failed: 0 });
          const real = await migrateEncryption(rotated.store, { ...rotated.codecs, mode: "reencrypt" });
          expect(real.blobs).toMatchObject({ scanned: 2, rewritten: 2, current: 0, failed: 0 });
          expect(real.failedCount).toBe(0);
          const again = await migrateEncryption(rotated.store, { ...rotated.codecs, mode: "reencrypt" });
          expect(again.blobs).toMatchObject({ rewritten: 0, current: 2 });
          const skipped = await migrateEncryption(rotated.store, {
            ...rotated.codecs,
            mode: "reencrypt",
            blobs: false,
          });
          expect(skipped.blobs).toBeUndefined();
        } finally {
          await rotated.store.close();
        }
        const onlyB = await open(B);
        try {
          for (const file of [files.big, files.small]) {
            const read = await onlyB.store.blobs!.get(sha(file.bytes), { owner: file.owner! });
            expect(read!.info).toMatchObject({ name: file.name, mediaType: file.mediaType });
            expect((await readAll(read!.stream)).equals(Buffer.from(file.bytes))).toBe(true);
          }
        } finally {
          await onlyB.store.close();
        }
      } finally {
        await place.close().catch(() => {});
      }
    });
  });
}

describe("a store whose blobs are not encrypted", () => {
  let backend: MemoryBlobBackend;
  beforeAll(() => {
    backend = new MemoryBlobBackend();
  });
  afterAll(async () => backend.close());
  it("has nothing to re-encrypt and is left as it is", async () => {
    const plain = new ChunkedBlobStore({ backend, where: "memory", chunkSize: CHUNK });
    await plain.put(files.big.bytes, { owner: "ann", mediaType: "image/png" });
    const before = await backend.list(null, undefined, 10);
    expect(await plain.reencrypt()).toMatchObject({ scanned: 0, rewritten: 0, failed: 0 });
    expect(await backend.list(null, undefined, 10)).toEqual(before);
  });
});
