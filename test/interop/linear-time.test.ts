import { describe, expect, it } from "vitest";
import type { AgentSession, ChatMessage } from "../../src/index.js";
import { exportSession, importSession } from "../../src/runtime/interop/index.js";

/** A Python `function_approval_request` whose `function_call` is another one, `depth` times. */
function nestedPythonApproval(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { type: "function_call", call_id: "c", name: "f", arguments: { a: 1 } };
  for (let i = 0; i < depth; i++) node = { type: "function_approval_request", function_call: node, user_input_request: true, id: `r${i}`, additional_properties: {} };
  return node;
}

/** A statebag `toolApprovalRequest` nested `depth` deep, with fields Python has no place for at every level. */
function nestedStatebagApproval(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { $type: "functionCall", callId: "c", name: "f", informationalOnly: true };
  for (let i = 0; i < depth; i++) node = { $type: "toolApprovalRequest", requestId: `r${i}`, toolCall: node, requiresConfirmation: true };
  return node;
}

const pythonDoc = (content: unknown) => JSON.stringify({ type: "session", session_id: "deep", service_session_id: null, state: { in_memory: { messages: [{ type: "message", role: "assistant", contents: [content] }] } } });

/*
 * No wall-clock thresholds here (speed is measured by `npm run bench`). The mapping this replaced
 * doubled its work per level of nesting; at depths near the 128-level limit of tagged values such
 * a mapping could never finish within vitest's timeout, so finishing with the exact result is the
 * proof.
 */
describe("Python interop runs in time linear in its input", () => {
  it("imports a function_approval_request nested 36 and 120 deep, and exports it back", () => {
    for (const depth of [36, 120]) {
      const original = nestedPythonApproval(depth);
      const session = importSession(pythonDoc(original), { from: "python", limits: { maxDepth: 1024 } });
      const text = exportSession(session, { to: "python" });
      expect(JSON.parse(text).state.in_memory.messages[0].contents[0], `depth ${depth}`).toEqual(original);
    }
  });

  it("exports a valid session nested 24 and 100 deep, then imports it back equal", () => {
    for (const depth of [24, 100]) {
      const message = { role: "assistant", contents: [nestedStatebagApproval(depth)] } as unknown as ChatMessage;
      const session: AgentSession = { id: "deep", kind: "local", stateBag: { "statebag.chatHistory": { $type: "InMemoryChatHistoryState", $version: 2, messages: [message], droppedMessageCount: 0 } } };
      const text = exportSession(session, { to: "python" });
      const back = importSession(text, { from: "python", limits: { maxDepth: 4096 } });
      expect(back, `depth ${depth}`).toEqual(session);
    }
  });
});
