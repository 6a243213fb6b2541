/**
 * AI SDK UI messages (`ai` 5, 6 or 7) -> statebag history, the inverse of `toUIMessages`. A user
 * or system UI message becomes one statebag message; an assistant one becomes one statebag
 * message per step (its `step-start` parts divide them), each followed by its tools' answers and
 * results as a `user` message of `toolApprovalResponse` contents and a `tool` message of
 * `functionResult` contents, which is how statebag's agent records a turn. Whatever has no statebag counterpart is kept under
 * `additionalProperties["statebag.ui"]` (see keys.ts), so `toUIMessages` gives the input back.
 */
import type {
  AIContent,
  ChatMessage,
  FunctionCallContent,
  FunctionResultContent,
  ToolApprovalResponseContent,
} from "../core/messages.js";
import type { JsonValue } from "../core/tagged.js";
import { jsonEqual } from "../core/json.js";
import { checkWritableJson } from "../json/safe-json.js";
import { cloneJson, isPlainObject, type JsonRecord } from "../interop/json-util.js";
import { UIMessageError, expected } from "./errors.js";
import { rejectedResult, STATEBAG_CONTENT_PART, UI_MESSAGE_KEY, type ContentExtra, type MessageExtra } from "./keys.js";
import { buildUIMessages } from "./to-ui.js";
import type { UIMessageLike } from "./types.js";

export interface FromUIMessagesOptions {
  /**
   * Parts of types statebag does not know (`custom`, `reasoning-file`, a later version's): kept in
   * the message (`"keep"`, the default) or refused with a `UIMessageError` (`"reject"`).
   */
  unknownParts?: "keep" | "reject";
}

const ROLES = new Set(["system", "user", "assistant"]);
const STATES = new Set([
  "input-streaming",
  "input-available",
  "approval-requested",
  "approval-responded",
  "output-available",
  "output-error",
  "output-denied",
]);
/** Parts kept as they are (no statebag content): known types; anything else is "unknown". */
const KEPT = new Set(["step-start", "custom", "reasoning-file", "steering-message"]);
/** Statebag contents a `data-statebag-content` part brings back (the others stay a data part). */
const RESTORED = new Set(["error", "hostedFile", "usage", "statebag.blobReference"]);
/** Date-time with an offset, as `ChatMessage.createdAt` requires. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
const HINT = "pass the messages as useChat keeps them (UIMessage[] of ai 5, 6 or 7)";

interface Link {
  part: JsonRecord;
  content: AIContent;
}

/** One step of a UI message: one statebag message, with the parts it keeps by their index in the step. */
interface Step {
  message: ChatMessage;
  kept: { index: number; part: JsonRecord }[];
}

interface Pending {
  ui: JsonRecord;
  steps: Step[];
  links: Link[];
}

