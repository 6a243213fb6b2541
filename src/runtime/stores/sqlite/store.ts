/**
 * The default store: one SQLite file in WAL mode, through the built-in `node:sqlite` driver (or the
 * optional better-sqlite3, `driver: "better-sqlite3"`; both read and write the same file format).
 * Several processes on one machine can share the file: every write is a `BEGIN IMMEDIATE`
 * transaction, so writers queue on SQLite's file lock and the compare-and-swap inside cannot
 * interleave. A writer waits for another process's lock asynchronously (a short wait inside SQLite,
 * then retries with backoff up to `busyTimeoutMs`), so the event loop keeps running meanwhile.
 *
 * Revisions come from one counter in `statebag_meta`, so they keep increasing even across a
 * delete and re-create (a client holding an old revision can never match a new session).
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, loadStoredSession, serializeMessages } from "../codec.js";
import {
  checkDelete,
  checkId,
  checkLast,
  checkOperationId,
  checkReplace,
  checkSave,
  checkScan,
  checkTrim,
  scanItem,
  scanPage,
  sessionId,
} from "../common.js";
import { ConflictError, StoreNotSetUpError, StoreUnavailableError, logConflict } from "../errors.js";
import { betterSqliteDriver } from "./better-sqlite3.js";
import { DEFAULT_SQLITE_DRIVER, checkSqliteDriver, type SqliteConnection, type SqliteDriver, type SqliteDriverName, type SqliteStatement } from "./driver.js";
import { nodeSqliteDriver } from "./node-sqlite.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  MessageCodec,
  MessageLog,
  MessageLogSnapshot,
  ReplaceOptions,
  SaveOptions,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionStore,
  SetupResult,
  StoredSession,
  TrimOptions,
} from "../types.js";

/** The storage-format version this code writes (recorded in `statebag_meta`). */
export const SQLITE_SCHEMA_VERSION = 1;

export interface SqliteStoreOptions {
  /** File path (`:memory:` for a private in-memory database). Parent directories are created. */
  path: string;
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** How long a write waits for another process's write lock before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * `normal` (default): with WAL, a commit survives a process crash; the last commits may be lost
   * on power loss. `full`: fsync on every commit (durable against power loss, slower).
   */
  synchronous?: "normal" | "full";
  /** `node:sqlite` (default, built in) or `better-sqlite3` (optional package, `npm i better-sqlite3`). */
  driver?: SqliteDriverName;
  /**
   * Open for reading only: the file must exist and is never created, changed or set up (works on a
   * read-only file or mount); every write is refused.
   */
  readOnly?: boolean;
  /** The URL to show in errors (default `sqlite:<path>`). */
  displayUrl?: string;
}

const DRIVERS: Record<SqliteDriverName, SqliteDriver> = { "node:sqlite": nodeSqliteDriver, "better-sqlite3": betterSqliteDriver };

/**
 * Which driver has each file open in this process. SQLite's file locks are per process, and each
 * driver carries its own copy of SQLite: two copies in one process would not see each other's
 * locks (nor survive each other closing the file), so one file is opened through one driver at a time.
 */
const openFiles = new Map<string, { driver: SqliteDriverName; count: number }>();

/** How long one attempt may block inside SQLite on a lock before yielding to the event loop. */
const LOCK_WAIT_PER_ATTEMPT_MS = 10;
/** Longest pause between two attempts to take a lock. */
const MAX_RETRY_PAUSE_MS = 50;
const DDL = `
CREATE TABLE IF NOT EXISTS statebag_meta (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
);
INSERT OR IGNORE INTO statebag_meta (key, value) VALUES ('revision', 0);
CREATE TABLE IF NOT EXISTS statebag_sessions (
  id TEXT PRIMARY KEY,
  revision INTEGER NOT NULL,
  data TEXT NOT NULL,
  expires_at INTEGER,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS statebag_sessions_expires ON statebag_sessions (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS statebag_message_logs (
  storage_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  next_seq INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS statebag_messages (
  storage_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (storage_id, seq)
);
CREATE TABLE IF NOT EXISTS statebag_message_ops (
  storage_id TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  PRIMARY KEY (storage_id, operation_id)
) WITHOUT ROWID;
`;

const LIVE = "(expires_at IS NULL OR expires_at > ?)";

