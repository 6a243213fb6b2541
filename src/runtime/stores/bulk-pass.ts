/**
 * The loop both bulk rewrites share (`migrateStore` in migrate.ts, `migrateEncryption` in
 * encryption/migrate.ts): page through `scan({ includeText: true })` in id order from a resume
 * point, stop cleanly on a signal, and per row a compare-and-swap write that, when the
 * application changed the row meanwhile, re-reads it and tries again up to a limit.
 *
 * What each engine decides stays with it (what to load, what counts as done, how a failure is
 * reported); the paging, the resume cursor and the conflict-retry loop are here once.
 */
import { compareIds } from "./common.js";
import type { ScanItem, SessionStore } from "./types.js";

export interface BulkPassOptions {
  /** Sessions per scan page (checked by the caller). */
  batchSize: number;
  /** Start after this session id (a resumed run). */
  startAfter?: string;
  /** Stops before the next session. */
  signal?: AbortSignal;
}

/** Where a pass ended: the last session done (the resume point), and whether `signal` stopped it. */
export interface BulkPassEnd {
  cursor?: string;
  aborted: boolean;
}

/**
 * Visits every session after `startAfter`, in id order, one at a time. `visit` gets the scanned
 * item and the cursor of its page (to re-read the session from there). Memory: one page of texts.
 *
 * With `flush`, a visit may leave its session's write pending (a batch): `flush` finishes every
 * pending write and is awaited at the end of each page and before the pass stops on `signal`, so
 * the cursor returned still names a session whose write, and every earlier one's, is done.
 */
export async function eachScanned(
  store: SessionStore,
  options: BulkPassOptions,
  visit: (item: ScanItem, pageCursor: string | undefined) => Promise<void>,
  flush?: () => Promise<void>,
): Promise<BulkPassEnd> {
  let cursor = options.startAfter;
  let pageCursor = options.startAfter;
  for (;;) {
    const page = await store.scan({ cursor: pageCursor, limit: options.batchSize, includeText: true });
    for (const item of page.items) {
      if (options.signal?.aborted) {
        await flush?.();
        return { ...(cursor === undefined ? {} : { cursor }), aborted: true };
      }
      await visit(item, pageCursor);
      cursor = item.id;
    }
    await flush?.();
    if (page.cursor === undefined) break;
    pageCursor = page.cursor;
  }
  return { ...(cursor === undefined ? {} : { cursor }), aborted: false };
}

/** A session's current stored row, scanned again from its page (undefined: it is gone). */
export async function rescan(
  store: SessionStore,
  id: string,
  pageCursor: string | undefined,
  batchSize: number,
): Promise<ScanItem | undefined> {
  let cursor = pageCursor;
  for (;;) {
    const page = await store.scan({ cursor, limit: batchSize, includeText: true });
    for (const item of page.items) {
      const order = compareIds(item.id, id);
      if (order === 0) return item;
      if (order > 0) return undefined;
    }
    if (page.cursor === undefined) return undefined;
    cursor = page.cursor;
  }
}

/** One attempt's result: finished with a value, or the row changed meanwhile (re-read it and try again). */
export type BulkAttempt<T> = { kind: "done"; value: T } | { kind: "changed" };

/** How a row's attempts ended. `item` is the row as last read. */
export type BulkRetryOutcome<I, T> =
  | { kind: "done"; value: T }
  /** The row was deleted or expired meanwhile. */
  | { kind: "vanished" }
  /** The row changed on every attempt: left for the next run. */
  | { kind: "gave-up"; item: I; attempts: number };

export interface BulkRetryOptions<I> {
  /** Re-reads after the first change (default 10 in both engines). */
  maxRetries: number;
  /** The row as stored now (undefined: it is gone). */
  reread: (item: I) => Promise<I | undefined>;
  /** Called for every change seen (the reports count them as conflicts). */
  onChange: () => void;
}

/**
 * Runs `attempt` on a row; while it answers `changed` (a compare-and-swap write refused, or the
 * row read at another revision than scanned), counts the change, re-reads the row and tries
 * again, `maxRetries` times at most.
 */
export async function retryChanged<I, T>(
  first: I,
  options: BulkRetryOptions<I>,
  attempt: (item: I, attemptIndex: number) => Promise<BulkAttempt<T>>,
): Promise<BulkRetryOutcome<I, T>> {
  let item = first;
  for (let attemptIndex = 0; ; attemptIndex++) {
    const result = await attempt(item, attemptIndex);
    if (result.kind === "done") return result;
    options.onChange();
    if (attemptIndex >= options.maxRetries) return { kind: "gave-up", item, attempts: attemptIndex + 1 };
    const fresh = await options.reread(item);
    if (fresh === undefined) return { kind: "vanished" };
    item = fresh;
  }
}