export function fromUIMessages(messages: readonly UIMessageLike[], options: FromUIMessagesOptions = {}): ChatMessage[] {
  if (!Array.isArray(messages)) throw expected([], "an array of UI messages", messages, HINT);
  // Plain JSON within the reader's limits (depth, keys; iterative, so any depth is safe).
  checkWritableJson(messages, { protoKeys: "keep" });
  const out: ChatMessage[] = [];
  const pending: Pending[] = [];
  const callIds = new Map<string, string>();
  const approvalIds = new Map<string, string>();
  let previousRole: unknown;
  messages.forEach((raw, i) => {
    if (!isPlainObject(raw)) throw expected([i], "a UI message ({ id, role, parts })", raw, HINT);
    const ui = raw as JsonRecord;
    if (ui.id !== undefined && typeof ui.id !== "string")
      throw expected([i, "id"], "a string", ui.id, "give every message a string id");
    if (typeof ui.role !== "string" || !ROLES.has(ui.role))
      throw expected([i, "role"], '"system", "user" or "assistant"', ui.role, "UI messages have these three roles");
    if (!Array.isArray(ui.parts)) throw expected([i, "parts"], "an array of parts", ui.parts, HINT);
    const role = ui.role;
    const entry: Pending = { ui, steps: [], links: [] };
    // An assistant message is split into steps at its step-start parts (each step one statebag
    // message, as agents write a turn); the step-start itself is implied by the step.
    let step: Step | undefined;
    let stepBegin = 0;
    let answers: ToolApprovalResponseContent[] = [];
    let results: FunctionResultContent[] = [];
    const endStep = () => {
      if (!step) return;
      out.push(step.message);
      if (answers.length > 0) out.push({ role: "user", contents: answers });
      if (results.length > 0) out.push({ role: "tool", contents: results });
      answers = [];
      results = [];
    };
    const beginStep = (at: number, withStepStart: boolean) => {
      endStep();
      const message: ChatMessage = { role, contents: [] };
      const marks: MessageExtra = {};
      if (entry.steps.length === 0) {
        if (typeof ui.id === "string") message.messageId = ui.id;
        if (role === "assistant" && !withStepStart) marks.stepStart = false;
        // Two assistant UI messages in a row stay two (a turn's steps would otherwise join them).
        if (role === "assistant" && previousRole === "assistant") marks.newMessage = true;
        if (Object.keys(marks).length > 0) setExtra(message, marks);
      }
      step = { message, kept: [] };
      stepBegin = at;
      entry.steps.push(step);
    };
    ui.parts.forEach((rawPart: unknown, j: number) => {
      const path = [i, "parts", j];
      if (!isPlainObject(rawPart) || typeof rawPart.type !== "string")
        throw expected(path, "a part with a string type", rawPart, HINT);
      const part = rawPart as JsonRecord & { type: string };
      if (role === "assistant" && part.type === "step-start") {
        beginStep(j, true);
        return;
      }
      if (!step) beginStep(j, false);
      const content = contentOf(part, path, callIds, approvalIds, answers, results);
      if (content !== undefined) {
        step!.message.contents.push(content);
        entry.links.push({ part, content });
        return;
      }
      const known = KEPT.has(part.type) || part.type.startsWith("data-");
      if (!known && options.unknownParts === "reject")
        throw new UIMessageError(
          [...path, "type"],
          `unknown part type ${JSON.stringify(part.type).slice(0, 80)}`,
          'convert or drop it first, or leave out unknownParts: "reject" to keep it as it is',
        );
      step!.kept.push({ index: j - stepBegin, part: cloneJson(part) });
    });
    if (!step) beginStep(0, false);
    const first = entry.steps[0].message;
    // Metadata statebag can say itself: { createdAt, usage }.
    const metadata = ui.metadata;
    if (isPlainObject(metadata)) {
      if (typeof metadata.createdAt === "string" && DATE_TIME.test(metadata.createdAt))
        first.createdAt = metadata.createdAt;
      if (isUsageDetails(metadata.usage) && Object.keys(metadata).every((k) => k === "createdAt" || k === "usage"))
        first.contents.push({ $type: "usage", details: cloneJson(metadata.usage) as JsonRecord });
    }
    endStep();
    pending.push(entry);
    previousRole = role;
  });

  // What toUIMessages makes of this; where it differs from the input, the input is kept.
  const madeFrom = new Map<AIContent, JsonRecord>();
  const derived = buildUIMessages(out, {}, madeFrom);
  pending.forEach((entry, k) => {
    const shown = derived[k] as unknown as JsonRecord;
    for (const link of entry.links) {
      const diff = diffOf(link.part, madeFrom.get(link.content) ?? {});
      if (diff !== undefined) addExtra(link.content, diff);
    }
    for (const step of entry.steps) if (step.kept.length > 0) setExtra(step.message, { parts: step.kept });
    const extra: MessageExtra = {};
    if (entry.ui.metadata === undefined) {
      if (shown.metadata !== undefined) extra.dropMetadata = true;
    } else if (!jsonEqual(entry.ui.metadata, shown.metadata)) extra.metadata = cloneJson(entry.ui.metadata);
    const fields: JsonRecord = {};
    for (const key of Object.keys(entry.ui))
      if (key !== "id" && key !== "role" && key !== "metadata" && key !== "parts" && entry.ui[key] !== undefined)
        fields[key] = cloneJson(entry.ui[key]);
    if (Object.keys(fields).length > 0) extra.fields = fields;
    if (Object.keys(extra).length > 0) setExtra(entry.steps[0].message, extra);
  });
  return out;
}

