/**
 * Saving a batch of sessions in one unit of work, for bulk rewrites (`migrateStore`): a store that
 * can (SQLite: one write transaction, each row under its own savepoint; PostgreSQL: one
 * transaction on one connection) carries a `SAVE_BATCH` method; any other store, or a wrapped one,
 * is written one `save` at a time as before.
 *
 * The contract, what a test holds every implementation to (test/migrations/batch-save.test.ts):
 * - each entry is saved exactly as `store.save(entry.session, entry.options)` would save it on its
 *   own: the same checks, validation and serialization through the store's codec (with the same
 *   context: owner and the revision written), the same compare-and-swap on `expectedRevision`,
 *   the same owner rule, the same revision drawn;
 * - entries are independent: `results[i]` is the revision `save` would have returned, or the
 *   error it would have thrown (`ConflictError`, `SessionOwnerError`, a validation or codec
 *   error), and such an entry writes nothing while the others are written;
 * - the batch is all-or-nothing as a unit: when the unit itself fails (the store unavailable, a
 *   lock not taken in time, a driver error on a row, a process killed), the call rejects or never
 *   returns and nothing of the batch is written. A caller can then save the entries one at a time.
 * @internal
 */
import type { AgentSession } from "../core/session.js";
import type { SaveOptions, SessionStore } from "./types.js";

/** The property under which a store carries its batch save. */
export const SAVE_BATCH: unique symbol = Symbol.for("statebag.saveBatch") as never;

/** One session of a batch and the options its `save` would get. */
export interface BatchSaveEntry {
  session: AgentSession;
  options: SaveOptions;
}

/** What `save` would have returned (the new revision) or thrown, for one entry. */
export type BatchSaveResult = { ok: true; revision: number } | { ok: false; error: unknown };

/** A store's batch save: see the module comment. */
export type SaveBatch = (entries: readonly BatchSaveEntry[]) => Promise<BatchSaveResult[]>;

/** The store's batch save, or undefined when it has none (save one session at a time). */
export function saveBatchOf(store: SessionStore): SaveBatch | undefined {
  const method = (store as { [SAVE_BATCH]?: SaveBatch })[SAVE_BATCH];
  return typeof method === "function" ? (entries) => method.call(store, entries) : undefined;
}

/** One entry of a batch up to its write: the write to run, or what `save` would have thrown before it. */
export type PreparedSave<W> = { write: W } | { error: unknown };

/** Runs `save` up to the write (`prepare`: checks, validation, serialization) for every entry. */
export function prepareSaves<W>(
  entries: readonly BatchSaveEntry[],
  prepare: (entry: BatchSaveEntry) => W,
): PreparedSave<W>[] {
  return entries.map((entry) => {
    try {
      return { write: prepare(entry) };
    } catch (error) {
      return { error };
    }
  });
}

/** The result of an entry refused before its write. */
export function refusedBefore(row: { error: unknown }): BatchSaveResult {
  return { ok: false, error: row.error };
}
