/** examples/approval.ts: process 1 stops at the approval, process 2 approves, the tool runs once (SQLite file). */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "statebag-approval-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function example(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO, "node_modules/tsx/dist/cli.mjs"), join(REPO, "examples/approval.ts"), ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, STATEBAG_STORE: `sqlite:${join(dir, "sessions.db")}`, STATEBAG_LEDGER: join(dir, "refunds.log") },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

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
