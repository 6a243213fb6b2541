/** Tool approvals: a run stops at a call that needs approval; the answer may come after a restart. */
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import type { AgentResponse, AgentResponseUpdate } from "../../src/runtime/agent/response.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import {
  approveToolCall,
  rejectToolCall,
  TOOL_APPROVALS_KEY,
  ToolApprovalError,
  toolApprovalMessage,
  type ToolApprovalState,
} from "../../src/runtime/agent/approvals.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import type { AIContent, ChatMessage, FunctionCallContent } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { AgentGroupChat } from "../../src/runtime/group-chat/group-chat.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/validation/validate.js";

const call = (callId: string, name: string, args: FunctionCallContent["arguments"]): FunctionCallContent => ({
  $type: "functionCall",
  callId,
  name,
  arguments: args,
});

/** A refund tool that needs approval above 100, an order lookup that never does; both count their runs. */
function tools() {
  const runs: { name: string; args: unknown }[] = [];
  const refund: AITool = {
    name: "refund_order",
    description: "Refund an order",
    parameters: {
      type: "object",
      properties: { orderId: { type: "string" }, amount: { type: "number" } },
      required: ["orderId", "amount"],
    },
    requiresApproval: (args) => Number(args.amount) > 100,
    execute: (args) => (runs.push({ name: "refund_order", args }), { refunded: args.amount }),
  };
  const lookup: AITool = {
    name: "get_order",
    execute: (args) => (runs.push({ name: "get_order", args }), { orderId: args.orderId, status: "delivered" }),
  };
  const wire: AITool = {
    name: "wire_money",
    requiresApproval: true,
    execute: (args) => (runs.push({ name: "wire_money", args }), { sent: true }),
  };
  return { runs, refund, lookup, wire };
}

function client(options: { hosted?: boolean } = {}) {
  return new ScriptedChatClient({
    hosted: options.hosted,
    rules: [
      {
        when: /small refund/i,
        reply: { contents: [call("call_small", "refund_order", { orderId: "A-1", amount: 20 })] },
      },
      {
        when: /big refund/i,
        reply: {
          contents: [
            call("call_big", "refund_order", { orderId: "A-2", amount: 500 }),
            call("call_look", "get_order", { orderId: "A-2" }),
          ],
        },
      },
      {
        when: /two approvals/i,
        reply: { contents: [call("call_w1", "wire_money", { to: "x" }), call("call_w2", "wire_money", { to: "y" })] },
      },
    ],
  });
}

function agentWith(c = client()) {
  const t = tools();
  const agent = new ChatClientAgent({ client: c, name: "clerk", tools: [t.refund, t.lookup, t.wire] });
  return { agent, client: c, ...t };
}

/** What a store does to a session: serialize, validate, load back. */
const restart = (session: AgentSession): AgentSession =>
  deserializeSession(serializeSession(session, { validate: true }));
const approvalState = (session: AgentSession) => session.stateBag[TOOL_APPROVALS_KEY] as unknown as ToolApprovalState;
const historyOf = (agent: ChatClientAgent, session: AgentSession) => agent.history.listMessages(session);
const contentTypes = (messages: readonly ChatMessage[]) =>
  messages.map((m) => `${m.role}:${m.contents.map((c) => c.$type).join(",")}`);

async function thrown(promise: Promise<unknown>): Promise<ToolApprovalError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolApprovalError);
  return error as ToolApprovalError;
}

