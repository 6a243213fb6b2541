/**
 * `openStore(url)`: the store for a URL.
 *
 *   (none)                      sqlite:./.statebag/sessions.db (the default, directory created)
 *   memory:                     a fresh in-process store
 *   sqlite:./path.db            a SQLite file, relative to the working directory
 *   sqlite:/abs/path.db         (also sqlite:///abs/path.db; sqlite::memory: for a private in-memory DB)
 *   postgres://user:pw@host/db  PostgreSQL (postgresql:// too); ?schema=name selects the schema,
 *                               ?queryTimeout=ms limits each statement client-side, ?statement_timeout=ms server-side
 *   redis://host:6379/0         Redis (rediss:// for TLS); ?prefix=app:sessions: sets the key prefix
 *
 * Opening does not contact PostgreSQL or Redis: a server that is down is reported by the first
 * call, and the same store works once the server is back. SQLite files are opened (and their
 * tables created) at once, so a bad path fails here.
 */
import { ConfigurationError } from "../core/errors.js";
import { MemorySessionStore } from "./memory.js";
import { PostgresSessionStore } from "./postgres.js";
import { RedisSessionStore } from "./redis.js";
import { SqliteSessionStore } from "./sqlite.js";
import type { MessageCodec, SessionCodec, SessionStore } from "./types.js";
import { DEFAULT_STORE_URL, redactUrl, takeParams } from "./url.js";

export { DEFAULT_STORE_URL };

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
  /** SQLite durability (default `normal`). */
  synchronous?: "normal" | "full";
  /** PostgreSQL: client-side limit on one statement in ms (overrides `?queryTimeout=`; default 30000). */
  queryTimeoutMs?: number;
  /** PostgreSQL pool size (default 10). */
  maxConnections?: number;
}

/** The store for `url` (default: the SQLite file `./.statebag/sessions.db`). */
export async function openStore(url: string = DEFAULT_STORE_URL, options: OpenStoreOptions = {}): Promise<SessionStore> {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  const common = { codec: options.codec, messageCodec: options.messageCodec };
  switch (scheme) {
    case "memory":
      return new MemorySessionStore(common);
    case "sqlite": {
      const path = sqlitePath(url);
      const store = new SqliteSessionStore({
        ...common,
        path,
        busyTimeoutMs: options.busyTimeoutMs ?? numberParam(url, "busyTimeout"),
        synchronous: options.synchronous ?? (param(url, "synchronous") as "normal" | "full" | undefined),
        displayUrl: url,
      });
      await store.setup();
      return store;
    }
    case "postgres":
    case "postgresql": {
      const { url: connectionString, params } = takeParams(url, ["schema", "queryTimeout"]);
      return new PostgresSessionStore({
        ...common,
        connectionString,
        schema: options.schema ?? params.schema,
        connectTimeoutMs: options.connectTimeoutMs,
        queryTimeoutMs: options.queryTimeoutMs ?? (params.queryTimeout === undefined ? undefined : Number(params.queryTimeout)),
        max: options.maxConnections,
        displayUrl: redactUrl(url),
      });
    }
    case "redis":
    case "rediss": {
      const { url: redisUrl, params } = takeParams(url, ["prefix"]);
      return new RedisSessionStore({
        ...common,
        url: redisUrl,
        prefix: options.prefix ?? params.prefix,
        connectTimeoutMs: options.connectTimeoutMs,
        displayUrl: redactUrl(url),
      });
    }
    default:
      throw new ConfigurationError(
        `unknown session store URL "${redactUrl(url)}"`,
        "use memory:, sqlite:./path.db, postgres://user@host/db?schema=name or redis://host:6379?prefix=app:",
      );
  }
}

/** The file path of a `sqlite:` URL (query string removed). */
export function sqlitePath(url: string): string {
  let rest = url.replace(/^sqlite:/i, "").replace(/\?.*$/, "");
  if (rest.startsWith("//")) rest = rest.slice(2); // sqlite://./x.db, sqlite:///abs/x.db
  rest = decodeURIComponent(rest);
  if (rest === "") throw new ConfigurationError(`the SQLite store URL "${url}" has no file path`, "write sqlite:./path/sessions.db");
  return rest;
}

function param(url: string, name: string): string | undefined {
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  return new URLSearchParams(query).get(name) ?? undefined;
}

function numberParam(url: string, name: string): number | undefined {
  const value = param(url, name);
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new ConfigurationError(`?${name}= must be a non-negative integer, got "${value}"`);
  return n;
}
