/**
 * .NET tool approvals in the state bag (Agent Framework @ 5eb3eb74, Aug 2026), mapped to statebag's
 * pending approval round (`statebag.ToolApprovalState` under `statebag.toolApprovals`), so a .NET
 * session stopped at an approval can be answered with `answerToolApprovals` after import.
 *
 * - `_pendingApprovalRequests` (`ApprovalResponseBindingChatClient.StateBagKey`): a list of
 *   `ToolApprovalRequestContent` the model asked for, awaiting the caller's answer.
 * - `toolApprovalState` (`ToolApprovalAgent`, `Harness/ToolApproval/ToolApprovalState.cs`):
 *   `{rules, collectedApprovalResponses, queuedApprovalRequests, surfacedApprovalRequests}`;
 *   surfaced and queued requests wait for an answer, collected responses are answers given.
 *
 * List elements are `ToolApprovalRequestContent` declared as themselves, so System.Text.Json writes
 * them without `$type` by default; a polymorphic setup writes `"$type": "toolApprovalRequest"`.
 * Both are read. The originals are kept (`statebag.dotnet.approvals`): while the round is as
 * imported, export writes them back verbatim; once statebag changed it (answered, closed), export
 * writes what .NET writes for that state (no `_pendingApprovalRequests` once nothing waits).
 */
import type { StateBag } from "../core/session.js";
import type { JsonObject, TaggedValue } from "../core/tagged.js";
import { InteropError, at, describe, shown } from "./errors.js";
import { foreignState, isForeignState } from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, jsonEqual, type JsonRecord } from "./json-util.js";
import type { SessionShape } from "./shapes.js";

export const DOTNET_PENDING_APPROVALS_KEY = "_pendingApprovalRequests";
export const DOTNET_TOOL_APPROVAL_STATE_KEY = "toolApprovalState";
/** Where the .NET originals are kept beside statebag's round. */
export const DOTNET_APPROVALS_RECORD_KEY = "statebag.dotnet.approvals";
const STATEBAG_KEY = "statebag.toolApprovals";

interface Record_ {
  pending?: unknown;
  harness?: unknown;
  /** Elements were written with their own `$type`. */
  tagged: boolean;
}

type Fail = (path: (string | number)[], problem: string, hint?: string) => InteropError;

function request(value: unknown, path: (string | number)[], fail: Fail): JsonRecord {
  const hint =
    'a ToolApprovalRequestContent is {"requestId": "...", "toolCall": {"$type": "functionCall", "callId", "name", "arguments"}}';
  if (!isPlainObject(value))
    throw fail(path, `expected a ToolApprovalRequestContent object, found ${describe(value)}`, hint);
  if (value.$type !== undefined && value.$type !== "toolApprovalRequest")
    throw fail([...path, "$type"], `expected "toolApprovalRequest", found ${describe(value.$type)}`, hint);
  if (typeof value.requestId !== "string" || value.requestId === "")
    throw fail([...path, "requestId"], `expected a request id string, found ${describe(value.requestId)}`, hint);
  const call = value.toolCall;
  if (!isPlainObject(call))
    throw fail([...path, "toolCall"], `expected the tool call object, found ${describe(call)}`, hint);
  const out: JsonRecord = { $type: "toolApprovalRequest" };
  for (const key of Object.keys(value)) if (key !== "$type") defineOwn(out, key, cloneJson(value[key]));
  const toolCall: JsonRecord = { $type: typeof call.$type === "string" ? call.$type : "functionCall" };
  for (const key of Object.keys(call)) if (key !== "$type") defineOwn(toolCall, key, cloneJson(call[key]));
  out.toolCall = toolCall;
  return out;
}

function response(value: unknown, path: (string | number)[], fail: Fail): JsonRecord {
  if (!isPlainObject(value) || typeof value.requestId !== "string" || typeof value.approved !== "boolean") {
    throw fail(
      path,
      `expected a ToolApprovalResponseContent {"requestId", "approved", "toolCall"}, found ${describe(value)}`,
    );
  }
  const out: JsonRecord = { $type: "toolApprovalResponse" };
  for (const key of Object.keys(value)) if (key !== "$type") defineOwn(out, key, cloneJson(value[key]));
  if (isPlainObject(out.toolCall) && out.toolCall.$type === undefined)
    out.toolCall = { $type: "functionCall", ...(out.toolCall as JsonRecord) };
  return out;
}

