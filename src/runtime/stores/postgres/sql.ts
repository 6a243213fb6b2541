/**
 * Every SQL statement and DDL the PostgreSQL store runs: with the table layout they create, its
 * storage format (the version recorded in `statebag_meta`, `POSTGRES_SCHEMA_VERSION`).
 *
 * - Sessions are stored as `text`, not `jsonb` (an encrypting codec's binary rows as `bytea` in
 *   `data_bytes`, format 5, `data` then NULL): the bytes come back exactly as the serializer
 *   wrote them (jsonb re-orders keys, drops duplicate keys and whitespace, which once broke
 *   `$type`-first readers in the field), the server does no JSON parsing on write and no
 *   re-rendering on read, and the validated document is the stored document. Ad hoc queries can
 *   still use `data::jsonb`. (JSON text never holds a raw NUL, the one thing `text` refuses.)
 * - `id` uses the "C" collation: scan order is byte order, as in SQLite and Redis, independent of
 *   the database's locale.
 * - Statements are named, so `pg` prepares each once per connection (unnamed with `prepared: false`).
 * - Every save is one statement: `UPDATE ... WHERE id = $1 AND revision = $2` (or an
 *   `INSERT ... ON CONFLICT` for create-if-absent); revisions come from one sequence, so they keep
 *   increasing across delete and re-create.
 */
import { ConfigurationError } from "../../core/errors.js";
import type { PgQueryConfig } from "./driver.js";
import { LEASE_RENEW_FRACTION } from "../stream-common.js";

/** A result row, as `pg` returns it. */
export type Row = Record<string, unknown>;

/** The statements around a unit of work (the message log's changes, setup). */
export const TRANSACTION = { begin: "BEGIN", commit: "COMMIT", rollback: "ROLLBACK" } as const;

/** A quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function checkIdentifier(what: string, name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new ConfigurationError(
      `${what} "${name}" is not a valid name`,
      "use 1-63 letters, digits or underscores, not starting with a digit",
    );
  }
  return name;
}

let nameCounter = 0;

/**
 * Statement texts for one (quoted) schema, named so `pg` prepares each once per connection
 * (unnamed with `prepared: false`). Exported for the benchmark's raw-driver baseline. @internal
 */
