/**
 * Redis store URLs: every part is checked before anything connects. the driver itself reads a
 * database path with parseInt (`/1.5` is db 1, `/abc` an uncaught error) and reports a failed
 * SELECT only as an event while commands go to db 0; so statebag takes the database and its own
 * connection options out of the URL and hands the driver a URL with neither.
 */
import { ConfigurationError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";
import { redactUrl, takeParams } from "../url.js";

export interface RedisClusterNode {
  host: string;
  port: number;
}

/** statebag's connection options in a Redis URL (kept in the URL `parseRedisStoreUrl` returns, read by the store). */
export const REDIS_CONNECT_PARAMS = ["connectTimeout", "connectRetries"] as const;

/** Default connect timeout of one attempt, in ms. */
export const REDIS_DEFAULT_CONNECT_TIMEOUT_MS = 2000;
/** Default extra connection attempts after a failed one (so 2 attempts in all). */
export const REDIS_DEFAULT_CONNECT_RETRIES = 1;
/** Upper bounds, so a typo cannot make a call wait for hours. */
const MAX_CONNECT_TIMEOUT_MS = 600_000;
const MAX_CONNECT_RETRIES = 20;
/** A day: longer than any command should take, short enough for a timer. */
const MAX_COMMAND_TIMEOUT_MS = 86_400_000;

/**
 * A Redis store URL taken apart: `redis://`, `rediss://`, `redis+cluster://h1:p1,h2:p2[/?...]`
 * (`rediss+cluster://` with TLS) and `?cluster=true` on a one-node URL. Returns a plain
 * `redis(s)://` URL of the first node (credentials, TLS, database, driver options and
 * `?connectTimeout=` / `?connectRetries=`), statebag's own parameters, and the cluster's start
 * nodes when it is a cluster. @internal
 */
export function parseRedisStoreUrl(url: string): {
  url: string;
  params: Record<string, string>;
  cluster?: RedisClusterNode[];
} {
  const multi = /^(rediss?)\+cluster:\/\/([^/?#]*)(.*)$/is.exec(url);
  let seedUrl = url;
  let hosts: string[] | undefined;
  if (multi) {
    const [, scheme, authority, rest] = multi;
    const at = authority.lastIndexOf("@");
    const userinfo = at >= 0 ? authority.slice(0, at + 1) : "";
    hosts = authority.slice(at + 1).split(",");
    seedUrl = `${scheme.toLowerCase()}://${userinfo}${hosts[0]}${rest}`;
  }
  const { url: taken, params: all } = takeParams(seedUrl, ["prefix", "cluster", ...REDIS_CONNECT_PARAMS]);
  // The connection options stay in the URL: the store reads them (also when built without openStore).
  const plainUrl = new URL(taken);
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(all)) {
    if ((REDIS_CONNECT_PARAMS as readonly string[]).includes(name)) plainUrl.searchParams.set(name, value);
    else params[name] = value;
  }
  const plain = all.connectTimeout === undefined && all.connectRetries === undefined ? taken : plainUrl.toString();
  if (params.cluster !== undefined && params.cluster !== "true" && params.cluster !== "false") {
    throw new ConfigurationError(
      `?cluster= in the store URL ${quoted(redactUrl(url), 200)} must be true or false, got ${quoted(params.cluster, 40)}`,
    );
  }
  // Checks the database, host and options now, so a bad URL fails at open, not at the first call.
  const connection = redisConnection(plain, redactUrl(url));
  if (!hosts && params.cluster !== "true") return { url: plain, params };
  const nodes = (hosts ?? [new URL(plain).host]).map((host) => {
    let parsed: URL | undefined;
    try {
      parsed = host ? new URL(`redis://${host}`) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed?.hostname || parsed.pathname !== "" || parsed.username || parsed.port === "0") {
      throw new ConfigurationError(
        `the store URL ${quoted(redactUrl(url), 200)} lists a cluster node ${quoted(host, 100)} that is not host:port`,
        "write redis+cluster://[user:password@]host1:port1,host2:port2/?prefix=app:",
      );
    }
    return { host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(parsed.port || 6379) };
  });
  if (connection.db !== 0) {
    throw new ConfigurationError(
      `the store URL ${quoted(redactUrl(url), 200)} selects a database other than 0`,
      "Redis Cluster has only database 0: drop the /<db> path and ?db=, and separate stores by ?prefix=",
    );
  }
  return { url: plain, params, cluster: nodes };
}

/** What the store connects with: the URL for the driver (no database, no statebag options) and the rest, checked. @internal */
export interface RedisConnection {
  /** `redis(s)://[user:password@]host:port[?family=..]`: what the driver is given. */
  url: string;
  /** The database to SELECT after connecting (0: none). */
  db: number;
  /** `host:port` of the server (for messages; never credentials). */
  address: string;
  connectTimeoutMs?: number;
  connectRetries?: number;
}

/**
 * Checks a `redis://` / `rediss://` URL part by part and splits off what statebag handles itself.
 * `display` is the URL as errors show it (password hidden). Every refusal is a `ConfigurationError`.
 */
export function redisConnection(url: string, display = redactUrl(url)): RedisConnection {
  const { url: rest, params } = takeParams(url, [...REDIS_CONNECT_PARAMS]);
  const parsed = new URL(rest);
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new ConfigurationError(
      `the store URL ${quoted(display, 200)} is not a redis:// or rediss:// URL`,
      "write redis://[user:password@]host:6379[/db] (rediss:// for TLS)",
    );
  }
  if (!parsed.hostname) {
    throw new ConfigurationError(
      `the store URL ${quoted(display, 200)} names no host`,
      "write redis://[user:password@]host:6379[/db]",
    );
  }
  if (parsed.port === "0") {
    throw new ConfigurationError(
      `the store URL ${quoted(display, 200)} names port 0`,
      "use the server's port, 1 to 65535 (Redis listens on 6379 by default)",
    );
  }
  if (parsed.hash) {
    throw new ConfigurationError(
      `the store URL ${quoted(display, 200)} has a #fragment`,
      "remove the # part (a literal # in a password is written %23)",
    );
  }
  const db = databaseOf(parsed, display);
  const family = parsed.searchParams.get("family");
  if (family !== null && !["0", "4", "6"].includes(family)) {
    throw new ConfigurationError(
      `?family= in the store URL ${quoted(display, 200)} must be 4 (IPv4), 6 (IPv6) or 0 (either), got ${quoted(family, 40)}`,
    );
  }
  const connectTimeoutMs = whole(
    params.connectTimeout,
    "connectTimeout",
    display,
    1,
    MAX_CONNECT_TIMEOUT_MS,
    "milliseconds one connection attempt may take",
  );
  const connectRetries = whole(
    params.connectRetries,
    "connectRetries",
    display,
    0,
    MAX_CONNECT_RETRIES,
    "extra connection attempts after a failed one",
  );
  // What ioredis gets: no database (statebag selects it, checked) and none of statebag's options.
  parsed.pathname = "";
  parsed.searchParams.delete("db");
  const port = parsed.port || "6379";
  return {
    url: parsed.toString(),
    db,
    address: `${parsed.hostname}:${port}`,
    ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
    ...(connectRetries === undefined ? {} : { connectRetries }),
  };
}

/** The database a URL names by path (`/3`) or `?db=3`; 0 when neither. Both must agree. */
function databaseOf(parsed: URL, display: string): number {
  const path = parsed.pathname;
  const hint =
    "write the database as a whole number from 0 (the default) up to the server's `databases` setting minus 1, e.g. redis://host:6379/2";
  let fromPath: number | undefined;
  if (path !== "" && path !== "/") {
    const digits = /^\/(\d{1,9})$/.exec(path)?.[1];
    if (digits === undefined) {
      throw new ConfigurationError(
        `the database ${quoted(decodeSafe(path.slice(1)), 40)} in the store URL ${quoted(display, 200)} is not a database number`,
        hint,
      );
    }
    fromPath = Number(digits);
  }
  const query = parsed.searchParams.get("db");
  let fromQuery: number | undefined;
  if (query !== null) {
    if (!/^\d{1,9}$/.test(query))
      throw new ConfigurationError(
        `?db= in the store URL ${quoted(display, 200)} is not a database number, got ${quoted(query, 40)}`,
        hint,
      );
    fromQuery = Number(query);
  }
  if (fromPath !== undefined && fromQuery !== undefined && fromPath !== fromQuery) {
    throw new ConfigurationError(
      `the store URL ${quoted(display, 200)} names two databases (/${fromPath} and ?db=${fromQuery})`,
      "name the database once, as the path (redis://host:6379/2)",
    );
  }
  return fromPath ?? fromQuery ?? 0;
}

function whole(
  value: string | undefined,
  name: string,
  display: string,
  min: number,
  max: number,
  what: string,
): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(parsed >= min && parsed <= max)) {
    throw new ConfigurationError(
      `?${name}= in the store URL ${quoted(display, 200)} must be a whole number from ${min} to ${max} (${what}), got ${quoted(value, 40)}`,
    );
  }
  return parsed;
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** `connectTimeoutMs` / `connectRetries` given as store options: the same bounds as in the URL. @internal */
export function checkConnectOption(
  name: "connectTimeoutMs" | "connectRetries" | "commandTimeoutMs",
  value: number | undefined,
): number | undefined {
  if (value === undefined) return undefined;
  const [min, max] =
    name === "connectRetries"
      ? [0, MAX_CONNECT_RETRIES]
      : [1, name === "connectTimeoutMs" ? MAX_CONNECT_TIMEOUT_MS : MAX_COMMAND_TIMEOUT_MS];
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigurationError(
      `the Redis store option ${name} must be a whole number from ${min} to ${max}, got ${String(value).slice(0, 40)}`,
      name === "commandTimeoutMs"
        ? "give each command a time limit in ms (default 10000); there is no unlimited: a server that never answers would hold every call"
        : undefined,
    );
  }
  return value;
}
