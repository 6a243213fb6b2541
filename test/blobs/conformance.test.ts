/**
 * The blob clauses of the store contract on the blob stores kept outside a session store's own
 * backend (`openStore(url, { blobs: { url } })`): a folder on disk, plain and encrypted. The
 * backends' own blobs run in test/stores/conformance*.test.ts with the rest of the contract.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as vitest from "vitest";
import { encryptedSessionCodec, openStore, type SessionStore } from "../../src/stores.js";
import { storeConformance } from "../../src/testing.js";

const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };

for (const encrypted of [false, true]) {
  const folders = new Map<SessionStore, string>();
  storeConformance({
    name: `memory store, blobs in a folder${encrypted ? ", encrypted" : ""}`,
    runner: vitest,
    async open({ codec, messageCodec, blobs }) {
      const dir = mkdtempSync(join(tmpdir(), "statebag-blobs-"));
      const store = await openStore("memory:", {
        codec: encrypted ? encryptedSessionCodec({ keyring, store: "folder-test", inner: codec }) : codec,
        messageCodec,
        blobs: { ...blobs, url: pathToFileURL(dir).href },
      });
      folders.set(store, dir);
      return store;
    },
    async close(store) {
      await store.close();
      rmSync(folders.get(store) ?? "/nonexistent", { recursive: true, force: true });
      folders.delete(store);
    },
    skip: encrypted ? { verbatimText: "rows are encrypted" } : {},
  });
}

vitest.describe("?blobs= on a store URL", () => {
  vitest.it("keeps the store's blobs in the folder it names, and takes nothing else from the URL", async () => {
    const dir = mkdtempSync(join(tmpdir(), "statebag-blobs-"));
    try {
      const folder = pathToFileURL(join(dir, "files")).href;
      const url = `sqlite:${join(dir, "sessions.db")}?blobs=${encodeURIComponent(folder)}&synchronous=full`;
      const store = await openStore(url);
      try {
        vitest.expect(store.url).not.toContain("blobs=");
        const put = await store.blobs!.put(new Uint8Array([1, 2, 3]), { owner: "ann", mediaType: "text/plain" });
        vitest.expect(readdirSync(join(dir, "files")).length).toBe(1);
        vitest.expect((await store.blobs!.stat(put.hash, { owner: "ann" }))?.size).toBe(3);
      } finally {
        await store.close();
      }
      await vitest
        .expect(openStore(`memory:?blobs=${encodeURIComponent("ftp://x")}`))
        .rejects.toThrow(/names no blob store/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
