/**
 * Chat messages and their contents, in exactly the JSON shape of Microsoft.Extensions.AI
 * (camelCase, `"$type"` on every content), so history written by Agent Framework (.NET) reads
 * as-is. Plain data: interfaces plus small constructors, nothing that needs reviving.
 */
import type { JsonValue, Tagged } from "./tagged.js";

/** Arbitrary extra JSON a message or content carries along (MEAI `AdditionalProperties`). */
export interface AdditionalProperties {
  [key: string]: JsonValue;
}

/** Well-known roles; any other string is allowed too (custom roles exist in the field). */
export type ChatRole = "system" | "user" | "assistant" | "tool" | (string & {});

// ---------------------------------------------------------------------------------------------
// Annotations (their own polymorphic families)

/** A region of a content an annotation refers to. */
export interface TextSpanAnnotatedRegion extends Tagged<"AnnotatedRegion", "textSpan", 1> {
  /** @TJS-type integer */
  start?: number;
  /** @TJS-type integer */
  end?: number;
}

/** Open family: add members by declaration merging (`declare module "statebag"`). */
export interface AnnotatedRegionTypes {
  textSpan: TextSpanAnnotatedRegion;
}
export type AnnotatedRegion = AnnotatedRegionTypes[keyof AnnotatedRegionTypes];

export interface CitationAnnotation extends Tagged<"AIAnnotation", "citation", 1> {
  title?: string;
  url?: string;
  fileId?: string;
  toolName?: string;
  snippet?: string;
  annotatedRegions?: AnnotatedRegion[];
  additionalProperties?: AdditionalProperties;
}

export interface AIAnnotationTypes {
  citation: CitationAnnotation;
}
export type AIAnnotation = AIAnnotationTypes[keyof AIAnnotationTypes];

// ---------------------------------------------------------------------------------------------
// Contents

/** What every content may carry besides its own properties. */
export interface AIContentBase {
  annotations?: AIAnnotation[];
  additionalProperties?: AdditionalProperties;
}

export interface TextContent extends Tagged<"AIContent", "text", 1>, AIContentBase {
  text: string;
}

export interface TextReasoningContent extends Tagged<"AIContent", "reasoning", 1>, AIContentBase {
  text?: string;
  protectedData?: string;
}

/** Inline bytes as a `data:` URI (media type and base64 payload). */
export interface DataContent extends Tagged<"AIContent", "data", 1>, AIContentBase {
  /** @pattern ^data: */
  uri: string;
  name?: string;
}

export interface UriContent extends Tagged<"AIContent", "uri", 1>, AIContentBase {
  uri: string;
  mediaType: string;
}

export interface ErrorContent extends Tagged<"AIContent", "error", 1>, AIContentBase {
  message: string;
  errorCode?: string;
  details?: string;
}

export interface UsageDetails {
  /** @TJS-type integer */
  inputTokenCount?: number;
  /** @TJS-type integer */
  outputTokenCount?: number;
  /** @TJS-type integer */
  totalTokenCount?: number;
  /** @TJS-type integer */
  cachedInputTokenCount?: number;
  /** @TJS-type integer */
  reasoningTokenCount?: number;
  additionalCounts?: { [name: string]: number };
}

export interface UsageContent extends Tagged<"AIContent", "usage", 1>, AIContentBase {
  details: UsageDetails;
}

export interface FunctionCallContent extends Tagged<"AIContent", "functionCall", 1>, AIContentBase {
  callId: string;
  name: string;
  arguments?: { [name: string]: JsonValue };
  informationalOnly?: boolean;
}

export interface FunctionResultContent extends Tagged<"AIContent", "functionResult", 1>, AIContentBase {
  callId: string;
  result?: JsonValue;
}

export interface HostedFileContent extends Tagged<"AIContent", "hostedFile", 1>, AIContentBase {
  fileId: string;
  mediaType?: string;
  name?: string;
}

/**
 * A file kept once in the store's blob store beside the session, in place of its bytes: the
 * session holds this small reference (SHA-256 of the bytes, media type, size, name) and the bytes
 * are read only when a model request or a page needs them (the model clients resolve it, the chat
 * handler serves it at `GET /api/chat/:id/files/:hash`). Loading or saving the session never
 * touches the bytes. A statebag content: Agent Framework does not know it.
 */
