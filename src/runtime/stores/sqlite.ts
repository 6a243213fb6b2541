/**
 * The default store: one SQLite file (better-sqlite3, WAL). Several processes on one machine can
 * share the file: every write is a `BEGIN IMMEDIATE` transaction, so writers queue on SQLite's
 * file lock (waiting up to `busyTimeoutMs`) and the compare-and-swap inside cannot interleave.
 *
 * Revisions come from one counter in `statebag_meta`, so they keep increasing even across a
 * delete and re-create (a client holding an old revision can never match a new session).
 */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, serializeMessages } from "./codec.js";
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
} from "./common.js";
import { ConflictError, StoreNotSetUpError, StoreUnavailableError, logConflict } from "./errors.js";
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
} from "./types.js";

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
  /** The URL to show in errors (default `sqlite:<path>`). */
  displayUrl?: string;
}

type Db = BetterSqlite3.Database;
type Stmt<R = unknown> = BetterSqlite3.Statement<unknown[], R>;

const require = createRequire(import.meta.url);
let driver: typeof BetterSqlite3 | undefined;
function loadDriver(): typeof BetterSqlite3 {
  return (driver ??= require("better-sqlite3") as typeof BetterSqlite3);
}

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
  deleteAny: `DELETE FROM statebag_sessions WHERE id = @id RETURNING (expires_at IS NULL OR expires_at > @now) AS live`,
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

/** better-sqlite3 statements, prepared once per connection. */
class Statements {
  readonly get: Stmt<{ revision: number; data: string }>;
  readonly current: Stmt<{ revision: number }>;
  readonly bump: Stmt<{ value: number }>;
  readonly update: Stmt;
  readonly create: Stmt;
  readonly deleteAny: Stmt;
  readonly deleteAt: Stmt;
  readonly scan: Stmt<{ id: string; revision: number }>;
  readonly scanText: Stmt<{ id: string; revision: number; data: string; expires_at: number | null }>;
  readonly purge: Stmt;
  readonly opInsert: Stmt;
  readonly logVersion: Stmt<{ version: number; next_seq: number }>;
  readonly logUpsert: Stmt<{ next_seq: number }>;
  readonly msgInsert: Stmt;
  readonly msgAll: Stmt<{ body: string }>;
  readonly msgLast: Stmt<{ body: string }>;
  readonly msgClear: Stmt;
  readonly msgTrim: Stmt;
  readonly logDelete: Stmt;
  readonly opsDelete: Stmt;

  constructor(db: Db) {
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

const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT|PERM|AUTH|PROTOCOL)/;

export class SqliteSessionStore implements SessionStore {
  readonly kind = "sqlite" as const;
  readonly url: string;
  readonly messages: MessageLog;
  readonly path: string;
  private readonly codec: SessionCodec;
  private readonly busyTimeoutMs: number;
  private readonly synchronous: "normal" | "full";
  private db: Db | undefined;
  private stmts: Statements | undefined;
  private closed = false;
  /** Opening this store created the file's tables (a new file): what `setup()` reports as `changed`. */
  private createdSchema = false;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path === ":memory:" ? ":memory:" : resolve(options.path);
    this.url = options.displayUrl ?? `sqlite:${options.path}`;
    this.codec = options.codec ?? defaultSessionCodec();
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.synchronous = options.synchronous ?? "normal";
    this.messages = new SqliteMessageLog(this, options.messageCodec ?? defaultMessageCodec);
  }

  /** Runs `fn` on the open database, mapping driver failures to clear errors. @internal */
  run<T>(operation: string, fn: (s: Statements, db: Db) => T): T {
    if (this.closed) throw new Error(`the SQLite store at ${this.url} was closed`);
    try {
      const db = this.open();
      return fn(this.stmts!, db);
    } catch (error) {
      throw this.mapError(operation, error);
    }
  }

