/**
 * Mapping between statebag's messages (Microsoft.Extensions.AI shape) and the OpenAI wire formats:
 * Chat Completions messages and Responses API items, both ways.
 *
 * What the formats carry maps exactly: text, images and files (inline `data:` URIs, URLs, uploaded
 * file ids), audio input (Chat Completions), function calls and results, refusals (an `error`
 * content with `errorCode: "refusal"`, as Microsoft.Extensions.AI records them), reasoning (the
 * Responses API's summaries and encrypted content; `reasoning_content` of compatible servers),
 * citations (url/file citations with their text spans) and usage.
 *
 * What a format cannot carry is kept in the session but not sent: usage and error contents,
 * reasoning in Chat Completions (no request field exists) and reasoning without encrypted content
 * in the Responses API, annotations on history sent back (the APIs take none on input). User
 * content a format cannot express (a video, an unknown media type) is refused with an error rather
 * than left out, because the model would otherwise answer without seeing it.
 */
import { StatebagError } from "../../core/errors.js";
import type {
  AIAnnotation,
  AIContent,
  ChatMessage,
  CitationAnnotation,
  FunctionCallContent,
  UsageDetails,
} from "../../core/messages.js";
import type { JsonValue } from "../../core/tagged.js";
import type { AITool } from "../tools.js";

/** Plain wire JSON (what the SDK serializes). */
export type Wire = { [key: string]: unknown };

export class UnsupportedContentError extends StatebagError {
  constructor(message: string, hint: string) {
    super("unsupported-content", message, { hint });
  }
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

/** A reference content reached the wire mapping: its bytes were not read (`resolveBlobReferences`). */
export function unresolvedReference(): UnsupportedContentError {
  return new UnsupportedContentError(
    "a file kept in the blob store (statebag.blobReference) was not resolved before building the request",
    "resolve references with resolveBlobReferences(messages, blobs) first; the built-in clients do it with ChatOptions.blobs",
  );
}

/** `data:<media type>;base64,<payload>` split into its parts. */
export function parseDataUri(uri: string): { mediaType: string; base64: string } {
  const match = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(uri);
  if (!match)
    throw new UnsupportedContentError(
      `a data content's URI is not a base64 data: URI (${uri.slice(0, 40)}...)`,
      "store inline bytes as data:<media type>;base64,<payload>",
    );
  return { mediaType: match[1] || "application/octet-stream", base64: match[2] };
}

export function resultText(result: JsonValue | undefined): string {
  return typeof result === "string" ? result : JSON.stringify(result ?? null);
}

/** Arguments as the model wrote them; text that is not a JSON object is kept raw beside the call. */
export function functionCall(callId: string, name: string, argumentsJson: string | undefined): FunctionCallContent {
  const call: FunctionCallContent = { $type: "functionCall", callId, name };
  const text = argumentsJson ?? "";
  if (text.trim() === "") {
    call.arguments = {};
    return call;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      call.arguments = parsed as { [name: string]: JsonValue };
      return call;
    }
  } catch {
    // fall through: keep what the model wrote
  }
  call.additionalProperties = { rawArguments: text };
  return call;
}

function argumentsJson(call: FunctionCallContent): string {
  const raw = call.additionalProperties?.rawArguments;
  return call.arguments === undefined && typeof raw === "string" ? raw : JSON.stringify(call.arguments ?? {});
}

/** OpenAI's `name` field allows letters, digits, `_` and `-` (64 at most). */
function participantName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? undefined : cleaned;
}

function textOf(contents: readonly AIContent[]): string {
  return contents.map((c) => (c.$type === "text" ? c.text : "")).join("");
}

export function functionTools(tools: readonly AITool[] | undefined, shape: "chat" | "responses"): Wire[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((tool) => {
    const parameters = tool.parameters ?? { type: "object", properties: {} };
    if (shape === "responses") {
      const out: Wire = { type: "function", name: tool.name, parameters, strict: false };
      if (tool.description !== undefined) out.description = tool.description;
      return out;
    }
    const fn: Wire = { name: tool.name, parameters };
    if (tool.description !== undefined) fn.description = tool.description;
    return { type: "function", function: fn };
  });
}