/** Adds to what a message keeps under `additionalProperties["statebag.ui"]`. */
function setExtra(message: ChatMessage, extra: MessageExtra): void {
  const had = message.additionalProperties?.[UI_MESSAGE_KEY];
  message.additionalProperties = {
    ...message.additionalProperties,
    [UI_MESSAGE_KEY]: { ...(isPlainObject(had) ? had : {}), ...extra } as unknown as JsonValue,
  };
}

const USAGE_COUNTS = new Set([
  "inputTokenCount",
  "outputTokenCount",
  "totalTokenCount",
  "cachedInputTokenCount",
  "reasoningTokenCount",
]);

/** statebag's own `UsageDetails` (as `toUIMessages` writes `metadata.usage`); an AI SDK app's usage stays metadata. */
function isUsageDetails(value: unknown): value is JsonRecord {
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) {
    const child = value[key];
    if (USAGE_COUNTS.has(key)) {
      if (!Number.isSafeInteger(child)) return false;
    } else if (key === "additionalCounts") {
      if (!isPlainObject(child) || !Object.values(child).every((n) => typeof n === "number" && Number.isFinite(n)))
        return false;
    } else return false;
  }
  return true;
}

function addExtra(content: AIContent, extra: ContentExtra): void {
  content.additionalProperties = { ...content.additionalProperties, [UI_MESSAGE_KEY]: extra as unknown as JsonValue };
}

/** The part's fields that `derived` does not give back as they are. */
function diffOf(part: JsonRecord, derived: JsonRecord): ContentExtra | undefined {
  const set: JsonRecord = {};
  const unset: string[] = [];
  for (const key of Object.keys(part))
    if (part[key] !== undefined && !jsonEqual(part[key], derived[key])) set[key] = cloneJson(part[key]);
  for (const key of Object.keys(derived)) if (derived[key] !== undefined && part[key] === undefined) unset.push(key);
  if (Object.keys(set).length === 0 && unset.length === 0) return undefined;
  return { ...(Object.keys(set).length ? { set } : {}), ...(unset.length ? { unset } : {}) };
}

function str(part: JsonRecord, key: string, path: (string | number)[], required = true): string | undefined {
  const field = part[key];
  if (field === undefined && !required) return undefined;
  if (typeof field !== "string")
    throw expected(
      [...path, key],
      "a string",
      field,
      `a ${String(part.type).slice(0, 40)} part needs ${key} as a string`,
    );
  return field;
}

function withProviderMetadata<T extends AIContent | FunctionResultContent>(content: T, metadata: unknown): T {
  if (isPlainObject(metadata))
    content.additionalProperties = {
      ...content.additionalProperties,
      providerMetadata: cloneJson(metadata) as JsonValue,
    };
  return content;
}

