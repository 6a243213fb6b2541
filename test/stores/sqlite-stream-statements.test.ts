/**
 * The statements a chat turn's stream costs in the SQLite stream buffer (#36): its open (the turn's
 * busy lock and the user's message) is the stream's row and its first chunk, with no read first;
 * its end (`finishWith`) grows and ends the row in one statement, then writes the last chunks.
 * Each is one write transaction. What they leave is what a read, an existing id and an expired one
 * found before: a live id is refused and changes nothing, an expired one opens anew.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError } from "../../src/runtime/stores/errors.js";
import { SqliteSessionStore } from "../../src/runtime/stores/sqlite/store.js";

type Run = SqliteSessionStore["run"];

/** The stream statements each `run` of the store executed, by name (in order), per operation. */
function counting(store: SqliteSessionStore): { operation: string; statements: string[] }[] {
  const log: { operation: string; statements: string[] }[] = [];
  const run: Run = store.run.bind(store);
  store.run = ((operation, access, fn) =>
    run(operation, access, (s) => {
      const entry = { operation, statements: [] as string[] };
      log.push(entry);
      const streams = new Proxy(s.streams, {
        get(target, name, receiver) {
          const statement = Reflect.get(target, name, receiver) as Record<string, unknown>;
          return new Proxy(statement, {
            get(inner, method, innerReceiver) {
              const value = Reflect.get(inner, method, innerReceiver) as unknown;
              if (typeof value !== "function") return value;
              return (...args: unknown[]) => {
                entry.statements.push(String(name));
                return (value as (...a: unknown[]) => unknown).apply(inner, args);
              };
            },
          });
        },
      });
      return fn(new Proxy(s, { get: (target, name) => (name === "streams" ? streams : Reflect.get(target, name)) }));
    })) as Run;
  return log;
}

const stores: SqliteSessionStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

function open(): SqliteSessionStore {
  const store = new SqliteSessionStore({ path: ":memory:" });
  stores.push(store);
  return store;
}

describe("the SQLite stream buffer's statements on a turn's path", () => {
  it("a new stream's open is its row and its first chunks; finishWith is one update and the last chunks", async () => {
    const store = open();
    const log = counting(store);
    await store.streams.open("turn-a", { sessionId: "ui-chat/a", owner: "ada", leaseMs: 15_000, chunks: ["rec"] });
    expect(log).toEqual([{ operation: "streams.open", statements: ["insert", "chunk"] }]);
    log.length = 0;
    expect(await store.streams.finishWith("turn-a", ["c1", "c2"], "done", { keepMs: 60_000 })).toBe(true);
    expect(log).toEqual([{ operation: "streams.finish", statements: ["growFinish", "chunk", "chunk"] }]);
    const read = await store.streams.read("turn-a", { from: 0 });
    expect(read?.chunks).toEqual(["rec", "c1", "c2"]);
    expect(read?.info).toMatchObject({ status: "done", length: 3, sessionId: "ui-chat/a" });
    // Ended: a second finishWith writes nothing and says so.
    expect(await store.streams.finishWith("turn-a", ["c3"], "failed", { keepMs: 60_000 })).toBe(false);
    expect((await store.streams.read("turn-a", { from: 0 }))?.info).toMatchObject({ status: "done", length: 3 });
  });

  it("an id in use is refused and changes nothing; an expired one opens anew, without its old chunks", async () => {
    const store = open();
    await store.streams.open("turn-b", { sessionId: "ui-chat/b", leaseMs: 15_000, chunks: ["first"] });
    const log = counting(store);
    await expect(
      store.streams.open("turn-b", { sessionId: "ui-chat/other", leaseMs: 15_000, chunks: ["second"] }),
    ).rejects.toBeInstanceOf(ConflictError);
    expect(log.map((entry) => entry.statements)).toEqual([["insert", "get"]]);
    expect(await store.streams.read("turn-b", { from: 0 })).toMatchObject({
      chunks: ["first"],
      info: { sessionId: "ui-chat/b", status: "running", length: 1 },
    });
    // Finished with no time to keep: gone at once; its id opens anew.
    await store.streams.finishWith("turn-b", ["old"], "done", { keepMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 2));
    log.length = 0;
    await store.streams.open("turn-b", { sessionId: "ui-chat/b2", leaseMs: 15_000, chunks: ["new"] });
    expect(log.map((entry) => entry.statements)).toEqual([
      ["insert", "get", "removeChunks", "remove", "insert", "chunk"],
    ]);
    expect(await store.streams.read("turn-b", { from: 0 })).toMatchObject({
      chunks: ["new"],
      info: { sessionId: "ui-chat/b2", status: "running", length: 1 },
    });
  });
});
