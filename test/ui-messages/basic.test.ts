import { describe, expect, it } from "vitest";
import { fromUIMessages, toUIMessages, UIMessageError, type UIMessage } from "../../src/ui-messages.js";
import type { ChatMessage } from "../../src/index.js";

const history: ChatMessage[] = [
  {
    role: "user",
    messageId: "u1",
    createdAt: "2026-01-02T03:04:05Z",
    contents: [
      { $type: "text", text: "Refund A-1042" },
      { $type: "data", uri: "data:image/png;base64,AAAA", name: "r.png" },
    ],
  },
  {
    role: "assistant",
    messageId: "a1",
    contents: [
      {
        $type: "reasoning",
        text: "thinking",
        additionalProperties: { providerMetadata: { anthropic: { signature: "s" } } },
      },
      { $type: "functionCall", callId: "c1", name: "lookup", arguments: { id: "A-1042" } },
      {
        $type: "toolApprovalRequest",
        requestId: "r1",
        toolCall: { $type: "functionCall", callId: "c2", name: "refund", arguments: { amount: 129 } },
      },
    ],
  },
  {
    role: "user",
    contents: [
      {
        $type: "toolApprovalResponse",
        requestId: "r1",
        approved: false,
        reason: "too much",
        toolCall: { $type: "functionCall", callId: "c2", name: "refund", arguments: { amount: 129 } },
      },
    ],
  },
  {
    role: "tool",
    contents: [
      { $type: "functionResult", callId: "c1", result: { found: true } },
      {
        $type: "functionResult",
        callId: "c2",
        result: { error: "the user rejected this call to refund: too much", rejected: true },
      },
    ],
  },
  {
    role: "assistant",
    messageId: "a2",
    contents: [
      { $type: "text", text: "Refused." },
      {
        $type: "text",
        text: "",
        annotations: [
          { $type: "citation", url: "https://x.test/p", title: "Policy", additionalProperties: { sourceId: "s1" } },
        ],
      },
      { $type: "usage", details: { inputTokenCount: 3, outputTokenCount: 2 } },
    ],
  },
];

