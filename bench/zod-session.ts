/**
 * The baseline for `validate.*`: the same session model written by hand as a zod 4 schema, the way
 * a TypeScript team would validate stored sessions without statebag. Faithful to the generated
 * schemas (src/generated/registry.ts), check for check: every content type (statebag.foreign
 * included) as a discriminated union on `$type`, annotations (citation + textSpan regions) on
 * every content, nested tool calls in approval contents, every built-in provider state,
 * `createdAt` as ISO-8601 date-time with an offset (zod checks calendar days too, as statebag
 * does), integer token counts.
 *
 * Objects are `strictObject`: statebag's generated schemas are closed (`additionalProperties: false`),
 * so unknown properties are errors on both sides (a stripping `z.object` would silently drop data).
 * Where statebag's schema accepts any value (`functionResult.result`, foreign values) or any object
 * (`additionalProperties` bags, `functionCall.arguments`), so does this one: `z.unknown()` and a
 * record of unknowns, not `z.json()`, which walks the whole value for a check statebag does not
 * make (after `JSON.parse` it holds by construction). With `z.json()` zod took 1.7-2.3x as long
 * on the bench session, a speed-up statebag would not have earned.
 */
import { z } from "zod";

const obj = z.strictObject;

/** Any object (`{ type: "object" }`): its values are not checked, as in statebag's schema. */
const anyObject = z.record(z.string(), z.unknown());
/** Any value, but the key must be there (a required property whose schema is `{}`). */
const anyValue = z.custom<unknown>((v) => v !== undefined);
const additionalProperties = anyObject.optional();
const v1 = z.literal(1).optional();
const int = z.number().int();

const textSpan = obj({ $type: z.literal("textSpan"), $version: v1, start: int.optional(), end: int.optional() });
const annotatedRegion = z.discriminatedUnion("$type", [textSpan]);

const citation = obj({
  $type: z.literal("citation"),
  $version: v1,
  title: z.string().optional(),
  url: z.string().optional(),
  fileId: z.string().optional(),
  toolName: z.string().optional(),
  snippet: z.string().optional(),
  annotatedRegions: z.array(annotatedRegion).optional(),
  additionalProperties,
});
const annotation = z.discriminatedUnion("$type", [citation]);

const base = { $version: v1, annotations: z.array(annotation).optional(), additionalProperties };

const usageDetails = obj({
  inputTokenCount: int.optional(),
  outputTokenCount: int.optional(),
  totalTokenCount: int.optional(),
  cachedInputTokenCount: int.optional(),
  reasoningTokenCount: int.optional(),
  additionalCounts: z.record(z.string(), z.number()).optional(),
});

const text = obj({ $type: z.literal("text"), ...base, text: z.string() });
const reasoning = obj({
  $type: z.literal("reasoning"),
  ...base,
  text: z.string().optional(),
  protectedData: z.string().optional(),
});
const data = obj({ $type: z.literal("data"), ...base, uri: z.string().regex(/^data:/), name: z.string().optional() });
const uri = obj({ $type: z.literal("uri"), ...base, uri: z.string(), mediaType: z.string() });
const error = obj({
  $type: z.literal("error"),
  ...base,
  message: z.string(),
  errorCode: z.string().optional(),
  details: z.string().optional(),
});
const usage = obj({ $type: z.literal("usage"), ...base, details: usageDetails });
const functionCall = obj({
  $type: z.literal("functionCall"),
  ...base,
  callId: z.string(),
  name: z.string(),
  arguments: anyObject.optional(),
  informationalOnly: z.boolean().optional(),
});
const functionResult = obj({
  $type: z.literal("functionResult"),
  ...base,
  callId: z.string(),
  result: z.unknown().optional(),
});
const foreign = obj({
  $type: z.literal("statebag.foreign"),
  ...base,
  format: z.enum(["dotnet", "python"]),
  value: anyObject,
});
const hostedFile = obj({
  $type: z.literal("hostedFile"),
  ...base,
  fileId: z.string(),
  mediaType: z.string().optional(),
  name: z.string().optional(),
});

