/**
 * Redis Cluster: URLs, the hash-tagged layout (one slot per id, spread over every master), the
 * merged scan, the standalone layout (format 2, under P{}), and failures (a node down, the wrong kind of
 * server). The conformance suite runs on the same local cluster (conformance.test.ts).
 */
import { createRequire } from "node:module";
import type { Redis as RedisClient } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { compareIds } from "../../src/runtime/stores/common.js";
import { ConflictError, StoreNotSetUpError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { REDIS_CLUSTER_BUCKETS } from "../../src/runtime/stores/redis/keys.js";
import { parseRedisStoreUrl, RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
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
import { startRedisCluster, type RedisClusterHandle } from "./servers.js";

const require = createRequire(import.meta.url);
const { Redis } = require("ioredis") as { Redis: new (url: string) => RedisClient };
const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });

describe("Redis store URLs", () => {
  it("takes a list of cluster nodes, or one node with ?cluster=true", () => {
    expect(parseRedisStoreUrl("redis+cluster://u:p%40ss@10.0.0.1:7000,10.0.0.2,[::1]:7002/?prefix=app:")).toEqual({
      url: "redis://u:p%40ss@10.0.0.1:7000/",
      params: { prefix: "app:" },
      cluster: [
        { host: "10.0.0.1", port: 7000 },
        { host: "10.0.0.2", port: 6379 },
        { host: "::1", port: 7002 },
      ],
    });
    expect(parseRedisStoreUrl("rediss://h:7000?cluster=true").cluster).toEqual([{ host: "h", port: 7000 }]);
    expect(parseRedisStoreUrl("rediss+cluster://h:7000").url).toBe("rediss://h:7000");
    expect(parseRedisStoreUrl("redis://h:7000?cluster=false").cluster).toBeUndefined();
    expect(parseRedisStoreUrl("redis://h:7000/3").cluster).toBeUndefined();
  });

  it("refuses malformed cluster URLs with the password hidden", () => {
    const refused = (url: string, pattern: RegExp) => {
      let error: unknown;
      try {
        parseRedisStoreUrl(url);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(pattern);
      expect((error as Error).message).not.toContain("sekret");
      expect((error as ConfigurationError).hint).toBeTruthy();
    };
    refused("redis+cluster://:sekret@h1:7000,,h3:7002", /cluster node "" that is not host:port/);
    refused("redis+cluster://:sekret@h1:7000,h2:99999", /cluster node "h2:99999"/);
    refused("redis+cluster://:sekret@h1:7000,h2/x:1", /not host:port|selects a database|is not a database number/);
    refused("redis://:sekret@h1:7000/2?cluster=true", /database other than 0/);
    refused("redis+cluster://:sekret@h1:7000?db=1", /database other than 0/);
    refused("redis://:sekret@h1:7000?cluster=yes", /\?cluster= .* must be true or false/);
    refused("redis+cluster://:sekret@h1:7000?clustr=true", /unknown option \?clustr=/);
  });

  it("refuses a cluster prefix with braces (they would become the hash tag)", () => {
    expect(() => new RedisSessionStore({ url: "redis://h:7000", cluster: true, prefix: "app{1}:" })).toThrow(
      /contains "\{" or "\}"/,
    );
    expect(() => new RedisSessionStore({ url: "redis://h:7000", prefix: "app{1}:" })).not.toThrow();
  });
});

describe.skipIf(!scaleOutBackends.includes(redisClusterBackend))("Redis Cluster store", () => {
  let cluster: RedisClusterHandle;
  const nodes: RedisClient[] = [];
  beforeAll(async () => {
    cluster = await redisCluster.acquire();
    for (const port of cluster.ports) nodes.push(new Redis(`redis://127.0.0.1:${port}`));
  });
  afterAll(async () => {
    for (const node of nodes) node.disconnect();
    await redisCluster.release();
  });

  /** Keys under a prefix on each node (every node, so nothing is missed). */
  async function keysPerNode(prefix: string): Promise<string[][]> {
    return Promise.all(nodes.map((node) => node.keys(`${prefix}*`)));
  }

  async function withStore<T>(fn: (store: RedisSessionStore, prefix: string) => Promise<T>): Promise<T> {
    const prefix = `sbtest:${uniqueName()}:`;
    const store = (await openStore(`${cluster.url}?prefix=${encodeURIComponent(prefix)}`)) as RedisSessionStore;
    try {
      return await fn(store, prefix);
    } finally {
      await store.deleteAll();
      await store.close();
    }
  }

  it("keeps a session, its revision counter, its index entries and its message log in one slot", async () => {
    await withStore(async (store, prefix) => {
      expect(store.cluster).toBe(true);
      await store.setup();
      const id = "user-42";
      const r1 = await store.save(counterSession(id, 1), { expectedRevision: null, ttlMs: 60_000 });
      await store.messages.appendMessages(id, [user("a")], { operationId: "op-1" });
      const k = store.keys.of(id);
      expect(k.session).toBe(`${prefix}{${k.prefix.slice(prefix.length + 1, -1)}}s:${id}`);
      const all = (await keysPerNode(prefix)).flat().sort();
      expect(all).toEqual([k.exp, k.idx, k.hdr, k.list, k.ops, k.rev, k.session, `${prefix}meta`].sort());
      const slots = new Set(
        await Promise.all(
          [k.session, k.rev, k.idx, k.exp, k.list, k.hdr, k.ops].map((key) => nodes[0].cluster("KEYSLOT", key)),
        ),
      );
      expect(slots.size).toBe(1);
      // Revisions come from the bucket's counter, shared with the log; they keep increasing.
      const r2 = await store.save(counterSession(id, 2), { expectedRevision: r1 });
      expect(r2).toBeGreaterThan((await store.messages.readMessages(id)).version);
    });
  });

  it("a stream id taken by another session's open still on its way is refused; a leftover locator is taken over", async () => {
    await withStore(async (store, prefix) => {
      await store.setup();
      // Two sessions whose streams live in different slots (the race only exists across slots).
      const mine = "session-mine";
      let theirs = "session-theirs-0";
      for (let i = 1; store.keys.stream(theirs, "s").meta === store.keys.stream(mine, "s").meta; i++)
        theirs = `session-theirs-${i}`;
      const client = (store as unknown as { connector: { client: { set(...args: unknown[]): Promise<unknown> } } })
        .connector.client;
      const other = (await openStore(`${cluster.url}?prefix=${encodeURIComponent(prefix)}`)) as RedisSessionStore;
      try {
        // Their open has taken the id (its locator, SET NX, landed first) and its stream is still
        // on its way to its own node when ours looks at the holder.
        await client.set(store.keys.streamLocator("race"), theirs, "PX", 60_000);
        const ours = store.streams.open("race", { sessionId: mine, leaseMs: 30_000, chunks: ["intruder"] }).then(
          () => undefined,
          (error: unknown) => error,
        );
        await sleep(10);
        await other.streams.open("race", { sessionId: theirs, leaseMs: 30_000, chunks: ["first"] });
        expect(await ours).toBeInstanceOf(ConflictError);
        expect(await store.streams.deleteForSession(mine)).toBe(0);
        const read = await store.streams.read("race", { from: 0 });
        expect(read?.info.sessionId).toBe(theirs);
        expect(read?.chunks).toEqual(["first"]);

        // A locator whose stream never comes (left by an expired stream): the id is taken over.
        await client.set(store.keys.streamLocator("left"), theirs, "PX", 60_000);
        await store.streams.open("left", { sessionId: mine, leaseMs: 30_000, chunks: ["x"] });
        const found = await other.streams.read("left", { from: 0 });
        expect(found?.info.sessionId).toBe(mine);
        expect(found?.chunks).toEqual(["x"]);
      } finally {
        await other.close();
      }
    });
  });

  it("spreads ids over every master, and scan visits them all in byte order, page by page", async () => {
    await withStore(async (store, prefix) => {
      const ids = Array.from({ length: 120 }, (_, i) => `u-${i}-${["é", "😀", "Z"][i % 3]}`);
      await Promise.all(ids.map((id, i) => store.save(counterSession(id, i), { expectedRevision: null })));
      const perNode = await keysPerNode(prefix);
      for (const keys of perNode) expect(keys.length).toBeGreaterThan(10);
      const seen: string[] = [];
      let pages = 0;
      for (let cursor: string | undefined, first = true; first || cursor; first = false) {
        const page = await store.scan({ cursor, limit: 7, includeText: pages % 2 === 0 });
        expect(page.items.length).toBeLessThanOrEqual(7);
        for (const item of page.items) expect(item.text === undefined).toBe(pages % 2 === 1);
        seen.push(...page.items.map((i) => i.id));
        cursor = page.cursor;
        pages++;
      }
      expect(seen).toEqual([...ids].sort(compareIds));
      expect(pages).toBe(Math.ceil(ids.length / 7));
    });
  });

  it("merges exactly when one bucket holds far more than its share of a page", async () => {
    await withStore(async (store) => {
      // 40 ids in one bucket (each bucket is first asked for 4) and 20 spread elsewhere.
      const crowded = store.keys.of("seed").prefix;
      const same: string[] = [];
      for (let i = 0; same.length < 40; i++) if (store.keys.of(`c-${i}`).prefix === crowded) same.push(`c-${i}`);
      const spread = Array.from({ length: 20 }, (_, i) => `c-x${i}`).filter(
        (id) => store.keys.of(id).prefix !== crowded,
      );
      const ids = [...same, ...spread];
      for (const id of ids) await store.save(counterSession(id), { expectedRevision: null });
      const first = await store.scan({ limit: 30 });
      const sorted = [...ids].sort(compareIds);
      expect(first.items.map((i) => i.id)).toEqual(sorted.slice(0, 30));
      const rest = await store.scan({ cursor: first.cursor, limit: 1000 });
      expect(rest.items.map((i) => i.id)).toEqual(sorted.slice(30));
      expect(rest.cursor).toBeUndefined();
      expect(REDIS_CLUSTER_BUCKETS).toBe(1024);
    });
  });

  it("drops expired sessions from every bucket's index (purgeExpired, scan)", async () => {
    await withStore(async (store, prefix) => {
      const ids = Array.from({ length: 12 }, (_, i) => `ttl-${i}`);
      for (const id of ids) await store.save(counterSession(id), { expectedRevision: null, ttlMs: 100 });
      await store.save(counterSession("kept"), { expectedRevision: null });
      await new Promise((r) => setTimeout(r, 250));
      expect(await store.purgeExpired()).toBe(12);
      expect((await store.scan({ includeText: true })).items.map((i) => i.id)).toEqual(["kept"]);
      const left = (await keysPerNode(prefix)).flat();
      expect(left.filter((k) => k.endsWith("}idx"))).toEqual([store.keys.of("kept").idx]);
      expect(left.filter((k) => k.endsWith("}exp"))).toEqual([]);
    });
  });

  it("refuses a prefix that holds keys of the standalone layout (imported key by key)", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const { url, cluster: seeds } = parseRedisStoreUrl(cluster.url);
    const store = new RedisSessionStore({ url, cluster: seeds, prefix });
    try {
      // What `redis-cli --cluster import` of a standalone store would leave: P idx, P s:<id>, ...
      const anyNode = new (require("ioredis").Cluster)(cluster.ports.map((port) => ({ host: "127.0.0.1", port })));
      await anyNode.zadd(`${prefix}idx`, 0, "old");
      anyNode.disconnect();
      const error = await store.get("old").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreNotSetUpError);
      expect((error as StoreNotSetUpError).message).toContain("standalone layout");
      expect((error as StoreNotSetUpError).hint).toMatch(/copy the sessions/);
      const cleaner = new (require("ioredis").Cluster)(cluster.ports.map((port) => ({ host: "127.0.0.1", port })));
      await cleaner.del(`${prefix}idx`);
      await cleaner.zadd(`${prefix}{}idx`, 0, "old"); // the current standalone layout is refused the same way
      expect(
        await store.get("old").then(
          () => undefined,
          (e: unknown) => e,
        ),
      ).toBeInstanceOf(StoreNotSetUpError);
      await cleaner.del(`${prefix}{}idx`);
      cleaner.disconnect();
    } finally {
      await store.deleteAll();
      await store.close();
    }
  });

  it("says so when a standalone URL points at a cluster node", async () => {
    const store = await openStore(`redis://127.0.0.1:${cluster.ports[0]}?prefix=${uniqueName()}:`);
    try {
      const errors: unknown[] = [];
      for (const id of ["a", "b", "c", "d", "e", "f"])
        errors.push(
          await store.save(counterSession(id), { expectedRevision: null }).then(
            () => undefined,
            (e: unknown) => e,
          ),
        );
      // Some ids hash to this node's slots (and succeed); the others are refused with the fix.
      const refused = errors.filter(Boolean) as ConfigurationError[];
      expect(refused.length).toBeGreaterThan(0);
      for (const e of refused) {
        expect(e).toBeInstanceOf(ConfigurationError);
        expect(e.message).toMatch(/is a Redis Cluster node/);
        expect(e.hint).toMatch(/redis\+cluster:\/\//);
      }
    } finally {
      await (store as RedisSessionStore).deleteAll();
      await store.close();
    }
  });
});

