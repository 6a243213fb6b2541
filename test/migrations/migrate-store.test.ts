/**
 * `migrateStore`: every stored session to the latest versions, page by page, compare-and-swap per
 * session; failures left exactly as stored; dry run writes nothing; re-runs are no-ops.
 * On every backend (PostgreSQL and Redis as in test/stores: the local test servers).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deserializeSession } from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { formatMigrateReport, migrateStore, type MigrateStoreReport } from "../../src/runtime/stores/migrate.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { allBackends, type Backend } from "../stores/helpers.js";
import { canonical, envelope, expectedV2, testRegistry, v1Session } from "./helpers.js";
import { seededStore, type SeededStore } from "./store-helpers.js";

const registry = testRegistry();
const ids = Array.from({ length: 40 }, (_, i) => `s-${String(i).padStart(3, "0")}`);

/** 40 v1 sessions, 2 current ones, 1 whose history is broken, 1 with a step that fails, 1 newer than this code. */
async function seedMixed(s: SeededStore): Promise<void> {
  for (const [i, id] of ids.entries()) await s.seed(v1Session(id, i), i === 3 ? 3_600_000 : undefined);
  await s.seed(expectedV2("current-1", 1));
  await s.seed(expectedV2("current-2", 2));
  const broken = v1Session("broken", 0);
  (broken.stateBag["statebag.chatHistory"] as unknown as { messages: unknown }).messages = "not a list";
  await s.seed(broken);
  // test.Visits v1 without "count": its migration returns visits NaN -> not an integer
  await s.seed({ id: "bad-step", stateBag: { visits: { $type: "test.Visits", page: "/x" } } });
  await s.seed({
    id: "newer",
    stateBag: {
      "statebag.chatHistory": { $type: "InMemoryChatHistoryState", $version: 4, messages: [], pinned: ["m1"] },
    },
  });
}

