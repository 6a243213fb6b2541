/**
 * statebag history -> AI SDK UI messages. A user or system message is one UI message; an
 * assistant turn is one UI message with a `step-start` part before each model call, as the UI
 * message stream (and `useChat`) build it: the assistant messages of one turn (a call, its
 * result, the answer; an approval asked, answered and continued) are the steps of the UI message
 * whose id is the turn's first message's. Tool results (`tool` messages) and approval answers
 * (`toolApprovalResponse` contents) are folded into the tool part of the call they answer, and a
 * message left with nothing else is not shown (nor does it end the turn).
 */
import type {
  AIContent,
  BlobReferenceContent,
  ChatMessage,
  CitationAnnotation,
  FunctionCallContent,
  FunctionResultContent,
  ToolApprovalRequestContent,
  ToolApprovalResponseContent,
} from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { setOwn } from "../core/json.js";
import { cloneJson, isPlainObject, type JsonRecord } from "../interop/json-util.js";
import { expected } from "./errors.js";
import { type BranchesLeftOut, branchesLeftOut } from "../builtins/branches-left-out.js";
import { sessionHistory } from "./history.js";
import {
  contentExtra,
  isErrorResult,
  messageExtra,
  providerMetadataOf,
  STATEBAG_CONTENT_PART,
  type MessageExtra,
} from "./keys.js";
import type { UIMessage, UIMessagePart, UIMessageVersion } from "./types.js";

export interface ToUIMessagesOptions {
  /** The state bag key of the session's history. Default `"statebag.chatHistory"`. */
  historyKey?: string;
  /** The `ai` major whose shape to write. Default 7; 5 has no approval states (see the docs). */
  version?: UIMessageVersion;
  /** The id of a message without `messageId`. Default `statebag-<index in the history>`. */
  generateId?: (message: ChatMessage, index: number) => string;
  /**
   * The URL a file kept in the blob store (a `statebag.blobReference` content) is shown with: its
   * `file` part gets `{ mediaType, url, filename }`. The chat handler passes its files route
   * (`<base>/chat/<id>/files/<hash>`). Without it a reference is a `data-statebag-content` part
   * (which `fromUIMessages` reads back as the same reference).
   */
  fileUrl?: (reference: BlobReferenceContent) => string;
  /**
   * Only the active path of a branched history is written (regenerated answers, edited messages
   * and what followed them are not): called with what was left out, when anything was
   * (`branchesLeftOut`). The chat handler marks the versions with `metadata.branch` instead.
   */
  onBranchesLeftOut?: (report: BranchesLeftOut) => void;
}

type Part = JsonRecord & { type: string };

export function toUIMessages(
  input: AgentSession | readonly ChatMessage[],
  options: ToUIMessagesOptions = {},
): UIMessage[] {
  const messages = buildUIMessages(input, options);
  if (options.onBranchesLeftOut && !Array.isArray(input)) {
    const report = branchesLeftOut(input as AgentSession, options.historyKey);
    if (report) options.onBranchesLeftOut(report);
  }
  return messages;
}

/** A UI message being built: its first statebag message, and the usage of each of its steps. */
interface Building {
  ui: UIMessage;
  first: ChatMessage;
  extra: MessageExtra | undefined;
  usages: JsonRecord[];
  parts: Part[];
}

/**
 * `toUIMessages`, telling `madeFrom` which part each content became (its first part, for a text
 * with citations): `fromUIMessages` compares them with the parts it read.
 */
