/** URL helpers shared by the stores. */
import { accessSync, constants, statSync } from "node:fs";
import { ConfigurationError } from "../core/errors.js";
import { quoted, shownText } from "../core/json.js";

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
    "sslmode", "ssl", "sslcert", "sslkey", "sslrootcert", "sslnegotiation", "application_name",
    "fallback_application_name", "options", "host", "port", "user", "password", "client_encoding",
    "statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout", "connect_timeout", "uselibpqcompat",
  ],
  redis: ["family", "db", "username", "password"],
};

/**
 * Options pg parses from a postgres:// URL and then never uses: refused with the reason, since a
 * setting that silently does nothing is worse than an error.
 */
const IGNORED_BY_PG: Record<string, string> = {
  db: "pg reads ?db= only in socket: URLs; put the database in the path: postgres://host/database",
  encoding: "pg reads ?encoding= only in socket: URLs; statebag always talks UTF-8 (?client_encoding=UTF8)",
  keepalives: "pg does not read ?keepalives= from a URL; statebag turns TCP keepalive on for every connection",
  sslpassword: "pg does not read ?sslpassword=; use an unencrypted key file (?sslkey=) or pass a pg.Pool you configured yourself",
};

/** Redis parameters whose value is a whole number. */
const INTEGER_PARAMS = new Set(["family", "db"]);

const SSLMODES = ["disable", "prefer", "require", "verify-ca", "verify-full", "no-verify"];
const LIBPQ_SSLMODES = ["disable", "prefer", "require", "verify-ca", "verify-full"];
const INT32_MAX = 2147483647;

