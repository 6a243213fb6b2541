/**
 * The default store: one SQLite file in WAL mode, through the built-in `node:sqlite` driver (or the
 * optional better-sqlite3, `driver: "better-sqlite3"`; both read and write the same file format).
 * Several processes on one machine can share the file: every write is a `BEGIN IMMEDIATE`
 * transaction, so writers queue on SQLite's file lock and the compare-and-swap inside cannot
 * interleave. A writer waits for another process's lock asynchronously (a short wait inside SQLite,
 * then retries with backoff up to `busyTimeoutMs`), so the event loop keeps running meanwhile.
 *
 * The tables and every statement are in sql.ts (the storage format), the message log in
 * message-log.ts, the two drivers in node-sqlite.ts and better-sqlite3.ts (driver.ts: what both
 * provide), `sqlite:` URLs in url.ts.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import type { AgentSession } from "../../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, loadStoredSession, serializeRow, storedText } from "../codec.js";
import { checkDelete, checkId, checkSave, checkScan, scanItem, scanPage, sessionId } from "../common.js";
import { ConflictError, SessionOwnerError, StoreNotSetUpError, StoreUnavailableError } from "../errors.js";
import { eraseOwnerSessions } from "../erasure.js";
import type { SessionMetaProtection } from "../encryption/meta.js";
import {
  checkList,
  checkMeta,
  encodeCursor,
  metaProtectionOf,
  plaintextMeta,
  plaintextOwnerError,
  readMeta,
  isoTime,
  storedMeta,
  usesContext,
} from "../listing.js";
import { checkRetention, purgeRetention } from "../retention.js";
import type {
  DeleteOptions,
  EraseOptions,
  EraseReceipt,
  ListItem,
  ListOptions,
  ListPage,
  MessageCodec,
  MessageLog,
  RetentionOptions,
  RetentionPolicy,
  SaveOptions,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionStore,
  SetupResult,
  StoredSession,
  StoredSessionMeta,
} from "../types.js";
import { betterSqliteDriver } from "./better-sqlite3.js";
import {
  DEFAULT_SQLITE_DRIVER,
  checkSqliteDriver,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteStatement,
  type SqliteDriverName,
} from "./driver.js";
import { SqliteMessageLog } from "./message-log.js";
import { saveRowsInOneTransaction } from "./batch-save.js";
import { SAVE_BATCH, type BatchSaveEntry, type BatchSaveResult } from "../batch-save.js";
import { SqliteStreamBuffer, deleteSessionStreams } from "./stream-buffer.js";
import type { BlobOptions, BlobStore } from "../../blobs/blob-store.js";
import { storeBlobs } from "../blobs.js";
import { SqliteBlobBackend } from "./blobs.js";
import { chunkCodec } from "../stream-common.js";
import { nodeSqliteDriver } from "./node-sqlite.js";
import {
  COLUMNS_SQL,
  DDL,
  FORMAT_SQL,
  PRAGMAS,
  Statements,
  TRANSACTION,
  V2_COLUMNS,
  V2_INDEXES,
  LISTING_INDEX,
  V3_STREAM_DDL,
  V4_BLOB_DDL,
  type Access,
  type MetaRow,
} from "./sql.js";

/**
 * The storage-format version this code writes (recorded in `statebag_meta`). 2: session metadata
 * columns and listing indexes; 3: the stream-buffer tables; 4: the blob tables; 5: encrypted
 * session rows as BLOBs in `data` (no table changes: recorded so that earlier releases refuse the
 * file rather than misread a BLOB). A writable open upgrades an older file in place.
 */
export const SQLITE_SCHEMA_VERSION = 5;

/** The oldest format this code reads without upgrading (a read-only store): 5 only adds BLOB rows. */
const SQLITE_READABLE_VERSION = 4;

/** Sorts after every stored time and id: the keyset cursor of a first page. */
const PAST_EVERY_TIME = Number.MAX_SAFE_INTEGER;
const NO_BOUND_BEFORE = Number.MAX_SAFE_INTEGER;
const NO_BOUND_AFTER = Number.MIN_SAFE_INTEGER;

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
  /** What `purgeExpired()` removes besides expired sessions. */
  retention?: RetentionOptions;
  /** The budgets and chunk size of `store.blobs` (kept in the same file). */
  blobs?: BlobOptions;
}

