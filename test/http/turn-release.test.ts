/**
 * A turn lets go of the chat it read once its answer is committed: the stream's tail (its last
 * chunks and its end) runs after the response, across turns of the event loop, and a chat held
 * through it is a whole session graph a garbage collection meanwhile copies into the old
 * generation, on every turn. Checked with a weak reference to the session the turn read and a
 * full collection while the tail is held open.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import type { StreamBuffer } from "../../src/runtime/stores/stream-buffer.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import type { SessionStore, StoredSession } from "../../src/runtime/stores/types.js";
import { harness, post, readReply, userTurn } from "./setup.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The store, noting a weak reference to every session its `get` returns. */
function watched(store: SessionStore, read: WeakRef<object>[]): SessionStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "get")
        return async (id: string) => {
          const stored: StoredSession | undefined = await target.get(id);
          if (stored) read.push(new WeakRef(stored.session));
          return stored;
        };
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The buffer with the end of every stream held until `release` is called. */
function holding(inner: StreamBuffer): { streams: StreamBuffer; release: () => void; held: Promise<void> } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const streams = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === "finish" || key === "finishWith") {
        const method = Reflect.get(target, key, receiver) as ((...a: unknown[]) => Promise<boolean>) | undefined;
        if (!method) return undefined;
        return async (...args: unknown[]) => {
          reached();
          await gate;
          return method.apply(target, args);
        };
      }
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { streams, release, held };
}

describe("a turn's hold on its chat", () => {
  it("the chat the turn read is collectable once its answer is committed, while the stream's tail still runs", async () => {
    const base = new MemorySessionStore();
    const read: WeakRef<object>[] = [];
    const tail = holding(base.streams!);
    const { handler } = harness({ streams: tail.streams }, watched(base, read));
    // A first turn creates the chat (its tail held too: released at once for this one).
    tail.release();
    await readReply(await post(handler, userTurn("rel-1", "hello", "rel-m1")));
    await handler.idle();

    const second = holding(base.streams!);
    const { handler: next } = harness({ streams: second.streams }, watched(base, read));
    read.length = 0;
    const { chunks } = await readReply(await post(next, userTurn("rel-1", "Tell me a story", "rel-m2")));
    expect(chunks.at(-1)).toMatchObject({ type: "finish" });
    await second.held; // the answer is committed; the tail waits at the stream's end
    expect(read.length).toBeGreaterThan(0);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    expect(read.map((ref) => ref.deref() === undefined)).toEqual(read.map(() => true));
    second.release();
    await next.idle();
    // The turn ended as before: the answer stored, the stream finished.
    const stored = (await base.get("ui-chat/rel-1"))!;
    const history = stored.session.stateBag["statebag.chatHistory"] as unknown as { messages: unknown[] };
    expect(history.messages).toHaveLength(4);
  });
});
