/**
 * #21.2 across processes: two processes answer the same approval at the same moment, through
 * SQLite and PostgreSQL, round after round. One continues the conversation; the other writes
 * nothing and ends with a ToolApprovalError; the tool runs once; the model is asked once.
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { pendingToolApprovals } from "../../src/runtime/agent/approvals.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import { available, postgresBackend, sqliteBackend, type Backend } from "../stores/helpers.js";

const ROUNDS = 30;
const worker = fileURLToPath(new URL("./workers/answer-race.ts", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "statebag-approval-race-"));
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

interface Report {
  round: number;
  ok: boolean;
  code?: string;
  typed?: boolean;
  message?: string;
  executed?: string[];
  saves: number;
  modelCalls: number;
}

function start(url: string, ledger: string, name: string) {
  const child: ChildProcess = fork(worker, [url, ledger, name], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const reports = new Map<number, (r: Report) => void>();
  child.on("message", (m: Report | "ready") => {
    if (m !== "ready") reports.get(m.round)?.(m);
  });
  const ready = new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`worker exited with ${code}: ${err}`)));
  });
  const answer = (round: number, id: string, requestId: string, delayMs: number) =>
    new Promise<Report>((resolve) => {
      reports.set(round, resolve);
      child.send({ round, id, requestId, delayMs });
    });
  const stop = () => new Promise<void>((resolve) => (child.once("exit", () => resolve()), child.send("stop")));
  return { ready, answer, stop };
}

const backends: Backend[] = [sqliteBackend, postgresBackend()].filter(available);

describe.each(backends)("$name: two processes answer the same approval at once", (backend) => {
  it(`one continues once, the other writes nothing and gets a ToolApprovalError (${ROUNDS} rounds)`, async () => {
    const { url, cleanup } = await backend.location();
    cleanups.push(cleanup);
    const store = await openStore(url);
    cleanups.push(() => store.close());
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient({
        rules: [
          {
            when: /wire/i,
            reply: {
              contents: [{ $type: "functionCall", callId: "call_w", name: "wire_money", arguments: { amount: 70 } }],
            },
          },
        ],
      }),
      tools: [{ name: "wire_money", requiresApproval: true, execute: () => ({ sent: 70 }) }],
    });
    const requests: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { value } = await withSession(store, `race-${round}`, (session) => agent.run("wire 70 to Bob", session));
      requests.push(value.pendingApprovals![0].requestId);
    }
    const ledger = join(dir, `${backend.name}.log`);
    const workers = [start(url, ledger, "a"), start(url, ledger, "b")];
    await Promise.all(workers.map((w) => w.ready));
    try {
      for (let round = 0; round < ROUNDS; round++) {
        // Which side starts first, and by how much, changes from round to round.
        const lag = round % 3;
        const reports = await Promise.all(
          workers.map((w, i) => w.answer(round, `race-${round}`, requests[round], i === round % 2 ? lag : 0)),
        );
        const context = `round ${round}: ${JSON.stringify(reports)}`;
        const winners = reports.filter((r) => r.ok);
        expect(winners, context).toHaveLength(1);
        expect(winners[0].executed, context).toEqual(["call_w"]);
        const loser = reports.find((r) => !r.ok)!;
        expect(loser.typed, context).toBe(true);
        expect(["tool-approval-answered", "tool-approval-in-progress"], context).toContain(loser.code);
        expect(loser.saves, context).toBe(0);
        expect(loser.modelCalls + winners[0].modelCalls, context).toBe(1);

        const stored = (await store.get(`race-${round}`))!.session;
        expect(pendingToolApprovals(stored), context).toEqual([]);
        const history = await agent.history.listMessages(stored);
        expect(
          history.flatMap((m) => m.contents).filter((c) => c.$type === "toolApprovalRequest"),
          context,
        ).toHaveLength(1);
        expect(
          history.filter((m) => m.role === "assistant"),
          context,
        ).toHaveLength(2);
      }
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    // The tool ran exactly once per session.
    const runs = readFileSync(ledger, "utf8")
      .trim()
      .split("\n")
      .map((line) => line.split(" ")[0]);
    expect(runs.sort()).toEqual(Array.from({ length: ROUNDS }, (_, round) => `race-${round}`).sort());
  }, 120_000);
});
