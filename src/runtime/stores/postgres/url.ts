/**
 * The PostgreSQL part of store URLs: which query parameters `pg` reads, the values each may take,
 * the ones it parses and then ignores, and the checks on the user and database names. The generic
 * `takeParams` (../url.ts) applies them to every postgres:// or postgresql:// URL.
 */
import { accessSync, constants, statSync } from "node:fs";
import { ConfigurationError } from "../../core/errors.js";

/** Query parameters `pg` itself understands, passed through unchanged (anything else is refused). */
export const POSTGRES_DRIVER_PARAMS: readonly string[] = [
  "sslmode",
  "ssl",
  "sslcert",
  "sslkey",
  "sslrootcert",
  "sslnegotiation",
  "application_name",
  "fallback_application_name",
  "options",
  "host",
  "port",
  "user",
  "password",
  "client_encoding",
  "statement_timeout",
  "lock_timeout",
  "idle_in_transaction_session_timeout",
  "connect_timeout",
  "uselibpqcompat",
];

/**
 * Options pg parses from a postgres:// URL and then never uses: refused with the reason, since a
 * setting that silently does nothing is worse than an error.
 */
export const IGNORED_BY_PG: Record<string, string> = {
  db: "pg reads ?db= only in socket: URLs; put the database in the path: postgres://host/database",
  encoding: "pg reads ?encoding= only in socket: URLs; statebag always talks UTF-8 (?client_encoding=UTF8)",
  keepalives: "pg does not read ?keepalives= from a URL; statebag turns TCP keepalive on for every connection",
  sslpassword:
    "pg does not read ?sslpassword=; use an unencrypted key file (?sslkey=) or pass a pg.Pool you configured yourself",
};

const SSLMODES = ["disable", "prefer", "require", "verify-ca", "verify-full", "no-verify"];
const LIBPQ_SSLMODES = ["disable", "prefer", "require", "verify-ca", "verify-full"];
const INT32_MAX = 2147483647;

/** Whole numbers from `min` to `max`, written plainly (no sign, exponent or spaces). */
function wholeNumber(value: string, min: number, max: number): boolean {
  return /^\d{1,10}$/.test(value) && Number(value) >= min && Number(value) <= max;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface ValueRule {
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
export const POSTGRES_RULES: Record<string, ValueRule> = {
  sslmode: {
    allowed: `one of ${SSLMODES.join(", ")}`,
    ok: (v, q) =>
      (q.get("uselibpqcompat") === "true" ? LIBPQ_SSLMODES : SSLMODES).includes(v) &&
      !(v === "verify-ca" && q.get("uselibpqcompat") === "true" && !q.get("sslrootcert")),
    hint: "no-verify is not a libpq mode (not with ?uselibpqcompat=true); with ?uselibpqcompat=true, verify-ca also needs ?sslrootcert=",
  },
  ssl: {
    allowed: "1 (or true) to turn TLS on, 0 to turn it off",
    ok: (v) => v === "true" || v === "1" || v === "0",
    hint: "pg reads ?ssl=false as on: write ?ssl=0 or ?sslmode=disable",
  },
  sslcert: fileRule(),
  sslkey: fileRule(true),
  sslrootcert: fileRule(),
  sslnegotiation: {
    allowed: "postgres or direct (direct needs TLS on)",
    ok: (v, q) => v === "postgres" || (v === "direct" && q.get("sslmode") !== "disable" && q.get("ssl") !== "0"),
  },
  application_name: {
    allowed: "text of at most 63 bytes without control characters",
    ok: (v) => !CONTROL.test(v) && Buffer.byteLength(v) <= 63,
  },
  fallback_application_name: {
    allowed: "text of at most 63 bytes without control characters",
    ok: (v) => !CONTROL.test(v) && Buffer.byteLength(v) <= 63,
  },
  options: {
    allowed: 'server options starting with "-" and without control characters, such as -c search_path=app',
    ok: (v) => v.trimStart().startsWith("-") && !CONTROL.test(v),
  },
  host: {
    allowed: "a host name, address or socket directory without spaces or control characters",
    ok: (v) => v !== "" && !/\s/.test(v) && !CONTROL.test(v),
  },
  port: { allowed: "a whole number from 1 to 65535", ok: (v) => wholeNumber(v, 1, 65535) },
  user: { allowed: "a user name without control characters", ok: (v) => v !== "" && !CONTROL.test(v) },
  password: { allowed: "a password without NUL characters", ok: (v) => !v.includes("\0"), secret: true },
  client_encoding: { allowed: "UTF8 (pg decodes every reply as UTF-8)", ok: (v) => /^(utf-?8|unicode)$/i.test(v) },
  statement_timeout: {
    allowed: `a whole number of milliseconds from 0 to ${INT32_MAX}`,
    ok: (v) => wholeNumber(v, 0, INT32_MAX),
  },
  lock_timeout: {
    allowed: `a whole number of milliseconds from 0 to ${INT32_MAX}`,
    ok: (v) => wholeNumber(v, 0, INT32_MAX),
  },
  idle_in_transaction_session_timeout: {
    allowed: `a whole number of milliseconds from 0 to ${INT32_MAX}`,
    ok: (v) => wholeNumber(v, 0, INT32_MAX),
  },
  connect_timeout: {
    allowed: "a whole number of seconds from 0 (no limit) to 2147483",
    ok: (v) => wholeNumber(v, 0, 2147483),
  },
  uselibpqcompat: { allowed: "true or false", ok: (v) => v === "true" || v === "false" },
  // statebag's own PostgreSQL options (schema is checked by the store, pgbouncer by preparedStatementsParam).
  queryTimeout: {
    allowed: `a whole number of milliseconds from 0 (no limit) to ${INT32_MAX}`,
    ok: (v) => wholeNumber(v, 0, INT32_MAX),
  },
};

function isReadableFile(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** pg takes the path as the database name and the user name as it is: both must be plain names. `where()` is the URL as errors show it. */
export function checkPostgresNames(parsed: URL, where: () => string): void {
  const database = parsed.pathname.slice(1);
  if (database.includes("/")) {
    throw new ConfigurationError(
      `the store URL ${where()} has a "/" in its database name`,
      "the path is the database name alone: postgres://user@host:5432/database",
    );
  }
  for (const [part, value] of [
    ["user name", parsed.username],
    ["database name", database],
  ] as const) {
    let decoded = value;
    try {
      decoded = decodeURIComponent(value);
    } catch {
      throw new ConfigurationError(
        `the ${part} in the store URL ${where()} has a malformed %-escape`,
        `percent-encode it with encodeURIComponent (a literal "%" is written %25)`,
      );
    }
    if (CONTROL.test(decoded))
      throw new ConfigurationError(
        `the ${part} in the store URL ${where()} has a control character`,
        "remove the %00-%1F escape",
      );
  }
}
