/**
 * Shared by every store for session metadata and `list`: argument checks, the opaque keyset
 * cursor, and the in-process filter the memory store (and any store without indexes) uses. The
 * SQL stores run the same rules as SQL (sqlite/sql.ts, postgres/sql.ts).
 */
import { ConfigurationError, StatebagError } from "../core/errors.js";
import { checkId, DEFAULT_SCAN_LIMIT, MAX_SCAN_LIMIT } from "./common.js";
import { InvalidCursorError, MAX_ID_LENGTH, StoreNotSetUpError } from "./errors.js";
import type { SessionMetaProtection } from "./encryption/meta.js";
import type { ListOptions, SaveOptions, SessionCodec, SessionMeta, StoredSessionMeta } from "./types.js";

/** Most labels one session may carry, and the longest label value (UTF-16 code units). */
export const MAX_LABELS = 64;
export const MAX_LABEL_VALUE_LENGTH = 1024;
export const MAX_TITLE_LENGTH = 4096;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Well-formed text without NUL (PostgreSQL refuses NUL; lone surrogates become U+FFFD there). */
function checkText(value: unknown, what: string, max: number, allowEmpty: boolean): string {
  if (typeof value !== "string")
    throw new ConfigurationError(`${what} must be a string, got ${value === null ? "null" : typeof value}`);
  if (!allowEmpty && value.length === 0) throw new ConfigurationError(`${what} must not be empty`);
  if (value.length > max)
    throw new ConfigurationError(`${what} is ${value.length} characters long; the limit is ${max}`);
  if (value.includes("\0") || LONE_SURROGATE.test(value))
    throw new ConfigurationError(`${what} must be well-formed text without NUL`, "use ordinary Unicode text");
  return value;
}

export function checkOwner(owner: unknown, what = "owner"): string {
  return checkId(owner, what);
}

export function checkLabels(labels: unknown, what = "labels"): Record<string, string> {
  if (typeof labels !== "object" || labels === null || Array.isArray(labels)) {
    throw new ConfigurationError(`${what} must be an object of string values`, 'for example { project: "alpha" }');
  }
  const entries = Object.entries(labels);
  if (entries.length > MAX_LABELS)
    throw new ConfigurationError(`${what} has ${entries.length} entries; the limit is ${MAX_LABELS}`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    checkId(key, `${what} key`);
    out[key] = checkText(value, `${what}[${JSON.stringify(key)}]`, MAX_LABEL_VALUE_LENGTH, true);
  }
  return out;
}

/** `SaveOptions.meta`, checked; each field `undefined` when not given. */
export interface CheckedMeta {
  owner: string | undefined;
  title: string | undefined;
  labels: Record<string, string> | undefined;
}

export function checkMeta(options: SaveOptions | undefined): CheckedMeta {
  const meta = options?.meta as SessionMeta | undefined;
  if (meta === undefined) return { owner: undefined, title: undefined, labels: undefined };
  if (typeof meta !== "object" || meta === null)
    throw new ConfigurationError("meta must be an object { owner?, title?, labels? }");
  return {
    owner: meta.owner === undefined ? undefined : checkOwner(meta.owner, "meta.owner"),
    title: meta.title === undefined ? undefined : checkText(meta.title, "meta.title", MAX_TITLE_LENGTH, true),
    labels: meta.labels === undefined ? undefined : checkLabels(meta.labels, "meta.labels"),
  };
}

/** "00" to "99" and "000" to "999": the fields of a time of day, looked up rather than padded. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, "0"));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, "0"));
/** Milliseconds of 10000-01-01T00:00:00Z: later times (and earlier than 1970) take `toISOString`'s own form. */
const YEAR_10000_MS = 253_402_300_800_000;
const DAY_MS = 86_400_000;

/** The day `isoTime` formatted last (days since 1970) and its `YYYY-MM-DDT`: a page's times mostly share a day. */
let lastDay = -1;
let lastDayText = "";

/** `YYYY-MM-DDT` of a day since 1970 (0 to 2,932,896): civil date from days, H. Hinnant's algorithm. */
function dayText(days: number): string {
  const shiftedDays = days + 719_468;
  const era = Math.floor(shiftedDays / 146_097);
  const doe = shiftedDays - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const yearText = year < 1000 ? `000${year}`.slice(-4) : `${year}`;
  return `${yearText}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T`;
}

/**
 * `new Date(time).toISOString()`, several times faster for the times stores hold (integer
 * milliseconds from 1970 to year 9999): a page of a listing formats two times per item, and
 * `toISOString` was a third of the SQLite store's `list` in a profile. The date part is kept for
 * the last day formatted; the time of day is looked up field by field. Anything else (before
 * 1970, fractions, NaN) goes to `toISOString`.
 */
