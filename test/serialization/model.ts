/**
 * Hand-made TypeDefinitions for the serialization tests and bench probe: the MEAI message model
 * (history state, contents, annotations) compiled by ajv the way generated code will be, until
 * `src/generated/registry.ts` exists. Slot positions are opaque (`{ type: "object" }`) in each
 * type's own schema; the walker dispatches what sits there.
 */
import AjvModule from "ajv";
import { isDateTime } from "../../src/runtime/registry/formats.js";
import type { FamilySlot, TypeDefinition, Validator } from "../../src/runtime/registry/registry-types.js";

const Ajv = AjvModule.default;
export const ajv = new Ajv({ allErrors: true, strict: true, formats: { "date-time": isDateTime } });

type Schema = Record<string, unknown>;
const OPAQUE: Schema = { type: "object" };
const ADDITIONAL: Schema = { type: "object" };
const INT: Schema = { type: "integer" };

function tagged(
  $type: string,
  family: string,
  version: number,
  props: Record<string, Schema>,
  required: string[],
  slots: FamilySlot[] = [],
  extra: Partial<TypeDefinition> = {},
): TypeDefinition {
  const schema: Schema = {
    type: "object",
    properties: { $type: { const: $type }, $version: { const: version }, ...props },
    required: ["$type", ...(version > 1 ? ["$version"] : []), ...required],
    additionalProperties: false,
  };
  const validate = ajv.compile(schema) as Validator;
  return {
    $type,
    family,
    version,
    schema,
    validate,
    slots,
    name: $type,
    source: `test/serialization/model.ts (${$type})`,
    ...extra,
  };
}

const contentBase = { annotations: { type: "array", items: OPAQUE }, additionalProperties: ADDITIONAL };
const contentSlots: FamilySlot[] = [{ path: ["annotations", "*"], family: "AIAnnotation" }];
function content(
  $type: string,
  props: Record<string, Schema>,
  required: string[],
  slots: FamilySlot[] = [],
): TypeDefinition {
  return tagged($type, "AIContent", 1, { ...contentBase, ...props }, required, [...contentSlots, ...slots]);
}

export const chatMessageSchema: Schema = {
  type: "object",
  properties: {
    authorName: { type: "string" },
    createdAt: { type: "string", format: "date-time" },
    role: { type: "string" },
    contents: { type: "array", items: OPAQUE },
    messageId: { type: "string" },
    additionalProperties: ADDITIONAL,
  },
  required: ["role", "contents"],
  additionalProperties: false,
};

