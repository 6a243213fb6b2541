/**
 * The PostgreSQL store's batch save (`SAVE_BATCH`, see ../batch-save.ts): a page of a bulk
 * migration written in one transaction on one connection, so the server flushes its log once per
 * page instead of once per session. Each row runs the very statements `save` runs (the store's
 * `saveWrite`): a compare-and-swap the stored revision refuses, or an owner rule, changes no row
 * (the update matches nothing) and is reported with the error `save` would have thrown, as is a
 * codec's refusal; the other rows are committed with the batch. A statement failing on a row (a
 * driver or server error) aborts the transaction: nothing of the batch is written.
 *
 * While the transaction is open, the rows it has updated stay locked: an application saving one of
 * them meanwhile waits for the commit (one page of statements), then finds the new revision and
 * gets its conflict as it would have a moment later.
 */
import { StatebagError } from "../../core/errors.js";
import { type BatchSaveEntry, type BatchSaveResult, prepareSaves, refusedBefore } from "../batch-save.js";
import type { PgPoolClient } from "./driver.js";
import { TRANSACTION } from "./sql.js";

/**
 * Saves `entries` as `save` would, one after the other, in one transaction on the connection
 * `runOnClient` checks out. `prepare` is `save` up to the connection.
 */
export async function saveRowsInOneTransaction(
  entries: readonly BatchSaveEntry[],
  prepare: (entry: BatchSaveEntry) => (c: PgPoolClient) => Promise<number>,
  runOnClient: (rows: (c: PgPoolClient) => Promise<BatchSaveResult[]>) => Promise<BatchSaveResult[]>,
): Promise<BatchSaveResult[]> {
  // Checks, validation and serialization before the connection, as `save` does them.
  const prepared = prepareSaves(entries, prepare);
  if (prepared.every((row): row is { error: unknown } => !("write" in row))) return prepared.map(refusedBefore);
  return runOnClient(async (c) => {
    await c.query(TRANSACTION.begin);
    try {
      const results: BatchSaveResult[] = [];
      for (const row of prepared) {
        if (!("write" in row)) {
          results.push(refusedBefore(row));
          continue;
        }
        try {
          results.push({ ok: true, revision: await row.write(c) });
        } catch (error) {
          // A refusal `save` reports (conflict, owner, codec; no row changed): this row only.
          // Anything else (a statement failed: the transaction is aborted): the batch.
          if (!(error instanceof StatebagError)) throw error;
          results.push({ ok: false, error });
        }
      }
      await c.query(TRANSACTION.commit);
      return results;
    } catch (error) {
      try {
        await c.query(TRANSACTION.rollback);
      } catch {}
      throw error;
    }
  });
}