export function isoTime(time: number | Date): string {
  const ms = typeof time === "number" ? time : time.getTime();
  if (!(ms >= 0 && ms < YEAR_10000_MS && Number.isInteger(ms))) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  if (days !== lastDay) {
    lastDayText = dayText(days);
    lastDay = days;
  }
  let rest = ms - days * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  return `${lastDayText}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[seconds]}.${THREE_DIGITS[rest - seconds * 1000]}Z`;
}

/** A `StoredSessionMeta` from stored fields, leaving absent ones out. */
export function storedMeta(
  owner: string | null | undefined,
  title: string | null | undefined,
  labels: Record<string, string> | null | undefined,
  createdAt: number | Date,
  updatedAt: number | Date,
): StoredSessionMeta {
  const meta: StoredSessionMeta = { createdAt: isoTime(createdAt), updatedAt: isoTime(updatedAt) };
  if (owner != null) meta.owner = owner;
  if (title != null) meta.title = title;
  if (labels != null && Object.keys(labels).length > 0) meta.labels = labels;
  return meta;
}

export type ListOrder = "updatedAt desc" | "id";

/** Where the previous page ended: the last item's sort key (`updated`: store-specific integer time, as text). */
export interface ListCursor {
  order: ListOrder;
  updated: string;
  id: string;
}

export interface CheckedList {
  owner: string;
  labels: Record<string, string>;
  /** Exclusive bounds in epoch milliseconds (undefined: none). */
  updatedBefore: number | undefined;
  updatedAfter: number | undefined;
  order: ListOrder;
  cursor: ListCursor | undefined;
  limit: number;
}

function checkInstant(value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = typeof value === "string" && /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : NaN;
  if (!Number.isFinite(ms)) {
    throw new ConfigurationError(
      `${what} must be an ISO 8601 date-time, got ${JSON.stringify(String(value)).slice(0, 60)}`,
      'for example "2025-01-31T12:00:00.000Z" (new Date().toISOString())',
    );
  }
  return ms;
}

export function checkList(options: ListOptions): CheckedList {
  if (typeof options !== "object" || options === null)
    throw new ConfigurationError("list() needs options { owner, ... }", "a listing is always of one owner's sessions");
  const owner = checkOwner(options.owner, "list owner");
  const order = options.order ?? "updatedAt desc";
  if (order !== "updatedAt desc" && order !== "id")
    throw new ConfigurationError(`list order must be "updatedAt desc" or "id", got ${JSON.stringify(order)}`);
  const limit = options.limit ?? DEFAULT_SCAN_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SCAN_LIMIT) {
    throw new ConfigurationError(
      `list limit must be an integer from 1 to ${MAX_SCAN_LIMIT}, got ${JSON.stringify(limit)}`,
    );
  }
  return {
    owner,
    labels: options.labels === undefined ? {} : checkLabels(options.labels, "list labels"),
    updatedBefore: checkInstant(options.updatedBefore, "updatedBefore"),
    updatedAfter: checkInstant(options.updatedAfter, "updatedAfter"),
    order,
    cursor: options.cursor === undefined || options.cursor === "" ? undefined : decodeCursor(options.cursor, order),
    limit,
  };
}

export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify([cursor.order === "id" ? "i" : "u", cursor.updated, cursor.id]), "utf8").toString(
    "base64url",
  );
}

/**
 * The longest cursor `encodeCursor` can write: base64url of `["u","<16 digits>","<id>"]` with an id
 * of MAX_ID_LENGTH UTF-16 units, each at most 6 bytes as JSON (`\uXXXX`). Longer is not decoded.
 */
const MAX_CURSOR_LENGTH = Math.ceil(((MAX_ID_LENGTH * 6 + 32) * 4) / 3);

/**
 * A cursor's time: what a store writes there (epoch milliseconds, PostgreSQL microseconds; "0"
 * for `order: "id"`) is a non-negative safe integer, in canonical decimal. Anything else (past
 * PostgreSQL's bigint or its timestamp range, negative, "007") was not written by a store.
 */
const CURSOR_TIME = /^(0|[1-9]\d{0,15})$/;

/**
 * Checks a `list` cursor completely, before any store builds a query from it: a forged cursor is
 * an `InvalidCursorError` on every backend, never a driver error (PostgreSQL refused an
 * out-of-range bigint or interval with a raw `DatabaseError`).
 */