  private open(): Db {
    if (this.db) return this.db;
    if (this.path !== ":memory:") mkdirSync(dirname(this.path), { recursive: true });
    const Database = loadDriver();
    const db = new Database(this.path, { timeout: this.busyTimeoutMs });
    try {
      // WAL: readers never block the writer and vice versa; the busy timeout (set by the driver
      // from `timeout`) makes concurrent writers wait instead of failing at once.
      if (this.path !== ":memory:") retryBusy(() => db.pragma("journal_mode = WAL"));
      db.pragma(`synchronous = ${this.synchronous.toUpperCase()}`);
      const created = retryBusy(() =>
        db.transaction((): boolean => {
          db.exec(DDL);
          const row = db.prepare(`SELECT value FROM statebag_meta WHERE key = 'schema_version'`).get() as { value: number } | undefined;
          if (row === undefined) {
            // No version recorded: the tables were created just now, in this transaction.
            db.prepare(`INSERT INTO statebag_meta (key, value) VALUES ('schema_version', ?)`).run(SQLITE_SCHEMA_VERSION);
            return true;
          } else if (row.value > SQLITE_SCHEMA_VERSION) {
            throw new StoreNotSetUpError(
              this.url,
              `the SQLite store at ${this.url} has storage format ${row.value}, newer than this statebag knows (${SQLITE_SCHEMA_VERSION})`,
              "upgrade statebag in this app to the version that wrote the file",
            );
          }
          return false;
        }).immediate(),
      );
      if (created) this.createdSchema = true;
      this.stmts = new Statements(db);
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    return db;
  }

  private mapError(operation: string, error: unknown): unknown {
    if (!(error instanceof Error)) return error;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && UNAVAILABLE_CODES.test(code)) {
      const hint = /BUSY|LOCKED/.test(code)
        ? `another process held the database's write lock for longer than busyTimeoutMs (${this.busyTimeoutMs} ms)`
        : `check that the file and its directory exist, are writable and are on a local disk (SQLite's locking needs one)`;
      return new StoreUnavailableError("SQLite", this.url, operation, { cause: error, hint });
    }
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) {
      return new StoreUnavailableError("SQLite", this.url, operation, {
        cause: error,
        hint: "check that the directory can be created and written",
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
    this.run("setup", () => undefined);
    return { version: SQLITE_SCHEMA_VERSION, changed: this.createdSchema };
  }

  async get(id: string): Promise<StoredSession | undefined> {
    checkId(id);
    const row = this.run("get", (s) => s.get.get(id, Date.now()));
    if (!row) return undefined;
    return { session: this.codec.deserialize(row.data), revision: row.revision };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    // Validate and serialize before taking any lock.
    const text = this.codec.serialize(session);
    const result = this.run("save", (s, db) =>
      db
        .transaction((): number => {
          const now = Date.now();
          const expiresAt = ttlMs === undefined ? null : now + ttlMs;
          const revision = s.bump.get()!.value;
          const changes =
            expected === null
              ? s.create.run(id, revision, text, expiresAt, now, now).changes
              : s.update.run(revision, text, expiresAt, now, id, expected, now).changes;
          if (changes === 1) return revision;
          // Throwing rolls the counter bump back; the current revision is read under the same lock.
          throw new ConflictError(id, expected, s.current.get(id, now)?.revision ?? null);
        })
        .immediate(),
    );
    return result;
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    return this.run("delete", (s, db) =>
      db
        .transaction((): boolean => {
          const now = Date.now();
          if (expected === undefined) {
            const row = s.deleteAny.get({ id, now }) as { live: number } | undefined;
            return row !== undefined && row.live === 1;
          }
          if (s.deleteAt.run(id, expected, now).changes === 1) return true;
          throw new ConflictError(id, expected, s.current.get(id, now)?.revision ?? null);
        })
        .immediate(),
    );
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    const now = Date.now();
    const rows = this.run("scan", (s) =>
      (includeText ? s.scanText : s.scan).all(cursor ?? "", now, limit + 1) as { id: string; revision: number; data?: string; expires_at?: number | null }[],
    );
    const items = rows.map((r) =>
      includeText ? scanItem(r.id, r.revision, r.data, r.expires_at == null ? undefined : Math.max(1, r.expires_at - now)) : scanItem(r.id, r.revision),
    );
    return scanPage(items, limit);
  }

  async purgeExpired(): Promise<number> {
    return this.run("purgeExpired", (s) => s.purge.run(Date.now()).changes);
  }

  async close(): Promise<void> {
    this.closed = true;
    const db = this.db;
    this.db = undefined;
    this.stmts = undefined;
    db?.close();
  }
}

/** `journal_mode` and first-time DDL can report SQLITE_BUSY without waiting while another process opens the file. */
function retryBusy<T>(fn: () => T): T {
  for (let attempt = 0; ; attempt++) {
    try {
      return fn();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= 50 || typeof code !== "string" || !code.startsWith("SQLITE_BUSY")) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.random() * 30);
    }
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
    return this.store.run("appendMessages", (s, db) =>
      db
        .transaction((): AppendResult => {
          if (s.opInsert.run(storageId, operationId).changes === 0) {
            return { applied: false, version: s.logVersion.get(storageId)?.version ?? 0 };
          }
          const version = s.bump.get()!.value;
          const end = s.logUpsert.get(storageId, version, texts.length)!.next_seq;
          let seq = end - texts.length;
          for (const text of texts) s.msgInsert.run(storageId, seq++, text);
          return { applied: true, version };
        })
        .immediate(),
    );
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    const rows = this.store.run("getMessages", (s) => (last === undefined ? s.msgAll.all(storageId) : s.msgLast.all(storageId, last)));
    return rows.map((r) => this.codec.deserialize(r.body));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const { rows, version } = this.store.run("readMessages", (s, db) =>
      db
        .transaction(() => ({ version: s.logVersion.get(storageId)?.version ?? 0, rows: s.msgAll.all(storageId) }))
        .deferred(),
    );
    return { messages: rows.map((r) => this.codec.deserialize(r.body)), version };
  }

  async replaceMessages(storageId: string, messages: readonly ChatMessage[], options: ReplaceOptions = {}): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages);
    return this.store.run("replaceMessages", (s, db) =>
      db
        .transaction((): number => {
          const current = s.logVersion.get(storageId)?.version ?? 0;
          if (operationId !== undefined && s.opInsert.run(storageId, operationId).changes === 0) return current;
          if (expected !== undefined && expected !== current) throw logConflict(storageId, expected, current);
          const version = s.bump.get()!.value;
          const end = s.logUpsert.get(storageId, version, texts.length)!.next_seq;
          s.msgClear.run(storageId);
          let seq = end - texts.length;
          for (const text of texts) s.msgInsert.run(storageId, seq++, text);
          return version;
        })
        .immediate(),
    );
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    return this.store.run("trimMessages", (s, db) =>
      db
        .transaction((): number => {
          const log = s.logVersion.get(storageId);
          const current = log?.version ?? 0;
          if (expectedVersion !== undefined && expectedVersion !== current) throw logConflict(storageId, expectedVersion, current);
          if (!log) return 0;
          const removed = s.msgTrim.run(storageId, log.next_seq - keepLast).changes;
          if (removed > 0) s.logUpsert.get(storageId, s.bump.get()!.value, 0);
          return removed;
        })
        .immediate(),
    );
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    return this.store.run("deleteMessages", (s, db) =>
      db
        .transaction((): boolean => {
          s.msgClear.run(storageId);
          s.opsDelete.run(storageId);
          return s.logDelete.run(storageId).changes === 1;
        })
        .immediate(),
    );
  }
}