const DRIVERS: Record<SqliteDriverName, SqliteDriver> = {
  "node:sqlite": nodeSqliteDriver,
  "better-sqlite3": betterSqliteDriver,
};

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

/** Result codes that mean the file cannot be used right now (as opposed to an SQL mistake). */
const UNAVAILABLE_CODES = new Set([
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_CANTOPEN",
  "SQLITE_IOERR",
  "SQLITE_FULL",
  "SQLITE_READONLY",
  "SQLITE_NOTADB",
  "SQLITE_CORRUPT",
  "SQLITE_PERM",
  "SQLITE_AUTH",
  "SQLITE_PROTOCOL",
]);

export class SqliteSessionStore implements SessionStore {
  readonly kind = "sqlite" as const;
  readonly url: string;
  readonly messages: MessageLog;
  readonly streams: SqliteStreamBuffer;
  readonly blobs: BlobStore;
  readonly retention?: RetentionPolicy;
  readonly path: string;
  readonly driver: SqliteDriverName;
  readonly readOnly: boolean;
  private readonly codec: SessionCodec;
  private readonly busyTimeoutMs: number;
  private readonly synchronous: "normal" | "full";
  private db: SqliteConnection | undefined;
  private stmts: Statements | undefined;
  private closed = false;
  /** Opening this store created the file's tables or upgraded their format: what `setup()` reports as `changed`. */
  private createdSchema = false;

