/**
 * Child process for the kill-and-resume test: migrates every session of a store with the test
 * registry, printing one JSON line per session done (`{"done":n,"cursor":"id"}`) and the report at
 * the end (`{"report":{...}}`). The parent SIGKILLs it mid-run.
 *
 *   node --import tsx bulk-migrate.ts <storeUrl> <batchSize> <delayMs> [startAfter]
 *
 * `delayMs` pauses after each save (a slower store), so the kill lands mid-run, not after the end
 * (after a batch save, `delayMs` per session of the batch).
 */
import { openStore } from "../../../src/runtime/open-store/open-store.js";
import { SAVE_BATCH, type SaveBatch, saveBatchOf } from "../../../src/runtime/stores/batch-save.js";
import { migrateStore } from "../../../src/runtime/stores/migrate.js";
import { testCodec, testRegistry } from "../helpers.js";

const [url, batchText, delayText, startAfter] = process.argv.slice(2);
const delayMs = Number(delayText);
const store = await openStore(url, { codec: testCodec() });
if (delayMs > 0) {
  const save = store.save.bind(store);
  store.save = async (session, options) => {
    const revision = await save(session, options);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return revision;
  };
  // A store that saves a page in one batch (SQLite): the same pause per session, after the batch.
  const batch = saveBatchOf(store);
  if (batch)
    (store as unknown as Record<symbol, SaveBatch>)[SAVE_BATCH] = async (entries) => {
      const results = await batch(entries);
      await new Promise((resolve) => setTimeout(resolve, delayMs * entries.length));
      return results;
    };
}
const report = await migrateStore(store, {
  registry: testRegistry(),
  batchSize: Number(batchText),
  ...(startAfter ? { startAfter } : {}),
  onProgress: (done, _total, progress) =>
    process.stdout.write(JSON.stringify({ done, cursor: progress.cursor }) + "\n"),
});
await store.close();
process.stdout.write(JSON.stringify({ report }) + "\n");
