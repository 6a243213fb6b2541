/**
 * Redis stores whose prefixes start one another (`p:` and `p:tenant2:`, `p:` and `p:s:`) are
 * isolated: no operation of one, scan-based or not, reads, lists, purges, migrates or deletes the
 * other's keys, on a standalone server and on a Redis Cluster. The layout of earlier releases
 * (format 1) is refused until `store setup` moves it, which keeps every session, revision, TTL and
 * message log, and never takes another store's keys.
 */
import { createRequire } from "node:module";
import type { Redis as RedisClient } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { StoreKeyConflictError, StoreNotSetUpError } from "../../src/runtime/stores/errors.js";
import { migrateStore } from "../../src/runtime/stores/migrate.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import {
  counterOf,
  counterSession,
  REDIS_URL,
  redisCluster,
  redisClusterBackend,
  scaleOutBackends,
  serverUp,
  sleep,
  uniqueName,
} from "./helpers.js";

const require = createRequire(import.meta.url);
const { Redis } = require("ioredis") as { Redis: new (url: string) => RedisClient };
const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

interface Server {
  /** Store URL without options. */
  url: string;
  /** Raw clients, one per node that holds keys. */
  nodes: RedisClient[];
}

/** Every key under `pattern` on every node, with its value, sorted: what "untouched" is compared by. */
async function snapshot(server: Server, pattern: string): Promise<string[]> {
  const out: string[] = [];
  for (const node of server.nodes) {
    for (const key of await node.keys(pattern)) {
      const type = await node.type(key);
      const value =
        type === "hash"
          ? await node.hgetall(key)
          : type === "zset"
            ? await node.zrange(key, 0, -1, "WITHSCORES")
            : type === "list"
              ? await node.lrange(key, 0, -1)
              : type === "set"
                ? (await node.smembers(key)).sort()
                : await node.get(key);
      out.push(`${key} ${type} ${JSON.stringify(value)}`);
    }
  }
  return out.sort();
}

/** The isolation scenario, run on a standalone server and on a cluster. */
async function isolation(server: Server): Promise<void> {
  const base = `sbtest:${uniqueName()}:`;
  const open = async (prefix: string) =>
    (await openStore(
      `${server.url}${server.url.includes("?") ? "&" : "?"}prefix=${encodeURIComponent(prefix)}`,
    )) as RedisSessionStore;
  const outer = await open(`${base}p:`);
  // One inner store per way a prefix can start with another's: any text, and the earlier layout's tags.
  const inners = await Promise.all([`${base}p:tenant2:`, `${base}p:s:`, `${base}p:ml:`].map(open));
  try {
    for (const inner of inners) {
      await inner.setup();
      await inner.save(counterSession("t1", 1), { expectedRevision: null });
      await inner.save(counterSession("gone", 2), { expectedRevision: null, ttlMs: 50 });
      await inner.messages.appendMessages("t1", [user("inner")], { operationId: "op-1" });
    }
    await outer.setup();
    await outer.save(counterSession("o1", 10), { expectedRevision: null });
    await outer.save(counterSession("o-gone", 11), { expectedRevision: null, ttlMs: 50 });
    await sleep(150); // both stores now hold an expired session in their index
    const before = await snapshot(server, `${base}p:?*`);
    const innerKeys = (all: string[]) =>
      all.filter((line) => !line.startsWith(`${outer.prefix}{`) && !line.startsWith(`${outer.prefix}meta `));
    expect(innerKeys(before).length).toBeGreaterThan(0);

    // Ids that would name the inner stores' keys in a layout without a terminator.
    expect(await outer.get("tenant2:s:t1")).toBeUndefined();
    expect(await outer.get("s:t1")).toBeUndefined();
    expect(await outer.messages.readMessages("t1")).toEqual({ messages: [], version: 0 });

    expect((await outer.scan({ includeText: true })).items.map((i) => i.id)).toEqual(["o1"]);
    expect(await outer.purgeExpired()).toBe(1);
    const report = await migrateStore(outer, { batchSize: 1 });
    expect(report.scanned).toBe(1);
    expect(report.failedCount).toBe(0);
    expect(innerKeys(await snapshot(server, `${base}p:?*`))).toEqual(innerKeys(before));

    expect(await outer.deleteAll()).toBeGreaterThan(0);
    const after = await snapshot(server, `${base}p:?*`);
    expect(after).toEqual(innerKeys(before));
    for (const inner of inners) {
      expect(counterOf((await inner.get("t1"))!.session)).toBe(1);
      expect((await inner.messages.readMessages("t1")).messages).toEqual([user("inner")]);
      expect((await inner.scan()).items.map((i) => i.id)).toEqual(["t1"]);
    }
    // And the other way round: an inner store's deleteAll leaves the outer one alone.
    await outer.save(counterSession("o2"), { expectedRevision: null });
    await inners[0].deleteAll();
    expect(counterOf((await outer.get("o2"))!.session)).toBe(0);
    expect((await inners[1].scan()).items.map((i) => i.id)).toEqual(["t1"]);
  } finally {
    for (const store of [outer, ...inners]) {
      await store.deleteAll();
      await store.close();
    }
  }
}

