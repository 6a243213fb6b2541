/**
 * The SQLite store's batch save (`SAVE_BATCH`, see ../batch-save.ts): a page of a bulk migration
 * written in one write transaction instead of one transaction per session, so the file pays one
 * commit per page. Each row is the very write `save` runs (the store's `saveWrite`), under its own
 * savepoint: a row the compare-and-swap or the owner rule refuses (or whose codec refuses it under
 * the lock) is rolled back alone, revision counter included, and reported with the error `save`
 * would have thrown; the other rows are committed with the batch. Anything else failing on a row
 * (a driver error) fails the whole transaction: nothing of the batch is written.
 */
import { StatebagError } from "../../core/errors.js";
import { type BatchSaveEntry, type BatchSaveResult, prepareSaves, refusedBefore } from "../batch-save.js";
import type { SqliteConnection, SqliteStatement } from "./driver.js";
import { TRANSACTION, type Statements } from "./sql.js";

/**
 * Saves `entries` as `save` would, one at a time, in the single write transaction `runWrite` opens
 * (retried as a whole when the lock is busy, like any write). `prepare` is `save` up to the lock.
 */
export async function saveRowsInOneTransaction(
  entries: readonly BatchSaveEntry[],
  prepare: (entry: BatchSaveEntry) => (s: Statements) => number,
  runWrite: (rows: (s: Statements, db: SqliteConnection) => BatchSaveResult[]) => Promise<BatchSaveResult[]>,
): Promise<BatchSaveResult[]> {
  // Checks, validation and serialization before taking the lock, as `save` does them.
  const prepared = prepareSaves(entries, prepare);
  if (prepared.every((row): row is { error: unknown } => !("write" in row))) return prepared.map(refusedBefore);
  return runWrite((s, db) => {
    const savepoint = rowStatements(db);
    // Built anew on every attempt: a busy lock retries the whole transaction.
    const results: BatchSaveResult[] = [];
    for (const row of prepared) {
      if (!("write" in row)) {
        results.push(refusedBefore(row));
        continue;
      }
      savepoint.open.run();
      let revision: number;
      try {
        revision = row.write(s);
      } catch (error) {
        // A refusal `save` reports (conflict, owner, codec): this row only. Anything else: the batch.
        if (!(error instanceof StatebagError)) throw error;
        savepoint.undo.run();
        savepoint.release.run();
        results.push({ ok: false, error });
        continue;
      }
      savepoint.release.run();
      results.push({ ok: true, revision });
    }
    return results;
  });
}

interface RowStatements {
  open: SqliteStatement<never>;
  release: SqliteStatement<never>;
  undo: SqliteStatement<never>;
}

/** The savepoint statements, prepared once per connection. */
const prepared = new WeakMap<SqliteConnection, RowStatements>();
function rowStatements(db: SqliteConnection): RowStatements {
  let statements = prepared.get(db);
  if (statements === undefined) {
    statements = {
      open: db.prepare<never>(TRANSACTION.rowSavepoint),
      release: db.prepare<never>(TRANSACTION.rowRelease),
      undo: db.prepare<never>(TRANSACTION.rowRollback),
    };
    prepared.set(db, statements);
  }
  return statements;
}