export function buildUIMessages(
  input: AgentSession | readonly ChatMessage[],
  options: ToUIMessagesOptions = {},
  madeFrom?: Map<AIContent, JsonRecord>,
): UIMessage[] {
  const messages = Array.isArray(input)
    ? (input as readonly ChatMessage[])
    : sessionHistory(input as AgentSession, options.historyKey);
  const version = options.version ?? 7;
  // Which results and answers belong to a call shown earlier (linear: one pass, maps by id).
  const calls = new Set<string>();
  const requests = new Set<string>();
  const results = new Map<string, FunctionResultContent>();
  const answers = new Map<string, ToolApprovalResponseContent>();
  const folded = new Set<AIContent>();
  messages.forEach((message, i) => {
    if (!isPlainObject(message) || !Array.isArray(message.contents))
      throw expected([i], "a chat message ({ role, contents })", message, "pass statebag ChatMessages (or a session)");
    const own = new Set<string>();
    for (const content of message.contents) {
      if (!isPlainObject(content)) continue;
      if (content.$type === "functionCall" && typeof content.callId === "string") {
        calls.add(content.callId);
        own.add(content.callId);
      } else if (content.$type === "toolApprovalRequest" && typeof content.requestId === "string") {
        requests.add(content.requestId);
        if (
          isPlainObject(content.toolCall) &&
          content.toolCall.$type === "functionCall" &&
          typeof content.toolCall.callId === "string"
        )
          calls.add(content.toolCall.callId);
      }
    }
    for (const content of message.contents) {
      if (!isPlainObject(content)) continue;
      if (
        content.$type === "functionResult" &&
        typeof content.callId === "string" &&
        !results.has(content.callId) &&
        calls.has(content.callId) &&
        !own.has(content.callId)
      ) {
        results.set(content.callId, content);
        folded.add(content);
      } else if (
        content.$type === "toolApprovalResponse" &&
        typeof content.requestId === "string" &&
        !answers.has(content.requestId) &&
        requests.has(content.requestId)
      ) {
        answers.set(content.requestId, content);
        folded.add(content);
      }
    }
  });

  const built: Building[] = [];
  // The assistant UI message the next assistant step joins (none after a user or system message).
  let turn: Building | undefined;
  messages.forEach((message, i) => {
    const shown = message.contents.filter((c) => !folded.has(c));
    // Only answers and results: folded into the parts they answer; the turn goes on.
    if (shown.length === 0 && message.contents.length > 0) return;
    const extra = messageExtra(message);
    const role = uiRole(message.role);
    const parts: Part[] = [];
    // The last content, a usage, is the step's usage: metadata.usage (unless it was a part in the UI).
    let usage: JsonRecord | undefined;
    const last = shown[shown.length - 1];
    const lastIsUsage =
      last !== undefined &&
      last.$type === "usage" &&
      last.annotations === undefined &&
      last.additionalProperties === undefined &&
      isPlainObject(last.details);
    for (const content of shown) {
      if (lastIsUsage && content === last) {
        usage = cloneJson(last.details) as JsonRecord;
        continue;
      }
      const made = partsOf(content, results, answers, version, role === "assistant", options.fileUrl);
      const diff = contentExtra(content);
      if (made.length === 1 && diff !== undefined) applyDiff(made[0], diff);
      if (made.length > 0) madeFrom?.set(content, made[0]);
      parts.push(...made);
    }
    // A message written before steps were kept (its step-start parts among its kept parts) is shown
    // as it was stored: one UI message, no step added.
    const keptSteps =
      Array.isArray(extra?.parts) &&
      extra.parts.some((e) => isPlainObject(e) && isPlainObject(e.part) && e.part.type === "step-start");
    if (message.role === "assistant" && extra?.stepStart !== false && !keptSteps) parts.unshift({ type: "step-start" });
    const all = withExtraParts(parts, extra?.parts);
    if (role === "assistant" && turn !== undefined && extra?.newMessage !== true && !keptSteps) {
      turn.parts.push(...all);
      if (usage !== undefined) turn.usages.push(usage);
      return;
    }
    const entry: Building = {
      ui: {
        id: message.messageId ?? (options.generateId ? options.generateId(message, i) : `statebag-${i}`),
        role,
        parts: [],
      },
      first: message,
      extra,
      usages: usage === undefined ? [] : [usage],
      parts: all,
    };
    built.push(entry);
    turn = role === "assistant" ? entry : undefined;
  });

  return built.map(({ ui, first, extra, usages, parts }) => {
    ui.parts = parts as UIMessagePart[];
    const usage = usages.length === 0 ? undefined : usages.length === 1 ? usages[0] : sumUsage(usages);
    if (extra !== undefined && Object.hasOwn(extra, "metadata")) ui.metadata = cloneJson(extra.metadata);
    else if (extra?.dropMetadata !== true && (first.createdAt !== undefined || usage !== undefined)) {
      ui.metadata = {
        ...(first.createdAt !== undefined ? { createdAt: first.createdAt } : {}),
        ...(usage !== undefined ? { usage } : {}),
      };
    }
    if (extra !== undefined && isPlainObject(extra.fields))
      for (const key of Object.keys(extra.fields))
        if (!(key in ui)) setOwn(ui as unknown as JsonRecord, key, cloneJson(extra.fields[key]));
    return ui;
  });
}

