/**
 * Issue #36: a run on a session's own (in-memory) history sends the model the history with one
 * copy (`firstRequest`: approval contents rewritten from the first message holding one) and records
 * its messages as copies made without structuredClone's fixed cost (`cloneData`). These tests hold
 * those paths to what they replaced: the same requests, the same stored history, the same copies
 * and errors.
 */
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/agent.js";
import type { ChatClient, ChatClientMetadata, ChatResponse } from "../../src/runtime/agent/chat-client.js";
import { approvalRequestFor, forModel } from "../../src/runtime/agent/approvals.js";
import { cloneData } from "../../src/runtime/agent/run/copy.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import { messageText, type AgentSession, type ChatMessage } from "../../src/index.js";

const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });
const assistant = (text: string): ChatMessage => ({ role: "assistant", contents: [{ $type: "text", text }] });
const HISTORY = "statebag.chatHistory";

/** Records a copy of each request and the array itself; calls `lookup` when the last text says "tool". */
class Model implements ChatClient {
  readonly metadata: ChatClientMetadata = { providerName: "model", supportsServiceStorage: false };
  readonly copies: ChatMessage[][] = [];
  readonly arrays: (readonly ChatMessage[])[] = [];
  constructor(readonly readsMessagesOnlyDuringCall: boolean) {}

  async getResponse(messages: readonly ChatMessage[]): Promise<ChatResponse> {
    this.arrays.push(messages);
    this.copies.push(structuredClone([...messages]));
    const last = messages[messages.length - 1];
    if (last.role === "tool") return { messages: [assistant("done")] };
    if (messageText(last).includes("tool"))
      return {
        messages: [
          {
            role: "assistant",
            contents: [{ $type: "functionCall", callId: `c${this.copies.length}`, name: "lookup", arguments: {} }],
          },
        ],
      };
    return { messages: [{ ...assistant(`echo ${messageText(last)}`), messageId: `reply-${this.copies.length}` }] };
  }

  async *getStreamingResponse() {}
}

const lookup: AITool = { name: "lookup", execute: () => ({ found: true }) };

function sessionWith(agent: ChatClientAgent, messages: ChatMessage[]): AgentSession {
  const session = agent.createSession({ kind: "local" });
  session.stateBag[HISTORY] = {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    messages,
    droppedMessageCount: 0,
    branches: [],
    branchPoints: [],
  };
  return session;
}

const stored = (session: AgentSession) =>
  (session.stateBag[HISTORY] as unknown as { messages: ChatMessage[] }).messages;

/** A history whose middle holds an approval round (a request, its answer). */
function approvalHistory(): ChatMessage[] {
  const call = { $type: "functionCall" as const, callId: "c0", name: "lookup", arguments: { q: "y" } };
  return [
    user("u0"),
    assistant("a1"),
    user("u2"),
    { role: "assistant", contents: [approvalRequestFor(call, "r0")] },
    { role: "user", contents: [{ $type: "toolApprovalResponse", requestId: "r0", approved: true }] },
    { role: "tool", contents: [{ $type: "functionResult", callId: "c0", result: { found: "y" } }] },
    assistant("a6"),
  ];
}

