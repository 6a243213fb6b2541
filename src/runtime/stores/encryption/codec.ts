/**
 * Encrypting codecs: `encryptedSessionCodec` and `encryptedMessageCodec` wrap the codecs a store
 * writes through (default: statebag's validating, migrating ones) and store each row as an
 * AES-256-GCM envelope (envelope.ts) bound to the store name, the session id and the revision the
 * row is written under (or the log id and position), and the owner. There is no plaintext fallback: a plaintext row is a `DecryptionError`
 * unless `acceptPlaintext` is set, for the migration window that `statebag migrate --encrypt` closes.
 */
import { ConfigurationError } from "../../core/errors.js";
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { quoted } from "../../core/json.js";
import { defaultMessageCodec, defaultSessionCodec } from "../codec.js";
import type { MessageCodec, MessageCodecContext, SessionCodec, SessionCodecContext } from "../types.js";
import { DecryptionError, EncryptionContextError } from "./errors.js";
import {
  type Binding,
  binaryBindsRevision,
  binaryKeyId,
  encryptedKeyId,
  envelopeBindsRevision,
  isBinaryRow,
  isEncryptedText,
  open,
  openBinary,
  seal,
  sealBinary,
} from "./envelope.js";
import { createKeyring, type Keyring, type KeyringSpec } from "./keyring.js";
import { createMetaProtection, type SessionMetaProtection } from "./meta.js";

export type { MessageCodecContext, SessionCodecContext };

export interface EncryptionOptions {
  /** `{ current, keys }` (keys as 32-byte Buffers or base64), or a keyring from `createKeyring`/`loadKeyring`. */
  keyring: Keyring | KeyringSpec;
  /**
   * The logical store name, bound into every row: rows copied between stores with different names
   * do not decrypt. Keep it stable (it is not the URL: a store may move).
   */
  store: string;
  /**
   * TEMPORARY, for the migration window only: read rows that are still plaintext (they are
   * re-written encrypted on their next save). Remove it once `statebag migrate --encrypt` has run.
   */
  acceptPlaintext?: boolean;
  /**
   * Refuse session rows that bind no revision (envelopes written before revisions were bound, or
   * by a tool outside a store): set it once `statebag migrate --reencrypt` has rewritten them, so
   * that an old body copied back over a row cannot pass as the current revision either. Default
   * false: such rows load (bound to everything else).
   */
  requireRevisionBinding?: boolean;
}

export interface EncryptedSessionCodecOptions extends EncryptionOptions {
  /** The codec for the plaintext (default `defaultSessionCodec()`). */
  inner?: SessionCodec;
  /**
   * Keep owners and titles out of plaintext in the store's metadata (default true): the owner
   * column / owner index holds a keyed, deterministic form of the owner and the title column an
   * encrypted envelope (meta.ts). Labels stay plaintext.
   */
  protectMeta?: boolean;
  /**
   * The key id whose derived keys form stored owners (default: the keyring's `current` when the
   * codec is built). Keep it the same across key rotations: owners are looked up by their form,
   * and another key gives other forms (see docs/production.md).
   */
  ownerKey?: string;
}

export interface EncryptedMessageCodecOptions extends EncryptionOptions {
  /** The codec for the plaintext (default `defaultMessageCodec`). */
  inner?: MessageCodec;
}

/** Counts of what a codec read: plaintext rows, rows under an older key, rows under the current key. */
export interface EncryptionReads {
  plaintext: number;
  stale: number;
  current: number;
}

/** What an encrypting codec was built with (no key material): used by the re-encryption migration. */
export interface EncryptionInfo {
  readonly keyring: Keyring;
  readonly store: string;
  readonly acceptPlaintext: boolean;
  readonly reads: EncryptionReads;
}