/** The usage of a turn of several steps: each count summed over the steps that have it. */
function sumUsage(usages: JsonRecord[]): JsonRecord {
  const total: JsonRecord = {};
  for (const usage of usages) {
    for (const key of Object.keys(usage)) {
      const value = usage[key];
      if (typeof value === "number") setOwn(total, key, (typeof total[key] === "number" ? total[key] : 0) + value);
      else if (key === "additionalCounts" && isPlainObject(value)) {
        const counts = isPlainObject(total.additionalCounts) ? total.additionalCounts : {};
        for (const name of Object.keys(value))
          if (typeof value[name] === "number")
            setOwn(counts, name, (typeof counts[name] === "number" ? counts[name] : 0) + value[name]);
        total.additionalCounts = counts;
      }
    }
  }
  return total;
}

function uiRole(role: string): UIMessage["role"] {
  return role === "system" || role === "user" ? role : "assistant";
}

/** Parts kept as they were (step-start, data-*, unknown types) go back to their places. */
function withExtraParts(parts: Part[], extras: unknown): Part[] {
  if (!Array.isArray(extras) || extras.length === 0) return parts;
  const kept = extras
    .filter(
      (e): e is { index: number; part: Part } =>
        isPlainObject(e) && Number.isInteger(e.index) && isPlainObject(e.part) && typeof e.part.type === "string",
    )
    .sort((a, b) => a.index - b.index);
  const out: Part[] = [];
  let next = 0;
  for (const insertion of kept) {
    while (out.length < insertion.index && next < parts.length) out.push(parts[next++]);
    out.push(cloneJson(insertion.part));
  }
  while (next < parts.length) out.push(parts[next++]);
  return out;
}

function applyDiff(part: Part, diff: { set?: unknown; unset?: unknown }): void {
  if (Array.isArray(diff.unset))
    for (const key of diff.unset) if (typeof key === "string" && key !== "type") delete part[key];
  if (isPlainObject(diff.set))
    for (const key of Object.keys(diff.set))
      if (key !== "type" || typeof diff.set[key] === "string") setOwn(part, key, cloneJson(diff.set[key]));
}

function withMetadata(part: Part, key: string, content: { additionalProperties?: JsonRecord } | undefined): Part {
  const metadata = providerMetadataOf(content);
  if (metadata !== undefined) setOwn(part, key, cloneJson(metadata));
  return part;
}

function contentPart(content: AIContent): Part {
  return { type: STATEBAG_CONTENT_PART, data: cloneJson(content) as unknown as JsonRecord };
}

function partsOf(
  content: AIContent,
  results: Map<string, FunctionResultContent>,
  answers: Map<string, ToolApprovalResponseContent>,
  version: UIMessageVersion,
  streamed: boolean,
  fileUrl: ToUIMessagesOptions["fileUrl"],
): Part[] {
  // An answer's text and reasoning were streamed: `useChat` holds them as `state: "done"` once the
  // stream ended (a user's or system message's text never had a state).
  const done = streamed ? { state: "done" } : {};
  switch (content.$type) {
    case "text": {
      const citations = (content.annotations ?? []).filter(
        (a): a is CitationAnnotation => isPlainObject(a) && a.$type === "citation",
      );
      if (content.text === "" && citations.length === 1 && content.annotations!.length === 1)
        return [withMetadata(sourcePart(citations[0], 0), "providerMetadata", content)];
      const text = withMetadata({ type: "text", text: content.text, ...done }, "providerMetadata", content);
      return [text, ...citations.map((c, i) => sourcePart(c, i))];
    }
    case "reasoning":
      return [withMetadata({ type: "reasoning", text: content.text ?? "", ...done }, "providerMetadata", content)];
    case "data": {
      const part: Part = { type: "file", mediaType: dataUriMediaType(content.uri), url: content.uri };
      if (content.name !== undefined) part.filename = content.name;
      return [withMetadata(part, "providerMetadata", content)];
    }
    case "uri":
      return [
        withMetadata({ type: "file", mediaType: content.mediaType, url: content.uri }, "providerMetadata", content),
      ];
    case "statebag.blobReference": {
      if (fileUrl === undefined) return [contentPart(content)];
      const part: Part = { type: "file", mediaType: content.mediaType, url: fileUrl(content) };
      if (content.name !== undefined) part.filename = content.name;
      return [withMetadata(part, "providerMetadata", content)];
    }
    case "functionCall":
      return [toolPart(content, undefined, results, answers, version)];
    case "toolApprovalRequest":
      return isPlainObject(content.toolCall) && content.toolCall.$type === "functionCall"
        ? [toolPart(content.toolCall, content, results, answers, version)]
        : [contentPart(content)];
    default:
      return [contentPart(content)];
  }
}

