/** Session stores: memory, SQLite (default), PostgreSQL, Redis; message logs; the hosted-app helper. */
export type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  MessageCodec,
  MessageLog,
  MessageLogSnapshot,
  ReplaceOptions,
  SaveOptions,
  ScanItem,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionStore,
  SetupResult,
  StoreKind,
  StoredSession,
  TrimOptions,
} from "./types.js";
export {
  ConflictError,
  InvalidIdError,
  MAX_ID_LENGTH,
  SessionNotFoundError,
  StoreAuthenticationError,
  StoreKeyConflictError,
  StoreNotSetUpError,
  StoreUnavailableError,
} from "./errors.js";
export {
  defaultMessageCodec,
  defaultSessionCodec,
  InvalidStoredValueError,
  structuralSessionCodec,
  type SessionCodecOptions,
} from "./codec.js";
export { DEFAULT_STORE_URL, openStore, type OpenStoreOptions } from "./open.js";
export { MemorySessionStore, type MemoryStoreOptions } from "./memory.js";
export { SqliteSessionStore, SQLITE_SCHEMA_VERSION, type SqliteStoreOptions } from "./sqlite.js";
export type { SqliteDriverName } from "./sqlite/driver.js";
export { DriverMissingError, type OptionalDriver } from "./drivers.js";
export { PostgresSessionStore, POSTGRES_SCHEMA_VERSION, type PostgresStoreOptions } from "./postgres.js";
export { RedisSessionStore, REDIS_FORMAT_VERSION, type RedisStoreOptions } from "./redis.js";
export { withSession, type SessionRunContext, type WithSessionOptions, type WithSessionResult } from "./with-session.js";
export { redactUrl } from "./url.js";
export {
  BulkMigrationError,
  formatMigrateReport,
  formatStateTransition,
  migrateStore,
  type MigrateStoreFailure,
  type MigrateStoreOptions,
  type MigrateStoreProgress,
  type MigrateStoreReport,
  type StateVersionCount,
} from "./migrate.js";
