/**
 * Child process for the warning test: uses the default SQLite store, then emits an unrelated
 * ExperimentalWarning, so the parent can check that only node:sqlite's own warning was dropped.
 *
 *   node --import tsx quiet-sqlite.ts <dbPath>
 */
import { openStore } from "../../../src/runtime/open-store/open-store.js";

const store = await openStore(`sqlite:${process.argv[2]}`);
await store.save({ id: "s", stateBag: {} }, { expectedRevision: null });
await store.close();
process.emitWarning("a different experimental feature", "ExperimentalWarning");
