/**
 * Child process for the concurrency test: applies `count` increments to one session's counter
 * through its own store connection (read, +1, compare-and-swap save; on conflict, reload and
 * retry up to `maxRetries` times, then report the increment as a conflict).
 *
 *   node --import tsx increment.ts <storeUrl> <sessionId> <count> <maxRetries>
 * Prints one JSON line: { saved, conflicts, gaveUp }.
 */
import { ConflictError } from "../../../src/runtime/stores/errors.js";
import { openStore } from "../../../src/runtime/open-store/open-store.js";

const [url, id, countText, retriesText] = process.argv.slice(2);
const count = Number(countText);
const maxRetries = Number(retriesText);

const store = await openStore(url);
// Warm up (connect, prepare), then wait for the parent's "go" so all processes start together.
await store.get(id);
if (process.send) {
  process.send("ready");
  await new Promise<void>((resolve) => process.once("message", () => resolve()));
}
let saved = 0;
let conflicts = 0;
let gaveUp = 0;
for (let i = 0; i < count; i++) {
  for (let attempt = 0; ; attempt++) {
    const loaded = await store.get(id);
    if (!loaded) throw new Error(`session ${id} vanished`);
    const counter = loaded.session.stateBag.counter as unknown as { value: number };
    counter.value += 1;
    try {
      await store.save(loaded.session, { expectedRevision: loaded.revision });
      saved++;
      break;
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      conflicts++;
      if (attempt >= maxRetries) {
        gaveUp++;
        break;
      }
      // A little jitter so the same processes do not keep colliding in lockstep.
      if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 10)));
    }
  }
}
await store.close();
process.stdout.write(JSON.stringify({ saved, conflicts, gaveUp }) + "\n");
process.disconnect?.();
