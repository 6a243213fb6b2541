/**
 * The model-facing interface, shaped after Microsoft.Extensions.AI's IChatClient: a list of messages
 * in, a response (or a stream of updates) out, and a flag telling whether the service can keep the
 * conversation itself (hosted sessions).
 */
import type { BlobReader } from "../blobs/references.js";
import type { AIContent, ChatMessage, UsageDetails } from "../core/messages.js";
import type { ServiceSessionId } from "../core/session.js";
import type { AITool } from "./tools.js";

export interface ChatOptions {
  /** The service's conversation to continue (hosted sessions only). */
  conversationId?: ServiceSessionId;
  /** Whether the service should keep this exchange. `false` for local sessions. */
  store?: boolean;
  instructions?: string;
  tools?: readonly AITool[];
  signal?: AbortSignal;
  /**
   * The session this request is for. A client may use it to tie together the attempts of one turn,
   * e.g. to continue, not recreate, a service conversation it created for a first turn that failed.
   */
  sessionId?: string;
  /**
   * Reads the bytes of reference contents (`statebag.blobReference`): a client resolves them with
   * `resolveBlobReferences` when it builds a request (the built-in clients do).
   */
  blobs?: BlobReader;
}

export interface ChatResponse {
  messages: ChatMessage[];
  /** Set by services that keep the conversation: the id to continue it with. */
  conversationId?: ServiceSessionId;
  responseId?: string;
  usage?: UsageDetails;
  finishReason?: string;
}

export interface ChatResponseUpdate {
  role?: string;
  contents: AIContent[];
  messageId?: string;
  authorName?: string;
  conversationId?: ServiceSessionId;
  responseId?: string;
  /** When the service created the message (ISO 8601); kept on the message as a non-streamed answer keeps it. */
  createdAt?: string;
}

export interface ChatClientMetadata {
  providerName: string;
  /** True when the service can store conversations and hand back a conversation id. */
  supportsServiceStorage: boolean;
}

export interface ChatClient {
  readonly metadata: ChatClientMetadata;
  /**
   * `true` promises that the client reads the `messages` array it is given only while its call runs
   * (until `getResponse` settles, or the `getStreamingResponse` stream ends or is closed), never
   * changes it, and keeps no reference to it afterwards (copy what you keep). The agent may then
   * send an array it reuses: on a long stored history, its kept model view with the request pushed
   * after it, instead of a fresh copy per call. Absent or `false`: every call gets a new array the
   * client may keep. A client wrapping another one does not inherit this: it claims it only if it
   * honours it too. The built-in clients have it (unless `getResponse` or `getStreamingResponse`
   * is overridden or replaced).
   */
  readonly readsMessagesOnlyDuringCall?: boolean;
  getResponse(messages: readonly ChatMessage[], options?: ChatOptions): Promise<ChatResponse>;
  getStreamingResponse(messages: readonly ChatMessage[], options?: ChatOptions): AsyncIterable<ChatResponseUpdate>;
}

/**
 * Folds streaming updates into a response: consecutive updates of one message (same messageId, or
 * same role with no id) join, adjacent text contents merge (a streamed annotation joins the text
 * before it), and adjacent plain reasoning deltas merge.
 */
export function responseFromUpdates(updates: readonly ChatResponseUpdate[]): ChatResponse {
  const messages: ChatMessage[] = [];
  const response: ChatResponse = { messages };
  let current: ChatMessage | undefined;
  let currentId: string | undefined;
  for (const update of updates) {
    if (update.conversationId !== undefined) response.conversationId = update.conversationId;
    if (update.responseId !== undefined) response.responseId = update.responseId;
    const role = update.role ?? current?.role ?? "assistant";
    const startsNew =
      !current || (update.messageId !== undefined && update.messageId !== currentId) || role !== current.role;
    if (startsNew) {
      current = { role, contents: [] };
      if (update.messageId !== undefined) current.messageId = update.messageId;
      if (update.authorName !== undefined) current.authorName = update.authorName;
      currentId = update.messageId;
      messages.push(current);
    }
    if (current!.createdAt === undefined && update.createdAt !== undefined) current!.createdAt = update.createdAt;
    for (const content of update.contents) {
      const last = current!.contents[current!.contents.length - 1];
      if (content.$type === "text" && last?.$type === "text" && content.text === "" && content.annotations) {
        // A streamed annotation belongs to the text before it (its offsets count from that text's start).
        current!.contents[current!.contents.length - 1] = {
          ...last,
          annotations: [...(last.annotations ?? []), ...content.annotations],
        };
      } else if (content.$type === "text" && last?.$type === "text" && !content.annotations) {
        current!.contents[current!.contents.length - 1] = { ...last, text: last.text + content.text };
      } else if (
        content.$type === "reasoning" &&
        last?.$type === "reasoning" &&
        last.protectedData === undefined &&
        content.protectedData === undefined &&
        !last.additionalProperties &&
        !content.additionalProperties
      ) {
        current!.contents[current!.contents.length - 1] = { ...last, text: (last.text ?? "") + (content.text ?? "") };
      } else if (content.$type === "usage") {
        response.usage = content.details;
        current!.contents.push(content);
      } else {
        current!.contents.push(content);
      }
    }
  }
  return response;
}
