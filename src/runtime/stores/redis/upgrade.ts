/**
 * Moving a standalone Redis store from the key layout of format 1 (`P s:<id>`, `P idx`, ...: keys
 * right after the prefix, so the store `p:` also matched the keys of the store `p:tenant2:`) to
 * format 2 (`P{}s:<id>`, `P{}idx`, ...). Run by `store setup`, never at application start.
 *
 * Safe to interrupt and run again: every key moves by one atomic RENAME (TTL kept) that never
 * overwrites, and the shared keys that mark a format-1 store (`P idx`, `P rev`) go last, so a store
 * stays refused (`StoreNotSetUpError`) until the upgrade is complete. Nothing is deleted: a key
 * present in both layouts is left where it is and reported.
 */
import { quoted } from "../../core/json.js";
import type { RedisClientLike } from "./types.js";

/** Format-1 key tags before an id, with the type each key holds. */
export const LEGACY_TAGS = [
  ["s:", "hash"],
  ["ml:", "list"],
  ["mh:", "hash"],
  ["mo:", "set"],
] as const;

/** KEYS: from, to. Returns 1 moved, 0 `to` exists (left alone), 2 `from` is gone (expired meanwhile). */
export const MOVE_LEGACY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 2 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('RENAME', KEYS[1], KEYS[2])
return 1
`;

/**
 * KEYS: old idx, old exp, old rev, new idx, new exp, new rev. Merges the index sets (an expiry keeps
 * the later time) and keeps the larger revision counter, so revisions still only grow; then drops
 * the old keys, which is what marks the store as format 2.
 */
export const MERGE_LEGACY = `
for i = 1, 2 do
  if redis.call('TYPE', KEYS[i]).ok == 'zset' then
    redis.call('ZUNIONSTORE', KEYS[i + 3], 2, KEYS[i + 3], KEYS[i], 'AGGREGATE', 'MAX')
    redis.call('DEL', KEYS[i])
  end
end
if redis.call('TYPE', KEYS[3]).ok == 'string' then
  local old = tonumber(redis.call('GET', KEYS[3])) or 0
  local cur = tonumber(redis.call('GET', KEYS[6]) or '0') or 0
  if old > cur then redis.call('SET', KEYS[6], old) end
  redis.call('DEL', KEYS[3])
end
return 1
`;

export interface UpgradeClient extends RedisClientLike {
  sbMoveLegacy(from: string, to: string): Promise<number>;
  sbMergeLegacy(...keys: string[]): Promise<number>;
}

export interface LegacyKeys {
  /** The store's prefix `P` (format-1 keys start right after it). */
  from: string;
  /** The format-2 key root, `P{}`. */
  to: string;
  idx: string;
  exp: string;
  rev: string;
  newIdx: string;
  newExp: string;
  newRev: string;
}

/** Every key matching `pattern` (one SCAN pass), page by page. */
async function eachKeyPage(c: RedisClientLike, pattern: string, fn: (keys: string[]) => Promise<void>): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await c.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await fn(keys);
  } while (cursor !== "0");
}

export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * Moves the format-1 keys of one store to format 2. `conflict(detail)` builds the error thrown
 * when the keys cannot be moved safely. Returns how many keys were moved.
 */
export async function upgradeLegacyLayout(c: UpgradeClient, keys: LegacyKeys, conflict: (detail: string) => Error): Promise<number> {
  // First a pass that only looks: a key of the wrong type under `P s:` (say) belongs to another
  // store whose prefix starts with `P s:`; moving it would take that store's data.
  for (const [tag, type] of LEGACY_TAGS) {
    await eachKeyPage(c, `${escapeGlob(keys.from + tag)}*`, async (page) => {
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
    await eachKeyPage(c, `${escapeGlob(keys.from + tag)}*`, async (page) => {
      // Each move is one atomic script on its own key: a page's moves may run side by side.
      const results = await Promise.all(page.map((key) => c.sbMoveLegacy(key, keys.to + key.slice(keys.from.length))));
      for (const [i, result] of results.entries()) {
        if (result === 1) moved++;
        else if (result === 0) kept.push(page[i]);
      }
    });
  }
  if (kept.length > 0) {
    throw conflict(
      `${kept.length} key(s) exist in both the earlier and the current layout, first ${quoted(kept[0], 200)} and ${quoted(keys.to + kept[0].slice(keys.from.length), 200)}; both were kept (${moved} other key(s) were moved). Keep one of each pair (DEL the other), then run setup again`,
    );
  }
  await c.sbMergeLegacy(keys.idx, keys.exp, keys.rev, keys.newIdx, keys.newExp, keys.newRev);
  return moved;
}
