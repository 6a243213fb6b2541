/**
 * storeConformance itself: a store that breaks the contract fails it, with a message naming the
 * clause; declared skips are reported, undeclared or mistyped ones refused; the options are checked.
 * The kit runs here on a minimal runner that records and then runs what it registered, so each
 * case's outcome can be inspected.
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError, type AgentSession } from "../../src/index.js";
import { MemorySessionStore, type SaveOptions, type SessionStore } from "../../src/stores.js";
import { storeConformance, type StoreConformanceOptions, type StoreConformanceRunner } from "../../src/testing.js";

type Body = () => Promise<void>;
interface Suite {
  name: string;
  before: Body[];
  after: Body[];
  children: Array<Suite | { name: string; body?: Body }>;
}
interface Outcome {
  title: string;
  status: "passed" | "failed" | "skipped";
  error?: Error;
}

/** A test runner in 40 lines: describe/it/it.skip/beforeAll/afterAll, then `run()` in order. */
function recordingRunner(options: { withSkip?: boolean } = {}) {
  const root: Suite = { name: "", before: [], after: [], children: [] };
  let current = root;
  const it = (name: string, body: Body) => void current.children.push({ name, body });
  const runner: StoreConformanceRunner = {
    describe(name, body) {
      const suite: Suite = { name, before: [], after: [], children: [] };
      current.children.push(suite);
      const parent = current;
      current = suite;
      body();
      current = parent;
    },
    it:
      options.withSkip === false
        ? it
        : Object.assign(it, { skip: (name: string) => void current.children.push({ name }) }),
    beforeAll: (fn) => void current.before.push(fn),
    afterAll: (fn) => void current.after.push(fn),
  };
  async function run(suite: Suite = root, path: string[] = []): Promise<Outcome[]> {
    const outcomes: Outcome[] = [];
    for (const fn of suite.before) await fn();
    for (const child of suite.children) {
      const title = [...path, child.name].join(" › ");
      if ("children" in child) outcomes.push(...(await run(child, [...path, child.name])));
      else if (!child.body) outcomes.push({ title, status: "skipped" });
      else {
        try {
          await child.body();
          outcomes.push({ title, status: "passed" });
        } catch (error) {
          outcomes.push({ title, status: "failed", error: error as Error });
        }
      }
    }
    for (const fn of suite.after) await fn();
    return outcomes;
  }
  return { runner, run };
}

/** A memory store whose save ignores expectedRevision: it always overwrites (the lost update). */
class OverwritingStore extends MemorySessionStore {
  override async save(session: AgentSession, options: SaveOptions): Promise<number> {
    const current = typeof session?.id === "string" ? await this.get(session.id).catch(() => undefined) : undefined;
    return super.save(session, { ...options, expectedRevision: current?.revision ?? null });
  }
}

async function runKit(options: Omit<StoreConformanceOptions, "runner">, runnerOptions?: { withSkip?: boolean }) {
  const { runner, run } = recordingRunner(runnerOptions);
  storeConformance({ ...options, runner });
  return run();
}