describe.each(allBackends)("migrateStore on $name", (backend: Backend) => {
  let s: SeededStore;
  let before: Map<string, { revision: number; text: string; ttlMs?: number }>;
  let afterDry: Map<string, { revision: number; text: string }>;
  let dry: MigrateStoreReport;
  let real: MigrateStoreReport;
  const progress: { done: number; cursor: string }[] = [];
  const pageSizes: number[] = [];

  beforeAll(async () => {
    s = await seededStore(backend);
    await seedMixed(s);
    before = await s.dump();
    // Record every page the migration asks for: it must never read more than one page at a time.
    const scan = s.store.scan.bind(s.store);
    let recording = true;
    s.store.scan = async (options) => {
      const page = await scan(options);
      if (recording) pageSizes.push(page.items.length);
      return page;
    };
    dry = await migrateStore(s.store, { registry, dryRun: true, batchSize: 7 });
    recording = false;
    afterDry = await s.dump();
    recording = true;
    real = await migrateStore(s.store, {
      registry,
      batchSize: 7,
      onProgress: (done, _total, p) => progress.push({ done, cursor: p.cursor }),
    });
    recording = false;
  });
  afterAll(async () => s?.done());

  it("dry run: reports what would change and what would fail, writes nothing", () => {
    expect(dry).toMatchObject({
      dryRun: true,
      scanned: 45,
      migrated: 40,
      unchanged: 3,
      failedCount: 2,
      preserved: 1,
      aborted: false,
    });
    expect(dry.failed.map((f) => f.id).sort()).toEqual(["bad-step", "broken"]);
    expect(formatMigrateReport(dry)).toContain("40 would migrate, 3 already current, 2 failed");
    const strip = (m: Map<string, { revision: number; text: string }>) =>
      [...m].map(([id, { revision, text }]) => [id, revision, text]);
    expect(strip(afterDry)).toEqual(strip(before));
  });

  it("migrates each old session once, with CAS, keeping its TTL; failures are left exactly as stored", async () => {
    expect(real).toMatchObject({
      dryRun: false,
      scanned: 45,
      migrated: 40,
      unchanged: 3,
      failedCount: 2,
      conflicts: 0,
      vanished: 0,
    });
    const after = await s.dump();
    for (const [i, id] of ids.entries()) {
      const loaded = await s.store.get(id);
      expect(canonical(loaded!.session)).toEqual(canonical(expectedV2(id, i)));
      expect(after.get(id)!.revision).toBeGreaterThan(before.get(id)!.revision);
      // Stored at the latest versions: nothing is left for load-time migration.
      const stored = JSON.parse(after.get(id)!.text).session.stateBag;
      expect([
        stored["statebag.chatHistory"].$version,
        stored["statebag.rollingSummary"].$version,
        stored.visits.$version,
      ]).toEqual([3, 2, 2]);
    }
    expect(after.get(ids[3])!.ttlMs).toBeGreaterThan(3_500_000);
    expect(after.get(ids[4])!.ttlMs).toBeUndefined();
    for (const id of ["current-1", "current-2", "broken", "bad-step", "newer"])
      expect(after.get(id)).toEqual(before.get(id));
  });

  it("reports failures with id, pointer and the type/versions involved", () => {
    const broken = real.failed.find((f) => f.id === "broken")!;
    expect(broken).toMatchObject({ pointer: "/session/stateBag/statebag.chatHistory/messages", code: "schema" });
    const badStep = real.failed.find((f) => f.id === "bad-step")!;
    expect(badStep).toMatchObject({ pointer: "/session/stateBag/visits/visits", code: "schema" });
    expect(badStep.revision).toBe(before.get("bad-step")!.revision);
  });

  it("summarises state values by type and version, before -> after; values kept verbatim count as they are", () => {
    expect(real.states).toEqual([
      { type: "InMemoryChatHistoryState", from: 1, toType: "InMemoryChatHistoryState", to: 3, count: 40 },
      { type: "InMemoryChatHistoryState", from: 3, toType: "InMemoryChatHistoryState", to: 3, count: 2 },
      { type: "InMemoryChatHistoryState", from: 4, toType: "InMemoryChatHistoryState", to: 4, count: 1 },
      { type: "RollingSummaryState", from: 1, toType: "RollingSummaryState", to: 2, count: 40 },
      { type: "RollingSummaryState", from: 2, toType: "RollingSummaryState", to: 2, count: 2 },
      { type: "test.Visits", from: 1, toType: "test.Visits", to: 2, count: 40 },
      { type: "test.Visits", from: 2, toType: "test.Visits", to: 2, count: 2 },
    ]);
    expect(real.values.map((v) => `${v.type} v${v.from}->v${v.to}: ${v.count}`)).toEqual([
      "InMemoryChatHistoryState v1->v3: 40",
      "RollingSummaryState v1->v2: 40",
      "test.Visits v1->v2: 40",
    ]);
  });

  it("pages through the store (never more than one page in memory) and reports progress per session", () => {
    expect(Math.max(...pageSizes)).toBe(7);
    expect(pageSizes.length).toBeGreaterThanOrEqual(2 * Math.ceil(45 / 7));
    expect(progress.map((p) => p.done)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect(progress.at(-1)!.cursor).toBe(real.cursor);
  });

  it("a second run changes nothing: every session is current or still failing", async () => {
    const stored = async () =>
      new Map([...(await s.dump())].map(([id, { revision, text }]) => [id, { revision, text }]));
    const snapshot = await stored();
    const again = await migrateStore(s.store, { registry, batchSize: 50 });
    expect(again).toMatchObject({ scanned: 45, migrated: 0, unchanged: 43, failedCount: 2 });
    expect(await stored()).toEqual(snapshot);
  });
});

describe("migrateStore and concurrent writers (memory)", () => {
  it("a session the application saves meanwhile is re-read and migrated from its new revision: nothing lost", async () => {
    const [backend] = allBackends;
    const s = await seededStore(backend);
    for (let i = 0; i < 5; i++) await s.seed(v1Session(`c-${i}`, i));
    // The application writes c-2 (still as v1, as old code would) right before the migration saves it.
    const save = s.store.save.bind(s.store);
    let raced = false;
    s.store.save = async (session: AgentSession, options) => {
      if (session.id === "c-2" && !raced) {
        raced = true;
        const old = v1Session("c-2", 2);
        (old.stateBag.visits as unknown as { count: number }).count = 100;
        const current = (await s.store.scan({ cursor: "c-1", limit: 1, includeText: true })).items[0];
        s.codec.raw.set("c-2", envelope(old));
        await save({ id: "c-2", stateBag: {} }, { expectedRevision: current.revision });
        s.codec.raw.delete("c-2");
      }
      return save(session, options);
    };
    const report = await migrateStore(s.store, { registry, batchSize: 2 });
    expect(report).toMatchObject({ migrated: 5, conflicts: 1, failedCount: 0 });
    const loaded = await s.store.get("c-2");
    expect(loaded!.session.stateBag.visits).toEqual({
      $type: "test.Visits",
      $version: 2,
      visits: 101,
      lastPage: "/p/2",
    });
    await s.done();
  });

  it("gives up on a session that keeps changing, leaving it to the next run", async () => {
    const s = await seededStore(allBackends[0]);
    await s.seed(v1Session("busy", 1));
    const save = s.store.save.bind(s.store);
    s.store.save = async (session, options) => {
      const current = (await s.store.scan({ limit: 1, includeText: true })).items[0];
      s.codec.raw.set("busy", current.text!);
      await save({ id: "busy", stateBag: {} }, { expectedRevision: current.revision }); // someone else wins every time
      s.codec.raw.delete("busy");
      return save(session, options);
    };
    const report = await migrateStore(s.store, { registry, maxConflictRetries: 3 });
    expect(report).toMatchObject({ migrated: 0, failedCount: 1, conflicts: 4 });
    expect(report.failed[0]).toMatchObject({ id: "busy", code: "conflict" });
    expect(deserializeSession((await s.dump()).get("busy")!.text, { registry }).stateBag.visits).toMatchObject({
      $version: 2,
    });
    await s.done();
  });

  it("a session deleted meanwhile is counted as gone, not failed", async () => {
    const s = await seededStore(allBackends[0]);
    for (let i = 0; i < 3; i++) await s.seed(v1Session(`d-${i}`, i));
    const save = s.store.save.bind(s.store);
    s.store.save = async (session, options) => {
      if (session.id === "d-1") await s.store.delete("d-1");
      return save(session, options);
    };
    const report = await migrateStore(s.store, { registry });
    expect(report).toMatchObject({ scanned: 3, migrated: 2, vanished: 1, failedCount: 0 });
    expect(await s.store.get("d-1")).toBeUndefined();
    await s.done();
  });

  it("stops on abort with a cursor; startAfter resumes after it", async () => {
    const s = await seededStore(allBackends[0]);
    for (let i = 0; i < 10; i++) await s.seed(v1Session(`a-${i}`, i));
    const controller = new AbortController();
    const first = await migrateStore(s.store, {
      registry,
      batchSize: 3,
      signal: controller.signal,
      onProgress: (done) => done === 4 && controller.abort(),
    });
    expect(first).toMatchObject({ aborted: true, scanned: 4, migrated: 4, cursor: "a-3" });
    expect(formatMigrateReport(first)).toContain('resume with startAfter: "a-3"');
    const rest = await migrateStore(s.store, { registry, batchSize: 3, startAfter: first.cursor });
    expect(rest).toMatchObject({ aborted: false, scanned: 6, migrated: 6 });
    expect((await migrateStore(s.store, { registry })).unchanged).toBe(10);
    await s.done();
  });

  it("refuses a bad batch size", async () => {
    const s = await seededStore(allBackends[0]);
    await expect(migrateStore(s.store as SessionStore, { batchSize: 0 })).rejects.toThrow(
      /batchSize must be an integer from 1 to 1000/,
    );
    await s.done();
  });
});