/** The statebag round the .NET originals describe, or `undefined` when one of its calls is not a function call. */
function derive(record: Record_, fail: Fail): JsonRecord | undefined {
  const requests: JsonRecord[] = [];
  const seen = new Set<string>();
  const add = (r: JsonRecord) => {
    if (seen.has(r.requestId as string)) return;
    seen.add(r.requestId as string);
    requests.push(r);
  };
  const answers = new Map<string, JsonRecord>();
  if (record.pending !== undefined) {
    if (!Array.isArray(record.pending))
      throw fail(
        ["stateBag", DOTNET_PENDING_APPROVALS_KEY],
        `expected a list of ToolApprovalRequestContent, found ${describe(record.pending)}`,
      );
    record.pending.forEach((r, i) => add(request(r, ["stateBag", DOTNET_PENDING_APPROVALS_KEY, i], fail)));
  }
  if (record.harness !== undefined) {
    const base = ["stateBag", DOTNET_TOOL_APPROVAL_STATE_KEY];
    const harness = record.harness;
    if (!isPlainObject(harness))
      throw fail(
        base,
        `expected the ToolApprovalState object, found ${describe(harness)}`,
        '{"rules": [], "collectedApprovalResponses": [], "queuedApprovalRequests": [], "surfacedApprovalRequests": {}}',
      );
    const surfaced = harness.surfacedApprovalRequests ?? {};
    if (!isPlainObject(surfaced))
      throw fail(
        [...base, "surfacedApprovalRequests"],
        `expected an object keyed by request id, found ${describe(surfaced)}`,
      );
    for (const id of Object.keys(surfaced)) add(request(surfaced[id], [...base, "surfacedApprovalRequests", id], fail));
    const queued = harness.queuedApprovalRequests ?? [];
    if (!Array.isArray(queued))
      throw fail([...base, "queuedApprovalRequests"], `expected a list, found ${describe(queued)}`);
    queued.forEach((r, i) => add(request(r, [...base, "queuedApprovalRequests", i], fail)));
    const collected = harness.collectedApprovalResponses ?? [];
    if (!Array.isArray(collected))
      throw fail([...base, "collectedApprovalResponses"], `expected a list, found ${describe(collected)}`);
    collected.forEach((r, i) => {
      const answer = response(r, [...base, "collectedApprovalResponses", i], fail);
      answers.set(answer.requestId as string, answer);
    });
    if (harness.rules !== undefined && !Array.isArray(harness.rules))
      throw fail([...base, "rules"], `expected a list of rules, found ${describe(harness.rules)}`);
  }
  if (requests.some((r) => (r.toolCall as JsonRecord).$type !== "functionCall")) return undefined;
  // An answer to a request statebag does not hold (auto-approved, never surfaced) stays .NET's.
  for (const id of answers.keys()) if (!seen.has(id)) return undefined;
  const pending = requests.map((r) => {
    const entry: JsonRecord = { call: cloneJson(r.toolCall), request: r };
    const answer = answers.get(r.requestId as string);
    if (answer) entry.response = answer;
    return entry;
  });
  return { $type: "statebag.ToolApprovalState", $version: 1, pending, answered: [] };
}

/**
 * Import: replaces the .NET approval keys in a freshly read bag (raw values, as `foreignState`s)
 * by statebag's round, keeping the originals. A bag whose calls are not all function calls is
 * left as it is (opaque, lossless).
 */
export function liftDotnetApprovals(bag: StateBag, shape: SessionShape, sourcePointer: (p: string) => string): void {
  const raw = (key: string) => {
    const entry = (bag as JsonRecord)[key];
    return Object.hasOwn(bag, key) && isForeignState(entry, "dotnet") ? entry.value : undefined;
  };
  const pending = raw(DOTNET_PENDING_APPROVALS_KEY);
  const harness = raw(DOTNET_TOOL_APPROVAL_STATE_KEY);
  if (pending === undefined && harness === undefined) return;
  if (Object.hasOwn(bag, STATEBAG_KEY)) return; // statebag's own round wins; the .NET keys stay opaque
  const fail: Fail = (path, problem, hint) => new InteropError(shape, "import", sourcePointer(at(path)), problem, hint);
  const first = Array.isArray(pending)
    ? pending[0]
    : isPlainObject(harness) && isPlainObject(harness.surfacedApprovalRequests)
      ? Object.values(harness.surfacedApprovalRequests)[0]
      : undefined;
  const record: Record_ = { tagged: isPlainObject(first) && first.$type === "toolApprovalRequest" };
  if (pending !== undefined) record.pending = cloneJson(pending);
  if (harness !== undefined) record.harness = cloneJson(harness);
  const state = derive(record, fail);
  if (state === undefined) return;
  delete (bag as JsonRecord)[DOTNET_PENDING_APPROVALS_KEY];
  delete (bag as JsonRecord)[DOTNET_TOOL_APPROVAL_STATE_KEY];
  defineOwn(bag as JsonRecord, STATEBAG_KEY, state);
  defineOwn(bag as JsonRecord, DOTNET_APPROVALS_RECORD_KEY, foreignState("dotnet", record as unknown as JsonObject));
}

