/**
 * The contract on blob stores (`store.blobs`): bytes in and out as streams (whole and by range),
 * content addressing and deduplication per owner (concurrent puts of the same bytes too), owners
 * isolated from each other, budgets, failed puts leaving nothing, reads that either finish whole or
 * fail when the blob is erased under them (never end short), and sweeps that spare referenced and
 * recent blobs. Owners are unique per case, so the cases share the suite's store.
 */
import { createHash } from "node:crypto";
import { ConfigurationError } from "../../../index.js";
import { BlobBudgetExceededError, BlobRangeError, type BlobStore, type SessionStore } from "../../../stores.js";
import { sleep, type ContractCase } from "./case.js";
import type { Clause } from "./check.js";

const MiB = 1024 * 1024;

function blobsOf(store: SessionStore, check: Clause): BlobStore {
  const blobs = store.blobs;
  if (!blobs) throw check.violation("the store has no `blobs` (declare skip.blobs)", new Error("no blobs"));
  return blobs;
}

/** `size` bytes of a pattern that differs per `seed` (never all zeros, so a zero-filled read fails). */
function bytes(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  let state = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function same(a: Uint8Array, b: Uint8Array): boolean {
  return (
    Buffer.compare(
      Buffer.from(a.buffer, a.byteOffset, a.byteLength),
      Buffer.from(b.buffer, b.byteOffset, b.byteLength),
    ) === 0
  );
}

/** A web stream giving `data` in pieces of `piece` bytes. */
function webStream(data: Uint8Array, piece: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= data.length) return controller.close();
      controller.enqueue(data.slice(at, at + piece));
      at += piece;
    },
  });
}

async function* pieces(data: Uint8Array, sizes: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  let chunk = 0;
  while (at < data.length) {
    const size = sizes[chunk++ % sizes.length] as number;
    yield data.subarray(at, at + size);
    at += size;
  }
}

/** What the store holds of `owner`: hashes listed (every page) and usage. */
async function holdings(blobs: BlobStore, owner: string | undefined) {
  const hashes: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await blobs.list({ owner, cursor, limit: 2 });
    hashes.push(...page.items.map((item) => item.hash));
    cursor = page.cursor;
  } while (cursor);
  return { hashes: hashes.sort(), usage: await blobs.usage({ owner }) };
}

