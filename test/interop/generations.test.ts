import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { AgentSession, ChatMessage } from "../../src/index.js";
import { ChatClientAgent } from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import {
  InteropError,
  detectSessionShape,
  exportSessionDocument,
  importSession,
  type SessionShape,
} from "../../src/runtime/interop/index.js";

const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/maf/${name}`, import.meta.url)), "utf8");
const json = (name: string) => JSON.parse(fixture(name));
const historyOf = (session: AgentSession) =>
  (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages;
const thrown = (fn: () => unknown): InteropError => {
  try {
    fn();
  } catch (error) {
    return error as InteropError;
  }
  throw new Error("expected an error");
};
/** Through text, as a store would keep it. */
const stored = (session: AgentSession) =>
  deserializeSession(serializeSession(session, { validate: true, strict: true }), { strict: true });

/** Every published fixture: its shape, and what export back gives (the original unless a normalisation applies). */
const FIXTURES: [name: string, shape: SessionShape, back?: unknown][] = [
  [
    "01_dotnet_chatclientagentsession_inmemory_history.json",
    "dotnet",
    {
      stateBag: {
        InMemoryChatHistoryProvider: { messages: [{ authorName: "testAuthor", role: "user", contents: [] }] },
      },
    },
  ],
  ["10_dotnet_session_hosted_conversation_id.json", "dotnet"],
  ["11_dotnet_session_tool_calls_custom_key.json", "dotnet"],
  [
    "20_dotnet_thread_store_state.json",
    "dotnet-thread",
    { storeState: { messages: [{ authorName: "testAuthor", role: "user", contents: [] }] } },
  ],
  ["21_dotnet_thread_conversation_id.json", "dotnet-thread"],
  ["22_dotnet_thread_ai_context_provider_state.json", "dotnet-thread"],
  [
    "23_dotnet_session_chat_history_provider_state.json",
    "dotnet-provider-state",
    { chatHistoryProviderState: { messages: [{ authorName: "testAuthor", role: "user", contents: [] }] } },
  ],
  ["04_python_agentsession_to_dict.json", "python"],
  ["12_python_session_function_call_reasoning_unknown_tag.json", "python"],
  [
    "24_python_thread_service_thread_id.json",
    "python-thread",
    { type: "agent_thread_state", service_thread_id: "test-conv-123", chat_message_store_state: null },
  ],
  ["30_durable_state_readme_sample_1_0_0.json", "durable"],
  ["31_durable_state_2_0_preview.json", "durable-2-preview"],
];

describe("every shape: detected, read, validated, and written back", () => {
  it.each(FIXTURES)("%s (%s)", (name, shape, back) => {
    expect(detectSessionShape(json(name))?.shape).toBe(shape);
    const ownId = shape === "python" || shape === "python-memory" || shape === "python-file-store";
    const session = importSession(fixture(name), { from: shape, ...(ownId ? {} : { id: "s" }), strict: true });
    expect(stored(session)).toEqual(session);
    const exported = exportSessionDocument(stored(session), { to: shape });
    expect(exported).toEqual(back ?? json(name));
  });

  it("a document both older .NET generations wrote alike is detected with both candidates, not ambiguous", () => {
    const detected = detectSessionShape(json("21_dotnet_thread_conversation_id.json"))!;
    expect(detected).toMatchObject({
      shape: "dotnet-thread",
      candidates: ["dotnet-thread", "dotnet-provider-state"],
      ambiguous: false,
    });
    expect(detected.evidence).toContain('"conversationId"');
    const a = importSession(fixture("21_dotnet_thread_conversation_id.json"), { from: "dotnet-thread", id: "x" });
    const b = importSession(fixture("21_dotnet_thread_conversation_id.json"), {
      from: "dotnet-provider-state",
      id: "x",
    });
    expect(a).toEqual(b);
    expect(a).toEqual({ id: "x", kind: "hosted", conversationId: "TestConvId", stateBag: {} });
  });

  it('Python history under both "memory" and "in_memory" is ambiguous', () => {
    const doc = {
      type: "session",
      session_id: "s",
      service_session_id: null,
      state: { memory: { messages: [] }, in_memory: { messages: [] } },
    };
    expect(detectSessionShape(doc)).toMatchObject({
      shape: "python",
      candidates: ["python", "python-memory"],
      ambiguous: true,
    });
  });
});

describe(".NET older generations move forward to today's shape", () => {
  it("a thread's storeState becomes history, aiContextProviderState a bag value; today's .NET shape holds both", () => {
    const thread = {
      conversationId: "c1",
      aiContextProviderState: ["CP1"],
      storeState: { messages: [{ role: "user", contents: [{ $type: "text", text: "hi" }] }] },
    };
    const session = importSession(thread, { from: "dotnet-thread", id: "t" });
    expect(historyOf(session)).toEqual(thread.storeState.messages);
    expect(session.stateBag.aiContextProviderState).toEqual({
      $type: "statebag.ForeignState",
      format: "dotnet",
      value: ["CP1"],
    });
    expect(exportSessionDocument(session, { to: "dotnet" })).toEqual({
      conversationId: "c1",
      stateBag: { aiContextProviderState: ["CP1"], InMemoryChatHistoryProvider: thread.storeState },
    });
    expect(exportSessionDocument(session, { to: "dotnet-thread" })).toEqual(thread);
    // Named after the provider it belongs to today.
    const named = importSession(thread, { from: "dotnet-thread", id: "t", contextProviderKey: "MyApp.MemoryProvider" });
    expect(Object.keys(exportSessionDocument(named, { to: "dotnet" }).stateBag as object)).toEqual([
      "MyApp.MemoryProvider",
      "InMemoryChatHistoryProvider",
    ]);
  });

  it("normalisation: null members are left out on export, as .NET writes them", () => {
    const session = importSession(
      { conversationId: null, storeState: null, aiContextProviderState: ["CP1"] },
      { from: "dotnet-thread", id: "n" },
    );
    expect(exportSessionDocument(session, { to: "dotnet-thread" })).toEqual({ aiContextProviderState: ["CP1"] });
  });

  it('normalisation: a file store snapshot gets "version": "1.0" last, as the store writes it', () => {
    const doc = { version: "1.0", type: "session", session_id: "v", service_session_id: null, state: {} };
    const text = JSON.stringify(
      exportSessionDocument(importSession(doc, { from: "python-file-store" }), { to: "python-file-store" }),
    );
    expect(text).toBe('{"type":"session","session_id":"v","service_session_id":null,"state":{},"version":"1.0"}');
  });

  it("a custom message store's state is kept verbatim and written back", () => {
    const thread = { storeState: { threadDbKey: "k-42", count: 3 } };
    const session = importSession(thread, { from: "dotnet-thread", id: "t" });
    expect(session.stateBag.storeState).toEqual({
      $type: "statebag.ForeignState",
      format: "dotnet",
      value: thread.storeState,
    });
    expect(exportSessionDocument(session, { to: "dotnet-thread" })).toEqual(thread);
  });

  it("errors point into the original document", () => {
    const error = thrown(() =>
      importSession(
        { storeState: { messages: [{ role: "user", contents: [{ $type: "functionCall", name: "f" }] }] } },
        { from: "dotnet-thread" },
      ),
    );
    expect(error).toBeInstanceOf(InteropError);
    expect(error.shape).toBe("dotnet-thread");
    expect(error.pointer).toBe("/storeState/messages/0/contents/0/callId");
    expect(error.message).toContain("Agent Framework .NET (dotnet-thread)");
    const bad = thrown(() =>
      importSession({ chatHistoryProviderState: { messages: ["x"] } }, { from: "dotnet-provider-state" }),
    );
    expect(bad.pointer).toBe("/chatHistoryProviderState/messages/0");
    expect(thrown(() => importSession({ conversationId: 5 }, { from: "dotnet-thread" })).pointer).toBe(
      "/conversationId",
    );
  });

  it("a state the older shape has no place for is refused on export, naming the key", () => {
    const session: AgentSession = { id: "x", stateBag: { "acme.notes": { $type: "acme.Notes", notes: [] } } };
    const error = thrown(() => exportSessionDocument(session, { to: "dotnet-thread" }));
    expect(error.pointer).toBe("/stateBag/acme.notes");
    expect(error.hint).toMatch(/export to "dotnet"/);
  });

  it.each([
    ["dotnet-a2a", { contextId: "ctx-1", taskId: "task-9", taskState: "working", stateBag: { "MyApp.X": { a: 1 } } }],
    ["dotnet-a2a-thread", { contextId: "ctx-1", taskId: "task-9" }],
    ["dotnet-copilot-studio", { serviceSessionId: "cs-conv", stateBag: {} }],
    ["dotnet-service-thread", { serviceThreadId: "cs-conv" }],
    ["dotnet-github-copilot", { sessionId: "gh-session", stateBag: {} }],
  ] as const)("%s: the service id is the conversation id, the rest is kept verbatim", (shape, doc) => {
    expect(detectSessionShape(doc)?.shape).toBe(shape);
    const session = importSession(doc, { from: shape, id: "o" });
    expect(session.kind).toBe("hosted");
    expect(typeof session.conversationId).toBe("string");
    expect(exportSessionDocument(stored(session), { to: shape })).toEqual(doc);
  });
});

describe("Python older generations", () => {
  it('python-memory: history under "memory" reads as history and moves to "in_memory"', () => {
    const doc = {
      type: "session",
      session_id: "feb",
      service_session_id: null,
      state: { memory: { messages: [{ type: "message", role: "user", contents: [{ type: "text", text: "hi" }] }] } },
    };
    expect(detectSessionShape(doc)?.shape).toBe("python-memory");
    const session = importSession(doc, { from: "python-memory" });
    expect(historyOf(session)).toEqual([{ role: "user", contents: [{ $type: "text", text: "hi" }] }]);
    expect(exportSessionDocument(session, { to: "python-memory" })).toEqual(doc);
    expect((exportSessionDocument(session, { to: "python" }).state as Record<string, unknown>).in_memory).toEqual(
      doc.state.memory,
    );
  });

  it("python-thread with messages: read, continued by an agent, written as a thread and as today's session", async () => {
    const thread = {
      type: "agent_thread_state",
      service_thread_id: null,
      chat_message_store_state: {
        type: "chat_message_store_state",
        messages: [{ type: "message", role: "user", contents: [{ type: "text", text: "Hello" }] }],
      },
    };
    const session = importSession(thread, { from: "python-thread", id: "th" });
    expect(exportSessionDocument(session, { to: "python-thread" })).toEqual(thread);
    await new ChatClientAgent({ client: new ScriptedChatClient({ usage: false }) }).run("again", session);
    const doc = exportSessionDocument(session, { to: "python" }) as {
      session_id: string;
      state: { in_memory: { messages: unknown[] } };
    };
    expect(doc.session_id).toBe("th");
    expect(doc.state.in_memory.messages).toHaveLength(3);
    const bad = thrown(() => importSession({ service_thread_id: 7 }, { from: "python-thread" }));
    expect(bad.pointer).toBe("/service_thread_id");
  });
});

describe("durable agent entity state", () => {
  it("README sample: entries, correlation ids and usage kept; the history is every entry's messages", () => {
    const session = importSession(fixture("30_durable_state_readme_sample_1_0_0.json"), { from: "durable" });
    expect(historyOf(session).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "system",
      "assistant",
    ]);
    expect(historyOf(session)[1].contents[0]).toMatchObject({
      $type: "functionCall",
      callId: "call_qWk9Ay4doKYrUBoADK8MBwHf",
    });
  });

  it("refuses a major version other than 1 with MAF's message, and a missing or invalid version", () => {
    const v2 = json("31_durable_state_2_0_preview.json");
    const error = thrown(() => importSession(v2, { from: "durable" }));
    expect(error.message).toContain('The durable agent state schema version "2.0.0" is not supported.');
    expect(error.hint).toMatch(/durable-2-preview/);
    expect(
      thrown(() => importSession({ schemaVersion: "3.0.0", data: {} }, { from: "durable-2-preview" })).message,
    ).toMatch(/not supported/);
    expect(thrown(() => importSession({ data: {} }, { from: "durable" })).message).toMatch(
      /missing the 'schemaVersion' property/,
    );
    expect(thrown(() => importSession({ schemaVersion: "one", data: {} }, { from: "durable" })).message).toMatch(
      /invalid 'schemaVersion'/,
    );
    expect(thrown(() => importSession({ schemaVersion: "1.0" }, { from: "durable" })).message).toMatch(
      /missing the 'data' property/,
    );
  });

  it("unknown-content fallback: MEAI contents inside it read as themselves (approvals), others stay verbatim", () => {
    const approval = {
      $type: "toolApprovalRequest",
      requestId: "r1",
      toolCall: { $type: "functionCall", callId: "c1", name: "book", arguments: { n: 2 } },
    };
    const doc = {
      schemaVersion: "1.1.0",
      data: {
        conversationHistory: [
          {
            $type: "response",
            correlationId: "c",
            createdAt: "2026-01-01T00:00:00+00:00",
            messages: [
              {
                role: "assistant",
                contents: [
                  { $type: "unknown", content: approval },
                  { $type: "unknown", content: "original" },
                  { $type: "hostedVectorStore", vectorStoreId: "vs_1" },
                  { $type: "text", text: "x", future: 1 },
                ],
              },
            ],
            futureEntryField: true,
          },
        ],
        expirationTimeUtc: "2026-02-01T00:00:00Z",
      },
    };
    const session = importSession(doc, { from: "durable", strict: true });
    const contents = historyOf(session)[0].contents;
    expect(contents[0]).toEqual(approval);
    expect(contents.slice(1).map((c) => c.$type)).toEqual(["statebag.foreign", "statebag.foreign", "statebag.foreign"]);
    expect(exportSessionDocument(stored(session), { to: "durable" })).toEqual(doc);
  });

  it("turns added by a statebag agent become a request and a response entry", async () => {
    const session = importSession(fixture("30_durable_state_readme_sample_1_0_0.json"), { from: "durable" });
    await new ChatClientAgent({ client: new ScriptedChatClient({ usage: false }) }).run("status?", session);
    const doc = exportSessionDocument(session, { to: "durable" }) as {
      data: { conversationHistory: { $type: string; correlationId: string; messages: unknown[] }[] };
    };
    const entries = doc.data.conversationHistory;
    expect(entries).toHaveLength(6);
    expect(entries.slice(0, 4)).toEqual(json("30_durable_state_readme_sample_1_0_0.json").data.conversationHistory);
    expect(entries[4]).toMatchObject({
      $type: "request",
      messages: [{ role: "user", contents: [{ $type: "text", text: "status?" }] }],
    });
    expect(entries[5].$type).toBe("response");
    expect(entries[4].correlationId).toMatch(/^[0-9a-f]{32}$/);
  });
});
