/**
 * Child process for the kill test: saves revisions of one big session in a loop, printing
 * "writing <counter>" just before each save and "saved <counter> <revision>" after it is acknowledged. The parent SIGKILLs it at a
 * random moment, most likely in the middle of a write.
 *
 *   node --import tsx slow-writer.ts <storeUrl> <sessionId> <payloadBytes>
 */
import { openStore } from "../../../src/runtime/open-store/open-store.js";

const [url, id, bytesText] = process.argv.slice(2);
const bytes = Number(bytesText);
const store = await openStore(url);
for (;;) {
  const loaded = await store.get(id);
  if (!loaded) throw new Error(`session ${id} vanished`);
  const value = (loaded.session.stateBag.counter as unknown as { value: number }).value + 1;
  // The payload encodes the counter, so a torn write would be detectable.
  loaded.session.stateBag.counter = { $type: "test.Counter", value, payload: String(value % 10).repeat(bytes) };
  process.stdout.write(`writing ${value}\n`);
  const revision = await store.save(loaded.session, { expectedRevision: loaded.revision });
  process.stdout.write(`saved ${value} ${revision}\n`);
}
