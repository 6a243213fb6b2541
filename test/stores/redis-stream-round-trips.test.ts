/**
 * What a chat turn's stream costs in round trips on standalone Redis, counted at the driver: the
 * open (the id's locator taken, the stream opened with its first chunks) is one round trip, two
 * commands sent together; the tail (`finishWith`) one round trip; an id another session holds is
 * refused without leaving a stream behind. A round trip here is a run of commands sent before the
 * next reply comes back.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/runtime/stores/errors.js";
import { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { REDIS_URL, serverUp, uniqueName } from "./helpers.js";

interface DriverCommand {
  name: string;
  promise: Promise<unknown>;
}

interface CountedClient {
  sendCommand(command: DriverCommand, ...rest: unknown[]): unknown;
}

/** The commands `fn` sends, grouped by round trip (a group ends when a reply arrives). */
async function roundTrips(store: RedisSessionStore, fn: () => Promise<unknown>): Promise<string[][]> {
  await store.streams.info("warm-up"); // connected and selected before counting
  const client = (store as unknown as { connector: { client: CountedClient } }).connector.client;
  const trips: string[][] = [];
  let current: string[] | undefined;
  const send = client.sendCommand;
  client.sendCommand = function (this: unknown, command, ...rest) {
    if (current === undefined) trips.push((current = []));
    current.push(command.name.toLowerCase());
    const sent = send.call(this, command, ...rest);
    const replied = () => {
      current = undefined;
    };
    command.promise.then(replied, replied);
    return sent;
  };
  try {
    await fn();
  } finally {
    client.sendCommand = send;
  }
  return trips;
}

const script = (name: string) => (name === "evalsha" || name === "eval" ? "script" : name);

describe.skipIf(!serverUp.redis)("Redis stream round trips (standalone)", () => {
  const prefix = `srt_${uniqueName()}:`;
  const store = new RedisSessionStore({ url: REDIS_URL, prefix });
  afterAll(async () => {
    await store.deleteAll();
    await store.close();
  });

  it("opens a stream with its first chunks in one round trip and ends it in another", async () => {
    const opened = await roundTrips(store, () =>
      store.streams.open("s1", { sessionId: "chat-1", leaseMs: 30_000, chunks: ["a", "b"] }),
    );
    expect(opened.map((trip) => trip.map(script).sort())).toEqual([["script", "set"]]);
    const ended = await roundTrips(store, () => store.streams.finishWith!("s1", ["c"], "done", { keepMs: 60_000 }));
    expect(ended).toHaveLength(1);
    const read = await store.streams.read("s1", { from: 0 });
    expect(read?.chunks).toEqual(["a", "b", "c"]);
    expect(read?.info).toMatchObject({ sessionId: "chat-1", status: "done", length: 3 });
  });

  it("refuses an id another session's stream holds and leaves nothing of its own", async () => {
    await store.streams.open("s2", { sessionId: "chat-2", leaseMs: 30_000, chunks: ["first"] });
    await expect(
      store.streams.open("s2", { sessionId: "chat-3", leaseMs: 30_000, chunks: ["intruder"] }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(await store.streams.deleteForSession("chat-3")).toBe(0);
    const read = await store.streams.read("s2", { from: 0 });
    expect(read?.chunks).toEqual(["first"]);
    expect(read?.info.sessionId).toBe("chat-2");
  });

  it("takes over the locator an expired stream left behind", async () => {
    await store.streams.open("s3", { sessionId: "chat-4", leaseMs: 30_000 });
    await store.streams.deleteForSession("chat-4");
    // A locator left behind (its stream's keys gone, as after they expired): the id is free again.
    const client = (store as unknown as { connector: { client: { set(...args: unknown[]): Promise<unknown> } } })
      .connector.client;
    const locatorKey = (store as unknown as { keys: { streamLocator(id: string): string } }).keys.streamLocator("s3");
    await client.set(locatorKey, "chat-4", "PX", 60_000);
    await store.streams.open("s3", { sessionId: "chat-5", leaseMs: 30_000, chunks: ["x"] });
    const other = new RedisSessionStore({ url: REDIS_URL, prefix });
    try {
      // Another process finds the stream through the locator, now this stream's.
      const read = await other.streams.read("s3", { from: 0 });
      expect(read?.info.sessionId).toBe("chat-5");
      expect(read?.chunks).toEqual(["x"]);
    } finally {
      await other.close();
    }
  });
});
