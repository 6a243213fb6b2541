/**
 * Two calls answer the same approval at once (#21.2): one wins and continues the conversation, the
 * other writes nothing and ends with a typed ToolApprovalError. Before, the loser could run the
 * model again on the already-continued conversation (a second reply, even a new approval request).
 */
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { answerToolApprovals } from "../../src/runtime/agent/approval-store.js";
import {
  approveToolCall,
  pendingToolApprovals,
  rejectToolCall,
  ToolApprovalError,
} from "../../src/runtime/agent/approvals.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { withSession } from "../../src/runtime/stores/with-session.js";

/** Seeded PRNG (mulberry32): the interleavings differ per round and are the same on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pause = (next: () => number) =>
  new Promise<void>((resolve) => (next() < 0.5 ? setImmediate(resolve) : setTimeout(resolve, Math.floor(next() * 3))));

/** One answering process's view of the store: random pauses around loads and saves; counts the saves that went through. */
function process_(store: SessionStore, next: () => number) {
  const stats = { saves: 0 };
  const view = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "get") {
        return async (id: string) => {
          await pause(next);
          const loaded = await target.get(id);
          await pause(next);
          return loaded;
        };
      }
      if (prop === "save") {
        return async (session: AgentSession, options: Parameters<SessionStore["save"]>[1]) => {
          await pause(next);
          const revision = await target.save(session, options);
          stats.saves++;
          return revision;
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { view, stats };
}

function agentFor(runs: string[], next: () => number) {
  const wire: AITool = {
    name: "wire_money",
    requiresApproval: true,
    execute: async (args, context) => {
      runs.push(context.callId);
      await pause(next);
      return { sent: args.amount };
    },
  };
  const client = new ScriptedChatClient({
    rules: [
      {
        when: /wire/i,
        reply: {
          contents: [{ $type: "functionCall", callId: "call_w", name: "wire_money", arguments: { amount: 70 } }],
        },
      },
    ],
  });
  return { agent: new ChatClientAgent({ client, tools: [wire] }), client };
}

type Outcome = { ok: true; executed: string[]; text: string } | { ok: false; error: unknown };

async function race(round: number, answer: (id: string) => ReturnType<typeof approveToolCall>) {
  const next = random(round + 1);
  const base = new MemorySessionStore();
  const runs: string[] = [];
  const setup = agentFor(runs, next);
  const { value } = await withSession(base, "s1", (session) => setup.agent.run("wire 70 to Bob", session));
  const requestId = value.pendingApprovals![0].requestId;

  const sides = [0, 1].map(() => ({ ...process_(base, next), ...agentFor(runs, next) }));
  const outcomes: Outcome[] = await Promise.all(
    sides.map((side) =>
      answerToolApprovals(side.view, "s1", side.agent, [answer(requestId)]).then(
        (r): Outcome => ({ ok: true, executed: r.executed, text: r.response?.text ?? "" }),
        (error: unknown): Outcome => ({ ok: false, error }),
      ),
    ),
  );
  const stored = (await base.get("s1"))!.session;
  const history = await setup.agent.history.listMessages(stored);
  return { sides, outcomes, runs, stored, history, requestId };
}

describe("two calls answering the same approval at once", () => {
  for (const [name, answer, reply] of [
    ["approved", approveToolCall, 'The tool returned {"sent":70}.'],
    ["rejected", (id: string) => rejectToolCall(id, "no"), "rejected"],
  ] as const) {
    it(`${name}: one winner continues once; the loser writes nothing and gets a ToolApprovalError (80 seeded rounds)`, async () => {
      for (let round = 0; round < 80; round++) {
        const { sides, outcomes, runs, stored, history } = await race(round, answer);
        const context = `round ${round}: ${JSON.stringify(outcomes.map((o) => (o.ok ? o : { ok: false, code: (o.error as { code?: string }).code, message: String(o.error) })))}`;

        // No unrequested approval request: nothing waits, the history holds the one request.
        expect(pendingToolApprovals(stored), context).toEqual([]);
        const requests = history.flatMap((m) => m.contents).filter((c) => c.$type === "toolApprovalRequest");
        expect(requests, context).toHaveLength(1);
        // The tool ran at most once (exactly once when approved); the model was asked once to continue.
        expect(runs, context).toEqual(name === "approved" ? ["call_w"] : []);
        expect(sides[0].client.requests.length + sides[1].client.requests.length, context).toBe(1);
        expect(
          history.filter((m) => m.role === "assistant"),
          context,
        ).toHaveLength(2);

        // One winner, with the outcome it would have alone.
        const winners = outcomes.filter((o) => o.ok);
        expect(winners, context).toHaveLength(1);
        const winner = winners[0] as Extract<Outcome, { ok: true }>;
        expect(winner.text, context).toContain(reply);
        expect(winner.executed, context).toEqual(name === "approved" ? ["call_w"] : []);

        // The loser: a typed error, and no save of its own went through.
        const loserIndex = outcomes.findIndex((o) => !o.ok);
        const error = (outcomes[loserIndex] as { error: unknown }).error;
        expect(error, context).toBeInstanceOf(ToolApprovalError);
        expect(["tool-approval-answered", "tool-approval-in-progress"], context).toContain(
          (error as ToolApprovalError).code,
        );
        expect((error as ToolApprovalError).hint, context).toMatch(/reload the session/);
        expect(sides[loserIndex].stats.saves, context).toBe(0);
      }
    }, 60_000);
  }
});
