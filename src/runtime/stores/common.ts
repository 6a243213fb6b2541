/** Argument checks and small helpers shared by every store, so all backends behave the same. */
import { ConfigurationError } from "../core/errors.js";
import type { AgentSession } from "../core/session.js";
import { InvalidCursorError, InvalidIdError, MAX_ID_LENGTH } from "./errors.js";
import type {
  DeleteOptions,
  ReplaceOptions,
  SaveOptions,
  ScanItem,
  ScanOptions,
  ScanPage,
  TrimOptions,
} from "./types.js";

export const DEFAULT_SCAN_LIMIT = 100;
export const MAX_SCAN_LIMIT = 1000;

/**
 * The one id rule every store applies to session ids, message-log ids and operation ids, so an id
 * means the same record on every backend: a non-empty string of well-formed UTF-16 (no lone
 * surrogate, which PostgreSQL and Redis would turn into U+FFFD, merging distinct ids) without NUL
 * (which PostgreSQL refuses), at most `MAX_ID_LENGTH` code units.
 */
export function checkId(id: unknown, what = "session id"): string {
  if (typeof id !== "string")
    throw new InvalidIdError(what, `must be a string, got ${id === null ? "null" : typeof id}`);
  if (id.length === 0) throw new InvalidIdError(what, "must not be empty");
  if (id.length > MAX_ID_LENGTH)
    throw new InvalidIdError(what, `is ${id.length} characters long; the limit is ${MAX_ID_LENGTH}`);
  const nul = id.indexOf("\0");
  if (nul >= 0) throw new InvalidIdError(what, `${JSON.stringify(id)} contains a NUL character at index ${nul}`);
  const lone = LONE_SURROGATE.exec(id);
  if (lone) {
    const unit = lone[0].charCodeAt(0).toString(16).toUpperCase();
    throw new InvalidIdError(
      what,
      `${JSON.stringify(id)} is not well-formed text: a lone surrogate (\\u${unit}) at index ${lone.index}`,
    );
  }
  return id;
}

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The session's id, checked before anything is serialized. */
export function sessionId(session: AgentSession): string {
  if (typeof session !== "object" || session === null) throw new ConfigurationError("save() needs a session object");
  return checkId(session.id);
}

export interface CheckedSave {
  expected: number | null;
  ttlMs: number | undefined;
}

export function checkSave(options: SaveOptions | undefined): CheckedSave {
  const expected = options?.expectedRevision ?? null;
  if (expected !== null && !(Number.isSafeInteger(expected) && expected > 0)) {
    throw new ConfigurationError(
      `expectedRevision must be a positive integer or null, got ${JSON.stringify(expected)}`,
    );
  }
  return { expected, ttlMs: checkTtl(options?.ttlMs) };
}

export function checkTtl(ttlMs: unknown): number | undefined {
  if (ttlMs === undefined) return undefined;
  if (typeof ttlMs !== "number" || !Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new ConfigurationError(
      `ttlMs must be a positive integer number of milliseconds, got ${JSON.stringify(ttlMs)}`,
    );
  }
  return ttlMs;
}

export function checkDelete(options: DeleteOptions | undefined): number | undefined {
  const expected = options?.expectedRevision;
  if (expected !== undefined && !(Number.isSafeInteger(expected) && expected > 0)) {
    throw new ConfigurationError(`expectedRevision must be a positive integer, got ${JSON.stringify(expected)}`);
  }
  return expected;
}

export function checkScan(options: ScanOptions | undefined): {
  cursor: string | undefined;
  limit: number;
  includeText: boolean;
} {
  const limit = options?.limit ?? DEFAULT_SCAN_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SCAN_LIMIT) {
    throw new ConfigurationError(
      `scan limit must be an integer from 1 to ${MAX_SCAN_LIMIT}, got ${JSON.stringify(limit)}`,
    );
  }
  return { cursor: checkScanCursor(options?.cursor), limit, includeText: options?.includeText ?? false };
}

/**
 * A `scan` cursor (the last id of the previous page; `migrate`'s `startAfter`), checked before any
 * query: a text no store writes as an id (NUL, a lone surrogate, longer than MAX_ID_LENGTH) is an
 * `InvalidCursorError` on every backend, never a driver error. Empty or absent: the first page.
 */
export function checkScanCursor(cursor: unknown): string | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  const bad = (why: string) => new InvalidCursorError("scan cursor", why);
  if (typeof cursor !== "string") throw bad("must be a string");
  if (cursor.length > MAX_ID_LENGTH)
    throw bad(`is ${cursor.length} characters long; an id, and so a cursor, is at most ${MAX_ID_LENGTH}`);
  if (cursor.includes("\0")) throw bad("contains a NUL character, which no id holds");
  if (LONE_SURROGATE.test(cursor)) throw bad("is not well-formed text (a lone surrogate), which no id is");
  return cursor;
}

export function checkOperationId(operationId: unknown): string {
  return checkId(operationId, "operationId");
}

/** `replaceMessages` options: the expected log version and the optional idempotency key. */
export function checkReplace(options: ReplaceOptions | undefined): {
  expected: number | undefined;
  operationId: string | undefined;
} {
  const operationId = options?.operationId;
  return {
    expected: checkVersion(options?.expectedVersion),
    operationId: operationId === undefined ? undefined : checkOperationId(operationId),
  };
}

export function checkVersion(version: unknown, what = "expectedVersion"): number | undefined {
  if (version === undefined) return undefined;
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 0) {
    throw new ConfigurationError(`${what} must be a non-negative integer, got ${JSON.stringify(version)}`);
  }
  return version;
}

export function checkTrim(options: TrimOptions): { keepLast: number; expectedVersion: number | undefined } {
  const keepLast = options?.keepLast;
  if (typeof keepLast !== "number" || !Number.isSafeInteger(keepLast) || keepLast < 0) {
    throw new ConfigurationError(`keepLast must be a non-negative integer, got ${JSON.stringify(keepLast)}`);
  }
  return { keepLast, expectedVersion: checkVersion(options.expectedVersion) };
}

export function checkLast(last: unknown): number | undefined {
  if (last === undefined) return undefined;
  if (typeof last !== "number" || !Number.isSafeInteger(last) || last < 0) {
    throw new ConfigurationError(`last must be a non-negative integer, got ${JSON.stringify(last)}`);
  }
  return last;
}

/**
 * A scan page from up to `limit + 1` items: stores fetch one extra item to learn, without
 * counting, whether another page follows.
 */
export function scanPage(items: ScanItem[], limit: number): ScanPage {
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  return { items: page, cursor: page[page.length - 1].id };
}

/** A scan item: the stored text only when asked for, `ttlMs` only for a session that expires. */
export function scanItem(id: string, revision: number, text?: string, ttlMs?: number): ScanItem {
  const item: ScanItem = { id, revision };
  if (text !== undefined) {
    item.text = text;
    if (ttlMs !== undefined) item.ttlMs = ttlMs;
  }
  return item;
}

/** Socket-level error codes meaning the server could not be reached or the connection broke. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNABORTED",
]);

/** True for a Node socket error (a network server store is unavailable, not misused). */
export function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && NETWORK_CODES.has(code);
}

/** Binary (UTF-8 byte) order of two strings, as SQLite, PostgreSQL "C" collation and Redis sort them. */
export function compareIds(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