function sourcePart(citation: CitationAnnotation, index: number): Part {
  const extra = isPlainObject(citation.additionalProperties) ? citation.additionalProperties : {};
  const sourceId = typeof extra.sourceId === "string" ? extra.sourceId : `source-${index}`;
  if (citation.url === undefined && typeof extra.mediaType === "string") {
    const part: Part = { type: "source-document", sourceId, mediaType: extra.mediaType, title: citation.title ?? "" };
    if (typeof extra.filename === "string") part.filename = extra.filename;
    return part;
  }
  const part: Part = { type: "source-url", sourceId, url: citation.url ?? "" };
  if (citation.title !== undefined) part.title = citation.title;
  return part;
}

/** `data:image/png;base64,...` -> `image/png` (RFC 2397's default when none is given). */
function dataUriMediaType(uri: string): string {
  const end = uri.indexOf(",");
  const head = uri.slice(5, end < 0 ? Math.min(uri.length, 256) : Math.min(end, 256));
  const type = head.split(";")[0];
  return type === "" ? "text/plain" : type;
}

function toolPart(
  call: FunctionCallContent,
  request: ToolApprovalRequestContent | undefined,
  results: Map<string, FunctionResultContent>,
  answers: Map<string, ToolApprovalResponseContent>,
  version: UIMessageVersion,
): Part {
  const part: Part = {
    type: `tool-${call.name}`,
    toolCallId: call.callId,
    state: "input-available",
    input: cloneJson(call.arguments ?? {}),
  };
  if (call.informationalOnly === true) part.providerExecuted = true;
  withMetadata(part, "callProviderMetadata", call);
  const result = results.get(call.callId);
  const answer = request !== undefined ? answers.get(request.requestId) : undefined;
  if (request !== undefined && (answer !== undefined || result === undefined)) {
    const approval: JsonRecord = { id: request.requestId };
    if (answer !== undefined) {
      approval.approved = answer.approved;
      if (answer.reason !== undefined) approval.reason = answer.reason;
    }
    part.approval = approval;
    part.state =
      answer === undefined
        ? "approval-requested"
        : result === undefined
          ? "approval-responded"
          : answer.approved
            ? "input-available"
            : "output-denied";
  }
  if (result !== undefined && part.state !== "output-denied" && part.state !== "approval-responded") {
    if (isErrorResult(result.result)) {
      part.state = "output-error";
      part.errorText = result.result.error;
    } else {
      part.state = "output-available";
      part.output = cloneJson(result.result ?? null);
    }
    withMetadata(part, "resultProviderMetadata", result);
  } else if (result !== undefined && part.state === "output-denied") {
    withMetadata(part, "resultProviderMetadata", result);
  }
  if (version === 5 && part.approval !== undefined) {
    // ai 5 knows no approvals: a waiting or answered call is input-available; a denied one failed.
    delete part.approval;
    if (part.state === "output-denied") {
      part.state = "output-error";
      part.errorText = isErrorResult(result?.result) ? result.result.error : "denied";
    } else if (part.state === "approval-requested" || part.state === "approval-responded")
      part.state = "input-available";
  }
  return part;
}
