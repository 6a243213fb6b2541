/**
 * `openStore(url)`: the store for a URL.
 *
 *   (none)                      sqlite:./.statebag/sessions.db (the default, directory created)
 *   memory:                     a fresh in-process store
 *   sqlite:./path.db            a SQLite file, relative to the working directory
 *   sqlite:/abs/path.db         (also sqlite:///abs/path.db, file: URIs; sqlite::memory: for a private in-memory DB);
 *                               ?driver=better-sqlite3 picks the optional driver, ?readOnly=true opens for reading
 *   postgres://user:pw@host/db  PostgreSQL (postgresql:// too); ?schema=name selects the schema,
 *                               ?queryTimeout=ms limits each statement client-side, ?statement_timeout=ms server-side,
 *                               ?pgbouncer=true sends unnamed statements (PgBouncer in transaction pooling mode)
 *   redis://host:6379/0         Redis (rediss:// for TLS); ?prefix=app:sessions: sets the key prefix
 *   redis+cluster://h1:p1,h2:p2 Redis Cluster (rediss+cluster:// for TLS; or redis://h1:p1?cluster=true)
 *
 * Any of them takes ?blobs=<url, percent-encoded> to keep `store.blobs` in a folder (file:///path)
 * or an S3 bucket (s3://bucket/prefix?region=...) instead of the store's own backend.
 *
 * Database drivers are loaded only for the URL that needs them (`pg`, `ioredis`, and `better-sqlite3`
 * for ?driver=better-sqlite3); a missing one is a `DriverMissingError` saying what to install.
 * Opening does not contact PostgreSQL or Redis: a server that is down is reported by the first
 * call, and the same store works once the server is back. SQLite files are opened (and their
 * tables created) at once, so a bad path fails here.
 *
 * It stands above both `stores/` (the backends) and `observability/` (which wraps them in tracing):
 * opening is where the two are put together.
 */
import type { BlobOptions } from "../blobs/blob-store.js";
import { ConfigurationError } from "../core/errors.js";
import { quoted } from "../core/json.js";
import { loadDriver } from "../stores/drivers.js";
import { openTracing, type TracingOptions } from "../observability/traced-store.js";
import { MemorySessionStore } from "../stores/memory.js";
import { takeBlobsParam } from "../stores/blobs.js";
import { checkRetention, takeRetentionParams } from "../stores/retention.js";
import { PostgresSessionStore, preparedStatementsParam } from "../stores/postgres/store.js";
import { parseRedisStoreUrl, RedisSessionStore } from "../stores/redis/store.js";
import { SqliteSessionStore } from "../stores/sqlite/store.js";
import type { SqliteDriverName } from "../stores/sqlite/driver.js";
import { parseSqliteUrl, sqlitePath } from "../stores/sqlite/url.js";
import type { MessageCodec, RetentionOptions, SessionCodec, SessionStore } from "../stores/types.js";
import { DEFAULT_STORE_URL, redactUrl, takeParams } from "../stores/url.js";

export { DEFAULT_STORE_URL, sqlitePath };

export interface OpenStoreOptions {
  /** Session codec (default: statebag's validating, migrating serializer). */
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** PostgreSQL schema (overrides `?schema=`). */
  schema?: string;
  /** Redis key prefix (overrides `?prefix=`). */
  prefix?: string;
  /** PostgreSQL/Redis connect timeout in ms. */
  connectTimeoutMs?: number;
  /** SQLite: how long a write waits for another process's lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** SQLite durability (default `normal`; overrides `?synchronous=`). */
  synchronous?: "normal" | "full";
  /**
   * SQLite driver (overrides `?driver=`): `node:sqlite` (default, built into Node) or
   * `better-sqlite3` (optional package: `npm i better-sqlite3`). Both use the same file format.
   */
  sqliteDriver?: SqliteDriverName;
  /** SQLite: open the existing file for reading only, never creating or changing it (overrides `?readOnly=`). */
  readOnly?: boolean;
  /**
   * OpenTelemetry spans for this store's calls (and `withSession`/`migrateStore` on it): `true`,
   * `false`, or `{ tracerProvider, idHashKey }`. Default: on when `@opentelemetry/api` is installed
   * and a global tracer provider is registered when the store is opened.
   */
  tracing?: boolean | TracingOptions;
  /** PostgreSQL: client-side limit on one statement in ms (overrides `?queryTimeout=`; default 30000). */
  queryTimeoutMs?: number;
  /** PostgreSQL pool size (default 10). */
  maxConnections?: number;
  /**
   * What `purgeExpired()` (and `statebag store purge`) removes besides TTL-expired sessions: one
   * rule `{ maxAgeMs?, maxIdleMs? }`, or a policy by owner and label (`RetentionPolicy`). Overrides
   * the URL's `?retentionMaxAge=` / `?retentionMaxIdle=` (durations: `90d`, `12h`, ms).
   */
  retention?: RetentionOptions;
  /**
   * `store.blobs`: budgets (`maxBytes`, `maxBytesPerOwner`), the chunk size, and `url` to keep the
   * blobs in a folder or an S3 bucket instead of the store's own backend.
   */
  blobs?: BlobOptions;
}

