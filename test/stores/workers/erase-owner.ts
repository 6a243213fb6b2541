/**
 * Child process for the erasure crash test: erases one owner's sessions and reports its progress
 * to the parent (which kills it with SIGKILL part way).
 *
 *   node --import tsx erase-owner.ts <storeUrl> <owner>
 */
import { openStore } from "../../../src/runtime/open-store/open-store.js";

const [url, owner] = process.argv.slice(2);
const store = await openStore(url);
const receipt = await store.eraseOwner(owner, { onProgress: (p) => process.send?.(p) });
process.send?.({ done: receipt });
await store.close();