export const blobCases: ContractCase[] = [
  {
    area: "blobs",
    clause:
      "put stores bytes from a Uint8Array, a web stream or an async iterable; get streams them back whole and verified",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const large = bytes(MiB + 12_345, 1);
      const small = bytes(1000, 2);
      const empty = new Uint8Array(0);
      const fromArray = await blobs.put(large, { owner, mediaType: "image/png", name: "photo.png" });
      check.equal(
        { ...fromArray, createdAt: typeof fromArray.createdAt },
        {
          hash: sha256(large),
          size: large.length,
          mediaType: "image/png",
          name: "photo.png",
          createdAt: "string",
          created: true,
        },
        "put's result: the SHA-256, the size, the media type and name, created",
      );
      check.ok(!Number.isNaN(Date.parse(fromArray.createdAt)), "createdAt is an ISO time");
      const fromStream = await blobs.put(webStream(small, 333), { owner, mediaType: "application/pdf" });
      check.equal(fromStream.hash, sha256(small), "a web stream's bytes hash as given");
      const other = bytes(300_001, 3);
      const fromIterable = await blobs.put(pieces(other, [1, 7, 65_536, 100_000, 3]), {
        owner,
        mediaType: "audio/wav",
      });
      check.equal([fromIterable.hash, fromIterable.size], [sha256(other), other.length], "an async iterable's bytes");
      const none = await blobs.put(empty, { owner, mediaType: "text/plain" });
      check.equal([none.hash, none.size], [sha256(empty), 0], "an empty blob");
      for (const [data, hash, what] of [
        [large, fromArray.hash, "the large blob"],
        [small, fromStream.hash, "the small blob"],
        [other, fromIterable.hash, "the iterable's blob"],
        [empty, none.hash, "the empty blob"],
      ] as const) {
        const read = await blobs.get(hash, { owner });
        check.ok(read, `get finds ${what}`);
        check.equal(
          [read!.start, read!.end, read!.info.size],
          [0, data.length, data.length],
          `${what}: start, end, size`,
        );
        check.ok(same(await readAll(read!.stream), data), `${what} reads back byte for byte`);
        check.equal(await blobs.has(hash, { owner }), true, `has ${what}`);
      }
      check.equal(
        await blobs.stat(fromArray.hash, { owner }),
        {
          hash: fromArray.hash,
          size: large.length,
          mediaType: "image/png",
          name: "photo.png",
          createdAt: fromArray.createdAt,
        },
        "stat describes the blob as put did",
      );
      const listed = await holdings(blobs, owner);
      check.equal(
        listed.hashes,
        [fromArray.hash, fromStream.hash, fromIterable.hash, none.hash].sort(),
        "list pages through the owner's blobs",
      );
      check.equal(
        listed.usage,
        { blobs: 4, bytes: large.length + small.length + other.length },
        "usage counts the owner's blobs and bytes",
      );
      check.equal(await blobs.delete(fromStream.hash, { owner }), true, "delete says the blob was there");
      check.equal(await blobs.get(fromStream.hash, { owner }), undefined, "a deleted blob is gone");
      check.equal(await blobs.delete(fromStream.hash, { owner }), false, "deleting it again says it was not there");
      await check.rejects(blobs.get("not-a-hash", { owner }), ConfigurationError, "a malformed hash is refused");
      await check.rejects(
        blobs.put(small, { owner, mediaType: "not a media type" }),
        ConfigurationError,
        "a malformed media type is refused",
      );
      check.equal(
        await blobs.eraseOwner(owner),
        { blobs: 3, bytes: large.length + other.length },
        "eraseOwner's count",
      );
    },
  },
  {
    area: "blobs",
    clause:
      "range reads return exactly the bytes asked for, across chunk boundaries; a start past the end is a BlobRangeError",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const data = bytes(700_000, 4);
      const { hash } = await blobs.put(data, { owner, mediaType: "video/mp4" });
      for (const [start, end] of [
        [0, 1],
        [0, 262_144],
        [262_143, 262_145],
        [100, 600_000],
        [524_288, 700_000],
        [699_999, 700_000],
        [5, 5],
      ] as const) {
        const read = await blobs.get(hash, { owner, range: { start, end } });
        check.equal([read?.start, read?.end], [start, end], `range ${start}-${end}: start and end`);
        check.ok(same(await readAll(read!.stream), data.subarray(start, end)), `range ${start}-${end}: the bytes`);
      }
      const open = await blobs.get(hash, { owner, range: { start: 650_000 } });
      check.ok(same(await readAll(open!.stream), data.subarray(650_000)), "a range without an end reads to the end");
      const cut = await blobs.get(hash, { owner, range: { start: 699_000, end: 10_000_000 } });
      check.equal(cut?.end, 700_000, "an end past the size is cut to it");
      check.ok(same(await readAll(cut!.stream), data.subarray(699_000)), "the cut range's bytes");
      await check.rejects(
        blobs.get(hash, { owner, range: { start: 700_000 } }),
        BlobRangeError,
        "a start at the size is outside the blob",
      );
      await check.rejects(
        blobs.get(hash, { owner, range: { start: 10, end: 5 } }),
        ConfigurationError,
        "an end before the start is refused",
      );
      await blobs.eraseOwner(owner);
    },
  },
  {
    area: "blobs",
    clause: "the same bytes put again by the same owner are stored once; the first put's media type and name stay",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const data = bytes(300_000, 5);
      const first = await blobs.put(data, { owner, mediaType: "image/jpeg", name: "a.jpg" });
      const again = await blobs.put(webStream(data, 4096), { owner, mediaType: "image/png", name: "b.png" });
      check.equal(
        { ...again, createdAt: again.createdAt === first.createdAt },
        { ...first, created: false, createdAt: true },
        "the second put returns the stored blob, not created",
      );
      check.equal(await blobs.usage({ owner }), { blobs: 1, bytes: data.length }, "stored once");
      await blobs.eraseOwner(owner);
    },
  },
  {
    area: "blobs",
    clause: "concurrent puts of the same bytes store one blob, and every put returns it",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const data = bytes(600_000, 6);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          blobs.put(webStream(data, 50_000 + i * 1000), { owner, mediaType: "image/gif" }),
        ),
      );
      check.equal(
        results.map((r) => r.hash),
        Array.from({ length: 6 }, () => sha256(data)),
        "every put returns the hash",
      );
      check.equal(results.filter((r) => r.created).length, 1, "exactly one put stored it");
      check.equal(await blobs.usage({ owner }), { blobs: 1, bytes: data.length }, "one blob stored");
      const read = await blobs.get(sha256(data), { owner });
      check.ok(same(await readAll(read!.stream), data), "the stored blob reads back whole");
      await blobs.eraseOwner(owner);
    },
  },
  {
    area: "blobs",
    clause:
      "an owner never sees, reads, deletes or erases another owner's blob; owners with the same bytes have a blob each",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const ann = id("ann");
      const bob = id("bob");
      const data = bytes(10_000, 7);
      const mine = await blobs.put(data, { owner: ann, mediaType: "image/png", name: "ann.png" });
      check.equal(await blobs.get(mine.hash, { owner: bob }), undefined, "another owner's hash is not found by get");
      check.equal(await blobs.stat(mine.hash, { owner: bob }), undefined, "nor by stat");
      check.equal(await blobs.has(mine.hash), false, "nor without an owner");
      check.equal(await blobs.delete(mine.hash, { owner: bob }), false, "another owner's delete finds nothing");
      check.equal((await blobs.list({ owner: bob })).items, [], "another owner lists nothing");
      const theirs = await blobs.put(data, { owner: bob, mediaType: "text/plain", name: "bob.txt" });
      check.equal(
        [theirs.created, theirs.mediaType],
        [true, "text/plain"],
        "the same bytes for another owner: a blob of its own",
      );
      check.equal(await blobs.eraseOwner(bob), { blobs: 1, bytes: data.length }, "erasing one owner");
      check.equal((await blobs.stat(mine.hash, { owner: ann }))?.name, "ann.png", "leaves the other's blob");
      check.ok(same(await readAll((await blobs.get(mine.hash, { owner: ann }))!.stream), data), "readable as before");
      check.equal(await blobs.eraseOwner(bob), { blobs: 0, bytes: 0 }, "erasing again finds nothing");
      await blobs.eraseOwner(ann);
    },
  },
  {
    area: "blobs",
    clause:
      "a put past the owner's or the store's budget is a BlobBudgetExceededError and keeps nothing; stored bytes put again pass",
    requires: ["blobs"],
    async run({ open, close, id, check }) {
      const store = await open({ blobs: { maxBytesPerOwner: 500_000, maxBytes: 800_000 } });
      try {
        const blobs = blobsOf(store, check);
        check.equal(
          blobs.limits,
          { maxBytesPerOwner: 500_000, maxBytes: 800_000 },
          "the budgets open() was given (pass options.blobs to the store)",
        );
        const ann = id("ann");
        const bob = id("bob");
        const kept = bytes(400_000, 8);
        await blobs.put(kept, { owner: ann, mediaType: "image/png" });
        const over = await check.rejects(
          blobs.put(webStream(bytes(200_000, 9), 30_000), { owner: ann, mediaType: "image/png" }),
          BlobBudgetExceededError,
          "a put past the owner's budget",
        );
        check.equal(
          [over.code, over.budget, over.limit],
          ["blob-budget-exceeded", "owner", 500_000],
          "the error says which budget",
        );
        await check.rejects(
          blobs.put(bytes(10, 10), { owner: ann, mediaType: "image/png", size: 200_000 }),
          BlobBudgetExceededError,
          "a declared size past the budget is refused before reading",
        );
        check.equal(
          await blobs.usage({ owner: ann }),
          { blobs: 1, bytes: 400_000 },
          "nothing of the refused puts was kept",
        );
        const again = await blobs.put(webStream(kept, 100_000), { owner: ann, mediaType: "image/png" });
        check.equal(again.created, false, "the owner's stored bytes put again pass (nothing added)");
        await blobs.put(bytes(350_000, 11), { owner: bob, mediaType: "image/png" });
        const store_ = await check.rejects(
          blobs.put(bytes(100_000, 12), { owner: bob, mediaType: "image/png" }),
          BlobBudgetExceededError,
          "a put past the store's budget",
        );
        check.equal(store_.budget, "store", "the error names the store's budget");
        check.equal(await blobs.usage({ allOwners: true }), { blobs: 2, bytes: 750_000 }, "the store's usage");
      } finally {
        await close(store);
      }
    },
  },
  {
    area: "blobs",
    clause: "a put that fails or is aborted midway leaves no blob, no listing entry and no usage",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const data = bytes(900_000, 13);
      async function* failing(): AsyncGenerator<Uint8Array> {
        yield data.subarray(0, 600_000);
        throw new Error("the client went away");
      }
      await check.rejects(
        blobs.put(failing(), { owner, mediaType: "image/png" }),
        Error,
        "a failing source fails the put",
      );
      const controller = new AbortController();
      async function* slow(): AsyncGenerator<Uint8Array> {
        yield data.subarray(0, 300_000);
        controller.abort(new Error("aborted by the test"));
        yield data.subarray(300_000);
      }
      await check.rejects(
        blobs.put(slow(), { owner, mediaType: "image/png", signal: controller.signal }),
        Error,
        "an aborted put fails",
        "aborted by the test",
      );
      await check.rejects(
        blobs.put(data, { owner, mediaType: "image/png", size: data.length + 1 }),
        ConfigurationError,
        "bytes ending before the declared size fail the put",
      );
      check.equal(await blobs.has(sha256(data), { owner }), false, "no blob of the failed puts");
      check.equal(
        await holdings(blobs, owner),
        { hashes: [], usage: { blobs: 0, bytes: 0 } },
        "nothing listed or counted",
      );
      check.equal(
        await blobs.sweep({ owner, referenced: new Set(), graceMs: 0 }),
        { blobs: 0, bytes: 0 },
        "a sweep finds no blob to delete (partial uploads are not blobs)",
      );
    },
  },
  {
    area: "blobs",
    clause:
      "a read under way when the owner is erased either finishes with the whole blob or fails; it never ends short",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const data = bytes(3 * MiB, 14);
      const { hash } = await blobs.put(data, { owner, mediaType: "application/octet-stream" });
      const read = await blobs.get(hash, { owner });
      const reader = read!.stream.getReader();
      const first = await reader.read();
      check.ok(!first.done && first.value.length > 0, "the read gave its first bytes");
      await blobs.eraseOwner(owner);
      let received = first.done ? 0 : first.value.length;
      let failed: unknown;
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          received += value.length;
        }
      } catch (error) {
        failed = error;
      }
      if (failed === undefined) check.equal(received, data.length, "a read that finished returned every byte");
      else check.ok(received < data.length, "a read that failed did so before its end");
      check.equal(await blobs.get(hash, { owner }), undefined, "the erased blob is gone for new reads");
    },
  },
  {
    area: "blobs",
    clause:
      "sweep deletes unreferenced blobs older than the grace window; referenced and recently put (or put again) blobs stay",
    requires: ["blobs"],
    async run({ store, id, check }) {
      const blobs = blobsOf(store, check);
      const owner = id("owner");
      const referenced = await blobs.put(bytes(1000, 15), { owner, mediaType: "image/png" });
      const orphan = await blobs.put(bytes(2000, 16), { owner, mediaType: "image/png" });
      const reput = await blobs.put(bytes(3000, 17), { owner, mediaType: "image/png" });
      const t0 = Date.now();
      check.equal(
        await blobs.sweep({ owner, referenced: new Set([referenced.hash]), graceMs: 60_000 }),
        { blobs: 0, bytes: 0 },
        "within the grace window nothing goes",
      );
      await sleep(120);
      await blobs.put(bytes(3000, 17), { owner, mediaType: "image/png" }); // put again: its grace starts over
      await sleep(60);
      // The window covers the second put of `reput` (about 60 ms ago) but not the first puts (180 ms and more).
      const graceMs = Date.now() - t0 - 90;
      const swept = await blobs.sweep({
        owner,
        referenced: (hash, blobOwner) => blobOwner === owner && hash === referenced.hash,
        graceMs,
      });
      check.equal(swept, { blobs: 1, bytes: 2000 }, "only the unreferenced blob past its grace went");
      check.equal(await blobs.has(orphan.hash, { owner }), false, "the unreferenced blob is gone");
      check.equal(await blobs.has(referenced.hash, { owner }), true, "the referenced blob stays");
      check.equal(await blobs.has(reput.hash, { owner }), true, "the blob put again within the window stays");
      const other = id("other");
      await blobs.put(bytes(500, 18), { owner: other, mediaType: "image/png" });
      await sleep(5);
      check.equal(
        await blobs.sweep({ owner, referenced: new Set(), graceMs: 0 }),
        { blobs: 2, bytes: 4000 },
        "a sweep of one owner",
      );
      check.equal(await blobs.usage({ owner: other }), { blobs: 1, bytes: 500 }, "leaves other owners' blobs");
      await blobs.eraseOwner(other);
    },
  },
  {
    area: "blobs",
    clause:
      "a sweep of every owner asks about each blob with its owner as given (none for blobs of no owner) and keeps what is referenced",
    requires: ["blobs"],
    async run({ open, close, check }) {
      const store = await open();
      try {
        const blobs = blobsOf(store, check);
        const ann = await blobs.put(bytes(1000, 20), { owner: "ann@example.com", mediaType: "image/png" });
        const bob = await blobs.put(bytes(2000, 21), { owner: "bob@example.com", mediaType: "image/png" });
        const none = await blobs.put(bytes(3000, 22), { mediaType: "image/png" });
        await sleep(5);
        const asked: string[] = [];
        const swept = await blobs.sweep({
          allOwners: true,
          graceMs: 0,
          referenced: (hash, owner) => {
            asked.push(`${owner ?? "(none)"} ${hash}`);
            return owner === "bob@example.com";
          },
        });
        check.equal(
          asked.sort(),
          [`(none) ${none.hash}`, `ann@example.com ${ann.hash}`, `bob@example.com ${bob.hash}`].sort(),
          "referenced is asked about every blob, with its owner in plaintext",
        );
        check.equal(swept, { blobs: 2, bytes: 4000 }, "the unreferenced blobs of every owner went");
        check.equal(await blobs.has(bob.hash, { owner: "bob@example.com" }), true, "the referenced one stays");
        check.equal(await blobs.usage({ allOwners: true }), { blobs: 1, bytes: 2000 }, "the store's usage");
        await check.rejects(
          blobs.sweep({ owner: "ann@example.com", allOwners: true, referenced: new Set() }),
          ConfigurationError,
          "owner and allOwners together are refused",
        );
      } finally {
        await close(store);
      }
    },
  },
];
