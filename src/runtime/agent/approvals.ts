/**
 * Tool approvals (human in the loop) that outlive the process.
 *
 * When the model calls a tool that requires approval, the run stops before running anything: the
 * model's turn is kept as a pending round in the session (state bag key `statebag.toolApprovals`),
 * each call that needs approval wrapped in a Microsoft.Extensions.AI `toolApprovalRequest` content.
 * The application answers later, possibly in another process after loading the session from a
 * store, by request id or call id (ids are data; nothing depends on object identity). Once every
 * request of the round is answered, the approved calls (and those that needed no approval) run,
 * rejected ones become error results for the model, and the conversation continues.
 *
 * Every call records its result in the round before the round is closed, and a call with a result
 * is never run again; a call another run has claimed (`startedBy`) is never run twice either. That
 * is what lets `answerToolApprovals` (approval-store.ts) run a tool exactly once even when the
 * answering run is retried after a save conflict or a crash.
 */
import { StatebagError } from "../core/errors.js";
import { describeValue, quoted } from "../core/json.js";
import type {
  ChatMessage,
  FunctionCallContent,
  FunctionResultContent,
  ToolApprovalRequestContent,
  ToolApprovalResponseContent,
} from "../core/messages.js";
import { ProviderSessionState, type StateAccess } from "../core/state-bag.js";
import type { AgentSession } from "../core/session.js";
import type { JsonValue } from "../core/tagged.js";
import type { AITool, ToolInvocationContext } from "./tools.js";

export type { AnsweredToolApproval, PendingToolCall, ToolApprovalState } from "../builtins/tool-approval-state.js";
import type { PendingToolCall, ToolApprovalState } from "../builtins/tool-approval-state.js";

export const TOOL_APPROVALS_KEY = "statebag.toolApprovals";
/** How many answered requests a session remembers for the "answered twice" error. */
export const ANSWERED_KEPT = 100;

const initialApprovalState = (): ToolApprovalState => ({
  $type: "statebag.ToolApprovalState",
  $version: 1,
  pending: [],
  answered: [],
});

export const toolApprovalState = new ProviderSessionState<ToolApprovalState>(TOOL_APPROVALS_KEY, {
  stateType: "statebag.ToolApprovalState",
  version: 1,
  initial: initialApprovalState,
});

/** An application's answer to one approval request, by request id or by the call's id. */
export interface ToolApprovalAnswer {
  requestId?: string;
  callId?: string;
  approved: boolean;
  /** Why: shown to the model with a rejection, and kept in the stored response. */
  reason?: string;
}

export const approveToolCall = (id: string, reason?: string): ToolApprovalAnswer => answer(id, true, reason);
export const rejectToolCall = (id: string, reason?: string): ToolApprovalAnswer => answer(id, false, reason);

function answer(id: string, approved: boolean, reason?: string): ToolApprovalAnswer {
  // Matching tries the request id and then the call id, so either id may be given here.
  const out: ToolApprovalAnswer = { requestId: id, approved };
  if (reason !== undefined) out.reason = reason;
  return out;
}

/** Answers as a user message of `toolApprovalResponse` contents (the Microsoft.Extensions.AI way to answer). */
export function toolApprovalMessage(answers: readonly ToolApprovalAnswer[]): ChatMessage {
  return {
    role: "user",
    contents: answers.map((a) => {
      const content: ToolApprovalResponseContent = {
        $type: "toolApprovalResponse",
        requestId: a.requestId ?? a.callId ?? "",
        approved: a.approved,
      };
      if (a.reason !== undefined) content.reason = a.reason;
      return content;
    }),
  };
}

/** Why an answer was refused, or the run cannot go on until answers come. */
export type ToolApprovalErrorCode =
  | "tool-approval-not-found"
  | "tool-approval-answered"
  | "tool-approval-pending"
  | "tool-approval-in-progress"
  | "tool-approval-invalid";

export class ToolApprovalError extends StatebagError {
  constructor(
    code: ToolApprovalErrorCode,
    message: string,
    hint: string,
    /** The request or call id concerned, when there is one. */
    readonly id?: string,
  ) {
    super(code, message, { hint });
  }
}

/** The requests of a session still waiting for an answer (empty when none). */
export function pendingToolApprovals(source: AgentSession | StateAccess): ToolApprovalRequestContent[] {
  const state = toolApprovalState.read(source);
  return (state?.pending ?? []).filter((p) => p.request && !p.response).map((p) => structuredClone(p.request!));
}

/** Whether `tool` needs approval for these arguments. */
export async function requiresApproval(
  tool: AITool,
  call: FunctionCallContent,
  context: ToolInvocationContext,
): Promise<boolean> {
  const rule = tool.requiresApproval;
  if (rule === undefined || rule === false) return false;
  if (rule === true) return true;
  return (await rule(call.arguments ?? {}, context)) === true;
}

