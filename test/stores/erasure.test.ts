/**
 * Erasure requests survive a crash: a child process erasing an owner's 2,000 sessions is killed
 * with SIGKILL part way; a second run finishes, and afterwards nothing of the owner can be read
 * (get, list, scan, message logs) while another owner's data is untouched. On SQLite, PostgreSQL
 * and Redis. Redis also: a stale or orphaned owner index entry is found and dropped.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { RedisSessionStore } from "../../src/runtime/stores/redis/store.js";
import { ownerDigest } from "../../src/runtime/stores/erasure.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { allBackends, counterSession, freshStore } from "./helpers.js";

const worker = fileURLToPath(new URL("./workers/erase-owner.ts", import.meta.url));
const SESSIONS = 2000;
const user = (text: string) => ({ role: "user" as const, contents: [{ $type: "text" as const, text }] });

/** Runs the worker until it reports `killAfter` removed sessions, then SIGKILLs it. Resolves with the last progress seen. */
function eraseAndKill(
  url: string,
  owner: string,
  killAfter: number,
): Promise<{ reported: number; signal: NodeJS.Signals | null; finished: boolean }> {
  return new Promise((resolve, reject) => {
    const child = fork(worker, [url, owner], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    let err = "";
    let reported = 0;
    let finished = false;
    child.stderr!.on("data", (d) => (err += d));
    child.on("message", (m: { sessions?: number; done?: unknown }) => {
      if (m.done) finished = true;
      if (typeof m.sessions === "number") reported = m.sessions;
      if (reported >= killAfter && child.exitCode === null) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === null && code !== 0) reject(new Error(`worker exited with ${code}: ${err}`));
      else resolve({ reported, signal, finished });
    });
  });
}

async function listAllIds(store: SessionStore, owner: string, order: "id" | "updatedAt desc"): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ owner, order, cursor, limit: 1000 });
    ids.push(...page.items.map((i) => i.id));
    cursor = page.cursor;
  } while (cursor);
  return ids;
}

const crashBackends = allBackends.filter((b) => b.name === "sqlite" || b.name === "postgres" || b.name === "redis");

describe.each(crashBackends.map((b) => [b.name, b] as const))("eraseOwner after a crash (%s)", (_name, backend) => {
  it("a run killed with SIGKILL part way is finished by the next; nothing of the owner is readable afterwards", {
    timeout: 240_000,
  }, async () => {
    const { store, url, done } = await freshStore(backend);
    try {
      const owner = "erase-me@example.com";
      const other = "keep-me";
      const ids = Array.from({ length: SESSIONS }, (_, i) => `s-${String(i).padStart(5, "0")}`);
      const batch = 50;
      for (let i = 0; i < ids.length; i += batch) {
        await Promise.all(
          ids.slice(i, i + batch).map(async (id, j) => {
            await store.save(counterSession(id), {
              expectedRevision: null,
              meta: { owner, title: `chat ${id}`, labels: { n: String(i + j) } },
            });
            if ((i + j) % 2 === 0)
              await store.messages.appendMessages(id, [user(`secret ${id}`)], { operationId: `op-${id}` });
          }),
        );
      }
      const kept = ["k-1", "k-2"];
      for (const id of kept) {
        await store.save(counterSession(id), { expectedRevision: null, meta: { owner: other } });
        await store.messages.appendMessages(id, [user("kept")], { operationId: `op-${id}` });
      }

      const killed = await eraseAndKill(url, owner, 300);
      expect(killed.signal).toBe("SIGKILL");
      expect(killed.finished).toBe(false);
      const left = await listAllIds(store, owner, "id");
      expect(left.length).toBeGreaterThan(0);
      expect(left.length).toBeLessThanOrEqual(SESSIONS - killed.reported);

      const receipt = await store.eraseOwner(owner);
      expect(receipt).toMatchObject({ owner: ownerDigest(owner), sessions: left.length, complete: true });
      expect(receipt.owner).not.toContain("example.com");
      expect(Date.parse(receipt.finishedAt)).toBeGreaterThanOrEqual(Date.parse(receipt.startedAt));

      // Nothing of the owner: get, list (both orders), scan, message logs; a rerun removes nothing.
      for (const id of ids) expect(await store.get(id)).toBeUndefined();
      expect(await listAllIds(store, owner, "id")).toEqual([]);
      expect(await listAllIds(store, owner, "updatedAt desc")).toEqual([]);
      const scanned = [];
      for (let cursor: string | undefined, first = true; first || cursor; first = false) {
        const page = await store.scan({ cursor, limit: 1000 });
        scanned.push(...page.items);
        cursor = page.cursor;
      }
      expect(scanned.map((i) => i.id).sort()).toEqual(kept);
      expect(scanned.every((i) => i.meta?.owner === other)).toBe(true);
      const versions = await Promise.all(ids.map((id) => store.messages.readMessages(id).then((r) => r.version)));
      expect(versions.filter((v) => v !== 0)).toEqual([]);
      expect(await store.eraseOwner(owner)).toMatchObject({ sessions: 0, messageLogs: 0, complete: true });

      for (const id of kept) expect((await store.messages.getMessages(id)).length).toBe(1);
      expect((await listAllIds(store, other, "id")).sort()).toEqual(kept);
    } finally {
      await done();
    }
  });
});

