/**
 * A tool that needs approval, answered by another process.
 *
 *   npx tsx examples/approval.ts start              # process 1: the model wants a refund; the run stops
 *   npx tsx examples/approval.ts approve <id>       # process 2: approves it; the refund runs, once
 *   npx tsx examples/approval.ts reject <id> [why]  # ... or rejects it; the model is told
 *
 * Nothing but the stored session carries over between the two: process 2 builds its agent again and
 * answers by request id. The refund tool appends to a ledger file next to the store, so you can see
 * it ran exactly once. Offline (ScriptedChatClient); STATEBAG_STORE picks the store (default SQLite).
 */
import { appendFileSync } from "node:fs";
import { answerToolApprovals, approveToolCall, ChatClientAgent, rejectToolCall, type AITool } from "statebag/agent";
import { StatebagError } from "statebag";
import { openStore, withSession } from "statebag/stores";
import { ScriptedChatClient } from "statebag/testing";

const ledger = process.env.STATEBAG_LEDGER ?? ".statebag/refunds.log";

/** Refunds above 100 need a person's approval; smaller ones go through. */
const refund: AITool = {
  name: "refund_order",
  description: "Refund an order",
  parameters: {
    type: "object",
    properties: { orderId: { type: "string" }, amount: { type: "number" } },
    required: ["orderId", "amount"],
  },
  requiresApproval: (args) => Number(args.amount) > 100,
  execute: ({ orderId, amount }, { callId }) => {
    appendFileSync(ledger, `${callId} refunded ${orderId} ${amount}\n`); // callId: a stable idempotency key
    return { refunded: amount, orderId };
  },
};

function buildAgent(): ChatClientAgent {
  const client = new ScriptedChatClient({
    rules: [
      {
        when: /refund order (\S+) of (\d+(?:\.\d+)?)/i,
        reply: (ctx) => {
          const [, orderId, amount] = /refund order (\S+) of (\d+(?:\.\d+)?)/i.exec(ctx.text)!;
          return { toolCall: { name: "refund_order", arguments: { orderId, amount: Number(amount) } } };
        },
      },
    ],
  });
  return new ChatClientAgent({ client, name: "support", tools: [refund] });
}

async function main(): Promise<void> {
  const [command, id, ...why] = process.argv.slice(2);
  const store = await openStore(process.env.STATEBAG_STORE || undefined);
  try {
    const agent = buildAgent();
    if (command === "start") {
      const sessionId = id ?? agent.createSession().id;
      const { value } = await withSession(store, sessionId, (session) =>
        agent.run("Please refund order A-1042 of 129.50", session),
      );
      for (const request of value.pendingApprovals ?? []) {
        const call = request.toolCall.$type === "functionCall" ? request.toolCall : undefined;
        console.log(`waiting for approval: ${call?.name} ${JSON.stringify(call?.arguments)}`);
        console.log(`session ${sessionId} request ${request.requestId}`);
      }
    } else if (command === "approve" || command === "reject") {
      if (!id) throw new Error(`usage: approval.ts ${command} <session id> [reason]`);
      const stored = await store.get(id);
      if (!stored) throw new Error(`no session ${id} in ${store.url}`);
      const pending = agent.pendingApprovals(stored.session);
      if (pending.length === 0) throw new Error(`session ${id} has no pending approval`);
      const reason = why.join(" ") || undefined;
      const answers = pending.map((r) =>
        command === "approve" ? approveToolCall(r.requestId, reason) : rejectToolCall(r.requestId, reason),
      );
      const result = await answerToolApprovals(store, id, agent, answers);
      console.log(
        `${command === "approve" ? "approved" : "rejected"}; ran: ${result.executed.join(", ") || "nothing"}`,
      );
      console.log(`agent: ${result.response?.text ?? ""}`);
    } else {
      throw new Error(
        "usage: approval.ts start [session id] | approve <session id> [reason] | reject <session id> [reason]",
      );
    }
  } finally {
    await store.close();
  }
}

main().catch((error: unknown) => {
  // A statebag error's hint is a field of its own: shown on the line after the message.
  const hint = error instanceof StatebagError ? `\n  hint: ${error.hint}` : "";
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}${hint}\n`);
  process.exitCode = 1;
});
