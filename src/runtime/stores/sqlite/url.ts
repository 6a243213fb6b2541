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

/** A short, printable excerpt of user input for an error message. */
function excerpt(text: string): string {
  const short = text.length > 60 ? `${text.slice(0, 60)}...` : text;
  return JSON.stringify(short);
}

function decode(text: string, what: string, url: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new ConfigurationError(
      `the SQLite store URL ${excerpt(url)} has a malformed percent-escape in its ${what}`,
      "escape \"%\" as %25, and write other escapes as % followed by two hex digits (a space is %20)",
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
      const host = rest.slice(2, slash < 0 ? undefined : slash);
      if (host !== "" && host.toLowerCase() !== "localhost") {
        throw new ConfigurationError(
          `the SQLite store URL ${excerpt(url)} names the host "${host.slice(0, 40)}"; SQLite opens local files only`,
          "write sqlite:file:///absolute/path.db (three slashes) or sqlite:./relative/path.db",
        );
      }
      rest = slash < 0 ? "" : rest.slice(slash);
    }
  } else if (rest.startsWith("//")) {
    rest = rest.slice(2); // sqlite://./x.db, sqlite:///abs/x.db
  }
  const path = decode(rest, "path", url);
  if (path === "") throw new ConfigurationError(`the SQLite store URL ${excerpt(url)} has no file path`, "write sqlite:./path/sessions.db");
  if (path.includes("\0")) throw new ConfigurationError(`the SQLite store URL ${excerpt(url)} has a NUL character in its path`, "remove the %00 from the path");
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
    if (!(OPTIONS as readonly string[]).includes(name)) {
      throw new ConfigurationError(
        `the SQLite store URL ${excerpt(url)} has an unknown option ?${name.slice(0, 40)}=`,
        `the options are ${OPTIONS.map((o) => `?${o}=`).join(", ")} (names are case-sensitive)`,
      );
    }
    if (seen.has(name)) throw new ConfigurationError(`the SQLite store URL ${excerpt(url)} gives ?${name}= twice`, "keep one");
    seen.add(name);
    setOption(out, name as OptionName, value);
  }
  return out;
}

function setOption(out: Omit<SqliteUrl, "path">, name: OptionName, value: string): void {
  const bad = (allowed: string) => new ConfigurationError(`?${name}= must be ${allowed}, got ${excerpt(value)}`, `fix ?${name}= in the store URL`);
  switch (name) {
    case "busyTimeout": {
      const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(n)) throw bad("a non-negative whole number of milliseconds");
      out.busyTimeoutMs = n;
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
