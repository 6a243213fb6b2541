/**
 * Child process for the cross-process approval race: answers the approval of one stored session
 * per round, at the same moment as a second process doing the same (the parent releases both per
 * round), and reports what happened.
 *
 *   node --import tsx answer-race.ts <storeUrl> <ledgerFile> <worker>
 * Messages: parent -> {round, id, delayMs}; worker -> {round, ok, code, typed, executed, saves, modelCalls}.
 */
import { appendFileSync } from "node:fs";
import { ChatClientAgent } from "../../../src/runtime/agent/agent.js";
import { answerToolApprovals } from "../../../src/runtime/agent/approval-store.js";
import { approveToolCall, ToolApprovalError } from "../../../src/runtime/agent/approvals.js";
import { ScriptedChatClient } from "../../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AgentSession } from "../../../src/runtime/core/session.js";
import { openStore } from "../../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../../src/runtime/stores/types.js";

const [url, ledger, worker] = process.argv.slice(2);
const store = await openStore(url);
const client = new ScriptedChatClient({
  rules: [
    {
      when: /wire/i,
      reply: { contents: [{ $type: "functionCall", callId: "call_w", name: "wire_money", arguments: { amount: 70 } }] },
    },
  ],
});
const agent = new ChatClientAgent({
  client,
  tools: [
    {
      name: "wire_money",
      requiresApproval: true,
      execute: (args, context) => {
        appendFileSync(ledger, `${context.sessionId} ${context.callId} ${worker}\n`);
        return { sent: args.amount };
      },
    },
  ],
});

let saves = 0;
const counted = new Proxy(store, {
  get(target, prop, receiver) {
    if (prop === "save") {
      return async (session: AgentSession, options: Parameters<SessionStore["save"]>[1]) => {
        const revision = await target.save(session, options);
        saves++;
        return revision;
      };
    }
    const value = Reflect.get(target, prop, receiver);
    return typeof value === "function" ? value.bind(target) : value;
  },
});

process.on("message", async (message: { round: number; id: string; requestId: string; delayMs: number } | "stop") => {
  if (message === "stop") {
    await store.close();
    process.exit(0);
  }
  const { round, id, requestId, delayMs } = message;
  saves = 0;
  const calls = client.requests.length;
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  try {
    const result = await answerToolApprovals(counted, id, agent, [approveToolCall(requestId)]);
    process.send!({ round, ok: true, executed: result.executed, saves, modelCalls: client.requests.length - calls });
  } catch (error) {
    const code = (error as { code?: string }).code;
    process.send!({
      round,
      ok: false,
      code,
      typed: error instanceof ToolApprovalError,
      message: String(error),
      saves,
      modelCalls: client.requests.length - calls,
    });
  }
});
process.send!("ready");
