import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { BlobBudgetExceededError, memoryBlobStore } from "../../src/runtime/blobs/index.js";

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of stream as unknown as AsyncIterable<Uint8Array>) parts.push(part);
  return Buffer.concat(parts);
}

describe("memory blob store", () => {
  it("puts, dedupes, reads whole and by range, budgets", async () => {
    const blobs = memoryBlobStore({ chunkSize: 1024, limits: { maxBytesPerOwner: 10_000 } });
    const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
    const put = await blobs.put(data, { owner: "ann", mediaType: "image/png", name: "a.png" });
    expect(put).toMatchObject({ hash: createHash("sha256").update(data).digest("hex"), size: 5000, created: true });
    const again = await blobs.put(data, { owner: "ann", mediaType: "text/plain" });
    expect(again).toMatchObject({ created: false, mediaType: "image/png", name: "a.png" });
    const read = await blobs.get(put.hash, { owner: "ann" });
    expect(Buffer.compare(await bytesOf(read!.stream), data)).toBe(0);
    const ranged = await blobs.get(put.hash, { owner: "ann", range: { start: 1000, end: 3100 } });
    expect(Buffer.compare(await bytesOf(ranged!.stream), data.subarray(1000, 3100))).toBe(0);
    expect(await blobs.get(put.hash, { owner: "bob" })).toBeUndefined();
    await expect(blobs.put(Buffer.alloc(6000, 1), { owner: "ann", mediaType: "x/y" })).rejects.toBeInstanceOf(
      BlobBudgetExceededError,
    );
    expect(await blobs.usage({ owner: "ann" })).toEqual({ blobs: 1, bytes: 5000 });
  });
});
