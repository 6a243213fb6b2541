/** URL helpers shared by the stores. */
import { ConfigurationError } from "../core/errors.js";

/** Where sessions go when no store URL is given (library and CLI alike). */
export const DEFAULT_STORE_URL = "sqlite:./.statebag/sessions.db";

const SECRET_PARAMS = /^(password|pass|pwd|secret|token|sslpassword|sslkey)$/i;

/** The URL with its password (and secret-looking query parameters) replaced by `***`. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a parseable URL: which "@" ends the credentials is unclear, so hide everything up to the last one.
    return url.replace(/\/\/.*@/s, "//***@").replace(/([?&](?:password|pass|pwd|secret|token|sslpassword|sslkey)=)[^&#]*/gi, "$1***");
  }
  if (parsed.password) parsed.password = "***";
  for (const key of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMS.test(key)) parsed.searchParams.set(key, "***");
  }
  // URL encodes "*" in the password as-is; keep the output readable.
  return parsed.toString().replace(/%2A/g, "*");
}

/**
 * Query parameters the drivers themselves understand, passed through unchanged. Anything else in
 * a PostgreSQL or Redis URL is refused: a misspelt option would otherwise be silently ignored (or
 * sent to the server as a connection setting).
 */
const DRIVER_PARAMS: Record<string, readonly string[]> = {
  postgres: [
    "sslmode", "ssl", "sslcert", "sslkey", "sslrootcert", "sslpassword", "sslnegotiation", "application_name",
    "fallback_application_name", "options", "host", "port", "user", "password", "db", "encoding", "client_encoding",
    "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "connect_timeout", "keepalives", "uselibpqcompat",
  ],
  redis: ["family", "db", "username", "password"],
};

/** Driver parameters whose value is a whole number of milliseconds (or seconds for connect_timeout). */
const INTEGER_PARAMS = new Set(["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "connect_timeout", "queryTimeout", "family", "db"]);

function driverFamily(scheme: string): string | undefined {
  if (scheme === "postgres:" || scheme === "postgresql:") return "postgres";
  if (scheme === "redis:" || scheme === "rediss:") return "redis";
  return undefined;
}

/**
 * Removes statebag's own query parameters (`names`) from a PostgreSQL/Redis URL, returning them
 * separately. A URL that does not parse, has malformed credentials, or carries a parameter that
 * neither statebag nor the driver knows is a `ConfigurationError` whose message shows the URL
 * with its password hidden; no error (nor its cause) keeps the cleartext URL.
 */
export function takeParams(url: string, names: readonly string[]): { url: string; params: Record<string, string> } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The TypeError's `input` holds the whole URL, password included: never pass it on.
    throw new ConfigurationError(
      `the store URL "${redactUrl(url)}" is not a valid URL`,
      "write scheme://user:password@host:port/database; percent-encode special characters in the user and password (encodeURIComponent) and use a port from 1 to 65535",
    );
  }
  for (const [part, value] of [["user name", parsed.username], ["password", parsed.password]] as const) {
    try {
      decodeURIComponent(value);
    } catch {
      throw new ConfigurationError(`the ${part} in the store URL "${redactUrl(url)}" has a malformed %-escape`, `percent-encode it with encodeURIComponent (a literal "%" is written %25)`);
    }
  }
  const family = driverFamily(parsed.protocol);
  const allowed = [...names, ...(family ? DRIVER_PARAMS[family] : [])];
  for (const key of new Set(parsed.searchParams.keys())) {
    if (!allowed.includes(key)) {
      throw new ConfigurationError(`the store URL "${redactUrl(url)}" has an unknown option ?${key}=`, `the options a ${family ?? "store"} URL accepts are: ${allowed.map((k) => `?${k}=`).join(", ")}`);
    }
    const value = parsed.searchParams.get(key)!;
    if (INTEGER_PARAMS.has(key) && !/^\d{1,9}$/.test(value)) {
      throw new ConfigurationError(`?${key}= in the store URL "${redactUrl(url)}" must be a non-negative whole number, got ${JSON.stringify(value.slice(0, 40))}`);
    }
  }
  const params: Record<string, string> = {};
  for (const name of names) {
    const value = parsed.searchParams.get(name);
    if (value !== null) {
      params[name] = value;
      parsed.searchParams.delete(name);
    }
  }
  return { url: parsed.toString(), params };
}

/** A quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function checkIdentifier(what: string, name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new ConfigurationError(`${what} "${name}" is not a valid name`, "use 1-63 letters, digits or underscores, not starting with a digit");
  }
  return name;
}
