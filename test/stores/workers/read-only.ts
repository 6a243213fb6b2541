/**
 * Child process for the read-only test (run as an unprivileged user on a read-only directory):
 * opens the store read-only, reads what is there, tries one write, and prints the outcome as JSON.
 *
 *   node --import tsx read-only.ts <storeUrl> <sessionId>
 */
import { openStore } from "../../../src/runtime/open-store/open-store.js";

const [url, id] = process.argv.slice(2);
const store = await openStore(url);
const loaded = await store.get(id);
const page = await store.scan();
const messages = await store.messages.getMessages(id);
let writeError: string | undefined;
try {
  await store.save(loaded!.session, { expectedRevision: loaded!.revision });
} catch (error) {
  writeError = (error as { code?: string }).code;
}
await store.close();
process.stdout.write(
  JSON.stringify({
    revision: loaded?.revision,
    ids: page.items.map((i) => i.id),
    messages: messages.length,
    writeError,
  }) + "\n",
);
