import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { StoredChatHistoryProvider } from "../../src/runtime/agent/providers/stored-chat-history.js";
import { openStore, withSession } from "../../src/stores.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import {
  InteropError,
  SHAPE_NAMES,
  exportSessionDocument,
  importSession,
  isLiteralSafeKey,
  keyFromFileName,
  resolveStoredHistory,
  sessionFileName,
  type SessionShape,
} from "../../src/runtime/interop/index.js";

const history = (messages: unknown[]): AgentSession => ({ id: "h", kind: "local", stateBag: { "statebag.chatHistory": { $type: "InMemoryChatHistoryState", $version: 2, messages: messages as ChatMessage[], droppedMessageCount: 0 } } });
const stored = (session: AgentSession) => deserializeSession(serializeSession(session, { validate: true }));
const thrown = (fn: () => unknown): InteropError => {
  try {
    fn();
  } catch (error) {
    return error as InteropError;
  }
  throw new Error("expected an error");
};

describe("tool approvals round-trip in the .NET and Python forms", () => {
  const approvals = history([
    { role: "assistant", contents: [{ $type: "toolApprovalRequest", requestId: "r1", toolCall: { $type: "functionCall", callId: "c1", name: "book", arguments: { people: 2 } } }] },
    { role: "user", contents: [{ $type: "toolApprovalResponse", requestId: "r1", approved: true, toolCall: { $type: "functionCall", callId: "c1", name: "book", arguments: { people: 2 } } }] },
    { role: "user", contents: [{ $type: "toolApprovalResponse", requestId: "r2", approved: false, reason: "too expensive", toolCall: { $type: "functionCall", callId: "c2", name: "pay" } }] },
  ]);
  it.each(["dotnet", "dotnet-thread", "dotnet-provider-state", "python", "python-memory", "python-thread", "python-file-store", "durable"] as SessionShape[])("%s", (shape) => {
    const doc = exportSessionDocument(approvals, { to: shape });
    const back = stored(importSession(JSON.parse(JSON.stringify(doc)), { from: shape, id: "h" }));
    expect(back.stateBag["statebag.chatHistory"]).toEqual(approvals.stateBag["statebag.chatHistory"]);
    // A durable state keeps its entries' own data beside the history; nothing else is added.
    expect(Object.keys(back.stateBag).filter((k) => k !== "statebag.durable.state")).toEqual(["statebag.chatHistory"]);
  });
  it("the Python form uses Python's approval contents", () => {
    const doc = exportSessionDocument(approvals, { to: "python" }) as { state: { in_memory: { messages: { contents: Record<string, unknown>[] }[] } } };
    expect(doc.state.in_memory.messages[0].contents[0]).toEqual({ type: "function_approval_request", function_call: { type: "function_call", call_id: "c1", name: "book", arguments: { people: 2 } }, user_input_request: true, id: "r1" });
    expect(doc.state.in_memory.messages[1].contents[0]).toMatchObject({ type: "function_approval_response", approved: true, id: "r1" });
  });
});

