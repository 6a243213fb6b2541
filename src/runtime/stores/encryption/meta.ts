/**
 * Session metadata at rest under an encrypting codec (issue #32): a store whose session codec
 * carries a `SessionMetaProtection` (every `encryptedSessionCodec` does, unless
 * `protectMeta: false`) keeps no owner id and no title in plaintext.
 *
 * - The owner column (SQL) / owner field and owner index keys (Redis) hold a deterministic,
 *   authenticated form of the owner: `o1.<kid>.<base64url(siv ‖ ct)>`, with
 *   siv = HMAC-SHA256(kMac, owner) cut to 16 bytes and ct = AES-256-CTR(kEnc, iv = siv, owner
 *   padded to 16 bytes), kMac and kEnc derived from the key `ownerKey` names (SIV construction).
 *   The same owner always has the same form, so `list({ owner })`, the owner indexes, erasure and
 *   retention work by equality on it, and nothing about the owner shows without the key but the
 *   length rounded up to 16 bytes. The store reads the owner back (`get`, `scan`, `list`) by
 *   decrypting it and checking the HMAC. Its key is chosen by `ownerKey` (default: the keyring's
 *   `current` at the time the codec is built): keep it pinned across rotations, since another key
 *   gives other forms (rows under the old form load, but are listed by owner only once
 *   `statebag migrate --reencrypt` has rewritten them under the new one).
 * - The title column holds an encrypted envelope (envelope.ts, kind "title") bound to the store
 *   name and the session id.
 * - Labels stay plaintext: they are filter keys, matched by the stores' indexes and queries.
 *
 * Rows written before (a plaintext owner or title, or their forms under another key) read as they
 * are; such a row's owner is found by `list` only once `statebag migrate --reencrypt` has rewritten
 * it (until then, a listing of that owner refuses with `StoreNotSetUpError` rather than miss
 * sessions: the first page probes the owner's other forms, one index lookup each).
 */
import { createCipheriv, createHmac, timingSafeEqual } from "node:crypto";
import { quoted } from "../../core/json.js";
import { DecryptionError } from "./errors.js";
import { encryptedKeyId, isEncryptedText, open, seal } from "./envelope.js";
import type { Keyring } from "./keyring.js";

/**
 * What a store uses to keep an owner and a title out of plaintext. Found on a session codec as
 * `metaProtection` (see `metaProtectionOf`); the store applies it at its boundary, so the codec's
 * own context still carries the plaintext owner.
 */
export interface SessionMetaProtection {
  /** The stored form of an owner: deterministic (the same owner, the same form), never the plaintext. */
  owner(owner: string): string;
  /** The owner a stored value names: decrypted when it is a protected form, else the value itself (a row written before). */
  readOwner(stored: string): string;
  /** Whether a stored owner value is in the protected form this codec writes (under `ownerKey`). */
  isProtectedOwner(stored: string): boolean;
  /**
   * The other stored forms the same owner may have in rows written before: the plaintext, and its
   * form under every other key of the keyring. A listing refuses while any such row is left.
   */
  otherForms(owner: string): string[];
  /** The stored form of a session's title (encrypted, bound to the store name and the session id). */
  title(id: string, title: string): string;
  /** The title a stored value holds: decrypted when encrypted, else the value itself (a row written before). */
  readTitle(id: string, stored: string): string;
  /** Whether a stored title is encrypted under the keyring's current key. */
  isProtectedTitle(stored: string): boolean;
}

const OWNER_PREFIX = "o1.";
const FORM = /^o1\.([A-Za-z0-9._-]{1,64})\.([A-Za-z0-9_-]+)$/;

interface OwnerKeys {
  mac: Buffer;
  enc: Buffer;
}

/** Pads to a multiple of 16 bytes (ISO/IEC 7816-4: 0x80, then zeros), so only the rounded length shows. */
function pad(bytes: Buffer): Buffer {
  const out = Buffer.alloc((Math.floor(bytes.length / 16) + 1) * 16);
  bytes.copy(out);
  out[bytes.length] = 0x80;
  return out;
}

