/**
 * The run's side of tool approvals (the bookkeeping itself is approvals.ts): taking the caller's
 * answers, closing a fully answered round before the model is called, and stopping a model turn
 * whose calls need approval.
 */
import { randomUUID } from "node:crypto";
import { quoted } from "../../core/json.js";
import type { ChatMessage, FunctionCallContent, ToolApprovalRequestContent } from "../../core/messages.js";
import {
  approvalRequestFor,
  closeRound,
  recordAnswers,
  requiresApproval,
  settleRound,
  ToolApprovalError,
  toolApprovalState,
  unanswered,
  withApprovalRequests,
  type PendingToolCall,
  type ToolApprovalAnswer,
  type ToolApprovalState,
} from "../approvals.js";
import type { AITool } from "../tools.js";
import type { RunScope } from "./scope.js";

/**
 * Records this run's answers in the staged state. Refused answers (unknown, answered before) throw
 * here, before anything runs; so does a run that answers nothing while requests wait.
 * `waiting`: requests still unanswered, so the round cannot run yet.
 */
export function takeApprovalAnswers(
  scope: RunScope,
  answers: readonly ToolApprovalAnswer[],
): { approvals: ToolApprovalState | undefined; waiting: ToolApprovalRequestContent[] } {
  let approvals = toolApprovalState.read(scope.staged);
  if (answers.length) {
    approvals = recordAnswers(approvals, answers);
    toolApprovalState.write(scope.staged, approvals);
  }
  const waiting = unanswered(approvals);
  if (waiting.length && answers.length === 0) {
    throw new ToolApprovalError(
      "tool-approval-pending",
      `session ${quoted(scope.session.id)} is waiting for answers to tool approval requests ${waiting.map((r) => quoted(r.requestId)).join(", ")}`,
      "answer them first: agent.run(input, session, { approvals: [approveToolCall(id)] }) (or rejectToolCall(id, reason))",
      waiting[0].requestId,
    );
  }
  return { approvals, waiting };
}

/** A round closed in this run: `messages` go to the model and history before the input; `results` open the response. */
export interface ClosedRound {
  messages: ChatMessage[];
  results: ChatMessage;
}

/** Gives every call of the answered round its result (calls that already have one are not run again). */
export async function closeAnsweredRound(
  scope: RunScope,
  approvals: ToolApprovalState | undefined,
  tools: readonly AITool[],
): Promise<ClosedRound | undefined> {
  if (!approvals?.pending.length) return undefined;
  const settled = await settleRound(approvals, tools, {
    sessionId: scope.session.id,
    signal: scope.signal,
    claimTimeoutMs: scope.agent.toolClaimTimeoutMs,
  });
  const closed = closeRound(settled);
  toolApprovalState.write(scope.staged, closed.state);
  scope.stream?.onUpdate({ role: closed.results.role, contents: closed.results.contents });
  return { messages: closed.messages, results: closed.results };
}

/** Which of a model turn's calls need approval; `request` is set on those (nothing runs here). */
export async function planApprovals(
  scope: RunScope,
  calls: readonly FunctionCallContent[],
  tools: readonly AITool[],
): Promise<PendingToolCall[]> {
  const planned: PendingToolCall[] = [];
  for (const call of calls) {
    const tool = tools.find((t) => t.name === call.name)!;
    const entry: PendingToolCall = { call: structuredClone(call) };
    if (await requiresApproval(tool, call, { sessionId: scope.session.id, callId: call.callId, signal: scope.signal }))
      entry.request = approvalRequestFor(call, `approval_${randomUUID()}`);
    planned.push(entry);
  }
  return planned;
}

/**
 * Stops the run before any call runs: the turn waits in the session for the application's answers.
 * Returns the turn's messages with the requests in them, and the requests for the response.
 */
export function stopForApprovals(
  scope: RunScope,
  turn: readonly ChatMessage[],
  planned: PendingToolCall[],
): { messages: ChatMessage[]; requests: ToolApprovalRequestContent[] } {
  const messages = withApprovalRequests(turn, planned);
  toolApprovalState.write(scope.staged, { ...toolApprovalState.readOrInit(scope.staged), pending: planned });
  const requests = planned.flatMap((p) => (p.request ? [structuredClone(p.request)] : []));
  scope.stream?.onUpdate({ role: "assistant", contents: structuredClone(requests) });
  return { messages, requests };
}
