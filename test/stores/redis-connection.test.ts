/**
 * Redis URLs and connections: every part of the URL is checked before anything connects (the
 * database above all: ioredis read `/1.5` as db 1, `/abc` as an uncaught error after writing to
 * db 0, and `/99` wrote to db 0); a database the server lacks is a typed error naming its limit,
 * with nothing written; a server that cannot be reached fails after a bounded, configurable
 * number of attempts, naming host:port; no password in any error, cause or property.
 */
import net from "node:net";
import { createRequire } from "node:module";
import type { Redis as RedisClient } from "ioredis";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { redisConnection } from "../../src/runtime/stores/redis/url.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { counterSession, REDIS_URL, serverUp, uniqueName } from "./helpers.js";
import { freePort } from "./servers.js";

const require = createRequire(import.meta.url);
const { Redis } = require("ioredis") as { Redis: new (url: string) => RedisClient };
const SECRET = "Tr0ub4dor-r3dis";

/** Every string reachable from `value` (own properties, enumerable or not, `cause` included). */
function reachableStrings(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object" || seen.has(value)) return [];
  seen.add(value);
  const out: string[] = [];
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor && "value" in descriptor) out.push(...reachableStrings(descriptor.value, seen));
  }
  if (value instanceof Error) out.push(value.message, String(value.stack ?? ""));
  return out;
}

function expectNoSecret(error: unknown): void {
  for (const text of reachableStrings(error)) expect(text).not.toContain(SECRET);
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

/** Errors nobody handled while a test ran (ioredis emitting "error" with no listener crashes the process). */
const stray: unknown[] = [];
const onStray = (error: unknown) => stray.push(error);
beforeEach(() => {
  stray.length = 0;
  process.on("unhandledRejection", onStray);
  process.on("uncaughtException", onStray);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  process.off("unhandledRejection", onStray);
  process.off("uncaughtException", onStray);
  expect(stray).toEqual([]);
});

describe("Redis URL parts are checked before connecting", () => {
  it.each([
    ["a fractional database", `redis://:${SECRET}@127.0.0.1:6379/1.5`, /database "1\.5" .* is not a database number/],
    [
      "a database that is not a number",
      `redis://:${SECRET}@127.0.0.1:6379/abc`,
      /database "abc" .* is not a database number/,
    ],
    ["a negative database", `redis://:${SECRET}@127.0.0.1:6379/-1`, /database "-1" .* is not a database number/],
    [
      "a path after the database",
      `redis://:${SECRET}@127.0.0.1:6379/1/2`,
      /database "1\/2" .* is not a database number/,
    ],
    [
      "?db= that is not a number",
      `redis://:${SECRET}@127.0.0.1:6379?db=one`,
      /\?db= .* whole number|not a database number/,
    ],
    ["two different databases", `redis://:${SECRET}@127.0.0.1:6379/2?db=3`, /names two databases \(\/2 and \?db=3\)/],
    [
      "an unknown address family",
      `redis://:${SECRET}@127.0.0.1:6379?family=5`,
      /\?family= .* must be 4 \(IPv4\), 6 \(IPv6\) or 0/,
    ],
    [
      "a zero connect timeout",
      `redis://:${SECRET}@127.0.0.1:6379?connectTimeout=0`,
      /\?connectTimeout= .* from 1 to 600000/,
    ],
    [
      "a connect timeout in words",
      `redis://:${SECRET}@127.0.0.1:6379?connectTimeout=soon`,
      /\?connectTimeout= .* got "soon"/,
    ],
    ["too many retries", `redis://:${SECRET}@127.0.0.1:6379?connectRetries=21`, /\?connectRetries= .* from 0 to 20/],
    ["port 0", `redis://:${SECRET}@127.0.0.1:0`, /port 0/],
    [
      "a cluster with a database",
      `redis+cluster://:${SECRET}@127.0.0.1:7000,127.0.0.1:7001/3`,
      /database other than 0/,
    ],
  ])("%s is a ConfigurationError at open, keeping no trace of the password", async (_label, url, message) => {
    const error = await failure(openStore(`${url}${url.includes("?") ? "&" : "?"}prefix=x:`));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(message);
    expect((error as ConfigurationError).hint).toBeTruthy();
    expectNoSecret(error);
    // The same check when the store is built directly.
    if (!url.startsWith("redis+cluster:")) {
      expect(() => new RedisSessionStore({ url })).toThrow(ConfigurationError);
    }
  });

  it("reads the database from the path or ?db=, and hands ioredis neither", () => {
    for (const url of ["redis://h:6379/3", "redis://h:6379?db=3", "redis://h:6379/3?db=3"]) {
      const c = redisConnection(url);
      expect(c.db).toBe(3);
      expect(c.url).toBe("redis://h:6379");
    }
    expect(redisConnection("redis://u:p@h/?family=6&connectRetries=4&connectTimeout=250")).toEqual({
      url: "redis://u:p@h?family=6",
      db: 0,
      address: "h:6379",
      connectTimeoutMs: 250,
      connectRetries: 4,
    });
    expect(() => new RedisSessionStore({ url: "redis://h", connectRetries: 1.5 })).toThrow(
      /connectRetries must be a whole number/,
    );
    // A command timeout of 0 reached ioredis as one every command missed ("Command timed out" at once).
    for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, 86_400_001]) {
      const error = (() => {
        try {
          new RedisSessionStore({ url: "redis://h", commandTimeoutMs: bad });
        } catch (e) {
          return e as ConfigurationError;
        }
      })();
      expect(error, String(bad)).toBeInstanceOf(ConfigurationError);
      expect(error!.message).toMatch(/commandTimeoutMs must be a whole number from 1 to 86400000/);
      expect(error!.hint).toMatch(/time limit/);
    }
    expect(new RedisSessionStore({ url: "redis://h", commandTimeoutMs: 1 }).kind).toBe("redis");
    expect(() => new RedisSessionStore({ url: "redis://h/2", redisOptions: { db: 3 } })).toThrow(
      /differs from the database in the store URL/,
    );
  });
});