function citation(fields: {
  url?: string;
  title?: string;
  fileId?: string;
  start?: number;
  end?: number;
  extra?: Wire;
}): CitationAnnotation {
  const out: CitationAnnotation = { $type: "citation" };
  if (fields.title !== undefined) out.title = fields.title;
  if (fields.url !== undefined) out.url = fields.url;
  if (fields.fileId !== undefined) out.fileId = fields.fileId;
  if (fields.start !== undefined || fields.end !== undefined) {
    const region: { $type: "textSpan"; start?: number; end?: number } = { $type: "textSpan" };
    if (fields.start !== undefined) region.start = fields.start;
    if (fields.end !== undefined) region.end = fields.end;
    out.annotatedRegions = [region];
  }
  if (fields.extra && Object.keys(fields.extra).length)
    out.additionalProperties = fields.extra as { [key: string]: JsonValue };
  return out;
}

/** An OpenAI annotation (either API) as a citation; kinds without a url or file keep their fields as additional properties. */
export function annotationFromWire(annotation: Wire): AIAnnotation {
  const fields = annotation as Record<string, unknown>;
  const inner = (fields.url_citation as Record<string, unknown> | undefined) ?? fields; // Chat Completions nests the fields
  const num = (v: unknown) => (typeof v === "number" ? v : undefined);
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const {
    type,
    url,
    title,
    start_index,
    end_index,
    file_id,
    filename,
    index,
    url_citation: _nested,
    ...rest
  } = { ...fields, ...inner } as Record<string, unknown>;
  const extra: Wire = { ...rest, ...(typeof type === "string" && type !== "url_citation" ? { type } : {}) };
  if (index !== undefined) extra.index = index;
  return citation({
    url: str(url),
    title: str(title) ?? str(filename),
    fileId: str(file_id),
    start: num(start_index),
    end: num(end_index),
    extra,
  });
}

/** The field names of one API's usage object (Chat Completions and Responses name the same counts differently). */
const CHAT_USAGE = {
  input: "prompt_tokens",
  output: "completion_tokens",
  inputDetails: "prompt_tokens_details",
  outputDetails: "completion_tokens_details",
} as const;
const RESPONSES_USAGE = {
  input: "input_tokens",
  output: "output_tokens",
  inputDetails: "input_tokens_details",
  outputDetails: "output_tokens_details",
} as const;

export const usageFromChat = (usage: Wire | undefined | null): UsageDetails | undefined => usageFrom(usage, CHAT_USAGE);
export const usageFromResponses = (usage: Wire | undefined | null): UsageDetails | undefined =>
  usageFrom(usage, RESPONSES_USAGE);

function usageFrom(
  usage: Wire | undefined | null,
  names: typeof CHAT_USAGE | typeof RESPONSES_USAGE,
): UsageDetails | undefined {
  if (!usage) return undefined;
  const fields = usage as Record<string, unknown>;
  const out: UsageDetails = {};
  const [input, output, total] = [fields[names.input], fields[names.output], fields.total_tokens];
  if (typeof input === "number") out.inputTokenCount = input;
  if (typeof output === "number") out.outputTokenCount = output;
  if (typeof total === "number") out.totalTokenCount = total;
  const counts = detailCounts(
    out,
    fields[names.inputDetails],
    "cached_tokens",
    "cachedInputTokenCount",
    `${names.inputDetails}.`,
  );
  detailCounts(
    out,
    fields[names.outputDetails],
    "reasoning_tokens",
    "reasoningTokenCount",
    `${names.outputDetails}.`,
    counts,
  );
  if (Object.keys(counts).length) out.additionalCounts = counts;
  return out;
}