function unpad(bytes: Buffer): Buffer | undefined {
  let end = bytes.length - 1;
  while (end >= 0 && bytes[end] === 0) end--;
  return end >= 0 && bytes[end] === 0x80 ? bytes.subarray(0, end) : undefined;
}

/** The protection an encrypting session codec gives its store. */
export function createMetaProtection(keyring: Keyring, store: string, ownerKey: string): SessionMetaProtection {
  const cache = new Map<string, OwnerKeys>();
  const keysFor = (kid: string): OwnerKeys | undefined => {
    let keys = cache.get(kid);
    if (keys === undefined) {
      const derived = keyring.key(kid);
      if (!derived) return undefined;
      // Two keys from the keyring's fingerprint key, one per purpose (HMAC as a PRF).
      const sub = (label: string) => createHmac("sha256", derived.fingerprint).update(label).digest();
      keys = { mac: sub("statebag.owner.v1.mac"), enc: sub("statebag.owner.v1.enc") };
      cache.set(kid, keys);
    }
    return keys;
  };
  const forms = new Map<string, string>();
  const FORM_CACHE = 4096;
  const ownerWhat = "a stored owner";
  const formUnder = (kid: string, owner: string): string => {
    const keys = keysFor(kid)!;
    const plain = Buffer.from(owner, "utf8");
    const siv = createHmac("sha256", keys.mac).update(plain).digest().subarray(0, 16);
    const cipher = createCipheriv("aes-256-ctr", keys.enc, siv);
    const ct = Buffer.concat([cipher.update(pad(plain)), cipher.final()]);
    return `${OWNER_PREFIX}${kid}.${Buffer.concat([siv, ct]).toString("base64url")}`;
  };
  return {
    owner(owner: string): string {
      let form = forms.get(owner);
      if (form !== undefined) return form;
      form = formUnder(ownerKey, owner);
      if (forms.size >= FORM_CACHE) forms.clear();
      forms.set(owner, form);
      return form;
    },
    otherForms: (owner: string) => [
      owner,
      ...keyring
        .kids()
        .filter((kid) => kid !== ownerKey)
        .map((kid) => formUnder(kid, owner)),
    ],
    readOwner(stored: string): string {
      if (!stored.startsWith(OWNER_PREFIX)) return stored;
      const match = FORM.exec(stored);
      if (!match) return stored;
      const keys = keysFor(match[1]);
      if (!keys) throw new DecryptionError({ reason: "missing-key", kid: match[1], what: ownerWhat });
      const bytes = Buffer.from(match[2], "base64url");
      if (bytes.length < 32 || bytes.length % 16 !== 0)
        throw new DecryptionError({ reason: "malformed", what: ownerWhat });
      const siv = bytes.subarray(0, 16);
      const decipher = createCipheriv("aes-256-ctr", keys.enc, siv);
      const plain = unpad(Buffer.concat([decipher.update(bytes.subarray(16)), decipher.final()]));
      const check = plain && createHmac("sha256", keys.mac).update(plain).digest().subarray(0, 16);
      if (!plain || !check || !timingSafeEqual(check, siv))
        throw new DecryptionError({ reason: "tampered", kid: match[1], what: ownerWhat });
      return plain.toString("utf8");
    },
    isProtectedOwner: (stored: string) => FORM.exec(stored)?.[1] === ownerKey,
    title: (id: string, title: string) => seal(keyring, { kind: "title", store, id }, title),
    readTitle(id: string, stored: string): string {
      if (!isEncryptedText(stored)) return stored;
      return open(keyring, { kind: "title", store, id }, stored, `the title of the session ${quoted(id, 200)}`);
    },
    isProtectedTitle: (stored: string) => encryptedKeyId(stored) === keyring.current,
  };
}