function decodeCursor(text: unknown, order: ListOrder): ListCursor {
  const bad = (why: string) => new InvalidCursorError("list cursor", why);
  if (typeof text !== "string") throw bad("must be a string");
  if (text.length > MAX_CURSOR_LENGTH) throw bad(`is ${text.length} characters long: not one list() returned`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    throw bad("is not one list() returned");
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    (parsed[0] !== "i" && parsed[0] !== "u") ||
    typeof parsed[1] !== "string" ||
    typeof parsed[2] !== "string"
  ) {
    throw bad("is not one list() returned");
  }
  if (!CURSOR_TIME.test(parsed[1]) || !Number.isSafeInteger(Number(parsed[1])))
    throw bad("holds a time no store writes: it is not one list() returned");
  const cursorOrder: ListOrder = parsed[0] === "i" ? "id" : "updatedAt desc";
  if (cursorOrder !== order) throw bad(`is from a listing in order "${cursorOrder}", not "${order}"`);
  try {
    checkId(parsed[2]);
  } catch {
    throw bad("holds an id no store writes: it is not one list() returned");
  }
  return { order, updated: parsed[1], id: parsed[2] };
}

/** True when `labels` (stored) carries every label of `wanted`. */
export function labelsMatch(
  labels: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, string>>,
): boolean {
  for (const [key, value] of Object.entries(wanted))
    if (!labels || !Object.hasOwn(labels, key) || labels[key] !== value) return false;
  return true;
}

/**
 * The metadata protection of a session codec (an encrypting codec's `metaProtection`): the store
 * keeps owners and titles in the forms it gives. Undefined: owners and titles are stored as given.
 */
export function metaProtectionOf(codec: SessionCodec): SessionMetaProtection | undefined {
  const protection = (codec as { metaProtection?: SessionMetaProtection }).metaProtection;
  return protection !== undefined && typeof protection.owner === "function" ? protection : undefined;
}

/**
 * Whether a row of a protecting store still holds its owner or title in plaintext or in the form of
 * another key (written before): the next save of the row rewrites them.
 */
export function plaintextMeta(
  protection: SessionMetaProtection | undefined,
  owner: string | null | undefined,
  title: string | null | undefined,
): boolean {
  if (protection === undefined) return false;
  return (
    (owner != null && !protection.isProtectedOwner(owner)) || (title != null && !protection.isProtectedTitle(title))
  );
}

/**
 * A row's stored owner and title as the application gave them (decrypted when protected). `get`
 * reads strictly (a value that does not decrypt is a `DecryptionError`, as its body would be);
 * `list` and `scan` pass `strict: false`, so one row under a key the keyring no longer holds does
 * not fail a whole page: its owner or title is then left out of that item's metadata.
 */
export function readMeta(
  protection: SessionMetaProtection | undefined,
  id: string,
  owner: string | null | undefined,
  title: string | null | undefined,
  strict = true,
): { owner: string | null | undefined; title: string | null | undefined } {
  if (protection === undefined) return { owner, title };
  const read = (value: string | null | undefined, how: (v: string) => string) => {
    if (value == null) return value;
    if (strict) return how(value);
    try {
      return how(value);
    } catch (error) {
      if (error instanceof StatebagError && error.code === "decryption-failed") return undefined;
      throw error;
    }
  };
  return {
    owner: read(owner, (v) => protection.readOwner(v)),
    title: read(title, (v) => protection.readTitle(id, v)),
  };
}

/**
 * A listing by owner on a store that protects owners, where that owner still has sessions stored
 * with the plaintext owner (written before): refused rather than returning part of the owner's
 * sessions. `statebag migrate --reencrypt` rewrites them.
 */
export function plaintextOwnerError(url: string): StoreNotSetUpError {
  return new StoreNotSetUpError(
    url,
    `the store at ${url} keeps owners protected, but this owner still has sessions stored with the plaintext owner (written before): a listing by owner would miss them`,
    'run `statebag migrate --reencrypt --store <url>` (or migrateEncryption(store, { ...codecs, mode: "reencrypt" })) once: it rewrites the owner and title of those sessions in their protected form; get and save work meanwhile',
  );
}

/** Codecs known to ignore their context (statebag's defaults): a store need not look the owner up to serialize for them. */
const contextFree = new WeakSet<object>();

/** Marks a codec as ignoring the codec context. @internal */
export function markContextFree<T extends object>(codec: T): T {
  contextFree.add(codec);
  return codec;
}

/** Whether `codec` may use the owner it is given (any codec but statebag's own). */
export function usesContext(codec: SessionCodec): boolean {
  return !contextFree.has(codec);
}
