/**
 * Child process for the kill test: puts an endless blob slowly (64 KiB pieces, a short pause
 * between them), printing "writing" once several chunks are stored. The parent SIGKILLs it there.
 *
 *   node --import tsx slow-put.ts <storeUrl> <owner> [<blobsUrl>]
 */
import { openStore } from "../../../src/runtime/open-store/open-store.js";

const [url, owner, blobsUrl] = process.argv.slice(2);
const store = await openStore(url, blobsUrl ? { blobs: { url: blobsUrl } } : {});
const piece = new Uint8Array(64 * 1024).fill(7);
async function* endless(): AsyncGenerator<Uint8Array> {
  for (let i = 0; ; i++) {
    yield piece;
    if (i === 40) process.stdout.write("writing\n");
    if (i > 40) await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
await store.blobs!.put(endless(), { owner, mediaType: "application/octet-stream" });
