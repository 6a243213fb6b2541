/**
 * Retention (#23): how long sessions are kept, per store or by owner and label, applied by
 * `purgeExpired()` and `statebag store purge`. Implemented once over the store contract: a scan
 * (whose items carry their metadata) decides from `createdAt` (age) and `updatedAt` (idle), and each
 * session no longer kept is deleted at the revision scanned (a session saved meanwhile is no longer
 * idle and stays), then its message logs.
 */
import { ConfigurationError } from "../core/errors.js";
import { checkId } from "./common.js";
import { sweepOwnerBlobs } from "./blob-sweep.js";
import { sessionLogIds } from "./erasure.js";
import { ConflictError } from "./errors.js";
import { checkLabels, labelsMatch } from "./listing.js";
import type { StreamBuffer } from "./stream-buffer.js";
import type {
  LabelRetentionRule,
  RetentionOptions,
  RetentionPolicy,
  RetentionRule,
  SessionStore,
  StoredSessionMeta,
} from "./types.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90d`, `12h`, `30m`, `45s`, `500ms`, `2w`, or a whole number of milliseconds. */
export function parseDuration(text: string, what = "duration"): number {
  const match = /^\s*(\d{1,15})\s*(ms|s|m|h|d|w)?\s*$/.exec(String(text));
  const ms = match ? Number(match[1]) * UNITS[match[2] ?? "ms"] : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new ConfigurationError(
      `${what} must be a positive duration, got ${JSON.stringify(String(text)).slice(0, 60)}`,
      "for example 90d, 12h, 30m, 45s or a number of milliseconds",
    );
  }
  return ms;
}

