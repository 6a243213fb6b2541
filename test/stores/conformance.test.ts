/**
 * One conformance suite, run unchanged against every store: memory, SQLite, PostgreSQL, Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { compareIds } from "../../src/runtime/stores/common.js";
import { ConflictError, InvalidIdError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/stores/open.js";
import type { SessionCodec, SessionStore } from "../../src/runtime/stores/types.js";
import { allBackends, counterOf, counterSession, scaleOutBackends, sleep, type Backend } from "./helpers.js";

const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });
const texts = (messages: ChatMessage[]) => messages.map((m) => (m.contents[0] as { text: string }).text);

async function conflictOf(promise: Promise<unknown>): Promise<ConflictError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConflictError);
  return error as ConflictError;
}

describe.each([...allBackends, ...scaleOutBackends])("$name store", (backend: Backend) => {
  let store: SessionStore;
  let url: string;
  let cleanup: () => Promise<void>;
  let n = 0;
  const id = (label: string) => `${label}-${++n}`;

  beforeAll(async () => {
    ({ url, cleanup } = await backend.location());
    store = await openStore(url);
  });
  afterAll(async () => {
    await store?.close();
    await cleanup?.();
  });

  describe("ids", () => {
    // Ids that differ only in a lone surrogate (or hold a NUL) would share one record on PostgreSQL
    // and Redis (both store U+FFFD instead) and come back changed from SQLite's scan.
    const illFormed = ["user-\udbff", "user-\ud800", "\udc00-user", "a\udc00\ud800b", "user-\u0000"];

    it("refuses ill-formed ids in every operation, writing nothing", async () => {
      const log = store.messages;
      for (const bad of illFormed) {
        const refused = async (promise: Promise<unknown>) => {
          const error = await promise.then(() => undefined, (e: unknown) => e);
          expect(error).toBeInstanceOf(InvalidIdError);
          expect((error as InvalidIdError).code).toBe("invalid-id");
          expect((error as InvalidIdError).hint).toMatch(/well-formed/);
        };
        await refused(store.get(bad));
        await refused(store.save(counterSession(bad, 1), { expectedRevision: null }));
        await refused(store.delete(bad));
        await refused(log.appendMessages(bad, [user("x")], { operationId: "op" }));
        await refused(log.appendMessages("fine", [user("x")], { operationId: bad }));
        await refused(log.getMessages(bad));
        await refused(log.readMessages(bad));
        await refused(log.replaceMessages(bad, [user("x")]));
        await refused(log.trimMessages(bad, { keepLast: 0 }));
        await refused(log.deleteMessages(bad));
      }
      expect(await log.getMessages("fine")).toEqual([]);
    });

    it("keeps ids that look alike apart, and scan returns them exactly as saved", async () => {
      const prefix = id("alike");
      const ids = [`${prefix}-\ufffd`, `${prefix}-\u{10FFFF}`, `${prefix}-\u{1F600}`, `${prefix}-e\u0301`, `${prefix}-\u00e9`];
      for (const [i, sid] of ids.entries()) await store.save(counterSession(sid, i), { expectedRevision: null });
      for (const [i, sid] of ids.entries()) expect(counterOf((await store.get(sid))!.session)).toBe(i);
      const scanned: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.scan({ cursor, limit: 1000 });
        scanned.push(...page.items.map((item) => item.id));
        cursor = page.cursor;
      } while (cursor);
      expect(scanned.filter((sid) => sid.startsWith(prefix)).sort(compareIds)).toEqual([...ids].sort(compareIds));
    });
  });

  describe("sessions", () => {
    it("get of an unknown id is undefined", async () => {
      expect(await store.get(id("missing"))).toBeUndefined();
    });

    it("creates with expectedRevision: null and loads what it saved", async () => {
      const s = counterSession(id("create"), 1);
      s.kind = "hosted"; // a conversation id belongs to a hosted session (a local one with it is refused)
      s.conversationId = { responses: "resp_1" };
      const revision = await store.save(s, { expectedRevision: null });
      expect(Number.isSafeInteger(revision) && revision > 0).toBe(true);
      expect(await store.get(s.id)).toEqual({ session: s, revision });
    });

    it("create-if-absent conflicts when the session exists, and writes nothing", async () => {
      const s = counterSession(id("dup"), 1);
      const revision = await store.save(s, { expectedRevision: null });
      const error = await conflictOf(store.save(counterSession(s.id, 99), { expectedRevision: null }));
      expect(error.code).toBe("conflict");
      expect(error.expectedRevision).toBeNull();
      expect(error.currentRevision).toBe(revision);
      expect(error.message).toContain(s.id);
      expect(error.hint).toBeTruthy();
      expect(counterOf((await store.get(s.id))!.session)).toBe(1);
    });

    it("leaving expectedRevision out never overwrites blindly", async () => {
      const s = counterSession(id("blind"), 1);
      await store.save(s, undefined as never);
      await conflictOf(store.save(counterSession(s.id, 2), {} as never));
      expect(counterOf((await store.get(s.id))!.session)).toBe(1);
    });

    it("compare-and-swap: the loaded revision saves, a stale one conflicts", async () => {
      const s = counterSession(id("cas"), 0);
      const r1 = await store.save(s, { expectedRevision: null });
      const r2 = await store.save(counterSession(s.id, 1), { expectedRevision: r1 });
      expect(r2).toBeGreaterThan(r1);
      const error = await conflictOf(store.save(counterSession(s.id, 100), { expectedRevision: r1 }));
      expect(error.expectedRevision).toBe(r1);
      expect(error.currentRevision).toBe(r2);
      const loaded = await store.get(s.id);
      expect(loaded!.revision).toBe(r2);
      expect(counterOf(loaded!.session)).toBe(1);
    });

    it("saving with a revision of an absent session conflicts with current null", async () => {
      const error = await conflictOf(store.save(counterSession(id("ghost")), { expectedRevision: 5 }));
      expect(error.currentRevision).toBeNull();
    });

    it("revisions keep increasing across delete and re-create (no ABA)", async () => {
      const s = counterSession(id("aba"));
      const r1 = await store.save(s, { expectedRevision: null });
      const r2 = await store.save(s, { expectedRevision: r1 });
      expect(await store.delete(s.id)).toBe(true);
      const r3 = await store.save(s, { expectedRevision: null });
      expect(r3).toBeGreaterThan(r2);
      await conflictOf(store.save(s, { expectedRevision: r1 }));
    });

    it("delete: unconditional, conditional, conflicting", async () => {
      const s = counterSession(id("del"));
      expect(await store.delete(s.id)).toBe(false);
      const r1 = await store.save(s, { expectedRevision: null });
      const error = await conflictOf(store.delete(s.id, { expectedRevision: r1 + 1000 }));
      expect(error.currentRevision).toBe(r1);
      expect(await store.get(s.id)).toBeDefined();
      expect(await store.delete(s.id, { expectedRevision: r1 })).toBe(true);
      expect(await store.get(s.id)).toBeUndefined();
      expect(await store.delete(s.id)).toBe(false);
      expect((await conflictOf(store.delete(s.id, { expectedRevision: r1 }))).currentRevision).toBeNull();
    });

    it("keeps no shared objects: mutating a saved or loaded session changes nothing stored", async () => {
      const s = counterSession(id("copy"), 1);
      const r1 = await store.save(s, { expectedRevision: null });
      (s.stateBag.counter as unknown as { value: number }).value = 42;
      const a = await store.get(s.id);
      expect(counterOf(a!.session)).toBe(1);
      (a!.session.stateBag.counter as unknown as { value: number }).value = 7;
      expect(counterOf((await store.get(s.id))!.session)).toBe(1);
      expect((await store.get(s.id))!.revision).toBe(r1);
    });

    it("stores exactly the serializer's text (no re-ordering), non-ASCII and large documents included", async () => {
      const s: AgentSession = {
        stateBag: {
          zeta: { value: "Ünïcødé 🎉 \u2028 \"quoted\"", $type: "test.Blob", $version: 1 },
          alpha: { $type: "test.Blob", big: "x".repeat(300_000) },
        },
        id: id("bytes-é"),
      };
      await store.save(s, { expectedRevision: null });
      const loaded = await store.get(s.id);
      expect(loaded!.session).toEqual(s);
      const expected = defaultSessionCodec().serialize(s);
      let text: string | undefined;
      for (let cursor: string | undefined, first = true; first || cursor; first = false) {
        const page = await store.scan({ cursor, includeText: true, limit: 1000 });
        text ??= page.items.find((item) => item.id === s.id)?.text;
        cursor = page.cursor;
      }
      expect(text).toBe(expected);
    });

    it("refuses an invalid session before writing anything", async () => {
      const sid = id("invalid");
      const bad = { id: sid, stateBag: { counter: 5 } } as unknown as AgentSession;
      await expect(store.save(bad, { expectedRevision: null })).rejects.toThrow(/stateBag\/counter|counter/);
      expect(await store.get(sid)).toBeUndefined();
      const r1 = await store.save(counterSession(sid, 1), { expectedRevision: null });
      await expect(store.save(bad, { expectedRevision: r1 })).rejects.toThrow();
      expect((await store.get(sid))!.revision).toBe(r1);
      await expect(store.save({ stateBag: {} } as unknown as AgentSession, { expectedRevision: null })).rejects.toBeInstanceOf(ConfigurationError);
      await expect(store.save(counterSession(id("badrev")), { expectedRevision: 0 })).rejects.toBeInstanceOf(ConfigurationError);
    });

    it("goes through the injected codec: validate on save, migrate on load", async () => {
      const base = defaultSessionCodec();
      const calls = { serialize: 0, deserialize: 0 };
      const codec: SessionCodec = {
        serialize(session) {
          calls.serialize++;
          if (counterOf(session) < 0) throw new Error("negative counters are invalid");
          return base.serialize(session);
        },
        deserialize(text) {
          calls.deserialize++;
          const session = base.deserialize(text);
          // A "migration": v1 counters stored tens, the current shape stores units.
          const counter = session.stateBag.counter as unknown as { value: number; unit?: string };
          if (counter.unit === "tens") session.stateBag.counter = { $type: "test.Counter", value: counter.value * 10 };
          return session;
        },
      };
      const { url: u2, cleanup: c2 } = await backend.location();
      const custom = await openStore(u2, { codec });
      try {
        const sid = id("codec");
        await custom.save(counterSession(sid, 4, { unit: "tens" }), { expectedRevision: null });
        expect(counterOf((await custom.get(sid))!.session)).toBe(40);
        await expect(custom.save(counterSession(id("neg"), -1), { expectedRevision: null })).rejects.toThrow("negative");
        expect(calls).toEqual({ serialize: 2, deserialize: 1 });
      } finally {
        await custom.close();
        await c2();
      }
    });

    it("scans in pages: every id once, in byte order, with or without text", async () => {
      const { url: u2, cleanup: c2 } = await backend.location();
      const s2 = await openStore(u2);
      try {
        const ids = Array.from({ length: 23 }, (_, i) => `scan-${String(i).padStart(2, "0")}`).concat(["scan-Ω", "scan-é", "scan-Z", "scan-😀"]);
        for (const sid of ids) await s2.save(counterSession(sid), { expectedRevision: null });
        await s2.delete("scan-05");
        const expected = ids.filter((x) => x !== "scan-05").sort(compareIds);
        const seen: string[] = [];
        let pages = 0;
        for (let cursor: string | undefined, first = true; first || cursor; first = false) {
          const page = await s2.scan({ cursor, limit: 10 });
          pages++;
          expect(page.items.length).toBeLessThanOrEqual(10);
          for (const item of page.items) {
            expect(item.text).toBeUndefined();
            expect(item.revision).toBe((await s2.get(item.id))!.revision);
          }
          seen.push(...page.items.map((item) => item.id));
          cursor = page.cursor;
        }
        expect(seen).toEqual(expected);
        expect(pages).toBe(3);
        const withText = await s2.scan({ limit: 2, includeText: true });
        expect(withText.items.map((i) => defaultSessionCodec().deserialize(i.text!).id)).toEqual(expected.slice(0, 2));
        expect(withText.cursor).toBe(expected[1]);
        await expect(s2.scan({ limit: 0 })).rejects.toBeInstanceOf(ConfigurationError);
        expect((await s2.scan({ cursor: expected[expected.length - 1] })).items).toEqual([]);
      } finally {
        await s2.close();
        await c2();
      }
    });

    it("expires a session saved with a time to live", async () => {
      const s = counterSession(id("ttl"), 1);
      const r1 = await store.save(s, { expectedRevision: null, ttlMs: 250 });
      expect((await store.get(s.id))!.revision).toBe(r1);
      const keep = counterSession(id("ttl-keep"), 1);
      const k1 = await store.save(keep, { expectedRevision: null, ttlMs: 250 });
      await store.save(keep, { expectedRevision: k1 }); // saved again without a TTL: kept
      await sleep(600);
      expect(await store.get(s.id)).toBeUndefined();
      expect(await store.get(keep.id)).toBeDefined();
      const all: string[] = [];
      for (let cursor: string | undefined, first = true; first || cursor; first = false) {
        const page = await store.scan({ cursor, limit: 1000 });
        all.push(...page.items.map((i) => i.id));
        cursor = page.cursor;
      }
      expect(all).not.toContain(s.id);
      expect(all).toContain(keep.id);
      expect((await conflictOf(store.save(s, { expectedRevision: r1 }))).currentRevision).toBeNull();
      expect(await store.purgeExpired()).toBeGreaterThanOrEqual(0);
      const r2 = await store.save(counterSession(s.id, 2), { expectedRevision: null });
      expect(r2).toBeGreaterThan(r1);
      expect(counterOf((await store.get(s.id))!.session)).toBe(2);
      await expect(store.save(s, { expectedRevision: r2, ttlMs: -1 })).rejects.toBeInstanceOf(ConfigurationError);
    });
  });

  describe("message log", () => {
    it("appends in order and is idempotent per operation id", async () => {
      const log = store.messages;
      const sid = id("log");
      expect(await log.getMessages(sid)).toEqual([]);
      expect(await log.readMessages(sid)).toEqual({ messages: [], version: 0 });
      const a = await log.appendMessages(sid, [user("a"), user("b")], { operationId: "turn-1" });
      expect(a.applied).toBe(true);
      const again = await log.appendMessages(sid, [user("a"), user("b")], { operationId: "turn-1" });
      expect(again).toEqual({ applied: false, version: a.version });
      const c = await log.appendMessages(sid, [user("c")], { operationId: "turn-2" });
      expect(c.version).toBeGreaterThan(a.version);
      expect(texts(await log.getMessages(sid))).toEqual(["a", "b", "c"]);
      expect(texts(await log.getMessages(sid, { last: 2 }))).toEqual(["b", "c"]);
      expect(await log.getMessages(sid, { last: 0 })).toEqual([]);
      expect(await log.getMessages(sid)).toEqual([user("a"), user("b"), user("c")]);
      const snapshot = await log.readMessages(sid);
      expect(snapshot.version).toBe(c.version);
      expect(texts(snapshot.messages)).toEqual(["a", "b", "c"]);
      expect(await log.getMessages(id("other-log"))).toEqual([]);
    });

    it("concurrent appends all land once, retried ones are not duplicated", async () => {
      const log = store.messages;
      const sid = id("log-concurrent");
      const ops = Array.from({ length: 20 }, (_, i) => i);
      const results = await Promise.all(
        [...ops, ...ops.slice(0, 8)].map((i) => log.appendMessages(sid, [user(`m${i}-1`), user(`m${i}-2`)], { operationId: `op-${i}` })),
      );
      expect(results.filter((r) => r.applied)).toHaveLength(20);
      const got = texts(await log.getMessages(sid));
      expect(got).toHaveLength(40);
      expect(new Set(got).size).toBe(40);
      for (const i of ops) expect(got.indexOf(`m${i}-2`)).toBe(got.indexOf(`m${i}-1`) + 1);
    });

    it("replaces and trims for reduction, with a version check", async () => {
      const log = store.messages;
      const sid = id("log-reduce");
      for (let i = 0; i < 6; i++) await log.appendMessages(sid, [user(`m${i}`)], { operationId: `t${i}` });
      const seen = await log.readMessages(sid);
      await log.appendMessages(sid, [user("late")], { operationId: "late" });
      const error = await conflictOf(log.replaceMessages(sid, [user("summary")], { expectedVersion: seen.version }));
      expect(error.message).toContain("message log");
      expect(texts(await log.getMessages(sid))).toHaveLength(7);
      const fresh = await log.readMessages(sid);
      const v = await log.replaceMessages(sid, [user("summary"), ...fresh.messages.slice(-2)], { expectedVersion: fresh.version, operationId: "reduce-1" });
      expect(v).toBeGreaterThan(fresh.version);
      expect(await log.replaceMessages(sid, [user("again")], { operationId: "reduce-1" })).toBe(v);
      expect(texts(await log.getMessages(sid))).toEqual(["summary", "m5", "late"]);
      await log.appendMessages(sid, [user("after")], { operationId: "after" });
      expect(texts(await log.getMessages(sid))).toEqual(["summary", "m5", "late", "after"]);
      expect(texts(await log.getMessages(sid, { last: 1 }))).toEqual(["after"]);
      // A retried append from before the reduction still does not come back.
      expect((await log.appendMessages(sid, [user("m0")], { operationId: "t0" })).applied).toBe(false);
      expect(await log.trimMessages(sid, { keepLast: 2 })).toBe(2);
      expect(texts(await log.getMessages(sid))).toEqual(["late", "after"]);
      expect(await log.trimMessages(sid, { keepLast: 5 })).toBe(0);
      const before = await log.readMessages(sid);
      await conflictOf(log.trimMessages(sid, { keepLast: 0, expectedVersion: before.version - 1 }));
      expect(await log.trimMessages(sid, { keepLast: 0, expectedVersion: before.version })).toBe(2);
      expect(await log.getMessages(sid)).toEqual([]);
      await log.appendMessages(sid, [user("z")], { operationId: "z" });
      expect(texts(await log.getMessages(sid))).toEqual(["z"]);
      expect(await log.replaceMessages(id("log-new"), [user("x")], { expectedVersion: 0 })).toBeGreaterThan(0);
    });

    it("deletes a log with its operation ids", async () => {
      const log = store.messages;
      const sid = id("log-delete");
      await log.appendMessages(sid, [user("a")], { operationId: "op" });
      expect(await log.deleteMessages(sid)).toBe(true);
      expect(await log.readMessages(sid)).toEqual({ messages: [], version: 0 });
      expect(await log.deleteMessages(sid)).toBe(false);
      expect((await log.appendMessages(sid, [user("b")], { operationId: "op" })).applied).toBe(true);
      expect(texts(await log.getMessages(sid))).toEqual(["b"]);
    });

    it("refuses an invalid message without consuming the operation id", async () => {
      const log = store.messages;
      const sid = id("log-invalid");
      const bad = { contents: [] } as unknown as ChatMessage;
      await expect(log.appendMessages(sid, [user("ok"), bad], { operationId: "op" })).rejects.toThrow(/message 1/);
      expect(await log.getMessages(sid)).toEqual([]);
      expect((await log.appendMessages(sid, [user("ok")], { operationId: "op" })).applied).toBe(true);
      await expect(log.appendMessages(sid, [user("x")], {} as never)).rejects.toBeInstanceOf(ConfigurationError);
    });
  });
});
