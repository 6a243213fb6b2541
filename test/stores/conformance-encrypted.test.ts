/**
 * The whole store contract again, on every backend, with every session and message-log row
 * encrypted (AES-256-GCM, bound to the store name, the session id or log id, and the owner): the
 * encrypting codecs wrap the codecs the kit injects, so every clause (CAS, ids, scan, TTL, listing,
 * retention, erasure, message logs, the codec's own clauses) holds through encryption too.
 */
import * as vitest from "vitest";
import { encryptedMessageCodec, encryptedSessionCodec, openStore, type SessionStore } from "../../src/stores.js";
import { storeConformance } from "../../src/testing.js";
import { allBackends, scaleOutBackends } from "./helpers.js";

const keyring = { current: "k2", keys: { k1: Buffer.alloc(32, 1), k2: Buffer.alloc(32, 2) } };

for (const backend of [...allBackends, ...scaleOutBackends]) {
  const cleanups = new Map<SessionStore, () => Promise<void>>();
  storeConformance({
    name: `${backend.name} store, encrypted`,
    runner: vitest,
    async open({ codec, messageCodec, blobs }) {
      const { url, cleanup } = await backend.location();
      try {
        const store = await openStore(url, {
          blobs,
          codec: encryptedSessionCodec({ keyring, store: "conformance", inner: codec }),
          messageCodec: encryptedMessageCodec({
            keyring,
            store: "conformance",
            ...(messageCodec ? { inner: messageCodec } : {}),
          }),
        });
        cleanups.set(store, cleanup);
        return store;
      } catch (error) {
        await cleanup();
        throw error;
      }
    },
    // The stored text is the encryption envelope (its bytes are tested in test/encryption/).
    skip: {
      verbatimText: "rows are encrypted: the stored text is the envelope, not the codec's plain text",
      ...(["memory", "sqlite", "sqlite-better", "postgres", "postgres-pgbouncer", "redis", "redis-cluster"].includes(
        backend.name,
      )
        ? {}
        : { blobs: "blobs on this backend land next" }),
    },
    async close(store) {
      try {
        await store.close();
      } finally {
        await cleanups.get(store)?.();
        cleanups.delete(store);
      }
    },
  });
}
