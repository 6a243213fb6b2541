/**
 * Erasure between a key rotation and its re-encryption: an owner's files put under the old key keep
 * the owner's old keyed form until `migrate --reencrypt` moves them, and erasing the owner in that
 * window must erase them too (the same person), on every session-store backend.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { encryptionCodecs, type KeyringSpec } from "../../src/runtime/stores/encryption/index.js";
import { available, postgresBackend, redisBackend, sqliteBackend } from "../stores/helpers.js";

const KA = randomBytes(32);
const KB = randomBytes(32);
const A: KeyringSpec = { current: "ka", keys: { ka: KA } };
const AB: KeyringSpec = { current: "kb", keys: { ka: KA, kb: KB } };

for (const backend of [sqliteBackend, postgresBackend(), redisBackend()].filter(available)) {
  describe(`erasing an owner after a key rotation, before re-encryption, on ${backend.name}`, () => {
    let url: string;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      ({ url, cleanup } = await backend.location());
    });
    afterAll(async () => cleanup());

    it("erases the files still under the owner's old form, and only that owner's", async () => {
      const before = await openStore(url, encryptionCodecs({ keyring: A, store: "app" }));
      const old = await before.blobs!.put(randomBytes(5000), { owner: "alice", mediaType: "image/png" });
      const kept = await before.blobs!.put(randomBytes(5000), { owner: "bob", mediaType: "image/png" });
      await before.close();

      const rotated = await openStore(url, encryptionCodecs({ keyring: AB, store: "app" }));
      try {
        const fresh = await rotated.blobs!.put(randomBytes(6000), { owner: "alice", mediaType: "image/png" });
        expect(await rotated.blobs!.eraseOwner("alice")).toEqual({ blobs: 2, bytes: 11_000 });
        expect(await rotated.blobs!.has(fresh.hash, { owner: "alice" })).toBe(false);
        expect((await rotated.blobs!.usage({ allOwners: true })).blobs).toBe(1);
      } finally {
        await rotated.close();
      }
      // Under the old key's eyes too: alice's file is gone, bob's is there.
      const oldEyes = await openStore(url, encryptionCodecs({ keyring: A, store: "app" }));
      try {
        expect(await oldEyes.blobs!.has(old.hash, { owner: "alice" })).toBe(false);
        expect(await oldEyes.blobs!.has(kept.hash, { owner: "bob" })).toBe(true);
      } finally {
        await oldEyes.close();
      }
    });
  });
}
