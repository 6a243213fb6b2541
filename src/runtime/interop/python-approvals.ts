/**
 * Python's tool-approval state (`state["tool_approval"]`, `ToolApprovalMiddleware` and the function
 * invocation loop, 2026) as statebag's pending approval round (`statebag.toolApprovals`), so a
 * Python session stopped at an approval can be answered with `answerToolApprovals`.
 *
 * ```json
 * {"rules": [{"tool_name", "arguments"?, "server_label"?}], "queued_approval_requests": [<function_approval_request>],
 *  "collected_approval_responses": [<function_approval_response>],
 *  "already_approved_approval_request_groups": [{"approval_request_ids": [...], "approval_requests": [...]}]}
 * ```
 *
 * Import: the round is every `function_approval_request` of the history with neither an answer nor
 * a result yet (the one Python surfaced), then the `queued_approval_requests` it holds back, each
 * answered already when `collected_approval_responses` holds its answer. The Python value itself is
 * kept verbatim under `tool_approval` (rules and groups have no statebag counterpart). Nothing is
 * added when nothing waits.
 *
 * Export: an unchanged round is left out (the document is the one imported). A round answered in
 * statebag but still open writes its answers into `collected_approval_responses` and leaves only
 * the unanswered queued requests queued; a closed round (the answers and results are now in the
 * history) removes its requests and answers from the queue and the collected list. The round's
 * `answered` memory (statebag's "answered twice" error) has no Python field and is not written.
 */
import type {
  AIContent,
  ChatMessage,
  ToolApprovalRequestContent,
  ToolApprovalResponseContent,
} from "../core/messages.js";
import { TOOL_APPROVALS_KEY, type PendingToolCall, type ToolApprovalState } from "../agent/approvals.js";
import { foreignState, isForeignState } from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, jsonEqual, type JsonRecord } from "./json-util.js";

export const PYTHON_TOOL_APPROVAL_KEY = "tool_approval";

type Mapper = { from: (c: unknown) => AIContent; to: (c: AIContent) => JsonRecord };

function historyMessages(bag: JsonRecord, historyKey: string): ChatMessage[] {
  const history = bag[historyKey];
  return isPlainObject(history) && Array.isArray(history.messages) ? (history.messages as ChatMessage[]) : [];
}

/** The round a Python session waits on (`undefined` when nothing waits). */
function deriveRound(bag: JsonRecord, historyKey: string, map: Mapper): ToolApprovalState | undefined {
  const raw = bag[PYTHON_TOOL_APPROVAL_KEY];
  const value = isForeignState(raw, "python") ? raw.value : undefined;
  const answeredIds = new Set<string>();
  const resultIds = new Set<string>();
  const requests: ToolApprovalRequestContent[] = [];
  for (const message of historyMessages(bag, historyKey)) {
    for (const content of message.contents ?? []) {
      if (content.$type === "toolApprovalResponse") answeredIds.add(content.requestId);
      else if (content.$type === "functionResult") resultIds.add(content.callId);
      else if (content.$type === "toolApprovalRequest") requests.push(content);
    }
  }
  const pending: PendingToolCall[] = [];
  const seen = new Set<string>();
  const add = (request: ToolApprovalRequestContent) => {
    if (
      request.toolCall?.$type !== "functionCall" ||
      seen.has(request.requestId) ||
      answeredIds.has(request.requestId) ||
      resultIds.has(request.toolCall.callId)
    )
      return;
    seen.add(request.requestId);
    pending.push({ call: cloneJson(request.toolCall), request: cloneJson(request) });
  };
  for (const request of requests) add(request);
  if (isPlainObject(value)) {
    for (const queued of Array.isArray(value.queued_approval_requests) ? value.queued_approval_requests : []) {
      const content = safeFrom(map, queued);
      if (content?.$type === "toolApprovalRequest") add(content);
    }
    for (const collected of Array.isArray(value.collected_approval_responses)
      ? value.collected_approval_responses
      : []) {
      const content = safeFrom(map, collected);
      if (content?.$type !== "toolApprovalResponse") continue;
      const entry = pending.find((p) => p.request!.requestId === content.requestId && p.response === undefined);
      if (entry) entry.response = responseOf(content);
    }
  }
  return pending.length === 0 ? undefined : { $type: "statebag.ToolApprovalState", $version: 1, pending, answered: [] };
}