describe.skipIf(!serverUp.redis)("Redis prefixes that start one another (standalone)", () => {
  const raw = new Redis(REDIS_URL);
  afterAll(() => raw.disconnect());

  it("no operation of one store reads, scans, purges, migrates or deletes the other's keys", async () => {
    await isolation({ url: REDIS_URL, nodes: [raw] });
  });

  it("a prefix containing {} is refused (it ends the prefix in every key)", () => {
    let error: unknown;
    try {
      new RedisSessionStore({ url: REDIS_URL, prefix: "app{}x:" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain('"app{}x:"');
    expect(() => new RedisSessionStore({ url: REDIS_URL, prefix: "app{x}:" })).not.toThrow();
  });

  it("a key of another type where the store keeps a session is a typed error, not a raw WRONGTYPE", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const store = new RedisSessionStore({ url: REDIS_URL, prefix });
    try {
      await raw.set(`${prefix}{}s:w`, "written by another program");
      const error = await failure(store.get("w"));
      expect(error).toBeInstanceOf(StoreKeyConflictError);
      expect(error.message).toMatch(/another type of value/);
      await expect(store.save(counterSession("w"), { expectedRevision: null })).rejects.toBeInstanceOf(
        StoreKeyConflictError,
      );
    } finally {
      await store.deleteAll();
      await store.close();
    }
  });
});

describe.skipIf(!serverUp.redis)("Redis data of earlier releases (format 1)", () => {
  const raw = new Redis(REDIS_URL);
  afterAll(() => raw.disconnect());

  /** Writes what a store of format 1 left under `p`: a session with a TTL, one without, a message log. */
  async function writeFormat1(p: string): Promise<void> {
    await raw.hset(`${p}s:legacy`, "r", "7", "d", JSON.stringify(counterSession("legacy", 3)));
    await raw.hset(`${p}s:ttl`, "r", "6", "d", JSON.stringify(counterSession("ttl", 2)));
    await raw.pexpire(`${p}s:ttl`, 600_000);
    await raw.zadd(`${p}idx`, 0, "legacy", 0, "ttl");
    await raw.zadd(`${p}exp`, Date.now() + 600_000, "ttl");
    await raw.set(`${p}rev`, "9");
    await raw.rpush(`${p}ml:legacy`, JSON.stringify(user("hi")));
    await raw.hset(`${p}mh:legacy`, "v", "5");
    await raw.sadd(`${p}mo:legacy`, "op-1");
    await raw.hset(`${p}meta`, "format", "1");
  }

  async function cleanup(...patterns: string[]): Promise<void> {
    for (const pattern of patterns) {
      const keys = await raw.keys(pattern);
      if (keys.length) await raw.del(...keys);
    }
  }

  it("is refused until store setup moves it; setup keeps sessions, revisions, TTLs and logs, and only this store's keys", async () => {
    const base = `sbtest:${uniqueName()}:`;
    const p = `${base}p:`;
    const store = new RedisSessionStore({ url: REDIS_URL, prefix: p });
    try {
      await writeFormat1(p);
      await writeFormat1(`${p}tenant2:`); // a neighbour of format 1 whose prefix starts with this one
      const neighbour = await snapshot({ url: REDIS_URL, nodes: [raw] }, `${p}tenant2:*`);
      const error = await failure(store.get("legacy"));
      expect(error).toBeInstanceOf(StoreNotSetUpError);
      expect(error.message).toMatch(/key layout of earlier statebag releases/);
      expect((error as StoreNotSetUpError).hint).toMatch(/statebag store setup --store/);
      await expect(store.save(counterSession("new"), { expectedRevision: null })).rejects.toBeInstanceOf(
        StoreNotSetUpError,
      );
      expect(await raw.exists(`${p}{}s:new`, `${p}s:new`)).toBe(0);

      expect(await store.setup()).toEqual({ version: 3, changed: true });
      const loaded = await store.get("legacy");
      expect(loaded?.revision).toBe(7);
      expect(counterOf(loaded!.session)).toBe(3);
      expect(await store.messages.readMessages("legacy")).toEqual({ messages: [user("hi")], version: 5 });
      expect(await store.messages.appendMessages("legacy", [user("again")], { operationId: "op-1" })).toEqual({
        applied: false,
        version: 5,
      });
      const page = await store.scan({ includeText: true });
      expect(page.items.map((i) => i.id)).toEqual(["legacy", "ttl"]);
      expect(page.items[1].ttlMs).toBeGreaterThan(0);
      // The revision counter moved too: revisions keep growing.
      expect(await store.save(counterSession("legacy", 4), { expectedRevision: 7 })).toBe(10);
      expect(await raw.keys(`${p}[sm]*`)).toEqual([`${p}meta`]);
      expect(await raw.exists(`${p}idx`, `${p}rev`, `${p}exp`)).toBe(0);
      expect(await raw.hget(`${p}meta`, "format")).toBe("3");
      expect(await snapshot({ url: REDIS_URL, nodes: [raw] }, `${p}tenant2:*`)).toEqual(neighbour);
      expect(await store.setup()).toEqual({ version: 3, changed: false });
    } finally {
      await store.close();
      await cleanup(`${base}*`);
    }
  });

  it("setup moves nothing when a key under the prefix belongs to another store, and keeps both copies of a key in both layouts", async () => {
    const base = `sbtest:${uniqueName()}:`;
    const p = `${base}p:`;
    try {
      await writeFormat1(p);
      await writeFormat1(`${p}s:inner:`); // its keys lie where `p:` keeps sessions
      const before = await snapshot({ url: REDIS_URL, nodes: [raw] }, `${base}*`);
      const store = new RedisSessionStore({ url: REDIS_URL, prefix: p });
      const error = await failure(store.setup());
      expect(error).toBeInstanceOf(StoreKeyConflictError);
      expect(error.message).toMatch(/Nothing was moved/);
      expect(await snapshot({ url: REDIS_URL, nodes: [raw] }, `${base}*`)).toEqual(before);
      await store.close();

      await cleanup(`${p}s:inner:*`);
      await raw.hset(`${p}{}s:legacy`, "r", "12", "d", JSON.stringify(counterSession("legacy", 5)));
      const again = new RedisSessionStore({ url: REDIS_URL, prefix: p });
      const clash = await failure(again.setup());
      expect(clash).toBeInstanceOf(StoreKeyConflictError);
      expect(clash.message).toMatch(/exist in both the earlier and the current layout/);
      expect(await raw.hget(`${p}s:legacy`, "r")).toBe("7");
      expect(await raw.hget(`${p}{}s:legacy`, "r")).toBe("12");
      // Still refused (the format-1 index is still there), so nothing is read half-moved.
      await expect(again.get("ttl")).rejects.toBeInstanceOf(StoreNotSetUpError);
      await raw.del(`${p}s:legacy`);
      expect((await again.setup()).changed).toBe(true);
      expect((await again.get("legacy"))?.revision).toBe(12);
      expect((await again.get("ttl"))?.revision).toBe(6);
      await again.close();
    } finally {
      await cleanup(`${base}*`);
    }
  });

  it("a store whose prefix lies inside a format-1 store's keys is refused with a typed error", async () => {
    const base = `sbtest:${uniqueName()}:`;
    const inner = new RedisSessionStore({ url: REDIS_URL, prefix: `${base}a:s:tenant:` });
    try {
      await raw.zadd(`${base}a:idx`, 0, "s1");
      const error = await failure(inner.get("x"));
      expect(error).toBeInstanceOf(StoreKeyConflictError);
      expect(error.message).toContain(`"${base}a:"`);
      expect(error.message).toMatch(/store setup/);
      await expect(inner.setup()).rejects.toBeInstanceOf(StoreKeyConflictError);
    } finally {
      await inner.close();
      await cleanup(`${base}*`);
    }
  });
});

describe.skipIf(!scaleOutBackends.includes(redisClusterBackend))(
  "Redis prefixes that start one another (cluster)",
  () => {
    let server: Server;
    beforeAll(async () => {
      const cluster = await redisCluster.acquire();
      server = { url: cluster.url, nodes: cluster.ports.map((port) => new Redis(`redis://127.0.0.1:${port}`)) };
    });
    afterAll(async () => {
      for (const node of server?.nodes ?? []) node.disconnect();
      await redisCluster.release();
    });

    it("no operation of one store reads, scans, purges, migrates or deletes the other's keys", async () => {
      await isolation(server);
    });
  },
);