describe("storeConformance", () => {
  it("passes statebag's memory store: every case runs and passes", async () => {
    const outcomes = await runKit({
      name: "memory",
      open: ({ codec, messageCodec, blobs }) => new MemorySessionStore({ codec, messageCodec, blobs }),
    });
    expect(outcomes.filter((o) => o.status !== "passed")).toEqual([]);
    expect(outcomes.length).toBeGreaterThanOrEqual(25);
  });

  it("fails a store whose save ignores expectedRevision, naming the broken clauses", async () => {
    let opened = 0;
    let closed = 0;
    const outcomes = await runKit({
      name: "overwriting",
      open: ({ codec }) => (opened++, new OverwritingStore({ codec })),
      close: async (store: SessionStore) => {
        closed++;
        await store.close();
      },
    });
    const failed = outcomes.filter((o) => o.status === "failed");
    const cas = failed.find((o) =>
      o.title.endsWith("compare-and-swap: the loaded revision saves, a stale one conflicts"),
    );
    expect(cas, `failed: ${failed.map((o) => o.title).join("\n")}`).toBeDefined();
    expect(cas!.error!.message).toContain(
      "store contract violated: overwriting › sessions › compare-and-swap: the loaded revision saves, a stale one conflicts",
    );
    expect(cas!.error!.message).toContain(
      "a save with a stale expectedRevision must throw ConflictError (a lost update otherwise)",
    );
    expect(cas!.error!.message).toMatch(/but it resolved to \d+/);
    expect(cas!.error!.name).toBe("AssertionError");
    // The other clauses about expectedRevision fail too; the rest of the contract still passes.
    for (const clause of [
      "create-if-absent conflicts when the session exists",
      "leaving expectedRevision out never overwrites blindly",
      "saving with a revision of an absent session",
    ]) {
      expect(
        failed.map((o) => o.title).some((t) => t.includes(clause)),
        clause,
      ).toBe(true);
    }
    expect(outcomes.find((o) => o.title.endsWith("get of an unknown id is undefined"))!.status).toBe("passed");
    // This store ignores the message codec open() is given: only the clause about it may fail there.
    expect(
      outcomes
        .filter((o) => o.title.includes("message log ›") && !/codec/.test(o.title) && o.status !== "passed")
        .map((o) => o.title),
    ).toEqual([]);
    expect(closed).toBe(opened);
  });

  it("reports a store that throws instead of answering under the clause it was checking", async () => {
    class NoScan extends MemorySessionStore {
      override async scan(): Promise<never> {
        throw new Error("scan is not implemented");
      }
    }
    const outcomes = await runKit({ name: "no-scan", open: () => new NoScan() });
    const scan = outcomes.find((o) => o.title.includes("scans in pages"))!;
    expect(scan.status).toBe("failed");
    expect(scan.error!.message).toContain("store contract violated: no-scan › scan › scans in pages");
    expect(scan.error!.message).toContain("the store threw instead of following the contract");
    expect(scan.error!.message).toContain("Error: scan is not implemented");
  });

  it("fails a store that ignores the codec open() is given (validation and migrations would be bypassed)", async () => {
    const outcomes = await runKit({ name: "codec-less", open: () => new MemorySessionStore() });
    const codec = outcomes.find((o) => o.title.includes("goes through the injected codec"))!;
    expect(codec.status).toBe("failed");
    expect(codec.error!.message).toContain(
      "get must return what the codec's deserialize (a migration) made of the stored text",
    );
    // Only the clauses about the injected codecs fail (the codec itself, and the context it is given).
    const failed = outcomes.filter((o) => o.status === "failed").map((o) => o.title);
    expect(failed.length).toBeGreaterThanOrEqual(1);
    for (const title of failed) expect(title).toMatch(/codec/);
  });

  it("skips only the capabilities declared up front, saying why, and still runs the rest", async () => {
    const outcomes = await runKit({
      name: "partial",
      open: ({ codec, messageCodec, blobs }) => new MemorySessionStore({ codec, messageCodec, blobs }),
      skip: { scan: "no ordered index", messageLog: "sessions only" },
    });
    const skipped = outcomes.filter((o) => o.status === "skipped");
    expect(skipped.map((o) => o.title)).toContain(
      "partial: statebag SessionStore contract › scan › scans in pages: every id once, in byte order, with or without text (skipped: the store declares no scan: no ordered index)",
    );
    expect(
      skipped.some((o) =>
        o.title.includes("scan leaves expired sessions out (skipped: the store declares no scan: no ordered index)"),
      ),
    ).toBe(true);
    const logCases = outcomes.filter((o) => o.title.includes("message log ›"));
    expect(logCases.length).toBeGreaterThanOrEqual(5);
    expect(logCases.filter((o) => o.status !== "skipped")).toEqual([]);
    expect(outcomes.filter((o) => o.status === "failed")).toEqual([]);
    expect(outcomes.find((o) => o.title.endsWith("keeps ids that look alike apart"))!.status).toBe("passed");
    expect(outcomes.find((o) => o.title.endsWith("expires a session saved with a time to live"))!.status).toBe(
      "passed",
    );
    // A runner without it.skip still lists them, by name, as skipped.
    const plain = await runKit(
      {
        name: "partial",
        open: ({ codec, messageCodec, blobs }) => new MemorySessionStore({ codec, messageCodec, blobs }),
        skip: { ttl: "no expiry" },
      },
      { withSkip: false },
    );
    expect(plain.filter((o) => o.title.includes("(skipped: the store declares no ttl: no expiry)"))).toHaveLength(2);
  });

  it("refuses unknown or unexplained skips and a runner without its functions", () => {
    const { runner } = recordingRunner();
    const open = () => new MemorySessionStore();
    expect(() => storeConformance({ name: "x", runner, open, skip: { transactions: "n/a" } as never })).toThrow(
      ConfigurationError,
    );
    expect(() => storeConformance({ name: "x", runner, open, skip: { ttl: "" } })).toThrow(
      /skip.ttl must be the reason/,
    );
    expect(() => storeConformance({ name: "x", runner: { describe: runner.describe, it: runner.it }, open })).toThrow(
      /runner.beforeAll \(or runner.before\)/,
    );
    expect(() => storeConformance({ name: "x", runner: {} as never, open })).toThrow(/describe and it/);
    expect(() => storeConformance({ name: "x", runner, open: undefined as never })).toThrow(/options.open/);
    const nodeStyle = { describe: runner.describe, it: runner.it, before: runner.beforeAll, after: runner.afterAll };
    expect(() => storeConformance({ name: "x", runner: nodeStyle, open })).not.toThrow();
  });
});
