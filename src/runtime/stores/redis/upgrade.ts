/**
 * Moving a standalone Redis store from the key layout of format 1 (`P s:<id>`, `P idx`, ...: keys
 * right after the prefix, so the store `p:` also matched the keys of the store `p:tenant2:`) to
 * format 2 (`P{}s:<id>`, `P{}idx`, ...). Run by `store setup`, never at application start. Key
 * names come from keys.ts, the scripts MOVE_LEGACY and MERGE_LEGACY (their wrappers) from scripts.ts.
 *
 * Safe to interrupt and run again: every key moves by one atomic RENAME (TTL kept) that never
 * overwrites, and the shared keys that mark a format-1 store (`P idx`, `P rev`) go last, so a store
 * stays refused (`StoreNotSetUpError`) until the upgrade is complete. Nothing is deleted: a key
 * present in both layouts is left where it is and reported.
 */
import { quoted } from "../../core/json.js";
import { LEGACY_TAGS, legacyPattern, upgradedKey, type LegacyKeys } from "./keys.js";
import { runMergeLegacy, runMoveLegacy, type UpgradeScripts } from "./scripts.js";
import type { RedisClientLike } from "./types.js";

/** Every key matching `pattern` (one SCAN pass), page by page. */
async function eachKeyPage(c: RedisClientLike, pattern: string, fn: (keys: string[]) => Promise<void>): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await c.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await fn(keys);
  } while (cursor !== "0");
}

/**
 * Moves the format-1 keys of one store to format 2. `conflict(detail)` builds the error thrown
 * when the keys cannot be moved safely. Returns how many keys were moved.
 */
export async function upgradeLegacyLayout(
  c: UpgradeScripts,
  keys: LegacyKeys,
  conflict: (detail: string) => Error,
): Promise<number> {
  // First a pass that only looks: a key of the wrong type under `P s:` (say) belongs to another
  // store whose prefix starts with `P s:`; moving it would take that store's data.
  for (const [tag, type] of LEGACY_TAGS) {
    await eachKeyPage(c, legacyPattern(keys, tag), async (page) => {
      const types = await Promise.all(page.map((key) => c.type(key)));
      const bad = types.findIndex((t) => t !== type && t !== "none");
      if (bad >= 0) {
        throw conflict(
          `the key ${quoted(page[bad], 200)} holds a ${types[bad]}, where the earlier layout keeps a ${type}: another store's prefix starts with ${quoted(keys.from + tag, 200)}. Nothing was moved`,
        );
      }
    });
  }
  let moved = 0;
  const kept: string[] = [];
  for (const [tag] of LEGACY_TAGS) {
    await eachKeyPage(c, legacyPattern(keys, tag), async (page) => {
      // Each move is one atomic script on its own key: a page's moves may run side by side.
      const results = await Promise.all(page.map((key) => runMoveLegacy(c, key, upgradedKey(keys, key))));
      for (const [index, result] of results.entries()) {
        if (result === "moved") moved++;
        else if (result === "exists") kept.push(page[index]);
      }
    });
  }
  if (kept.length > 0) {
    throw conflict(
      `${kept.length} key(s) exist in both the earlier and the current layout, first ${quoted(kept[0], 200)} and ${quoted(upgradedKey(keys, kept[0]), 200)}; both were kept (${moved} other key(s) were moved). Keep one of each pair (DEL the other), then run setup again`,
    );
  }
  await runMergeLegacy(c, keys);
  return moved;
}