/** Whole numbers from `min` to `max`, written plainly (no sign, exponent or spaces). */
function wholeNumber(value: string, min: number, max: number): boolean {
  return /^\d{1,10}$/.test(value) && Number(value) >= min && Number(value) <= max;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

interface ValueRule {
  /** What the value must be, for the message. */
  allowed: string;
  ok: (value: string, query: URLSearchParams) => boolean;
  /** The value is (or names) a secret: never shown. */
  secret?: boolean;
  hint?: string;
}

/** Which files pg reads when it connects: checked now, so a wrong path is named at open, not at the first call. */
const fileRule = (secret = false): ValueRule => ({
  allowed: "the path of a readable file (pg reads it when it connects)",
  ok: (value) => value !== "" && !value.includes("\0") && isReadableFile(value),
  secret,
  hint: "check the path (relative paths are resolved from the working directory)",
});

/** The values each PostgreSQL option may take: what pg (8.x, pg-connection-string 2.x) accepts and uses. */
const POSTGRES_RULES: Record<string, ValueRule> = {
  sslmode: {
    allowed: `one of ${SSLMODES.join(", ")}`,
    ok: (v, q) => (q.get("uselibpqcompat") === "true" ? LIBPQ_SSLMODES : SSLMODES).includes(v) && !(v === "verify-ca" && q.get("uselibpqcompat") === "true" && !q.get("sslrootcert")),
    hint: "no-verify is not a libpq mode (not with ?uselibpqcompat=true); with ?uselibpqcompat=true, verify-ca also needs ?sslrootcert=",
  },
  ssl: { allowed: "1 (or true) to turn TLS on, 0 to turn it off", ok: (v) => v === "true" || v === "1" || v === "0", hint: "pg reads ?ssl=false as on: write ?ssl=0 or ?sslmode=disable" },
  sslcert: fileRule(),
  sslkey: fileRule(true),
  sslrootcert: fileRule(),
  sslnegotiation: {
    allowed: "postgres or direct (direct needs TLS on)",
    ok: (v, q) => v === "postgres" || (v === "direct" && q.get("sslmode") !== "disable" && q.get("ssl") !== "0"),
  },
  application_name: { allowed: "text of at most 63 bytes without control characters", ok: (v) => !CONTROL.test(v) && Buffer.byteLength(v) <= 63 },
  fallback_application_name: { allowed: "text of at most 63 bytes without control characters", ok: (v) => !CONTROL.test(v) && Buffer.byteLength(v) <= 63 },
  options: {
    allowed: 'server options starting with "-" and without control characters, such as -c search_path=app',
    ok: (v) => v.trimStart().startsWith("-") && !CONTROL.test(v),
  },
  host: { allowed: "a host name, address or socket directory without spaces or control characters", ok: (v) => v !== "" && !/\s/.test(v) && !CONTROL.test(v) },
  port: { allowed: "a whole number from 1 to 65535", ok: (v) => wholeNumber(v, 1, 65535) },
  user: { allowed: "a user name without control characters", ok: (v) => v !== "" && !CONTROL.test(v) },
  password: { allowed: "a password without NUL characters", ok: (v) => !v.includes("\0"), secret: true },
  client_encoding: { allowed: "UTF8 (pg decodes every reply as UTF-8)", ok: (v) => /^(utf-?8|unicode)$/i.test(v) },
  statement_timeout: { allowed: `a whole number of milliseconds from 0 to ${INT32_MAX}`, ok: (v) => wholeNumber(v, 0, INT32_MAX) },
  lock_timeout: { allowed: `a whole number of milliseconds from 0 to ${INT32_MAX}`, ok: (v) => wholeNumber(v, 0, INT32_MAX) },
  idle_in_transaction_session_timeout: { allowed: `a whole number of milliseconds from 0 to ${INT32_MAX}`, ok: (v) => wholeNumber(v, 0, INT32_MAX) },
  connect_timeout: { allowed: "a whole number of seconds from 0 (no limit) to 2147483", ok: (v) => wholeNumber(v, 0, 2147483) },
  uselibpqcompat: { allowed: "true or false", ok: (v) => v === "true" || v === "false" },
  // statebag's own PostgreSQL options (schema is checked by the store, pgbouncer by preparedStatementsParam).
  queryTimeout: { allowed: `a whole number of milliseconds from 0 (no limit) to ${INT32_MAX}`, ok: (v) => wholeNumber(v, 0, INT32_MAX) },
};

function isReadableFile(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function driverFamily(scheme: string): string | undefined {
  if (scheme === "postgres:" || scheme === "postgresql:") return "postgres";
  if (scheme === "redis:" || scheme === "rediss:") return "redis";
  return undefined;
}

/**
 * The URL for a message about a refused URL: password and secret-looking options hidden (as
 * `redactUrl`), and the values of options nobody knows too (a misspelt ?pasword= is still a
 * password); no fragment; escaped and cut.
 */
function shownUrl(parsed: URL, known: readonly string[]): string {
  const copy = new URL(parsed.href);
  copy.hash = "";
  for (const key of new Set(copy.searchParams.keys())) {
    if (!known.includes(key)) copy.searchParams.set(key, "***");
  }
  return quoted(redactUrl(copy.href), 200);
}

/**
 * Removes statebag's own query parameters (`names`) from a PostgreSQL/Redis URL, returning them
 * separately. A URL that does not parse, has malformed credentials or a #fragment, or carries a
 * parameter that neither statebag nor the driver knows, or gives one twice, or (PostgreSQL) gives
 * one a value pg does not accept, is a `ConfigurationError` naming the option and what it may be,
 * showing the URL with its password hidden; no error (nor its cause) keeps the cleartext URL.
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
  const family = driverFamily(parsed.protocol);
  const allowed = [...names, ...(family ? DRIVER_PARAMS[family] : [])];
  const where = () => shownUrl(parsed, allowed);
  for (const [part, value] of [["user name", parsed.username], ["password", parsed.password]] as const) {
    try {
      decodeURIComponent(value);
    } catch {
      throw new ConfigurationError(`the ${part} in the store URL ${where()} has a malformed %-escape`, `percent-encode it with encodeURIComponent (a literal "%" is written %25)`);
    }
  }
  if (family === "postgres") {
    // pg takes the path as the database name and the user name as it is: both must be plain names.
    const database = parsed.pathname.slice(1);
    if (database.includes("/")) {
      throw new ConfigurationError(`the store URL ${where()} has a "/" in its database name`, "the path is the database name alone: postgres://user@host:5432/database");
    }
    for (const [part, value] of [["user name", parsed.username], ["database name", database]] as const) {
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        throw new ConfigurationError(`the ${part} in the store URL ${where()} has a malformed %-escape`, `percent-encode it with encodeURIComponent (a literal "%" is written %25)`);
      }
      if (CONTROL.test(decoded)) throw new ConfigurationError(`the ${part} in the store URL ${where()} has a control character`, "remove the %00-%1F escape");
    }
  }
  if (parsed.hash !== "") {
    // Often the rest of a password with a raw "#" in it: the fragment is never shown.
    throw new ConfigurationError(`the store URL ${where()} has a #fragment, which no driver reads`, 'a "#" in a password or option value must be percent-encoded as %23 (encodeURIComponent)');
  }
  for (const key of new Set(parsed.searchParams.keys())) {
    const shownKey = shownText(key, 40);
    if (family === "postgres" && IGNORED_BY_PG[key] !== undefined && !names.includes(key)) {
      throw new ConfigurationError(`?${shownKey}= in the store URL ${where()} has no effect`, `remove it: ${IGNORED_BY_PG[key]}`);
    }
    if (!allowed.includes(key)) {
      throw new ConfigurationError(`the store URL ${where()} has an unknown option ?${shownKey}=`, `the options a ${family ?? "store"} URL accepts are: ${allowed.map((k) => `?${k}=`).join(", ")}`);
    }
    const values = parsed.searchParams.getAll(key);
    if (values.length > 1) throw new ConfigurationError(`the store URL ${where()} gives ?${shownKey}= ${values.length} times`, "give each option once");
    const value = values[0];
    const rule = family === "postgres" ? POSTGRES_RULES[key] : undefined;
    if (rule && !rule.ok(value, parsed.searchParams)) {
      throw new ConfigurationError(
        `?${shownKey}= in the store URL ${where()} must be ${rule.allowed}${rule.secret ? "" : `, got ${quoted(value, 40)}`}`,
        rule.hint ?? `fix ?${shownKey}= in the store URL`,
      );
    }
    if (family === "redis" && INTEGER_PARAMS.has(key) && !/^\d{1,9}$/.test(value)) {
      throw new ConfigurationError(`?${shownKey}= in the store URL ${where()} must be a non-negative whole number, got ${quoted(value, 40)}`);
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
