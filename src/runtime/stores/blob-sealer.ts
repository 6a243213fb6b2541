/**
 * Blob encryption for a store that encrypts its sessions: AES-256-GCM under the store's keyring,
 * as bytes (a chunk of 256 KiB grows by a few dozen bytes, no base64).
 *
 * Layout of a sealed chunk or description:
 *
 *   [1: version 1][1: key id length][key id][6: store fp][6: owner fp][12: iv][ciphertext][16: tag]
 *
 * The associated data (not stored) is the JSON array `["statebag.blob", 1, kid, store, ...context]`
 * where the context is what the blob engine binds: `["blob-chunk", owner, uploadId, index]` or
 * `["blob-meta", owner, hash]`. The fingerprints (HMAC-SHA256 under the keyring's fingerprint key,
 * cut to 48 bits) only choose the error's wording when the tag check fails: another store, another
 * owner, or changed bytes. Plaintext is never accepted in place of a sealed chunk.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import type { BlobNames, BlobSealer } from "../blobs/chunked.js";
import type { EncryptionInfo } from "./encryption/codec.js";
import { DecryptionError } from "./encryption/errors.js";
import type { DerivedKey, Keyring } from "./encryption/keyring.js";
import { metaProtectionOf } from "./listing.js";
import type { SessionCodec } from "./types.js";

const VERSION = 1;
const FP = 6;
const IV = 12;
const TAG = 16;

function fingerprint(key: DerivedKey, label: string, value: string): Buffer {
  return createHmac("sha256", key.fingerprint).update(`blob-${label}\u0000${value}`).digest().subarray(0, FP);
}

function associated(kid: string, store: string, context: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify(["statebag.blob", VERSION, kid, store, ...context]));
}

/** A sealer for `keyring`, bound to the store name `store`. */
export function keyringBlobSealer(keyring: Keyring, store: string): BlobSealer {
  return {
    seal(plain, context) {
      const key = keyring.key(keyring.current)!;
      const kid = Buffer.from(key.kid, "latin1");
      const iv = randomBytes(IV);
      const cipher = createCipheriv("aes-256-gcm", key.cipher, iv);
      cipher.setAAD(associated(key.kid, store, context));
      const head = Buffer.concat([
        Buffer.from([VERSION, kid.length]),
        kid,
        fingerprint(key, "store", store),
        fingerprint(key, "owner", context[1] ?? ""),
        iv,
      ]);
      const body = cipher.update(plain);
      const rest = cipher.final();
      return Buffer.concat([head, body, rest, cipher.getAuthTag()]);
    },
    tampered: (what) => new DecryptionError({ reason: "tampered", what }),
    isCurrent(sealed) {
      // The key id in the header (its authenticity is checked by `open`; a changed id fails there).
      if (!(sealed instanceof Uint8Array) || sealed[0] !== VERSION) return false;
      const kidLength = sealed[1] ?? 0;
      if (sealed.length < 2 + kidLength) return false;
      return Buffer.from(sealed.buffer, sealed.byteOffset + 2, kidLength).toString("latin1") === keyring.current;
    },
    open(sealed, context, what) {
      if (!(sealed instanceof Uint8Array)) throw new DecryptionError({ reason: "malformed", what });
      const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
      const kidLength = bytes[1] ?? 0;
      const headLength = 2 + kidLength + 2 * FP + IV;
      if (bytes.length < headLength + TAG || bytes[0] !== VERSION || kidLength === 0)
        throw new DecryptionError({ reason: bytes[0] === VERSION ? "malformed" : "plaintext", what });
      const kid = bytes.toString("latin1", 2, 2 + kidLength);
      const key = keyring.key(kid);
      if (!key) throw new DecryptionError({ reason: "missing-key", kid, what });
      let at = 2 + kidLength;
      const storeFp = bytes.subarray(at, (at += FP));
      const ownerFp = bytes.subarray(at, (at += FP));
      const iv = bytes.subarray(at, (at += IV));
      const decipher = createDecipheriv("aes-256-gcm", key.cipher, iv);
      decipher.setAAD(associated(kid, store, context));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG));
      try {
        const plain = decipher.update(bytes.subarray(at, bytes.length - TAG));
        const rest = decipher.final();
        return rest.length > 0 ? Buffer.concat([plain, rest]) : plain;
      } catch {
        const mismatched: ("store" | "owner")[] = [];
        if (!storeFp.equals(fingerprint(key, "store", store))) mismatched.push("store");
        if (!ownerFp.equals(fingerprint(key, "owner", context[1] ?? ""))) mismatched.push("owner");
        throw mismatched.length > 0
          ? new DecryptionError({ reason: "binding", kid, mismatched, what })
          : new DecryptionError({ reason: "tampered", kid, what: `${what} (or it was moved from another blob)` });
      }
    },
  };
}

/**
 * How a store whose session codec encrypts protects its blobs: chunks and descriptions sealed with
 * its keyring, and owners and hashes stored in the keyed form its metadata protection gives owners
 * (nothing for a plain store).
 */
export function blobProtectionFor(codec: SessionCodec | undefined): { sealer?: BlobSealer; names?: BlobNames } {
  const encryption = (codec as { encryption?: EncryptionInfo } | undefined)?.encryption;
  if (!encryption?.keyring || typeof encryption.store !== "string") return {};
  const sealer = keyringBlobSealer(encryption.keyring, encryption.store);
  const protection = codec ? metaProtectionOf(codec) : undefined;
  if (!protection) return { sealer };
  return {
    sealer,
    names: {
      owner: (owner) => protection.owner(owner),
      readOwner: (stored) => protection.readOwner(stored),
      // A hash has the owner's form under another label, so a hash never reads as an owner.
      hash: (hash) => protection.owner(`blob-hash:${hash}`),
      readHash: (stored) => protection.readOwner(stored).replace(/^blob-hash:/, ""),
      otherOwners: (owner) => protection.otherForms(owner),
    },
  };
}
