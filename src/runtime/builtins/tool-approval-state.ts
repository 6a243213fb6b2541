/**
 * The state the agent's tool approvals keep in a session (`statebag.toolApprovals`), kept apart from
 * the agent so the generated registry lists it without loading the agent.
 */
import type {
  FunctionCallContent,
  FunctionResultContent,
  ToolApprovalRequestContent,
  ToolApprovalResponseContent,
} from "../core/messages.js";
import type { ProviderState } from "../core/tagged.js";

/** One call of a model turn that stopped for approval. */
export interface PendingToolCall {
  /** The call as the model made it. */
  call: FunctionCallContent;
  /** Present when the call needs approval: the request the application answers (its `toolCall` is `call`). */
  request?: ToolApprovalRequestContent;
  /** The application's answer, once given. */
  response?: ToolApprovalResponseContent;
  /** When a run began executing the call (set only by `answerToolApprovals`, before running it). @format date-time */
  startedAt?: string;
  /** Which execution claimed the call (an opaque token). */
  startedBy?: string;
  /** The call's result (or its rejection), once known. A call with a result never runs again. */
  result?: FunctionResultContent;
}

/** A request that was answered and whose round is closed: kept so a second answer is told apart from an unknown id. */
export interface AnsweredToolApproval {
  requestId: string;
  callId: string;
  approved: boolean;
}

/** The agent's approval bookkeeping for one session. */
export interface ToolApprovalState extends ProviderState<"statebag.ToolApprovalState", 1> {
  /** The calls of the model turn waiting for answers, in the model's order; empty when nothing waits. */
  pending: PendingToolCall[];
  /** Recently answered requests, oldest first (at most `ANSWERED_KEPT`). */
  answered: AnsweredToolApproval[];
}