/** Statement texts (exported for the benchmark's raw-driver baseline). @internal */
export const SQLITE_SQL = {
  get: `SELECT revision, data FROM statebag_sessions WHERE id = ? AND ${LIVE}`,
  current: `SELECT revision FROM statebag_sessions WHERE id = ? AND ${LIVE}`,
  bump: `UPDATE statebag_meta SET value = value + 1 WHERE key = 'revision' RETURNING value`,
  // The compare-and-swap: only the row still at the expected (live) revision is replaced.
  update: `UPDATE statebag_sessions SET revision = ?, data = ?, expires_at = ?, updated_at = ? WHERE id = ? AND revision = ? AND ${LIVE}`,
  // Create-if-absent: an expired row counts as absent and is replaced; a live one is left alone.
  create: `INSERT INTO statebag_sessions (id, revision, data, expires_at, updated_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, data = excluded.data,
       expires_at = excluded.expires_at, updated_at = excluded.updated_at
     WHERE statebag_sessions.expires_at IS NOT NULL AND statebag_sessions.expires_at <= ?`,
  deleteAny: `DELETE FROM statebag_sessions WHERE id = ? RETURNING (expires_at IS NULL OR expires_at > ?) AS live`,
  deleteAt: `DELETE FROM statebag_sessions WHERE id = ? AND revision = ? AND ${LIVE}`,
  scan: `SELECT id, revision FROM statebag_sessions WHERE id > ? AND ${LIVE} ORDER BY id LIMIT ?`,
  scanText: `SELECT id, revision, data, expires_at FROM statebag_sessions WHERE id > ? AND ${LIVE} ORDER BY id LIMIT ?`,
  purge: `DELETE FROM statebag_sessions WHERE expires_at IS NOT NULL AND expires_at <= ?`,
  opInsert: `INSERT OR IGNORE INTO statebag_message_ops (storage_id, operation_id) VALUES (?, ?)`,
  logVersion: `SELECT version, next_seq FROM statebag_message_logs WHERE storage_id = ?`,
  logUpsert: `INSERT INTO statebag_message_logs (storage_id, version, next_seq) VALUES (?, ?, ?)
     ON CONFLICT (storage_id) DO UPDATE SET version = excluded.version, next_seq = next_seq + excluded.next_seq
     RETURNING next_seq`,
  msgInsert: `INSERT INTO statebag_messages (storage_id, seq, body) VALUES (?, ?, ?)`,
  msgAll: `SELECT body FROM statebag_messages WHERE storage_id = ? ORDER BY seq`,
  msgLast: `SELECT body FROM (SELECT seq, body FROM statebag_messages WHERE storage_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
  msgClear: `DELETE FROM statebag_messages WHERE storage_id = ?`,
  msgTrim: `DELETE FROM statebag_messages WHERE storage_id = ? AND seq < ?`,
  logDelete: `DELETE FROM statebag_message_logs WHERE storage_id = ?`,
  opsDelete: `DELETE FROM statebag_message_ops WHERE storage_id = ?`,
} as const;

/** The store's statements, prepared once per connection. */
class Statements {
  readonly get: SqliteStatement<{ revision: number; data: string }>;
  readonly current: SqliteStatement<{ revision: number }>;
  readonly bump: SqliteStatement<{ value: number }>;
  readonly update: SqliteStatement<never>;
  readonly create: SqliteStatement<never>;
  readonly deleteAny: SqliteStatement<{ live: number }>;
  readonly deleteAt: SqliteStatement<never>;
  readonly scan: SqliteStatement<{ id: string; revision: number }>;
  readonly scanText: SqliteStatement<{ id: string; revision: number; data: string; expires_at: number | null }>;
  readonly purge: SqliteStatement<never>;
  readonly opInsert: SqliteStatement<never>;
  readonly logVersion: SqliteStatement<{ version: number; next_seq: number }>;
  readonly logUpsert: SqliteStatement<{ next_seq: number }>;
  readonly msgInsert: SqliteStatement<never>;
  readonly msgAll: SqliteStatement<{ body: string }>;
  readonly msgLast: SqliteStatement<{ body: string }>;
  readonly msgClear: SqliteStatement<never>;
  readonly msgTrim: SqliteStatement<never>;
  readonly logDelete: SqliteStatement<never>;
  readonly opsDelete: SqliteStatement<never>;

  constructor(db: SqliteConnection) {
    this.get = db.prepare(SQLITE_SQL.get);
    this.current = db.prepare(SQLITE_SQL.current);
    this.bump = db.prepare(SQLITE_SQL.bump);
    this.update = db.prepare(SQLITE_SQL.update);
    this.create = db.prepare(SQLITE_SQL.create);
    this.deleteAny = db.prepare(SQLITE_SQL.deleteAny);
    this.deleteAt = db.prepare(SQLITE_SQL.deleteAt);
    this.scan = db.prepare(SQLITE_SQL.scan);
    this.scanText = db.prepare(SQLITE_SQL.scanText);
    this.purge = db.prepare(SQLITE_SQL.purge);
    this.opInsert = db.prepare(SQLITE_SQL.opInsert);
    this.logVersion = db.prepare(SQLITE_SQL.logVersion);
    this.logUpsert = db.prepare(SQLITE_SQL.logUpsert);
    this.msgInsert = db.prepare(SQLITE_SQL.msgInsert);
    this.msgAll = db.prepare(SQLITE_SQL.msgAll);
    this.msgLast = db.prepare(SQLITE_SQL.msgLast);
    this.msgClear = db.prepare(SQLITE_SQL.msgClear);
    this.msgTrim = db.prepare(SQLITE_SQL.msgTrim);
    this.logDelete = db.prepare(SQLITE_SQL.logDelete);
    this.opsDelete = db.prepare(SQLITE_SQL.opsDelete);
  }
}

/** What a unit of work needs: `read` runs as is, `snapshot` in a read transaction, `write` in `BEGIN IMMEDIATE`. */
type Access = "read" | "snapshot" | "write";

/** Result codes that mean the file cannot be used right now (as opposed to an SQL mistake). */
const UNAVAILABLE_CODES = new Set(["SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_READONLY", "SQLITE_NOTADB", "SQLITE_CORRUPT", "SQLITE_PERM", "SQLITE_AUTH", "SQLITE_PROTOCOL"]);

export class SqliteSessionStore implements SessionStore {
  readonly kind = "sqlite" as const;
  readonly url: string;
  readonly messages: MessageLog;
  readonly path: string;
  readonly driver: SqliteDriverName;
  readonly readOnly: boolean;
  private readonly codec: SessionCodec;
  private readonly busyTimeoutMs: number;
  private readonly synchronous: "normal" | "full";
  private db: SqliteConnection | undefined;
  private stmts: Statements | undefined;
  private closed = false;
  /** Opening this store created the file's tables (a new file): what `setup()` reports as `changed`. */
  private createdSchema = false;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path === ":memory:" ? ":memory:" : resolve(options.path);
    this.url = options.displayUrl ?? `sqlite:${options.path}`;
    this.codec = options.codec ?? defaultSessionCodec();
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
      throw new ConfigurationError(`busyTimeoutMs must be a non-negative integer (ms), got ${String(options.busyTimeoutMs)}`);
    }
    this.synchronous = options.synchronous ?? "normal";
    if (this.synchronous !== "normal" && this.synchronous !== "full") {
      throw new ConfigurationError(`synchronous must be "normal" or "full", got ${JSON.stringify(String(this.synchronous)).slice(0, 40)}`);
    }
    this.driver = checkSqliteDriver(options.driver ?? DEFAULT_SQLITE_DRIVER, "SqliteStoreOptions.driver");
    this.readOnly = options.readOnly ?? false;
    if (this.readOnly && this.path === ":memory:") {
      throw new ConfigurationError("a read-only SQLite store needs a file: :memory: starts empty", "drop readOnly, or give the path of an existing file");
    }
    this.messages = new SqliteMessageLog(this, options.messageCodec ?? defaultMessageCodec);
  }

  /**
   * Runs `fn` on the open database (opening it first if needed), inside the transaction `access`
   * asks for. While another process holds the lock, waits without blocking the event loop and tries
   * again, up to `busyTimeoutMs`; driver failures become clear errors. @internal
   */
  async run<T>(operation: string, access: Access, fn: (s: Statements) => T): Promise<T> {
    if (access === "write" && this.readOnly) {
      throw new StatebagError("store-read-only", `the SQLite store at ${this.url} was opened read-only: ${operation} is not allowed`, {
        hint: "open it without readOnly (drop ?readOnly=true) to write",
      });
    }
    const deadline = performance.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new StatebagError("store-closed", `the SQLite store at ${this.url} was closed`, { hint: "open a new store with openStore()" });
      try {
        const db = this.db ?? this.open();
        return access === "read" ? fn(this.stmts!) : this.transaction(db, access === "write" ? "BEGIN IMMEDIATE" : "BEGIN", () => fn(this.stmts!));
      } catch (error) {
        const left = deadline - performance.now();
        if (!this.isBusy(error) || left <= 0) throw this.mapError(operation, error);
        const pause = Math.min(2 ** attempt, MAX_RETRY_PAUSE_MS) * (0.5 + Math.random());
        await sleep(Math.max(1, Math.min(pause, left)));
      }
    }
  }

  /** `fn` inside one transaction: committed when it returns, rolled back when it throws. */
  private transaction<T>(db: SqliteConnection, begin: string, fn: () => T): T {
    db.exec(begin);
    try {
      const result = fn();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      // SQLite may already have rolled back (after an I/O error, for one); the first error is what to report.
      if (db.inTransaction) {
        try {
          db.exec("ROLLBACK");
        } catch {}
      }
      throw error;
    }
  }

  private open(): SqliteConnection {
    const driver = DRIVERS[this.driver];
    const other = openFiles.get(this.path);
    if (this.path !== ":memory:" && other && other.driver !== this.driver) {
      throw new ConfigurationError(
        `the SQLite file ${this.path} is already open in this process through the ${other.driver} driver; opening it through ${this.driver} as well could corrupt it`,
        "use one SQLite driver per file in a process (close the other store first)",
      );
    }
    driver.load(); // a driver this Node lacks is named before the store's folder is created
    const db = this.readOnly ? this.openReadOnly(driver) : this.openWritable(driver);
    if (this.path !== ":memory:") openFiles.set(this.path, { driver: this.driver, count: (other?.count ?? 0) + 1 });
    return db;
  }

  private openWritable(driver: SqliteDriver): SqliteConnection {
    if (this.path !== ":memory:") mkdirSync(dirname(this.path), { recursive: true });
    const db = driver.open(this.path, { readOnly: false, busyTimeoutMs: Math.min(this.busyTimeoutMs, LOCK_WAIT_PER_ATTEMPT_MS) });
    try {
      // WAL: readers never block the writer and vice versa.
      if (this.path !== ":memory:") db.exec("PRAGMA journal_mode = WAL");
      db.exec(this.synchronous === "full" ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
      const created = this.transaction(db, "BEGIN IMMEDIATE", () => {
        db.exec(DDL);
        // No version recorded: the tables were created just now, in this transaction.
        if (this.checkFormat(db) !== undefined) return false;
        db.prepare(`INSERT INTO statebag_meta (key, value) VALUES ('schema_version', ?)`).run(SQLITE_SCHEMA_VERSION);
        return true;
      });
      if (created) this.createdSchema = true;
      this.stmts = new Statements(db);
    } catch (error) {
      this.stmts = undefined;
      db.close();
      throw error;
    }
    this.db = db;
    return db;
  }

  /**
   * Opens an existing file for reading. Reading a WAL file needs its shared-memory file next to it;
   * where that cannot be created (a read-only directory or mount), the file is read as immutable.
   */
  private openReadOnly(driver: SqliteDriver): SqliteConnection {
    if (!existsSync(this.path)) {
      throw new StoreNotSetUpError(this.url, `there is no SQLite file at ${this.path} (${this.url})`, "check the path; a read-only open never creates the file");
    }
    const busyTimeoutMs = Math.min(this.busyTimeoutMs, LOCK_WAIT_PER_ATTEMPT_MS);
    let db = driver.open(this.path, { readOnly: true, busyTimeoutMs });
    try {
      try {
        this.checkFormat(db);
      } catch (error) {
        const code = driver.resultCode(error);
        if (code !== "SQLITE_READONLY" && code !== "SQLITE_CANTOPEN") throw error;
        if (!driver.canOpenImmutable) {
          throw new StoreUnavailableError("SQLite", this.url, "open read-only", {
            cause: Object.assign(new Error((error as Error).message, { cause: error }), { code }),
            hint: `the file's directory is read-only, and the ${driver.name} driver cannot read a WAL file there: use the default node:sqlite driver (drop ?driver=), or copy the file somewhere writable`,
            reconnects: false,
          });
        }
        db.close();
        db = driver.open(this.path, { readOnly: true, immutable: true, busyTimeoutMs });
        this.checkFormat(db);
      }
      this.stmts = new Statements(db);
    } catch (error) {
      this.stmts = undefined;
      db.close();
      throw error;
    }
    this.db = db;
    return db;
  }

  /** The recorded storage format (undefined: none yet); refuses a newer one, and (read-only) a file without statebag's tables. */
  private checkFormat(db: SqliteConnection): number | undefined {
    const hasTables = db.prepare<{ n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'statebag_meta'`).get()!.n > 0;
    if (!hasTables) {
      throw new StoreNotSetUpError(this.url, `the SQLite file ${this.path} has no statebag tables`, "check the path; open it once for writing (or run statebag store setup) to create them");
    }
    const row = db.prepare<{ value: number }>(`SELECT value FROM statebag_meta WHERE key = 'schema_version'`).get();
    if (row !== undefined && row.value > SQLITE_SCHEMA_VERSION) {
      throw new StoreNotSetUpError(
        this.url,
        `the SQLite store at ${this.url} has storage format ${row.value}, newer than this statebag knows (${SQLITE_SCHEMA_VERSION})`,
        "upgrade statebag in this app to the version that wrote the file",
      );
    }
    return row?.value;
  }

  private isBusy(error: unknown): boolean {
    const code = DRIVERS[this.driver].resultCode(error);
    return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED";
  }

  private mapError(operation: string, error: unknown): unknown {
    if (!(error instanceof Error)) return error;
    const code = DRIVERS[this.driver].resultCode(error);
    if (code !== undefined && UNAVAILABLE_CODES.has(code)) {
      // The result-code name in front of the driver's message, the same for both drivers.
      const cause = Object.assign(new Error(error.message, { cause: error }), { code });
      return new StoreUnavailableError("SQLite", this.url, operation, { cause, hint: sqliteHint(code, this.busyTimeoutMs), reconnects: false });
    }
    const errno = (error as { code?: unknown }).code;
    if (typeof errno === "string" && /^E[A-Z]+$/.test(errno)) {
      return new StoreUnavailableError("SQLite", this.url, operation, {
        cause: error,
        hint: "check that the directory can be created and written; the same store works once it can",
        reconnects: false,
      });
    }
    return error;
  }

  /**
   * The file sets itself up when this store opens it; `changed` says whether that opening created
   * the tables (a new file), so it stays true for every `setup()` on this store object (`openStore`
   * calls `setup()` itself before handing the store out).
   */
  async setup(): Promise<SetupResult> {
    await this.run("setup", "read", () => undefined);
    return { version: SQLITE_SCHEMA_VERSION, changed: this.createdSchema };
  }

  async get(id: string): Promise<StoredSession | undefined> {
    checkId(id);
    const row = await this.run("get", "read", (s) => s.get.get(id, Date.now()));
    if (!row) return undefined;
    return { session: loadStoredSession(this.codec, id, row.data, this.url), revision: row.revision };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    // Validate and serialize before taking any lock.
    const text = this.codec.serialize(session);
    return this.run("save", "write", (s): number => {
      const now = Date.now();
      const expiresAt = ttlMs === undefined ? null : now + ttlMs;
      const revision = s.bump.get()!.value;
      const changes =
        expected === null ? s.create.run(id, revision, text, expiresAt, now, now).changes : s.update.run(revision, text, expiresAt, now, id, expected, now).changes;
      if (changes === 1) return revision;
      // Throwing rolls the counter bump back; the current revision is read under the same lock.
      throw new ConflictError(id, expected, s.current.get(id, now)?.revision ?? null);
    });
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    return this.run("delete", "write", (s): boolean => {
      const now = Date.now();
      if (expected === undefined) return s.deleteAny.get(id, now)?.live === 1;
      if (s.deleteAt.run(id, expected, now).changes === 1) return true;
      throw new ConflictError(id, expected, s.current.get(id, now)?.revision ?? null);
    });
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    const now = Date.now();
    const rows = await this.run("scan", "read", (s) =>
      (includeText ? s.scanText : s.scan).all(cursor ?? "", now, limit + 1) as { id: string; revision: number; data?: string; expires_at?: number | null }[],
    );
    const items = rows.map((r) =>
      includeText ? scanItem(r.id, r.revision, r.data, r.expires_at == null ? undefined : Math.max(1, r.expires_at - now)) : scanItem(r.id, r.revision),
    );
    return scanPage(items, limit);
  }

  async purgeExpired(): Promise<number> {
    return this.run("purgeExpired", "write", (s) => s.purge.run(Date.now()).changes);
  }

  async close(): Promise<void> {
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    this.stmts = undefined;
    if (!db) return;
    db.close();
    const entry = openFiles.get(this.path);
    if (entry && --entry.count === 0) openFiles.delete(this.path);
  }
}

function sqliteHint(code: string, busyTimeoutMs: number): string {
  switch (code) {
    case "SQLITE_BUSY":
    case "SQLITE_LOCKED":
      return `another process held the database's write lock for longer than busyTimeoutMs (${busyTimeoutMs} ms); the same store works once it is released (raise ?busyTimeout= to wait longer)`;
    case "SQLITE_CORRUPT":
    case "SQLITE_NOTADB":
      return "the file is damaged or is not a SQLite database; retrying will not help: restore it from a backup, or recover what is readable with the sqlite3 shell's .recover";
    case "SQLITE_FULL":
      return "the disk is full: free space, then retry (nothing partial was written)";
    case "SQLITE_READONLY":
      return "the file or its directory is read-only: make it writable, or open it with ?readOnly=true to read";
    default:
      return "check that the file and its directory exist, are writable and are on a local disk (SQLite's locking needs one); the same store works once they are";
  }
}