describe("readers are hardened like the session loader", () => {
  it.each(SHAPE_NAMES.filter((s) => s !== "dotnet" && s !== "python"))("%s: a __proto__ key, deep input and a huge key give a clear, bounded error", (shape) => {
    const proto = thrown(() => importSession('{"__proto__": {"polluted": true}, "stateBag": {}}', { from: shape }));
    expect((proto as unknown as { code: string }).code).toMatch(/json-proto|interop/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const deep = thrown(() => importSession("[".repeat(5000) + "]".repeat(5000), { from: shape }));
    expect((deep as unknown as { code: string }).code).toBe("json-too-deep");
    // A huge hostile key: either a bounded, escaped error, or (shapes that keep unknown members) kept verbatim.
    const hugeKey = "k\u001b[31m".repeat(200_000);
    const doc = { stateBag: { [hugeKey]: { $type: 5 } }, state: { [hugeKey]: { $type: 5 } }, [hugeKey]: 1, conversationId: 5, storeState: 5, service_thread_id: 5, schemaVersion: "x", data: 1, type: "session", session_id: 5 };
    let error: InteropError | undefined;
    try {
      const session = importSession(doc, { from: shape, id: "hostile" });
      expect(JSON.stringify(session)).toContain(JSON.stringify(hugeKey).slice(1, -1));
    } catch (e) {
      error = e as InteropError;
    }
    if (error) {
      expect(error.message.length).toBeLessThan(4000);
      expect(error.message).not.toContain("\u001b");
    }
  });

  it("an object document is held to the limits too (huge arrays of bad messages report a bounded list)", () => {
    const messages = Array.from({ length: 5000 }, () => ({ role: "user", contents: [{ $type: "functionCall", name: "f" }] }));
    const error = thrown(() => importSession({ storeState: { messages } }, { from: "dotnet-thread" }));
    expect(error.message).toMatch(/\.\.\. and \d+ more/);
    expect(error.message.length).toBeLessThan(20_000);
  });
});

describe("Python FileSessionStore file names", () => {
  it.each([
    ["tenant/user", "~session-dGVuYW50L3VzZXI.json"],
    ["session.id", "session.id.json"],
    ["CON", "~session-Q09O.json"],
    ["x".repeat(128), "x".repeat(128) + ".json"],
  ])("%s -> %s, and back", (key, name) => {
    expect(sessionFileName(key)).toBe(name);
    expect(keyFromFileName(name)).toEqual({ key, hashed: false });
  });
  it("keys too long to encode are hashed; over 128 characters refused; temporary and quarantined files are not sessions", () => {
    const long = "é/".repeat(60);
    expect(sessionFileName(long)).toMatch(/^~session-sha256-[0-9a-f]{64}\.json$/);
    expect(keyFromFileName(sessionFileName(long))).toEqual({ hashed: true });
    expect(() => sessionFileName("x".repeat(129))).toThrow(/at most 128/);
    expect(keyFromFileName(".a.json.0f.tmp")).toBeUndefined();
    expect(keyFromFileName(".a.json.0f.corrupt")).toBeUndefined();
    expect(isLiteralSafeKey("café")).toBe(false);
  });
  it("a snapshot with a registered type's payload it cannot restore is imported as plain data (nothing is lost)", () => {
    const session = importSession('{"type": "session", "version": "1.0", "session_id": "session-1", "service_session_id": null, "state": {"value": {"type": "message", "role": "user", "contents": [123]}}}', { from: "python-file-store" });
    expect(session.stateBag.value).toEqual({ $type: "statebag.ForeignState", format: "python", value: { type: "message", role: "user", contents: [123] } });
  });
});

describe("a session using StoredChatHistoryProvider exports with its history read from the log", () => {
  it("reads the committed messages (and a pending write) from the store's log", async () => {
    const store = await openStore("memory:");
    try {
      const agent = new ChatClientAgent({ client: new ScriptedChatClient({ usage: false }), history: new StoredChatHistoryProvider({ log: store.messages }) });
      await withSession(store, "u1", (s) => agent.run("Hi, I am Ada.", s));
      await withSession(store, "u1", (s) => agent.run("Who am I?", s));
      const { session } = (await store.get("u1"))!;
      expect(() => exportSessionDocument(session, { to: "dotnet" })).not.toThrow();
      const resolved = await resolveStoredHistory(session, store.messages);
      const doc = exportSessionDocument(resolved, { to: "dotnet" }) as { stateBag: { InMemoryChatHistoryProvider: { messages: ChatMessage[] } } };
      expect(doc.stateBag.InMemoryChatHistoryProvider.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      expect(Object.keys(doc.stateBag)).toEqual(["InMemoryChatHistoryProvider"]);
    } finally {
      await store.close();
    }
  });
});