function checkMs(value: unknown, what: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(
      `${what} must be a positive integer number of milliseconds, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function checkRule(value: unknown, what: string, extra: readonly string[] = []): RetentionRule {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConfigurationError(`${what} must be an object { maxAgeMs?, maxIdleMs? }`);
  for (const key of Object.keys(value)) {
    if (key !== "maxAgeMs" && key !== "maxIdleMs" && !extra.includes(key))
      throw new ConfigurationError(
        `${what} has an unknown field ${JSON.stringify(key)}`,
        `a retention rule has maxAgeMs and maxIdleMs${extra.length ? ` (and ${extra.join(", ")})` : ""}`,
      );
  }
  const given = value as RetentionRule;
  const rule: RetentionRule = {};
  const maxAgeMs = checkMs(given.maxAgeMs, `${what}.maxAgeMs`);
  const maxIdleMs = checkMs(given.maxIdleMs, `${what}.maxIdleMs`);
  if (maxAgeMs !== undefined) rule.maxAgeMs = maxAgeMs;
  if (maxIdleMs !== undefined) rule.maxIdleMs = maxIdleMs;
  return rule;
}

/**
 * A store's `retention` option, checked and in policy form: a plain rule `{ maxAgeMs?, maxIdleMs? }`
 * becomes `{ default: rule }`. Undefined stays undefined (keep everything).
 */
export function checkRetention(options: RetentionOptions | undefined, what = "retention"): RetentionPolicy | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new ConfigurationError(
      `${what} must be an object`,
      "{ maxAgeMs?, maxIdleMs? } or { default?, owners?, labels? }",
    );
  }
  const given = options as Record<string, unknown>;
  if (!("default" in given) && !("owners" in given) && !("labels" in given)) return { default: checkRule(given, what) };
  for (const key of Object.keys(given)) {
    if (key !== "default" && key !== "owners" && key !== "labels") {
      throw new ConfigurationError(
        `${what} has an unknown field ${JSON.stringify(key)}`,
        "a retention policy has default, owners and labels (or is one rule { maxAgeMs?, maxIdleMs? })",
      );
    }
  }
  const policy: RetentionPolicy = {};
  if (given.default !== undefined) policy.default = checkRule(given.default, `${what}.default`);
  if (given.owners !== undefined) {
    if (typeof given.owners !== "object" || given.owners === null || Array.isArray(given.owners))
      throw new ConfigurationError(`${what}.owners must be an object of rules by owner id`);
    const owners: Record<string, RetentionRule> = Object.create(null);
    for (const [owner, rule] of Object.entries(given.owners))
      owners[checkId(owner, `${what}.owners key`)] = checkRule(rule, `${what}.owners[${JSON.stringify(owner)}]`);
    policy.owners = owners;
  }
  if (given.labels !== undefined) {
    if (!Array.isArray(given.labels))
      throw new ConfigurationError(`${what}.labels must be an array of { match, maxAgeMs?, maxIdleMs? }`);
    policy.labels = given.labels.map((rule, i): LabelRetentionRule => {
      const where = `${what}.labels[${i}]`;
      const checked = checkRule(rule, where, ["match"]);
      const match = checkLabels((rule as { match?: unknown }).match, `${where}.match`);
      if (Object.keys(match).length === 0)
        throw new ConfigurationError(
          `${where}.match must name at least one label`,
          "a rule for every session is `default`",
        );
      return { match, ...checked };
    });
  }
  return policy;
}

/** The rule that applies to a session: its owner's, else the first matching label rule, else the default. */
export function retentionRuleFor(
  meta: Pick<StoredSessionMeta, "owner" | "labels">,
  policy: RetentionPolicy,
): RetentionRule | undefined {
  if (meta.owner !== undefined && policy.owners && Object.hasOwn(policy.owners, meta.owner))
    return policy.owners[meta.owner];
  for (const rule of policy.labels ?? []) if (labelsMatch(meta.labels, rule.match)) return rule;
  return policy.default;
}

/** Whether `policy` no longer keeps a session with this metadata at `now` (epoch ms). */
export function isRetentionExpired(meta: StoredSessionMeta, policy: RetentionPolicy, now = Date.now()): boolean {
  const rule = retentionRuleFor(meta, policy);
  if (!rule) return false;
  if (rule.maxAgeMs !== undefined && now - Date.parse(meta.createdAt) > rule.maxAgeMs) return true;
  if (rule.maxIdleMs !== undefined && now - Date.parse(meta.updatedAt) > rule.maxIdleMs) return true;
  return false;
}

/** Retention settings of a store URL (`?retentionMaxAge=90d&retentionMaxIdle=30d`), taken out of it. */
export const RETENTION_URL_PARAMS = ["retentionMaxAge", "retentionMaxIdle"] as const;

/**
 * Splits the retention options off a store URL: the URL without them (for the backend's own
 * parser, which refuses options it does not know) and the rule they give (undefined: none given).
 */
export function takeRetentionParams(url: string): { url: string; retention: RetentionRule | undefined } {
  const queryAt = url.indexOf("?");
  if (queryAt < 0) return { url, retention: undefined };
  const hash = url.indexOf("#", queryAt);
  const query = url.slice(queryAt + 1, hash < 0 ? undefined : hash);
  const kept: string[] = [];
  const rule: RetentionRule = {};
  let found = false;
  for (const part of query.split("&")) {
    const eq = part.indexOf("=");
    let name = eq < 0 ? part : part.slice(0, eq);
    try {
      name = decodeURIComponent(name);
    } catch {
      kept.push(part);
      continue;
    }
    if (name !== "retentionMaxAge" && name !== "retentionMaxIdle") {
      kept.push(part);
      continue;
    }
    const field = name === "retentionMaxAge" ? "maxAgeMs" : "maxIdleMs";
    if (rule[field] !== undefined) throw new ConfigurationError(`?${name}= is given twice in the store URL`);
    let value = eq < 0 ? "" : part.slice(eq + 1);
    try {
      value = decodeURIComponent(value);
    } catch {
      /* reported by parseDuration */
    }
    rule[field] = parseDuration(value, `?${name}= in the store URL`);
    found = true;
  }
  if (!found) return { url, retention: undefined };
  const rest = kept.filter((p) => p !== "").join("&");
  return { url: url.slice(0, queryAt) + (rest ? `?${rest}` : "") + (hash < 0 ? "" : url.slice(hash)), retention: rule };
}

export interface PurgeRetentionOptions {
  /** Count what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Start after this scan cursor (the `cursor` of a progress report of an interrupted run). */
  startAfter?: string;
  /** The time to judge against (epoch ms; default now). */
  now?: number;
  /** Scan page size (default 500). */
  batchSize?: number;
  /** Called after each scanned page. */
  onProgress?: (progress: PurgeRetentionReport) => void;
  /** Stops after the session in hand (the report then has `aborted` and the `cursor` to resume from). */
  signal?: AbortSignal;
  /** The grace window of the blob sweep (see `sweepOwnerBlobs`); default the blob store's. */
  blobGraceMs?: number;
  /**
   * Stream buffers whose pending chat turns the blob sweep counts besides `store.streams` (see
   * `sweepOwnerBlobs`): the `streams` a chat server was given. A removed session's streams go
   * from them too. `purgeExpired` and `statebag store purge` know only the store's own.
   */
  streams?: readonly StreamBuffer[];
}

export interface PurgeRetentionReport {
  /** Sessions looked at. */
  scanned: number;
  /** Sessions removed (with `dryRun`: that would be). */
  sessions: number;
  /** Message logs removed (with `dryRun`: 0, not counted). */
  messageLogs: number;
  /** Sessions saved again while being judged, left for the next run. */
  skipped: number;
  /**
   * Blobs removed because no session of their owner refers to them any more (a store with a blob
   * store; with `dryRun`: 0, not counted). Swept once the scan is done, per owner of a removed session.
   */
  blobs?: number;
  /** The last session id done: `startAfter` to resume an interrupted run (absent: none scanned). */
  cursor?: string;
  /** Set when `signal` stopped the run early. */
  aborted?: boolean;
}

/**
 * Removes (or with `dryRun` counts) the sessions `policy` no longer keeps, page by page over
 * `store.scan`. Each is deleted at the revision scanned (a session saved meanwhile stays, counted in
 * `skipped`), then its message logs and stream buffers. Interrupted, it leaves a consistent store: a re-run continues
 * (what was removed is gone), and `startAfter` skips what was already scanned.
 */
export async function purgeRetention(
  store: SessionStore,
  retention: RetentionOptions,
  options: PurgeRetentionOptions = {},
): Promise<PurgeRetentionReport> {
  const policy = checkRetention(retention)!;
  const now = options.now ?? Date.now();
  const report: PurgeRetentionReport = { scanned: 0, sessions: 0, messageLogs: 0, skipped: 0 };
  if (store.blobs && !options.dryRun) report.blobs = 0;
  // Owners of removed sessions (undefined: sessions without one), whose blobs are swept at the end.
  const owners = new Set<string | undefined>();
  if (options.startAfter !== undefined) report.cursor = options.startAfter;
  let cursor = options.startAfter;
  do {
    const page = await store.scan({ cursor, limit: options.batchSize ?? 500 });
    for (const item of page.items) {
      if (options.signal?.aborted) {
        report.aborted = true;
        return report;
      }
      report.scanned++;
      report.cursor = item.id;
      if (!item.meta)
        throw new ConfigurationError(
          `the ${store.kind} store's scan returns no metadata, which retention needs`,
          "use a store whose scan items carry meta (every built-in store)",
        );
      if (!isRetentionExpired(item.meta, policy, now)) continue;
      if (options.dryRun) {
        report.sessions++;
        continue;
      }
      const logIds = await sessionLogIds(store, item.id);
      try {
        if (!(await store.delete(item.id, { expectedRevision: item.revision }))) continue;
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        if (error.currentRevision !== null) report.skipped++;
        continue;
      }
      report.sessions++;
      owners.add(item.meta.owner);
      for (const logId of logIds) if (await store.messages.deleteMessages(logId)) report.messageLogs++;
      // Its stream buffers: a built-in store's delete removed them already; a store whose delete
      // does not (its own implementation) loses them here.
      if (store.streams) await store.streams.deleteForSession(item.id);
      for (const buffer of options.streams ?? []) if (buffer !== store.streams) await buffer.deleteForSession(item.id);
    }
    cursor = page.cursor;
    if (page.items.length) report.cursor = page.items[page.items.length - 1].id;
    options.onProgress?.({ ...report });
  } while (cursor);
  // An interrupted run sweeps nothing: its re-run (or the owner's next purge) does. A blob left is
  // only space, never a reference lost.
  if (store.blobs)
    for (const owner of owners) {
      if (options.signal?.aborted) {
        report.aborted = true;
        break;
      }
      const swept = await sweepOwnerBlobs(store, owner, {
        ...(options.blobGraceMs !== undefined ? { graceMs: options.blobGraceMs } : {}),
        ...(options.streams ? { streams: options.streams } : {}),
      });
      report.blobs = (report.blobs ?? 0) + swept.blobs;
    }
  return report;
}