class SqliteMessageLog implements MessageLog {
  constructor(
    private readonly store: SqliteSessionStore,
    private readonly codec: MessageCodec,
  ) {}

  async appendMessages(storageId: string, messages: readonly ChatMessage[], options: AppendOptions): Promise<AppendResult> {
    checkId(storageId, "storageId");
    const operationId = checkOperationId(options?.operationId);
    const texts = serializeMessages(this.codec, messages);
    return this.store.run("appendMessages", "write", (s): AppendResult => {
      if (s.opInsert.run(storageId, operationId).changes === 0) {
        return { applied: false, version: s.logVersion.get(storageId)?.version ?? 0 };
      }
      const version = s.bump.get()!.value;
      const end = s.logUpsert.get(storageId, version, texts.length)!.next_seq;
      let seq = end - texts.length;
      for (const text of texts) s.msgInsert.run(storageId, seq++, text);
      return { applied: true, version };
    });
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    const rows = await this.store.run("getMessages", "read", (s) => (last === undefined ? s.msgAll.all(storageId) : s.msgLast.all(storageId, last)));
    return rows.map((r) => this.codec.deserialize(r.body));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const { rows, version } = await this.store.run("readMessages", "snapshot", (s) => ({
      version: s.logVersion.get(storageId)?.version ?? 0,
      rows: s.msgAll.all(storageId),
    }));
    return { messages: rows.map((r) => this.codec.deserialize(r.body)), version };
  }