describe("a run that reaches a call needing approval", () => {
  it("stops before running anything, returns the request and keeps it in the session in the MEAI shape", async () => {
    const { agent, runs } = agentWith();
    const session = agent.createSession();
    const response = await agent.run("Please do a big refund", session);

    expect(runs).toEqual([]); // neither the refund nor the lookup of the same turn ran
    expect(response.pendingApprovals).toHaveLength(1);
    const request = response.pendingApprovals![0];
    expect(request).toMatchObject({
      $type: "toolApprovalRequest",
      toolCall: {
        $type: "functionCall",
        callId: "call_big",
        name: "refund_order",
        arguments: { orderId: "A-2", amount: 500 },
      },
    });
    expect(request.requestId).toMatch(/^approval_/);
    expect(agent.pendingApprovals(session)).toEqual([request]);

    // History: the call that needs approval is recorded as its request; the other call stays a call.
    const history = await historyOf(agent, session);
    expect(contentTypes(history)).toEqual(["user:text", "assistant:toolApprovalRequest,functionCall,usage"]);
    expect(approvalState(session).pending.map((p) => [p.call.callId, p.request !== undefined])).toEqual([
      ["call_big", true],
      ["call_look", false],
    ]);
    expect(validateSession(session, { strict: true }).ok).toBe(true);
  });

  it("runs calls that need no approval (the predicate said no) as before", async () => {
    const { agent, runs } = agentWith();
    const response = await agent.run("A small refund please", agent.createSession());
    expect(response.pendingApprovals).toBeUndefined();
    expect(runs).toEqual([{ name: "refund_order", args: { orderId: "A-1", amount: 20 } }]);
    expect(response.text).toBe('The tool returned {"refunded":20}.');
  });
});

describe("answering after a restart", () => {
  it("approve by request id in a fresh agent on the reloaded session: the tools run once and the model sees calls then results", async () => {
    const first = agentWith();
    const stored = first.agent.createSession();
    const { pendingApprovals } = await first.agent.run("Please do a big refund", stored);
    const requestId = pendingApprovals![0].requestId;

    // Another process: new client, new agent, session loaded from its stored form.
    const second = agentWith();
    const session = restart(stored);
    const response = await second.agent.run([], session, {
      approvals: [approveToolCall(requestId, "verified by phone")],
    });

    expect(second.runs).toEqual([
      { name: "refund_order", args: { orderId: "A-2", amount: 500 } },
      { name: "get_order", args: { orderId: "A-2" } },
    ]);
    expect(response.pendingApprovals).toBeUndefined();
    expect(response.text).toContain('The tool returned {"refunded":500}.');
    expect(response.messages.map((m) => m.role)).toEqual(["tool", "assistant"]);

    // The model got plain calls and results: approval contents never reach it.
    const sent = second.client.requests[0].messages;
    expect(contentTypes(sent)).toEqual([
      "user:text",
      "assistant:functionCall,functionCall,usage",
      "tool:functionResult,functionResult",
    ]);

    // History keeps the MEAI record: request, the user's response, results, reply.
    const history = await historyOf(second.agent, session);
    expect(contentTypes(history)).toEqual([
      "user:text",
      "assistant:toolApprovalRequest,functionCall,usage",
      "user:toolApprovalResponse",
      "tool:functionResult,functionResult",
      "assistant:text,usage",
    ]);
    expect(history[2].contents[0]).toMatchObject({
      $type: "toolApprovalResponse",
      requestId,
      approved: true,
      reason: "verified by phone",
      toolCall: { callId: "call_big" },
    });
    expect(second.agent.pendingApprovals(session)).toEqual([]);
    expect(approvalState(session).answered).toEqual([{ requestId, callId: "call_big", approved: true }]);
    expect(validateSession(restart(session), { strict: true }).ok).toBe(true);

    // Answering again is an error, and nothing runs again.
    const again = await thrown(second.agent.run([], session, { approvals: [approveToolCall(requestId)] }));
    expect(again.code).toBe("tool-approval-answered");
    expect(second.runs).toHaveLength(2);
  });

  it("accepts the call id, and answers given as toolApprovalResponse contents in the input", async () => {
    const { agent, runs } = agentWith();
    const session = agent.createSession();
    await agent.run("Please do a big refund", session);
    await agent.run(toolApprovalMessage([approveToolCall("call_big")]), session);
    expect(runs.map((r) => r.name)).toEqual(["refund_order", "get_order"]);
  });

  it("a rejection reaches the model as a tool error result, and the tool does not run", async () => {
    const { agent, runs, client: c } = agentWith();
    const session = restart(
      await (async () => {
        const s = agent.createSession();
        await agent.run("Please do a big refund", s);
        return s;
      })(),
    );
    const id = agent.pendingApprovals(session)[0].requestId;
    const response = await agent.run([], session, { approvals: [rejectToolCall(id, "amount too high")] });
    expect(runs.map((r) => r.name)).toEqual(["get_order"]); // the call that needed no approval still ran
    const results = c.requests.at(-1)!.messages.at(-1)!;
    expect(results.role).toBe("tool");
    expect(results.contents[0]).toEqual({
      $type: "functionResult",
      callId: "call_big",
      result: { error: "the user rejected this call to refund_order: amount too high", rejected: true },
    });
    expect(response.text).toContain("rejected");
  });

  it("waits until every request of the round is answered before running any", async () => {
    const { agent, runs } = agentWith();
    const session = agent.createSession();
    const stop = await agent.run("two approvals please", session);
    const [a, b] = stop.pendingApprovals!.map((r) => r.requestId);

    const partial = await agent.run([], restart(session), { approvals: [approveToolCall(a)] }).then((r) => r);
    expect(partial.pendingApprovals!.map((r) => r.requestId)).toEqual([b]);
    expect(runs).toEqual([]);

    const reloaded = restart(session);
    const first = await agent.run([], reloaded, { approvals: [approveToolCall(a)] });
    expect(first.pendingApprovals!.map((r) => r.requestId)).toEqual([b]);
    const done = await agent.run([], restart(reloaded), { approvals: [rejectToolCall(b)] });
    expect(done.pendingApprovals).toBeUndefined();
    expect(runs).toEqual([{ name: "wire_money", args: { to: "x" } }]);
  });
});

