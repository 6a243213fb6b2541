/**
 * The AI SDK UI request (what `useChat`'s `DefaultChatTransport` POSTs): `{ id, messages | message,
 * trigger, messageId? }`, read into a `TurnInput`. Only the last message counts: a user message to
 * append, or an assistant message whose tool parts carry approval answers
 * (`addToolApprovalResponse`: state `approval-responded`, `approval: { id, approved, reason? }`).
 * The client's copy of the history is never trusted: the history is the stored one.
 */
import type { ChatMessage } from "../core/messages.js";
import type { ApprovalAnswerInput, TurnInput } from "./chat-flow.js";
import { HttpProblem } from "./problem.js";

/** Chat and message ids: what `generateId` and `crypto.randomUUID` produce, and then some. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export interface UIRequestLimits {
  /** Characters of text in the new user message. */
  maxMessageChars: number;
  /** Approval answers in one request. */
  maxAnswers: number;
}

export interface ParsedUIRequest {
  chatId: string;
  input: TurnInput;
}

const bad = (detail: string) => new HttpProblem(400, "invalid-request", "Invalid request", detail);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function checkChatId(id: unknown): string {
  if (typeof id !== "string" || !ID_PATTERN.test(id)) throw bad("The chat id must be 1-128 letters, digits, '-' or '_'.");
  return id;
}

export function parseUIChatRequest(body: unknown, limits: UIRequestLimits): ParsedUIRequest {
  if (!isObject(body)) throw bad("The body must be a JSON object.");
  const chatId = checkChatId(body.id);
  const trigger = body.trigger ?? "submit-message";
  if (trigger === "regenerate-message") {
    throw new HttpProblem(422, "regenerate-unsupported", "Regenerate not supported", "Regenerating a stored reply is not supported; send a new message instead.");
  }
  if (trigger !== "submit-message") throw bad('"trigger" must be "submit-message" or "regenerate-message".');
  let last: unknown = body.message;
  if (last === undefined) {
    if (!Array.isArray(body.messages) || body.messages.length === 0) throw bad('The body needs "message" or a non-empty "messages" array.');
    last = body.messages[body.messages.length - 1];
  }
  if (!isObject(last) || !Array.isArray(last.parts)) throw bad("The last message must be an object with a parts array.");
  if (last.role === "user") return { chatId, input: { kind: "message", message: userMessage(last, limits) } };
  if (last.role === "assistant") return { chatId, input: { kind: "approvals", answers: approvalAnswers(last.parts, limits) } };
  throw bad('The last message must be a "user" message, or an "assistant" message answering tool approvals.');
}

function userMessage(message: Record<string, unknown>, limits: UIRequestLimits): ChatMessage {
  const parts = message.parts as unknown[];
  let chars = 0;
  const texts: string[] = [];
  for (const part of parts) {
    if (!isObject(part) || typeof part.type !== "string") throw bad("Every part must be an object with a type.");
    if (part.type === "step-start") continue;
    if (part.type !== "text") throw new HttpProblem(422, "unsupported-part", "Unsupported message part", "Only text parts are accepted in a user message.");
    if (typeof part.text !== "string") throw bad("A text part needs a text string.");
    chars += part.text.length;
    if (chars > limits.maxMessageChars) {
      throw new HttpProblem(413, "message-too-long", "Message too long", `The message is longer than ${limits.maxMessageChars} characters.`);
    }
    texts.push(part.text);
  }
  const text = texts.join("\n");
  if (text.trim() === "") throw bad("The message has no text.");
  const chatMessage: ChatMessage = { role: "user", contents: [{ $type: "text", text }] };
  // The client's id is kept, so the stored message and the one on screen are the same message.
  if (typeof message.id === "string" && ID_PATTERN.test(message.id)) chatMessage.messageId = message.id;
  return chatMessage;
}

function approvalAnswers(parts: unknown[], limits: UIRequestLimits): ApprovalAnswerInput[] {
  const answers: ApprovalAnswerInput[] = [];
  for (const part of parts) {
    if (!isObject(part) || typeof part.type !== "string") throw bad("Every part must be an object with a type.");
    const isTool = part.type.startsWith("tool-") || part.type === "dynamic-tool";
    if (!isTool || part.state !== "approval-responded") continue;
    const approval = part.approval;
    if (!isObject(approval) || typeof approval.id !== "string" || approval.id.length === 0 || approval.id.length > 256 || typeof approval.approved !== "boolean") {
      throw bad("An approval answer needs an id and approved: true or false.");
    }
    if (approval.reason !== undefined && (typeof approval.reason !== "string" || approval.reason.length > 2000)) throw bad("An approval reason must be a string of at most 2000 characters.");
    answers.push({ approvalId: approval.id, approved: approval.approved, ...(typeof approval.reason === "string" && approval.reason ? { reason: approval.reason } : {}) });
    if (answers.length > limits.maxAnswers) throw bad(`At most ${limits.maxAnswers} approval answers per request.`);
  }
  if (answers.length === 0) throw bad("The last message is an assistant message with no approval answer in it.");
  return answers;
}
