/**
 * The blob clauses of the store contract on the blob stores kept outside a session store's own
 * backend (`openStore(url, { blobs: { url } })`): a folder on disk, plain and encrypted. The
 * backends' own blobs run in test/stores/conformance*.test.ts with the rest of the contract.
 */
import { mkdtempSync, rmSync } from "node:fs";
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