export interface EncryptedSessionCodec {
  /** The row as a text envelope (version 2), for stores that keep text. */
  serialize(session: AgentSession, context?: SessionCodecContext): string;
  /** A row of either form: a text envelope, or a binary row as a binary string (a scan's text). */
  deserialize(text: string, key?: string, context?: SessionCodecContext): AgentSession;
  /**
   * The row as a binary row (version 3: a fixed header and the ciphertext), which the built-in
   * stores keep as bytes; with `transient`, built in a reused buffer (valid until the next
   * transient row: see `serializeRow` in stores/codec.ts). @internal
   */
  serializeRow(session: AgentSession, context?: SessionCodecContext, transient?: boolean): Buffer;
  /** A stored row: bytes of a binary row, or text (either form). @internal */
  deserializeRow(row: string | Uint8Array, key: string, context?: SessionCodecContext): AgentSession;
  readonly encryption: EncryptionInfo;
  /** How the store keeps owners and titles at rest (absent with `protectMeta: false`). */
  readonly metaProtection?: SessionMetaProtection;
}

export interface EncryptedMessageCodec {
  serialize(message: ChatMessage, context?: MessageCodecContext): string;
  deserialize(text: string, context?: MessageCodecContext): ChatMessage;
  readonly encryption: EncryptionInfo;
}

function checkStoreName(store: unknown): string {
  if (typeof store !== "string" || store.length === 0 || store.length > 200) {
    throw new ConfigurationError(
      "the encrypting codec needs `store`, the logical store name (1-200 characters) bound into every row",
      'pass e.g. store: "sessions"; keep it stable, rows written under one name do not decrypt under another',
    );
  }
  return store;
}

function info(options: EncryptionOptions): EncryptionInfo {
  return {
    keyring: createKeyring(options.keyring),
    store: checkStoreName(options.store),
    acceptPlaintext: options.acceptPlaintext === true,
    reads: { plaintext: 0, stale: 0, current: 0 },
  };
}

function owner(context: SessionCodecContext | undefined): string | undefined {
  const given = context?.owner;
  return typeof given === "string" ? given : undefined;
}

function revision(context: SessionCodecContext | undefined): number | undefined {
  const given = context?.revision;
  return typeof given === "number" ? given : undefined;
}

/** The binding of a session row: store, id, owner and (when the store gives it) revision. */
function sessionBinding(store: string, id: string, context: SessionCodecContext | undefined): Binding {
  const binding: Binding = { kind: "session", store, id, owner: owner(context) };
  const bound = revision(context);
  if (bound !== undefined) binding.revision = bound;
  return binding;
}

/** Counts a row read under the key id `kid`. */
function count(enc: EncryptionInfo, kid: string | undefined): void {
  if (kid === enc.keyring.current) enc.reads.current++;
  else enc.reads.stale++;
}

/** A session codec that encrypts what `inner` writes. See the module comment. */
export function encryptedSessionCodec(options: EncryptedSessionCodecOptions): EncryptedSessionCodec & SessionCodec {
  const enc = info(options);
  const inner = options.inner ?? defaultSessionCodec();
  const ownerKey = options.ownerKey ?? enc.keyring.current;
  if (!enc.keyring.has(ownerKey))
    throw new ConfigurationError(
      `the encrypting codec's ownerKey ${quoted(ownerKey, 64)} is not in the keyring`,
      "set ownerKey to a key id the keyring holds (keep it there: stored owners are formed with it)",
    );
  /** A stored row of any form: a binary row (bytes or binary string), a text envelope, or plaintext. */
  const deserializeRow = (row: string | Uint8Array, key: string, context?: SessionCodecContext): AgentSession => {
    const what = `the session ${quoted(key, 200)}`;
    if (isBinaryRow(row)) {
      const kid = binaryKeyId(row);
      if (options.requireRevisionBinding === true && binaryBindsRevision(row) === false)
        throw new DecryptionError({ reason: "binding", mismatched: ["revision"], what, ...(kid ? { kid } : {}) });
      const plain = openBinary(enc.keyring, sessionBinding(enc.store, key, context), row, what);
      count(enc, kid);
      return inner.deserialize(plain, key, context);
    }
    // Bytes that are no binary row: text a store kept as bytes (UTF-8), read as any text row.
    const text = typeof row === "string" ? row : Buffer.from(row.buffer, row.byteOffset, row.length).toString("utf8");
    if (!isEncryptedText(text)) {
      if (!enc.acceptPlaintext) throw new DecryptionError({ reason: "plaintext", what });
      enc.reads.plaintext++;
      return inner.deserialize(text, key, context);
    }
    const kid = encryptedKeyId(text);
    if (options.requireRevisionBinding === true && envelopeBindsRevision(text) === false)
      throw new DecryptionError({ reason: "binding", mismatched: ["revision"], what, ...(kid ? { kid } : {}) });
    const plain = open(enc.keyring, sessionBinding(enc.store, key, context), text, what);
    count(enc, kid);
    return inner.deserialize(plain, key, context);
  };
  return {
    encryption: enc,
    ...(options.protectMeta === false
      ? {}
      : { metaProtection: createMetaProtection(enc.keyring, enc.store, ownerKey) }),
    serialize(session: AgentSession, context?: SessionCodecContext): string {
      // The inner codec sees the same context (a codec under encryption may bind to it too).
      const text = inner.serialize(session, context);
      return seal(enc.keyring, sessionBinding(enc.store, session.id, context), text);
    },
    deserialize(text: string, key?: string, context?: SessionCodecContext): AgentSession {
      if (typeof key !== "string") {
        throw new EncryptionContextError(
          "the encrypting session codec was called without the key the row is stored under",
          "encrypted rows are bound to their session id: load through store.get, which passes it",
        );
      }
      return deserializeRow(text, key, context);
    },
    serializeRow(session: AgentSession, context?: SessionCodecContext, transient = false): Buffer {
      const text = inner.serialize(session, context);
      return sealBinary(enc.keyring, sessionBinding(enc.store, session.id, context), text, transient);
    },
    deserializeRow,
  };
}

