/**
 * `sqlite:` store URLs: the file path and the options statebag reads from the query string.
 *
 *   sqlite:./path.db  sqlite:/abs/path.db  sqlite:///abs/path.db  sqlite::memory:
 *   sqlite:file:/abs/path.db  sqlite:file:///abs/path.db  sqlite:file:./rel.db   (file: URIs)
 *   ?busyTimeout=<ms>  ?synchronous=normal|full  ?driver=node:sqlite|better-sqlite3  ?readOnly=true|false
 *
 * Every option is checked against its allowed values, and an unknown one is refused, so a typo
 * never silently falls back to a default.
 */
import { ConfigurationError } from "../../core/errors.js";
import { quoted, shownText } from "../../core/json.js";
import { checkSqliteDriver, type SqliteDriverName } from "./driver.js";

export interface SqliteUrl {
  path: string;
  busyTimeoutMs?: number;
  synchronous?: "normal" | "full";
  driver?: SqliteDriverName;
  readOnly?: boolean;
}

const OPTIONS = ["busyTimeout", "synchronous", "driver", "readOnly"] as const;
type OptionName = (typeof OPTIONS)[number];

/**
 * The URL for an error message: escaped and cut, with anything that may be a secret hidden: the
 * part before an "@" (credentials) and every query value (a misspelt ?pasword= is still a password).
 */
function excerpt(url: string): string {
  const question = url.indexOf("?");
  let head = question < 0 ? url : url.slice(0, question);
  const authority = /^(sqlite:(?:file:)?\/\/|sqlite:(?=[^/]*:[^/]*@))([^/]*)(.*)$/is.exec(head);
  if (authority && /[@:]/.test(authority[2])) {
    const at = authority[2].lastIndexOf("@");
    head = `${authority[1]}***${at < 0 ? "" : authority[2].slice(at)}${authority[3]}`;
  }
  const query =
    question < 0
      ? ""
      : `?${url
          .slice(question + 1)
          .split("&")
          .map((pair) => (pair.includes("=") ? `${pair.slice(0, pair.indexOf("="))}=***` : pair))
          .join("&")}`;
  return quoted(head + query, 120);
}

/** Which option values may be shown in a message (the others may be secrets). */
function showValue(name: string): boolean {
  return (OPTIONS as readonly string[]).includes(name);
}

/**
 * The part between "//" and the next "/" of sqlite://... or sqlite:file://...: SQLite opens local
 * files, so credentials, a host or a port there are refused rather than read as a relative path
 * (sqlite://user:pass@host/x.db would create the folder "user:pass@host" and show it around).
 * Allowed: "" (sqlite:///abs.db), "." and ".." (sqlite://./rel.db), and "localhost" for file: URIs.
 */
function checkAuthority(authority: string, url: string, fileUri: boolean): void {
  if (
    authority === "" ||
    (!fileUri && (authority === "." || authority === "..")) ||
    (fileUri && authority.toLowerCase() === "localhost")
  )
    return;
  const fix = "SQLite opens local files, with no login: write sqlite:./relative/path.db or sqlite:///absolute/path.db";
  if (authority.includes("@")) {
    throw new ConfigurationError(
      `the SQLite store URL ${excerpt(url)} has credentials (user:password@) before its path`,
      fix,
    );
  }
  // Not shown: "user:secret" without an "@" reads as a host and port too.
  if (authority.includes(":"))
    throw new ConfigurationError(`the SQLite store URL ${excerpt(url)} has a host and port before its path`, fix);
  throw new ConfigurationError(
    `the SQLite store URL ${excerpt(url)} names the host ${quoted(authority, 40)}; SQLite opens local files only`,
    fix,
  );
}

function decode(text: string, what: string, url: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ConfigurationError(
      `the SQLite store URL ${excerpt(url)} has a malformed percent-escape in its ${what}`,
      'escape "%" as %25, and write other escapes as % followed by two hex digits (a space is %20)',
    );
  }
}

