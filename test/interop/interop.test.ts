import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ChatClientAgent, InMemoryChatHistoryProvider } from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { StatebagError, messageText, type AgentSession, type ChatMessage } from "../../src/index.js";
import {
  SessionValidationError,
  deserializeSession,
  serializeSession,
} from "../../src/runtime/persistence/serialization.js";
import {
  InteropError,
  PYTHON_ORIGINAL_KEY,
  STATEBAG_ORIGINAL_KEY,
  contentFromPython,
  contentToPython,
  detectSessionFormat,
  exportDotnetSession,
  exportPythonSession,
  exportSession,
  importDotnetSession,
  importPythonSession,
  importSession,
} from "../../src/runtime/interop/index.js";

const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../fixtures/maf/${name}`, import.meta.url)), "utf8");
const json = (name: string) => JSON.parse(fixture(name));
const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value));
const historyOf = (session: AgentSession) =>
  (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages;

/** Catches the error a function throws (to assert on its fields). */
function thrown(fn: () => unknown): InteropError {
  try {
    fn();
  } catch (error) {
    return error as InteropError;
  }
  throw new Error("expected an error");
}

describe(".NET session import", () => {
  it("fixture 01: history under InMemoryChatHistoryProvider, MEAI defaults applied", () => {
    const session = importDotnetSession(fixture("01_dotnet_chatclientagentsession_inmemory_history.json"), {
      id: "s-01",
    });
    expect(session).toEqual({
      id: "s-01",
      kind: "local",
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages: [{ authorName: "testAuthor", role: "user", contents: [] }],
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    });
  });

  it("fixture 03: the MEAI message shape is statebag's message shape", () => {
    const message = json("03_meai_chatmessage_known_payload.json");
    const session = importDotnetSession({ stateBag: { InMemoryChatHistoryProvider: { messages: [message] } } });
    expect(historyOf(session)).toEqual([message]);
    expect(exportDotnetSession(session).stateBag.InMemoryChatHistoryProvider).toEqual({ messages: [message] });
  });

  it("fixture 10: a hosted session keeps its conversation id", () => {
    const session = importDotnetSession(fixture("10_dotnet_session_hosted_conversation_id.json"));
    expect(session.kind).toBe("hosted");
    expect(session.conversationId).toBe("conv_6a3f0c2e9b");
    expect(session.stateBag).toEqual({});
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    const back = exportDotnetSession(session, { metadata: false });
    expect(back).toEqual(json("10_dotnet_session_hosted_conversation_id.json"));
  });

  it("fixture 11: tool calls, annotations, custom raw keys; a statebag agent continues it; export gives the same keys back", async () => {
    const original = json("11_dotnet_session_tool_calls_custom_key.json");
    const session = importDotnetSession(fixture("11_dotnet_session_tool_calls_custom_key.json"), { id: "weather-1" });
    expect(session.kind).toBe("local");
    expect(historyOf(session).map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    // Untagged .NET values are wrapped, never interpreted or dropped.
    expect(session.stateBag["MyApp.UserPreferencesProvider"]).toEqual({
      $type: "statebag.ForeignState",
      format: "dotnet",
      value: original.stateBag["MyApp.UserPreferencesProvider"],
    });
    expect(session.stateBag["MyApp.Counter"]).toEqual({ $type: "statebag.ForeignState", format: "dotnet", value: 7 });

    // A statebag agent picks the conversation up.
    const agent = new ChatClientAgent({ client: new ScriptedChatClient({ usage: false }) });
    const response = await agent.run("And tomorrow?", session);
    expect(response.text).toContain("I can see 5 earlier messages");

    const exported = exportDotnetSession(session, { metadata: false });
    expect(Object.keys(exported.stateBag)).toEqual([
      "InMemoryChatHistoryProvider",
      "MyApp.UserPreferencesProvider",
      "MyApp.Counter",
    ]);
    expect(exported.stateBag["MyApp.UserPreferencesProvider"]).toEqual(
      original.stateBag["MyApp.UserPreferencesProvider"],
    );
    expect(exported.stateBag["MyApp.Counter"]).toBe(7);
    const messages = (exported.stateBag.InMemoryChatHistoryProvider as unknown as { messages: ChatMessage[] }).messages;
    expect(messages.slice(0, 5)).toEqual(original.stateBag.InMemoryChatHistoryProvider.messages);
    expect(messages.slice(5).map(messageText)).toEqual([
      "And tomorrow?",
      'You said: "And tomorrow?". I can see 5 earlier messages.',
    ]);
    // System.Text.Json needs "$type" first: the reordered content is written with it first again.
    const reordered = JSON.stringify(messages[4].contents[0]);
    expect(reordered.startsWith('{"$type":"text"')).toBe(true);
  });

  it("statebag -> .NET -> statebag loses nothing statebag models", () => {
    const session: AgentSession = {
      id: "rt-1",
      kind: "hosted",
      conversationId: { conversation: "conv_1", response: "resp_2" },
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          droppedMessageCount: 7,
          branches: [],
          branchPoints: [],
          messages: [
            {
              authorName: "Ada",
              createdAt: "2026-01-02T03:04:05+02:00",
              role: "user",
              contents: [{ $type: "text", text: "hi" }],
              messageId: "m1",
              additionalProperties: { x: [1, { y: null }] },
            },
            {
              role: "assistant",
              contents: [
                { $type: "reasoning", text: "think", protectedData: "opaque" },
                { $type: "functionCall", callId: "c1", name: "f", arguments: { a: 1 }, informationalOnly: true },
                { $type: "data", uri: "data:image/png;base64,iVBORw0KGgo=", name: "img.png" },
                {
                  $type: "toolApprovalRequest",
                  requestId: "r1",
                  toolCall: { $type: "functionCall", callId: "c2", name: "g" },
                  requiresConfirmation: true,
                },
                { $type: "error", message: "boom", errorCode: "E1", details: "more" },
                { $type: "hostedFile", fileId: "file_1", mediaType: "text/csv", name: "a.csv" },
              ],
            },
            { role: "tool", contents: [{ $type: "functionResult", callId: "c1", result: null }] },
          ],
        },
        "acme.notes": { $type: "acme.NotesState", $version: 3, notes: ["n"] },
        "legacy.raw": { $type: "statebag.ForeignState", format: "dotnet", value: { untagged: true } },
      },
    };
    const dotnet = roundTrip(exportDotnetSession(session, { metadata: true }));
    expect(dotnet.conversationId).toBeUndefined(); // an object id has no .NET form; kept in metadata
    // .NET's history is { messages } only; statebag's droppedMessageCount rides in the metadata.
    expect(Object.keys(dotnet.stateBag.InMemoryChatHistoryProvider as object)).toEqual(["messages"]);
    expect(dotnet.stateBag["statebag.session"]).toMatchObject({ historyDroppedMessageCount: 7 });
    expect(dotnet.stateBag["legacy.raw"]).toEqual({ untagged: true });
    expect(importDotnetSession(dotnet)).toEqual(session);
    // Also through text, with the CLI-ready functions.
    expect(importSession(exportSession(session, { to: "dotnet", metadata: true }), { from: "dotnet" })).toEqual(
      session,
    );
  });

  it("the id can be given on import; export adds statebag's metadata only when asked", () => {
    const session: AgentSession = { id: "a", kind: "local", stateBag: {} };
    expect(exportDotnetSession(session)).toEqual({ stateBag: {} });
    expect(exportSession(session, { to: "dotnet", indent: 0 })).toBe('{"stateBag":{}}');
    expect(importDotnetSession(exportDotnetSession(session, { metadata: true }), { id: "b" })).toEqual({
      id: "b",
      kind: "local",
      stateBag: {},
    });
    expect(importDotnetSession(exportDotnetSession(session, { metadata: true })).id).toBe("a");
  });

  it("unknown top-level members survive a round trip", () => {
    const doc = { conversationId: "c", stateBag: {}, futureField: { a: 1 } };
    expect(exportDotnetSession(importDotnetSession(doc), { metadata: false })).toEqual(doc);
  });

  it("custom history keys on both sides", () => {
    const session = importDotnetSession(
      { stateBag: { MyHistory: { messages: [{ role: "user", contents: [] }] } } },
      { dotnetHistoryKey: "MyHistory", historyKey: "app.history" },
    );
    expect(session.stateBag["app.history"]).toEqual({
      $type: "InMemoryChatHistoryState",
      $version: 3,
      messages: [{ role: "user", contents: [] }],
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    });
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient(),
      history: new InMemoryChatHistoryProvider({ key: "app.history" }),
    });
    expect(agent.history.key).toBe("app.history");
    expect(
      exportDotnetSession(session, { dotnetHistoryKey: "MyHistory", historyKey: "app.history", metadata: false }),
    ).toEqual({
      stateBag: { MyHistory: { messages: [{ role: "user", contents: [] }] } },
    });
  });
});

describe("imported sessions validate like any session", () => {
  it.each([
    ["dotnet", "01_dotnet_chatclientagentsession_inmemory_history.json"],
    ["dotnet", "10_dotnet_session_hosted_conversation_id.json"],
    ["dotnet", "11_dotnet_session_tool_calls_custom_key.json"],
    ["python", "04_python_agentsession_to_dict.json"],
    ["python", "12_python_session_function_call_reasoning_unknown_tag.json"],
    ["python", "13_python_session_lossy_fields.json"],
  ] as const)("%s %s passes strict validation (every $type registered) and stores", (from, name) => {
    const session = importSession(fixture(name), { from, strict: true });
    expect(deserializeSession(serializeSession(session, { validate: true, strict: true }), { strict: true })).toEqual(
      session,
    );
  });

  it("an invalid value inside an imported document is reported by the session validation", () => {
    const doc = {
      stateBag: {
        InMemoryChatHistoryProvider: { messages: [{ role: "user", contents: [{ $type: "functionCall", name: "f" }] }] },
      },
    };
    const error = thrown(() => importDotnetSession(doc));
    expect(error).toBeInstanceOf(InteropError);
    expect(error.cause).toBeInstanceOf(SessionValidationError);
    expect(error.pointer).toBe("/stateBag/InMemoryChatHistoryProvider/messages/0/contents/0/callId");
    expect(error.message).toMatch(
      /"\/stateBag\/InMemoryChatHistoryProvider\/messages\/0\/contents\/0\/callId": required property "callId" is missing/,
    );
    expect(error.hint).toMatch(/requires "callId"/);
    // Strict mode names types statebag does not know, at their place in the Python document.
    const py = { type: "session", session_id: "s", state: { "app.x": { $type: "acme.Unknown" } } };
    expect(importPythonSession(py).stateBag["app.x"]).toEqual({ $type: "acme.Unknown" }); // kept when not strict
    expect(thrown(() => importPythonSession(py, { strict: true })).pointer).toBe("/state/app.x");
  });
});

describe("malformed .NET input gives clear errors", () => {
  it.each([
    ["not JSON", "{ stateBag: ", /JSON/, undefined],
    ["not an object", "[1, 2]", /expected an object, found an array/, ""],
    ["no stateBag", '{"conversationId": "c"}', /missing "stateBag"/, "/stateBag"],
    ["stateBag not an object", '{"stateBag": []}', /expected an object, found an array/, "/stateBag"],
    [
      "conversation id not a string",
      '{"conversationId": 42, "stateBag": {}}',
      /expected a string, found number 42/,
      "/conversationId",
    ],
    [
      "messages not an array",
      '{"stateBag": {"InMemoryChatHistoryProvider": {"messages": {}}}}',
      /expected an array of messages/,
      "/stateBag/InMemoryChatHistoryProvider/messages",
    ],
    [
      "message not an object",
      '{"stateBag": {"InMemoryChatHistoryProvider": {"messages": ["hi"]}}}',
      /expected a ChatMessage object/,
      "/stateBag/InMemoryChatHistoryProvider/messages/0",
    ],
    [
      "content without $type",
      '{"stateBag": {"InMemoryChatHistoryProvider": {"messages": [{"contents": [{"text": "x"}]}]}}}',
      /"\$type" discriminator/,
      "/stateBag/InMemoryChatHistoryProvider/messages/0/contents/0",
    ],
  ])("%s", (_name, text, message, pointer) => {
    const error = thrown(() => importSession(text, { from: "dotnet" }));
    expect(error).toBeInstanceOf(StatebagError);
    expect(error.message).toMatch(message);
    if (pointer !== undefined) {
      expect(error).toBeInstanceOf(InteropError);
      expect(error.pointer).toBe(pointer);
      expect(error.message).toContain(`(at ${pointer === "" ? "the document root" : JSON.stringify(pointer)})`);
    }
  });

  it("recognizes an older .NET shape and a Python document, and says what to do", () => {
    const legacy = thrown(() => importSession('{"storeState": {"messages": []}}', { from: "dotnet" }));
    expect(legacy.message).toMatch(/pre-"stateBag" \.NET session/);
    expect(legacy.hint).toMatch(/from: "dotnet-thread"/);
    const python = thrown(() => importSession(fixture("04_python_agentsession_to_dict.json"), { from: "dotnet" }));
    expect(python.hint).toMatch(/from: "python"/);
    const wrongWay = thrown(() =>
      importSession(fixture("01_dotnet_chatclientagentsession_inmemory_history.json"), { from: "python" }),
    );
    expect(wrongWay.hint).toMatch(/from: "dotnet"/);
  });

  it("rejects an unknown format name", () => {
    expect(() => importSession("{}", { from: "java" as "dotnet" })).toThrow(/unknown session format "java"/);
    expect(() => exportSession({ id: "x", stateBag: {} }, { to: "go" as "python" })).toThrow(
      expect.objectContaining({
        hint: expect.stringMatching(/use one of "dotnet", "dotnet-thread", .*"durable-2-preview"/),
      }),
    );
  });

  it("export refuses what it cannot write, naming the key", () => {
    const session: AgentSession = { id: "x", conversationId: { a: "b" }, stateBag: {} };
    expect(() => exportDotnetSession(session, { metadata: false })).toThrow(/holds a string only/);
    const clash: AgentSession = {
      id: "y",
      stateBag: {
        "statebag.chatHistory": { $type: "InMemoryChatHistoryState", messages: [] },
        InMemoryChatHistoryProvider: { $type: "acme.X" },
      },
    };
    const error = thrown(() => exportDotnetSession(clash, { metadata: true }));
    expect(error.pointer).toBe("/stateBag/InMemoryChatHistoryProvider");
  });
});

describe("Python session import", () => {
  it("fixture 04: free-form state is kept, service_session_id is the conversation id", () => {
    const session = importPythonSession(fixture("04_python_agentsession_to_dict.json"));
    expect(session).toEqual({
      id: "s1",
      kind: "hosted",
      conversationId: "svc1",
      stateBag: { key: { $type: "statebag.ForeignState", format: "python", value: "value" } },
    });
    expect(exportPythonSession(session, { metadata: false })).toEqual(json("04_python_agentsession_to_dict.json"));
  });

  it("fixture 12: snake_case tags map to statebag types; unknown tags are kept in place", () => {
    const session = importPythonSession(fixture("12_python_session_function_call_reasoning_unknown_tag.json"));
    expect(session.id).toBe("py-session-7");
    expect(session.kind).toBe("local");
    const [user, assistant, tool, final] = historyOf(session);
    expect(user).toEqual({
      authorName: "grace",
      role: "user",
      contents: [{ $type: "text", text: "Plot the primes below 20.", additionalProperties: {} }],
      additionalProperties: {},
    });
    expect(assistant.contents).toEqual([
      {
        $type: "reasoning",
        text: "The user wants primes; call the tool first.",
        protectedData: "enc:9f8e7d",
        additionalProperties: {},
      },
      { $type: "functionCall", callId: "call_1", name: "primes_below", arguments: { n: 20 }, additionalProperties: {} },
    ]);
    expect(assistant.messageId).toBe("resp_1_msg_0");
    expect(tool.contents).toEqual([
      { $type: "functionResult", callId: "call_1", result: [2, 3, 5, 7, 11, 13, 17, 19], additionalProperties: {} },
    ]);
    expect(final.contents.map((c) => c.$type)).toEqual(["statebag.foreign", "statebag.foreign", "text", "usage"]);
    expect(final.contents[1]).toEqual({
      $type: "statebag.foreign",
      format: "python",
      value: { type: "hologram_frame", frame: 3, payload: { voxels: [1, 0, 1] } },
    });
    expect(final.contents[3]).toEqual({
      $type: "usage",
      details: {
        inputTokenCount: 120,
        outputTokenCount: 31,
        totalTokenCount: 151,
        additionalCounts: { "openai.reasoning_tokens": 12 },
      },
      additionalProperties: {},
    });
    expect(session.stateBag.memory).toEqual({
      $type: "statebag.ForeignState",
      format: "python",
      value: { facts: ["likes plots"], updated: "2026-04-02" },
    });
    expect(session.stateBag.turn_counter).toEqual({ $type: "statebag.ForeignState", format: "python", value: 4 });
    // Nothing needed a Python original: every item mapped cleanly.
    expect(JSON.stringify(session)).not.toContain(PYTHON_ORIGINAL_KEY);
  });

  it("fixture 12: Python -> statebag -> Python gives the same data, unknown tags included", () => {
    const original = json("12_python_session_function_call_reasoning_unknown_tag.json");
    const session = roundTrip(importPythonSession(original));
    expect(exportPythonSession(session, { metadata: false })).toEqual(original);
  });

  it("fixture 13: fields statebag has no place for come back exactly", () => {
    const original = json("13_python_session_lossy_fields.json");
    const session = importPythonSession(fixture("13_python_session_lossy_fields.json"));
    expect(session.conversationId).toEqual({ conversation_id: "conv_9", response_id: "resp_12" });
    const [legacy, call, result] = historyOf(session);
    expect(legacy.role).toBe("user");
    expect(call.contents[0]).toMatchObject({
      $type: "functionCall",
      callId: "call_7",
      name: "book_table",
      arguments: { people: 2, time: "19:30" },
    });
    expect(call.contents[1]).toMatchObject({
      $type: "toolApprovalRequest",
      requestId: "approval_1",
      toolCall: { $type: "functionCall", callId: "call_7", arguments: { people: 2 } },
    });
    expect(result.contents[0]).toMatchObject({ $type: "functionResult", callId: "call_7" });
    // Originals ride along only where the mapping loses something.
    expect((legacy.additionalProperties as Record<string, unknown>)[PYTHON_ORIGINAL_KEY]).toEqual({
      type: "chat_message",
      role: { value: "user" },
    });
    expect(call.additionalProperties).toEqual({});
    expect(exportPythonSession(roundTrip(session), { metadata: false })).toEqual(original);
  });

  it("a changed item is mapped afresh instead of reviving its stale original", () => {
    const session = importPythonSession(fixture("13_python_session_lossy_fields.json"));
    const call = historyOf(session)[1].contents[0] as { arguments: Record<string, unknown> };
    call.arguments = { people: 4, time: "20:00" };
    const exported = exportPythonSession(session, { metadata: false }) as unknown as {
      state: { in_memory: { messages: { contents: Record<string, unknown>[] }[] } };
    };
    expect(exported.state.in_memory.messages[1].contents[0]).toEqual({
      type: "function_call",
      call_id: "call_7",
      name: "book_table",
      arguments: { people: 4, time: "20:00" },
    });
  });

  it("statebag -> Python -> statebag loses nothing either (statebag-only fields ride in additional_properties)", () => {
    const session: AgentSession = {
      id: "rt-py",
      kind: "local",
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          droppedMessageCount: 3,
          branches: [],
          branchPoints: [],
          messages: [
            {
              createdAt: "2026-05-06T07:08:09Z",
              role: "user",
              contents: [
                {
                  $type: "text",
                  text: "hello",
                  annotations: [
                    { $type: "citation", title: "t", annotatedRegions: [{ $type: "textSpan", start: 1, end: 2 }] },
                  ],
                },
              ],
            },
            {
              role: "assistant",
              contents: [
                { $type: "functionCall", callId: "c", name: "n", informationalOnly: true },
                { $type: "acme.card", title: "custom content" } as never,
                { $type: "uri", uri: "https://example.org/a.png", mediaType: "image/png" },
                {
                  $type: "toolApprovalResponse",
                  requestId: "r",
                  approved: false,
                  reason: "no",
                  toolCall: { $type: "functionCall", callId: "c", name: "n" },
                },
              ],
            },
          ],
        },
        "acme.state": { $type: "acme.State", $version: 2, n: 1 },
      },
    };
    const python = roundTrip(exportPythonSession(session, { metadata: true }));
    const messages = python.state.in_memory as unknown as { messages: Record<string, unknown>[] };
    expect(messages.messages[0]).toMatchObject({
      type: "message",
      role: "user",
      additional_properties: { [STATEBAG_ORIGINAL_KEY]: { createdAt: "2026-05-06T07:08:09Z", role: "user" } },
    });
    expect(Object.keys(messages)).toEqual(["messages"]);
    expect(python.state["statebag.session"]).toEqual({
      $type: "statebag.SessionInfo",
      kind: "local",
      historyDroppedMessageCount: 3,
    });
    expect(importPythonSession(python)).toEqual(session);
  });

  it("content mapping helpers are exported for single items", () => {
    expect(contentFromPython({ type: "function_result", call_id: "x", result: 1 })).toEqual({
      $type: "functionResult",
      callId: "x",
      result: 1,
    });
    expect(contentToPython({ $type: "reasoning", text: "hmm" })).toEqual({ type: "text_reasoning", text: "hmm" });
    expect(contentFromPython("bare text")).toEqual({ $type: "text", text: "bare text" });
  });

  it("detects the format of a parsed document", () => {
    expect(detectSessionFormat(json("01_dotnet_chatclientagentsession_inmemory_history.json"))).toBe("dotnet");
    expect(detectSessionFormat(json("04_python_agentsession_to_dict.json"))).toBe("python");
    expect(detectSessionFormat({ id: "x", stateBag: {} })).toBe("statebag");
    expect(detectSessionFormat([])).toBeUndefined();
  });

  it("an imported Python session runs on a statebag agent and exports back with the new turn", async () => {
    const session = importSession(fixture("12_python_session_function_call_reasoning_unknown_tag.json"), {
      from: "python",
    });
    const agent = new ChatClientAgent({ client: new ScriptedChatClient({ usage: false }) });
    await agent.run("thanks", session);
    const doc = JSON.parse(exportSession(session, { to: "python", metadata: true }));
    const messages = doc.state.in_memory.messages;
    expect(messages).toHaveLength(6);
    // Every message a run records gets an id (a branch names its parent by it).
    expect(messages[4]).toEqual({
      type: "message",
      role: "user",
      contents: [{ type: "text", text: "thanks" }],
      message_id: expect.stringMatching(/^msg-/),
    });
    expect(messages[5]).toMatchObject({
      type: "message",
      role: "assistant",
      contents: [{ type: "text" }],
      message_id: expect.stringMatching(/^msg_[0-9a-f]{6}_1$/),
    });
    expect(doc.state["statebag.session"]).toEqual({ $type: "statebag.SessionInfo", kind: "local" });
    expect(doc.state.memory).toEqual({ facts: ["likes plots"], updated: "2026-04-02" });
  });
});

describe("malformed Python input gives clear errors", () => {
  const doc = (state: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ type: "session", session_id: "s", service_session_id: null, state, ...extra });
  it.each([
    ["wrong type", JSON.stringify({ type: "thread", session_id: "s" }), /expected "type": "session"/, "/type"],
    ["no session id", JSON.stringify({ type: "session", state: {} }), /non-empty string "session_id"/, "/session_id"],
    ["state not an object", doc([1]), /expected an object, found an array/, "/state"],
    [
      "bad service session id",
      doc({}, { service_session_id: 5 }),
      /expected a string, an object of strings or null/,
      "/service_session_id",
    ],
    [
      "messages not an array",
      doc({ in_memory: { messages: "x" } }),
      /expected an array of messages/,
      "/state/in_memory/messages",
    ],
    [
      "message not a message",
      doc({ in_memory: { messages: [{ type: "text", text: "x" }] } }),
      /expected "type": "message", found "text"/,
      "/state/in_memory/messages/0/type",
    ],
    [
      "role missing",
      doc({ in_memory: { messages: [{ type: "message", contents: [] }] } }),
      /needs a string "role"/,
      "/state/in_memory/messages/0/role",
    ],
    [
      "contents not an array",
      doc({ in_memory: { messages: [{ type: "message", role: "user", contents: {} }] } }),
      /expected an array of contents/,
      "/state/in_memory/messages/0/contents",
    ],
    [
      "content without type",
      doc({ in_memory: { messages: [{ type: "message", role: "user", contents: [{ text: "x" }] }] } }),
      /needs a string "type"/,
      "/state/in_memory/messages/0/contents/0",
    ],
    [
      "nested content without type",
      doc({
        in_memory: {
          messages: [
            {
              type: "message",
              role: "assistant",
              contents: [{ type: "function_approval_request", id: "a", function_call: { name: "f" } }],
            },
          ],
        },
      }),
      /needs a string "type"/,
      "/state/in_memory/messages/0/contents/0/function_call",
    ],
  ])("%s", (_name, text, message, pointer) => {
    const error = thrown(() => importSession(text, { from: "python" }));
    expect(error).toBeInstanceOf(InteropError);
    expect(error.message).toMatch(message);
    expect(error.pointer).toBe(pointer);
    expect(error.code).toBe("interop-import");
  });

  it("a parsed document is held to the same limits as text: deep or cyclic objects give a pointer, not a stack overflow", () => {
    const deep: Record<string, unknown> = {};
    let node = deep;
    for (let i = 0; i < 100_000; i++) node = (node.a = {}) as Record<string, unknown>;
    for (const [from, doc, pointer] of [
      ["dotnet", { stateBag: { x: deep } }, /^\/stateBag\/x\/a\/a/],
      ["python", { type: "session", session_id: "s", state: { x: deep } }, /^\/state\/x\/a\/a/],
    ] as const) {
      const error = thrown(() => importSession(doc, { from })) as unknown as { code: string; pointer: string };
      expect(error.code, from).toBe("json-too-deep");
      expect(error.pointer, from).toMatch(pointer);
    }
    const cyclic: Record<string, unknown> = { stateBag: {} };
    (cyclic.stateBag as Record<string, unknown>).self = cyclic;
    expect((thrown(() => importSession(cyclic, { from: "dotnet" })) as unknown as { code: string }).code).toBe(
      "json-too-deep",
    );
  });

  it("function-call arguments given as hostile JSON text are kept as a foreign content, not parsed unbounded", () => {
    const args = '{"a":' + "[".repeat(100_000) + "]".repeat(100_000) + "}";
    const text = JSON.stringify({
      type: "session",
      session_id: "s",
      state: {
        in_memory: {
          messages: [
            {
              type: "message",
              role: "assistant",
              contents: [{ type: "function_call", call_id: "c", name: "f", arguments: args }],
            },
          ],
        },
      },
    });
    const session = importSession(text, { from: "python", limits: { maxBytes: 1_000_000 } });
    const content = (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages[0]
      .contents[0] as unknown as { $type: string; value: { arguments: string } };
    expect(content.$type).toBe("statebag.foreign");
    expect(content.value.arguments).toBe(args);
  });

  it("the limits option applies to JSON text too", () => {
    const text = JSON.stringify({
      type: "session",
      session_id: "s",
      state: { x: { $type: "x.Deep", v: JSON.parse("[".repeat(300) + "]".repeat(300)) } },
    });
    expect((thrown(() => importSession(text, { from: "python" })) as unknown as { code: string }).code).toBe(
      "json-too-deep",
    );
    expect(importSession(text, { from: "python", limits: { maxDepth: 400 } }).id).toBe("s");
    const tight = thrown(() =>
      importSession('{"stateBag":{"a":{"$type":"x.A"},"b":{"$type":"x.B"}}}', {
        from: "dotnet",
        limits: { maxKeys: 1 },
      }),
    ) as unknown as { code: string; pointer: string };
    expect(tight.code).toBe("json-too-many-keys");
    expect(tight.pointer).toBe("/stateBag");
  });

  it("syntax errors point at line and column", () => {
    const error = thrown(() =>
      importSession('{\n  "type": "session",\n  "session_id": }', { from: "python" }),
    ) as unknown as { line?: number; code: string };
    expect(error.code).toBe("json-syntax");
    expect(error.line).toBe(3);
  });
});
