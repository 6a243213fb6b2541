/**
 * `statebag/http`: a Web-standard chat handler (`(request: Request) => Promise<Response>`) that AI
 * SDK UI's `useChat` talks to, over stored sessions: chats are the store's owned sessions, a turn
 * runs to its end whoever listens (its stream buffered in the store: resume and stop from any
 * process), the UI message stream protocol over SSE, tool approvals answered exactly once, and a
 * list of the owner's chats. `toNodeListener` serves it from `node:http` (`createChatServer`: a
 * server with bounds on slow clients); Bun, Deno, Hono and Next route handlers take the handler
 * as it is.
 */
export { createChatHandler } from "./runtime/http/handler.js";
export type { ChatHandler, ChatHandlerOptions } from "./runtime/http/handler.js";
export { chatServerOptions, createChatServer, toNodeListener } from "./runtime/http/node.js";
export type { ChatServerOptions, NodeListener, NodeListenerOptions } from "./runtime/http/node.js";
export {
  ACTIVE_STREAM_LABEL,
  CHAT_TYPE,
  CHAT_TYPE_LABEL,
  ChatSessions,
  escapeSegment,
} from "./runtime/http/chat-flow.js";
export type {
  ApprovalAnswerInput,
  ChatPage,
  ChatSessionsOptions,
  ChatSummary,
  StopOutcome,
  TurnInput,
  TurnResult,
  TurnSink,
} from "./runtime/http/chat-flow.js";
export { TurnRunner } from "./runtime/http/turn-runner.js";
export type { TurnListener } from "./runtime/http/turn-runner.js";
export type { TurnFinish } from "./runtime/http/partial-answer.js";
export { CHAT_INDEX_KEY, CHAT_INDEX_TYPE } from "./runtime/http/chat-index.js";
export { HttpProblem, problemResponse, toProblem } from "./runtime/http/problem.js";
export type { HttpProblemCode, ProblemBody } from "./runtime/http/problem.js";
export { ChatError } from "./runtime/http/chat-error.js";
export type { ChatErrorCode } from "./runtime/http/chat-error.js";
export { UIMessageStreamEncoder, UI_MESSAGE_STREAM_HEADERS } from "./runtime/http/ui-message-stream.js";
export type { UIStreamChunk } from "./runtime/http/ui-message-stream.js";
export { parseUIChatRequest } from "./runtime/http/ai-sdk-ui.js";
export type { ParsedUIRequest, UIRequestLimits } from "./runtime/http/ai-sdk-ui.js";