describe("refused answers are typed errors and change nothing", () => {
  async function stopped() {
    const setup = agentWith();
    const session = setup.agent.createSession();
    await setup.agent.run("Please do a big refund", session);
    return { ...setup, session, before: JSON.stringify(session) };
  }

  it("an unknown id names the requests that are waiting", async () => {
    const { agent, session, before } = await stopped();
    const error = await thrown(agent.run([], session, { approvals: [approveToolCall("approval_nope")] }));
    expect(error.code).toBe("tool-approval-not-found");
    expect(error.hint).toContain(agent.pendingApprovals(session)[0].requestId);
    expect(JSON.stringify(session)).toBe(before);
  });

  it("an unknown id from input is echoed escaped and cut, never raw", async () => {
    const { agent, session, before } = await stopped();
    const hostile = `\u001b[2J\n✔ approved${"x".repeat(100_000)}`;
    for (const answer of [
      approveToolCall(hostile),
      { requestId: hostile, approved: "yes" as unknown as boolean, reason: "r".repeat(100_000) },
    ]) {
      const error = await thrown(agent.run([], session, { approvals: [answer] }));
      expect(error.message.length).toBeLessThan(1_000);
      expect(error.message).not.toContain("\u001b");
      const lines = error.message.split("\n");
      expect(lines).toHaveLength(1); // one sentence (the hint is a field): the id forged no line
      expect(lines[0]).toContain("…(100015 chars)…");
    }
    expect(JSON.stringify(session)).toBe(before);
  });

  it("an answer to a session with nothing pending", async () => {
    const { agent } = agentWith();
    const error = await thrown(agent.run("hi", agent.createSession(), { approvals: [approveToolCall("approval_x")] }));
    expect(error.code).toBe("tool-approval-not-found");
    expect(error.hint).toContain("nothing is waiting");
  });

  it("two answers for one request in one run, and a malformed answer", async () => {
    const { agent, session, before } = await stopped();
    const id = agent.pendingApprovals(session)[0].requestId;
    expect(
      (await thrown(agent.run([], session, { approvals: [approveToolCall(id), rejectToolCall("call_big")] }))).code,
    ).toBe("tool-approval-answered");
    expect((await thrown(agent.run([], session, { approvals: [{ approved: true }] }))).code).toBe(
      "tool-approval-invalid",
    );
    expect(JSON.stringify(session)).toBe(before);
  });

  it("new input while a request waits is refused until it is answered", async () => {
    const { agent, session, before, runs } = await stopped();
    const error = await thrown(agent.run("never mind, what's up?", session));
    expect(error.code).toBe("tool-approval-pending");
    expect(error.hint).toContain("approveToolCall");
    expect(JSON.stringify(session)).toBe(before);
    // Answer and talk in one run: the results come first, then the new text.
    const id = agent.pendingApprovals(session)[0].requestId;
    await agent.run("thanks", session, { approvals: [approveToolCall(id)] });
    expect(runs).toHaveLength(2);
    expect(contentTypes((await historyOf(agent, session)).slice(2, 5))).toEqual([
      "user:toolApprovalResponse",
      "tool:functionResult,functionResult",
      "user:text",
    ]);
  });

  it("a failing model call after the answer leaves the session as it was (answer again to retry)", async () => {
    const { agent, session, before, client: c } = await stopped();
    const id = agent.pendingApprovals(session)[0].requestId;
    const original = c.getResponse.bind(c);
    c.getResponse = async () => {
      throw new Error("503 service unavailable");
    };
    await expect(agent.run([], session, { approvals: [approveToolCall(id)] })).rejects.toThrow("503");
    expect(JSON.stringify(session)).toBe(before);
    c.getResponse = original;
    await agent.run([], session, { approvals: [approveToolCall(id)] });
    expect(agent.pendingApprovals(session)).toEqual([]);
  });
});

