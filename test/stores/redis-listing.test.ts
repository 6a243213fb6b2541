/**
 * Redis listing (#23) beyond the contract: the owner index is kept exact by save, delete, expiry
 * and purge, and on a cluster (owner index and session in different slots) a crash between the
 * steps of a write leaves a superset that `list` never shows wrongly and repairs (keys.ts).
 */
import { describe, expect, it } from "vitest";
import type { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { counterSession, redisBackend, redisClusterBackend, scaleOutBackends, serverUp, sleep } from "./helpers.js";
import type { ListItem, ListOptions, SessionStore } from "../../src/runtime/stores/types.js";
import type { ScriptedClient } from "../../src/runtime/stores/redis/scripts.js";

const backends = [
  ...(serverUp.redis ? [redisBackend()] : []),
  ...(scaleOutBackends.includes(redisClusterBackend) ? [redisClusterBackend] : []),
];

async function withStore(
  backend: (typeof backends)[number],
  fn: (store: RedisSessionStore) => Promise<void>,
): Promise<void> {
  const { url, cleanup } = await backend.location();
  const { openStore } = await import("../../src/runtime/open-store/open-store.js");
  const store = (await openStore(url)) as SessionStore as RedisSessionStore;
  try {
    await fn(store);
  } finally {
    await store.close();
    await cleanup();
  }
}

const raw = (store: RedisSessionStore) => store.call("test", true, async (c) => c);
const ids = async (store: RedisSessionStore, owner: string, order: "id" | "updatedAt desc" = "id") =>
  (await store.list({ owner, order })).items.map((i) => i.id);

for (const backend of backends) {
  describe(`${backend.name}: owner index`, () => {
    it("delete, expiry and purgeExpired leave no index entry behind", async () => {
      await withStore(backend, async (store) => {
        await store.save(counterSession("a"), { expectedRevision: null, meta: { owner: "alice" } });
        await store.save(counterSession("b"), { expectedRevision: null, ttlMs: 50, meta: { owner: "alice" } });
        await store.save(counterSession("c"), { expectedRevision: null, meta: { owner: "alice", labels: { k: "v" } } });
        expect(await ids(store, "alice")).toEqual(["a", "b", "c"]);
        await store.delete("c");
        await sleep(80);
        expect(await ids(store, "alice")).toEqual(["a"]);
        expect(await store.purgeExpired()).toBe(1);
        const c = await raw(store);
        const o = store.keys.owner("alice");
        expect(await c.hkeys(o.om)).toEqual(["a"]);
        expect(await (c as ScriptedClient & { zcard(k: string): Promise<number> }).zcard(o.ou)).toBe(1);
      });
    });

    it("a leftover entry (a crash between the steps) never shows another owner's session and is repaired", async () => {
      await withStore(backend, async (store) => {
        await store.save(counterSession("x"), { expectedRevision: null, meta: { owner: "alice" } });
        const c = await raw(store);
        const bob = store.keys.owner("bob");
        // A create of "x" for bob that lost to alice's and crashed before its abort: a pending candidate.
        await c.sbIndex(bob.ou, bob.oi, bob.om, "add", "x", Date.now(), "");
        expect(await ids(store, "bob")).toEqual([]);
        expect(await ids(store, "bob", "updatedAt desc")).toEqual([]);
        // A committed candidate of a session that is gone (the drop after a delete never ran) is dropped by the listing.
        await c.sbIndex(bob.ou, bob.oi, bob.om, "commit", "y", 1, 1000, "", "");
        expect(await ids(store, "bob")).toEqual([]);
        expect(await c.hget(bob.om, "y")).toBeNull();
        // A create that saved but crashed before its commit: listed (by id at once, newest first once repaired).
        const alice = store.keys.owner("alice");
        await c.sbIndex(alice.ou, alice.oi, alice.om, "add", "z", Date.now() - 5000, "");
        await store.save(counterSession("z"), { expectedRevision: null }); // unowned body write stands in for step 2 ...
        const k = store.keys.of("z");
        await c.hset(k.session, "o", "alice", "u", Date.now(), "c", Date.now());
        expect(await ids(store, "alice")).toEqual(["x", "z"]);
        expect((await ids(store, "alice", "updatedAt desc")).sort()).toEqual(["x", "z"]);
      });
    });
  });

  describe(`${backend.name}: a page with stale entries in the index`, () => {
    it("read in one call (standalone) equals the per-candidate reads: foreign, deleted, expired, pending and outdated entries", async () => {
      await withStore(backend, async (store) => {
        const c = (await raw(store)) as ScriptedClient & {
          dumpBuffer(key: string): Promise<Buffer | null>;
          restore(key: string, ttl: number, value: Buffer, replace: "REPLACE"): Promise<unknown>;
          hgetall(key: string): Promise<Record<string, string>>;
        };
        const alice = store.keys.owner("alice");
        const owned = (i: number) => `s${String(i).padStart(3, "0")}`;
        for (let i = 0; i < 40; i++)
          await store.save(counterSession(owned(i)), {
            expectedRevision: null,
            meta: { owner: "alice", labels: { k: i % 3 === 0 ? "a" : "b" } },
          });
        // Another owner's session with a committed entry in alice's index (as its own revision and time).
        await store.save(counterSession("f1"), { expectedRevision: null, meta: { owner: "bob", labels: { k: "a" } } });
        const foreign = (await store.get("f1"))!;
        await c.sbIndex(
          alice.ou,
          alice.oi,
          alice.om,
          "commit",
          "f1",
          foreign.revision,
          Date.parse(foreign.meta.updatedAt),
          '{"k":"a"}',
          "",
        );
        // Sessions gone without their drop (more than one call's 64 disagreeing entries), newest of all by time.
        const future = Date.now() + 60_000;
        for (let i = 0; i < 100; i++)
          await c.sbIndex(
            alice.ou,
            alice.oi,
            alice.om,
            "commit",
            `g${String(i).padStart(3, "0")}`,
            1,
            future + i,
            "",
            "",
          );
        // A create between its steps (a young pending candidate next to the committed one).
        await c.sbIndex(alice.ou, alice.oi, alice.om, "add", owned(5), future + 500, "");
        // Outdated entries: a session whose labels and one whose updatedAt changed behind the index.
        await c.hset(store.keys.of(owned(6)).session, "l", '{"k":"a"}');
        await c.hset(store.keys.of(owned(7)).session, "u", String(Date.now() + 1));
        // An expired session whose entry no sweep has dropped yet (no save after it).
        await store.save(counterSession("e1"), { expectedRevision: null, ttlMs: 30, meta: { owner: "alice" } });
        await sleep(60);

        const indexKeys = [alice.ou, alice.oi, alice.om];
        const snapshot = await Promise.all(indexKeys.map((key) => c.dumpBuffer(key)));
        const restore = () => Promise.all(indexKeys.map((key, i) => c.restore(key, 0, snapshot[i]!, "REPLACE")));
        /** The candidates as repaired, without their write times. */
        const entries = async () =>
          Object.fromEntries(
            Object.entries(await c.hgetall(alice.om)).map(([id, json]) => [
              id,
              (JSON.parse(json) as { w: number }[]).map(({ w: _w, ...rest }) => rest),
            ]),
          );
        const pages = async (options: ListOptions) => {
          const items: ListItem[] = [];
          let cursor: string | undefined;
          let calls = 0;
          do {
            const page = await store.list({ ...options, cursor });
            items.push(...page.items);
            cursor = page.cursor;
            calls++;
          } while (cursor !== undefined && calls < 100);
          return items;
        };
        const middle = (await store.get(owned(20)))!.meta.updatedAt;
        const variants: ListOptions[] = [
          { owner: "alice", order: "id" },
          { owner: "alice", order: "updatedAt desc" },
          { owner: "alice", order: "id", labels: { k: "a" } },
          { owner: "alice", order: "updatedAt desc", labels: { k: "b" } },
          { owner: "alice", order: "id", updatedAfter: middle },
          { owner: "alice", order: "updatedAt desc", updatedBefore: middle },
        ];
        for (const variant of variants) {
          for (const limit of [3, 50]) {
            const options = { ...variant, limit };
            store.listSessionsInline = true;
            const oneCall = await pages(options);
            const repairedOneCall = await entries();
            await restore();
            store.listSessionsInline = false;
            const perCandidate = await pages(options);
            const repairedPerCandidate = await entries();
            await restore();
            expect(oneCall, JSON.stringify(options)).toEqual(perCandidate);
            expect(repairedOneCall, JSON.stringify(options)).toEqual(repairedPerCandidate);
            // No item shows a session that is not alice's, nor one twice.
            const shown = oneCall.map((item) => item.id);
            expect(new Set(shown).size).toBe(shown.length);
            expect(shown.every((id) => id.startsWith("s"))).toBe(true);
            expect(oneCall.every((item) => item.meta?.owner === "alice")).toBe(true);
          }
        }
        store.listSessionsInline = true;
        // By id every live session of alice's shows, and nothing else; the stale entries are gone after.
        expect((await pages({ owner: "alice", order: "id", limit: 7 })).map((item) => item.id)).toEqual(
          Array.from({ length: 40 }, (_, i) => owned(i)),
        );
        expect(Object.keys(await entries()).sort()).toEqual(Array.from({ length: 40 }, (_, i) => owned(i)));
      });
    }, 120_000);
  });

  describe(`${backend.name}: the calls of a page`, () => {
    it("standalone: one script call per page; cluster: the index script, then one pipeline per node", async () => {
      await withStore(backend, async (store) => {
        for (let i = 0; i < 60; i++)
          await store.save(counterSession(`p${String(i).padStart(3, "0")}`), {
            expectedRevision: null,
            meta: { owner: "carol" },
          });
        const c = (await raw(store)) as unknown as Record<string, unknown>;
        const counts = { sbList: 0, sbMeta: 0, pipeline: 0 };
        const originals = Object.fromEntries(Object.keys(counts).map((name) => [name, c[name]]));
        for (const name of Object.keys(counts) as (keyof typeof counts)[])
          c[name] = (...args: unknown[]) => {
            counts[name]++;
            return (originals[name] as (...a: unknown[]) => unknown).apply(c, args);
          };
        try {
          const first = await store.list({ owner: "carol", limit: 50 });
          const second = await store.list({ owner: "carol", limit: 50, cursor: first.cursor });
          expect([...first.items, ...second.items].map((item) => item.id).sort()).toEqual(
            Array.from({ length: 60 }, (_, i) => `p${String(i).padStart(3, "0")}`),
          );
          expect(counts.sbList).toBe(2);
          if (backend.name === "redis") expect(counts).toEqual({ sbList: 2, sbMeta: 0, pipeline: 0 });
          // Three masters: the 51 + 10 candidates' reads go out as at most three pipelines per page.
          else {
            expect(counts.pipeline).toBeGreaterThan(0);
            expect(counts.pipeline).toBeLessThanOrEqual(6);
          }
        } finally {
          Object.assign(c, originals);
        }
      });
    });
  });
}
