/**
 * `statebag/agent`: the run loop (`ChatClientAgent`), the chat client contract model clients
 * implement, tools and tool approvals, run middleware, and the session state providers (context
 * providers, chat history kept in the session or in a store, a rolling summary).
 */

// The agent and its run
export { ChatClientAgent } from "./runtime/agent/agent.js";
export type { ChatClientAgentOptions, ForkOptions, RunOptions } from "./runtime/agent/agent.js";
export type { AgentInput, AgentResponse, AgentResponseUpdate } from "./runtime/agent/response.js";
export type { RunContext, RunMiddleware } from "./runtime/agent/agent.js";

// The contract a model client implements
export { responseFromUpdates } from "./runtime/agent/chat-client.js";
export type {
  ChatClient,
  ChatClientMetadata,
  ChatOptions,
  ChatResponse,
  ChatResponseUpdate,
} from "./runtime/agent/chat-client.js";

// Tools, and approvals that survive a restart
export type { AITool, ToolInvocationContext } from "./runtime/agent/tools.js";
export {
  TOOL_APPROVALS_KEY,
  ToolApprovalError,
  approveToolCall,
  pendingToolApprovals,
  rejectToolCall,
  toolApprovalMessage,
} from "./runtime/agent/approvals.js";
export type {
  AnsweredToolApproval,
  PendingToolCall,
  ToolApprovalAnswer,
  ToolApprovalErrorCode,
  ToolApprovalState,
} from "./runtime/agent/approvals.js";
export { answerToolApprovals } from "./runtime/agent/approval-store.js";
export type { AnswerToolApprovalsOptions, AnswerToolApprovalsResult } from "./runtime/agent/approval-store.js";

// Providers: what an agent keeps in a session's state bag
export type { ProviderContext, SessionStateProvider } from "./runtime/agent/providers/provider.js";
export { AIContextProvider } from "./runtime/agent/providers/context-provider.js";
export type { AIContext, InvokedContext } from "./runtime/agent/providers/context-provider.js";
export { ChatHistoryProvider, HistoryProviderMismatchError } from "./runtime/agent/providers/chat-history-provider.js";

// Branches: regenerate, edit, switch, rewind and fork (methods of ChatClientAgent), and a stored fork
export { forkSession } from "./runtime/agent/fork-session.js";
export type { ForkSessionOptions, ForkSessionResult } from "./runtime/agent/fork-session.js";
export { HistoryBranchError, MessageNotFoundError } from "./runtime/agent/providers/history-branches.js";
export type { HistoryTreeNode, MessageSiblings } from "./runtime/agent/providers/history-branches.js";
export type { BranchMessage, BranchPoint, ForkOrigin } from "./runtime/builtins/chat-history-state.js";
export { InMemoryChatHistoryProvider, chatHistoryState } from "./runtime/agent/providers/in-memory-chat-history.js";
export type {
  InMemoryChatHistoryOptions,
  InMemoryChatHistoryState,
} from "./runtime/agent/providers/in-memory-chat-history.js";
export { StoredChatHistoryProvider } from "./runtime/agent/providers/stored-chat-history.js";
export type {
  LogEntryRef,
  LogRun,
  PendingLogWrite,
  StoredHistoryTree,
  StoredChatHistoryOptions,
  StoredChatHistoryState,
  StoredHistoryCommit,
} from "./runtime/agent/providers/stored-chat-history.js";
export { RollingSummaryProvider } from "./runtime/agent/providers/rolling-summary.js";
export type { RollingSummaryOptions, RollingSummaryState } from "./runtime/agent/providers/rolling-summary.js";
export { keepLastMessages, keepSystemAndLastTurns } from "./runtime/agent/providers/reducers.js";
export type { ChatReducer } from "./runtime/agent/providers/reducers.js";