  async replaceMessages(storageId: string, messages: readonly ChatMessage[], options: ReplaceOptions = {}): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages);
    return this.store.run("replaceMessages", "write", (s): number => {
      const current = s.logVersion.get(storageId)?.version ?? 0;
      if (operationId !== undefined && s.opInsert.run(storageId, operationId).changes === 0) return current;
      if (expected !== undefined && expected !== current) throw logConflict(storageId, expected, current);
      const version = s.bump.get()!.value;
      const end = s.logUpsert.get(storageId, version, texts.length)!.next_seq;
      s.msgClear.run(storageId);
      let seq = end - texts.length;
      for (const text of texts) s.msgInsert.run(storageId, seq++, text);
      return version;
    });
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    return this.store.run("trimMessages", "write", (s): number => {
      const log = s.logVersion.get(storageId);
      const current = log?.version ?? 0;
      if (expectedVersion !== undefined && expectedVersion !== current) throw logConflict(storageId, expectedVersion, current);
      if (!log) return 0;
      const removed = s.msgTrim.run(storageId, log.next_seq - keepLast).changes;
      if (removed > 0) s.logUpsert.get(storageId, s.bump.get()!.value, 0);
      return removed;
    });
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    return this.store.run("deleteMessages", "write", (s): boolean => {
      s.msgClear.run(storageId);
      s.opsDelete.run(storageId);
      return s.logDelete.run(storageId).changes === 1;
    });
  }
}
