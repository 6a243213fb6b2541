/**
 * Blobs of a store that encrypts its sessions: nothing of the file (bytes, name, media type), its
 * owner or its hash is stored in plaintext, and a chunk or record changed, moved to another owner
 * or swapped with another blob's fails to open (decryption-failed) instead of returning bytes.
 * Checked on the rows of an encrypted SQLite file.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { encryptedSessionCodec } from "../../src/runtime/stores/encryption/index.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";

const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 9) } };
const secret = Buffer.from("SECRET-SCAN-OF-A-PASSPORT ".repeat(40_000));
const hash = createHash("sha256").update(secret).digest("hex");

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  return Buffer.concat(parts);
}

let dir: string;
let store: SessionStore;
let raw: DatabaseSync;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "statebag-blob-enc-"));
  store = await openStore(`sqlite:${join(dir, "s.db")}`, {
    codec: encryptedSessionCodec({ keyring, store: "app" }),
  });
  raw = new DatabaseSync(join(dir, "s.db"));
});
afterEach(async () => {
  raw.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const rows = () =>
  raw.prepare("SELECT owner, hash, upload_id, meta FROM statebag_blobs ORDER BY owner").all() as {
    owner: string;
    hash: string;
    upload_id: string;
    meta: Uint8Array;
  }[];

describe("blobs of an encrypted store", () => {
  it("keep no plaintext: bytes, name, media type, owner and hash are sealed or keyed", async () => {
    await store.blobs!.put(secret, { owner: "ann@example.com", mediaType: "image/x-passport", name: "passport.png" });
    const chunks = raw.prepare("SELECT data, owner FROM statebag_blob_chunks").all() as {
      data: Uint8Array;
      owner: string;
    }[];
    expect(chunks.length).toBe(Math.ceil(secret.length / (256 * 1024)));
    for (const chunk of chunks) {
      expect(Buffer.from(chunk.data).includes("SECRET")).toBe(false);
      expect(chunk.owner).not.toContain("ann@example");
    }
    const [row] = rows();
    expect(row!.owner).not.toContain("ann@example"); // a keyed form may spell "ann" by chance
    expect(row!.hash).not.toContain(hash.slice(0, 16));
    const meta = Buffer.from(row!.meta).toString("latin1");
    expect(meta).not.toContain("passport");
    // Read back through the store, all is there.
    const read = await store.blobs!.get(hash, { owner: "ann@example.com" });
    expect(read!.info).toMatchObject({ name: "passport.png", mediaType: "image/x-passport" });
    expect((await readAll(read!.stream)).equals(secret)).toBe(true);
    expect((await store.blobs!.list({ owner: "ann@example.com" })).items.map((i) => i.hash)).toEqual([hash]);
  });

  it("a changed chunk fails to open (decryption-failed), never returning bytes", async () => {
    await store.blobs!.put(secret, { owner: "ann", mediaType: "image/png" });
    raw.exec(
      "UPDATE statebag_blob_chunks SET data = CAST(substr(data, 1, 100) || X'00' || substr(data, 102) AS BLOB) WHERE seq = 1",
    );
    const read = await store.blobs!.get(hash, { owner: "ann" });
    await expect(readAll(read!.stream)).rejects.toMatchObject({ code: "decryption-failed" });
    const ranged = await store.blobs!.get(hash, { owner: "ann", range: { start: 300_000, end: 300_010 } });
    await expect(readAll(ranged!.stream)).rejects.toMatchObject({ code: "decryption-failed" });
  });

  it("a record moved to another owner, or pointed at another blob's chunks, fails to open", async () => {
    const other = Buffer.from("another file ".repeat(50_000));
    const otherHash = createHash("sha256").update(other).digest("hex");
    await store.blobs!.put(secret, { owner: "ann", mediaType: "image/png" });
    const [annSecret] = rows();
    await store.blobs!.put(other, { owner: "bob", mediaType: "image/png" });
    const bobOther = rows().find((row) => row.owner !== annSecret!.owner)!;
    await store.blobs!.put(other, { owner: "ann", mediaType: "image/png" });
    const annOther = rows().find((row) => row.owner === annSecret!.owner && row.hash !== annSecret!.hash)!;
    // Ann's record of `secret` moved to bob (bob's keyed owner form): bob would now "have" it.
    raw
      .prepare("UPDATE statebag_blobs SET owner = ? WHERE owner = ? AND hash = ?")
      .run(bobOther.owner, annSecret!.owner, annSecret!.hash);
    await expect(store.blobs!.stat(hash, { owner: "bob" })).rejects.toMatchObject({ code: "decryption-failed" });
    await expect(store.blobs!.get(hash, { owner: "bob" })).rejects.toMatchObject({ code: "decryption-failed" });
    // Ann's record of `other` pointed at bob's chunks of the same bytes.
    raw
      .prepare("UPDATE statebag_blobs SET upload_id = ? WHERE owner = ? AND hash = ?")
      .run(bobOther.upload_id, annOther.owner, annOther.hash);
    await expect(store.blobs!.get(otherHash, { owner: "ann" })).rejects.toMatchObject({ code: "decryption-failed" });
  });

  it("a store opened with another keyring cannot read them", async () => {
    await store.blobs!.put(secret, { owner: "ann", mediaType: "image/png" });
    const other = await openStore(`sqlite:${join(dir, "s.db")}`, {
      codec: encryptedSessionCodec({ keyring: { current: "k9", keys: { k9: Buffer.alloc(32, 3) } }, store: "app" }),
    });
    try {
      // Its keyed forms differ: the blob is simply not found under its owner and hash...
      expect(await other.blobs!.get(hash, { owner: "ann" })).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});