/** One named count becomes a standard field; the other numeric counts of the details are kept by name. */
function detailCounts(
  out: UsageDetails,
  details: unknown,
  known: string,
  field: "cachedInputTokenCount" | "reasoningTokenCount",
  prefix: string,
  counts: { [name: string]: number } = {},
): { [name: string]: number } {
  if (!details || typeof details !== "object") return counts;
  for (const [name, value] of Object.entries(details as Record<string, unknown>)) {
    if (typeof value !== "number") continue;
    if (name === known) out[field] = value;
    else counts[prefix + name] = value;
  }
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Chat Completions

function chatUserPart(content: AIContent): Wire | undefined {
  switch (content.$type) {
    case "text":
      return { type: "text", text: content.text };
    case "data": {
      const { mediaType, base64 } = parseDataUri(content.uri);
      if (mediaType.startsWith("image/")) return { type: "image_url", image_url: { url: content.uri } };
      if (
        mediaType === "audio/wav" ||
        mediaType === "audio/x-wav" ||
        mediaType === "audio/mpeg" ||
        mediaType === "audio/mp3"
      ) {
        return {
          type: "input_audio",
          input_audio: { data: base64, format: mediaType.includes("wav") ? "wav" : "mp3" },
        };
      }
      if (mediaType === "application/pdf")
        return { type: "file", file: { file_data: content.uri, filename: content.name ?? "document.pdf" } };
      throw new UnsupportedContentError(
        `Chat Completions cannot send inline ${mediaType} content`,
        "send images, wav/mp3 audio or PDF files, or upload the file and reference it as a hostedFile content",
      );
    }
    case "uri":
      if (content.mediaType.startsWith("image/")) return { type: "image_url", image_url: { url: content.uri } };
      throw new UnsupportedContentError(
        `Chat Completions cannot send a link to ${content.mediaType} content (${content.uri})`,
        "only image URLs can be sent by link; send other files inline (data content) or upload them",
      );
    case "hostedFile":
      return { type: "file", file: { file_id: content.fileId } };
    case "statebag.blobReference":
      throw unresolvedReference();
    default:
      return undefined; // usage, reasoning, errors and approval bookkeeping stay in the session
  }
}

/** statebag messages as Chat Completions messages (instructions first, as a system message). */
export function toChatMessages(messages: readonly ChatMessage[], instructions?: string): Wire[] {
  const out: Wire[] = [];
  if (instructions) out.push({ role: "system", content: instructions });
  for (const message of messages) {
    const name = participantName(message.authorName);
    const withName = (m: Wire) => (name !== undefined ? { ...m, name } : m);
    if (message.role === "system" || message.role === "developer") {
      out.push(withName({ role: message.role, content: textOf(message.contents) }));
    } else if (message.role === "assistant") {
      const wire: Wire = { role: "assistant" };
      const text = textOf(message.contents);
      wire.content = text === "" ? null : text;
      const refusal = message.contents.find((c) => c.$type === "error" && c.errorCode === "refusal");
      if (refusal?.$type === "error") wire.refusal = refusal.message;
      const calls = message.contents.filter(
        (c): c is FunctionCallContent => c.$type === "functionCall" && !c.informationalOnly,
      );
      if (calls.length)
        wire.tool_calls = calls.map((c) => ({
          id: c.callId,
          type: "function",
          function: { name: c.name, arguments: argumentsJson(c) },
        }));
      if (wire.content === null && !wire.tool_calls && wire.refusal === undefined) continue; // nothing the API can carry
      out.push(withName(wire));
    } else if (message.role === "tool") {
      for (const content of message.contents) {
        if (content.$type === "functionResult")
          out.push({ role: "tool", tool_call_id: content.callId, content: resultText(content.result) });
      }
    } else {
      const parts = message.contents.map(chatUserPart).filter((p): p is Wire => p !== undefined);
      if (parts.length === 0) continue;
      const onlyText = parts.every((p) => p.type === "text");
      out.push(withName({ role: "user", content: onlyText ? parts.map((p) => p.text).join("") : parts }));
    }
  }
  return out;
}

/** A Chat Completions choice's message as statebag contents (reasoning, text, refusal, calls). */
export function fromChatMessage(message: Wire): AIContent[] {
  const fields = message as Record<string, unknown>;
  const contents: AIContent[] = [];
  const reasoning =
    typeof fields.reasoning_content === "string"
      ? fields.reasoning_content
      : typeof fields.reasoning === "string"
        ? fields.reasoning
        : undefined;
  if (reasoning) contents.push({ $type: "reasoning", text: reasoning });
  if (typeof fields.content === "string" && fields.content !== "") {
    const text: AIContent = { $type: "text", text: fields.content };
    if (Array.isArray(fields.annotations) && fields.annotations.length)
      text.annotations = (fields.annotations as Wire[]).map(annotationFromWire);
    contents.push(text);
  }
  if (typeof fields.refusal === "string" && fields.refusal !== "")
    contents.push({ $type: "error", message: fields.refusal, errorCode: "refusal" });
  for (const call of (fields.tool_calls as Wire[] | undefined) ?? []) {
    const toolCall = call as { id: string; function?: { name: string; arguments?: string } };
    if (toolCall.function)
      contents.push(functionCall(toolCall.id, toolCall.function.name, toolCall.function.arguments));
  }
  return contents;
}

// ---------------------------------------------------------------------------------------------
// Responses API

function responsesUserPart(content: AIContent): Wire | undefined {
  switch (content.$type) {
    case "text":
      return { type: "input_text", text: content.text };
    case "data": {
      const { mediaType } = parseDataUri(content.uri);
      if (mediaType.startsWith("image/")) return { type: "input_image", image_url: content.uri, detail: "auto" };
      return {
        type: "input_file",
        file_data: content.uri,
        filename: content.name ?? `file.${mediaType.split("/")[1] ?? "bin"}`,
      };
    }
    case "uri":
      if (content.mediaType.startsWith("image/"))
        return { type: "input_image", image_url: content.uri, detail: "auto" };
      return { type: "input_file", file_url: content.uri };
    case "hostedFile":
      return content.mediaType?.startsWith("image/")
        ? { type: "input_image", file_id: content.fileId, detail: "auto" }
        : { type: "input_file", file_id: content.fileId };
    case "statebag.blobReference":
      throw unresolvedReference();
    default:
      return undefined;
  }
}

/** statebag messages as Responses API input items. */
export function toResponsesInput(messages: readonly ChatMessage[]): Wire[] {
  const out: Wire[] = [];
  for (const message of messages) {
    if (message.role === "assistant") {
      let text = "";
      const flushText = () => {
        if (text !== "") out.push({ role: "assistant", content: text });
        text = "";
      };
      for (const content of message.contents) {
        if (content.$type === "text") text += content.text;
        else if (content.$type === "functionCall" && !content.informationalOnly) {
          flushText();
          out.push({
            type: "function_call",
            call_id: content.callId,
            name: content.name,
            arguments: argumentsJson(content),
          });
        } else if (
          content.$type === "reasoning" &&
          content.protectedData !== undefined &&
          typeof content.additionalProperties?.id === "string"
        ) {
          flushText();
          out.push({
            type: "reasoning",
            id: content.additionalProperties.id,
            encrypted_content: content.protectedData,
            summary: content.text ? [{ type: "summary_text", text: content.text }] : [],
          });
        }
      }
      flushText();
    } else if (message.role === "tool") {
      for (const content of message.contents)
        if (content.$type === "functionResult")
          out.push({ type: "function_call_output", call_id: content.callId, output: resultText(content.result) });
    } else if (message.role === "system" || message.role === "developer") {
      out.push({ role: message.role, content: textOf(message.contents) });
    } else {
      const parts = message.contents.map(responsesUserPart).filter((p): p is Wire => p !== undefined);
      if (parts.length) out.push({ role: "user", content: parts });
    }
  }
  return out;
}

/** What one Responses API output item becomes; items of hosted tools are kept as informational calls. */
export function fromResponsesItem(item: Wire): { contents: AIContent[]; messageId?: string } {
  const itemFields = item as Record<string, unknown>;
  switch (itemFields.type) {
    case "message": {
      const contents: AIContent[] = [];
      for (const part of (itemFields.content as Wire[] | undefined) ?? []) {
        const partFields = part as Record<string, unknown>;
        if (partFields.type === "output_text") {
          const text: AIContent = { $type: "text", text: String(partFields.text ?? "") };
          if (Array.isArray(partFields.annotations) && partFields.annotations.length)
            text.annotations = (partFields.annotations as Wire[]).map(annotationFromWire);
          contents.push(text);
        } else if (partFields.type === "refusal") {
          contents.push({ $type: "error", message: String(partFields.refusal ?? ""), errorCode: "refusal" });
        }
      }
      return { contents, messageId: typeof itemFields.id === "string" ? itemFields.id : undefined };
    }
    case "function_call":
      return {
        contents: [
          functionCall(
            String(itemFields.call_id),
            String(itemFields.name),
            typeof itemFields.arguments === "string" ? itemFields.arguments : undefined,
          ),
        ],
      };
    case "reasoning": {
      const summary = ((itemFields.summary as Wire[] | undefined) ?? []).map((s) =>
        String((s as { text?: unknown }).text ?? ""),
      );
      const detail = ((itemFields.content as Wire[] | undefined) ?? []).map((s) =>
        String((s as { text?: unknown }).text ?? ""),
      );
      const content: AIContent = { $type: "reasoning" };
      const text = [...summary, ...detail].join("\n\n");
      if (text) content.text = text;
      if (typeof itemFields.encrypted_content === "string") content.protectedData = itemFields.encrypted_content;
      if (typeof itemFields.id === "string") content.additionalProperties = { id: itemFields.id };
      return { contents: [content] };
    }
    default: {
      // A hosted tool's call (web search, file search, code interpreter, ...): the service ran it.
      const { type, id, ...rest } = itemFields;
      const call: FunctionCallContent = {
        $type: "functionCall",
        callId: typeof id === "string" ? id : String(type),
        name: String(type),
        informationalOnly: true,
      };
      call.arguments = JSON.parse(JSON.stringify(rest)) as { [name: string]: JsonValue };
      return { contents: [call] };
    }
  }
}
