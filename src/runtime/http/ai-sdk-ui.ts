/**
 * The AI SDK UI request (what `useChat`'s `DefaultChatTransport` POSTs): `{ id, messages | message,
 * trigger, messageId? }`, read into a `TurnInput`. Only the last message counts: a user message to
 * append, or an assistant message whose tool parts carry approval answers
 * (`addToolApprovalResponse`: state `approval-responded`, `approval: { id, approved, reason? }`).
 * The message is read with `fromUIMessages` (statebag/ui-messages), the same conversion GET
 * /chats/:id answers with (`toUIMessages`). The client's copy of the history is never trusted: the
 * history is the stored one.
 */
import { StatebagError } from "../core/errors.js";
import type { ChatMessage } from "../core/messages.js";
import { dataUriByteLength } from "../blobs/references.js";
import { checkWritableJson } from "../json/safe-json.js";
import { fromUIMessages } from "../ui-messages/from-ui.js";
import type { UIMessageLike } from "../ui-messages/types.js";
import type { ApprovalAnswerInput, TurnInput } from "./chat-data.js";
import { HttpProblem } from "./problem.js";

/** Chat and message ids: what `generateId` and `crypto.randomUUID` produce, and then some. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export interface UIRequestLimits {
  /** Characters of text in the new user message. */
  maxMessageChars: number;
  /** Approval answers in one request. */
  maxAnswers: number;
  /** Bytes of one attached file (a `file` part with a base64 `data:` URL). */
  maxFileBytes: number;
  /** Files in one user message. */
  maxFiles: number;
  /** Media types a file may have: exact (`image/png`) or a whole top-level type (`image/*`). */
  fileTypes: readonly string[];
}

/** The media types accepted by default: common raster images, PDF and plain text (not SVG or HTML, which can carry script). */
export const DEFAULT_FILE_TYPES: readonly string[] = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "application/pdf",
  "text/plain",
];

/** True when `mediaType` is one of `allowed` (exact, or `type/*`). */
export function fileTypeAllowed(mediaType: string, allowed: readonly string[]): boolean {
  const type = mediaType.toLowerCase();
  const slash = type.indexOf("/");
  return allowed.some((a) => {
    const pattern = a.toLowerCase();
    return (
      pattern === type || (pattern.endsWith("/*") && slash > 0 && pattern.slice(0, -1) === type.slice(0, slash + 1))
    );
  });
}

export interface ParsedUIRequest {
  chatId: string;
  input: TurnInput;
}

const bad = (detail: string) => new HttpProblem("http-invalid-request", { detail });

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function checkChatId(id: unknown): string {
  if (typeof id !== "string" || !ID_PATTERN.test(id))
    throw bad("The chat id must be 1-128 letters, digits, '-' or '_'.");
  return id;
}

export function parseUIChatRequest(body: unknown, limits: UIRequestLimits): ParsedUIRequest {
  if (!isObject(body)) throw bad("The body must be a JSON object.");
  const chatId = checkChatId(body.id);
  const trigger = body.trigger ?? "submit-message";
  if (trigger === "regenerate-message") {
    // useChat's regenerate(): the answer `messageId` (default: the last one) is written again.
    const messageId = body.messageId;
    if (messageId !== undefined && (typeof messageId !== "string" || !ID_PATTERN.test(messageId)))
      throw bad('"messageId" must be the id of a message of the chat.');
    return { chatId, input: messageId === undefined ? { kind: "regenerate" } : { kind: "regenerate", messageId } };
  }
  if (trigger !== "submit-message") throw bad('"trigger" must be "submit-message" or "regenerate-message".');
  let last: unknown = body.message;
  if (last === undefined) {
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      throw bad('The body needs "message" or a non-empty "messages" array.');
    last = body.messages[body.messages.length - 1];
  }
  if (!isObject(last) || !Array.isArray(last.parts))
    throw bad("The last message must be an object with a parts array.");
  if (last.role === "user") return { chatId, input: { kind: "message", message: userMessage(last, limits) } };
  if (last.role === "assistant")
    return { chatId, input: { kind: "approvals", answers: approvalAnswers(last, limits) } };
  throw bad('The last message must be a "user" message, or an "assistant" message answering tool approvals.');
}