function safeFrom(map: Mapper, raw: unknown): AIContent | undefined {
  try {
    return map.from(raw);
  } catch {
    return undefined; // a malformed entry stays in the verbatim value; it is simply not part of the round
  }
}

/** statebag's stored answer: the request id, approved, reason (the call is the entry's own). */
function responseOf(c: ToolApprovalResponseContent): ToolApprovalResponseContent {
  const out: ToolApprovalResponseContent = {
    $type: "toolApprovalResponse",
    requestId: c.requestId,
    approved: c.approved,
  };
  if (c.reason !== undefined) out.reason = c.reason;
  if (c.toolCall !== undefined) out.toolCall = cloneJson(c.toolCall);
  return out;
}

/** After a Python session's state bag is built: adds the pending round it waits on, if any. */
export function approvalsFromPython(bag: JsonRecord, historyKey: string, map: Mapper): void {
  if (Object.hasOwn(bag, TOOL_APPROVALS_KEY)) return; // a statebag session exported with its round: kept as it is
  const round = deriveRound(bag, historyKey, map);
  if (round !== undefined) defineOwn(bag, TOOL_APPROVALS_KEY, round);
}

/**
 * Before a statebag session's bag is written as Python state: folds the round back into
 * `tool_approval` (see the module comment) and removes it. Returns the bag to write.
 */
export function approvalsToPython(bag: JsonRecord, historyKey: string, map: Mapper): JsonRecord {
  const state = bag[TOOL_APPROVALS_KEY];
  if (!isPlainObject(state) || state.$type !== "statebag.ToolApprovalState") return bag;
  const rest: JsonRecord = {};
  for (const key of Object.keys(bag)) if (key !== TOOL_APPROVALS_KEY) defineOwn(rest, key, bag[key]);
  const round = state as unknown as ToolApprovalState;
  const derived = deriveRound(rest, historyKey, map);
  if (derived !== undefined && jsonEqual(derived.pending, round.pending) && round.answered.length === 0) return rest;
  if (derived === undefined && round.pending.length === 0 && !isForeignState(rest[PYTHON_TOOL_APPROVAL_KEY], "python"))
    return rest;
  const raw = rest[PYTHON_TOOL_APPROVAL_KEY];
  const value: JsonRecord = isForeignState(raw, "python") && isPlainObject(raw.value) ? cloneJson(raw.value) : {};
  const closed = new Set(round.answered.map((a) => a.requestId));
  const answeredHere = round.pending.filter((p) => p.request && p.response);
  for (const pair of answeredHere) closed.add(pair.request!.requestId);
  const waiting = new Set(round.pending.filter((p) => p.request && !p.response).map((p) => p.request!.requestId));
  const idOf = (raw: unknown) => (isPlainObject(raw) && typeof raw.id === "string" ? raw.id : undefined);
  const queued = Array.isArray(value.queued_approval_requests) ? value.queued_approval_requests : [];
  const collected = Array.isArray(value.collected_approval_responses) ? value.collected_approval_responses : [];
  const open = round.pending.length > 0;
  // Queued: what still waits (a closed round's requests leave the queue).
  value.queued_approval_requests = queued.filter((q) => !closed.has(idOf(q) ?? "") || waiting.has(idOf(q) ?? ""));
  // Collected: an open round's answers are collected for Python's next run; a closed round's are in the history.
  const kept = collected.filter((a) => !closed.has(idOf(a) ?? ""));
  if (open) {
    for (const pair of answeredHere) {
      const response: ToolApprovalResponseContent = { ...responseOf(pair.response!), toolCall: cloneJson(pair.call) };
      kept.push(map.to(response as AIContent));
    }
  }
  value.collected_approval_responses = kept;
  if (!Object.hasOwn(value, "rules")) {
    const ordered: JsonRecord = { rules: [] };
    for (const key of Object.keys(value)) defineOwn(ordered, key, value[key]);
    defineOwn(rest, PYTHON_TOOL_APPROVAL_KEY, foreignState("python", ordered as never));
  } else defineOwn(rest, PYTHON_TOOL_APPROVAL_KEY, foreignState("python", value as never));
  return rest;
}