export function makeModelTypes(): TypeDefinition[] {
  return [
    tagged(
      "InMemoryChatHistoryState",
      "ProviderState",
      1,
      { messages: { type: "array", items: chatMessageSchema } },
      ["messages"],
      [{ path: ["messages", "*", "contents", "*"], family: "AIContent" }],
    ),
    tagged(
      "RollingSummaryState",
      "ProviderState",
      1,
      {
        summary: { type: "string" },
        recentMessages: { type: "array", items: chatMessageSchema },
        turns: { type: "integer", minimum: 0 },
      },
      ["summary", "recentMessages", "turns"],
      [{ path: ["recentMessages", "*", "contents", "*"], family: "AIContent" }],
    ),
    tagged(
      "acme.SummaryState",
      "ProviderState",
      2,
      { summary: { type: "string" }, lines: { type: "array", items: { type: "string" } } },
      ["summary"],
    ),
    content("text", { text: { type: "string" } }, ["text"]),
    content("reasoning", { text: { type: "string" }, protectedData: { type: "string" } }, []),
    content("data", { uri: { type: "string", pattern: "^data:" }, name: { type: "string" } }, ["uri"]),
    content("uri", { uri: { type: "string" }, mediaType: { type: "string" } }, ["uri", "mediaType"]),
    content("error", { message: { type: "string" }, errorCode: { type: "string" }, details: { type: "string" } }, [
      "message",
    ]),
    content(
      "usage",
      {
        details: {
          type: "object",
          properties: {
            inputTokenCount: INT,
            outputTokenCount: INT,
            totalTokenCount: INT,
            cachedInputTokenCount: INT,
            reasoningTokenCount: INT,
            additionalCounts: { type: "object", additionalProperties: { type: "number" } },
          },
          additionalProperties: false,
        },
      },
      ["details"],
    ),
    content(
      "functionCall",
      {
        callId: { type: "string" },
        name: { type: "string" },
        arguments: { type: "object" },
        informationalOnly: { type: "boolean" },
      },
      ["callId", "name"],
    ),
    content("functionResult", { callId: { type: "string" }, result: {} }, ["callId"]),
    content("hostedFile", { fileId: { type: "string" }, mediaType: { type: "string" }, name: { type: "string" } }, [
      "fileId",
    ]),
    content(
      "toolApprovalRequest",
      { requestId: { type: "string" }, toolCall: OPAQUE, requiresConfirmation: { type: "boolean" } },
      ["requestId", "toolCall"],
      [{ path: ["toolCall"], family: "AIContent" }],
    ),
    content(
      "toolApprovalResponse",
      { requestId: { type: "string" }, approved: { type: "boolean" }, toolCall: OPAQUE, reason: { type: "string" } },
      ["requestId", "approved"],
      [{ path: ["toolCall"], family: "AIContent" }],
    ),
    tagged(
      "citation",
      "AIAnnotation",
      1,
      {
        title: { type: "string" },
        url: { type: "string" },
        fileId: { type: "string" },
        toolName: { type: "string" },
        snippet: { type: "string" },
        annotatedRegions: { type: "array", items: OPAQUE },
        additionalProperties: ADDITIONAL,
      },
      [],
      [{ path: ["annotatedRegions", "*"], family: "AnnotatedRegion" }],
    ),
    tagged("textSpan", "AnnotatedRegion", 1, { start: INT, end: INT }, []),
  ];
}

/** A session-like document with `n` messages (deterministic). */
export function makeSession(n = 1000, seed = 1): any {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const words =
    "the quick brown fox jumps over lazy dog lorem ipsum dolor sit amet agent session state bag provider message content".split(
      " ",
    );
  const text = (k: number) => {
    const o: string[] = [];
    for (let i = 0; i < k; i++) o.push(words[(rnd() * words.length) | 0]);
    return o.join(" ");
  };
  const messages: any[] = [];
  const t0 = Date.UTC(2025, 0, 1);
  for (let i = 0; i < n; i++) {
    const role = i % 4 === 0 ? "user" : i % 4 === 2 ? "tool" : "assistant";
    const contents: any[] = [];
    if (role === "tool")
      contents.push({
        $type: "functionResult",
        callId: "call_" + i,
        result: { ok: true, rows: [1, 2, 3], note: text(8) },
      });
    else if (i % 4 === 1) {
      contents.push({ $type: "text", text: text(30) });
      contents.push({
        $type: "functionCall",
        callId: "call_" + (i + 1),
        name: "lookup",
        arguments: { q: text(4), limit: 10 },
      });
    } else contents.push({ $type: "text", text: text(50) });
    if (i % 10 === 3)
      contents.push({
        $type: "usage",
        details: { inputTokenCount: 100 + i, outputTokenCount: 20, totalTokenCount: 120 + i },
      });
    if (i % 50 === 7)
      contents.push({
        $type: "text",
        text: "see source",
        annotations: [
          {
            $type: "citation",
            title: "doc",
            url: "https://example.com",
            annotatedRegions: [{ $type: "textSpan", start: 0, end: 3 }],
          },
        ],
      });
    const m: any = {
      role,
      contents,
      messageId: "msg_" + i,
      createdAt: new Date(t0 + i * 1000).toISOString().replace("Z", "+00:00"),
    };
    if (i % 7 === 0) m.authorName = "Fred";
    messages.push(m);
  }
  return {
    id: "3f1c2a4e-1111-4222-8333-944455556666",
    kind: "local",
    stateBag: {
      "statebag.chatHistory": { $type: "InMemoryChatHistoryState", messages },
      "acme.summary": { $type: "acme.SummaryState", $version: 2, summary: text(20) },
    },
  };
}