/** A request for one call; the request id is random, so answering by it cannot be confused across rounds. */
export function approvalRequestFor(call: FunctionCallContent, requestId: string): ToolApprovalRequestContent {
  return { $type: "toolApprovalRequest", requestId, toolCall: structuredClone(call) };
}

/**
 * The model's response messages as stored: each call that needs approval replaced, in place, by its
 * request (how Microsoft.Extensions.AI records a turn that stopped for approval).
 */
export function withApprovalRequests(
  messages: readonly ChatMessage[],
  round: readonly PendingToolCall[],
): ChatMessage[] {
  const requests = new Map(round.filter((p) => p.request).map((p) => [p.call.callId, p.request!]));
  return messages.map((m) => ({
    ...m,
    contents: m.contents.map((c) =>
      c.$type === "functionCall" && requests.has(c.callId) ? structuredClone(requests.get(c.callId)!) : c,
    ),
  }));
}

/**
 * What a model API understands of a history holding approval contents: a request becomes the call it
 * wraps again, an answer is dropped (the call's result carries it), and a message left empty goes.
 */
export function forModel(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  appendForModel(out, messages, 0, messages.length);
  return out;
}

/** Whether a message holds approval contents (which `forModel` rewrites). */
function holdsApprovals(message: ChatMessage): boolean {
  const contents = message.contents;
  for (let i = 0; i < contents.length; i++) {
    const type = contents[i].$type;
    if (type === "toolApprovalRequest" || type === "toolApprovalResponse") return true;
  }
  return false;
}

/**
 * The index of the first of `messages[0..length)` holding approval contents (`length` when none):
 * up to it, `forModel` keeps the messages as they are.
 */
export function firstHoldingApprovals(messages: readonly ChatMessage[], length: number): number {
  for (let i = 0; i < length; i++) if (holdsApprovals(messages[i])) return i;
  return length;
}

/** `forModel` of `messages[from..to)`, pushed onto `out`: messages without approval contents as they are. */
export function appendForModel(out: ChatMessage[], messages: readonly ChatMessage[], from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const message = messages[i];
    if (!holdsApprovals(message)) {
      out.push(message);
      continue;
    }
    const contents = message.contents.flatMap((c) =>
      c.$type === "toolApprovalRequest"
        ? c.toolCall.$type === "functionCall"
          ? [c.toolCall]
          : []
        : c.$type === "toolApprovalResponse"
          ? []
          : [c],
    );
    if (contents.length) out.push({ ...message, contents });
  }
}

/** `forModel` of a prefix of an append-only history: `view[0..length)`, for `processed` history messages. */
interface ModelView {
  processed: number;
  view: ChatMessage[];
  length: number;
  /**
   * Lent to one run (`lendModelView`): the run's request tail sits at `view[length..)`. The prefix
   * `view[0..length)` never changes, lent or not; a lent view is neither extended nor lent again.
   */
  lent: boolean;
}

/** Per append-only history array (`HistoryView.appendOnly`), its model view so far; extended, never rebuilt. */
const modelViews = new WeakMap<readonly ChatMessage[], ModelView>();

/**
 * `forModel` of an append-only history's `history[0..length)`, as the first `length` messages of
 * the returned array (shared: read only, and only that prefix: a lent view holds a run's request
 * after it). The result is kept and extended by what was appended since, so a run on an unchanged
 * (or grown) history does not go over all of it again.
 */
export function modelView(
  history: readonly ChatMessage[],
  length: number,
): { messages: readonly ChatMessage[]; length: number } {
  let cached = modelViews.get(history);
  if (!cached || cached.processed > length) {
    // A shorter prefix than the kept one (a run that read the history before it grew): not kept.
    if (cached) {
      const view: ChatMessage[] = [];
      appendForModel(view, history, 0, length);
      return { messages: view, length: view.length };
    }
    cached = { processed: 0, view: [], length: 0, lent: false };
    modelViews.set(history, cached);
  }
  if (cached.processed < length) {
    if (cached.lent) {
      // The lent array's end is a run's request: the grown view starts a new entry (copied once);
      // the run gives the old one back to nobody.
      cached = { processed: cached.processed, view: cached.view.slice(0, cached.length), length: 0, lent: false };
      modelViews.set(history, cached);
    }
    // The view only grows at its end, so a caller holding an earlier length keeps its prefix.
    appendForModel(cached.view, history, cached.processed, length);
    cached.processed = length;
    cached.length = cached.view.length;
  }
  return { messages: cached.view, length: cached.length };
}

/** A kept model view lent to one run (see `lendModelView`). */
export interface ModelViewLoan {
  /** The view: its first `length` messages are the history as the model sees it; the run pushes its request after them. */
  readonly messages: ChatMessage[];
  readonly length: number;
  /** Cuts the array back to the view and returns it to the cache (once the client is done with it). */
  giveBack(): void;
}