describe("toUIMessages / fromUIMessages", () => {
  it("folds results and answers into tool parts, and shows one assistant turn as one message of steps", () => {
    const ui = toUIMessages(history);
    // a1 (the calls), the answer and the results (folded), a2 (the reply): one turn, one message.
    expect(ui.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(ui[0]).toEqual({
      id: "u1",
      role: "user",
      metadata: { createdAt: "2026-01-02T03:04:05Z" },
      parts: [
        { type: "text", text: "Refund A-1042" },
        { type: "file", mediaType: "image/png", url: "data:image/png;base64,AAAA", filename: "r.png" },
      ],
    });
    expect(ui[1]).toEqual({
      id: "a1",
      role: "assistant",
      metadata: { usage: { inputTokenCount: 3, outputTokenCount: 2 } },
      parts: [
        { type: "step-start" },
        { type: "reasoning", text: "thinking", state: "done", providerMetadata: { anthropic: { signature: "s" } } },
        {
          type: "tool-lookup",
          toolCallId: "c1",
          state: "output-available",
          input: { id: "A-1042" },
          output: { found: true },
        },
        {
          type: "tool-refund",
          toolCallId: "c2",
          state: "output-denied",
          input: { amount: 129 },
          approval: { id: "r1", approved: false, reason: "too much" },
        },
        { type: "step-start" },
        { type: "text", text: "Refused.", state: "done" },
        { type: "source-url", sourceId: "s1", url: "https://x.test/p", title: "Policy" },
      ],
    });
  });

  it("sums the usage of a turn's steps, and a user message ends a turn", () => {
    const usage = (n: number) => ({
      $type: "usage" as const,
      details: { inputTokenCount: n, additionalCounts: { x: n } },
    });
    const turns: ChatMessage[] = [
      { role: "user", messageId: "u1", contents: [{ $type: "text", text: "a" }] },
      { role: "assistant", messageId: "a1", contents: [{ $type: "functionCall", callId: "c", name: "t" }, usage(2)] },
      { role: "tool", contents: [{ $type: "functionResult", callId: "c", result: 1 }] },
      { role: "assistant", messageId: "a2", contents: [{ $type: "text", text: "b" }, usage(3)] },
      { role: "user", messageId: "u2", contents: [{ $type: "text", text: "c" }] },
      { role: "assistant", messageId: "a3", contents: [{ $type: "text", text: "d" }] },
    ];
    const ui = toUIMessages(turns);
    expect(ui.map((m) => [m.id, m.parts.map((p) => p.type)])).toEqual([
      ["u1", ["text"]],
      ["a1", ["step-start", "tool-t", "step-start", "text"]],
      ["u2", ["text"]],
      ["a3", ["step-start", "text"]],
    ]);
    expect(ui[1].metadata).toEqual({ usage: { inputTokenCount: 5, additionalCounts: { x: 5 } } });
    // Back: one statebag message per step, the turn's usage on its first; the later steps' own ids are not carried.
    expect(fromUIMessages(ui)).toEqual([
      turns[0],
      {
        role: "assistant",
        messageId: "a1",
        contents: [
          { $type: "functionCall", callId: "c", name: "t", arguments: {} },
          { $type: "usage", details: { inputTokenCount: 5, additionalCounts: { x: 5 } } },
        ],
      },
      turns[2],
      { role: "assistant", contents: [{ $type: "text", text: "b" }] },
      turns[4],
      turns[5],
    ]);
  });

  it("round-trips statebag -> UI -> statebag (a turn's later steps lose their own ids and usage)", () => {
    const back = fromUIMessages(toUIMessages(history));
    const expected = structuredClone(history);
    const usage = expected[4].contents.pop()!;
    delete expected[4].messageId;
    expected[1].contents.push(usage);
    expect(back).toEqual(expected);
  });

  it("keeps two assistant messages in a row apart, and a message that began without a step-start", () => {
    const ui = [
      { id: "a", role: "assistant", parts: [{ type: "text", text: "one" }] },
      {
        id: "b",
        role: "assistant",
        parts: [{ type: "step-start" }, { type: "step-start" }, { type: "text", text: "two" }, { type: "step-start" }],
      },
      { id: "c", role: "assistant", parts: [] },
      { id: "u", role: "user", parts: [{ type: "step-start" }, { type: "text", text: "hi" }] },
    ] as unknown as UIMessage[];
    const history = fromUIMessages(ui);
    expect(history.filter((m) => m.role === "assistant")).toHaveLength(5);
    expect(toUIMessages(history)).toEqual(ui);
  });

  it("shows a message stored before steps (its step-start kept as a part) as it was stored", () => {
    const old: ChatMessage[] = [
      { role: "user", messageId: "u", contents: [{ $type: "text", text: "hi" }] },
      {
        role: "assistant",
        messageId: "a",
        contents: [{ $type: "text", text: "x" }],
        additionalProperties: { "statebag.ui": { parts: [{ index: 0, part: { type: "step-start" } }] } },
      },
      { role: "assistant", messageId: "b", contents: [{ $type: "text", text: "y" }] },
    ];
    expect(toUIMessages(old).map((m) => [m.id, m.parts.map((p) => p.type)])).toEqual([
      ["u", ["text"]],
      ["a", ["step-start", "text", "step-start", "text"]],
    ]);
  });

  it("round-trips UI -> statebag -> UI, keeping what statebag has no place for", () => {
    const ui = [
      {
        id: "m1",
        role: "assistant",
        metadata: { model: "x" },
        parts: [
          { type: "step-start" },
          { type: "text", text: "hi", state: "done" },
          { type: "dynamic-tool", toolName: "t", toolCallId: "k", state: "input-streaming", input: "partial" },
          { type: "data-weather", id: "w", data: { c: 19 } },
        ],
      },
    ] as unknown as UIMessage[];
    const back = toUIMessages(fromUIMessages(ui));
    expect(back).toEqual(ui);
  });

  it("refuses bad input with a pointer", () => {
    expect(() => fromUIMessages([{ id: "x", role: "user", parts: [{ type: "text", text: 3 }] }] as never)).toThrow(
      UIMessageError,
    );
    try {
      fromUIMessages([{ id: "x", role: "user", parts: [{ type: "text", text: 3 }] }] as never);
    } catch (e) {
      expect((e as UIMessageError).pointer).toBe("/0/parts/0/text");
    }
  });
});

describe("sessions, versions and hostile input", () => {
  const session = {
    id: "s",
    stateBag: {
      "statebag.chatHistory": {
        $type: "InMemoryChatHistoryState",
        $version: 2,
        messages: history,
        droppedMessageCount: 0,
      },
    },
  } as never;

  it("reads a session's in-memory history; a stored history asks for its messages", () => {
    expect(toUIMessages(session)).toEqual(toUIMessages(history));
    const stored = {
      id: "s",
      stateBag: {
        "statebag.chatHistory": { $type: "StoredChatHistoryState", $version: 1, storageId: "s", messageCount: 3 },
      },
    } as never;
    expect(() => toUIMessages(stored)).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/message log/),
        hint: expect.stringMatching(/^read it with resolveStoredHistory/),
      }),
    );
    expect(toUIMessages({ id: "e", stateBag: {} } as never)).toEqual([]);
  });

  it("writes ai 5 tool parts without approval states", () => {
    const v5 = toUIMessages(history, { version: 5 });
    expect(v5[1].parts[3]).toEqual({
      type: "tool-refund",
      toolCallId: "c2",
      state: "output-error",
      input: { amount: 129 },
      errorText: "the user rejected this call to refund: too much",
    });
  });

  it("refuses deep, duplicate and non-JSON input with pointers, and is linear on large input", () => {
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => fromUIMessages([{ id: "m", role: "user", parts: [{ type: "data-x", data: deep }] }] as never)).toThrow(
      /deep/,
    );
    const dup = [
      {
        id: "m",
        role: "assistant",
        parts: [
          { type: "tool-a", toolCallId: "c", state: "input-available", input: {} },
          { type: "tool-b", toolCallId: "c", state: "input-available", input: {} },
        ],
      },
    ];
    expect(() => fromUIMessages(dup as never)).toThrow(
      expect.objectContaining({ code: "invalid-message", pointer: "/0/parts/1/toolCallId" }),
    );
    expect(() =>
      fromUIMessages([{ id: "m", role: "user", parts: [{ type: "data-x", data: Number.NaN }] }] as never),
    ).toThrow();
    expect(() =>
      fromUIMessages([{ id: "m", role: "user", parts: [{ type: "mystery" }] }] as never, { unknownParts: "reject" }),
    ).toThrow(/unknown part type/);
    const big = Array.from({ length: 20_000 }, (_, i) => ({
      id: `m${i}`,
      role: "assistant",
      parts: [{ type: `tool-t`, toolCallId: `c${i}`, state: "output-available", input: {}, output: i }],
    }));
    const t0 = performance.now();
    expect(toUIMessages(fromUIMessages(big as never))).toEqual(big);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