// Approval contents nest a content of their own: a recursive schema (zod 4 getters).
const toolApprovalRequest = obj({
  $type: z.literal("toolApprovalRequest"),
  ...base,
  requestId: z.string(),
  get toolCall(): z.ZodType {
    return aiContent;
  },
  requiresConfirmation: z.boolean().optional(),
});
const toolApprovalResponse = obj({
  $type: z.literal("toolApprovalResponse"),
  ...base,
  requestId: z.string(),
  approved: z.boolean(),
  get toolCall(): z.ZodOptional<z.ZodType> {
    return aiContent.optional();
  },
  reason: z.string().optional(),
});

export const aiContent: z.ZodType = z.discriminatedUnion("$type", [
  text,
  reasoning,
  data,
  uri,
  error,
  usage,
  functionCall,
  functionResult,
  hostedFile,
  toolApprovalRequest,
  toolApprovalResponse,
  foreign,
]);

export const chatMessage = obj({
  authorName: z.string().optional(),
  createdAt: z.iso.datetime({ offset: true }).optional(),
  role: z.string(),
  contents: z.array(aiContent),
  messageId: z.string().optional(),
  additionalProperties,
});

const forkOrigin = obj({
  sessionId: z.string(),
  messageId: z.string(),
  forkedAt: z.iso.datetime({ offset: true }),
});
const inMemoryChatHistoryState = obj({
  $type: z.literal("InMemoryChatHistoryState"),
  $version: z.literal(3),
  messages: z.array(chatMessage),
  droppedMessageCount: int.min(0),
  branches: z.array(obj({ parentId: z.string().nullable(), message: chatMessage })),
  branchPoints: z.array(obj({ parentId: z.string().nullable(), childIds: z.array(z.string()) })),
  forkedFrom: forkOrigin.optional(),
});
const rollingSummaryState = obj({
  $type: z.literal("RollingSummaryState"),
  $version: z.literal(2),
  summary: z.string(),
  recentMessages: z.array(chatMessage),
  turnCount: int.min(0),
});

const logEntryRef = obj({ run: int.min(0), offset: int.min(0) });
const storedChatHistoryState = obj({
  $type: z.literal("StoredChatHistoryState"),
  $version: z.literal(2),
  storageId: z.string(),
  messageCount: int.min(0),
  pending: obj({
    operationId: z.string(),
    mode: z.enum(["append", "replace"]),
    messages: z.array(chatMessage),
  }).optional(),
  tree: obj({
    runs: z.array(
      obj({ storageId: z.string().optional(), start: int.min(0), count: int.min(1), parent: logEntryRef.optional() }),
    ),
    active: logEntryRef.optional(),
  }).optional(),
  forkedFrom: forkOrigin.optional(),
});
const foreignState = obj({
  $type: z.literal("statebag.ForeignState"),
  $version: v1,
  format: z.enum(["dotnet", "python"]),
  value: anyValue,
});
const groupChatChannelState = obj({
  $type: z.literal("statebag.GroupChatChannelState"),
  $version: v1,
  channelKey: z.string(),
  synced: int.min(0),
});
const workflowState = obj({
  $type: z.literal("statebag.WorkflowState"),
  $version: v1,
  participants: z.record(
    z.string(),
    obj({
      kind: z.enum(["hosted", "local"]).optional(),
      conversationId: z.union([z.record(z.string(), z.string()), z.string()]).optional(),
    }),
  ),
});

export const sessionSchema = obj({
  id: z.string().min(1),
  kind: z.enum(["local", "hosted"]).optional(),
  conversationId: z.union([z.string(), z.record(z.string(), z.string())]).optional(),
  stateBag: z.record(
    z.string(),
    z.discriminatedUnion("$type", [
      inMemoryChatHistoryState,
      rollingSummaryState,
      storedChatHistoryState,
      foreignState,
      groupChatChannelState,
      workflowState,
    ]),
  ),
});

export type ZodSession = z.infer<typeof sessionSchema>;