describe.skipIf(!serverUp.redis)("Redis Cluster URL on a standalone server", () => {
  it("is refused with the fix, not retried forever", async () => {
    const store = await openStore(`${REDIS_URL}?cluster=true&prefix=${uniqueName()}:`);
    try {
      const error = await store.get("x").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ConfigurationError);
      expect((error as Error).message).toMatch(/is not a Redis Cluster .*cluster support disabled/);
      expect((error as ConfigurationError).hint).toMatch(/redis:\/\//);
    } finally {
      await store.close();
    }
  });

  it("keeps every standalone key under P{} (the prefix-free layout, format 2 and 3), and P meta", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const store = (await openStore(`${REDIS_URL}?prefix=${encodeURIComponent(prefix)}`)) as RedisSessionStore;
    const raw = new Redis(REDIS_URL);
    try {
      expect(store.cluster).toBe(false);
      await store.setup();
      const r = await store.save(counterSession("s1", 3), { expectedRevision: null, ttlMs: 60_000 });
      await store.messages.appendMessages("s1", [user("hi")], { operationId: "op-1" });
      expect((await raw.keys(`${prefix}*`)).sort()).toEqual(
        [
          `${prefix}{}exp`,
          `${prefix}{}idx`,
          `${prefix}{}mh:s1`,
          `${prefix}{}ml:s1`,
          `${prefix}{}mo:s1`,
          `${prefix}{}rev`,
          `${prefix}{}s:s1`,
          `${prefix}meta`,
        ].sort(),
      );
      expect(await raw.hget(`${prefix}{}s:s1`, "r")).toBe(String(r));
      expect(await raw.hget(`${prefix}meta`, "format")).toBe("3");
    } finally {
      raw.disconnect();
      await store.deleteAll();
      expect(await raw.keys(`${prefix}*`).catch(() => [])).toEqual([]);
      await store.close();
    }
  });
});

