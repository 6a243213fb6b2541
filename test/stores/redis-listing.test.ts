/**
 * Redis listing (#23) beyond the contract: the owner index is kept exact by save, delete, expiry
 * and purge, and on a cluster (owner index and session in different slots) a crash between the
 * steps of a write leaves a superset that `list` never shows wrongly and repairs (keys.ts).
 */
import { describe, expect, it } from "vitest";
import type { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { counterSession, redisBackend, redisClusterBackend, scaleOutBackends, serverUp, sleep } from "./helpers.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
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
}