function logContext(context: MessageCodecContext | undefined, direction: string): MessageCodecContext {
  if (typeof context?.logId !== "string") {
    throw new EncryptionContextError(
      `the store ${direction} a message without its log id, which encrypted messages are bound to`,
      "use a store that passes the message codec context ({ logId, seq }); every built-in store does from the release that added it",
    );
  }
  return context;
}

/** A message codec that encrypts what `inner` writes, bound to the log id (and position when given). */
export function encryptedMessageCodec(options: EncryptedMessageCodecOptions): EncryptedMessageCodec & MessageCodec {
  const enc = info(options);
  const inner = options.inner ?? defaultMessageCodec;
  const position = (seq: unknown) => (Number.isSafeInteger(seq) && (seq as number) >= 0 ? (seq as number) : undefined);
  return {
    encryption: enc,
    serialize(message: ChatMessage, context?: MessageCodecContext): string {
      const { logId, seq } = logContext(context, "wrote");
      const text = inner.serialize(message, context);
      return seal(enc.keyring, { kind: "message", store: enc.store, id: logId, position: position(seq) }, text);
    },
    deserialize(text: string, context?: MessageCodecContext): ChatMessage {
      const { logId, seq } = logContext(context, "read");
      const what = `a message of the log ${quoted(logId, 200)}${seq === undefined ? "" : ` (position ${seq})`}`;
      if (!isEncryptedText(text)) {
        if (!enc.acceptPlaintext) throw new DecryptionError({ reason: "plaintext", what });
        enc.reads.plaintext++;
        return inner.deserialize(text, context);
      }
      const plain = open(
        enc.keyring,
        { kind: "message", store: enc.store, id: logId, position: position(seq) },
        text,
        what,
      );
      count(enc, encryptedKeyId(text));
      return inner.deserialize(plain, context);
    },
  };
}

/** Both codecs for `openStore(url, encryptionCodecs(options))`. */
export function encryptionCodecs(options: EncryptedSessionCodecOptions & { messageInner?: MessageCodec }): {
  codec: EncryptedSessionCodec & SessionCodec;
  messageCodec: EncryptedMessageCodec & MessageCodec;
} {
  const keyring = createKeyring(options.keyring);
  const common = {
    keyring,
    store: options.store,
    ...(options.acceptPlaintext ? { acceptPlaintext: true } : {}),
    ...(options.requireRevisionBinding ? { requireRevisionBinding: true } : {}),
  };
  return {
    codec: encryptedSessionCodec({
      ...common,
      ...(options.inner ? { inner: options.inner } : {}),
      ...(options.protectMeta === false ? { protectMeta: false } : {}),
      ...(options.ownerKey !== undefined ? { ownerKey: options.ownerKey } : {}),
    }),
    messageCodec: encryptedMessageCodec({
      ...common,
      ...(options.messageInner ? { inner: options.messageInner } : {}),
    }),
  };
}