describe.skipIf(!scaleOutBackends.includes(redisClusterBackend))("Redis Cluster with a node down", () => {
  // Its own cluster: this test stops a node.
  let own: RedisClusterHandle;
  beforeAll(async () => {
    own = await startRedisCluster();
  });
  afterAll(async () => {
    await own?.stop();
  });

  it("fails the calls for the dead node's slots with StoreUnavailableError; the other masters keep serving", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const store = (await openStore(`${own.url}?prefix=${encodeURIComponent(prefix)}`, {
      connectTimeoutMs: 1000,
    })) as RedisSessionStore;
    const probe = new Redis(`redis://127.0.0.1:${own.ports[0]}`);
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `n-${i}`);
      const revisions = await Promise.all(ids.map((id) => store.save(counterSession(id), { expectedRevision: null })));
      // Which ids live on the node about to stop (its slot ranges from CLUSTER SLOTS).
      const ranges = (await probe.cluster("SLOTS")).filter((r) => r[2][1] === own.ports[0]);
      const onDead = async (id: string) => {
        const slot = Number(await probe.cluster("KEYSLOT", store.keys.of(id).session));
        return ranges.some(([from, to]) => slot >= from && slot <= to);
      };
      const dead = new Set<string>();
      for (const id of ids) if (await onDead(id)) dead.add(id);
      expect(dead.size).toBeGreaterThan(0);
      expect(dead.size).toBeLessThan(ids.length);
      probe.disconnect();
      await own.stopNode(own.ports[0]);

      for (const [i, id] of ids.entries()) {
        if (dead.has(id)) {
          const error = await store.save(counterSession(id, 1), { expectedRevision: revisions[i] }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(StoreUnavailableError);
          expect((error as StoreUnavailableError).code).toBe("store-unavailable");
          expect((error as StoreUnavailableError).hint).toMatch(/reachable/);
          await expect(store.get(id)).rejects.toBeInstanceOf(StoreUnavailableError);
        } else {
          expect(await store.save(counterSession(id, 1), { expectedRevision: revisions[i] })).toBeGreaterThan(
            revisions[i],
          );
          expect(counterOf((await store.get(id))!.session)).toBe(1);
        }
      }
      // A scan needs every master.
      await expect(store.scan()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      probe.disconnect();
      await store.close();
    }
  });

  it("reports StoreUnavailableError when no node answers", async () => {
    await own.stop();
    const store = await openStore(`${own.url}?prefix=x:`, { connectTimeoutMs: 500 });
    try {
      const error = await store.get("a").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toMatch(/unavailable \(get: /);
    } finally {
      await store.close();
    }
  });
});