describe.each(allBackends.filter((b) => b.name === "redis").map((b) => [b.name, b] as const))(
  "eraseOwner on Redis's owner index (%s)",
  (_name, backend) => {
    it("finds a session whose index entry is stale, and drops the owner's index keys (orphaned entries too)", {
      timeout: 120_000,
    }, async () => {
      const { store, done } = await freshStore(backend);
      const redis = store as RedisSessionStore;
      try {
        const owner = "stale-owner";
        await store.save(counterSession("a"), { expectedRevision: null, meta: { owner, labels: { topic: "x" } } });
        await store.save(counterSession("b"), { expectedRevision: null, meta: { owner } });
        const o = redis.keys.owner(owner);
        await redis.call("test", true, async (c) => {
          // "a": a candidate with the wrong time and revision; "ghost": a pending candidate of a save that never happened.
          await c.hset(o.om, "a", JSON.stringify([{ u: 1, r: 1, l: { topic: "x" }, w: Date.now() }]));
          await c.hset(o.om, "ghost", JSON.stringify([{ u: 5, r: 0, l: { topic: "private" }, w: Date.now() }]));
          await (c as unknown as { zadd(k: string, s: number, m: string): Promise<number> }).zadd(o.oi, 0, "ghost");
        });
        const receipt = await store.eraseOwner(owner);
        expect(receipt.sessions).toBe(2);
        expect(await store.get("a")).toBeUndefined();
        const left = await redis.call("test", false, (c) => c.exists(o.ou, o.oi, o.om));
        expect(left).toBe(0);
      } finally {
        await done();
      }
    });
  },
);

describe("openStore retention options", () => {
  it("takes ?retentionMaxAge= / ?retentionMaxIdle= from any store URL, and the option over them", async () => {
    const a = await openStore("memory:?retentionMaxAge=90d&retentionMaxIdle=12h");
    expect(a.retention).toEqual({ default: { maxAgeMs: 90 * 86_400_000, maxIdleMs: 12 * 3_600_000 } });
    const b = await openStore("memory:?retentionMaxIdle=1000", {
      retention: { default: { maxAgeMs: 5 }, owners: { vip: {} } },
    });
    expect(b.retention).toEqual({ default: { maxAgeMs: 5 }, owners: { vip: {} } });
    await expect(openStore("memory:?retentionMaxAge=soon")).rejects.toThrow(/duration/);
    await Promise.all([a.close(), b.close()]);
  });
});