/** The UI message as statebag messages, through `fromUIMessages`; a malformed one is a 400 that names no input. */
function converted(message: Record<string, unknown>): ChatMessage[] {
  try {
    return (
      plainUserMessage(message) ?? fromUIMessages([message as unknown as UIMessageLike], { unknownParts: "reject" })
    );
  } catch (error) {
    if (error instanceof StatebagError) {
      const pointer = (error as { pointer?: unknown }).pointer;
      // The pointer names the place (indices and the part's own field names), never a value.
      const at =
        typeof pointer === "string" && /^[A-Za-z0-9/_-]{0,80}$/.test(pointer)
          ? ` (at ${pointer.replace(/^\/0/, "") || "/"})`
          : "";
      throw bad(`The last message is not a valid UI message${at}.`);
    }
    throw error;
  }
}

/**
 * A user message of text parts and inline files only (what useChat sends), read directly: the
 * contents `fromUIMessages` would give it, as far as `userMessage` keeps them (the text, a file's
 * URL and name). Undefined for anything else, which `fromUIMessages` reads (and refuses, when
 * malformed). The same JSON check comes first, so a value JSON cannot hold is refused alike.
 * @internal exported for its test
 */
export function plainUserMessage(message: Record<string, unknown>): ChatMessage[] | undefined {
  if (message.role !== "user" || (message.id !== undefined && typeof message.id !== "string")) return undefined;
  // fromUIMessages reads statebag's own usage metadata as a content (which a user message may not have).
  if (isObject(message.metadata) && message.metadata.usage !== undefined) return undefined;
  checkWritableJson([message], { protoKeys: "keep" });
  const contents: ChatMessage["contents"] = [];
  for (const part of message.parts as unknown[]) {
    if (!isObject(part)) return undefined;
    if (part.type === "text" && typeof part.text === "string") contents.push({ $type: "text", text: part.text });
    else if (
      part.type === "file" &&
      typeof part.url === "string" &&
      part.url.startsWith("data:") &&
      typeof part.mediaType === "string" &&
      (part.filename === undefined || typeof part.filename === "string")
    )
      contents.push({ $type: "data", uri: part.url, ...(part.filename !== undefined ? { name: part.filename } : {}) });
    else return undefined;
  }
  return [{ role: "user", contents }];
}

function userMessage(message: Record<string, unknown>, limits: UIRequestLimits): ChatMessage {
  let chars = 0;
  for (const part of message.parts as unknown[]) {
    if (isObject(part) && part.type === "text" && typeof part.text === "string") chars += part.text.length;
  }
  // Counted before converting, so a huge message costs no copy.
  if (chars > limits.maxMessageChars) {
    throw new HttpProblem("http-message-too-long", {
      detail: `The message is longer than ${limits.maxMessageChars} characters.`,
    });
  }
  checkFiles(message.parts as unknown[], limits);
  const [converted_, ...rest] = converted(message);
  if (!converted_ || rest.length > 0 || converted_.contents.some((c) => c.$type !== "text" && c.$type !== "data")) {
    throw new HttpProblem("http-unsupported-part");
  }
  if (converted_.contents.every((c) => c.$type === "text" && c.text.trim() === ""))
    throw bad("The message has no text and no file.");
  // The text and the files, and the client's id (so the stored message and the one on screen are
  // the same message). Client metadata and extra fields are not stored: the client is not trusted.
  const chatMessage: ChatMessage = {
    role: "user",
    contents: converted_.contents.map((c) =>
      c.$type === "text"
        ? { $type: "text", text: c.text }
        : c.$type === "data"
          ? { $type: "data", uri: c.uri, ...(c.name !== undefined ? { name: c.name.slice(0, 255) } : {}) }
          : c,
    ),
  };
  if (typeof message.id === "string" && ID_PATTERN.test(message.id)) chatMessage.messageId = message.id;
  return chatMessage;
}

