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

function timed<T>(fn: () => T): [T, number] {
  const start = performance.now();
  const value = fn();
  return [value, performance.now() - start];
}

describe("Python interop runs in time linear in its input", () => {
  it("imports a function_approval_request nested 36 deep (was 143 s) and 120 deep, and exports it back", () => {
    for (const depth of [36, 120]) {
      const original = nestedPythonApproval(depth);
      const [session, ms] = timed(() => importSession(pythonDoc(original), { from: "python", limits: { maxDepth: 1024 } }));
      expect(ms, `import at depth ${depth}`).toBeLessThan(1500);
      const [text, outMs] = timed(() => exportSession(session, { to: "python" }));
      expect(outMs, `export at depth ${depth}`).toBeLessThan(1500);
      expect(JSON.parse(text).state.in_memory.messages[0].contents[0]).toEqual(original);
    }
  });

  it("exports a valid session nested 24 deep (was 37 s) and 100 deep, then imports it back equal", () => {
    for (const depth of [24, 100]) {
      const message = { role: "assistant", contents: [nestedStatebagApproval(depth)] } as unknown as ChatMessage;
      const session: AgentSession = { id: "deep", kind: "local", stateBag: { "statebag.chatHistory": { $type: "InMemoryChatHistoryState", $version: 2, messages: [message], droppedMessageCount: 0 } } };
      const [text, ms] = timed(() => exportSession(session, { to: "python" }));
      expect(ms, `export at depth ${depth}`).toBeLessThan(1500);
      const [back, inMs] = timed(() => importSession(text, { from: "python", limits: { maxDepth: 4096 } }));
      expect(inMs, `import at depth ${depth}`).toBeLessThan(1500);
      expect(back).toEqual(session);
    }
  });

  it("doubling the depth at most about quadruples the time (no exponential growth)", () => {
    const measure = (depth: number) => {
      const text = pythonDoc(nestedPythonApproval(depth));
      return Math.min(...[0, 1, 2].map(() => timed(() => importSession(text, { from: "python", limits: { maxDepth: 1024 } }))[1]));
    };
    measure(40); // warm up
    const small = Math.max(measure(50), 1);
    const large = measure(100);
    expect(large / small).toBeLessThan(8);
  });
});
