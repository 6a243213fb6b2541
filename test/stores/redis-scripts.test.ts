/**
 * The Redis scripts' typed wrappers (scripts.ts): a reply of an unexpected shape fails with a
 * clear error naming the script and the shape, never the reply's content.
 */
import { describe, expect, it } from "vitest";
import { RedisKeys } from "../../src/runtime/stores/redis/keys.js";
import {
  plainScript,
  RedisReplyError,
  runDelete,
  runList,
  runMeta,
  runMetas,
  runSave,
  runScan,
  type ScriptedClient,
} from "../../src/runtime/stores/redis/scripts.js";

/** A client whose every script answers `reply`, recording the arguments it was given. */
function answering(reply: unknown): { client: ScriptedClient; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const answer = async (...args: unknown[]) => {
    calls.push(args);
    return reply;
  };
  const client = new Proxy({} as ScriptedClient, { get: () => answer });
  return { client, calls };
}

const keys = new RedisKeys("t:", false);
const sessionKeys = keys.of("s1");

describe("Redis script wrappers", () => {
  it("decode each reply into its case", async () => {
    const saved = await runSave(answering([1, 7, "alice", 1000, 900, '{"k":"v"}', "bob", "s9", 3]).client, {
      keys: sessionKeys,
      id: "s1",
      expected: 6,
      text: "{}",
      nowMs: 1,
    });
    expect(saved).toEqual({
      status: "saved",
      revision: 7,
      owner: "alice",
      updatedAt: 1000,
      createdAt: 900,
      labels: '{"k":"v"}',
      expired: [{ owner: "bob", id: "s9", revision: 3 }],
    });
    expect(
      await runSave(answering([0, "5"]).client, { keys: sessionKeys, id: "s1", expected: 4, text: "", nowMs: 1 }),
    ).toEqual({
      status: "conflict",
      current: 5,
    });
    expect(
      await runSave(answering([3, ""]).client, { keys: sessionKeys, id: "s1", expected: 4, text: "", nowMs: 1 }),
    ).toEqual({
      status: "codec-owner",
      storedOwner: null,
    });
    expect(
      await runDelete(answering([1, 0]).client, { keys: sessionKeys, id: "s1", inlineIndex: true, ownerPrefix: "t:" }),
    ).toEqual({
      status: "absent",
    });
    expect(await runMeta(answering(null).client, sessionKeys.session)).toBeUndefined();
    const page = await runList(answering(["a", "", "[]", "b", "", "[]", "b", 1]).client, {
      keys: keys.owner("o"),
      order: "id",
      after: "",
      wanted: 2,
    });
    expect(page).toEqual({
      candidates: [
        { id: "a", updatedAt: undefined, entry: "[]" },
        { id: "b", updatedAt: undefined, entry: "[]" },
      ],
      last: "b",
      exhausted: true,
    });
  });

  it("decode a page with its sessions read in the same call, and ask for them by the session prefix and owner", async () => {
    const { client, calls } = answering(
      [
        ["a", "5", "[]", "3", "alice", null, '{"k":"v"}', "100", "200", -1],
        ["b", "4", "[]", null, null, null, null, null, null, -2],
      ]
        .flat()
        .concat(["0000000000000004b", 0]),
    );
    const page = await runList(client, {
      keys: keys.owner("alice"),
      order: "updatedAt desc",
      after: "",
      wanted: 2,
      sessions: { sessionPrefix: "t:{}s:", owner: "alice" },
    });
    expect(calls[0].slice(3)).toEqual(["u", "", 2, "", "", "", "t:{}s:", "alice"]);
    expect(page).toEqual({
      candidates: [
        { id: "a", updatedAt: 5, entry: "[]" },
        { id: "b", updatedAt: 4, entry: "[]" },
      ],
      sessions: [
        { revision: 3, owner: "alice", title: null, labels: '{"k":"v"}', createdAt: 100, updatedAt: 200, pttl: -1 },
        undefined,
      ],
      last: "0000000000000004b",
      exhausted: false,
    });
    // A candidate cut short is a reply of another shape.
    await expect(
      runList(answering(["a", "5", "[]", "3", "x", 0]).client, {
        keys: keys.owner("alice"),
        order: "updatedAt desc",
        after: "",
        wanted: 1,
        sessions: { sessionPrefix: "t:{}s:", owner: "alice" },
      }),
    ).rejects.toThrow(RedisReplyError);
  });

  it("read many sessions' metadata per node in a pipeline, and one call each when a pipeline fails", async () => {
    const meta = (revision: number) => [String(revision), "o", null, null, "1", "2", -1];
    const single: string[] = [];
    const pipelines: string[][] = [];
    let failNode = "";
    const client = {
      sbMeta: async (key: string) => {
        single.push(key);
        return key.endsWith("gone") ? null : meta(Number(key.slice(-1)));
      },
      pipeline: () => {
        const queued: string[] = [];
        const pipeline = {
          sbMeta: (key: string) => (queued.push(key), pipeline),
          exec: async () => {
            pipelines.push(queued);
            if (queued.some((key) => key.startsWith(failNode) && failNode !== ""))
              return queued.map(() => [new Error("MOVED 1 127.0.0.1:1"), null]);
            return queued.map((key) => [null, key.endsWith("gone") ? null : meta(Number(key.slice(-1)))]);
          },
        };
        return pipeline;
      },
    } as unknown as ScriptedClient;
    const nodeOf = (key: string) => (key.startsWith("u") ? undefined : key[0]);
    const keysRead = ["a1", "b2", "a3", "agone", "u5", "b6"];
    const expected = [1, 2, 3, undefined, 5, 6].map((r) =>
      r === undefined
        ? undefined
        : { revision: r, owner: "o", title: null, labels: null, createdAt: 1, updatedAt: 2, pttl: -1 },
    );
    expect(await runMetas(client, keysRead, nodeOf)).toEqual(expected);
    expect(pipelines).toEqual([
      ["a1", "a3", "agone"],
      ["b2", "b6"],
    ]);
    expect(single).toEqual(["u5"]); // a key whose node is not known: one call
    pipelines.length = 0;
    single.length = 0;
    failNode = "a";
    expect(await runMetas(client, keysRead, nodeOf)).toEqual(expected);
    expect(single.sort()).toEqual(["a1", "a3", "agone", "u5"]);
  });

  it("send the positional arguments the script reads (flags as '0'/'1', absent as '')", async () => {
    const { client, calls } = answering([1, 2, null, 0, 0, null]);
    await runSave(client, {
      keys: sessionKeys,
      id: "s1",
      expected: null,
      text: "body",
      ttlMs: 50,
      nowMs: 10,
      meta: { owner: "alice", codecOwner: null, inlineIndex: true, ownerPrefix: "t:", drawnRevision: 2 },
    });
    expect(calls[0].slice(4)).toEqual([
      "",
      "body",
      "50",
      "s1",
      10,
      sessionKeys.sessionPrefix,
      "1",
      "alice",
      "=",
      "0",
      "",
      "0",
      "",
      "1",
      "t:",
      sessionKeys.xo,
      "2",
    ]);
  });

  it("fail with RedisReplyError on a reply of another shape, without its content", async () => {
    const secret = "sk-secret-value";
    const cases: [Promise<unknown>, RegExp][] = [
      [
        runSave(answering(secret).client, { keys: sessionKeys, id: "s1", expected: null, text: "", nowMs: 1 }),
        /save.*array.*string of 15/,
      ],
      [
        runSave(answering([9, secret]).client, { keys: sessionKeys, id: "s1", expected: null, text: "", nowMs: 1 }),
        /save.*item 1/,
      ],
      [
        runSave(answering([1, secret]).client, { keys: sessionKeys, id: "s1", expected: null, text: "", nowMs: 1 }),
        /save.*item 2 should be an integer/,
      ],
      [runMeta(answering([secret]).client, sessionKeys.session), /meta.*at least 7/],
      [
        runScan(answering(["a", "1", null]).client, { bucket: keys.buckets[0], after: "", wanted: 1, withText: false }),
        /scan/,
      ],
      [
        runList(answering(["a", "", "[]", "x"]).client, { keys: keys.owner("o"), order: "id", after: "", wanted: 1 }),
        /list/,
      ],
    ];
    for (const [call, pattern] of cases) {
      const error = await call.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RedisReplyError);
      expect((error as RedisReplyError).code).toBe("store-key-conflict");
      expect((error as Error).message).toMatch(pattern);
      expect((error as Error).message).not.toContain(secret);
    }
  });
});