/**
 * The file parts of a user message, checked before anything is converted: each a base64 `data:`
 * URL of an allowed media type and at most `maxFileBytes` (counted from its length, not decoded),
 * at most `maxFiles` of them. A refused file is a 4xx problem naming the rule, never the file's
 * name or content.
 */
function checkFiles(parts: unknown[], limits: UIRequestLimits): void {
  let files = 0;
  for (const part of parts) {
    if (!isObject(part) || part.type !== "file") continue;
    files++;
    const nth = ordinal(files);
    if (files > limits.maxFiles)
      throw new HttpProblem("http-too-many-files", {
        detail: `A message may carry at most ${limits.maxFiles} file${limits.maxFiles === 1 ? "" : "s"}.`,
      });
    const url = part.url;
    if (typeof url !== "string" || !url.startsWith("data:"))
      throw new HttpProblem("http-file-not-inline", {
        detail: `The ${nth} file is not sent inline: send its bytes as a base64 data: URL.`,
      });
    const comma = url.indexOf(",");
    const head = comma < 0 ? "" : url.slice(5, Math.min(comma, 300));
    if (comma < 0 || !/;base64$/i.test(head)) throw bad(`The ${nth} file's data: URL is not base64.`);
    const mediaType = head.split(";")[0].trim().toLowerCase();
    if (!fileTypeAllowed(mediaType, limits.fileTypes))
      throw new HttpProblem("http-file-type-not-allowed", {
        detail: `The ${nth} file's type is not accepted here; accepted: ${limits.fileTypes.join(", ")}. Nothing of the message was saved.`,
      });
    if (dataUriByteLength(url) > limits.maxFileBytes)
      throw new HttpProblem("http-file-too-large", {
        detail: `The ${nth} file is larger than ${limits.maxFileBytes} bytes; nothing of the message was saved.`,
      });
  }
}

function ordinal(n: number): string {
  const suffix =
    n % 10 === 1 && n % 100 !== 11
      ? "st"
      : n % 10 === 2 && n % 100 !== 12
        ? "nd"
        : n % 10 === 3 && n % 100 !== 13
          ? "rd"
          : "th";
  return `${n}${suffix}`;
}

/**
 * The answers of an assistant message: its tool parts in state `approval-responded`. Through
 * `fromUIMessages` those are `toolApprovalResponse` contents whose call has no result yet (a part
 * answered earlier and already run, `output-available` or `output-denied`, has one).
 */
function approvalAnswers(message: Record<string, unknown>, limits: UIRequestLimits): ApprovalAnswerInput[] {
  const messages = converted(message);
  const done = new Set(
    messages.flatMap((m) => m.contents.flatMap((c) => (c.$type === "functionResult" ? [c.callId] : []))),
  );
  const answers: ApprovalAnswerInput[] = [];
  for (const content of messages.flatMap((m) => m.contents)) {
    if (content.$type !== "toolApprovalResponse") continue;
    const call = content.toolCall;
    if (call?.$type === "functionCall" && done.has(call.callId)) continue;
    if (content.requestId.length === 0 || content.requestId.length > 256)
      throw bad("An approval id must be 1-256 characters.");
    if (content.reason !== undefined && content.reason.length > 2000)
      throw bad("An approval reason must be at most 2000 characters.");
    answers.push({
      approvalId: content.requestId,
      approved: content.approved,
      ...(content.reason ? { reason: content.reason } : {}),
    });
    if (answers.length > limits.maxAnswers) throw bad(`At most ${limits.maxAnswers} approval answers per request.`);
  }
  if (answers.length === 0) throw bad("The last message is an assistant message with no approval answer in it.");
  return answers;
}
