/**
 * Every SQL statement the SQLite store runs, with the tables they create (`DDL`): the storage
 * format of the file (the version recorded in `statebag_meta`, `SQLITE_SCHEMA_VERSION`). Both
 * drivers run the same statements on the same file format.
 *
 * Revisions come from one counter in `statebag_meta`, so they keep increasing even across a
 * delete and re-create (a client holding an old revision can never match a new session).
 */
import type { SqliteConnection, SqliteStatement } from "./driver.js";

/**
 * The tables, created when a writable store first opens the file. `data` holds a session's text,
 * or (format 5) a BLOB: the binary row of an encrypting codec. A column of TEXT affinity keeps a
 * BLOB as it is (affinity converts numbers only), so format 5 changes no table.
 */
export const DDL = `
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

/**
 * Storage format 2 (#23): session metadata in columns beside the body, and the listing indexes.
 * Applied by `upgradeToV2` to a file of format 1 (columns only added when missing, so a file
 * interrupted half-way, or upgraded by a newer release, is finished rather than broken). Rows of
 * format 1 keep `owner` NULL (listed by no owner) and `created_at` NULL (read as their
 * `updated_at`, and set from it at their next save).
 */
export const V2_COLUMNS: ReadonlyArray<readonly [string, string]> = [
  ["owner", "owner TEXT"],
  ["title", "title TEXT"],
  ["labels", "labels TEXT"],
  ["created_at", "created_at INTEGER"],
];
/** Format 2's indexes besides the listing index (`LISTING_INDEX`, which replaced `statebag_sessions_owner_updated`). */
export const V2_INDEXES = [
  `CREATE INDEX IF NOT EXISTS statebag_sessions_owner_id ON statebag_sessions (owner, id) WHERE owner IS NOT NULL`,
] as const;
export const COLUMNS_SQL = `SELECT name FROM pragma_table_info('statebag_sessions')`;

/**
 * The listing index (#36): the owner's sessions newest first, holding every column a page item
 * carries, so a page is read from the index alone (the session rows, with their bodies, are never
 * touched). It replaces format 2's `statebag_sessions_owner_updated` (the same order without the
 * metadata). Added at a writable open of any format-2+ file where it is missing (an index changes
 * nothing an earlier release reads or writes: it keeps it up to date like any index), in the
 * opening transaction; building it reads every row with an owner once.
 */
export const LISTING_INDEX = {
  exists: `SELECT count(*) AS n FROM sqlite_master WHERE type = 'index' AND name = 'statebag_sessions_owner_list'`,
  create: `CREATE INDEX IF NOT EXISTS statebag_sessions_owner_list ON statebag_sessions
    (owner, updated_at DESC, id DESC, revision, expires_at, created_at, title, labels) WHERE owner IS NOT NULL`,
  dropReplaced: `DROP INDEX IF EXISTS statebag_sessions_owner_updated`,
} as const;

/**
 * Storage format 3: stream buffers (`store.streams`, resumable replies). One row per stream
 * (its session, status, length, stop flag, writer's lease; `expires_at` set by finish, `owner`
 * only as the encrypting codec seals it) and its chunks by position. Created by `upgradeToV3`
 * (only tables and indexes that are missing).
 */
export const V3_STREAM_DDL = `
CREATE TABLE IF NOT EXISTS statebag_streams (
  stream_id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  owner TEXT,
  status TEXT NOT NULL,
  length INTEGER NOT NULL,
  stop_requested INTEGER NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX IF NOT EXISTS statebag_streams_session ON statebag_streams (session_id);
CREATE INDEX IF NOT EXISTS statebag_streams_expires ON statebag_streams (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS statebag_streams_lease ON statebag_streams (lease_expires_at) WHERE status = 'running';
CREATE TABLE IF NOT EXISTS statebag_stream_chunks (
  stream_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (stream_id, seq)
) WITHOUT ROWID;
`;

/**
 * Storage format 4: blobs (`store.blobs`, files kept beside the sessions). One row per blob in
 * `statebag_blobs` (its owner and hash, in the keyed forms an encrypting store writes; the upload
 * id its chunks are stored under; its size, chunk layout, description and times) and its chunks in
 * `statebag_blob_chunks` (256 KiB each by default, sealed when the store encrypts). A put writes its
 * chunks first and its blob row last, in one transaction: a put that dies before leaves chunks no
 * row points to, which sweeps remove. Created by the format-4 upgrade (only what is missing).
 */
export const V4_BLOB_DDL = `
CREATE TABLE IF NOT EXISTS statebag_blobs (
  owner TEXT NOT NULL,
  hash TEXT NOT NULL,
  upload_id TEXT NOT NULL,
  size INTEGER NOT NULL,
  chunk_size INTEGER NOT NULL,
  chunks INTEGER NOT NULL,
  stride INTEGER NOT NULL,
  meta BLOB NOT NULL,
  created_at INTEGER NOT NULL,
  touched_at INTEGER NOT NULL,
  PRIMARY KEY (owner, hash)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS statebag_blobs_upload ON statebag_blobs (upload_id);
CREATE TABLE IF NOT EXISTS statebag_blob_chunks (
  upload_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  owner TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (upload_id, seq)
);
CREATE INDEX IF NOT EXISTS statebag_blob_chunks_owner ON statebag_blob_chunks (owner, created_at);
`;

const BLOB_COLUMNS = "owner, hash, upload_id, size, chunk_size, chunks, stride, meta, created_at, touched_at";
/** Chunks of an upload no blob row points to, begun before the first parameter. */
const ORPHAN_CHUNK = `created_at < ? AND NOT EXISTS (SELECT 1 FROM statebag_blobs b WHERE b.upload_id = statebag_blob_chunks.upload_id)`;

/** The blob statements (sqlite/blobs.ts). @internal */
export const SQLITE_BLOB_SQL = {
  get: `SELECT ${BLOB_COLUMNS} FROM statebag_blobs WHERE owner = ? AND hash = ?`,
  insert: `INSERT INTO statebag_blobs (${BLOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  touch: `UPDATE statebag_blobs SET touched_at = max(touched_at, ?) WHERE owner = ? AND hash = ?`,
  remove: `DELETE FROM statebag_blobs WHERE owner = ? AND hash = ?`,
  chunk: `INSERT INTO statebag_blob_chunks (upload_id, seq, owner, created_at, data) VALUES (?, ?, ?, ?, ?)`,
  chunks: `SELECT data FROM statebag_blob_chunks WHERE upload_id = ? AND seq >= ? AND seq < ? ORDER BY seq`,
  chunkCount: `SELECT count(*) AS n FROM statebag_blob_chunks WHERE upload_id = ?`,
  removeChunks: `DELETE FROM statebag_blob_chunks WHERE upload_id = ?`,
  listOwner: `SELECT ${BLOB_COLUMNS} FROM statebag_blobs WHERE owner = ? AND hash > ? ORDER BY hash LIMIT ?`,
  listAll: `SELECT ${BLOB_COLUMNS} FROM statebag_blobs WHERE (owner, hash) > (?, ?) ORDER BY owner, hash LIMIT ?`,
  usageOwner: `SELECT count(*) AS blobs, coalesce(sum(size), 0) AS bytes FROM statebag_blobs WHERE owner = ?`,
  usageAll: `SELECT count(*) AS blobs, coalesce(sum(size), 0) AS bytes FROM statebag_blobs`,
  eraseChunks: `DELETE FROM statebag_blob_chunks WHERE owner = ?`,
  erase: `DELETE FROM statebag_blobs WHERE owner = ?`,
  purgeOwner: `DELETE FROM statebag_blob_chunks WHERE owner = ? AND ${ORPHAN_CHUNK}`,
  purgeAll: `DELETE FROM statebag_blob_chunks WHERE ${ORPHAN_CHUNK}`,
} as const;

export interface BlobRow {
  owner: string;
  hash: string;
  upload_id: string;
  size: number;
  chunk_size: number;
  chunks: number;
  stride: number;
  meta: Uint8Array;
  created_at: number;
  touched_at: number;
}

/** The blob statements, prepared once per connection (on a file of format 4). */
export class BlobStatements {
  readonly get: SqliteStatement<BlobRow>;
  readonly insert: SqliteStatement<never>;
  readonly touch: SqliteStatement<never>;
  readonly remove: SqliteStatement<never>;
  readonly chunk: SqliteStatement<never>;
  readonly chunks: SqliteStatement<{ data: Uint8Array }>;
  readonly chunkCount: SqliteStatement<{ n: number }>;
  readonly removeChunks: SqliteStatement<never>;
  readonly listOwner: SqliteStatement<BlobRow>;
  readonly listAll: SqliteStatement<BlobRow>;
  readonly usageOwner: SqliteStatement<{ blobs: number; bytes: number }>;
  readonly usageAll: SqliteStatement<{ blobs: number; bytes: number }>;
  readonly eraseChunks: SqliteStatement<never>;
  readonly erase: SqliteStatement<never>;
  readonly purgeOwner: SqliteStatement<never>;
  readonly purgeAll: SqliteStatement<never>;

  constructor(db: SqliteConnection) {
    this.get = db.prepare(SQLITE_BLOB_SQL.get);
    this.insert = db.prepare(SQLITE_BLOB_SQL.insert);
    this.touch = db.prepare(SQLITE_BLOB_SQL.touch);
    this.remove = db.prepare(SQLITE_BLOB_SQL.remove);
    this.chunk = db.prepare(SQLITE_BLOB_SQL.chunk);
    this.chunks = db.prepare(SQLITE_BLOB_SQL.chunks);
    this.chunkCount = db.prepare(SQLITE_BLOB_SQL.chunkCount);
    this.removeChunks = db.prepare(SQLITE_BLOB_SQL.removeChunks);
    this.listOwner = db.prepare(SQLITE_BLOB_SQL.listOwner);
    this.listAll = db.prepare(SQLITE_BLOB_SQL.listAll);
    this.usageOwner = db.prepare(SQLITE_BLOB_SQL.usageOwner);
    this.usageAll = db.prepare(SQLITE_BLOB_SQL.usageAll);
    this.eraseChunks = db.prepare(SQLITE_BLOB_SQL.eraseChunks);
    this.erase = db.prepare(SQLITE_BLOB_SQL.erase);
    this.purgeOwner = db.prepare(SQLITE_BLOB_SQL.purgeOwner);
    this.purgeAll = db.prepare(SQLITE_BLOB_SQL.purgeAll);
  }
}

/**
 * A stream no reader sees and `purgeExpired` removes: finished and past its `keepMs` (first
 * parameter: now), or running with a lease that ended before the second parameter (now minus
 * ABANDONED_STREAM_KEEP_MS).
 */
const STREAM_GONE = `((expires_at IS NOT NULL AND expires_at <= ?) OR (status = 'running' AND lease_expires_at <= ?))`;

/** The stream-buffer statements (sqlite/stream-buffer.ts). @internal */
export const SQLITE_STREAM_SQL = {
  get: `SELECT session_id, owner, status, length, stop_requested, lease_expires_at, expires_at FROM statebag_streams WHERE stream_id = ?`,
  // A new stream holding its first `length` chunks (written in the same transaction). A row there
  // already is left as it is (no change): only then is it read, to tell a live stream from one gone.
  insert: `INSERT INTO statebag_streams (stream_id, session_id, owner, status, length, stop_requested, lease_expires_at, expires_at)
     VALUES (?, ?, ?, 'running', ?, 0, ?, NULL) ON CONFLICT (stream_id) DO NOTHING`,
  remove: `DELETE FROM statebag_streams WHERE stream_id = ?`,
  removeChunks: `DELETE FROM statebag_stream_chunks WHERE stream_id = ?`,
  // An append's status check and growth in one statement: only a running stream not abandoned
  // (lease ended before the last parameter: now minus ABANDONED_STREAM_KEEP_MS) grows. The lease is
  // written apart (renewLease), only when it needs renewing: an UPDATE that sets lease_expires_at
  // rewrites the lease index too, even to the same value.
  grow: `UPDATE statebag_streams SET length = length + ?
     WHERE stream_id = ? AND status = 'running' AND lease_expires_at > ? RETURNING length, stop_requested, owner, lease_expires_at`,
  renewLease: `UPDATE statebag_streams SET lease_expires_at = ? WHERE stream_id = ?`,
  // `grow` and `finish` in one statement (finishWith): the row is written once.
  growFinish: `UPDATE statebag_streams SET length = length + ?, status = ?, expires_at = ?
     WHERE stream_id = ? AND status = 'running' AND lease_expires_at > ? RETURNING length, owner`,
  chunk: `INSERT INTO statebag_stream_chunks (stream_id, seq, body) VALUES (?, ?, ?)`,
  finish: `UPDATE statebag_streams SET status = ?, expires_at = ? WHERE stream_id = ?`,
  stop: `UPDATE statebag_streams SET stop_requested = 1 WHERE stream_id = ?`,
  chunks: `SELECT body FROM statebag_stream_chunks WHERE stream_id = ? AND seq >= ? AND seq < ? ORDER BY seq`,
  ofSession: `SELECT count(*) AS n FROM statebag_streams WHERE session_id = ? AND NOT ${STREAM_GONE}`,
  removeSessionChunks: `DELETE FROM statebag_stream_chunks WHERE stream_id IN (SELECT stream_id FROM statebag_streams WHERE session_id = ?)`,
  removeSession: `DELETE FROM statebag_streams WHERE session_id = ?`,
  purgeChunks: `DELETE FROM statebag_stream_chunks WHERE stream_id IN (SELECT stream_id FROM statebag_streams WHERE ${STREAM_GONE})`,
  purge: `DELETE FROM statebag_streams WHERE ${STREAM_GONE}`,
} as const;

export interface StreamRow {
  session_id: string;
  owner: string | null;
  status: string;
  length: number;
  stop_requested: number;
  lease_expires_at: number;
  expires_at: number | null;
}

/** The stream-buffer statements, prepared once per connection (on a file of format 3). */
export class StreamStatements {
  readonly get: SqliteStatement<StreamRow>;
  readonly insert: SqliteStatement<never>;
  readonly remove: SqliteStatement<never>;
  readonly removeChunks: SqliteStatement<never>;
  readonly grow: SqliteStatement<{
    length: number;
    stop_requested: number;
    owner: string | null;
    lease_expires_at: number;
  }>;
  readonly renewLease: SqliteStatement<never>;
  readonly growFinish: SqliteStatement<{ length: number; owner: string | null }>;
  readonly chunk: SqliteStatement<never>;
  readonly finish: SqliteStatement<never>;
  readonly stop: SqliteStatement<never>;
  readonly chunks: SqliteStatement<{ body: string }>;
  readonly ofSession: SqliteStatement<{ n: number }>;
  readonly removeSessionChunks: SqliteStatement<never>;
  readonly removeSession: SqliteStatement<never>;
  readonly purgeChunks: SqliteStatement<never>;
  readonly purge: SqliteStatement<never>;

  constructor(db: SqliteConnection) {
    this.get = db.prepare(SQLITE_STREAM_SQL.get);
    this.insert = db.prepare(SQLITE_STREAM_SQL.insert);
    this.remove = db.prepare(SQLITE_STREAM_SQL.remove);
    this.removeChunks = db.prepare(SQLITE_STREAM_SQL.removeChunks);
    this.grow = db.prepare(SQLITE_STREAM_SQL.grow);
    this.renewLease = db.prepare(SQLITE_STREAM_SQL.renewLease);
    this.growFinish = db.prepare(SQLITE_STREAM_SQL.growFinish);
    this.chunk = db.prepare(SQLITE_STREAM_SQL.chunk);
    this.finish = db.prepare(SQLITE_STREAM_SQL.finish);
    this.stop = db.prepare(SQLITE_STREAM_SQL.stop);
    this.chunks = db.prepare(SQLITE_STREAM_SQL.chunks);
    this.ofSession = db.prepare(SQLITE_STREAM_SQL.ofSession);
    this.removeSessionChunks = db.prepare(SQLITE_STREAM_SQL.removeSessionChunks);
    this.removeSession = db.prepare(SQLITE_STREAM_SQL.removeSession);
    this.purgeChunks = db.prepare(SQLITE_STREAM_SQL.purgeChunks);
    this.purge = db.prepare(SQLITE_STREAM_SQL.purge);
  }
}

const LIVE = "(expires_at IS NULL OR expires_at > ?)";
const META = "owner, title, labels, coalesce(created_at, updated_at) AS created_at, updated_at";
/** Every label of the JSON object parameter is on the row (an empty object: always true). */
const HAS_LABELS = `NOT EXISTS (SELECT 1 FROM json_each(?) AS w WHERE NOT EXISTS (
  SELECT 1 FROM json_each(statebag_sessions.labels) AS l WHERE l.key = w.key AND l.value = w.value))`;
const LIST_ANY = `owner = ? AND ${LIVE} AND updated_at < ? AND updated_at > ?`;
const LIST_FILTER = `${LIST_ANY} AND ${HAS_LABELS}`;
// By time, `updatedBefore` and the cursor are one upper bound (store.ts), so the index range
// starts at the page: (owner = ?, updated_at > ?, (updated_at, id) < (?, ?)).
const LIST_TIME_ANY = `owner = ? AND ${LIVE} AND updated_at > ?`;
const LIST_TIME_FILTER = `${LIST_TIME_ANY} AND ${HAS_LABELS}`;
/** What a listing row holds, in the order of `ListRow`. */
const LIST_COLUMNS = `id, revision, ${META}, expires_at`;

/** Statement texts (exported for the benchmark's raw-driver baseline). @internal */
export const SQLITE_SQL = {
  // The columns in the order of `GetRow`.
  get: `SELECT revision, data, ${META} FROM statebag_sessions WHERE id = ? AND ${LIVE}`,
  current: `SELECT revision, owner FROM statebag_sessions WHERE id = ? AND ${LIVE}`,
  // Protected owners and titles (an encrypting codec): what a save reads first, and how a row
  // written before gets the protected forms (same transaction as its save).
  currentMeta: `SELECT revision, owner, title FROM statebag_sessions WHERE id = ? AND ${LIVE}`,
  protectMeta: `UPDATE statebag_sessions SET owner = coalesce(?, owner), title = coalesce(?, title) WHERE id = ?`,
  bump: `UPDATE statebag_meta SET value = value + 1 WHERE key = 'revision' RETURNING value`,
  // The compare-and-swap: only the row still at the expected (live) revision is replaced.
  // A given owner must be the stored one; title/labels replaced only when given (flag 1);
  // updated_at never goes backwards; a format-1 row gets its created_at from its last update.
  update: `UPDATE statebag_sessions SET revision = ?, data = ?, expires_at = ?, updated_at = max(?, updated_at),
       created_at = coalesce(created_at, updated_at),
       title = CASE WHEN ? THEN ? ELSE title END, labels = CASE WHEN ? THEN ? ELSE labels END
     WHERE id = ? AND revision = ? AND ${LIVE} AND (? IS NULL OR owner IS ?)`,
  // Create-if-absent: an expired row counts as absent and is replaced; a live one is left alone.
  create: `INSERT INTO statebag_sessions (id, revision, data, expires_at, updated_at, created_at, owner, title, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, data = excluded.data,
       expires_at = excluded.expires_at, updated_at = excluded.updated_at, created_at = excluded.created_at,
       owner = excluded.owner, title = excluded.title, labels = excluded.labels
     WHERE statebag_sessions.expires_at IS NOT NULL AND statebag_sessions.expires_at <= ?`,
  // Keyset pages over the listing index (owner, updated_at DESC, id DESC, + the columns read) and
  // the (owner, id) index; the first page passes a cursor past every row. Only metadata columns are read, never data.
  listByTime: `SELECT ${LIST_COLUMNS} FROM statebag_sessions WHERE ${LIST_TIME_FILTER} AND (updated_at, id) < (?, ?)
     ORDER BY updated_at DESC, id DESC LIMIT ?`,
  listById: `SELECT ${LIST_COLUMNS} FROM statebag_sessions WHERE ${LIST_FILTER} AND id > ? ORDER BY id LIMIT ?`,
  // The same without a label filter (the usual listing): the label test is a subquery per row.
  listByTimeAny: `SELECT ${LIST_COLUMNS} FROM statebag_sessions WHERE ${LIST_TIME_ANY} AND (updated_at, id) < (?, ?)
     ORDER BY updated_at DESC, id DESC LIMIT ?`,
  // Newest first without labels or `updatedAfter` (a chat sidebar's page): owner, now, then the bound.
  listNewest: `SELECT ${LIST_COLUMNS} FROM statebag_sessions WHERE owner = ? AND ${LIVE} AND (updated_at, id) < (?, ?)
     ORDER BY updated_at DESC, id DESC LIMIT ?`,
  listByIdAny: `SELECT ${LIST_COLUMNS} FROM statebag_sessions WHERE ${LIST_ANY} AND id > ? ORDER BY id LIMIT ?`,
  deleteAny: `DELETE FROM statebag_sessions WHERE id = ? RETURNING (expires_at IS NULL OR expires_at > ?) AS live`,
  deleteAt: `DELETE FROM statebag_sessions WHERE id = ? AND revision = ? AND ${LIVE}`,
  scan: `SELECT id, revision, ${META} FROM statebag_sessions WHERE id > ? AND ${LIVE} ORDER BY id LIMIT ?`,
  scanText: `SELECT id, revision, data, expires_at, ${META} FROM statebag_sessions WHERE id > ? AND ${LIVE} ORDER BY id LIMIT ?`,
  purge: `DELETE FROM statebag_sessions WHERE expires_at IS NOT NULL AND expires_at <= ?`,
  opInsert: `INSERT OR IGNORE INTO statebag_message_ops (storage_id, operation_id) VALUES (?, ?)`,
  logVersion: `SELECT version, next_seq FROM statebag_message_logs WHERE storage_id = ?`,
  logUpsert: `INSERT INTO statebag_message_logs (storage_id, version, next_seq) VALUES (?, ?, ?)
     ON CONFLICT (storage_id) DO UPDATE SET version = excluded.version, next_seq = next_seq + excluded.next_seq
     RETURNING next_seq`,
  msgInsert: `INSERT INTO statebag_messages (storage_id, seq, body) VALUES (?, ?, ?)`,
  msgAll: `SELECT body FROM statebag_messages WHERE storage_id = ? ORDER BY seq`,
  msgLast: `SELECT body FROM (SELECT seq, body FROM statebag_messages WHERE storage_id = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
  msgFrom: `SELECT body FROM statebag_messages WHERE storage_id = ? AND seq >= ? ORDER BY seq`,
  msgFirst: `SELECT min(seq) AS first FROM statebag_messages WHERE storage_id = ?`,
  msgRange: `SELECT body FROM statebag_messages WHERE storage_id = ? AND seq >= ? AND seq < ? ORDER BY seq`,
  msgClear: `DELETE FROM statebag_messages WHERE storage_id = ?`,
  msgTrim: `DELETE FROM statebag_messages WHERE storage_id = ? AND seq < ?`,
  logDelete: `DELETE FROM statebag_message_logs WHERE storage_id = ?`,
  opsDelete: `DELETE FROM statebag_message_ops WHERE storage_id = ?`,
} as const;

/** The storage-format marker: read before the tables are used, written when a file's tables are created. */
export const FORMAT_SQL = {
  hasTables: `SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'statebag_meta'`,
  version: `SELECT value FROM statebag_meta WHERE key = 'schema_version'`,
  setVersion: `INSERT INTO statebag_meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
} as const;

/** Settings of a writable connection: WAL (readers never block the writer and vice versa), and how often to fsync. */
export const PRAGMAS = {
  wal: "PRAGMA journal_mode = WAL",
  synchronousNormal: "PRAGMA synchronous = NORMAL",
  synchronousFull: "PRAGMA synchronous = FULL",
} as const;

/** The statements around a unit of work: `snapshot` reads in one transaction, `write` takes the write lock at once. */
export const TRANSACTION = {
  snapshot: "BEGIN",
  write: "BEGIN IMMEDIATE",
  commit: "COMMIT",
  rollback: "ROLLBACK",
  /** One row of a batch save (batch-save.ts): undone alone when that row is refused. */
  rowSavepoint: "SAVEPOINT statebag_row",
  rowRelease: "RELEASE statebag_row",
  rowRollback: "ROLLBACK TO statebag_row",
} as const;

/** What a unit of work needs: `read` runs as is, `snapshot` in a read transaction, `write` in `BEGIN IMMEDIATE`. */
export type Access = "read" | "snapshot" | "write";

/** A row's metadata columns (times in epoch ms, labels as JSON). */
export interface MetaRow {
  owner: string | null;
  title: string | null;
  labels: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * A row as `get` reads it, in the order of its SELECT (prepared to return arrays, as the listing
 * rows): `data` is text, or a BLOB (the binary row of an encrypting codec, format 5).
 */
export type GetRow = readonly [
  revision: number,
  data: string | Uint8Array,
  owner: string | null,
  title: string | null,
  labels: string | null,
  createdAt: number,
  updatedAt: number,
];

/**
 * A listing row: the columns of `LIST_COLUMNS` in their order (the list statements are prepared to
 * return arrays, `prepareTuples`: no dictionary object per row).
 */
export type ListRow = readonly [
  id: string,
  revision: number,
  owner: string | null,
  title: string | null,
  labels: string | null,
  createdAt: number,
  updatedAt: number,
  expiresAt: number | null,
];

/** The store's statements, prepared once per connection. */
export class Statements {
  readonly get: SqliteStatement<GetRow>;
  readonly current: SqliteStatement<{ revision: number; owner: string | null }>;
  readonly currentMeta: SqliteStatement<{ revision: number; owner: string | null; title: string | null }>;
  readonly protectMeta: SqliteStatement<never>;
  readonly listByTime: SqliteStatement<ListRow>;
  readonly listById: SqliteStatement<ListRow>;
  readonly listByTimeAny: SqliteStatement<ListRow>;
  readonly listByIdAny: SqliteStatement<ListRow>;
  readonly listNewest: SqliteStatement<ListRow>;
  readonly bump: SqliteStatement<{ value: number }>;
  readonly update: SqliteStatement<never>;
  readonly create: SqliteStatement<never>;
  readonly deleteAny: SqliteStatement<{ live: number }>;
  readonly deleteAt: SqliteStatement<never>;
  readonly scan: SqliteStatement<{ id: string; revision: number } & MetaRow>;
  readonly scanText: SqliteStatement<
    { id: string; revision: number; data: string | Uint8Array; expires_at: number | null } & MetaRow
  >;
  readonly purge: SqliteStatement<never>;
  readonly opInsert: SqliteStatement<never>;
  readonly logVersion: SqliteStatement<{ version: number; next_seq: number }>;
  readonly logUpsert: SqliteStatement<{ next_seq: number }>;
  readonly msgInsert: SqliteStatement<never>;
  readonly msgAll: SqliteStatement<{ body: string }>;
  readonly msgLast: SqliteStatement<{ body: string }>;
  readonly msgFrom: SqliteStatement<{ body: string }>;
  readonly msgFirst: SqliteStatement<{ first: number | null }>;
  readonly msgRange: SqliteStatement<{ body: string }>;
  readonly msgClear: SqliteStatement<never>;
  readonly msgTrim: SqliteStatement<never>;
  readonly logDelete: SqliteStatement<never>;
  readonly opsDelete: SqliteStatement<never>;
  readonly streams: StreamStatements;
  readonly blobs: BlobStatements;

  constructor(db: SqliteConnection) {
    this.get = db.prepareTuples(SQLITE_SQL.get);
    this.current = db.prepare(SQLITE_SQL.current);
    this.currentMeta = db.prepare(SQLITE_SQL.currentMeta);
    this.protectMeta = db.prepare(SQLITE_SQL.protectMeta);
    this.listByTime = db.prepareTuples(SQLITE_SQL.listByTime);
    this.listById = db.prepareTuples(SQLITE_SQL.listById);
    this.listByTimeAny = db.prepareTuples(SQLITE_SQL.listByTimeAny);
    this.listByIdAny = db.prepareTuples(SQLITE_SQL.listByIdAny);
    this.listNewest = db.prepareTuples(SQLITE_SQL.listNewest);
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
    this.msgFrom = db.prepare(SQLITE_SQL.msgFrom);
    this.msgFirst = db.prepare(SQLITE_SQL.msgFirst);
    this.msgRange = db.prepare(SQLITE_SQL.msgRange);
    this.msgClear = db.prepare(SQLITE_SQL.msgClear);
    this.msgTrim = db.prepare(SQLITE_SQL.msgTrim);
    this.logDelete = db.prepare(SQLITE_SQL.logDelete);
    this.opsDelete = db.prepare(SQLITE_SQL.opsDelete);
    this.streams = new StreamStatements(db);
    this.blobs = new BlobStatements(db);
  }
}
