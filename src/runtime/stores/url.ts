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
    // Not a parseable URL: redact anything between "//user:" and "@".
    return url.replace(/(\/\/[^:/@]*:)[^@/]*@/, "$1***@");
  }
  if (parsed.password) parsed.password = "***";
  for (const key of [...parsed.searchParams.keys()]) {
    if (SECRET_PARAMS.test(key)) parsed.searchParams.set(key, "***");
  }
  // URL encodes "*" in the password as-is; keep the output readable.
  return parsed.toString().replace(/%2A/g, "*");
}

/** Removes statebag's own query parameters from a driver URL, returning them separately. */
export function takeParams(url: string, names: readonly string[]): { url: string; params: Record<string, string> } {
  const parsed = new URL(url);
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
