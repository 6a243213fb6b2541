/** Encryption at rest for stores: encrypting codecs, keyrings, the envelope and the re-encryption migration. */
export { encryptedMessageCodec, encryptedSessionCodec, encryptionCodecs } from "./codec.js";
export type {
  EncryptedMessageCodec,
  EncryptedMessageCodecOptions,
  EncryptedSessionCodec,
  EncryptedSessionCodecOptions,
  EncryptionInfo,
  EncryptionOptions,
  EncryptionReads,
  MessageCodecContext,
  SessionCodecContext,
} from "./codec.js";
export { ENCRYPTED_FORMAT, ENCRYPTED_VERSION, encryptedKeyId, isEncryptedText } from "./envelope.js";
export { DecryptionError, EncryptedStoreError, EncryptionContextError, EncryptionKeyError } from "./errors.js";
export type { DecryptionFailure, EncryptionBinding } from "./errors.js";
export { createKeyring, Keyring, loadKeyring } from "./keyring.js";
export type { KeyMaterial, KeyResolver, KeyringSpec } from "./keyring.js";
export type { SessionMetaProtection } from "./meta.js";
export { migrateEncryption } from "./migrate.js";
export type {
  EncryptionMigrationFailure,
  EncryptionMigrationOptions,
  EncryptionMigrationProgress,
  EncryptionMigrationReport,
} from "./migrate.js";
