/**
 * URL helpers shared by the stores: hiding secrets for messages, and taking statebag's own query
 * parameters out of a PostgreSQL or Redis URL while refusing any the driver would not read. The
 * PostgreSQL rules are in postgres/url.ts; redis/url.ts and sqlite/url.ts take their URLs apart.
 */
import { ConfigurationError } from "../core/errors.js";
import { quoted, shownText } from "../core/json.js";
import { checkPostgresNames, IGNORED_BY_PG, POSTGRES_DRIVER_PARAMS, POSTGRES_RULES } from "./postgres/url.js";

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
    return url
      .replace(/\/\/.*@/s, "//***@")
      .replace(/([?&](?:password|pass|pwd|secret|token|sslpassword|sslkey)=)[^&#]*/gi, "$1***");
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
  postgres: POSTGRES_DRIVER_PARAMS,
  redis: ["family", "db", "username", "password"],
};

/** Redis parameters whose value is a whole number. */
const INTEGER_PARAMS = new Set(["family", "db"]);

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
  for (const [part, value] of [
    ["user name", parsed.username],
    ["password", parsed.password],
  ] as const) {
    try {
      decodeURIComponent(value);
    } catch {
      throw new ConfigurationError(
        `the ${part} in the store URL ${where()} has a malformed %-escape`,
        `percent-encode it with encodeURIComponent (a literal "%" is written %25)`,
      );
    }
  }
  if (family === "postgres") checkPostgresNames(parsed, where);
  if (parsed.hash !== "") {
    // Often the rest of a password with a raw "#" in it: the fragment is never shown.
    throw new ConfigurationError(
      `the store URL ${where()} has a #fragment, which no driver reads`,
      'a "#" in a password or option value must be percent-encoded as %23 (encodeURIComponent)',
    );
  }
  for (const key of new Set(parsed.searchParams.keys())) {
    const shownKey = shownText(key, 40);
    if (family === "postgres" && IGNORED_BY_PG[key] !== undefined && !names.includes(key)) {
      throw new ConfigurationError(
        `?${shownKey}= in the store URL ${where()} has no effect`,
        `remove it: ${IGNORED_BY_PG[key]}`,
      );
    }
    if (!allowed.includes(key)) {
      throw new ConfigurationError(
        `the store URL ${where()} has an unknown option ?${shownKey}=`,
        `the options a ${family ?? "store"} URL accepts are: ${allowed.map((k) => `?${k}=`).join(", ")}`,
      );
    }
    const values = parsed.searchParams.getAll(key);
    if (values.length > 1)
      throw new ConfigurationError(
        `the store URL ${where()} gives ?${shownKey}= ${values.length} times`,
        "give each option once",
      );
    const value = values[0];
    const rule = family === "postgres" ? POSTGRES_RULES[key] : undefined;
    if (rule && !rule.ok(value, parsed.searchParams)) {
      throw new ConfigurationError(
        `?${shownKey}= in the store URL ${where()} must be ${rule.allowed}${rule.secret ? "" : `, got ${quoted(value, 40)}`}`,
        rule.hint ?? `fix ?${shownKey}= in the store URL`,
      );
    }
    if (family === "redis" && INTEGER_PARAMS.has(key) && !/^\d{1,9}$/.test(value)) {
      throw new ConfigurationError(
        `?${shownKey}= in the store URL ${where()} must be a non-negative whole number, got ${quoted(value, 40)}`,
      );
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