const stripType = (r: JsonRecord, tagged: boolean): JsonRecord => {
  if (tagged) return cloneJson(r);
  const out: JsonRecord = {};
  for (const key of Object.keys(r)) if (key !== "$type") defineOwn(out, key, cloneJson(r[key]));
  return out;
};

/**
 * Export: the bag with statebag's round (of a session imported from .NET) written back as the .NET
 * keys. Values are returned as `foreignState`s, which the .NET writer writes raw.
 */
export function lowerDotnetApprovals(bag: StateBag): StateBag {
  const recordValue = (bag as JsonRecord)[DOTNET_APPROVALS_RECORD_KEY];
  if (
    !Object.hasOwn(bag, DOTNET_APPROVALS_RECORD_KEY) ||
    !isForeignState(recordValue, "dotnet") ||
    !isPlainObject(recordValue.value)
  )
    return bag;
  const record = recordValue.value as unknown as Record_;
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError("dotnet", "export", at(path), problem, hint);
  const state = (bag as JsonRecord)[STATEBAG_KEY] as JsonRecord | undefined;
  const out: JsonRecord = {};
  const put = (key: string, value: unknown) =>
    defineOwn(out, key, foreignState("dotnet", value as JsonObject) as unknown as TaggedValue);
  for (const key of Object.keys(bag))
    if (key !== DOTNET_APPROVALS_RECORD_KEY && key !== STATEBAG_KEY) defineOwn(out, key, (bag as JsonRecord)[key]);
  const before = derive(record, (path, problem) => fail(path, problem));
  const pending = (Array.isArray(state?.pending) ? state.pending : []) as JsonRecord[];
  const unchanged = before !== undefined && state !== undefined && jsonEqual(before.pending, pending);
  if (unchanged) {
    if (record.pending !== undefined) put(DOTNET_PENDING_APPROVALS_KEY, cloneJson(record.pending));
    if (record.harness !== undefined) put(DOTNET_TOOL_APPROVAL_STATE_KEY, cloneJson(record.harness));
    return out as StateBag;
  }
  if (
    pending.some(
      (p) =>
        p.result !== undefined ||
        p.startedBy !== undefined ||
        (p.response !== undefined && record.harness === undefined),
    )
  ) {
    throw fail(
      ["stateBag", STATEBAG_KEY, "pending"],
      "the approval round was answered in statebag but is not closed yet; .NET has no place for a round half way through",
      "let answerToolApprovals finish the round (or answer every request), then export",
    );
  }
  const requests = pending
    .filter((p) => isPlainObject(p.request) && p.response === undefined)
    .map((p) => stripType(p.request as JsonRecord, record.tagged));
  const answers = pending
    .filter((p) => isPlainObject(p.response))
    .map((p) => stripType(p.response as JsonRecord, record.tagged));
  if (record.pending !== undefined && requests.length > 0) put(DOTNET_PENDING_APPROVALS_KEY, requests);
  if (record.harness !== undefined) {
    const harness = isPlainObject(record.harness) ? cloneJson(record.harness) : {};
    const surfaced: JsonRecord = {};
    for (const surfacedRequest of requests) defineOwn(surfaced, surfacedRequest.requestId as string, surfacedRequest);
    harness.rules = Array.isArray(harness.rules) ? harness.rules : [];
    harness.collectedApprovalResponses = answers;
    harness.queuedApprovalRequests = [];
    harness.surfacedApprovalRequests = surfaced;
    put(DOTNET_TOOL_APPROVAL_STATE_KEY, harness);
  }
  if (state !== undefined && !isPlainObject(state))
    throw fail(
      ["stateBag", STATEBAG_KEY],
      `expected statebag's approval state, found ${describe(state)} under ${shown(STATEBAG_KEY)}`,
    );
  return out as StateBag;
}