/** The file path of a `sqlite:` URL (`file:` URIs resolved, percent-escapes decoded). */
export function sqlitePath(url: string): string {
  return parseSqliteUrl(url).path;
}

export function parseSqliteUrl(url: string): SqliteUrl {
  const question = url.indexOf("?");
  let rest = (question < 0 ? url : url.slice(0, question)).replace(/^sqlite:/i, "");
  const query = question < 0 ? "" : url.slice(question + 1);
  if (/^file:/i.test(rest)) {
    // A file: URI: file:/abs, file:///abs, file://localhost/abs or file:relative.
    rest = rest.slice(5);
    if (rest.startsWith("//")) {
      const slash = rest.indexOf("/", 2);
      checkAuthority(rest.slice(2, slash < 0 ? undefined : slash), url, true);
      rest = slash < 0 ? "" : rest.slice(slash);
    }
  } else if (rest.startsWith("//")) {
    const slash = rest.indexOf("/", 2);
    checkAuthority(rest.slice(2, slash < 0 ? undefined : slash), url, false);
    rest = rest.slice(2); // sqlite://./x.db, sqlite:///abs/x.db
  } else if (/^[^/]*:[^/]*@/.test(rest)) {
    // sqlite:user:pass@host/x.db: a login written without "//", not a file name (sqlite:./ keeps one).
    throw new ConfigurationError(
      `the SQLite store URL ${excerpt(url)} starts its path with what looks like credentials (user:password@)`,
      "SQLite opens local files, with no login: write sqlite:./relative/path.db (a file name that really starts like this: sqlite:./<name>)",
    );
  }
  const path = decode(rest, "path", url);
  if (path === "")
    throw new ConfigurationError(
      `the SQLite store URL ${excerpt(url)} has no file path`,
      "write sqlite:./path/sessions.db",
    );
  if (path.includes("\0"))
    throw new ConfigurationError(
      `the SQLite store URL ${excerpt(url)} has a NUL character in its path`,
      "remove the %00 from the path",
    );
  return { path, ...parseOptions(query, url) };
}

function parseOptions(query: string, url: string): Omit<SqliteUrl, "path"> {
  const out: Omit<SqliteUrl, "path"> = {};
  if (query === "") return out;
  const seen = new Set<string>();
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decode(eq < 0 ? pair : pair.slice(0, eq), "query string", url);
    const value = decode(eq < 0 ? "" : pair.slice(eq + 1).replace(/\+/g, " "), "query string", url);
    if (!showValue(name)) {
      throw new ConfigurationError(
        `the SQLite store URL ${excerpt(url)} has an unknown option ?${shownText(name, 40)}=`,
        `the options are ${OPTIONS.map((o) => `?${o}=`).join(", ")} (names are case-sensitive)`,
      );
    }
    if (seen.has(name))
      throw new ConfigurationError(`the SQLite store URL ${excerpt(url)} gives ?${name}= twice`, "keep one");
    seen.add(name);
    setOption(out, name as OptionName, value);
  }
  return out;
}

function setOption(out: Omit<SqliteUrl, "path">, name: OptionName, value: string): void {
  const bad = (allowed: string) =>
    new ConfigurationError(`?${name}= must be ${allowed}, got ${quoted(value, 40)}`, `fix ?${name}= in the store URL`);
  switch (name) {
    case "busyTimeout": {
      const parsed = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(parsed)) throw bad("a non-negative whole number of milliseconds");
      out.busyTimeoutMs = parsed;
      return;
    }
    case "synchronous":
      if (value !== "normal" && value !== "full") throw bad('"normal" or "full"');
      out.synchronous = value;
      return;
    case "driver":
      out.driver = checkSqliteDriver(value, "?driver=");
      return;
    case "readOnly":
      if (value !== "true" && value !== "false") throw bad('"true" or "false"');
      out.readOnly = value === "true";
      return;
  }
}
