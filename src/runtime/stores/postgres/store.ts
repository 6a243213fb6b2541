/**
 * PostgreSQL store (`pg`), for apps running on many machines.
 *
 * - Tables are created only by an explicit `setup()` (`statebag store setup --store <url>`), never
 *   on start: DDL at every start was slow and took locks in Mastra. A store whose tables are
 *   missing fails with `StoreNotSetUpError` saying to run setup.
 * - `statebag_meta` records the storage-format version so later releases can upgrade it.
 * - The tables and every statement are in sql.ts (the storage format), the message log in
 *   message-log.ts, the URL's PostgreSQL options in url.ts.
 * - Statements are named, so `pg` prepares each once per connection. Behind PgBouncer in
 *   transaction pooling mode (before 1.21, or without `max_prepared_statements`) a named statement
 *   prepared on one server connection is missing on the next: `preparedStatements: false`
 *   (`?pgbouncer=true`) sends every statement unnamed. The store keeps no other session state
 *   (no SET, no session advisory locks; setup's lock is transaction-scoped), so it works in
 *   transaction pooling as it is. The one exception, the stream buffer's LISTEN connection
 *   (stream-buffer.ts), is not used then: its followers poll instead.
 */
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import type { AgentSession } from "../../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, loadStoredSession, serializeRow, storedText } from "../codec.js";
import { loadDriver } from "../drivers.js";
import {
  checkDelete,
  checkId,
  checkSave,
  checkScan,
  isNetworkError,
  scanItem,
  scanPage,
  sessionId,
} from "../common.js";
import {
  ConflictError,
  SessionOwnerError,
  StoreAuthenticationError,
  StoreNotSetUpError,
  StoreUnavailableError,
} from "../errors.js";
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
import { redactUrl, takeParams } from "../url.js";
import type { PgModule, PgPool, PgPoolClient } from "./driver.js";
import { PostgresMessageLog } from "./message-log.js";
import { saveRowsInOneTransaction } from "./batch-save.js";
import { SAVE_BATCH, type BatchSaveEntry, type BatchSaveResult } from "../batch-save.js";
import { PostgresStreamBuffer, deleteSessionStreams } from "./stream-buffer.js";
import type { BlobOptions, BlobStore } from "../../blobs/blob-store.js";
import { storeBlobs } from "../blobs.js";
import { PostgresBlobBackend } from "./blobs.js";
import { chunkCodec } from "../stream-common.js";
import {
  checkIdentifier,
  postgresStatements,
  quoteIdent,
  TRANSACTION,
  type PostgresStatements,
  type Row,
} from "./sql.js";

/**
 * The storage-format version this code reads and writes. 2: session metadata columns and listing
 * indexes (#23); 3: the stream-buffer tables; 4: the blob tables; 5: binary session rows
 * (`data_bytes bytea`, an encrypting codec's ciphertext as bytes). `statebag store setup`
 * upgrades an older schema in place.
 */
export const POSTGRES_SCHEMA_VERSION = 5;

