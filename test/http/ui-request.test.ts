/**
 * The request's user message read directly (`plainUserMessage`: text parts and inline files, what
 * useChat sends) gives what `fromUIMessages` gives it, as far as the handler keeps it; anything
 * else is left to `fromUIMessages`.
 */
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { parseUIChatRequest, plainUserMessage } from "../../src/runtime/http/ai-sdk-ui.js";
import { fromUIMessages } from "../../src/runtime/ui-messages/from-ui.js";
import type { UIMessageLike } from "../../src/runtime/ui-messages/types.js";

const PNG = `data:image/png;base64,${Buffer.from("png bytes").toString("base64")}`;
const LIMITS = { maxMessageChars: 1000, maxAnswers: 4, maxFileBytes: 1 << 20, maxFiles: 4, fileTypes: ["image/*"] };

/** What the handler keeps of a converted user message's contents. */
function kept(contents: ChatMessage["contents"]): unknown[] {
  return contents.map((c) =>
    c.$type === "text"
      ? { $type: "text", text: c.text }
      : c.$type === "data"
        ? { $type: "data", uri: c.uri, ...(c.name !== undefined ? { name: c.name } : {}) }
        : { other: c.$type },
  );
}

const cases: [string, Record<string, unknown>][] = [
  ["one text part", { id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] }],
  [
    "two text parts",
    {
      id: "u1",
      role: "user",
      parts: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
    },
  ],
  ["no id", { role: "user", parts: [{ type: "text", text: "hello" }] }],
  ["no parts", { id: "u1", role: "user", parts: [] }],
  ["empty text", { id: "u1", role: "user", parts: [{ type: "text", text: "" }] }],
  [
    "a text part with state and provider metadata",
    { id: "u1", role: "user", parts: [{ type: "text", text: "hi", state: "done", providerMetadata: { x: { y: 1 } } }] },
  ],
  [
    "a file",
    {
      id: "u1",
      role: "user",
      parts: [
        { type: "text", text: "see" },
        { type: "file", url: PNG, mediaType: "image/png" },
      ],
    },
  ],
  [
    "a named file",
    { id: "u1", role: "user", parts: [{ type: "file", url: PNG, mediaType: "image/png", filename: "a.png" }] },
  ],
  [
    "metadata with createdAt",
    { id: "u1", role: "user", metadata: { createdAt: "2025-01-01T00:00:00Z" }, parts: [{ type: "text", text: "hi" }] },
  ],
  ["app metadata", { id: "u1", role: "user", metadata: { app: [1, 2] }, parts: [{ type: "text", text: "hi" }] }],
  ["metadata that is not an object", { id: "u1", role: "user", metadata: "m", parts: [{ type: "text", text: "hi" }] }],
  ["extra fields", { id: "u1", role: "user", extra: { a: 1 }, parts: [{ type: "text", text: "hi" }] }],
  // Left to fromUIMessages:
  [
    "usage metadata",
    { id: "u1", role: "user", metadata: { usage: { inputTokenCount: 1 } }, parts: [{ type: "text", text: "hi" }] },
  ],
  ["a step-start", { id: "u1", role: "user", parts: [{ type: "step-start" }, { type: "text", text: "hi" }] }],
  [
    "a data part",
    {
      id: "u1",
      role: "user",
      parts: [
        { type: "data-x", data: 1 },
        { type: "text", text: "hi" },
      ],
    },
  ],
  ["a source", { id: "u1", role: "user", parts: [{ type: "source-url", sourceId: "s", url: "https://x" }] }],
  [
    "a tool part",
    { id: "u1", role: "user", parts: [{ type: "tool-x", toolCallId: "c", state: "input-available", input: {} }] },
  ],
  ["a text that is not a string", { id: "u1", role: "user", parts: [{ type: "text", text: 1 }] }],
  ["a file without media type", { id: "u1", role: "user", parts: [{ type: "file", url: PNG }] }],
  [
    "a file name that is not a string",
    { id: "u1", role: "user", parts: [{ type: "file", url: PNG, mediaType: "image/png", filename: 3 }] },
  ],
  ["an id that is not a string", { id: 7, role: "user", parts: [{ type: "text", text: "hi" }] }],
  ["a part that is not an object", { id: "u1", role: "user", parts: ["hi"] }],
  ["an unknown part", { id: "u1", role: "user", parts: [{ type: "mystery" }] }],
];

describe("the request's user message read directly", () => {
  it.each(cases)("%s: what fromUIMessages gives, or left to it", (_name, message) => {
    let reference: ChatMessage[] | Error;
    try {
      reference = fromUIMessages([message as unknown as UIMessageLike], { unknownParts: "reject" });
    } catch (error) {
      reference = error as Error;
    }
    const direct = plainUserMessage(message);
    if (direct === undefined) return;
    // Read directly only what fromUIMessages reads as one user message of texts and files.
    expect(reference).toBeInstanceOf(Array);
    const messages = reference as ChatMessage[];
    expect(messages).toHaveLength(1);
    expect(messages[0].role).toBe("user");
    expect(kept(direct[0].contents)).toEqual(kept(messages[0].contents));
  });

  it("the direct reading applies to what useChat sends (text, files), not to the rest", () => {
    const direct = cases.filter(([, message]) => plainUserMessage(message) !== undefined).map(([name]) => name);
    expect(direct).toEqual(cases.slice(0, 12).map(([name]) => name));
  });

  it("a value JSON cannot hold is refused as before (a 400 naming no input)", () => {
    const body = {
      id: "c1",
      messages: [{ id: "u1", role: "user", extra: [undefined], parts: [{ type: "text", text: "hi" }] }],
    };
    expect(() => parseUIChatRequest(body, LIMITS)).toThrow(expect.objectContaining({ code: "http-invalid-request" }));
  });
});
