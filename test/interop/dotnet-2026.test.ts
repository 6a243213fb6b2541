import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { answerToolApprovals } from "../../src/runtime/agent/approval-store.js";
import { approveToolCall, TOOL_APPROVALS_KEY, type ToolApprovalState } from "../../src/runtime/agent/approvals.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import {
  detectSessionShape,
  exportSessionDocument,
  importSession,
  InteropError,
} from "../../src/runtime/interop/index.js";
import { dotnetCompaction, dotnetHarnessState } from "../../src/runtime/interop/dotnet-harness.js";
import type { AgentSession } from "../../src/runtime/core/session.js";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/maf/${name}`, import.meta.url), "utf8"));
const stored = (session: AgentSession) => deserializeSession(serializeSession(session, { validate: true }));
const stateOf = (session: AgentSession) => session.stateBag[TOOL_APPROVALS_KEY] as unknown as ToolApprovalState;

describe(".NET tool approvals in the state bag", () => {
  it("_pendingApprovalRequests (elements without $type) becomes statebag's pending round, and round-trips verbatim", () => {
    const doc = fixture("40_dotnet_session_pending_approval_requests.json");
    expect(detectSessionShape(doc)?.shape).toBe("dotnet");
    const session = stored(importSession(doc, { from: "dotnet", id: "s1" }));
    const state = stateOf(session);
    expect(state.pending).toHaveLength(1);
    expect(state.pending[0].call).toEqual({
      $type: "functionCall",
      callId: "call_w1",
      name: "wire_money",
      arguments: { amount: 70, to: "bob" },
    });
    expect(state.pending[0].request?.requestId).toBe("ficc_call_w1");
    expect(exportSessionDocument(session, { to: "dotnet" })).toEqual(doc);
  });

  it("toolApprovalState (elements with $type): surfaced and queued requests wait; rules kept; round-trips verbatim", () => {
    const doc = fixture("41_dotnet_session_tool_approval_agent_state.json");
    const session = stored(importSession(doc, { from: "dotnet", id: "s2" }));
    expect(stateOf(session).pending.map((p) => p.request?.requestId)).toEqual(["ficc_call_d1", "ficc_call_d2"]);
    expect(exportSessionDocument(session, { to: "dotnet" })).toEqual(doc);
  });

  it("a .NET session stopped at an approval is answered with answerToolApprovals and exported back in .NET's shape", async () => {
    const runs: string[] = [];
    const wire: AITool = {
      name: "wire_money",
      requiresApproval: true,
      execute: async (args, context) => (runs.push(context.callId), { sent: args.amount }),
    };
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient({ rules: [{ when: () => true, reply: "Done: 70 EUR sent to Bob." }] }),
      tools: [wire],
    });
    const store = new MemorySessionStore();
    await store.save(
      importSession(fixture("40_dotnet_session_pending_approval_requests.json"), { from: "dotnet", id: "s1" }),
      { expectedRevision: null },
    );
    const result = await answerToolApprovals(store, "s1", agent, [approveToolCall("ficc_call_w1")]);
    expect(runs).toEqual(["call_w1"]);
    expect(result.pendingApprovals).toEqual([]);
    const answered = (await store.get("s1"))!.session;
    expect(stateOf(answered).pending).toEqual([]);
    const doc = exportSessionDocument(answered, { to: "dotnet" }) as {
      stateBag: Record<string, { messages: { role: string; contents: { $type: string }[] }[] }>;
    };
    expect(Object.keys(doc.stateBag)).toEqual(["InMemoryChatHistoryProvider"]); // no _pendingApprovalRequests once nothing waits
    const messages = doc.stateBag.InMemoryChatHistoryProvider.messages;
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "tool", "assistant"]);
    expect(messages[2].contents[0].$type).toBe("toolApprovalResponse");
    expect(messages[3].contents[0]).toEqual({ $type: "functionResult", callId: "call_w1", result: { sent: 70 } });
    // and .NET's document reads back into the same conversation
    const again = stored(importSession(JSON.parse(JSON.stringify(doc)), { from: "dotnet", id: "s1" }));
    expect(again.stateBag["statebag.chatHistory"]).toEqual(answered.stateBag["statebag.chatHistory"]);
  });

  it("a ToolApprovalAgent round half way through (results stored, not continued) is refused on export with a hint", async () => {
    const del: AITool = { name: "delete_file", requiresApproval: true, execute: async () => "deleted" };
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient({ rules: [{ when: () => true, reply: "ok" }] }),
      tools: [del],
    });
    const store = new MemorySessionStore();
    await store.save(
      importSession(fixture("41_dotnet_session_tool_approval_agent_state.json"), { from: "dotnet", id: "s2" }),
      { expectedRevision: null },
    );
    await answerToolApprovals(store, "s2", agent, [approveToolCall("ficc_call_d1"), approveToolCall("ficc_call_d2")], {
      continue: false,
    });
    const session = (await store.get("s2"))!.session;
    expect(() => exportSessionDocument(session, { to: "dotnet" })).toThrow(/half way/);
  });

  it("a malformed request names its pointer", () => {
    const doc = {
      stateBag: { _pendingApprovalRequests: [{ toolCall: { $type: "functionCall", callId: "c", name: "n" } }] },
    };
    const error = (() => {
      try {
        importSession(doc, { from: "dotnet" });
      } catch (e) {
        return e as InteropError;
      }
    })();
    expect(error).toBeInstanceOf(InteropError);
    expect(error!.pointer).toBe("/stateBag/_pendingApprovalRequests/0/requestId");
  });

  it("a request for a non-function tool call stays opaque and lossless", () => {
    const doc = {
      stateBag: {
        _pendingApprovalRequests: [
          { requestId: "r", toolCall: { $type: "mcpServerToolCall", callId: "c", toolName: "t", serverName: "s" } },
        ],
      },
    };
    const session = stored(importSession(doc, { from: "dotnet", id: "x" }));
    expect(session.stateBag[TOOL_APPROVALS_KEY]).toBeUndefined();
    expect(exportSessionDocument(session, { to: "dotnet" })).toEqual(doc);
  });
});

describe(".NET compaction and harness state", () => {
  const doc = fixture("42_dotnet_session_compaction_and_harness_state.json");
  it("is kept losslessly; the empty *_Runtime entry is dropped with a note", () => {
    const notes: string[] = [];
    const session = stored(importSession(doc, { from: "dotnet", id: "h", notes }));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toContain("BackgroundAgentsProvider_Runtime");
    const { BackgroundAgentsProvider_Runtime: _, ...rest } = doc.stateBag;
    expect(exportSessionDocument(session, { to: "dotnet" })).toEqual({ stateBag: rest });
  });
  it("lists excluded messages and summaries for a reducer", () => {
    const session = importSession(doc, { from: "dotnet", id: "h" });
    const view = dotnetCompaction(session);
    expect(view.map((m) => [m.kind, m.excluded, m.summary])).toEqual([
      ["System", false, false],
      ["User", true, false],
      ["Summary", false, true],
      ["ToolCall", false, false],
      ["ToolCall", false, false],
    ]);
    expect(view[1]).toMatchObject({
      key: "SummarizationCompactionStrategy",
      excludeReason: "Summarized",
      messageId: "m1",
      turnIndex: 1,
    });
  });
  it("reads the harness providers through typed views", () => {
    const h = dotnetHarnessState(importSession(doc, { from: "dotnet", id: "h" }));
    expect(h.todo?.nextId).toBe(3);
    expect(h.agentMode).toEqual({ currentMode: "execute", previousModeForNotification: "plan" });
    expect(h.fileMemory?.workingFolder).toBe("memories/trip");
    expect(h.pendingInjectedMessages).toHaveLength(1);
    expect(h.backgroundAgents).toMatchObject({ nextTaskId: 2 });
  });
});