/**
 * The kept model view of `history` itself, for one run to push its request onto (no copy of a long
 * history per request), when it is still the `length` messages that run read. While lent, nobody
 * else gets the array: a second run on the same history gets a copy, which is kept in its place.
 * Undefined when the kept view is not the run's (the history grew, or was never kept).
 */
export function lendModelView(history: readonly ChatMessage[], length: number): ModelViewLoan | undefined {
  let cached = modelViews.get(history);
  if (!cached || cached.length !== length) return undefined;
  if (cached.lent) {
    cached = { processed: cached.processed, view: cached.view.slice(0, length), length, lent: false };
    modelViews.set(history, cached);
  }
  const entry = cached;
  entry.lent = true;
  let returned = false;
  return {
    messages: entry.view,
    length,
    giveBack: () => {
      if (returned) return;
      returned = true;
      entry.view.length = entry.length; // only the run's tail goes: the prefix is everyone's
      entry.lent = false;
    },
  };
}

/**
 * Splits a run's input into answers (`toolApprovalResponse` contents) and the rest; a message that
 * held only answers disappears (the round's record in history carries them).
 */
export function extractAnswers(input: readonly ChatMessage[]): {
  messages: ChatMessage[];
  answers: ToolApprovalAnswer[];
} {
  const answers: ToolApprovalAnswer[] = [];
  const messages: ChatMessage[] = [];
  for (const message of input) {
    const rest = message.contents.filter((c) => {
      if (c.$type !== "toolApprovalResponse") return true;
      const given: ToolApprovalAnswer = { requestId: c.requestId, approved: c.approved };
      if (c.reason !== undefined) given.reason = c.reason;
      answers.push(given);
      return false;
    });
    if (rest.length === message.contents.length) messages.push(message);
    else if (rest.length) messages.push({ ...message, contents: rest });
  }
  return { messages, answers };
}

/**
 * Records answers in the pending round (a new state; the input is not changed). Unknown ids, a
 * request answered before, and two answers for one request in the same call are errors, thrown
 * before anything is recorded. With `repeatIsRetry`, an answer identical to the one already
 * recorded for a still-open round is accepted as a retry of the same answer.
 */
export function recordAnswers(
  state: ToolApprovalState | undefined,
  answers: readonly ToolApprovalAnswer[],
  options: { repeatIsRetry?: boolean } = {},
): ToolApprovalState {
  const next: ToolApprovalState = structuredClone(state ?? initialApprovalState());
  const seen = new Set<PendingToolCall>();
  for (const given of answers) {
    const id = given.requestId ?? given.callId;
    if (typeof id !== "string" || id === "" || typeof given.approved !== "boolean") {
      throw new ToolApprovalError(
        "tool-approval-invalid",
        `an approval answer needs a request id (or call id) and approved: true/false, got id ${describeValue(id)} and approved ${describeValue(given.approved)}`,
        "answer with approveToolCall(id) or rejectToolCall(id, reason)",
        id,
      );
    }
    const entry = next.pending.find((p) => p.request && (p.request.requestId === id || p.call.callId === id));
    if (!entry) {
      const done = [...next.answered].reverse().find((d) => d.requestId === id || d.callId === id);
      if (done) {
        throw new ToolApprovalError(
          "tool-approval-answered",
          `approval request ${quoted(id)} was already answered (${done.approved ? "approved" : "rejected"}) and its round is closed`,
          "answer each request once; reload the session to see its current state",
          id,
        );
      }
      const waiting = next.pending.filter((p) => p.request && !p.response).map((p) => p.request!.requestId);
      throw new ToolApprovalError(
        "tool-approval-not-found",
        `session has no approval request ${quoted(id)}`,
        waiting.length
          ? `the requests waiting are: ${waiting.map((w) => quoted(w)).join(", ")}`
          : "nothing is waiting for approval in this session",
        id,
      );
    }
    if (seen.has(entry))
      throw new ToolApprovalError(
        "tool-approval-answered",
        `approval request ${quoted(entry.request!.requestId)} was answered twice in one call`,
        "give one answer per request",
        entry.request!.requestId,
      );
    seen.add(entry);
    if (entry.response) {
      if (options.repeatIsRetry && entry.response.approved === given.approved) continue;
      throw new ToolApprovalError(
        "tool-approval-answered",
        `approval request ${quoted(entry.request!.requestId)} was already answered (${entry.response.approved ? "approved" : "rejected"})`,
        "answer each request once; reload the session to see its current state",
        entry.request!.requestId,
      );
    }
    const response: ToolApprovalResponseContent = {
      $type: "toolApprovalResponse",
      requestId: entry.request!.requestId,
      approved: given.approved,
      toolCall: structuredClone(entry.call),
    };
    if (given.reason !== undefined) response.reason = given.reason;
    entry.response = response;
  }
  return next;
}

