/**
 * Tracing and key rotation compose: `migrateEncryption` through a traced, encrypted SQLite store
 * re-encrypts the store's files too (the traced blob store passes `reencrypt` on, with a span of
 * counts: never an owner, hash or byte), and a store holding only the new key reads them back.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySpanExporter, BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { encryptionCodecs, type KeyringSpec } from "../../src/runtime/stores/encryption/index.js";
import { migrateEncryption } from "../../src/runtime/stores/encryption/migrate.js";

const KA = randomBytes(32);
const KB = randomBytes(32);
const A: KeyringSpec = { current: "ka", keys: { ka: KA } };
const AB: KeyringSpec = { current: "kb", keys: { ka: KA, kb: KB } };
const B: KeyringSpec = { current: "kb", keys: { kb: KB } };
const OWNER = "tenant-SECRET-owner";

const dir = mkdtempSync(join(tmpdir(), "statebag-traced-reencrypt-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part));
  return Buffer.concat(parts);
}

describe("migrate --reencrypt through a traced store", () => {
  it("rewrites the files under the new key, with a span of counts, and the new key alone reads them", async () => {
    const url = `sqlite:${join(dir, "app.db")}`;
    const bytes = randomBytes(300_000);
    const before = await openStore(url, encryptionCodecs({ keyring: A, store: "app" }));
    const put = await before.blobs!.put(bytes, { owner: OWNER, mediaType: "application/octet-stream" });
    await before.close();

    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const codecs = encryptionCodecs({ keyring: AB, store: "app" });
    const traced = await openStore(url, { ...codecs, tracing: { tracerProvider: provider } });
    const report = await migrateEncryption(traced, { ...codecs, mode: "reencrypt" });
    await traced.close();
    expect(report.failedCount).toBe(0);
    expect(report.blobs).toMatchObject({ scanned: 1, rewritten: 1, failed: 0 });
    const [span] = exporter.getFinishedSpans().filter((s) => s.name === "statebag.blob.reencrypt");
    expect(span?.attributes).toMatchObject({
      "statebag.blobs.scanned": 1,
      "statebag.blobs.rewritten": 1,
      "statebag.blobs.failed": 0,
    });
    expect(JSON.stringify(span?.attributes)).not.toContain("SECRET");
    expect(JSON.stringify(span?.attributes)).not.toContain(put.hash);

    const after = await openStore(url, encryptionCodecs({ keyring: B, store: "app" }));
    try {
      const read = await after.blobs!.get(put.hash, { owner: OWNER });
      expect(read).toBeDefined();
      expect((await readAll(read!.stream)).equals(bytes)).toBe(true);
    } finally {
      await after.close();
    }
  });
});
