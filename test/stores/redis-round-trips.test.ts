/**
 * What one call of the standalone Redis store sends, counted at the driver: `get` is one HMGET
 * (revision, metadata and body together), a save with the default codec is one script call
 * (the compare-and-swap, the metadata, the expiry and the owner index in one EVALSHA/EVAL), and a
 * conflict, a time to live or an owner adds no read. The format marker is read once per store
 * object, before its first call. The deadline queue counts every command it sees, so a command
 * sent around it would show here too.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/runtime/stores/errors.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { counterSession, REDIS_URL, serverUp, uniqueName } from "./helpers.js";

interface CountedClient {
  sendCommand(command: { name: string }, ...rest: unknown[]): unknown;
}

/** The names of the commands the store's client sends while `fn` runs. */
async function sent(store: RedisSessionStore, fn: () => Promise<unknown>): Promise<string[]> {
  const client = (store as unknown as { connector: { client: CountedClient } }).connector.client;
  const names: string[] = [];
  const send = client.sendCommand;
  client.sendCommand = function (this: unknown, command, ...rest) {
    names.push(command.name.toLowerCase());
    return send.call(this, command, ...rest);
  };
  try {
    await fn();
  } finally {
    client.sendCommand = send;
  }
  return names;
}

/** A script call: EVALSHA, or EVAL the first time a connection runs the script. */
const script = (name: string) => name === "evalsha" || name === "eval";

describe.skipIf(!serverUp.redis)("Redis round trips per call (standalone)", () => {
  const store = new RedisSessionStore({ url: REDIS_URL, prefix: `rt_${uniqueName()}:` });
  afterAll(async () => {
    await store.deleteAll();
    await store.close();
  });

  it("reads the format marker once, then a get is one HMGET and a save one script call", async () => {
    const first = await sent(store, () => store.get("absent"));
    expect(first).toContain("hget"); // the format marker
    expect(first.filter((name) => name === "hmget")).toEqual(["hmget"]);

    expect(await sent(store, () => store.get("absent"))).toEqual(["hmget"]);
    const created = await sent(store, () => store.save(counterSession("a", 1), { expectedRevision: null }));
    expect(created).toHaveLength(1);
    expect(script(created[0])).toBe(true);

    const loaded = await store.get("a");
    const updated = await sent(store, () => store.save(counterSession("a", 2), { expectedRevision: loaded!.revision }));
    expect(updated.map(script)).toEqual([true]);
    expect(await sent(store, () => store.get("a"))).toEqual(["hmget"]);
  });

  it("a conflict, a time to live and an owner with labels and a title add no round trip", async () => {
    const conflict = await sent(store, async () => {
      await expect(store.save(counterSession("a", 3), { expectedRevision: null })).rejects.toBeInstanceOf(
        ConflictError,
      );
    });
    expect(conflict.map(script)).toEqual([true]);

    const withTtl = await sent(store, () =>
      store.save(counterSession("t", 1), { expectedRevision: null, ttlMs: 60_000 }),
    );
    expect(withTtl.map(script)).toEqual([true]);
    const current = await store.get("t");
    expect(current?.meta).toBeDefined();
    const persisted = await sent(store, () =>
      store.save(counterSession("t", 2), { expectedRevision: current!.revision }),
    );
    expect(persisted.map(script)).toEqual([true]);

    const owned = await sent(store, () =>
      store.save(counterSession("o", 1), {
        expectedRevision: null,
        ttlMs: 60_000,
        meta: { owner: "alice", title: "hello", labels: { team: "x" } },
      }),
    );
    expect(owned.map(script)).toEqual([true]);
    const page = await store.list({ owner: "alice" });
    expect(page.items.map((item) => item.id)).toEqual(["o"]);
  });
});