/** Requests of the round still waiting for an answer. */
export function unanswered(state: ToolApprovalState | undefined): ToolApprovalRequestContent[] {
  return (state?.pending ?? []).filter((p) => p.request && !p.response).map((p) => p.request!);
}

/** Whether the call runs once the round is complete (it needs no approval, or was approved). */
export function willRun(entry: PendingToolCall): boolean {
  return !entry.request || entry.response?.approved === true;
}

/** The result a rejected call gives the model: a tool error it can explain or work around. */
export function rejectionResult(entry: PendingToolCall): FunctionResultContent {
  const reason = entry.response?.reason;
  return {
    $type: "functionResult",
    callId: entry.call.callId,
    result: {
      error: `the user rejected this call to ${entry.call.name}${reason ? `: ${reason}` : ""}`,
      rejected: true,
    },
  };
}

/** The result when a run claimed a call and stopped before its result was saved: it is not run again. */
export function unknownOutcomeResult(entry: PendingToolCall): FunctionResultContent {
  return {
    $type: "functionResult",
    callId: entry.call.callId,
    result: {
      error: `the outcome of this call to ${entry.call.name} is unknown: the run executing it (started ${entry.startedAt ?? "at an unknown time"}) stopped before saving its result; it was not run again`,
    },
  };
}

/** Runs one tool; a throwing tool gives the model an error result, as in any tool round. */
export async function runTool(
  tool: AITool,
  call: FunctionCallContent,
  context: ToolInvocationContext,
): Promise<FunctionResultContent> {
  let result: JsonValue;
  try {
    result = await tool.execute!(call.arguments ?? {}, context);
  } catch (error) {
    result = { error: error instanceof Error ? error.message : String(error) };
  }
  return { $type: "functionResult", callId: call.callId, result: result ?? null };
}

/**
 * Gives every call of a complete round its result: rejections, calls already run (kept), calls a
 * stopped run claimed (unknown outcome, once the claim is older than `claimTimeoutMs`), and the
 * rest run now. A call claimed by another execution within the timeout stops the run: that
 * execution may still be running it.
 */
export async function settleRound(
  state: ToolApprovalState,
  tools: readonly AITool[],
  context: { sessionId: string; signal?: AbortSignal; claimTimeoutMs: number; now?: () => number; claim?: string },
): Promise<ToolApprovalState> {
  const next = structuredClone(state);
  const now = context.now ?? Date.now;
  for (const entry of next.pending) {
    if (entry.result) continue;
    if (!willRun(entry)) {
      entry.result = rejectionResult(entry);
      continue;
    }
    if (entry.startedBy !== undefined && entry.startedBy !== context.claim) {
      const age = now() - Date.parse(entry.startedAt ?? "");
      if (Number.isFinite(age) && age < context.claimTimeoutMs) {
        throw new ToolApprovalError(
          "tool-approval-in-progress",
          `the approved call ${quoted(entry.call.callId)} to ${entry.call.name} is being run by another process (claimed ${entry.startedAt})`,
          `try again later; if that process stopped, the call is reported to the model as having an unknown outcome once its claim is older than ${context.claimTimeoutMs} ms`,
          entry.call.callId,
        );
      }
      entry.result = unknownOutcomeResult(entry);
      continue;
    }
    const tool = tools.find((t) => t.name === entry.call.name && t.execute);
    if (!tool) {
      entry.result = {
        $type: "functionResult",
        callId: entry.call.callId,
        result: { error: `no tool named ${entry.call.name} is available to this agent any more` },
      };
      continue;
    }
    context.signal?.throwIfAborted();
    entry.result = await runTool(tool, entry.call, {
      sessionId: context.sessionId,
      callId: entry.call.callId,
      signal: context.signal,
    });
  }
  return next;
}

/**
 * Closes a settled round: the messages it adds to history (the answers as a user message, then the
 * results in the model's call order) and the state with the round moved to `answered`.
 */
export function closeRound(state: ToolApprovalState): {
  messages: ChatMessage[];
  results: ChatMessage;
  state: ToolApprovalState;
} {
  const responses = state.pending.flatMap((p) => (p.response ? [structuredClone(p.response)] : []));
  const results: ChatMessage = { role: "tool", contents: state.pending.map((p) => structuredClone(p.result!)) };
  const answered = [
    ...state.answered,
    ...state.pending
      .filter((p) => p.request && p.response)
      .map((p) => ({ requestId: p.request!.requestId, callId: p.call.callId, approved: p.response!.approved })),
  ].slice(-ANSWERED_KEPT);
  const messages: ChatMessage[] = responses.length ? [{ role: "user", contents: responses }, results] : [results];
  return { messages, results, state: { ...state, pending: [], answered } };
}