export function postgresStatements(schema: string, { prepared = true }: { prepared?: boolean } = {}) {
  const meta = `${schema}.statebag_meta`;
  const seq = `${schema}.statebag_revision_seq`;
  const sessions = `${schema}.statebag_sessions`;
  const logs = `${schema}.statebag_message_logs`;
  const messages = `${schema}.statebag_messages`;
  const ops = `${schema}.statebag_message_ops`;
  const live = "(expires_at IS NULL OR expires_at > now())";
  const expiry = (param: string) =>
    `CASE WHEN ${param}::bigint IS NULL THEN NULL ELSE now() + ${param}::bigint * interval '1 millisecond' END`;
  const meta_ = "owner, title, labels, COALESCE(created_at, updated_at) AS created_at, updated_at";
  const ttl =
    "CASE WHEN expires_at IS NULL THEN NULL ELSE GREATEST(1, ceil(extract(epoch FROM expires_at - now()) * 1000))::bigint END";
  // Metadata times are kept to the millisecond, the precision they are shown (ISO 8601) and filtered with.
  const nowMs = "date_trunc('milliseconds', now())";
  const micros = "(extract(epoch FROM updated_at) * 1000000)::bigint";
  const bound = (param: string, fallback: string) =>
    `COALESCE(timestamptz 'epoch' + ${param}::bigint * interval '1 millisecond', '${fallback}'::timestamptz)`;
  const listFilter = `owner = $1::text AND ${live} AND updated_at < ${bound("$2", "infinity")} AND updated_at > ${bound("$3", "-infinity")}
       AND COALESCE(labels, '{}'::jsonb) @> $4::jsonb`;
  // $5: the owner the save names (NULL: any); title/labels replaced only when given ($6/$8 true);
  // updated_at never goes backwards; a format-1 row gets its created_at from its last update.
  // $10 (create: $7): a revision drawn beforehand (`draw`), else NULL: the next of the sequence.
  // `body`: which of data (text) and data_bytes (bytea, format 5) gets the body ($3; create: $2).
  const updateSql = (body: string) =>
    `UPDATE ${sessions} SET revision = COALESCE($10::bigint, nextval('${seq}')), ${body}, expires_at = ${expiry("$4")},
         updated_at = GREATEST(${nowMs}, updated_at), created_at = COALESCE(created_at, updated_at),
         title = CASE WHEN $6::boolean THEN $7::text ELSE title END, labels = CASE WHEN $8::boolean THEN $9::jsonb ELSE labels END
       WHERE id = $1 AND revision = $2 AND ${live} AND ($5::text IS NULL OR owner = $5::text) RETURNING revision`;
  const createSql = (body: string) =>
    `INSERT INTO ${sessions} AS s (id, revision, data, data_bytes, expires_at, owner, title, labels, created_at, updated_at)
       VALUES ($1, COALESCE($7::bigint, nextval('${seq}')), ${body}, ${expiry("$3")}, $4, $5, $6::jsonb, ${nowMs}, ${nowMs})
       ON CONFLICT (id) DO UPDATE SET revision = EXCLUDED.revision, data = EXCLUDED.data, data_bytes = EXCLUDED.data_bytes,
         expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at, created_at = EXCLUDED.created_at,
         owner = EXCLUDED.owner, title = EXCLUDED.title, labels = EXCLUDED.labels
       WHERE s.expires_at IS NOT NULL AND s.expires_at <= now()
       RETURNING revision`;
  const named = (text: string): PgQueryConfig => (prepared ? { name: `statebag_${++nameCounter}`, text } : { text });
  return {
    createSchema: `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    dropSchema: `DROP SCHEMA IF EXISTS ${schema} CASCADE`,
    /** One setup at a time per schema (transaction-scoped: nothing outlives the transaction). $1: the lock's name. */
    setupLock: "SELECT pg_advisory_xact_lock(hashtext($1))",
    metaTable: `CREATE TABLE IF NOT EXISTS ${meta} (key text PRIMARY KEY, value text NOT NULL)`,
    metaVersion: `SELECT value FROM ${meta} WHERE key = 'schema_version'`,
    metaSetVersion: `INSERT INTO ${meta} (key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
    ddlV1: [
      `CREATE SEQUENCE IF NOT EXISTS ${seq} AS bigint`,
      `CREATE TABLE IF NOT EXISTS ${sessions} (
         id text COLLATE "C" PRIMARY KEY,
         revision bigint NOT NULL,
         data text NOT NULL,
         expires_at timestamptz,
         updated_at timestamptz NOT NULL DEFAULT now()
       )`,
      `CREATE INDEX IF NOT EXISTS statebag_sessions_expires ON ${sessions} (expires_at) WHERE expires_at IS NOT NULL`,
      `CREATE TABLE IF NOT EXISTS ${logs} (
         storage_id text COLLATE "C" PRIMARY KEY,
         version bigint NOT NULL,
         next_seq bigint NOT NULL,
         updated_at timestamptz NOT NULL DEFAULT now()
       )`,
      `CREATE TABLE IF NOT EXISTS ${messages} (
         storage_id text COLLATE "C" NOT NULL,
         seq bigint NOT NULL,
         body text NOT NULL,
         PRIMARY KEY (storage_id, seq)
       )`,
      `CREATE TABLE IF NOT EXISTS ${ops} (
         storage_id text COLLATE "C" NOT NULL,
         operation_id text NOT NULL,
         created_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (storage_id, operation_id)
       )`,
    ],
    /**
     * Format 2 (#23): session metadata columns and the listing indexes, each step idempotent (run
     * inside setup's transaction: an interrupted upgrade is rolled back and redone by the next setup).
     * Rows of format 1 keep owner NULL (listed by no owner) and created_at NULL (read as their
     * updated_at, set from it at their next save).
     */
    ddlV2: [
      `ALTER TABLE ${sessions} ADD COLUMN IF NOT EXISTS owner text COLLATE "C",
         ADD COLUMN IF NOT EXISTS title text, ADD COLUMN IF NOT EXISTS labels jsonb, ADD COLUMN IF NOT EXISTS created_at timestamptz`,
      `CREATE INDEX IF NOT EXISTS statebag_sessions_owner_updated ON ${sessions} (owner, updated_at DESC, id DESC) WHERE owner IS NOT NULL`,
      `CREATE INDEX IF NOT EXISTS statebag_sessions_owner_id ON ${sessions} (owner, id) WHERE owner IS NOT NULL`,
    ],
    get: named(`SELECT revision, data, data_bytes, ${meta_} FROM ${sessions} WHERE id = $1 AND ${live}`),
    current: named(`SELECT revision, owner FROM ${sessions} WHERE id = $1 AND ${live}`),
    // For a codec that binds the revision: the revision the save will write (drawn now, so it is
    // greater than any the caller has seen) and the row's current revision and owner.
    draw: named(
      `SELECT nextval('${seq}') AS next, s.revision, s.owner, s.title FROM (SELECT 1) AS one
       LEFT JOIN ${sessions} s ON s.id = $1 AND ${live}`,
    ),
    // Protected owners and titles (an encrypting codec): a row written before gets the protected
    // forms right after its save ($4: the revision that save wrote; NULL keeps a column).
    protectMeta: named(
      `UPDATE ${sessions} SET owner = COALESCE($2::text, owner), title = COALESCE($3::text, title) WHERE id = $1 AND revision = $4`,
    ),
    update: named(updateSql("data = $3, data_bytes = NULL")),
    create: named(createSql("$2, NULL")),
    // The same for a binary row (an encrypting codec, format 5): the body as bytea in data_bytes.
    updateBytes: named(updateSql("data = NULL, data_bytes = $3")),
    createBytes: named(createSql("NULL, $2")),
    // Keyset pages over the (owner, updated_at DESC, id DESC) and (owner, id) indexes, reading only
    // metadata columns. $2/$3: updated before/after (epoch ms, NULL: no bound); $4: labels (jsonb
    // containment); the cursor's time is in microseconds (exact), NULL on a first page.
    listByTime: named(
      `SELECT id, revision, ${meta_}, ${ttl} AS ttl_ms, ${micros} AS updated_us FROM ${sessions}
       WHERE ${listFilter} AND (updated_at, id) < (COALESCE(timestamptz 'epoch' + $5::bigint * interval '1 microsecond', 'infinity'), $6::text)
       ORDER BY updated_at DESC, id DESC LIMIT $7`,
    ),
    listById: named(
      `SELECT id, revision, ${meta_}, ${ttl} AS ttl_ms FROM ${sessions}
       WHERE ${listFilter} AND id > $5::text ORDER BY id LIMIT $6`,
    ),
    deleteAny: named(`DELETE FROM ${sessions} WHERE id = $1 RETURNING ${live} AS live`),
    deleteAt: named(`DELETE FROM ${sessions} WHERE id = $1 AND revision = $2 AND ${live} RETURNING revision`),
    scan: named(`SELECT id, revision, ${meta_} FROM ${sessions} WHERE id > $1 AND ${live} ORDER BY id LIMIT $2`),
    scanText: named(
      `SELECT id, revision, data, data_bytes, ${meta_}, CASE WHEN expires_at IS NULL THEN NULL ELSE GREATEST(1, ceil(extract(epoch FROM expires_at - now()) * 1000))::bigint END AS ttl_ms
       FROM ${sessions} WHERE id > $1 AND ${live} ORDER BY id LIMIT $2`,
    ),
    purge: named(`DELETE FROM ${sessions} WHERE expires_at <= now()`),
    // One statement: record the operation id (a repeat inserts nothing and so appends nothing),
    // bump the log header (its row lock orders concurrent appends), insert the messages.
    append: named(
      `WITH op AS (
         INSERT INTO ${ops} (storage_id, operation_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING storage_id
       ), hdr AS (
         INSERT INTO ${logs} AS l (storage_id, version, next_seq)
         SELECT storage_id, nextval('${seq}'), $4::bigint FROM op
         ON CONFLICT (storage_id) DO UPDATE SET version = EXCLUDED.version,
           next_seq = l.next_seq + EXCLUDED.next_seq, updated_at = now()
         RETURNING version, next_seq
       ), ins AS (
         INSERT INTO ${messages} (storage_id, seq, body)
         SELECT $1, hdr.next_seq - $4::bigint + t.ord - 1, t.body
         FROM hdr, unnest($3::text[]) WITH ORDINALITY AS t(body, ord)
       )
       SELECT version FROM hdr`,
    ),
    logVersion: named(`SELECT version, next_seq FROM ${logs} WHERE storage_id = $1`),
    logLock: named(`SELECT version, next_seq FROM ${logs} WHERE storage_id = $1 FOR UPDATE`),
    logEnsure: named(`INSERT INTO ${logs} (storage_id, version, next_seq) VALUES ($1, 0, 0) ON CONFLICT DO NOTHING`),
    logBump: named(
      `UPDATE ${logs} SET version = nextval('${seq}'), next_seq = next_seq + $2, updated_at = now() WHERE storage_id = $1 RETURNING version, next_seq`,
    ),
    opInsert: named(`INSERT INTO ${ops} (storage_id, operation_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1`),
    msgAll: named(`SELECT body FROM ${messages} WHERE storage_id = $1 ORDER BY seq`),
    msgLast: named(
      `SELECT body FROM ${messages} WHERE storage_id = $1
       AND seq >= (SELECT next_seq - $2 FROM ${logs} WHERE storage_id = $1) ORDER BY seq`,
    ),
    msgRead: named(
      `SELECT l.version, coalesce((SELECT array_agg(m.body ORDER BY m.seq) FROM ${messages} m WHERE m.storage_id = $1), '{}') AS bodies
       FROM (SELECT 1) AS one LEFT JOIN ${logs} l ON l.storage_id = $1`,
    ),
    // One statement, so one snapshot: the header, the oldest position, and the messages from a
    // position ($2) or the newest $3.
    msgWindow: named(
      `SELECT l.version, l.next_seq, (SELECT min(m.seq) FROM ${messages} m WHERE m.storage_id = $1) AS first,
         coalesce((SELECT array_agg(m.body ORDER BY m.seq) FROM ${messages} m WHERE m.storage_id = $1
           AND m.seq >= coalesce($2::bigint, l.next_seq - $3::bigint)), '{}') AS bodies
       FROM (SELECT 1) AS one LEFT JOIN ${logs} l ON l.storage_id = $1`,
    ),
    msgRange: named(
      `SELECT l.version, l.next_seq, f.first,
         coalesce((SELECT array_agg(m.body ORDER BY m.seq) FROM ${messages} m WHERE m.storage_id = $1
           AND m.seq >= f.first + $2::bigint AND m.seq < f.first + $2::bigint + $3::bigint), '{}') AS bodies
       FROM (SELECT 1) AS one LEFT JOIN ${logs} l ON l.storage_id = $1
         CROSS JOIN (SELECT min(m.seq) AS first FROM ${messages} m WHERE m.storage_id = $1) AS f`,
    ),
    msgInsert: named(
      `INSERT INTO ${messages} (storage_id, seq, body)
       SELECT $1, $2::bigint + t.ord - 1, t.body FROM unnest($3::text[]) WITH ORDINALITY AS t(body, ord)`,
    ),
    msgClear: named(`DELETE FROM ${messages} WHERE storage_id = $1`),
    msgTrim: named(`DELETE FROM ${messages} WHERE storage_id = $1 AND seq < $2`),
    opsDelete: named(`DELETE FROM ${ops} WHERE storage_id = $1`),
    logDelete: named(`DELETE FROM ${logs} WHERE storage_id = $1 RETURNING version`),
    /** Format 3: the stream-buffer tables (idempotent, run inside setup's transaction). */
    ddlV3: streamDdl(schema),
    /**
     * Format 5: binary session rows (an encrypting codec's ciphertext as bytes) in a bytea column
     * beside `data`; a row has one of the two. Adding a nullable column and dropping NOT NULL change
     * no stored row (no table rewrite); rows written before keep their text and load as before.
     */
    ddlV5: [
      `ALTER TABLE ${sessions} ADD COLUMN IF NOT EXISTS data_bytes bytea`,
      `ALTER TABLE ${sessions} ALTER COLUMN data DROP NOT NULL`,
    ],
    streams: postgresStreamStatements(schema, named),
    /** Format 4: the blob tables (idempotent, run inside setup's transaction). */
    ddlV4: blobDdl(schema),
    blobs: postgresBlobStatements(schema, named),
  };
}

/**
 * The blob tables (format 4): one row per blob (its owner and hash, keyed forms in an encrypting
 * store; the upload id its chunks are kept under; size, chunk layout, description; times in epoch
 * ms of the writer's clock) and its chunks (bytea, stored uncompressed: files are mostly
 * compressed already). A put's chunks go in first, its blob row last: a put that dies in between
 * leaves chunks no row points to, removed by sweeps.
 */
function blobDdl(schema: string): string[] {
  const blobs = `${schema}.statebag_blobs`;
  const chunks = `${schema}.statebag_blob_chunks`;
  return [
    `CREATE TABLE IF NOT EXISTS ${blobs} (
       owner text COLLATE "C" NOT NULL,
       hash text COLLATE "C" NOT NULL,
       upload_id text COLLATE "C" NOT NULL,
       size bigint NOT NULL,
       chunk_size integer NOT NULL,
       chunks integer NOT NULL,
       stride integer NOT NULL,
       meta bytea NOT NULL,
       created_at bigint NOT NULL,
       touched_at bigint NOT NULL,
       PRIMARY KEY (owner, hash)
     )`,
    `CREATE INDEX IF NOT EXISTS statebag_blobs_upload ON ${blobs} (upload_id)`,
    `CREATE TABLE IF NOT EXISTS ${chunks} (
       upload_id text COLLATE "C" NOT NULL,
       seq integer NOT NULL,
       owner text COLLATE "C" NOT NULL,
       created_at bigint NOT NULL,
       data bytea NOT NULL,
       PRIMARY KEY (upload_id, seq)
     )`,
    `ALTER TABLE ${chunks} ALTER COLUMN data SET STORAGE EXTERNAL`,
    `CREATE INDEX IF NOT EXISTS statebag_blob_chunks_owner ON ${chunks} (owner, created_at)`,
  ];
}

/** The blob statements (postgres/blobs.ts). */
function postgresBlobStatements(schema: string, named: (text: string) => PgQueryConfig) {
  const blobs = `${schema}.statebag_blobs`;
  const chunks = `${schema}.statebag_blob_chunks`;
  const columns = "owner, hash, upload_id, size, chunk_size, chunks, stride, meta, created_at, touched_at";
  const orphan = `c.created_at < $1::bigint AND NOT EXISTS (SELECT 1 FROM ${blobs} b WHERE b.upload_id = c.upload_id)`;
  return {
    /** Serializes the budget checks and commits of one owner ($1: the lock's name), or of the store. */
    lock: "SELECT pg_advisory_xact_lock(hashtext($1))",
    get: named(`SELECT ${columns} FROM ${blobs} WHERE owner = $1 AND hash = $2`),
    insert: named(`INSERT INTO ${blobs} (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`),
    touch: named(
      `UPDATE ${blobs} SET touched_at = GREATEST(touched_at, $3::bigint) WHERE owner = $1 AND hash = $2 RETURNING ${columns}`,
    ),
    /** $3: only if last put before it (NULL: always). The blob's chunks go in the same statement. */
    remove: named(
      `WITH d AS (
         DELETE FROM ${blobs} WHERE owner = $1 AND hash = $2 AND ($3::bigint IS NULL OR touched_at < $3::bigint) RETURNING ${columns}
       ), c AS (DELETE FROM ${chunks} WHERE upload_id IN (SELECT upload_id FROM d))
       SELECT * FROM d`,
    ),
    chunk: named(`INSERT INTO ${chunks} (upload_id, seq, owner, created_at, data) VALUES ($1, $2, $3, $4, $5)`),
    chunks: named(`SELECT data FROM ${chunks} WHERE upload_id = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`),
    chunkCount: named(`SELECT count(*) AS n FROM ${chunks} WHERE upload_id = $1`),
    removeChunks: named(`DELETE FROM ${chunks} WHERE upload_id = $1`),
    listOwner: named(`SELECT ${columns} FROM ${blobs} WHERE owner = $1 AND hash > $2 ORDER BY hash LIMIT $3`),
    listAll: named(`SELECT ${columns} FROM ${blobs} WHERE (owner, hash) > ($1, $2) ORDER BY owner, hash LIMIT $3`),
    usageOwner: named(`SELECT count(*) AS blobs, coalesce(sum(size), 0) AS bytes FROM ${blobs} WHERE owner = $1`),
    usageAll: named(`SELECT count(*) AS blobs, coalesce(sum(size), 0) AS bytes FROM ${blobs}`),
    erase: named(
      `WITH c AS (DELETE FROM ${chunks} WHERE owner = $1), d AS (DELETE FROM ${blobs} WHERE owner = $1 RETURNING size)
       SELECT count(*) AS blobs, coalesce(sum(size), 0) AS bytes FROM d`,
    ),
    purgeOwner: named(`DELETE FROM ${chunks} c WHERE c.owner = $2 AND ${orphan}`),
    purgeAll: named(`DELETE FROM ${chunks} c WHERE ${orphan}`),
  };
}

/**
 * The stream-buffer tables (format 3): one row per stream (its session, status, length, stop
 * flag, the writer's lease and, once finished, when it expires: epoch milliseconds of the
 * server's clock; `owner` only as an encrypting codec seals it) and its chunks by position.
 */
function streamDdl(schema: string): string[] {
  const streams = `${schema}.statebag_streams`;
  const chunks = `${schema}.statebag_stream_chunks`;
  return [
    `CREATE TABLE IF NOT EXISTS ${streams} (
       stream_id text COLLATE "C" PRIMARY KEY,
       session_id text COLLATE "C" NOT NULL,
       owner text,
       status text NOT NULL,
       length bigint NOT NULL,
       stop_requested boolean NOT NULL,
       lease_expires_at bigint NOT NULL,
       expires_at bigint
     )`,
    `CREATE INDEX IF NOT EXISTS statebag_streams_session ON ${streams} (session_id)`,
    `CREATE INDEX IF NOT EXISTS statebag_streams_expires ON ${streams} (expires_at) WHERE expires_at IS NOT NULL`,
    `CREATE INDEX IF NOT EXISTS statebag_streams_lease ON ${streams} (lease_expires_at) WHERE status = 'running'`,
    `CREATE TABLE IF NOT EXISTS ${chunks} (
       stream_id text COLLATE "C" NOT NULL,
       seq bigint NOT NULL,
       body text NOT NULL,
       PRIMARY KEY (stream_id, seq)
     )`,
  ];
}

/**
 * The stream-buffer statements (postgres/stream-buffer.ts). Times are the server's clock in epoch
 * ms, so every process agrees on whose lease has passed. `$abandoned`: how long after its lease a
 * running stream nobody ended is purged (ABANDONED_STREAM_KEEP_MS). Writes that followers wait
 * for NOTIFY the store's channel with the stream id, in the same statement (delivered at commit).
 */
function postgresStreamStatements(schema: string, named: (text: string) => PgQueryConfig) {
  const streams = `${schema}.statebag_streams`;
  const chunks = `${schema}.statebag_stream_chunks`;
  const nowMs = "(extract(epoch FROM now()) * 1000)::bigint";
  const gone = (abandoned: string) =>
    `((expires_at IS NOT NULL AND expires_at <= ${nowMs}) OR (status = 'running' AND lease_expires_at <= ${nowMs} - ${abandoned}::bigint))`;
  const info = "session_id, owner, status, length, stop_requested, lease_expires_at";
  /** The lease after a write with `lease` ms (stream-common.ts leaseNeedsWrite, in SQL). */
  const renewedLease = (lease: string, renewal: string) =>
    `CASE WHEN ${renewal} OR lease_expires_at < ${nowMs} + ${lease}::bigint - ${lease}::bigint / ${LEASE_RENEW_FRACTION}
       OR lease_expires_at > ${nowMs} + ${lease}::bigint THEN ${nowMs} + ${lease}::bigint ELSE lease_expires_at END`;
  return {
    /** $1 id, $2 abandoned ms. */
    get: named(`SELECT ${info} FROM ${streams} WHERE stream_id = $1 AND NOT ${gone("$2")}`),
    /** Removes a stream nobody sees any more, so its id opens anew ($1 id, $2 abandoned ms). */
    clearGone: named(
      `WITH d AS (DELETE FROM ${streams} WHERE stream_id = $1 AND ${gone("$2")} RETURNING stream_id)
       DELETE FROM ${chunks} WHERE stream_id IN (SELECT stream_id FROM d)`,
    ),
    /** $1 id, $2 session, $3 sealed owner, $4 lease ms, $5 its first chunks. Nothing returned: the id exists. */
    insert: named(
      `WITH s AS (
         INSERT INTO ${streams} (stream_id, session_id, owner, status, length, stop_requested, lease_expires_at, expires_at)
         VALUES ($1, $2, $3, 'running', cardinality($5::text[]), false, ${nowMs} + $4::bigint, NULL)
         ON CONFLICT (stream_id) DO NOTHING RETURNING lease_expires_at
       ), ins AS (
         INSERT INTO ${chunks} (stream_id, seq, body)
         SELECT $1, t.ord - 1, t.body FROM s, unnest($5::text[]) WITH ORDINALITY AS t(body, ord)
       )
       SELECT lease_expires_at FROM s`,
    ),
    /**
     * One statement: the running stream's length and lease (its row lock orders concurrent
     * appends), the chunks at the positions after it, and the notification. $1 id, $2 chunks,
     * $3 their count, $4 lease ms, $5 abandoned ms, $6 channel. No row: not running. The lease is
     * renewed as LEASE_RENEW_FRACTION says (always without chunks); kept as it is, the indexed
     * column does not change and the update is a HOT one (no index entry written).
     */
    append: named(
      `WITH s AS (
         UPDATE ${streams} SET length = length + $3::bigint, lease_expires_at = ${renewedLease("$4", "$3::bigint = 0")}
         WHERE stream_id = $1 AND status = 'running' AND NOT ${gone("$5")}
         RETURNING length, stop_requested
       ), ins AS (
         INSERT INTO ${chunks} (stream_id, seq, body)
         SELECT $1, s.length - $3::bigint + t.ord - 1, t.body FROM s, unnest($2::text[]) WITH ORDINALITY AS t(body, ord)
       ), n AS (SELECT pg_notify($6, $1) FROM s WHERE $3::bigint > 0)
       SELECT s.length, s.stop_requested, (SELECT count(*) FROM n) AS notified FROM s`,
    ),
    /** The running stream's row, locked (an append whose chunks are sealed at their positions). $1 id, $2 abandoned ms. */
    lock: named(
      `SELECT ${info} FROM ${streams} WHERE stream_id = $1 AND status = 'running' AND NOT ${gone("$2")} FOR UPDATE`,
    ),
    /** $1 id, $2 chunks, $3 first position. */
    insertChunks: named(
      `INSERT INTO ${chunks} (stream_id, seq, body)
       SELECT $1, $3::bigint + t.ord - 1, t.body FROM unnest($2::text[]) WITH ORDINALITY AS t(body, ord)`,
    ),
    /** $1 id, $2 new length, $3 lease ms, $4 channel, $5 whether to notify. */
    grow: named(
      `WITH s AS (UPDATE ${streams} SET length = $2::bigint, lease_expires_at = ${renewedLease("$3", "false")} WHERE stream_id = $1 RETURNING stop_requested),
       n AS (SELECT pg_notify($4, $1) FROM s WHERE $5::boolean)
       SELECT s.stop_requested, (SELECT count(*) FROM n) AS notified FROM s`,
    ),
    /** $1 id, $2 status, $3 keep ms, $4 only if abandoned, $5 abandoned ms, $6 channel. */
    finish: named(
      `WITH s AS (
         UPDATE ${streams} SET status = $2, expires_at = ${nowMs} + $3::bigint
         WHERE stream_id = $1 AND status = 'running' AND NOT ${gone("$5")}
           AND (NOT $4::boolean OR lease_expires_at <= ${nowMs})
         RETURNING stream_id
       ), n AS (SELECT pg_notify($6, $1) FROM s)
       SELECT (SELECT count(*) FROM s) AS ended, (SELECT count(*) FROM n) AS notified`,
    ),
    /**
     * `append` of the writer's last chunks and `finish` in one statement: the running stream grows
     * by them and ends, the chunks go at the positions it grew by, followers are notified. $1 id,
     * $2 chunks, $3 their count, $4 status, $5 keep ms, $6 abandoned ms, $7 channel.
     */
    finishWith: named(
      `WITH s AS (
         UPDATE ${streams} SET length = length + $3::bigint, status = $4, expires_at = ${nowMs} + $5::bigint
         WHERE stream_id = $1 AND status = 'running' AND NOT ${gone("$6")}
         RETURNING length
       ), ins AS (
         INSERT INTO ${chunks} (stream_id, seq, body)
         SELECT $1, s.length - $3::bigint + t.ord - 1, t.body FROM s, unnest($2::text[]) WITH ORDINALITY AS t(body, ord)
       ), n AS (SELECT pg_notify($7, $1) FROM s)
       SELECT (SELECT count(*) FROM s) AS ended, (SELECT count(*) FROM n) AS notified`,
    ),
    /** $1 id, $2 abandoned ms. */
    stop: named(
      `UPDATE ${streams} SET stop_requested = true WHERE stream_id = $1 AND status = 'running' AND NOT ${gone("$2")} RETURNING 1`,
    ),
    /**
     * One statement, one snapshot: the stream, one row per chunk at [$2, $3) (one row with a NULL
     * body when there is none). Rows, not an array_agg: pg parses an array literal far slower.
     * $1 id, $4 abandoned ms.
     */
    read: named(
      `SELECT s.session_id, s.owner, s.status, s.length, s.stop_requested, s.lease_expires_at, c.body
       FROM ${streams} s LEFT JOIN ${chunks} c ON c.stream_id = s.stream_id AND c.seq >= $2::bigint AND c.seq < $3::bigint
       WHERE s.stream_id = $1 AND NOT ${gone("$4")} ORDER BY c.seq`,
    ),
    /** The session's streams with their chunks; counts those still visible. $1 session, $2 abandoned ms, $3 channel. */
    deleteSession: named(
      `WITH d AS (
         DELETE FROM ${streams} WHERE session_id = $1 RETURNING stream_id, NOT ${gone("$2")} AS visible
       ), c AS (DELETE FROM ${chunks} WHERE stream_id IN (SELECT stream_id FROM d)),
       n AS (SELECT pg_notify($3, stream_id) FROM d)
       SELECT (SELECT count(*) FROM d WHERE visible) AS removed, (SELECT count(*) FROM n) AS notified`,
    ),
    /** $1 abandoned ms. */
    purge: named(
      `WITH d AS (DELETE FROM ${streams} WHERE ${gone("$1")} RETURNING stream_id),
       c AS (DELETE FROM ${chunks} WHERE stream_id IN (SELECT stream_id FROM d))
       SELECT count(*) AS removed FROM d`,
    ),
  };
}

/** The statements of one schema. */
export type PostgresStatements = ReturnType<typeof postgresStatements>;