describe("streaming, hosted sessions and group chats", () => {
  async function drain(stream: AsyncGenerator<AgentResponseUpdate, AgentResponse | undefined>) {
    const updates: AgentResponseUpdate[] = [];
    let next = await stream.next();
    while (!next.done) {
      updates.push(next.value);
      next = await stream.next();
    }
    return { updates, response: next.value! };
  }

  it("a streaming run stops with the request as an update; a streaming run answers it", async () => {
    const { agent, runs } = agentWith();
    const session = agent.createSession();
    const stop = await drain(agent.runStream("Please do a big refund", session));
    const requestUpdate = stop.updates.find((u) =>
      u.contents.some((c: AIContent) => c.$type === "toolApprovalRequest"),
    );
    expect(requestUpdate).toBeDefined();
    expect(stop.response.pendingApprovals).toHaveLength(1);
    expect(runs).toEqual([]);

    const reloaded = restart(session);
    const answer = await drain(agent.runStream([], reloaded, { approvals: [approveToolCall("call_big")] }));
    expect(answer.updates[0].contents.map((c) => c.$type)).toEqual(["functionResult", "functionResult"]);
    expect(answer.response.text).toContain("refunded");
    expect(runs).toHaveLength(2);
  });

  it("hosted: the stop keeps the service's conversation id; the answer sends only the results with it", async () => {
    const c = client({ hosted: true });
    const { agent, runs } = agentWith(c);
    const session = agent.createSession({ kind: "hosted" });
    await agent.run("Please do a big refund", session);
    expect(session.conversationId).toBeDefined();
    const conversationId = session.conversationId;

    const reloaded = restart(session);
    const response = await agent.run([], reloaded, { approvals: [approveToolCall("call_big")] });
    const request = c.requests.at(-1)!;
    expect(request.options.conversationId).toBe(conversationId);
    expect(contentTypes(request.messages)).toEqual(["tool:functionResult,functionResult"]);
    expect(runs).toHaveLength(2);
    expect(response.text).toContain("refunded");
    expect(reloaded.stateBag["statebag.chatHistory"]).toBeUndefined();
  });

  it("group chat: the agent's turn stops; invokeAgent with the answers continues it", async () => {
    const { agent, runs } = agentWith();
    const chat = new AgentGroupChat({ agents: [agent] });
    chat.addMessages("Please do a big refund");
    const [turn] = await chat.invoke({ maxTurns: 1 });
    expect(turn.response.pendingApprovals).toHaveLength(1);
    expect(runs).toEqual([]);
    const pending = agent.pendingApprovals(chat.channelSession(agent)!);
    expect(pending).toHaveLength(1);

    // While it waits, the agent's turn is refused and the chat stays as it was.
    const before = chat.history.length;
    await expect(chat.invokeAgent(agent)).rejects.toThrow(ToolApprovalError);
    expect(chat.history).toHaveLength(before);

    const answered = await chat.invokeAgent(agent, { approvals: [approveToolCall(pending[0].requestId)] });
    expect(runs).toHaveLength(2);
    expect(answered.response.text).toContain("refunded");
    expect(chat.history.at(-1)).toMatchObject({ role: "assistant", authorName: "clerk" });
  });
});
