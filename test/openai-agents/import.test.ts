/**
 * `statebag import --from openai-agents`: an items array and a RunState (a real one, from an
 * Agents SDK run on the stubbed model) into statebag sessions, through the CLI in-process: dry run
 * (nothing written), the loss report (text and --json), create-if-absent re-runs, refused input,
 * and a run imported while waiting for approval that resumes from the store.
 */
import { MemorySession, type RunState, run } from "@openai/agents-core";
import { afterAll, describe, expect, it } from "vitest";
import { StatebagSession } from "../../src/openai-agents.js";
import { openStore } from "../../src/stores.js";
import { cli, tempDir } from "../cli/helpers.js";
import { sampleItems } from "./contract.js";
import { HistoryModel, buildAgent, refunds } from "./model.js";

const tmp = tempDir("statebag-oa-import-");
afterAll(() => tmp.cleanup());

describe("statebag import --from openai-agents", () => {
  it("an items array: dry run writes nothing, reports the losses; the import gives back the same items; a re-run imports nothing twice", async () => {
    const file = tmp.file("chat-1.json", sampleItems);
    const url = `sqlite:${tmp.dir}/a.db`;
    const dry = await cli(["import", "--from", "openai-agents", file, "--store", url, "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const report = dry.json();
    expect(report).toMatchObject({ ok: true, dryRun: true, files: 1, wouldImport: 1, imported: 0, failed: 0 });
    expect(report.results[0]).toMatchObject({ session: "chat-1", source: "items", items: sampleItems.length });
    const kinds = report.losses.map((l: { what: string; count: number }) => `${l.what.split(" ")[0]}:${l.count}`);
    expect(kinds.sort()).toEqual(
      [
        "reasoning:1",
        "hosted_tool_call:1",
        "message:1",
        "computer_call:1",
        "compaction:1",
        "some_future_item:1",
      ].sort(),
    );
    for (const l of report.losses) expect(l.kept).toContain("verbatim");

    const store = await openStore(url);
    expect(await store.get("chat-1")).toBeUndefined();
    await store.close();

    const real = await cli(["import", "--from", "openai-agents", file, "--store", url]);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toContain("1 imported");
    expect(real.stdout).toContain("what had no statebag field, and how it was kept:");
    const again = await openStore(url);
    expect(await new StatebagSession({ store: again, sessionId: "chat-1" }).getItems()).toEqual(sampleItems);
    await again.close();

    const rerun = await cli(["import", "--from", "openai-agents", file, "--store", url, "--json"]);
    expect(rerun.json()).toMatchObject({ imported: 0, exists: 1, failed: 0 });
  });

  it("a RunState waiting for approval: the conversation and the run are imported, and the run resumes from the store", async () => {
    const agent = buildAgent(new HistoryModel());
    const memory = new MemorySession();
    const interrupted = await run(agent, "please refund order 7", { session: memory });
    expect(interrupted.interruptions).toHaveLength(1);
    const file = tmp.file("refund.json", interrupted.state.toString());
    const url = `sqlite:${tmp.dir}/b.db`;

    const out = await cli(["import", "--from", "openai-agents", file, "--store", url, "--json"]);
    expect(out.code, out.stderr).toBe(0);
    const report = out.json();
    expect(report.results[0]).toMatchObject({ session: "refund", source: "run-state", pendingApprovals: 1 });
    const whats = report.losses.map((l: { what: string }) => l.what);
    expect(whats.sort()).toEqual([
      "a run waiting for approval (1 tool call)",
      "ids of tool calls and results (transient: the Agents SDK drops them when it writes a session)",
    ]);

    const store = await openStore(url);
    try {
      const session = new StatebagSession({ store, sessionId: "refund" });
      expect(await session.getItems()).toEqual(await memory.getItems());
      const later = buildAgent(new HistoryModel());
      const state = await session.loadRunState<RunState<unknown, typeof later>>(later);
      state!.approve(state!.getInterruptions()[0]!);
      const before = refunds.length;
      const done = await run(later, state!, { session });
      expect(done.finalOutput).toBe("done: refunded order 7");
      expect(refunds.slice(before)).toEqual([7]);
      const types = (await session.getItems()).map((i) => i.type ?? "message");
      expect(types).toEqual(["message", "function_call", "function_call_result", "message"]);
    } finally {
      await store.close();
    }
  });

  it("a finished RunState: its conversation is imported, and the report says what of the run is not kept", async () => {
    const result = await run(buildAgent(new HistoryModel()), "hello");
    const file = tmp.file("done.json", result.state.toString());
    const out = await cli(["import", "--from", "openai-agents", file, "--store", `sqlite:${tmp.dir}/c.db`, "--json"]);
    const report = out.json();
    expect(report.results[0]).toMatchObject({
      source: "run-state",
      items: 2,
      pendingApprovals: 0,
      outcome: "imported",
    });
    expect(report.losses).toHaveLength(1);
    expect(report.losses[0].what).toContain("model responses");
    expect(report.losses[0].kept).toMatch(/^not kept/);
  });

  it("input that is neither an items array nor a RunState fails that file, says why, and writes nothing", async () => {
    const bad = tmp.file("bad.json", { hello: "world" });
    const good = tmp.file("good.json", [{ role: "user", content: "hi" }]);
    const url = `sqlite:${tmp.dir}/d.db`;
    const out = await cli(["import", "--from", "openai-agents", bad, good, "--store", url, "--json"]);
    expect(out.code).not.toBe(0);
    const report = out.json();
    expect(report).toMatchObject({ ok: false, failed: 1, imported: 1 });
    expect(report.results[0].error).toContain("not an OpenAI Agents SDK history");
    const store = await openStore(url);
    expect(await store.get("bad")).toBeUndefined();
    await store.close();
  });

  it("--id with several files is a usage error", async () => {
    const a = tmp.file("x.json", []);
    const out = await cli([
      "import",
      "--from",
      "openai-agents",
      a,
      a,
      "--id",
      "x",
      "--store",
      `sqlite:${tmp.dir}/e.db`,
    ]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("--id names one session");
  });
});
