/**
 * `statebag/stores`: session stores (memory, SQLite by default, PostgreSQL, Redis) that never lose
 * an update (compare-and-swap saves), message logs, `withSession` for hosted apps, and bulk
 * migration. Database drivers are optional peer dependencies, loaded when a store first needs one.
 */
export { DEFAULT_STORE_URL, openStore } from "./runtime/open-store/open-store.js";
export type { OpenStoreOptions } from "./runtime/open-store/open-store.js";
export type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  EraseOptions,
  EraseReceipt,
  LabelRetentionRule,
  ListItem,
  ListOptions,
  ListPage,
  MessageCodec,
  MessageCodecContext,
  MessageLog,
  MessageLogSnapshot,
  MessageLogWindow,
  MessageRange,
  MessageWindowOptions,
  ReplaceOptions,
  RetentionOptions,
  RetentionPolicy,
  RetentionRule,
  SaveOptions,
  ScanItem,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionCodecContext,
  SessionMeta,
  SessionStore,
  SetupResult,
  StoreKind,
  StoredSession,
  StoredSessionMeta,
  TrimOptions,
} from "./runtime/stores/types.js";
export type {
  OpenStreamOptions,
  StreamBuffer,
  StreamFollowOptions,
  StreamInfo,
  StreamReadOptions,
  StreamStatus,
} from "./runtime/stores/stream-buffer.js";
export {
  BlobBudgetExceededError,
  BlobCorruptError,
  BlobNotFoundError,
  BlobRangeError,
  isBlobHash,
} from "./runtime/blobs/blob-store.js";
export type {
  BlobContent,
  BlobInfo,
  BlobLimits,
  BlobOptions,
  BlobOwnerOptions,
  BlobPage,
  BlobRange,
  BlobRead,
  BlobReferences,
  BlobStore,
  BlobUsage,
  GetBlobOptions,
  ListBlobsOptions,
  PutBlobOptions,
  PutBlobResult,
  SweepBlobsOptions,
} from "./runtime/blobs/blob-store.js";
export { folderBlobStore } from "./runtime/blobs/folder.js";
export type { FolderBlobStoreOptions } from "./runtime/blobs/folder.js";
export { memoryBlobStore } from "./runtime/blobs/memory.js";
export { S3BlobStoreError, s3BlobStore } from "./runtime/blobs/s3.js";
export type { S3BlobStoreOptions, S3ClientLike } from "./runtime/blobs/s3.js";
export type { MemoryBlobStoreOptions } from "./runtime/blobs/memory.js";
// Reference contents: files kept in the blob store, resolved for model requests, swept with their sessions
export {
  BlobReferenceError,
  blobReader,
  blobReference,
  blobWriter,
  offloadDataContents,
  referencedBlobs,
  resolveBlobReferences,
} from "./runtime/blobs/references.js";
export type { BlobReader, BlobWriter, OffloadOptions, OffloadResult } from "./runtime/blobs/references.js";
export { sweepOwnerBlobs } from "./runtime/stores/blob-sweep.js";
export type { SweepOwnerBlobsOptions, SweepOwnerBlobsResult } from "./runtime/stores/blob-sweep.js";
export { withSession } from "./runtime/stores/with-session.js";
export type { SessionRunContext, WithSessionOptions, WithSessionResult } from "./runtime/stores/with-session.js";

// Codecs: how sessions and messages are written
export {
  InvalidStoredMessageError,
  InvalidStoredValueError,
  StoredSessionIdError,
  defaultMessageCodec,
  defaultSessionCodec,
  messageCodec,
} from "./runtime/stores/codec.js";
export type { MessageCodecOptions, SessionCodecOptions } from "./runtime/stores/codec.js";
export type { WrittenCacheOptions } from "./runtime/stores/written-texts.js";

// The stores
export { MemorySessionStore } from "./runtime/stores/memory.js";
export type { MemoryStoreOptions } from "./runtime/stores/memory.js";
export { SQLITE_SCHEMA_VERSION, SqliteSessionStore } from "./runtime/stores/sqlite/store.js";
export type { SqliteStoreOptions } from "./runtime/stores/sqlite/store.js";
export type { SqliteDriverName } from "./runtime/stores/sqlite/driver.js";
export { NodeSqliteMissingError } from "./runtime/stores/sqlite/node-sqlite.js";
export { POSTGRES_SCHEMA_VERSION, PostgresSessionStore } from "./runtime/stores/postgres/store.js";
export type { PostgresStoreOptions } from "./runtime/stores/postgres/store.js";
// What the PostgreSQL store needs of a pg Pool (structural, so apps without pg type-check).
export type {
  PgPool,
  PgPoolClient,
  PgPoolConfig,
  PgQueryConfig,
  PgQueryResult,
} from "./runtime/stores/postgres/driver.js";
export { REDIS_FORMAT_VERSION, RedisSessionStore } from "./runtime/stores/redis/store.js";
export type { RedisStoreOptions } from "./runtime/stores/redis/store.js";

// OpenTelemetry spans (optional peer @opentelemetry/api; structural types)
export { tracedStore, TRACER_NAME } from "./runtime/observability/traced-store.js";
export type { TracedStoreOptions, TracingOptions } from "./runtime/observability/traced-store.js";
export type {
  OtelAttributes,
  OtelAttributeValue,
  OtelSpan,
  OtelTracer,
  OtelTracerProvider,
} from "./runtime/observability/otel.js";

// Errors
export {
  ConflictError,
  InvalidCursorError,
  InvalidIdError,
  MAX_ID_LENGTH,
  SessionNotFoundError,
  SessionOwnerError,
  StoreAuthenticationError,
  StoreKeyConflictError,
  StoreNotSetUpError,
  StoreUnavailableError,
  StreamClosedError,
} from "./runtime/stores/errors.js";
export { DriverMissingError } from "./runtime/stores/drivers.js";
export type { OptionalDriver } from "./runtime/stores/drivers.js";

// Retention and erasure requests
export {
  checkRetention,
  isRetentionExpired,
  parseDuration,
  purgeRetention,
  retentionRuleFor,
} from "./runtime/stores/retention.js";
export type { PurgeRetentionOptions, PurgeRetentionReport } from "./runtime/stores/retention.js";
export { eraseOwnerSessions, ownerDigest, previewErase } from "./runtime/stores/erasure.js";

// Bringing every stored session to the latest type versions
export { BulkMigrationError, migrateStore } from "./runtime/stores/migrate.js";
export type {
  MigrateStoreFailure,
  MigrateStoreOptions,
  MigrateStoreProgress,
  MigrateStoreReport,
  StateVersionCount,
} from "./runtime/stores/migrate.js";

// Encryption at rest (AES-256-GCM codecs, keyrings, re-encryption)
export {
  createKeyring,
  DecryptionError,
  ENCRYPTED_FORMAT,
  EncryptedStoreError,
  encryptedKeyId,
  encryptedMessageCodec,
  encryptedSessionCodec,
  EncryptionContextError,
  encryptionCodecs,
  EncryptionKeyError,
  isEncryptedText,
  Keyring,
  loadKeyring,
  migrateEncryption,
} from "./runtime/stores/encryption/index.js";
export type {
  DecryptionFailure,
  EncryptedMessageCodec,
  EncryptedSessionCodec,
  EncryptionBinding,
  EncryptionMigrationOptions,
  EncryptionMigrationReport,
  EncryptionOptions,
  KeyMaterial,
  KeyResolver,
  KeyringSpec,
  SessionMetaProtection,
} from "./runtime/stores/encryption/index.js";
