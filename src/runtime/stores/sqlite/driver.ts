/**
 * What the SQLite store needs from a driver: open a file, prepare statements, run SQL, and say which
 * SQLite result code an error carries. Two adapters implement it: the built-in `node:sqlite` (the
 * default: nothing to install or build) and the optional `better-sqlite3` package.
 */
import { ConfigurationError } from "../../core/errors.js";

export type SqliteDriverName = "node:sqlite" | "better-sqlite3";
export const SQLITE_DRIVERS: readonly SqliteDriverName[] = ["node:sqlite", "better-sqlite3"];
export const DEFAULT_SQLITE_DRIVER: SqliteDriverName = "node:sqlite";

/**
 * A bound parameter; `Uint8Array` for BLOB columns (blob chunks, an encrypted session row), read
 * back as `Uint8Array` (a `Buffer` on better-sqlite3).
 */
export type SqliteValue = string | number | null | Uint8Array;

export interface SqliteStatement<R> {
  get(...params: SqliteValue[]): R | undefined;
  all(...params: SqliteValue[]): R[];
  run(...params: SqliteValue[]): { changes: number };
}

export interface SqliteConnection {
  prepare<R = unknown>(sql: string): SqliteStatement<R>;
  /**
   * A query whose rows are arrays of its columns' values, in the order the SELECT names them
   * (`R` a tuple type). Both drivers build a row object as a dictionary (one hash lookup per field
   * read, and a slow object to build): a page of 51 listing rows read 400 fields that way.
   */
  prepareTuples<R extends readonly unknown[]>(sql: string): SqliteStatement<R>;
  exec(sql: string): void;
  /** Whether a transaction is open (so a failed unit of work knows whether to roll back). */
  readonly inTransaction: boolean;
  close(): void;
}

export interface SqliteOpenOptions {
  readOnly: boolean;
  /**
   * Read without any locking, for a file nothing can change (a read-only directory or mount, where
   * SQLite cannot create the shared-memory file that WAL reading otherwise needs).
   */
  immutable?: boolean;
  /** How long SQLite itself may block on a lock before returning SQLITE_BUSY. */
  busyTimeoutMs: number;
}

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  /** Whether `open` supports `immutable`. */
  readonly canOpenImmutable: boolean;
  /** Loads the driver, throwing a typed error when this Node or install lacks it (called before any file or folder is made). */
  load(): void;
  open(path: string, options: SqliteOpenOptions): SqliteConnection;
  /** The primary SQLite result code name of a driver error (`SQLITE_BUSY`, ...), if it is one. */
  resultCode(error: unknown): string | undefined;
}

export function checkSqliteDriver(name: string, where: string): SqliteDriverName {
  if ((SQLITE_DRIVERS as readonly string[]).includes(name)) return name as SqliteDriverName;
  throw new ConfigurationError(
    `${where}: unknown SQLite driver "${name.slice(0, 40)}"`,
    `use ${SQLITE_DRIVERS.join(" (the default) or ")} (an optional package: npm i better-sqlite3)`,
  );
}

/** Primary result codes (the low byte of an extended code) that the store tells apart. */
const PRIMARY_CODES: Record<number, string> = {
  3: "SQLITE_PERM",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  8: "SQLITE_READONLY",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  23: "SQLITE_AUTH",
  26: "SQLITE_NOTADB",
};

/** The name of a numeric (possibly extended) SQLite result code, `SQLITE_ERROR` for ones not listed. */
export function resultCodeName(code: number): string {
  return PRIMARY_CODES[code & 0xff] ?? "SQLITE_ERROR";
}
