/** AG-UI thread snapshots (issue #27): read into statebag sessions, written back losslessly. Fixture 64. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import {
  InteropError,
  detectSessionShape,
  exportSessionDocument,
  importSession,
} from "../../src/runtime/interop/index.js";

const fixture = JSON.parse(
  readFileSync(new URL("../fixtures/maf/64_python_ag_ui_thread_snapshot.json", import.meta.url), "utf8"),
);
const historyOf = (s: { stateBag: Record<string, unknown> }) =>
  (s.stateBag["statebag.chatHistory"] as { messages: ChatMessage[] }).messages;

describe("AG-UI thread snapshots", () => {
  it("recognises fixture 64 with its evidence, reads its conversation and writes the same snapshot back", () => {
    expect(detectSessionShape(fixture)).toMatchObject({
      shape: "ag-ui-snapshot",
      ambiguous: false,
      evidence: '"messages", "state", "interrupt" with AG-UI messages (an AG-UI thread snapshot)',
    });
    const session = importSession(fixture, { from: "ag-ui-snapshot", id: "workflow-thread" });
    expect(historyOf(session)).toEqual([
      { messageId: "user-1", role: "user", contents: [{ $type: "text", text: "First question" }] },
      { messageId: "assistant-1", role: "assistant", contents: [{ $type: "text", text: "Workflow reply 1" }] },
    ]);
    expect(exportSessionDocument(session, { to: "ag-ui-snapshot" })).toEqual(fixture);
  });

  it("tool calls and results map to functionCall / functionResult; what does not map back is kept and written back", () => {
    const doc = {
      messages: [
        {
          id: "u",
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "binary", mimeType: "image/png", data: "iVBO" },
          ],
        },
        {
          id: "a",
          role: "assistant",
          toolCalls: [
            { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Portland"}' } },
          ],
        },
        { id: "t", role: "tool", content: "sunny", toolCallId: "c1" },
        { id: "a2", role: "assistant", content: "It is sunny.", name: "weather" },
        { id: "act", role: "activity", activityType: "plan", content: { steps: 2 } },
      ],
      session_state: { in_memory: { messages: [] }, tool_approval: { rules: [] } },
    };
    const session = importSession(doc, { from: "ag-ui-snapshot", id: "t1" });
    const messages = historyOf(session);
    expect(messages[1].contents).toEqual([
      { $type: "functionCall", callId: "c1", name: "get_weather", arguments: { city: "Portland" } },
    ]);
    expect(messages[2].contents).toEqual([{ $type: "functionResult", callId: "c1", result: "sunny" }]);
    expect(messages[3]).toEqual({
      messageId: "a2",
      role: "assistant",
      authorName: "weather",
      contents: [{ $type: "text", text: "It is sunny." }],
    });
    expect(messages[0].additionalProperties?.["statebag.aguiOriginal"]).toEqual(doc.messages[0]);
    expect(exportSessionDocument(session, { to: "ag-ui-snapshot" })).toEqual(doc);
    // A message changed in statebag is written from its new content.
    messages[3].contents = [{ $type: "text", text: "It is raining." }];
    const changed = exportSessionDocument(session, { to: "ag-ui-snapshot" }) as { messages: unknown[] };
    expect(changed.messages[3]).toEqual({ id: "a2", role: "assistant", content: "It is raining.", name: "weather" });
  });

  it("refuses what is not a snapshot, and state a snapshot has no place for, with pointer and hint", () => {
    const bad = (() => {
      try {
        importSession({ messages: [{ id: "m", role: 5 }] }, { from: "ag-ui-snapshot", id: "x" });
      } catch (e) {
        return e as InteropError;
      }
    })()!;
    expect(bad).toBeInstanceOf(InteropError);
    expect(bad.pointer).toBe("/messages/0/role");
    const session = importSession(fixture, { from: "ag-ui-snapshot", id: "x" });
    session.stateBag.todo = { $type: "statebag.ForeignState", $version: 1, format: "dotnet", value: 1 } as never;
    expect(() => exportSessionDocument(session, { to: "ag-ui-snapshot" })).toThrow(/has no place for .*todo/);
    // A Python session is not a snapshot.
    expect(detectSessionShape({ type: "session", session_id: "s", state: {} })?.shape).toBe("python");
  });
});