describe("a standalone client's scripts (plainScript)", () => {
  /** A driver whose EVALSHA answers NOSCRIPT until an EVAL ran (per connection), recording what was sent. */
  function driver() {
    const sent: string[] = [];
    const client = {
      stream: {} as object,
      loaded: false,
      failNext: undefined as Error | undefined,
      async eval(_lua: unknown, _keys: unknown, ...args: unknown[]) {
        sent.push(`eval ${args.join(" ")}`);
        client.loaded = true;
        return "ran";
      },
      async evalsha(_sha: unknown, _keys: unknown, ...args: unknown[]) {
        sent.push(`evalsha ${args.join(" ")}`);
        if (client.failNext !== undefined) {
          const error = client.failNext;
          client.failNext = undefined;
          throw error;
        }
        if (!client.loaded) throw new Error("NOSCRIPT No matching script. Please use EVAL.");
        return "ran";
      },
    };
    return { client, sent };
  }

  it("sends the source once per connection, then the hash; after NOSCRIPT the source again, once", async () => {
    const { client, sent } = driver();
    const run = plainScript(client, "return 1", 1);
    expect(await run("k", "a")).toBe("ran");
    expect(await run("k", "b")).toBe("ran");
    expect(sent).toEqual(["eval k a", "evalsha k b"]);
    // The server lost its scripts (SCRIPT FLUSH, a restart behind a proxy): NOSCRIPT means it did not run.
    client.loaded = false;
    sent.length = 0;
    expect(await run("k", "c")).toBe("ran");
    expect(sent).toEqual(["evalsha k c", "eval k c"]);
    // A new connection (reconnect): the source first.
    client.stream = {};
    sent.length = 0;
    await run("k", "d");
    expect(sent).toEqual(["eval k d"]);
  });

  it("never sends a script again after any other failure (it may have run)", async () => {
    const { client, sent } = driver();
    const run = plainScript(client, "return 1", 1);
    await run("k", "a");
    client.failNext = new Error("Command timed out");
    await expect(run("k", "b")).rejects.toThrow("Command timed out");
    expect(sent).toEqual(["eval k a", "evalsha k b"]);
  });
});