/** A session row's body: its text, or (format 5) the bytes of a binary row. */
function rowBody(row: Row): string | Uint8Array {
  return (row.data_bytes as Uint8Array | null) ?? (row.data as string);
}

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/db`. Either this or `pool`. */
  connectionString?: string;
  /** A pool you own (the store will not end it on close). */
  pool?: PgPool;
  /** Schema holding the tables (default `public`). */
  schema?: string;
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** Pool size (default 10). */
  max?: number;
  /** How long to wait for a connection before reporting the store unavailable (default 5000 ms). */
  connectTimeoutMs?: number;
  /** Client-side limit on one statement (default 30000 ms). */
  queryTimeoutMs?: number;
  /** The URL to show in errors (default: the connection string, password redacted). */
  displayUrl?: string;
  /**
   * Named (prepared) statements (default true). `false` sends unnamed statements, for PgBouncer in
   * transaction pooling mode and other poolers that do not keep prepared statements (`?pgbouncer=true`).
   */
  preparedStatements?: boolean;
  /** What `purgeExpired()` removes besides expired sessions. */
  retention?: RetentionOptions;
  /** The budgets and chunk size of `store.blobs` (kept in the same schema), or `url` to keep them elsewhere. */
  blobs?: BlobOptions;
}

/** `?pgbouncer=` of a store URL: `true` turns named statements off. @internal */
export function preparedStatementsParam(url: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "true") return false;
  if (value === "false") return true;
  throw new ConfigurationError(
    `?pgbouncer= in the store URL "${redactUrl(url)}" must be true or false, got ${JSON.stringify(value.slice(0, 40))}`,
  );
}

/** A named statement missing on this server connection, or already there: a pooler switched connections under us. */
function isPoolerStatementError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return (code === "26000" || code === "42P05") && error instanceof Error && /statebag_\d+/.test(error.message);
}

function loadPg(): PgModule {
  return loadDriver<PgModule>("pg");
}

const NETWORK_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Query read timeout|not queryable|connection error|Client was closed/i;

/** Is this a failure to reach/keep the server (as opposed to an SQL error)? */
function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (isNetworkError(error)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // SQLSTATE: connection exceptions, shutdown/cannot-connect-now, too many connections.
    if (/^08/.test(code) || /^57P0[123]$/.test(code) || code === "53300") return true;
  }
  return NETWORK_MESSAGES.test(error.message);
}

/** SQLSTATE class 28: invalid authorization (wrong password, unknown role, no pg_hba.conf entry). */
function isAuthenticationFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" && /^28/.test(code);
}

/** The user a store logs in as, for messages (never the password). */
function connectionUser(options: PostgresStoreOptions): string | undefined {
  const fromPool = (options.pool as { options?: { user?: unknown } } | undefined)?.options?.user;
  if (typeof fromPool === "string") return fromPool;
  try {
    const user = new URL(options.connectionString ?? "").username;
    return user ? decodeURIComponent(user) : undefined;
  } catch {
    return undefined;
  }
}

function isMissingSchema(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === "42P01" || code === "3F000";
}

export class PostgresSessionStore implements SessionStore {
  readonly kind = "postgres" as const;
  readonly url: string;
  readonly schema: string;
  readonly messages: MessageLog;
  readonly streams: PostgresStreamBuffer;
  readonly blobs: BlobStore;
  readonly retention?: RetentionPolicy;
  private readonly codec: SessionCodec;
  private readonly ownsPool: boolean;
  private readonly options: PostgresStoreOptions;
  private pool_: PgPool | undefined;
  private ready = false;
  private closed = false;
  /** Qualified names and statement texts for this schema. @internal */
  readonly sql: PostgresStatements;

  constructor(options: PostgresStoreOptions) {
    if (!options.connectionString && !options.pool) {
      throw new ConfigurationError("PostgresSessionStore needs a connectionString or a pool");
    }
    // Every part of the URL is checked now (a bad ?sslmode= would otherwise fail at the first call
    // as a plain Error); ?connect_timeout= (seconds) is honoured here, as pg never sees it: the
    // pool's own connection timeout always wins.
    const urlTimeout =
      options.connectionString === undefined
        ? undefined
        : takeParams(options.connectionString, ["connect_timeout"]).params.connect_timeout;
    this.options = {
      ...options,
      connectTimeoutMs: options.connectTimeoutMs ?? (urlTimeout === undefined ? undefined : Number(urlTimeout) * 1000),
    };
    this.url =
      options.displayUrl ?? (options.connectionString ? redactUrl(options.connectionString) : "postgres://(pool)");
    this.schema = checkIdentifier("PostgreSQL schema", options.schema ?? "public");
    this.codec = options.codec ?? defaultSessionCodec();
    this.ownsPool = !options.pool;
    this.pool_ = options.pool;
    this.sql = postgresStatements(quoteIdent(this.schema), { prepared: options.preparedStatements ?? true });
    this.messages = new PostgresMessageLog(this, options.messageCodec ?? defaultMessageCodec);
    // Followers LISTEN on a connection of their own, except behind a transaction pooler (no named
    // statements: ?pgbouncer=true), where LISTEN does not work: they poll there.
    this.streams = new PostgresStreamBuffer(this, chunkCodec(this.codec), {
      listen: options.preparedStatements ?? true,
      connect: () => this.pool.connect(),
    });
    this.retention = checkRetention(options.retention);
    this.blobs = storeBlobs(options.blobs, this.codec, { backend: new PostgresBlobBackend(this), where: this.url });
  }

  private get pool(): PgPool {
    if (this.closed)
      throw new StatebagError("store-closed", `the PostgreSQL store at ${this.url} was closed`, {
        hint: "open a new store with openStore()",
      });
    if (!this.pool_) {
      const { Pool } = loadPg();
      const pool = new Pool({
        connectionString: this.options.connectionString,
        max: this.options.max ?? 10,
        connectionTimeoutMillis: this.options.connectTimeoutMs ?? 5000,
        query_timeout: this.options.queryTimeoutMs ?? 30_000,
        idleTimeoutMillis: 10_000,
        keepAlive: true,
        application_name: "statebag",
      });
      // An idle connection dropped by the server must not crash the process; the pool discards it
      // and the next call opens a new one.
      pool.on("error", () => undefined);
      this.pool_ = pool;
    }
    return this.pool_;
  }

  private unavailable(operation: string, error: unknown, outcomeUnknown: boolean): StoreUnavailableError {
    return new StoreUnavailableError("PostgreSQL", this.url, operation, { cause: error, outcomeUnknown });
  }

  /** The server refused the login. The driver's error is not kept: nothing of the credentials travels on. */
  private authenticationFailed(): StoreAuthenticationError {
    const user = connectionUser(this.options);
    return new StoreAuthenticationError(
      "PostgreSQL",
      this.url,
      user,
      `check the user name and password in the store URL (postgres://user:password@host/db; percent-encode special characters), ` +
        `that the role${user ? ` "${user}"` : ""} exists and may log in, and that pg_hba.conf allows it from this host`,
    );
  }

  private notSetUp(): StoreNotSetUpError {
    return new StoreNotSetUpError(
      this.url,
      `the PostgreSQL store at ${this.url} has no statebag tables in schema "${this.schema}"`,
      `run \`statebag store setup --store <url>\` (or await store.setup()) once, from a deploy step or CI; ` +
        `statebag never creates tables implicitly on start`,
    );
  }

  /**
   * Runs `fn` with a pooled connection. Connection failures become `StoreUnavailableError`
   * (a write that was sent but not answered is flagged `outcomeUnknown`); a missing table becomes
   * `StoreNotSetUpError`. @internal
   */
  async withClient<T>(
    operation: string,
    write: boolean,
    fn: (client: PgPoolClient) => Promise<T>,
    checkReady = true,
  ): Promise<T> {
    let client: PgPoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      if (isAuthenticationFailure(error)) throw this.authenticationFailed();
      // pg says this as a plain Error: the URL asks for TLS (?sslmode=, ?ssl=) and the server has none.
      if (error instanceof Error && /server does not support SSL/i.test(error.message)) {
        throw new ConfigurationError(
          `the PostgreSQL server at ${this.url} does not accept TLS connections, but the store URL asks for TLS (?sslmode= or ?ssl=)`,
          "turn TLS on in the server (ssl = on in postgresql.conf), or, on a trusted network only, connect without it: ?sslmode=disable",
        );
      }
      throw isUnavailable(error) ? this.unavailable(operation, error, false) : error;
    }
    let broken: Error | undefined;
    let sent = false;
    // A checked-out client has no error listener of the pool's: a connection dropped between two
    // statements would otherwise be an uncaught 'error' event. The failing statement reports it.
    const onError = (error: Error) => {
      broken = error;
    };
    client.on("error", onError);
    try {
      if (checkReady && !this.ready) await this.checkSchema(client);
      sent = true;
      return await fn(client);
    } catch (error) {
      if (error instanceof StoreNotSetUpError || error instanceof ConflictError || error instanceof SessionOwnerError)
        throw error;
      if (isMissingSchema(error)) {
        this.ready = false;
        throw this.notSetUp();
      }
      if (isPoolerStatementError(error)) {
        // Parse failed, so the statement did not run.
        throw new ConfigurationError(
          `the PostgreSQL store at ${this.url} lost a prepared statement between server connections (${(error as Error).message})`,
          "a pooler in transaction mode (PgBouncer) sits in between: add ?pgbouncer=true to the store URL (or preparedStatements: false), or enable max_prepared_statements in PgBouncer 1.21+",
        );
      }
      if (isUnavailable(error)) {
        broken = error as Error;
        throw this.unavailable(operation, error, write && sent);
      }
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken ?? false);
    }
  }

  private async checkSchema(client: PgPoolClient): Promise<void> {
    let version: number;
    try {
      const { rows } = await client.query<Row>(this.sql.metaVersion);
      version = rows.length === 0 ? 0 : Number(rows[0].value);
    } catch (error) {
      if (isMissingSchema(error)) throw this.notSetUp();
      throw error;
    }
    if (version === 0) throw this.notSetUp();
    if (version < POSTGRES_SCHEMA_VERSION) {
      throw new StoreNotSetUpError(
        this.url,
        `the PostgreSQL store at ${this.url} (schema "${this.schema}") has storage format ${version}; this statebag needs ${POSTGRES_SCHEMA_VERSION}`,
        "run `statebag store setup --store <url>` to upgrade it",
      );
    }
    if (version > POSTGRES_SCHEMA_VERSION) {
      throw new StoreNotSetUpError(
        this.url,
        `the PostgreSQL store at ${this.url} (schema "${this.schema}") has storage format ${version}, newer than this statebag knows (${POSTGRES_SCHEMA_VERSION})`,
        "upgrade statebag in this app to the release that set the store up",
      );
    }
    this.ready = true;
  }

  /**
   * Creates the schema, tables, sequence and `statebag_meta` if missing, or upgrades an older
   * format. Idempotent and safe to run from several machines at once (an advisory lock serializes it).
   */
  async setup(): Promise<SetupResult> {
    return this.withClient(
      "setup",
      true,
      async (client) => {
        await client.query(TRANSACTION.begin);
        try {
          await client.query(this.sql.setupLock, [`statebag.setup.${this.schema}`]);
          await client.query(this.sql.createSchema);
          await client.query(this.sql.metaTable);
          const { rows } = await client.query<Row>(this.sql.metaVersion);
          const before = rows.length === 0 ? 0 : Number(rows[0].value);
          if (before > POSTGRES_SCHEMA_VERSION) {
            throw new StoreNotSetUpError(
              this.url,
              `the PostgreSQL store at ${this.url} (schema "${this.schema}") has storage format ${before}, newer than this statebag knows (${POSTGRES_SCHEMA_VERSION})`,
              "run setup with the newer statebag release",
            );
          }
          if (before < 1) {
            for (const ddl of this.sql.ddlV1) await client.query(ddl);
          }
          if (before < 2) {
            for (const ddl of this.sql.ddlV2) await client.query(ddl);
          }
          if (before < 3) {
            for (const ddl of this.sql.ddlV3) await client.query(ddl);
          }
          if (before < 4) {
            for (const ddl of this.sql.ddlV4) await client.query(ddl);
          }
          if (before < 5) {
            for (const ddl of this.sql.ddlV5) await client.query(ddl);
          }
          // Later formats: `if (before < 2) { ...ALTER... }`, each step recorded below.
          await client.query(this.sql.metaSetVersion, [String(POSTGRES_SCHEMA_VERSION)]);
          await client.query(TRANSACTION.commit);
          this.ready = true;
          return { version: POSTGRES_SCHEMA_VERSION, changed: before !== POSTGRES_SCHEMA_VERSION };
        } catch (error) {
          await client.query(TRANSACTION.rollback).catch(() => undefined);
          throw error;
        }
      },
      false,
    );
  }

  async get(id: string): Promise<StoredSession | undefined> {
    checkId(id);
    const rows = await this.withClient("get", false, async (c) => (await c.query<Row>(this.sql.get, [id])).rows);
    if (rows.length === 0) return undefined;
    const row = rows[0];
    const meta = rowMeta(row, id, metaProtectionOf(this.codec));
    return {
      session: loadStoredSession(this.codec, id, rowBody(row), this.url, {
        owner: meta.owner,
        revision: Number(row.revision),
      }),
      revision: Number(row.revision),
      meta,
    };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    return this.withClient("save", true, this.saveWrite(session, options));
  }

  /**
   * Every entry saved as `save` would save it, in one transaction on one connection (one commit
   * for the batch; see batch-save.ts). @internal
   */
  async [SAVE_BATCH](entries: readonly BatchSaveEntry[]): Promise<BatchSaveResult[]> {
    return saveRowsInOneTransaction(
      entries,
      (entry) => this.saveWrite(entry.session, entry.options),
      (rows) => this.withClient("saveBatch", true, rows),
    );
  }

  /**
   * `save` before the connection (the checks, and validation and serialization unless the codec
   * uses its context), and the statements to run on it. Throws what `save` would throw before
   * them; the write throws what it would throw after (having written nothing: a refused update
   * changes no row).
   */
  private saveWrite(session: AgentSession, options: SaveOptions): (c: PgPoolClient) => Promise<number> {
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const meta = checkMeta(options);
    // Protected owners and titles (an encrypting codec): the columns hold their protected forms; a
    // row written before (plaintext owner or title) gets them right after this save.
    const protection = metaProtectionOf(this.codec);
    const contextual = usesContext(this.codec);
    const titleColumn =
      meta.title === undefined || protection === undefined ? meta.title : protection.title(id, meta.title);
    // A codec that does not use its context is given the owner named, if any, before the connection.
    const plain = contextual ? undefined : serializeRow(this.codec, session, { owner: meta.owner });
    const ttl = ttlMs ?? null;
    const labels = meta.labels === undefined ? null : JSON.stringify(meta.labels);
    return async (c) => {
      // The owner the row will have, for the codec: the given one, else (an update) the stored one.
      // A row's owner never changes, and the update below only applies at that revision.
      let owner = meta.owner;
      // A codec that uses its context is given the revision the row is written under: drawn from the
      // sequence first (one more round trip), with the current revision and owner in the same read.
      let revision: number | null = null;
      let ownerColumn =
        meta.owner === undefined || protection === undefined ? meta.owner : protection.owner(meta.owner);
      let protect: [string | null, string | null] | undefined;
      if (contextual) {
        const { rows } = await c.query<Row>(this.sql.draw, [id]);
        revision = Number(rows[0].next);
        const current = rows[0].revision == null ? null : Number(rows[0].revision);
        if (current !== expected) throw new ConflictError(id, expected, current);
        const storedOwner = rows[0].owner as string | null;
        const storedTitle = rows[0].title as string | null;
        const stored = readMeta(protection, id, storedOwner, storedTitle);
        if (owner === undefined && expected !== null) owner = stored.owner ?? undefined;
        if (expected !== null && protection !== undefined && plaintextMeta(protection, storedOwner, storedTitle)) {
          if (meta.owner !== undefined && stored.owner === meta.owner) ownerColumn = storedOwner ?? undefined;
          protect = [
            stored.owner == null ? null : protection.owner(stored.owner),
            stored.title == null || meta.title !== undefined ? null : protection.title(id, stored.title),
          ];
        }
      }
      const body = plain ?? serializeRow(this.codec, session, { owner, revision: revision! });
      const binary = typeof body !== "string";
      const { rows } =
        expected === null
          ? await c.query<Row>(binary ? this.sql.createBytes : this.sql.create, [
              id,
              body,
              ttl,
              ownerColumn ?? null,
              titleColumn ?? null,
              labels,
              revision,
            ])
          : await c.query<Row>(binary ? this.sql.updateBytes : this.sql.update, [
              id,
              expected,
              body,
              ttl,
              ownerColumn ?? null,
              titleColumn !== undefined,
              titleColumn ?? null,
              labels !== null,
              labels,
              revision,
            ]);
      if (rows.length === 1) {
        const written = Number(rows[0].revision);
        if (protect !== undefined) await c.query(this.sql.protectMeta, [id, protect[0], protect[1], written]);
        return written;
      }
      const current = await c.query<Row>(this.sql.current, [id]);
      const stored = current.rows.length ? Number(current.rows[0].revision) : null;
      if (stored !== null && stored === expected) throw new SessionOwnerError(id, meta.owner!);
      throw new ConflictError(id, expected, stored);
    };
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    checkId(id);
    const expected = checkDelete(options);
    return this.withClient("delete", true, async (c) => {
      // The session's stream buffers go with it (whether or not a session row was there).
      if (expected === undefined) {
        const { rows } = await c.query<Row>(this.sql.deleteAny, [id]);
        await deleteSessionStreams(c, this.sql, this.schema, id);
        return rows.length === 1 && rows[0].live === true;
      }
      const { rows } = await c.query<Row>(this.sql.deleteAt, [id, expected]);
      if (rows.length === 1) {
        await deleteSessionStreams(c, this.sql, this.schema, id);
        return true;
      }
      const current = await c.query<Row>(this.sql.current, [id]);
      throw new ConflictError(id, expected, current.rows.length ? Number(current.rows[0].revision) : null);
    });
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    const { cursor, limit, includeText } = checkScan(options);
    const protection = metaProtectionOf(this.codec);
    const rows = await this.withClient(
      "scan",
      false,
      async (c) =>
        (await c.query<Row>(includeText ? this.sql.scanText : this.sql.scan, [cursor ?? "", limit + 1])).rows,
    );
    const items = rows.map((row) => {
      const item = includeText
        ? scanItem(
            row.id as string,
            Number(row.revision),
            storedText(rowBody(row)),
            row.ttl_ms == null ? undefined : Number(row.ttl_ms),
          )
        : scanItem(row.id as string, Number(row.revision));
      item.meta = rowMeta(row, row.id as string, protection, false);
      if (plaintextMeta(protection, row.owner as string | null, row.title as string | null)) item.plaintextMeta = true;
      return item;
    });
    return scanPage(items, limit);
  }

  async list(options: ListOptions): Promise<ListPage> {
    const { owner, labels, updatedBefore, updatedAfter, order, cursor, limit } = checkList(options);
    const protection = metaProtectionOf(this.codec);
    const filter = [
      protection === undefined ? owner : protection.owner(owner),
      updatedBefore ?? null,
      updatedAfter ?? null,
      JSON.stringify(labels),
    ];
    const rows = await this.withClient("list", false, async (c) => {
      // A protecting store refuses to list an owner that still has plaintext-owner rows (one index probe, first page).
      if (protection !== undefined && cursor === undefined) {
        for (const other of protection.otherForms(owner))
          if ((await c.query<Row>(this.sql.listById, [other, null, null, "{}", "", 1])).rows.length > 0)
            throw plaintextOwnerError(this.url);
      }
      return order === "id"
        ? (await c.query<Row>(this.sql.listById, [...filter, cursor?.id ?? "", limit + 1])).rows
        : (await c.query<Row>(this.sql.listByTime, [...filter, cursor?.updated ?? null, cursor?.id ?? "", limit + 1]))
            .rows;
    });
    const items = rows.slice(0, limit).map((r): ListItem => {
      const item: ListItem = {
        id: r.id as string,
        revision: Number(r.revision),
        meta: rowMeta(r, r.id as string, protection, false),
      };
      if (r.ttl_ms != null) item.ttlMs = Number(r.ttl_ms);
      return item;
    });
    if (rows.length <= limit) return { items };
    const last = rows[limit - 1];
    // By time: the exact stored time (microseconds), so a page ends where the next begins.
    return {
      items,
      cursor: encodeCursor({ order, updated: order === "id" ? "0" : String(last.updated_us), id: last.id as string }),
    };
  }

  async purgeExpired(): Promise<number> {
    const removed = await this.withClient(
      "purgeExpired",
      true,
      async (c) => (await c.query(this.sql.purge)).rowCount ?? 0,
    );
    await this.streams.purgeExpired(); // stream buffers are not sessions: not counted
    return this.retention ? removed + (await purgeRetention(this, this.retention)).sessions : removed;
  }

  async eraseOwner(owner: string, options?: EraseOptions): Promise<EraseReceipt> {
    return eraseOwnerSessions(this, owner, options);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.streams.close();
    await this.blobs.close(); // a bucket's client (blobs.url), if any
    const pool = this.pool_;
    this.pool_ = undefined;
    if (pool && this.ownsPool) await pool.end();
  }

  /** Drops the schema with everything in it. For tests and teardown scripts only. */
  async dropSchema(): Promise<void> {
    await this.withClient("dropSchema", true, (c) => c.query(this.sql.dropSchema), false);
    this.ready = false;
  }
}

function rowMeta(
  row: Row,
  id: string,
  protection: SessionMetaProtection | undefined,
  strict = true,
): StoredSessionMeta {
  const { owner, title } = readMeta(protection, id, row.owner as string | null, row.title as string | null, strict);
  return storedMeta(
    owner,
    title,
    row.labels as Record<string, string> | null,
    row.created_at as Date,
    row.updated_at as Date,
  );
}
