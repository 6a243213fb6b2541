/**
 * Keyrings: the AES-256-GCM keys an encrypting codec uses, by key id. New writes use `current`;
 * rows written under an older key decrypt with theirs until `statebag migrate --reencrypt` has
 * rewritten them.
 *
 * A keyring keeps only keys derived from the material given (HKDF-SHA256: one for AES-256-GCM,
 * one for the binding fingerprints), as `KeyObject`s, and shows only its key ids when logged,
 * inspected or serialized.
 */
import { createSecretKey, hkdfSync, type KeyObject } from "node:crypto";
import { inspect } from "node:util";
import { quoted } from "../../core/json.js";
import { EncryptionKeyError } from "./errors.js";

/** 32 bytes of key material: a Buffer/Uint8Array, or its base64 (standard or url-safe) text. */
export type KeyMaterial = Uint8Array | string;

/** A keyring given by value: `{ current: "k2", keys: { k1: ..., k2: ... } }`. */
export interface KeyringSpec {
  current: string;
  keys: Record<string, KeyMaterial>;
}

/** Fetches one key by id (a KMS call): used by `loadKeyring`. */
export type KeyResolver = (kid: string) => Promise<KeyMaterial> | KeyMaterial;

export interface DerivedKey {
  readonly kid: string;
  readonly cipher: KeyObject;
  readonly fingerprint: KeyObject;
}

const KID = /^[A-Za-z0-9._-]{1,64}$/;
const SALT = Buffer.from("statebag.encrypted.v1");

export function checkKid(kid: unknown, where: string): string {
  if (typeof kid !== "string" || !KID.test(kid)) {
    throw new EncryptionKeyError(
      `${where}: ${typeof kid === "string" ? `the key id ${quoted(kid, 64)}` : "the key id"} is not valid`,
      "key ids are 1-64 characters of A-Z, a-z, 0-9, '.', '_' and '-' (they are stored, in clear, in every encrypted row)",
    );
  }
  return kid;
}

/** The 32 bytes of `material`, or an error naming the key id and the size (never the bytes). */
function keyBytes(kid: string, material: unknown): Buffer {
  let bytes: Buffer;
  if (typeof material === "string") {
    const text = material.trim();
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) {
      throw new EncryptionKeyError(
        `the key ${quoted(kid, 64)} is not valid base64`,
        "give each key as 32 random bytes in base64, e.g. from: node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"",
      );
    }
    bytes = Buffer.from(text, text.includes("-") || text.includes("_") ? "base64url" : "base64");
  } else if (material instanceof Uint8Array) {
    bytes = Buffer.from(material);
  } else {
    throw new EncryptionKeyError(
      `the key ${quoted(kid, 64)} is ${material === null ? "null" : typeof material}, not bytes or base64 text`,
      "give each key as a Buffer of 32 bytes or its base64 text",
    );
  }
  if (bytes.length !== 32) {
    bytes.fill(0);
    throw new EncryptionKeyError(
      `the key ${quoted(kid, 64)} is ${bytes.length} bytes; AES-256-GCM keys are 32 bytes`,
      "generate a 32-byte key: node -e \"console.log(require('crypto').randomBytes(32).toString('base64'))\"",
    );
  }
  return bytes;
}

function derive(kid: string, material: unknown): DerivedKey {
  const ikm = keyBytes(kid, material);
  try {
    const cipher = createSecretKey(Buffer.from(hkdfSync("sha256", ikm, SALT, "aes-256-gcm", 32)));
    const fingerprint = createSecretKey(Buffer.from(hkdfSync("sha256", ikm, SALT, "binding-fingerprint", 32)));
    return { kid, cipher, fingerprint };
  } finally {
    ikm.fill(0);
  }
}

/** The keys an encrypting codec uses. Build with `createKeyring(spec)` or `await loadKeyring(...)`. */
export class Keyring {
  readonly current: string;
  readonly #keys: ReadonlyMap<string, DerivedKey>;

  /** @internal use createKeyring or loadKeyring */
  constructor(current: string, keys: Map<string, DerivedKey>) {
    this.current = current;
    this.#keys = keys;
    if (!keys.has(current)) {
      throw new EncryptionKeyError(
        `the current key id ${quoted(current, 64)} is not in the keyring (it holds ${[...keys.keys()].map((k) => quoted(k, 64)).join(", ") || "no keys"})`,
        "add the current key to `keys`, or set `current` to one of its ids",
      );
    }
  }

  /** The key ids held. */
  kids(): string[] {
    return [...this.#keys.keys()];
  }

  has(kid: string): boolean {
    return this.#keys.has(kid);
  }

  /** @internal the derived keys for one id (undefined when absent). */
  key(kid: string): DerivedKey | undefined {
    return this.#keys.get(kid);
  }

  toJSON(): { current: string; kids: string[] } {
    return { current: this.current, kids: this.kids() };
  }

  [inspect.custom](): string {
    return `Keyring { current: ${JSON.stringify(this.current)}, kids: ${JSON.stringify(this.kids())} }`;
  }
}

/** A keyring from `{ current, keys }` (keys as Buffers or base64). Validates every key. */
export function createKeyring(spec: KeyringSpec | Keyring): Keyring {
  if (spec instanceof Keyring) return spec;
  if (
    typeof spec !== "object" ||
    spec === null ||
    typeof spec.keys !== "object" ||
    spec.keys === null ||
    Array.isArray(spec.keys)
  ) {
    throw new EncryptionKeyError(
      "the keyring must be an object { current, keys }",
      'write it as {"current": "k1", "keys": {"k1": "<32 bytes, base64>"}}',
    );
  }
  const current = checkKid(spec.current, "keyring.current");
  const keys = new Map<string, DerivedKey>();
  for (const kid of Object.keys(spec.keys)) keys.set(checkKid(kid, "keyring.keys"), derive(kid, spec.keys[kid]));
  return new Keyring(current, keys);
}

/**
 * A keyring whose keys come from a function (a KMS): fetches `current` and every id in `kids`
 * now, because codecs run synchronously. A row under a key id not fetched here is a
 * `DecryptionError` (`missing-key`) naming that id.
 */
export async function loadKeyring(options: {
  current: string;
  kids?: readonly string[];
  resolve: KeyResolver;
}): Promise<Keyring> {
  const current = checkKid(options.current, "loadKeyring current");
  if (typeof options.resolve !== "function")
    throw new EncryptionKeyError(
      "loadKeyring needs a `resolve(kid)` function",
      "pass resolve: (kid) => fetch the key (32 bytes or base64) from your KMS",
    );
  const ids = [...new Set([current, ...(options.kids ?? [])])].map((k) => checkKid(k, "loadKeyring kids"));
  const keys = new Map<string, DerivedKey>();
  for (const kid of ids) {
    let material: KeyMaterial;
    try {
      material = await options.resolve(kid);
    } catch (error) {
      // The resolver's own error may say anything: keep it as the cause, not in the message.
      const failure = new EncryptionKeyError(
        `fetching the key ${quoted(kid, 64)} failed`,
        "check the KMS and the key id; the resolver's error is the `cause`",
      );
      (failure as { cause?: unknown }).cause = error;
      throw failure;
    }
    keys.set(kid, derive(kid, material));
  }
  return new Keyring(current, keys);
}
