/**
 * The SQLite store's `list` reads its rows as arrays (`prepareTuples`: node:sqlite's
 * `setReturnArrays`, better-sqlite3's `raw`, or, on a Node without `setReturnArrays`, the row
 * objects' values) and builds the items from them. Every page must be what the memory store, the
 * reference filter, lists for the same saves at the same times: expired rows left out, label
 * filters, time bounds, both orders, cursors across many sessions updated in the same millisecond,
 * times across midnight (the formatter keeps the last day's text), every field of every item.
 * `get` reads its row the same way: it must load what the memory store loads.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createSessionData } from "../../src/index.js";
import { MemorySessionStore, SqliteSessionStore, type ListOptions, type SessionStore } from "../../src/stores.js";
import { betterSqliteInstalled } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-list-rows-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  vi.useRealTimers();
});

const DAY = 86_400_000;
/** Saves start 40 ms before a midnight, so the times listed fall on two days. */
const START = Date.UTC(2026, 10, 27) + DAY - 40;

/** The same saves, at the same (fake) times, on every store given. */
async function seed(stores: SessionStore[]): Promise<void> {
  let seed = 7;
  const random = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return Math.floor((seed / 2 ** 31) * n); // the high bits: an LCG's low bits repeat soon
  };
  const revisions = new Map<string, { revision: number; expiresAt: number }>();
  let clock = START;
  for (let step = 0; step < 260; step++) {
    // Often several saves in one millisecond: cursors must break ties by id.
    if (random(3) === 0) clock += 1 + random(30);
    vi.setSystemTime(clock);
    const id = `s-${random(120)}`;
    const owner = `o-${Number(id.slice(2)) % 3}`; // a session keeps its owner
    const labels = random(3) === 0 ? undefined : { team: `t${random(2)}`, ...(random(2) ? { kind: "chat" } : {}) };
    const title = random(4) === 0 ? undefined : `title ${step}`;
    const ttlMs = random(4) === 0 ? 1 + random(400) : undefined;
    const current = revisions.get(id);
    // An expired session is absent: saved again as new.
    const expectedRevision = current !== undefined && current.expiresAt > clock ? current.revision : null;
    const written: number[] = [];
    for (const store of stores) {
      const session = createSessionData({ id });
      written.push(
        await store.save(session, { expectedRevision, ...(ttlMs ? { ttlMs } : {}), meta: { owner, title, labels } }),
      );
    }
    expect(new Set(written).size).toBe(1); // the stores count revisions alike
    revisions.set(id, { revision: written[0], expiresAt: ttlMs ? clock + ttlMs : Number.POSITIVE_INFINITY });
  }
  // Some sessions have expired by now, some have not.
  vi.setSystemTime(clock + 200);
}

/** Every page of a listing, walked with its cursors. */
async function walk(store: SessionStore, options: ListOptions): Promise<unknown[]> {
  const pages: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ ...options, cursor });
    pages.push({ items: page.items, more: page.cursor !== undefined });
    cursor = page.cursor;
  } while (cursor !== undefined && pages.length < 200);
  return pages;
}

const QUERIES: ListOptions[] = [];
for (const owner of ["o-0", "o-1", "o-2", "nobody"])
  for (const limit of [1, 3, 7, 50])
    for (const order of ["updatedAt desc", "id"] as const) {
      QUERIES.push({ owner, limit, order });
      QUERIES.push({ owner, limit, order, labels: { team: "t1" } });
      QUERIES.push({ owner, limit, order, labels: { team: "t0", kind: "chat" } });
      QUERIES.push({ owner, limit, order, updatedBefore: new Date(START + 60).toISOString() });
      QUERIES.push({
        owner,
        limit,
        order,
        updatedAfter: new Date(START + 20).toISOString(),
        labels: { kind: "chat" },
      });
      QUERIES.push({
        owner,
        limit,
        order,
        updatedAfter: new Date(START + 10).toISOString(),
        updatedBefore: new Date(START + 300).toISOString(),
      });
    }

async function compareWithMemory(sqlite: SqliteSessionStore): Promise<number> {
  vi.useFakeTimers({ toFake: ["Date"] });
  const memory = new MemorySessionStore();
  await seed([memory, sqlite]);
  let items = 0;
  let expiring = 0;
  for (const query of QUERIES) {
    const want = await walk(memory, query);
    expect(await walk(sqlite, query), JSON.stringify(query)).toEqual(want);
    for (const page of want as { items: { ttlMs?: number }[] }[]) {
      items += page.items.length;
      expiring += page.items.filter((item) => item.ttlMs !== undefined).length;
    }
  }
  expect(expiring).toBeGreaterThan(0); // the data holds live expiring sessions, and expired ones (below)
  // `get` reads its row as an array too: the same session, revision and metadata, and nothing for an expired one.
  let found = 0;
  for (let n = 0; n < 120; n++) {
    const want = await memory.get(`s-${n}`);
    expect(await sqlite.get(`s-${n}`), `s-${n}`).toEqual(want);
    if (want !== undefined) found++;
  }
  expect(found).toBeGreaterThan(50);
  await memory.close();
  return items;
}

describe("SQLite list pages equal the memory store's", () => {
  const drivers = ["node:sqlite", ...(betterSqliteInstalled ? (["better-sqlite3"] as const) : [])] as const;
  for (const driver of drivers) {
    it(`${driver}: every page of every query, item for item`, async () => {
      const path = join(dir, `${driver.replace(":", "-")}.db`);
      const sqlite = new SqliteSessionStore({ path, driver });
      const items = await compareWithMemory(sqlite);
      expect(items).toBeGreaterThan(1000);
      // Expired rows are still stored (listing leaves them out; nothing purged them).
      const raw = new DatabaseSync(path, { readOnly: true });
      const expired = raw
        .prepare("SELECT count(*) AS n FROM statebag_sessions WHERE expires_at <= ?")
        .get(Date.now()) as { n: number };
      raw.close();
      expect(expired.n).toBeGreaterThan(0);
      await sqlite.close();
    });
  }

  it("node:sqlite without setReturnArrays (Node before 22.16): the rows' values, the same pages", async () => {
    const probe = new DatabaseSync(":memory:");
    const prototype = Object.getPrototypeOf(probe.prepare("SELECT 1")) as { setReturnArrays?: unknown };
    probe.close();
    const saved = Object.getOwnPropertyDescriptor(prototype, "setReturnArrays");
    expect(saved).toBeDefined(); // this Node has it: the test takes it away
    delete prototype.setReturnArrays;
    try {
      const sqlite = new SqliteSessionStore({ path: join(dir, "no-arrays.db") });
      expect(await compareWithMemory(sqlite)).toBeGreaterThan(1000);
      await sqlite.close();
    } finally {
      Object.defineProperty(prototype, "setReturnArrays", saved!);
    }
  });
});