describe("a run on an in-memory history", () => {
  for (const reads of [true, false]) {
    it(`sends the history as the model sees it, in a new array (readsMessagesOnlyDuringCall: ${reads})`, async () => {
      for (const history of [[user("u0"), assistant("a1")], approvalHistory()]) {
        const model = new Model(reads);
        const agent = new ChatClientAgent({ client: model, tools: [lookup] });
        const before = structuredClone(history);
        const session = sessionWith(agent, history);
        await agent.run("use the tool", session);
        // Two calls: the tool round extends the request; the session's history array never grows.
        expect(model.copies).toHaveLength(2);
        expect(model.copies[0]).toEqual([...forModel(before), { ...user("use the tool") }]);
        expect(model.copies[1].slice(0, model.copies[0].length)).toEqual(model.copies[0]);
        for (const sent of model.arrays) expect(sent).not.toBe(history);
        expect(history).toEqual(before);
        // The stored history keeps the approval contents; the run's messages follow.
        expect(stored(session).slice(0, before.length)).toEqual(before);
        expect(
          stored(session)
            .slice(before.length)
            .map((m) => m.role),
        ).toEqual(["user", "assistant", "tool", "assistant"]);
      }
    });
  }

  it("rewrites every approval content, wherever the first one is", async () => {
    const history = approvalHistory();
    for (let start = 0; start < history.length; start++) {
      const messages = [...history.slice(start), ...history.slice(0, start)];
      const model = new Model(true);
      const agent = new ChatClientAgent({ client: model });
      await agent.run("hi", sessionWith(agent, messages));
      expect(model.copies[0]).toEqual([...forModel(messages), user("hi")]);
      expect(JSON.stringify(model.copies[0])).not.toContain("toolApproval");
    }
  });

  it("records copies: changing the input or the response afterwards leaves the history as it was", async () => {
    const agent = new ChatClientAgent({ client: new Model(true) });
    const session = sessionWith(agent, [user("u0"), assistant("a1")]);
    const input: ChatMessage = { role: "user", contents: [{ $type: "text", text: "hello" }], messageId: "in-1" };
    const response = await agent.run(input, session);
    const saved = structuredClone(stored(session));
    (input.contents[0] as { text: string }).text = "changed";
    (response.messages[0].contents[0] as { text: string }).text = "changed";
    response.messages[0].contents.push({ $type: "text", text: "more" });
    expect(stored(session)).toEqual(saved);
    expect(saved.slice(2).map(messageText)).toEqual(["hello", "echo hello"]);
    expect(saved.slice(2).map((m) => m.messageId)).toEqual(["in-1", "reply-1"]);
  });
});

describe("cloneData is structuredClone", () => {
  it("copies plain data deeply, as structuredClone does", () => {
    const proto = JSON.parse('{"__proto__": {"p": 1}, "b": [1, {"c": null}]}');
    const extra: unknown[] & { foo?: string } = [1, 2];
    extra.foo = "bar";
    const values: unknown[] = [
      { role: "user", contents: [{ $type: "text", text: "hi", gone: undefined }], n: Number.NaN, z: -0, big: 10n },
      proto,
      // biome-ignore lint/suspicious/noSparseArray: a hole, kept by structuredClone
      [1, , 3],
      extra,
      new Date(0),
      Object.create(null),
      [new Map([[1, 2]])],
      { when: new Date(5), deep: { deeper: [{ x: "y" }] } },
      "text",
      7,
      null,
      undefined,
    ];
    for (const value of values) {
      const copy = cloneData(value);
      expect(copy).toStrictEqual(structuredClone(value));
      if (typeof value === "object" && value !== null) {
        expect(copy).not.toBe(value);
        expect(Object.getPrototypeOf(copy)).toBe(Object.getPrototypeOf(structuredClone(value)));
      }
    }
    const copied = cloneData(proto);
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(["__proto__", "b"]);
    expect(copied.b[1]).not.toBe(proto.b[1]);
  });

  it("keeps shared objects and cycles as structuredClone does", () => {
    const shared = { a: 1 };
    const pair = cloneData([shared, shared]);
    expect(pair[0]).toBe(pair[1]);
    expect(pair[0]).not.toBe(shared);
    const cycle: { self?: unknown } = {};
    cycle.self = cycle;
    const copy = cloneData(cycle);
    expect(copy.self).toBe(copy);
  });

  it("throws what structuredClone throws", () => {
    for (const bad of [{ f: () => 1 }, { s: Symbol("x") }, new Proxy({}, {}), [new Proxy([], {})]]) {
      let expected: unknown;
      try {
        structuredClone(bad);
      } catch (error) {
        expected = error;
      }
      expect(expected).toBeInstanceOf(Error);
      expect(() => cloneData(bad)).toThrow((expected as Error).message);
    }
  });
});