function contentOf(
  part: JsonRecord,
  path: (string | number)[],
  callIds: Map<string, string>,
  approvalIds: Map<string, string>,
  answers: ToolApprovalResponseContent[],
  results: FunctionResultContent[],
): AIContent | undefined {
  const type = part.type as string;
  switch (type) {
    case "text":
      return withProviderMetadata({ $type: "text", text: str(part, "text", path)! }, part.providerMetadata);
    case "reasoning":
      return withProviderMetadata({ $type: "reasoning", text: str(part, "text", path)! }, part.providerMetadata);
    case "file": {
      const url = str(part, "url", path)!;
      const mediaType = str(part, "mediaType", path)!;
      const filename = str(part, "filename", path, false);
      if (url.startsWith("data:"))
        return withProviderMetadata(
          { $type: "data", uri: url, ...(filename !== undefined ? { name: filename } : {}) },
          part.providerMetadata,
        );
      return withProviderMetadata({ $type: "uri", uri: url, mediaType }, part.providerMetadata);
    }
    case "source-url": {
      const sourceId = str(part, "sourceId", path)!;
      const title = str(part, "title", path, false);
      return withProviderMetadata(
        {
          $type: "text",
          text: "",
          annotations: [
            {
              $type: "citation",
              url: str(part, "url", path)!,
              ...(title !== undefined ? { title } : {}),
              additionalProperties: { sourceId },
            },
          ],
        },
        part.providerMetadata,
      );
    }
    case "source-document": {
      const sourceId = str(part, "sourceId", path)!;
      const filename = str(part, "filename", path, false);
      const extra = {
        mediaType: str(part, "mediaType", path)!,
        ...(filename !== undefined ? { filename } : {}),
        sourceId,
      };
      return withProviderMetadata(
        {
          $type: "text",
          text: "",
          annotations: [{ $type: "citation", title: str(part, "title", path)!, additionalProperties: extra }],
        },
        part.providerMetadata,
      );
    }
    case STATEBAG_CONTENT_PART: {
      const data = part.data;
      if (!isPlainObject(data) || typeof data.$type !== "string" || !RESTORED.has(data.$type)) return undefined;
      if (data.$type === "error" && typeof data.message !== "string") return undefined;
      if (data.$type === "hostedFile" && typeof data.fileId !== "string") return undefined;
      if (data.$type === "usage" && !isPlainObject(data.details)) return undefined;
      if (
        data.$type === "statebag.blobReference" &&
        (typeof data.hash !== "string" || typeof data.mediaType !== "string" || typeof data.size !== "number")
      )
        return undefined;
      const content = cloneJson(data) as unknown as AIContent;
      // A usage part that would read back as the message's metadata.usage stays a part.
      if (content.$type === "usage") addExtra(content, { asPart: true });
      return content;
    }
  }
  if (type !== "dynamic-tool" && !(type.startsWith("tool-") && type.length > 5)) return undefined;
  const name = type === "dynamic-tool" ? str(part, "toolName", path)! : type.slice(5);
  const callId = str(part, "toolCallId", path)!;
  const state = part.state;
  if (typeof state !== "string" || !STATES.has(state))
    throw expected(
      [...path, "state"],
      `a tool state (${[...STATES].join(", ")})`,
      state,
      "tool parts of ai 5, 6 and 7 have these states",
    );
  const seen = callIds.get(callId);
  if (seen !== undefined)
    throw new UIMessageError(
      [...path, "toolCallId"],
      `the tool call id is used twice (also at ${seen})`,
      "every tool call needs its own toolCallId",
    );
  callIds.set(callId, "/" + path.join("/"));
  const call: FunctionCallContent = { $type: "functionCall", callId, name };
  if (isPlainObject(part.input)) call.arguments = cloneJson(part.input) as { [k: string]: JsonValue };
  if (part.providerExecuted === true) call.informationalOnly = true;
  withProviderMetadata(call, part.callProviderMetadata);
  let content: AIContent = call;
  const approval = part.approval;
  let reason: string | undefined;
  if (approval !== undefined) {
    if (!isPlainObject(approval) || typeof approval.id !== "string")
      throw expected(
        [...path, "approval"],
        "an approval ({ id, approved?, reason? })",
        approval,
        "ai 6 and 7 write approvals as { id, approved, reason }",
      );
    const again = approvalIds.get(approval.id);
    if (again !== undefined)
      throw new UIMessageError(
        [...path, "approval", "id"],
        `the approval id is used twice (also at ${again})`,
        "every approval needs its own id",
      );
    approvalIds.set(approval.id, "/" + path.join("/"));
    content = { $type: "toolApprovalRequest", requestId: approval.id, toolCall: call };
    if (typeof approval.approved === "boolean") {
      const answer: ToolApprovalResponseContent = {
        $type: "toolApprovalResponse",
        requestId: approval.id,
        approved: approval.approved,
        toolCall: cloneJson(call),
      };
      if (typeof approval.reason === "string") answer.reason = reason = approval.reason;
      answers.push(answer);
    }
  }
  let result: FunctionResultContent | undefined;
  if (state === "output-available")
    result = {
      $type: "functionResult",
      callId,
      result: (part.output === undefined ? null : cloneJson(part.output)) as JsonValue,
    };
  else if (state === "output-error")
    result = {
      $type: "functionResult",
      callId,
      result: { error: typeof part.errorText === "string" ? part.errorText : "" },
    };
  else if (state === "output-denied")
    result = { $type: "functionResult", callId, result: rejectedResult(name, reason) };
  if (result !== undefined) results.push(withProviderMetadata(result, part.resultProviderMetadata));
  return content;
}