describe.skipIf(!serverUp.redis)("Redis databases", () => {
  const raw = new Redis(REDIS_URL);
  afterAll(() => raw.disconnect());

  it("a database the server does not have is a ConfigurationError naming its limit; nothing is written anywhere", async () => {
    const [, limit] = (await raw.config("GET", "databases")) as [string, string];
    const prefix = `sbtest:${uniqueName()}:`;
    // With a password in the URL (the test server needs none, so the driver only warns): it must not show.
    const url = new URL(`${REDIS_URL}/${Number(limit) + 83}?prefix=${encodeURIComponent(prefix)}`);
    url.password = SECRET;
    const store = await openStore(url.toString());
    try {
      for (const call of [
        () => store.save(counterSession("a"), { expectedRevision: null }),
        () => store.get("a"),
        () => store.setup(),
      ]) {
        const error = await failure(call());
        expect(error).toBeInstanceOf(ConfigurationError);
        expect(error.message).toContain(`has no database ${Number(limit) + 83}`);
        expect(error.message).toContain(`it has ${limit} (0 to ${Number(limit) - 1})`);
        expect((error as ConfigurationError).hint).toMatch(/redis\.conf/);
        expectNoSecret(error);
      }
      expect(await raw.keys(`${prefix}*`)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("writes to the URL's database, also after the connection was cut and opened again", async () => {
    const prefix = `sbtest:${uniqueName()}:`;
    const db3 = new Redis(`${REDIS_URL}/3`);
    const store = (await openStore(`${REDIS_URL}/3?prefix=${encodeURIComponent(prefix)}`)) as RedisSessionStore;
    try {
      const r1 = await store.save(counterSession("a"), { expectedRevision: null });
      const id = await store.call("test", false, (c) => (c as unknown as RedisClient).client("ID"));
      await raw.client("KILL", "ID", String(id));
      // The first call after the cut finds the connection closed; the next one connects again.
      await store.get("a").catch(() => undefined);
      expect(await store.save(counterSession("a", 1), { expectedRevision: r1 })).toBeGreaterThan(r1);
      expect(await store.save(counterSession("b"), { expectedRevision: null })).toBeGreaterThan(0);
      expect((await db3.keys(`${prefix}*`)).sort()).toEqual([
        `${prefix}{}idx`,
        `${prefix}{}rev`,
        `${prefix}{}s:a`,
        `${prefix}{}s:b`,
      ]);
      expect(await raw.keys(`${prefix}*`)).toEqual([]);
    } finally {
      await store.deleteAll();
      await store.close();
      db3.disconnect();
    }
  });
});

/** A TCP server that counts connections; `answer: false` accepts and stays silent, otherwise it closes each at once. */
async function countingServer(
  mode: "close" | "silent",
): Promise<{ port: number; connections: () => number; stop: () => Promise<void> }> {
  let count = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    count++;
    socket.on("error", () => undefined);
    if (mode === "close") socket.destroy();
    else sockets.add(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => count,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A server that completes the driver's handshake (its INFO ready check, CLIENT calls) and then
 * never answers another command: a command sent to it waits until its timeout.
 */
async function stallingServer(): Promise<{ port: number; stop: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    let pending = "";
    socket.on("data", (chunk) => {
      pending += chunk.toString("latin1");
      // Whole RESP arrays of bulk strings: *N, then $len and the argument, N times.
      for (;;) {
        const lines = pending.split("\r\n");
        const count = Number(lines[0]?.slice(1));
        if (!lines[0]?.startsWith("*") || lines.length < 1 + 2 * count + 1) return;
        const name = lines[2].toLowerCase();
        pending = lines.slice(1 + 2 * count).join("\r\n");
        if (name === "info") socket.write("$11\r\nloading:0\r\n\r\n");
        else if (name === "client") socket.write("+OK\r\n");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    stop: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("Redis that stops answering", () => {
  it("every command in flight fails at commandTimeoutMs with StoreUnavailableError, reads and writes alike", async () => {
    const server = await stallingServer();
    const store = new RedisSessionStore({ url: `redis://127.0.0.1:${server.port}`, commandTimeoutMs: 150 });
    try {
      const errors = await Promise.all([
        failure(store.get("a")),
        failure(store.get("b")),
        failure(store.save(counterSession("c"), { expectedRevision: null })),
      ]);
      for (const error of errors) {
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(String((error.cause as Error | undefined)?.message)).toContain("Command timed out");
      }
      // Once the format check has passed (it timed out here), a write that timed out may have run.
      const late = await failure(store.save(counterSession("d"), { expectedRevision: null }));
      expect(late).toBeInstanceOf(StoreUnavailableError);
      expect(String((late.cause as Error | undefined)?.message)).toContain("Command timed out");
    } finally {
      await store.close();
      await server.stop();
    }
  });
});

describe("Redis that cannot be reached", () => {
  it("a closed port fails with StoreUnavailableError naming host:port after 1 + connectRetries attempts", async () => {
    const port = await freePort();
    const store = await openStore(`redis://app:${SECRET}@127.0.0.1:${port}/2?prefix=x:&connectRetries=2`);
    try {
      const error = await failure(store.get("a"));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).code).toBe("store-unavailable");
      expect(error.message).toContain(`no connection to 127.0.0.1:${port} after 3 attempts`);
      expect(error.message).toContain("ECONNREFUSED");
      expect((error as StoreUnavailableError).hint).toContain(`reachable at 127.0.0.1:${port}`);
      expectNoSecret(error);
    } finally {
      await store.close();
    }
  });

  it.each([
    [undefined, 2],
    [0, 1],
    [3, 4],
  ])(
    "connectRetries=%s: a server that drops every connection is tried %i times per call",
    async (retries, attempts) => {
      const server = await countingServer("close");
      const store = await openStore(
        `redis://127.0.0.1:${server.port}?prefix=x:${retries === undefined ? "" : `&connectRetries=${retries}`}`,
      );
      try {
        const error = await failure(store.save(counterSession("a"), { expectedRevision: null }));
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(error.message).toContain(`after ${attempts} attempt${attempts === 1 ? "" : "s"}`);
        expect(server.connections()).toBe(attempts);
      } finally {
        await store.close();
        await server.stop();
      }
    },
  );

  it("a server that accepts but never answers ends each attempt at connectTimeout (the whole handshake, not just TCP)", async () => {
    const server = await countingServer("silent");
    const store = await openStore(
      `redis://:${SECRET}@127.0.0.1:${server.port}?prefix=x:&connectTimeout=200&connectRetries=1`,
    );
    try {
      const error = await failure(store.get("a"));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error.message).toContain(`no connection to 127.0.0.1:${server.port} after 2 attempts`);
      expect(error.message).toContain("timed out after 200 ms");
      expect(server.connections()).toBe(2);
      expectNoSecret(error);
    } finally {
      await store.close();
      await server.stop();
    }
  });

  it("a cluster whose start nodes are all closed fails the same way, naming them", async () => {
    const [a, b] = [await freePort(), await freePort()];
    const store = await openStore(
      `redis+cluster://:${SECRET}@127.0.0.1:${a},127.0.0.1:${b}?prefix=x:&connectRetries=1`,
    );
    try {
      const error = await failure(store.get("a"));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error.message).toContain(`no connection to 127.0.0.1:${a},127.0.0.1:${b} after 2 attempts`);
      expectNoSecret(error);
    } finally {
      await store.close();
    }
  });
});