/** The store for `url` (default: the SQLite file `./.statebag/sessions.db`). */
export async function openStore(
  url: string = DEFAULT_STORE_URL,
  options: OpenStoreOptions = {},
): Promise<SessionStore> {
  const tracing = await openTracing(options.tracing);
  if (tracing === undefined) return openBackend(url, options);
  return tracing.wrap(await openBackend(url, { ...options, codec: tracing.codec(options.codec) }));
}

async function openBackend(url: string, options: OpenStoreOptions): Promise<SessionStore> {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  // Retention options are the same for every backend: taken out before the backend reads its URL.
  const taken = scheme === undefined ? { url, retention: undefined } : takeRetentionParams(url);
  url = taken.url;
  const retention = checkRetention(options.retention ?? taken.retention);
  // So is ?blobs= (blobs kept in a folder or a bucket); `options.blobs.url` wins over it.
  const blobsTaken = scheme === undefined ? { url, blobsUrl: undefined } : takeBlobsParam(url);
  url = blobsTaken.url;
  const blobs =
    blobsTaken.blobsUrl === undefined || options.blobs?.url !== undefined
      ? options.blobs
      : { ...options.blobs, url: blobsTaken.blobsUrl };
  const common = { codec: options.codec, messageCodec: options.messageCodec, retention, blobs };
  switch (scheme) {
    case "memory":
      // Nothing after "memory:" means anything: refused, so a path or option is never silently dropped.
      if (!/^memory:(\/\/)?$/i.test(url)) {
        throw new ConfigurationError(
          `the store URL ${quoted(redactUrl(url), 200)} has something after "memory:"`,
          "write memory: alone (each openStore call gives a fresh in-process store)",
        );
      }
      return new MemorySessionStore(common);
    case "sqlite": {
      const parsed = parseSqliteUrl(url);
      const store = new SqliteSessionStore({
        ...common,
        path: parsed.path,
        busyTimeoutMs: options.busyTimeoutMs ?? parsed.busyTimeoutMs,
        synchronous: options.synchronous ?? parsed.synchronous,
        driver: options.sqliteDriver ?? parsed.driver,
        readOnly: options.readOnly ?? parsed.readOnly,
        displayUrl: url,
      });
      await store.setup();
      return store;
    }
    case "postgres":
    case "postgresql": {
      loadDriver("pg"); // a missing driver is reported here, not at the first call
      const { url: connectionString, params } = takeParams(url, ["schema", "queryTimeout", "pgbouncer"]);
      return new PostgresSessionStore({
        ...common,
        connectionString,
        schema: options.schema ?? params.schema,
        connectTimeoutMs: options.connectTimeoutMs,
        queryTimeoutMs:
          options.queryTimeoutMs ?? (params.queryTimeout === undefined ? undefined : Number(params.queryTimeout)),
        max: options.maxConnections,
        preparedStatements: preparedStatementsParam(url, params.pgbouncer),
        displayUrl: redactUrl(url),
      });
    }
    case "redis":
    case "rediss":
    case "redis+cluster":
    case "rediss+cluster": {
      loadDriver("ioredis");
      const { url: redisUrl, params, cluster } = parseRedisStoreUrl(url);
      return new RedisSessionStore({
        ...common,
        url: redisUrl,
        cluster,
        prefix: options.prefix ?? params.prefix,
        connectTimeoutMs: options.connectTimeoutMs,
        displayUrl: redactUrl(url),
      });
    }
    default:
      throw new ConfigurationError(
        `unknown session store URL ${quoted(redactUrl(url), 200)}`,
        "use memory:, sqlite:./path.db, postgres://user@host/db?schema=name or redis://host:6379?prefix=app:",
      );
  }
}
