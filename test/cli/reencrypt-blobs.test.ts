/**
 * `statebag migrate --reencrypt` end to end on a store with files (blobs): after a key rotation the
 * dry run counts the files and writes nothing, the run rewrites them under the new key, a file
 * that does not open is reported by owner and hash (exit 1) and left, and a keyring of the new key
 * alone reads every other file byte for byte. No key material in any output.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { encryptionCodecs } from "../../src/runtime/stores/encryption/index.js";
import { openStore } from "../../src/stores.js";
import { cli, sampleSession, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-reencrypt-blobs-");
afterAll(() => tmp.cleanup());

const K1 = randomBytes(32);
const K2 = randomBytes(32);
const STORE_NAME = "chats";

function keyringFile(name: string, keys: Record<string, Buffer>, current: string): string {
  const path = tmp.file(name, {
    current,
    keys: Object.fromEntries(Object.entries(keys).map(([k, v]) => [k, v.toString("base64")])),
    store: STORE_NAME,
  });
  chmodSync(path, 0o600);
  return path;
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const photo = randomBytes(700 * 1024); // three chunks of 256 KiB
const note = Buffer.from("a small note");
const damaged = randomBytes(300 * 1024);

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  return Buffer.concat(parts);
}

/** The key ids in the headers of every stored blob description and chunk. */
function blobKids(path: string): string[] {
  const db = new DatabaseSync(path);
  try {
    const rows = [
      ...(db.prepare("SELECT meta AS b FROM statebag_blobs").all() as { b: Uint8Array }[]),
      ...(db.prepare("SELECT data AS b FROM statebag_blob_chunks").all() as { b: Uint8Array }[]),
    ];
    return rows.map(({ b }) => Buffer.from(b).toString("latin1", 2, 2 + (b[1] ?? 0)));
  } finally {
    db.close();
  }
}

describe("statebag migrate --reencrypt with files", () => {
  it("rewrites every file under the new key; a damaged one is reported and left; the old key can go", async () => {
    const path = join(tmp.dir, "chats.db");
    const url = `sqlite:${path}`;
    const first = await openStore(
      url,
      encryptionCodecs({ keyring: { current: "k1", keys: { k1: K1 } }, store: STORE_NAME }),
    );
    await first.setup();
    await first.save(sampleSession("chat-1"), { expectedRevision: null, meta: { owner: "alice" } } as never);
    await first.blobs!.put(photo, { owner: "alice", mediaType: "image/jpeg", name: "photo.jpg" });
    await first.blobs!.put(note, { mediaType: "text/plain" });
    await first.blobs!.put(damaged, { owner: "bob", mediaType: "application/pdf" });
    await first.close();
    // One chunk of bob's file changed on disk.
    const db = new DatabaseSync(path);
    const bobsUpload = (db.prepare("SELECT upload_id FROM statebag_blobs").all() as { upload_id: string }[]).map(
      (r) => r.upload_id,
    );
    const chunkCounts = bobsUpload.map(
      (id) =>
        (db.prepare("SELECT count(*) AS n FROM statebag_blob_chunks WHERE upload_id = ?").get(id) as { n: number }).n,
    );
    const damagedUpload = bobsUpload[chunkCounts.indexOf(2)]!; // 300 KiB: the only file of two chunks
    db.prepare(
      "UPDATE statebag_blob_chunks SET data = CAST(substr(data, 1, 60) || X'00' || substr(data, 62) AS BLOB) WHERE upload_id = ? AND seq = 1",
    ).run(damagedUpload);
    db.close();
    expect(new Set(blobKids(path))).toEqual(new Set(["k1"]));

    const rotated = keyringFile("k12.json", { k1: K1, k2: K2 }, "k2");
    const dry = await cli(["migrate", "--reencrypt", "--dry-run", "--store", url, "--keyring", rotated, "--json"]);
    expect(dry.json()).toMatchObject({ dryRun: true, blobs: { scanned: 3, rewritten: 3, failed: 0 } });
    expect(new Set(blobKids(path))).toEqual(new Set(["k1"]));

    const real = await cli(["migrate", "--reencrypt", "--store", url, "--keyring", rotated]);
    expect(real.code).toBe(1);
    expect(real.stdout).toMatch(/files \(blobs\): 3 scanned, 2 rewritten, 0 already current, 1 failed/);
    expect(real.stdout).toContain(`file ${sha(damaged)} of owner bob`);
    const json = (await cli(["migrate", "--reencrypt", "--store", url, "--keyring", rotated, "--json"])).json();
    expect(json).toMatchObject({ ok: false, blobs: { scanned: 3, rewritten: 0, current: 2, failed: 1 } });
    expect(json.failed).toEqual([
      expect.objectContaining({ id: "blob", blob: { hash: sha(damaged), owner: "bob" }, code: "decryption-failed" }),
    ]);
    for (const output of [dry.stdout, dry.stderr, real.stdout, real.stderr, JSON.stringify(json)]) {
      expect(output).not.toContain(K1.toString("base64"));
      expect(output).not.toContain(K2.toString("base64"));
    }
    // Only the damaged file's description and chunks are still under k1.
    const kids = blobKids(path);
    expect(kids.filter((k) => k === "k1")).toHaveLength(3);

    const onlyK2 = await openStore(
      url,
      encryptionCodecs({ keyring: { current: "k2", keys: { k2: K2 } }, store: STORE_NAME }),
    );
    try {
      const read = await onlyK2.blobs!.get(sha(photo), { owner: "alice" });
      expect(read!.info).toMatchObject({ name: "photo.jpg", mediaType: "image/jpeg" });
      expect((await readAll(read!.stream)).equals(photo)).toBe(true);
      expect((await readAll((await onlyK2.blobs!.get(sha(note)))!.stream)).equals(note)).toBe(true);
      expect((await onlyK2.get("chat-1"))?.meta.owner).toBe("alice");
    } finally {
      await onlyK2.close();
    }
  });
});
