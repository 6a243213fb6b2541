/** The hosted-app flow helper, with a fake `fn` standing in for the agent. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { ConflictError, SessionNotFoundError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import { counterOf, memoryBackend, sqliteBackend, type Backend } from "./helpers.js";

/** The fake agent: bumps a counter in the session's state and answers with the new value. */
function bump(session: AgentSession): number {
  const state = (session.stateBag.counter ??= { $type: "test.Counter", value: 0 }) as unknown as { value: number };
  state.value += 1;
  return state.value;
}

/** Lets N concurrent runs all load before any of them saves. */
function barrier(n: number): () => Promise<void> {
  let waiting = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async () => {
    if (++waiting === n) release();
    await all;
  };
}

describe.each([memoryBackend, sqliteBackend])("withSession on $name", (backend: Backend) => {
  let store: SessionStore;
  let cleanup: () => Promise<void>;
  let n = 0;
  const id = () => `public-${++n}`;

  beforeAll(async () => {
    const location = await backend.location();
    cleanup = location.cleanup;
    store = await openStore(location.url);
  });
  afterAll(async () => {
    await store.close();
    await cleanup();
  });

  it("creates a missing session, runs fn, saves its changes and returns fn's value", async () => {
    const pid = id();
    const result = await withSession(store, pid, (session, ctx) => {
      expect(session).toEqual({ id: pid, stateBag: {} });
      expect(ctx).toEqual({ revision: null, created: true, attempt: 1 });
      return bump(session);
    });
    expect(result).toMatchObject({ created: true, attempts: 1, value: 1 });
    const stored = await store.get(pid);
    expect(stored!.revision).toBe(result.revision);
    expect(counterOf(stored!.session)).toBe(1);

    const second = await withSession(store, pid, async (session, ctx) => {
      expect(ctx.revision).toBe(result.revision);
      expect(ctx.created).toBe(false);
      return `answer ${bump(session)}`;
    });
    expect(second.value).toBe("answer 2");
    expect(counterOf((await store.get(pid))!.session)).toBe(2);
  });

  it("saves a session fn returns instead of mutating", async () => {
    const pid = id();
    await withSession(store, pid, (s) => void bump(s));
    const result = await withSession(store, pid, (s): AgentSession => ({ ...s, conversationId: "conv_1" }));
    expect(result.session.conversationId).toBe("conv_1");
    expect((await store.get(pid))!.session.conversationId).toBe("conv_1");
  });

  it("onConflict reject (default): the later of two concurrent runs fails and nothing is saved twice", async () => {
    const pid = id();
    await withSession(store, pid, (s) => void bump(s));
    const wait = barrier(2);
    const runs = await Promise.allSettled(
      [0, 1].map(() =>
        withSession(store, pid, async (s) => {
          await wait();
          return bump(s);
        }),
      ),
    );
    const failed = runs.filter((r) => r.status === "rejected");
    expect(failed).toHaveLength(1);
    const error = (failed[0] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toContain(`"${pid}" was changed by someone else`);
    expect(counterOf((await store.get(pid))!.session)).toBe(2);
  });

  it("onConflict retry: reloads and reruns fn on the fresh session", async () => {
    const pid = id();
    await withSession(store, pid, (s) => void bump(s));
    const wait = barrier(3);
    const seen: number[] = [];
    const runs = await Promise.all(
      [0, 1, 2].map(() =>
        withSession(
          store,
          pid,
          async (s, ctx) => {
            if (ctx.attempt === 1) await wait();
            seen.push(ctx.attempt);
            return bump(s);
          },
          { onConflict: "retry", retries: 5 },
        ),
      ),
    );
    expect(runs.map((r) => r.value).sort()).toEqual([2, 3, 4]);
    expect(Math.max(...runs.map((r) => r.attempts))).toBeGreaterThan(1);
    expect(counterOf((await store.get(pid))!.session)).toBe(4);
  });

  it("two concurrent creations: one creates, the other retries on top of it", async () => {
    const pid = id();
    const wait = barrier(2);
    const runs = await Promise.all(
      [0, 1].map(() =>
        withSession(
          store,
          pid,
          async (s, ctx) => {
            if (ctx.attempt === 1) await wait();
            return bump(s);
          },
          { onConflict: "retry" },
        ),
      ),
    );
    expect(runs.filter((r) => r.created)).toHaveLength(1);
    expect(counterOf((await store.get(pid))!.session)).toBe(2);
  });

  it("gives up after `retries` reruns with a clear error", async () => {
    const pid = id();
    await withSession(store, pid, (s) => void bump(s));
    let runs = 0;
    const error = await withSession(
      store,
      pid,
      async (s) => {
        runs++;
        // Someone else saves while this run is busy, every time.
        await withSession(store, pid, (other) => void bump(other));
        bump(s);
      },
      { onConflict: "retry", retries: 2, retryDelayMs: () => 0 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect((error as ConflictError).hint).toMatch(/gave up after 3 runs/);
    expect(runs).toBe(3);
    expect(counterOf((await store.get(pid))!.session)).toBe(4);
  });

  it("create: false refuses a missing session; a create function builds the first one", async () => {
    await expect(withSession(store, id(), () => undefined, { create: false })).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );
    const pid = id();
    const result = await withSession(store, pid, (s) => s.kind, {
      create: (sid) => ({ id: sid, kind: "hosted", stateBag: {} }),
    });
    expect(result.value).toBe("hosted");
    await expect(
      withSession(store, id(), () => undefined, { create: () => ({ id: "other", stateBag: {} }) }),
    ).rejects.toBeInstanceOf(ConfigurationError);
  });

  it("saves nothing when fn throws or changes the id", async () => {
    const pid = id();
    await withSession(store, pid, (s) => void bump(s));
    const before = await store.get(pid);
    await expect(
      withSession(store, pid, (s) => {
        bump(s);
        throw new Error("model call failed");
      }),
    ).rejects.toThrow("model call failed");
    await expect(
      withSession(store, pid, (s) => {
        s.id = "someone-else";
      }),
    ).rejects.toBeInstanceOf(ConfigurationError);
    expect(await store.get(pid)).toEqual(before);
    expect(await store.get("someone-else")).toBeUndefined();
  });
});