  constructor(options: SqliteStoreOptions) {
    this.path = options.path === ":memory:" ? ":memory:" : resolve(options.path);
    this.url = options.displayUrl ?? `sqlite:${options.path}`;
    this.codec = options.codec ?? defaultSessionCodec();
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(this.busyTimeoutMs) || this.busyTimeoutMs < 0) {
      throw new ConfigurationError(
        `busyTimeoutMs must be a non-negative integer (ms), got ${String(options.busyTimeoutMs)}`,
      );
    }
    this.synchronous = options.synchronous ?? "normal";
    if (this.synchronous !== "normal" && this.synchronous !== "full") {
      throw new ConfigurationError(
        `synchronous must be "normal" or "full", got ${JSON.stringify(String(this.synchronous)).slice(0, 40)}`,
      );
    }
    this.driver = checkSqliteDriver(options.driver ?? DEFAULT_SQLITE_DRIVER, "SqliteStoreOptions.driver");
    this.readOnly = options.readOnly ?? false;
    if (this.readOnly && this.path === ":memory:") {
      throw new ConfigurationError(
        "a read-only SQLite store needs a file: :memory: starts empty",
        "drop readOnly, or give the path of an existing file",
      );
    }
    this.messages = new SqliteMessageLog(this, options.messageCodec ?? defaultMessageCodec);
    this.streams = new SqliteStreamBuffer(this, chunkCodec(this.codec));
    this.blobs = storeBlobs(options.blobs, this.codec, { backend: new SqliteBlobBackend(this), where: this.url });
    this.retention = checkRetention(options.retention);
  }

  /**
   * Runs `fn` on the open database (opening it first if needed), inside the transaction `access`
   * asks for. While another process holds the lock, waits without blocking the event loop and tries
   * again, up to `busyTimeoutMs`; driver failures become clear errors. @internal
   */
  async run<T>(operation: string, access: Access, fn: (s: Statements) => T): Promise<T> {
    if (access === "write" && this.readOnly) {
      throw new StatebagError(
        "store-read-only",
        `the SQLite store at ${this.url} was opened read-only: ${operation} is not allowed`,
        {
          hint: "open it without readOnly (drop ?readOnly=true) to write",
        },
      );
    }
    const deadline = performance.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (this.closed)
        throw new StatebagError("store-closed", `the SQLite store at ${this.url} was closed`, {
          hint: "open a new store with openStore()",
        });
      try {
        const db = this.db ?? this.open();
        return access === "read"
          ? fn(this.stmts!)
          : this.transaction(db, access === "write" ? TRANSACTION.write : TRANSACTION.snapshot, () => fn(this.stmts!));
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
    controlStatement(db, begin).run();
    try {
      const result = fn();
      controlStatement(db, TRANSACTION.commit).run();
      return result;
    } catch (error) {
      // SQLite may already have rolled back (after an I/O error, for one); the first error is what to report.
      if (db.inTransaction) {
        try {
          db.exec(TRANSACTION.rollback);
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
    const db = driver.open(this.path, {
      readOnly: false,
      busyTimeoutMs: Math.min(this.busyTimeoutMs, LOCK_WAIT_PER_ATTEMPT_MS),
    });
    try {
      // WAL: readers never block the writer and vice versa.
      if (this.path !== ":memory:") db.exec(PRAGMAS.wal);
      db.exec(this.synchronous === "full" ? PRAGMAS.synchronousFull : PRAGMAS.synchronousNormal);
      const created = this.transaction(db, TRANSACTION.write, () => {
        db.exec(DDL);
        // No version recorded: the tables were created just now, in this transaction.
        const version = this.checkFormat(db);
        if (version === SQLITE_SCHEMA_VERSION) return addListingIndex(db);
        if ((version ?? 1) < 2) upgradeToV2(db);
        addListingIndex(db);
        db.exec(V3_STREAM_DDL);
        db.exec(V4_BLOB_DDL);
        db.prepare(FORMAT_SQL.setVersion).run(SQLITE_SCHEMA_VERSION);
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
      throw new StoreNotSetUpError(
        this.url,
        `there is no SQLite file at ${this.path} (${this.url})`,
        "check the path; a read-only open never creates the file",
      );
    }
    const busyTimeoutMs = Math.min(this.busyTimeoutMs, LOCK_WAIT_PER_ATTEMPT_MS);
    let db = driver.open(this.path, { readOnly: true, busyTimeoutMs });
    try {
      try {
        this.checkReadableFormat(db);
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
        this.checkReadableFormat(db);
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
    const hasTables = db.prepare<{ n: number }>(FORMAT_SQL.hasTables).get()!.n > 0;
    if (!hasTables) {
      throw new StoreNotSetUpError(
        this.url,
        `the SQLite file ${this.path} has no statebag tables`,
        "check the path; open it once for writing (or run statebag store setup) to create them",
      );
    }
    const row = db.prepare<{ value: number }>(FORMAT_SQL.version).get();
    if (row !== undefined && row.value > SQLITE_SCHEMA_VERSION) {
      throw new StoreNotSetUpError(
        this.url,
        `the SQLite store at ${this.url} has storage format ${row.value}, newer than this statebag knows (${SQLITE_SCHEMA_VERSION})`,
        "upgrade statebag in this app to the version that wrote the file",
      );
    }
    return row?.value;
  }

  /** A read-only store cannot upgrade: an older format is named, with the way to upgrade it. */
  private checkReadableFormat(db: SqliteConnection): void {
    const version = this.checkFormat(db) ?? 1;
    if (version < SQLITE_READABLE_VERSION) {
      throw new StoreNotSetUpError(
        this.url,
        `the SQLite store at ${this.url} has storage format ${version}; this statebag reads ${SQLITE_SCHEMA_VERSION}, and a read-only store cannot upgrade it`,
        "open it once for writing (or run `statebag store setup --store <url>`) to upgrade it in place; sessions stored before keep loading",
      );
    }
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
      return new StoreUnavailableError("SQLite", this.url, operation, {
        cause,
        hint: sqliteHint(code, this.busyTimeoutMs),
        reconnects: false,
      });
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
    if (row === undefined) return undefined;
    const revision = row[0];
    const protection = metaProtectionOf(this.codec);
    const meta =
      protection === undefined
        ? plainMeta(row[2], row[3], row[4], row[5], row[6])
        : protectedMeta(id, row[2], row[3], row[4], row[5], row[6], protection, true);
    return {
      session: loadStoredSession(this.codec, id, row[1], this.url, { owner: meta.owner, revision }),
      revision,
      meta,
    };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    return this.run("save", "write", this.saveWrite(session, options));
  }

  /**
   * Every entry saved as `save` would save it, in one write transaction, each under its own
   * savepoint (see batch-save.ts). @internal
   */
  async [SAVE_BATCH](entries: readonly BatchSaveEntry[]): Promise<BatchSaveResult[]> {
    return saveRowsInOneTransaction(
      entries,
      (entry) => this.saveWrite(entry.session, entry.options),
      (rows) => this.run("saveBatch", "write", (s) => rows(s, this.db!)),
    );
  }

  /**
   * `save` up to the lock (the checks, and validation and serialization unless the codec uses its
   * context), and the write to run in the write transaction. Throws what `save` would throw before
   * the lock; the write throws what it would throw under it (and then writes nothing).
   */
  private saveWrite(session: AgentSession, options: SaveOptions): (s: Statements) => number {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const meta = checkMeta(options);
    const contextual = usesContext(this.codec);
    // Protected owners and titles (an encrypting codec): the columns hold their protected forms;
    // an update reads the row first (in the write transaction, before the save), for the plaintext
    // owner and to move a row written before (plaintext owner or title) to the protected forms.
    const protection = metaProtectionOf(this.codec);
    const givenOwnerColumn =
      meta.owner === undefined || protection === undefined ? meta.owner : protection.owner(meta.owner);
    const readFirst = expected !== null && (protection !== undefined || (meta.owner === undefined && contextual));
    const titleColumn =
      meta.title === undefined || protection === undefined ? meta.title : protection.title(id, meta.title);
    // Validate and serialize before taking any lock, unless the codec uses its context: it is
    // given the revision the row is written under, drawn from the file's counter inside the write
    // transaction (in this process nothing runs meanwhile anyway: both are synchronous). A codec
    // that does not use its context is given the owner named, if any.
    const plain = contextual ? undefined : serializeRow(this.codec, session, { owner: meta.owner });
    const labels = meta.labels === undefined ? null : JSON.stringify(meta.labels);
    return (s): number => {
      const now = Date.now();
      // The owner the row will have, for the codec: the given one, else (an update) the stored one.
      // A row's owner never changes, and the update below only applies at that revision.
      let owner = meta.owner;
      let ownerColumn = givenOwnerColumn;
      let protect: [string | null, string | null] | undefined;
      if (readFirst) {
        const current = s.currentMeta.get(id, now);
        if (current?.revision !== expected) throw new ConflictError(id, expected, current?.revision ?? null);
        const stored = readMeta(protection, id, current.owner, current.title);
        owner ??= stored.owner ?? undefined;
        if (protection !== undefined && plaintextMeta(protection, current.owner, current.title)) {
          // The update below names the owner as stored; the protected forms are written after it.
          if (meta.owner !== undefined && stored.owner === meta.owner) ownerColumn = current.owner ?? undefined;
          protect = [
            stored.owner == null ? null : protection.owner(stored.owner),
            stored.title == null || meta.title !== undefined ? null : protection.title(id, stored.title),
          ];
        }
      }
      const expiresAt = ttlMs === undefined ? null : now + ttlMs;
      const revision = s.bump.get()!.value;
      // Transient: a binary row may be built in the codec's reused buffer, bound just below (synchronously).
      const text = plain ?? serializeRow(this.codec, session, { owner, revision }, true);
      const changes =
        expected === null
          ? s.create.run(id, revision, text, expiresAt, now, now, ownerColumn ?? null, titleColumn ?? null, labels, now)
              .changes
          : s.update.run(
              revision,
              text,
              expiresAt,
              now,
              titleColumn === undefined ? 0 : 1,
              titleColumn ?? null,
              labels === null ? 0 : 1,
              labels,
              id,
              expected,
              now,
              ownerColumn ?? null,
              ownerColumn ?? null,
            ).changes;
      if (changes === 1) {
        if (protect !== undefined) s.protectMeta.run(protect[0], protect[1], id);
        return revision;
      }
      // Throwing rolls the counter bump back; the current row is read under the same lock.
      const current = s.current.get(id, now);
      if (current !== undefined && current.revision === expected) throw new SessionOwnerError(id, meta.owner!);
      throw new ConflictError(id, expected, current?.revision ?? null);
    };
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    return this.run("delete", "write", (s): boolean => {
      const now = Date.now();
      // The session's stream buffers go in the same transaction (whether or not a row was there).
      if (expected === undefined) {
        deleteSessionStreams(s, id, now);
        return s.deleteAny.get(id, now)?.live === 1;
      }
      if (s.deleteAt.run(id, expected, now).changes === 1) {
        deleteSessionStreams(s, id, now);
        return true;
      }
      throw new ConflictError(id, expected, s.current.get(id, now)?.revision ?? null);
    });
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    const now = Date.now();
    const protection = metaProtectionOf(this.codec);
    const rows = await this.run(
      "scan",
      "read",
      (s) =>
        (includeText ? s.scanText : s.scan).all(cursor ?? "", now, limit + 1) as ({
          id: string;
          revision: number;
          data?: string | Uint8Array;
          expires_at?: number | null;
        } & MetaRow)[],
    );
    const items = rows.map((row) => {
      const ttlMs = row.expires_at == null ? undefined : Math.max(1, row.expires_at - now);
      const item =
        includeText && row.data !== undefined
          ? scanItem(row.id, row.revision, storedText(row.data), ttlMs)
          : scanItem(row.id, row.revision);
      item.meta = rowMeta(row, row.id, protection, false);
      if (plaintextMeta(protection, row.owner, row.title)) item.plaintextMeta = true;
      return item;
    });
    return scanPage(items, limit);
  }

  async list(options: ListOptions): Promise<ListPage> {
    const { owner, labels, updatedBefore, updatedAfter, order, cursor, limit } = checkList(options);
    const now = Date.now();
    const protection = metaProtectionOf(this.codec);
    // Without labels to match, the statements without the label test (a subquery per row).
    const anyLabels = Object.keys(labels).length === 0;
    const storedOwner = protection === undefined ? owner : protection.owner(owner);
    // By time, one upper bound (updated_at, id) < (time, id): the cursor's, or updatedBefore's when
    // that is earlier (`updated_at < t` is `(updated_at, id) < (t, "")`: no id is empty), so the
    // index range starts at the page instead of at the owner's newest session.
    const cursorTime = cursor === undefined ? PAST_EVERY_TIME : Number(cursor.updated);
    const [upperTime, upperId] =
      updatedBefore !== undefined && updatedBefore <= cursorTime ? [updatedBefore, ""] : [cursorTime, cursor?.id ?? ""];
    const labelsJson = anyLabels ? [] : [JSON.stringify(labels)];
    const rows = await this.run("list", "read", (s) => {
      // A protecting store refuses to list an owner that still has plaintext-owner rows (one index probe, first page).
      if (protection !== undefined && cursor === undefined) {
        for (const other of protection.otherForms(owner))
          if (s.listByIdAny.all(other, now, NO_BOUND_BEFORE, NO_BOUND_AFTER, "", 1).length > 0)
            throw plaintextOwnerError(this.url);
      }
      if (order === "id") {
        const byId = anyLabels ? s.listByIdAny : s.listById;
        const bounds = [updatedBefore ?? NO_BOUND_BEFORE, updatedAfter ?? NO_BOUND_AFTER];
        return byId.all(storedOwner, now, ...bounds, ...labelsJson, cursor?.id ?? "", limit + 1);
      }
      // The usual page (newest first, no labels, no lower bound): the statement with the fewest tests.
      if (anyLabels && updatedAfter === undefined)
        return s.listNewest.all(storedOwner, now, upperTime, upperId, limit + 1);
      const byTime = anyLabels ? s.listByTimeAny : s.listByTime;
      return byTime.all(storedOwner, now, updatedAfter ?? NO_BOUND_AFTER, ...labelsJson, upperTime, upperId, limit + 1);
    });
    const count = Math.min(rows.length, limit);
    const items: ListItem[] = new Array(count);
    for (let i = 0; i < count; i++) {
      const row = rows[i];
      const id = row[0];
      const expiresAt = row[7];
      const item: ListItem = {
        id,
        revision: row[1],
        meta:
          protection === undefined
            ? plainMeta(row[2], row[3], row[4], row[5], row[6])
            : protectedMeta(id, row[2], row[3], row[4], row[5], row[6], protection, false),
      };
      if (expiresAt !== null) item.ttlMs = Math.max(1, expiresAt - now);
      items[i] = item;
    }
    if (rows.length <= limit) return { items };
    const last = rows[limit - 1];
    return { items, cursor: encodeCursor({ order, updated: String(last[6]), id: last[0] }) };
  }

  async purgeExpired(): Promise<number> {
    const removed = await this.run("purgeExpired", "write", (s) => s.purge.run(Date.now()).changes);
    await this.streams.purgeExpired(); // stream buffers are not sessions: not counted
    return this.retention ? removed + (await purgeRetention(this, this.retention)).sessions : removed;
  }

  async eraseOwner(owner: string, options?: EraseOptions): Promise<EraseReceipt> {
    return eraseOwnerSessions(this, owner, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.blobs.close(); // a bucket's client (blobs.url), if any
    const db = this.db;
    this.db = undefined;
    this.stmts = undefined;
    if (!db) return;
    db.close();
    const entry = openFiles.get(this.path);
    if (entry && --entry.count === 0) openFiles.delete(this.path);
  }
}

/**
 * BEGIN / COMMIT prepared once per connection (`exec` parses its text at every call, and every
 * write runs both: a stream append is one small insert inside them).
 */
const controlStatements = new WeakMap<SqliteConnection, Map<string, SqliteStatement<never>>>();
function controlStatement(db: SqliteConnection, sql: string): SqliteStatement<never> {
  let prepared = controlStatements.get(db);
  if (!prepared) controlStatements.set(db, (prepared = new Map()));
  let statement = prepared.get(sql);
  if (!statement) prepared.set(sql, (statement = db.prepare<never>(sql)));
  return statement;
}

/**
 * Format 1 -> 2: the metadata columns (each only if missing) and the listing indexes. Runs inside
 * the opening transaction, so an interrupted upgrade leaves format 1 and is redone on the next open.
 */
function upgradeToV2(db: SqliteConnection): void {
  const have = new Set(
    db
      .prepare<{ name: string }>(COLUMNS_SQL)
      .all()
      .map((r) => r.name),
  );
  for (const [name, column] of V2_COLUMNS)
    if (!have.has(name)) db.exec(`ALTER TABLE statebag_sessions ADD COLUMN ${column}`);
  for (const index of V2_INDEXES) db.exec(index);
}

/**
 * The listing index (sql.ts `LISTING_INDEX`), created where it is missing (a file written before
 * it, of this format or an older one) in place of the narrower index it replaces. True when it
 * was added. Runs inside the opening transaction.
 */
function addListingIndex(db: SqliteConnection): boolean {
  if ((db.prepare<{ n: number }>(LISTING_INDEX.exists).get()?.n ?? 0) > 0) return false;
  db.exec(LISTING_INDEX.create);
  db.exec(LISTING_INDEX.dropReplaced);
  return true;
}

/**
 * A row's metadata without protected columns (the usual `get` and listing): what `rowMeta` builds
 * (`storedMeta`), as one object, a time formatted once when both are equal.
 */
function plainMeta(
  owner: string | null,
  title: string | null,
  labels: string | null,
  createdAt: number,
  updatedAt: number,
): StoredSessionMeta {
  const updated = isoTime(updatedAt);
  const meta: StoredSessionMeta = {
    createdAt: createdAt === updatedAt ? updated : isoTime(createdAt),
    updatedAt: updated,
  };
  if (owner !== null) meta.owner = owner;
  if (title !== null) meta.title = title;
  if (labels !== null) {
    const parsed = JSON.parse(labels) as Record<string, string>;
    for (const _label in parsed) {
      meta.labels = parsed;
      break;
    }
  }
  return meta;
}

/** A row's metadata on a protecting store: owner and title read by `readMeta` (`get` strictly, `list` not). */
function protectedMeta(
  id: string,
  ownerColumn: string | null,
  titleColumn: string | null,
  labels: string | null,
  createdAt: number,
  updatedAt: number,
  protection: SessionMetaProtection,
  strict: boolean,
): StoredSessionMeta {
  const { owner, title } = readMeta(protection, id, ownerColumn, titleColumn, strict);
  return storedMeta(
    owner,
    title,
    labels === null ? null : (JSON.parse(labels) as Record<string, string>),
    createdAt,
    updatedAt,
  );
}

function rowMeta(
  row: MetaRow,
  id: string,
  protection: SessionMetaProtection | undefined,
  strict = true,
): StoredSessionMeta {
  const { owner, title } = readMeta(protection, id, row.owner, row.title, strict);
  return storedMeta(
    owner,
    title,
    row.labels === null ? null : (JSON.parse(row.labels) as Record<string, string>),
    row.created_at,
    row.updated_at,
  );
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
