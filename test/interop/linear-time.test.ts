import { describe, expect, it } from "vitest";
import type { AgentSession, ChatMessage } from "../../src/index.js";
import { exportSession, importSession } from "../../src/runtime/interop/index.js";
import { InteropError } from "../../src/runtime/interop/errors.js";
import { DEFAULT_JSON_LIMITS } from "../../src/runtime/json/safe-json.js";
import { boundedPointer } from "../../src/runtime/core/json.js";

/** A Python `function_approval_request` whose `function_call` is another one, `depth` times. */
function nestedPythonApproval(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { type: "function_call", call_id: "c", name: "f", arguments: { a: 1 } };
  for (let i = 0; i < depth; i++)
    node = {
      type: "function_approval_request",
      function_call: node,
      user_input_request: true,
      id: `r${i}`,
      additional_properties: {},
    };
  return node;
}

/** A statebag `toolApprovalRequest` nested `depth` deep, with fields Python has no place for at every level. */
function nestedStatebagApproval(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { $type: "functionCall", callId: "c", name: "f", informationalOnly: true };
  for (let i = 0; i < depth; i++)
    node = { $type: "toolApprovalRequest", requestId: `r${i}`, toolCall: node, requiresConfirmation: true };
  return node;
}

const pythonDoc = (content: unknown) =>
  JSON.stringify({
    type: "session",
    session_id: "deep",
    service_session_id: null,
    state: { in_memory: { messages: [{ type: "message", role: "assistant", contents: [content] }] } },
  });

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
      const session: AgentSession = {
        id: "deep",
        kind: "local",
        stateBag: {
          "statebag.chatHistory": {
            $type: "InMemoryChatHistoryState",
            $version: 3,
            messages: [message],
            droppedMessageCount: 0,
            branches: [],
            branchPoints: [],
          },
        },
      };
      const text = exportSession(session, { to: "python" });
      const back = importSession(text, { from: "python", limits: { maxDepth: 4096 } });
      expect(back, `depth ${depth}`).toEqual(session);
    }
  });
});

/** A statebag approval chain `depth` deep whose every level has a field Python has no place for, so each saves an original holding `pad` characters. */
function paddedApprovalSession(depth: number, pad: number): AgentSession {
  let node: Record<string, unknown> = { $type: "functionCall", callId: "c", name: "f", informationalOnly: true };
  for (let i = 0; i < depth; i++)
    node = {
      $type: "toolApprovalRequest",
      requestId: `r${i}`,
      toolCall: node,
      requiresConfirmation: true,
      additionalProperties: { note: `${i}`.padEnd(pad, "x") },
    };
  const message = { role: "assistant", contents: [node] } as unknown as ChatMessage;
  return {
    id: "deep",
    kind: "local",
    stateBag: {
      "statebag.chatHistory": {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: [message],
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      },
    },
  };
}

/*
 * Sizes, not times. Each level's saved original holds that level's own fields only; a copy of
 * everything below it (as before) made the output quadratic in the depth: at 100 levels of 150 kB
 * that is ~750 MB, past V8's string length, so finishing at all is part of the proof.
 */
describe("Python export output grows linearly with nesting depth", () => {
  it("round-trips a 50- and a 100-deep approval chain exactly, the deeper output under 2.5x the size", () => {
    const sizes: number[] = [];
    for (const depth of [50, 100]) {
      const session = paddedApprovalSession(depth, 150_000);
      const text = exportSession(session, { to: "python", indent: 0 });
      sizes.push(text.length);
      const back = importSession(text, { from: "python", limits: { maxDepth: 1024 } });
      expect(back, `depth ${depth}`).toEqual(session);
      // and back out again: the same document
      expect(exportSession(back, { to: "python", indent: 0 }) === text, `depth ${depth}`).toBe(true);
    }
    expect(sizes[1]).toBeLessThan(2.5 * sizes[0]);
  });
});

describe("Python export depth limit", () => {
  it("refuses a value deeper than DEFAULT_JSON_LIMITS.maxDepth with an InteropError naming where", () => {
    // never loaded, so no read limit applied; 1,000 deep crashed with "Invalid string length"
    const session = paddedApprovalSession(1000, 1);
    let error: unknown;
    try {
      exportSession(session, { to: "python" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InteropError);
    const e = error as InteropError;
    expect(e.direction).toBe("export");
    expect(e.problem).toBe(`the value nests deeper than ${DEFAULT_JSON_LIMITS.maxDepth} levels`);
    // {stateBag} is level 1, so the first content is level 7 and its 250th toolCall level 257
    expect(e.pointer).toBe(
      boundedPointer(
        `/stateBag/statebag.chatHistory/messages/0/contents/0${"/toolCall".repeat(DEFAULT_JSON_LIMITS.maxDepth - 6)}`,
      ),
    );
    expect(e.hint).toMatch(/flatten/);
  });

  it("applies to every state value, not only the history", () => {
    let value: unknown = 1;
    for (let i = 0; i < 400; i++) value = [value];
    const session = { id: "s", stateBag: { deep: { $type: "x", v: value } } } as unknown as AgentSession;
    expect(() => exportSession(session, { to: "python-thread" })).toThrow(InteropError);
  });
});
