/**
 * Errors of the encrypting codecs. None of them ever holds key material: messages name key ids,
 * byte counts and which binding did not match, never a key, a derived key or a plaintext.
 */
import { StatebagError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";

/** A keyring that cannot be used: a key of the wrong size, bad base64, an unknown current key id. */
export class EncryptionKeyError extends StatebagError {
  constructor(message: string, hint?: string) {
    super("encryption-key", message, { hint });
  }
}

/** Why a stored row was not decrypted. */
export type DecryptionFailure =
  /** The text is not an encrypted envelope and the codec does not accept plaintext. */
  | "plaintext"
  /** The envelope is not well formed (a field missing, not base64, an unknown version). */
  | "malformed"
  /** The envelope's key id is not in the keyring. */
  | "missing-key"
  /** The row was written for another store name, id, owner, log, position or revision (a rollback). */
  | "binding"
  /** The ciphertext, nonce or tag was changed (the bindings match). */
  | "tampered"
  /** Every binding fingerprint differs: most likely the key under that id is not the one the row was written with. */
  | "wrong-key";

/** The bindings the associated data holds. */
export type EncryptionBinding = "store" | "id" | "owner" | "log" | "position" | "revision";

export interface DecryptionErrorDetails {
  reason: DecryptionFailure;
  /** The key id named by the envelope, when it has one. */
  kid?: string;
  /** The bindings that did not match, as far as the unauthenticated fingerprints tell (`binding`). */
  mismatched?: EncryptionBinding[];
  /** What was being read: a session (its id) or a message (its log id and position). */
  what: string;
}

/**
 * A stored row that the encrypting codec could not (or would not) decrypt. Nothing is returned in
 * its place: never plaintext, never a default.
 */
export class DecryptionError extends StatebagError {
  readonly reason: DecryptionFailure;
  readonly kid: string | undefined;
  readonly mismatched: readonly EncryptionBinding[];
  constructor(details: DecryptionErrorDetails) {
    super("decryption-failed", decryptionMessage(details), { hint: decryptionHint(details) });
    this.reason = details.reason;
    this.kid = details.kid;
    this.mismatched = details.mismatched ?? [];
  }
}

const BINDING_NAMES: Record<EncryptionBinding, string> = {
  store: "the store name",
  id: "the session id",
  owner: "the owner",
  log: "the message log id",
  position: "the position in the log",
  revision: "the revision of the session",
};

function decryptionMessage(d: DecryptionErrorDetails): string {
  const kid = d.kid === undefined ? "" : ` (key id ${quoted(d.kid, 64)})`;
  switch (d.reason) {
    case "plaintext":
      return `${d.what} is stored as plaintext, and this store is encrypted: plaintext is refused`;
    case "malformed":
      return `${d.what} is not a well-formed encrypted envelope`;
    case "missing-key":
      return `${d.what} is encrypted under the key id ${quoted(d.kid ?? "", 64)}, which the keyring does not hold`;
    case "binding":
      return `${d.what} failed to decrypt${kid}: it was written for another ${(d.mismatched ?? []).map((b) => BINDING_NAMES[b].replace(/^the /, "")).join(" and ")} (a row copied or replayed from elsewhere)`;
    case "wrong-key":
      return `${d.what} failed to decrypt${kid}: the key under that id is not the key it was written with, or the row was written for another store and id`;
    case "tampered":
      return `${d.what} failed to decrypt${kid}: the ciphertext, nonce or tag was changed`;
  }
}

function decryptionHint(d: DecryptionErrorDetails): string {
  switch (d.reason) {
    case "plaintext":
      return "encrypt the store's existing rows with `statebag migrate --encrypt` (the codec's `acceptPlaintext: true` reads plaintext only during that migration window)";
    case "malformed":
      return "the row was truncated or written by another program; restore it from a backup or delete it";
    case "missing-key":
      return "add that key id to the keyring (old keys stay in the keyring until `statebag migrate --reencrypt` has rewritten every row under the current key)";
    case "binding":
      if (d.mismatched?.length === 1 && d.mismatched[0] === "revision")
        return "a session row is bound to the revision it was written under: this body is from another revision of the session (an older body copied over the row, a rollback); restore the whole row (body and revision) from one backup, or delete it";
      return "encrypted rows are bound to their store name, session id (or log id and position), owner and revision: restore the row from a backup of its own id rather than copying another one, and check that the codec's `store` name is the one the rows were written with";
    case "wrong-key":
      return "the keyring maps this key id to different bytes than when the row was written: restore the right key for that id (key ids must never be reused for new key material)";
    case "tampered":
      return "the stored row was modified outside statebag; restore it from a backup or delete it";
  }
}

/**
 * A store read without a keyring found encrypted rows (the CLI: pass `--keyring <file>` or set
 * `STATEBAG_KEYRING`).
 */
export class EncryptedStoreError extends StatebagError {
  constructor(what: string, hint: string) {
    super("encryption-key", `${what} is encrypted, and no keyring was given`, { hint });
  }
}

/** A store called the codec without the context encryption binds (the log id of a message). */
export class EncryptionContextError extends StatebagError {
  constructor(message: string, hint: string) {
    super("configuration", message, { hint });
  }
}