export interface BlobReferenceContent extends Tagged<"AIContent", "statebag.blobReference", 1>, AIContentBase {
  /**
   * SHA-256 of the bytes, 64 lowercase hex digits: the blob's key in the blob store.
   * @pattern ^[0-9a-f]{64}$
   */
  hash: string;
  /** The bytes' media type (`image/png`, `application/pdf`, ...). */
  mediaType: string;
  /**
   * Length of the bytes.
   * @TJS-type integer
   * @minimum 0
   */
  size: number;
  /** The file name the user gave, if any. */
  name?: string;
}

export interface ToolApprovalRequestContent extends Tagged<"AIContent", "toolApprovalRequest", 1>, AIContentBase {
  requestId: string;
  toolCall: AIContent;
  requiresConfirmation?: boolean;
}

export interface ToolApprovalResponseContent extends Tagged<"AIContent", "toolApprovalResponse", 1>, AIContentBase {
  requestId: string;
  approved: boolean;
  toolCall?: AIContent;
  reason?: string;
}

/**
 * The content family. It is open, as .NET's `AddAIContentType` allows: declare your own member
 * (`interface CardContent extends Tagged<"AIContent", "acme.card", 1>, AIContentBase {...}`), run
 * `npm run gen`, and add it to this map by declaration merging to use it with full typing.
 */
export interface AIContentTypes {
  text: TextContent;
  reasoning: TextReasoningContent;
  data: DataContent;
  uri: UriContent;
  error: ErrorContent;
  usage: UsageContent;
  functionCall: FunctionCallContent;
  functionResult: FunctionResultContent;
  hostedFile: HostedFileContent;
  "statebag.blobReference": BlobReferenceContent;
  toolApprovalRequest: ToolApprovalRequestContent;
  toolApprovalResponse: ToolApprovalResponseContent;
}
export type AIContent = AIContentTypes[keyof AIContentTypes];

// ---------------------------------------------------------------------------------------------
// Messages

export interface ChatMessage {
  authorName?: string;
  /** ISO-8601 with an offset. @format date-time */
  createdAt?: string;
  role: ChatRole;
  contents: AIContent[];
  messageId?: string;
  additionalProperties?: AdditionalProperties;
}

export function textContent(text: string): TextContent {
  return { $type: "text", text };
}

export function functionCallContent(
  callId: string,
  name: string,
  args?: { [name: string]: JsonValue },
): FunctionCallContent {
  return args === undefined
    ? { $type: "functionCall", callId, name }
    : { $type: "functionCall", callId, name, arguments: args };
}

export function functionResultContent(callId: string, result: JsonValue): FunctionResultContent {
  return { $type: "functionResult", callId, result };
}

export function usageContent(details: UsageDetails): UsageContent {
  return { $type: "usage", details };
}

function message(role: ChatRole, content: string | AIContent[], extra?: Partial<ChatMessage>): ChatMessage {
  const contents = typeof content === "string" ? [textContent(content)] : content;
  return { ...extra, role, contents };
}

export const userMessage = (content: string | AIContent[], extra?: Partial<ChatMessage>) =>
  message("user", content, extra);
export const assistantMessage = (content: string | AIContent[], extra?: Partial<ChatMessage>) =>
  message("assistant", content, extra);
export const systemMessage = (content: string | AIContent[], extra?: Partial<ChatMessage>) =>
  message("system", content, extra);
export const toolMessage = (content: AIContent[], extra?: Partial<ChatMessage>) => message("tool", content, extra);

/** The concatenated text of a message's text contents (what a person would read). */
export function messageText(msg: ChatMessage): string {
  let out = "";
  for (const content of msg.contents) if (content.$type === "text") out += content.text;
  return out;
}

/**
 * Reads a message in the Microsoft.Extensions.AI JSON shape, applying its defaults (role `user`,
 * empty contents) the way System.Text.Json does. Everything else is kept as it is.
 */
export function chatMessageFromMeai(
  json: { role?: string; contents?: AIContent[] } & Omit<ChatMessage, "role" | "contents">,
): ChatMessage {
  return { ...json, role: json.role ?? "user", contents: json.contents ?? [] };
}
