/** answerToolApprovals: an approved tool runs exactly once across save conflicts, failures and crashes. */
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { AIContextProvider } from "../../src/runtime/agent/providers/context-provider.js";
import { answerToolApprovals } from "../../src/runtime/agent/approval-store.js";
import {
  approveToolCall,
  rejectToolCall,
  TOOL_APPROVALS_KEY,
  ToolApprovalError,
  type ToolApprovalState,
} from "../../src/runtime/agent/approvals.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { ConflictError, SessionNotFoundError } from "../../src/runtime/stores/errors.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { withSession } from "../../src/runtime/stores/with-session.js";

function setup(options: { toolClaimTimeoutMs?: number; onRun?: () => void | Promise<void> } = {}) {
  const runs: string[] = [];
  const wire: AITool = {
    name: "wire_money",
    requiresApproval: true,
    execute: async (args, context) => {
      runs.push(context.callId);
      await options.onRun?.();
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
  const agent = new ChatClientAgent({ client, tools: [wire], toolClaimTimeoutMs: options.toolClaimTimeoutMs });
  return { agent, client, runs };
}

async function stoppedSession(store: SessionStore, agent: ChatClientAgent) {
  const { value } = await withSession(store, "s1", (session) => agent.run("wire 70 to Bob", session));
  return value.pendingApprovals![0].requestId;
}

const stateOf = (session: AgentSession) => session.stateBag[TOOL_APPROVALS_KEY] as unknown as ToolApprovalState;

/** A store that lets a test act just before a given save (by count). */
function interceptSaves(
  store: SessionStore,
  before: (n: number, session: AgentSession) => Promise<void>,
): SessionStore {
  let n = 0;
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "save") {
        return async (session: AgentSession, options: Parameters<SessionStore["save"]>[1]) => {
          await before(++n, session);
          return target.save(session, options);
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("answerToolApprovals", () => {
  it("records, runs once, continues; the stored session ends answered and closed", async () => {
    const store = new MemorySessionStore();
    const { agent, runs } = setup();
    const requestId = await stoppedSession(store, agent);

    const result = await answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)]);
    expect(runs).toEqual(["call_w"]);
    expect(result.executed).toEqual(["call_w"]);
    expect(result.response!.text).toBe('The tool returned {"sent":70}.');
    const stored = (await store.get("s1"))!;
    expect(stored.revision).toBe(result.revision);
    expect(stateOf(stored.session)).toMatchObject({
      pending: [],
      answered: [{ requestId, callId: "call_w", approved: true }],
    });

    const twice = await answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)]).catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(ToolApprovalError);
    expect((twice as ToolApprovalError).code).toBe("tool-approval-answered");
    expect(runs).toHaveLength(1);
  });

  it("a save conflict after the tool ran merges the result into the fresh copy: the tool does not run again", async () => {
    const base = new MemorySessionStore();
    const { agent, runs } = setup();
    const requestId = await stoppedSession(base, agent);
    // Save #2 is the result merge: just before it, someone else saves the session.
    const store = interceptSaves(base, async (n) => {
      if (n !== 2) return;
      const current = (await base.get("s1"))!; // a concurrent writer: the revision moves on
      await base.save(current.session, { expectedRevision: current.revision });
    });
    const result = await answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)]);
    expect(runs).toEqual(["call_w"]);
    expect(result.response!.text).toContain('"sent":70');
  });

  it("a model failure after the tool ran: retrying the same answer only repeats the model call", async () => {
    const store = new MemorySessionStore();
    const { agent, client, runs } = setup();
    const requestId = await stoppedSession(store, agent);
    const original = client.getResponse.bind(client);
    client.getResponse = async () => {
      throw new Error("429 rate limited");
    };
    await expect(answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)])).rejects.toThrow("429");
    expect(runs).toEqual(["call_w"]);
    // The result is stored with the round, which is still open.
    const between = stateOf((await store.get("s1"))!.session);
    expect(between.pending[0].result).toMatchObject({ callId: "call_w", result: { sent: 70 } });

    client.getResponse = original;
    const retried = await answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)]);
    expect(runs).toEqual(["call_w"]);
    expect(retried.executed).toEqual([]);
    expect(retried.response!.text).toContain('"sent":70');
  });

  it("a crash between claiming and saving the result: the call is never run twice", async () => {
    const base = new MemorySessionStore();
    const crashing = setup();
    const requestId = await stoppedSession(base, crashing.agent);
    // The process "dies" while saving the result: the claim is stored, the result is not.
    const store = interceptSaves(base, async (n) => {
      if (n === 2) throw new Error("process killed");
    });
    await expect(answerToolApprovals(store, "s1", crashing.agent, [approveToolCall(requestId)])).rejects.toThrow(
      "process killed",
    );
    expect(crashing.runs).toEqual(["call_w"]);
    const claimed = stateOf((await base.get("s1"))!.session).pending[0];
    expect(claimed.startedBy).toEqual(expect.any(String));
    expect(claimed.result).toBeUndefined();

    // Another process retries at once: the claim may still be running elsewhere.
    const other = setup();
    const busy = await answerToolApprovals(base, "s1", other.agent, [approveToolCall(requestId)]).catch(
      (e: unknown) => e,
    );
    expect((busy as ToolApprovalError).code).toBe("tool-approval-in-progress");
    expect(other.runs).toEqual([]);

    // Once the claim is stale, the model is told the outcome is unknown; the tool is not run again.
    const later = setup({ toolClaimTimeoutMs: 0 });
    const done = await answerToolApprovals(base, "s1", later.agent, [approveToolCall(requestId)]);
    expect(later.runs).toEqual([]);
    expect(done.response!.text).toContain("outcome of this call to wire_money is unknown");
  });

  it("an abort between two approved calls saves the first result and releases the second's claim", async () => {
    const store = new MemorySessionStore();
    const controller = new AbortController();
    const runs: string[] = [];
    const wire: AITool = {
      name: "wire_money",
      requiresApproval: true,
      execute: async (args, context) => {
        runs.push(context.callId);
        if (runs.length === 1) controller.abort(new Error("client went away"));
        return { sent: args.amount };
      },
    };
    const calls = [
      { $type: "functionCall" as const, callId: "call_a", name: "wire_money", arguments: { amount: 1 } },
      { $type: "functionCall" as const, callId: "call_b", name: "wire_money", arguments: { amount: 2 } },
    ];
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient({ rules: [{ when: /wire/i, reply: { contents: calls } }] }),
      tools: [wire],
    });
    const { value } = await withSession(store, "s1", (session) => agent.run("wire twice", session));
    const answers = value.pendingApprovals!.map((r) => approveToolCall(r.requestId));

    await expect(answerToolApprovals(store, "s1", agent, answers, { signal: controller.signal })).rejects.toThrow(
      "client went away",
    );
    expect(runs).toEqual(["call_a"]);
    const [a, b] = stateOf((await store.get("s1"))!.session).pending;
    expect(a.result).toMatchObject({ callId: "call_a", result: { sent: 1 } });
    expect(b.result).toBeUndefined();
    expect(b.startedBy).toBeUndefined();

    // The retry runs only the call that never started; nothing is reported as an unknown outcome.
    const retried = await answerToolApprovals(store, "s1", agent, answers);
    expect(runs).toEqual(["call_a", "call_b"]);
    expect(retried.executed).toEqual(["call_b"]);
    expect(retried.response!.text).not.toContain("unknown");
  });

  it("a rejection runs nothing; continue: false leaves the model call to the application", async () => {
    const store = new MemorySessionStore();
    const { agent, runs, client } = setup();
    const requestId = await stoppedSession(store, agent);
    const calls = client.requests.length;
    const result = await answerToolApprovals(store, "s1", agent, [rejectToolCall(requestId, "no")], {
      continue: false,
    });
    expect(result).toMatchObject({ executed: [], pendingApprovals: [] });
    expect(runs).toEqual([]);
    expect(client.requests).toHaveLength(calls);
    const { value } = await withSession(store, "s1", (session) => agent.run([], session));
    expect(value.text).toContain("rejected");
  });

  it("an absent session is SessionNotFoundError; a save conflict while recording retries the recording", async () => {
    const base = new MemorySessionStore();
    const { agent, runs } = setup();
    await expect(answerToolApprovals(base, "nope", agent, [approveToolCall("x")])).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );
    const requestId = await stoppedSession(base, agent);
    let conflicts = 0;
    const store = interceptSaves(base, async (n, session) => {
      if (n === 1) {
        conflicts++;
        throw new ConflictError(session.id, 0, 1);
      }
    });
    await answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)]);
    expect(conflicts).toBe(1);
    expect(runs).toEqual(["call_w"]);
  });
  it("a second call while the first holds the round: in-progress, nothing written; once closed: answered", async () => {
    const base = new MemorySessionStore();
    const first = setup();
    const second = setup();
    const requestId = await stoppedSession(base, first.agent);
    let during: unknown;
    let revisionDuring = 0;
    // Just before the first call merges its result, the second answers the same request.
    const store = interceptSaves(base, async (n) => {
      if (n !== 2) return;
      revisionDuring = (await base.get("s1"))!.revision;
      during = await answerToolApprovals(base, "s1", second.agent, [approveToolCall(requestId)]).catch(
        (e: unknown) => e,
      );
      expect((await base.get("s1"))!.revision).toBe(revisionDuring); // it wrote nothing
    });
    const result = await answerToolApprovals(store, "s1", first.agent, [approveToolCall(requestId)]);
    expect(result.response!.text).toBe('The tool returned {"sent":70}.');
    expect(during).toBeInstanceOf(ToolApprovalError);
    expect((during as ToolApprovalError).code).toBe("tool-approval-in-progress");
    expect((during as ToolApprovalError).message).toContain("is being answered by another call");
    const after = await answerToolApprovals(base, "s1", second.agent, [approveToolCall(requestId)]).catch(
      (e: unknown) => e,
    );
    expect((after as ToolApprovalError).code).toBe("tool-approval-answered");
    expect(first.runs).toEqual(["call_w"]);
    expect(second.runs).toEqual([]);
    expect(second.client.requests).toHaveLength(0);
  });

  it("a call that recorded its answer before the round was closed by another does not continue it", async () => {
    const base = new MemorySessionStore();
    const first = setup();
    const second = setup();
    const requestId = await stoppedSession(base, first.agent);
    const modelCalls = first.client.requests.length;
    // The second call's loads are counted; its second load (step 3) waits for the first call to finish.
    let loads = 0;
    let reachedStep3!: () => void;
    const atStep3 = new Promise<void>((resolve) => (reachedStep3 = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slow = new Proxy(base, {
      get(target, prop, receiver) {
        if (prop === "get") {
          return async (id: string) => {
            if (++loads === 2) {
              reachedStep3();
              await released;
            }
            return target.get(id);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    let secondCall!: Promise<unknown>;
    // The first call claims the round; then the second records (a repeat) and stops before step 3.
    const store = interceptSaves(base, async (n) => {
      if (n !== 2) return;
      secondCall = answerToolApprovals(slow, "s1", second.agent, [approveToolCall(requestId)]).catch((e: unknown) => e);
      await atStep3;
    });
    await answerToolApprovals(store, "s1", first.agent, [approveToolCall(requestId)]);
    const revision = (await base.get("s1"))!.revision;
    release();
    const error = (await secondCall) as ToolApprovalError;
    expect(error).toBeInstanceOf(ToolApprovalError);
    expect(error.code).toBe("tool-approval-answered");
    expect(error.message).toContain("round closed by another call");
    expect(error.hint).toContain("reload the session");
    expect((await base.get("s1"))!.revision).toBe(revision);
    expect(second.client.requests).toHaveLength(0);
    expect(first.client.requests).toHaveLength(modelCalls + 1);
    expect(first.runs).toEqual(["call_w"]);
  });

  it("the claim is given back when the call stops after running the tool: model failure, continue: false", async () => {
    const store = new MemorySessionStore();
    const { agent, client } = setup();
    const requestId = await stoppedSession(store, agent);
    const original = client.getResponse.bind(client);
    client.getResponse = async () => {
      throw new Error("503");
    };
    await expect(answerToolApprovals(store, "s1", agent, [approveToolCall(requestId)])).rejects.toThrow("503");
    const [entry] = stateOf((await store.get("s1"))!.session).pending;
    expect(entry.result).toMatchObject({ result: { sent: 70 } });
    expect(entry.startedBy).toBeUndefined();
    client.getResponse = original;

    const other = new MemorySessionStore();
    const second = setup();
    const id2 = await stoppedSession(other, second.agent);
    await answerToolApprovals(other, "s1", second.agent, [approveToolCall(id2)], { continue: false });
    const [kept] = stateOf((await other.get("s1"))!.session).pending;
    expect(kept.result).toMatchObject({ result: { sent: 70 } });
    expect(kept.startedBy).toBeUndefined();
  });
  it("a context provider's tool is run by the continuing run; a stale claim on it does not turn it into an unknown outcome", async () => {
    const runs: string[] = [];
    class Tools extends AIContextProvider {
      readonly key = "test.tools";
      override invoking() {
        return {
          tools: [
            {
              name: "wire_money",
              requiresApproval: true,
              execute: (args: { amount?: unknown }, context: { callId: string }) => (
                runs.push(context.callId), { sent: args.amount }
              ),
            } as AITool,
          ],
        };
      }
    }
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
    const base = new MemorySessionStore();
    const agent = new ChatClientAgent({ client, contextProviders: [new Tools()], toolClaimTimeoutMs: 0 });
    const requestId = await stoppedSession(base, agent);
    // A first call claims the round and dies before continuing (its step-3 load fails).
    let loads = 0;
    const dying = new Proxy(base, {
      get(target, prop, receiver) {
        if (prop === "get") {
          return async (id: string) => {
            if (++loads >= 2) throw new Error("process killed"); // and so is giving the claim back
            return target.get(id);
          };
        }
        if (prop === "save") return target.save.bind(target);
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    await expect(answerToolApprovals(dying, "s1", agent, [approveToolCall(requestId)])).rejects.toThrow(
      "process killed",
    );
    expect(stateOf((await base.get("s1"))!.session).pending[0].startedBy).toEqual(expect.any(String));
    expect(runs).toEqual([]);
    // Its claim is stale at once (timeout 0): the next call continues and runs the tool, once.
    const done = await answerToolApprovals(base, "s1", agent, [approveToolCall(requestId)]);
    expect(runs).toEqual(["call_w"]);
    expect(done.response!.text).toBe('The tool returned {"sent":70}.');
  });
});
