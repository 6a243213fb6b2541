/**
 * What a run takes and gives back: the agent's input forms and its response (whole, or one
 * streamed update). A module of its own so the run steps (run/) and the agent share them without
 * importing each other.
 */
import type { ChatResponseUpdate } from "./chat-client.js";
import type { ChatMessage, ToolApprovalRequestContent, UsageDetails } from "../core/messages.js";
import type { ServiceSessionId } from "../core/session.js";

export interface AgentResponse {
  sessionId: string;
  /** What the model (and tools) produced in this run. */
  messages: ChatMessage[];
  /** The text of the last assistant message. */
  text: string;
  conversationId?: ServiceSessionId;
  usage?: UsageDetails;
  /**
   * Set when the run stopped for tool approvals: the requests waiting for an answer (also kept in
   * the session). Answer them with `run(..., { approvals })` or `answerToolApprovals`.
   */
  pendingApprovals?: ToolApprovalRequestContent[];
}

export interface AgentResponseUpdate extends ChatResponseUpdate {
  sessionId: string;
}

export type AgentInput = string | ChatMessage | readonly ChatMessage[];
