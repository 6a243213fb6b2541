/** examples/approval.ts: process 1 stops at the approval, process 2 approves, the tool runs once (SQLite file). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runExample, tempDir } from "../cli/helpers.js";

const tmp = tempDir("statebag-approval-");
const dir = tmp.dir;
afterAll(() => tmp.cleanup());

const example = (args: string[]) =>
  runExample("approval.ts", args, {
    env: { STATEBAG_STORE: `sqlite:${join(dir, "sessions.db")}`, STATEBAG_LEDGER: join(dir, "refunds.log") },
  });

describe("the approval example", () => {
  it("stops in one process and runs the approved tool exactly once in another", async () => {
    const start = await example(["start", "order-chat-1"]);
    expect(start.stderr).toBe("");
    expect(start.code).toBe(0);
    expect(start.stdout).toContain('waiting for approval: refund_order {"orderId":"A-1042","amount":129.5}');
    expect(() => readFileSync(join(dir, "refunds.log"))).toThrow(); // nothing ran

    const approve = await example(["approve", "order-chat-1", "verified"]);
    expect(approve.stderr).toBe("");
    expect(approve.code).toBe(0);
    expect(approve.stdout).toMatch(/approved; ran: call_\w+/);
    expect(approve.stdout).toContain('agent: The tool returned {"refunded":129.5,"orderId":"A-1042"}.');
    expect(readFileSync(join(dir, "refunds.log"), "utf8").trim().split("\n")).toHaveLength(1);

    // A second answer finds nothing pending; the tool does not run again.
    const again = await example(["approve", "order-chat-1"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("has no pending approval");
    expect(readFileSync(join(dir, "refunds.log"), "utf8").trim().split("\n")).toHaveLength(1);
  }, 60_000);
});
