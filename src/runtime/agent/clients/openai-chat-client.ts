/**
 * `OpenAIChatClient`: a `ChatClient` on the official `openai` package, for OpenAI and any
 * OpenAI-compatible server (Ollama, vLLM, LM Studio, ...) by `baseURL`.
 *
 * Two APIs, matching the two kinds of session:
 * - `api: "chat"` (default): Chat Completions. The service keeps nothing (`store: false`); a local
 *   session sends its whole history each turn. Works with every compatible server.
 * - `api: "responses"`: the Responses API. A hosted session lets the service keep the conversation;
 *   the session holds its id: the last response id (`previous_response_id`, default) or, with
 *   `hostedConversation: "conversation"`, a Conversations API id. Only this mode reports
 *   `supportsServiceStorage`. A local session can use it too (`store: false`, history sent).
 *
 * `openai` is an optional peer dependency, imported on the first request. Service errors become
 * `ModelServiceError` with the HTTP status and the service's own message; since the agent commits a
 * run only when it succeeds, a 429 or 5xx leaves the session as it was.
 */
import type OpenAI from "openai";
import type { ChatClient, ChatClientMetadata, ChatOptions, ChatResponse, ChatResponseUpdate } from "../chat-client.js";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import type { AIContent, ChatMessage, UsageDetails } from "../../core/messages.js";
import type { ServiceSessionId } from "../../core/session.js";
import { ModelServiceError, serviceText } from "./model-service-error.js";
import { shownText } from "../../core/json.js";
import { importOptional } from "./optional-dependency.js";

export { ModelServiceError };
import {
  annotationFromWire,
  fromChatMessage,
  fromResponsesItem,
  functionCall,
  functionTools,
  toChatMessages,
  toResponsesInput,
  usageFromChat,
  usageFromResponses,
  type Wire,
} from "./openai-content.js";

export interface OpenAIChatClientOptions {
  /** The model id, e.g. `"gpt-4.1-mini"` (or the model name a compatible server knows). */
  model: string;
  /** `"chat"`: Chat Completions, local sessions (default). `"responses"`: the Responses API, hosted sessions possible. */
  api?: "chat" | "responses";
  /** Responses API: how a hosted session names its conversation. Default `"previous-response"`. */
  hostedConversation?: "previous-response" | "conversation";
  /** A configured SDK client; otherwise one is built from the options below on first use. */
  client?: OpenAI;
  /** Default: `OPENAI_API_KEY`. Compatible local servers usually accept any value. */
  apiKey?: string;
  /** An OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1` for Ollama. Default: `OPENAI_BASE_URL` or OpenAI. */
  baseURL?: string;
  organization?: string;
  project?: string;
  /** Retries of the SDK for 408/409/429/5xx and connection errors. Default 2 (the SDK's). */
  maxRetries?: number;
  /** Per request, in ms. Default: the SDK's (10 minutes). */
  timeoutMs?: number;
  defaultHeaders?: Record<string, string>;
  /** Extra body fields sent with every request (`temperature`, `max_tokens`, `reasoning`, `include`, ...). */
  request?: Wire;
  /** Reported in `metadata.providerName`. Default `"openai"`. */
  providerName?: string;
}

type OpenAIModule = typeof import("openai");

export class OpenAIChatClient implements ChatClient {
  readonly metadata: ChatClientMetadata;
  readonly model: string;
  readonly api: "chat" | "responses";
  private sdk?: Promise<{ module: OpenAIModule; client: OpenAI }>;

  constructor(readonly options: OpenAIChatClientOptions) {
    if (typeof options?.model !== "string" || options.model === "") throw new ConfigurationError("OpenAIChatClient needs a model", 'pass { model: "gpt-4.1-mini" } (or the model name your server knows)');
    const api = options.api ?? "chat";
    if (api !== "chat" && api !== "responses") throw new ConfigurationError(`unknown OpenAI api ${JSON.stringify(api)}`, 'use "chat" (Chat Completions) or "responses" (Responses API)');
    this.model = options.model;
    this.api = api;
    this.metadata = { providerName: options.providerName ?? "openai", supportsServiceStorage: api === "responses" };
  }

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    const { module, client } = await this.load();
    try {
      return this.api === "chat" ? await this.chat(client, messages, options) : await this.responses(client, messages, options);
    } catch (error) {
      throw this.mapError(module, error, options.signal);
    }
  }

  async *getStreamingResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): AsyncIterable<ChatResponseUpdate> {
    const { module, client } = await this.load();
    try {
      if (this.api === "chat") yield* this.chatStream(client, messages, options);
      else yield* this.responsesStream(client, messages, options);
    } catch (error) {
      throw this.mapError(module, error, options.signal);
    }
  }

  private load(): Promise<{ module: OpenAIModule; client: OpenAI }> {
    this.sdk ??= importOptional("openai", "OpenAIChatClient", () => import("openai")).then((module) => {
      const o = this.options;
      const client =
        o.client ??
        new module.OpenAI({
          apiKey: o.apiKey ?? process.env.OPENAI_API_KEY ?? (o.baseURL ? "not-needed" : undefined),
          baseURL: o.baseURL,
          organization: o.organization,
          project: o.project,
          maxRetries: o.maxRetries,
          timeout: o.timeoutMs,
          defaultHeaders: o.defaultHeaders,
        });
      return { module, client };
    });
    this.sdk.catch(() => (this.sdk = undefined)); // a failed load may be retried (e.g. after installing)
    return this.sdk;
  }

  // ---- Chat Completions

  private chatBody(messages: readonly ChatMessage[], options: ChatOptions): Wire {
    if (options.conversationId !== undefined) {
      throw new ConfigurationError("Chat Completions keeps no conversations, but a conversation id was given", 'use { api: "responses" } for hosted sessions');
    }
    const body: Wire = { model: this.model, messages: toChatMessages(messages, options.instructions), store: false, ...this.options.request };
    const tools = functionTools(options.tools, "chat");
    if (tools) body.tools = tools;
    return body;
  }

  private async chat(client: OpenAI, messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatResponse> {
    const completion = (await client.chat.completions.create(this.chatBody(messages, options) as never, { signal: options.signal })) as unknown as Wire;
    const choice = ((completion.choices as Wire[] | undefined) ?? [])[0] as { message?: Wire; finish_reason?: string } | undefined;
    const contents = choice?.message ? fromChatMessage(choice.message) : [];
    const usage = usageFromChat(completion.usage as Wire | undefined);
    if (usage) contents.push({ $type: "usage", details: usage });
    const message: ChatMessage = { role: "assistant", contents };
    if (typeof completion.id === "string") message.messageId = completion.id;
    if (typeof completion.created === "number") message.createdAt = new Date(completion.created * 1000).toISOString();
    const response: ChatResponse = { messages: [message] };
    if (typeof completion.id === "string") response.responseId = completion.id;
    if (usage) response.usage = usage;
    if (choice?.finish_reason) response.finishReason = choice.finish_reason;
    return response;
  }

  private async *chatStream(client: OpenAI, messages: readonly ChatMessage[], options: ChatOptions): AsyncGenerator<ChatResponseUpdate> {
    const body = { ...this.chatBody(messages, options), stream: true, stream_options: { include_usage: true } };
    const stream = (await client.chat.completions.create(body as never, { signal: options.signal })) as unknown as AsyncIterable<Wire>;
    let id: string | undefined;
    let refusal = "";
    let usage: UsageDetails | undefined;
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    const update = (contents: AIContent[]): ChatResponseUpdate => ({ role: "assistant", contents, ...(id !== undefined ? { messageId: id, responseId: id } : {}) });
    for await (const chunk of stream) {
      if (id === undefined && typeof chunk.id === "string") id = chunk.id;
      if (chunk.usage) usage = usageFromChat(chunk.usage as Wire);
      const delta = (((chunk.choices as Wire[] | undefined) ?? [])[0]?.delta ?? {}) as Record<string, unknown>;
      const reasoning = typeof delta.reasoning_content === "string" ? delta.reasoning_content : typeof delta.reasoning === "string" ? delta.reasoning : "";
      if (reasoning) yield update([{ $type: "reasoning", text: reasoning }]);
      if (typeof delta.content === "string" && delta.content !== "") yield update([{ $type: "text", text: delta.content }]);
      if (Array.isArray(delta.annotations) && delta.annotations.length) yield update([{ $type: "text", text: "", annotations: (delta.annotations as Wire[]).map(annotationFromWire) }]);
      if (typeof delta.refusal === "string") refusal += delta.refusal;
      for (const part of (delta.tool_calls as Wire[] | undefined) ?? []) {
        const p = part as { index: number; id?: string; function?: { name?: string; arguments?: string } };
        const call = calls.get(p.index) ?? { id: "", name: "", arguments: "" };
        if (p.id) call.id = p.id;
        if (p.function?.name) call.name += p.function.name;
        if (p.function?.arguments) call.arguments += p.function.arguments;
        calls.set(p.index, call);
      }
    }
    const tail: AIContent[] = [];
    if (refusal) tail.push({ $type: "error", message: refusal, errorCode: "refusal" });
    for (const [, call] of [...calls].sort(([a], [b]) => a - b)) tail.push(functionCall(call.id, call.name, call.arguments));
    if (usage) tail.push({ $type: "usage", details: usage });
    if (tail.length) yield update(tail);
  }

  // ---- Responses API

  private async responsesBody(client: OpenAI, messages: readonly ChatMessage[], options: ChatOptions): Promise<{ body: Wire; hosted: boolean; conversation?: string }> {
    const hosted = options.store !== false;
    const body: Wire = { model: this.model, input: toResponsesInput(messages), store: hosted, ...this.options.request };
    if (options.instructions) body.instructions = options.instructions;
    const tools = functionTools(options.tools, "responses");
    if (tools) body.tools = tools;
    let conversation: string | undefined;
    if (options.conversationId !== undefined) {
      if (!hosted) throw new ConfigurationError("a conversation id was given with store: false", "a local session sends its history; only hosted sessions continue a service conversation");
      const id = conversationKey(options.conversationId);
      if (this.options.hostedConversation === "conversation") body.conversation = conversation = id;
      else body.previous_response_id = id;
    } else if (hosted && this.options.hostedConversation === "conversation") {
      // The Conversations API needs the conversation to exist before a response can be added to it.
      const created = (await client.conversations.create({} as never)) as unknown as { id: string };
      body.conversation = conversation = created.id;
    }
    return { body, hosted, conversation };
  }

  private conversationIdOf(response: Wire, hosted: boolean, conversation: string | undefined): string | undefined {
    if (!hosted) return undefined;
    if (this.options.hostedConversation === "conversation") {
      const fromResponse = (response.conversation as { id?: string } | undefined)?.id;
      return fromResponse ?? conversation;
    }
    return typeof response.id === "string" ? response.id : undefined;
  }

  private async responses(client: OpenAI, messages: readonly ChatMessage[], options: ChatOptions): Promise<ChatResponse> {
    const { body, hosted, conversation } = await this.responsesBody(client, messages, options);
    const response = (await client.responses.create(body as never, { signal: options.signal })) as unknown as Wire;
    failIfFailed(this.metadata.providerName, response);
    const contents: AIContent[] = [];
    for (const item of (response.output as Wire[] | undefined) ?? []) for (const content of fromResponsesItem(item).contents) contents.push(content);
    const usage = usageFromResponses(response.usage as Wire | undefined);
    if (usage) contents.push({ $type: "usage", details: usage });
    const message: ChatMessage = { role: "assistant", contents };
    if (typeof response.id === "string") message.messageId = response.id;
    if (typeof response.created_at === "number") message.createdAt = new Date(response.created_at * 1000).toISOString();
    const out: ChatResponse = { messages: [message] };
    if (typeof response.id === "string") out.responseId = response.id;
    const conversationId = this.conversationIdOf(response, hosted, conversation);
    if (conversationId !== undefined) out.conversationId = conversationId;
    if (usage) out.usage = usage;
    out.finishReason = finishReasonOf(response);
    return out;
  }

  private async *responsesStream(client: OpenAI, messages: readonly ChatMessage[], options: ChatOptions): AsyncGenerator<ChatResponseUpdate> {
    const { body, hosted, conversation } = await this.responsesBody(client, messages, options);
    const stream = (await client.responses.create({ ...body, stream: true } as never, { signal: options.signal })) as unknown as AsyncIterable<Wire>;
    let id: string | undefined;
    let conversationId: string | undefined = hosted ? conversation : undefined;
    const update = (contents: AIContent[]): ChatResponseUpdate => {
      const u: ChatResponseUpdate = { role: "assistant", contents };
      if (id !== undefined) u.messageId = u.responseId = id;
      if (conversationId !== undefined) u.conversationId = conversationId;
      return u;
    };
    for await (const event of stream) {
      switch (event.type) {
        case "response.created":
        case "response.in_progress": {
          const response = event.response as Wire;
          if (typeof response?.id === "string") id = response.id;
          conversationId = this.conversationIdOf(response, hosted, conversation) ?? conversationId;
          break;
        }
        case "response.output_text.delta":
          if (typeof event.delta === "string" && event.delta !== "") yield update([{ $type: "text", text: event.delta }]);
          break;
        case "response.output_text.annotation.added":
          yield update([{ $type: "text", text: "", annotations: [annotationFromWire(event.annotation as Wire)] }]);
          break;
        case "response.output_item.done": {
          const item = event.item as Wire;
          // Message text came as deltas; a refusal comes whole with its item.
          const contents = fromResponsesItem(item).contents.filter((c) => item.type !== "message" || c.$type === "error");
          if (contents.length) yield update(contents);
          break;
        }
        case "response.completed":
        case "response.incomplete": {
          const response = event.response as Wire;
          conversationId = this.conversationIdOf(response, hosted, conversation) ?? conversationId;
          const usage = usageFromResponses(response.usage as Wire | undefined);
          yield update(usage ? [{ $type: "usage", details: usage }] : []);
          break;
        }
        case "response.failed":
          failIfFailed(this.metadata.providerName, event.response as Wire);
          break;
        case "error":
          throw streamError(this.metadata.providerName, String(event.message ?? "stream error"), typeof event.code === "string" ? event.code : undefined);
      }
    }
  }

  private mapError(module: OpenAIModule, error: unknown, signal?: AbortSignal): unknown {
    if (error instanceof StatebagError) return error;
    if (signal?.aborted) return signal.reason ?? error;
    if (!(error instanceof module.APIError)) return error;
    const provider = this.metadata.providerName;
    const status = typeof error.status === "number" ? error.status : undefined;
    const body = error.error as { message?: unknown } | undefined;
    const serviceMessage = typeof body?.message === "string" ? body.message : error.message;
    const retryable = status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
    const details = { provider, serviceMessage, retryable } as ModelServiceError["details"];
    if (status !== undefined) details.status = status;
    if (typeof error.code === "string") details.serviceCode = error.code;
    if (typeof error.requestID === "string") details.requestId = error.requestID;
    const what = status === undefined ? `could not reach ${provider}` : `${provider} answered ${status}`;
    return new ModelServiceError(`${what}: ${serviceText(serviceMessage)}`, details, error);
  }
}

function conversationKey(id: ServiceSessionId): string {
  if (typeof id === "string") return id;
  const value = id.responseId ?? id.conversationId ?? Object.values(id)[0];
  if (typeof value !== "string") throw new ConfigurationError(`the session's conversation id ${shownText(JSON.stringify(id))} names no OpenAI response or conversation`, "hosted OpenAI sessions keep a string id");
  return value;
}

function finishReasonOf(response: Wire): string {
  if (response.status === "incomplete") return String((response.incomplete_details as { reason?: unknown } | undefined)?.reason ?? "incomplete");
  const output = (response.output as Wire[] | undefined) ?? [];
  return output.some((i) => i.type === "function_call") ? "tool_calls" : "stop";
}

function streamError(provider: string, message: string, code?: string): ModelServiceError {
  const retryable = code === "server_error" || code === "rate_limit_exceeded";
  const details: ModelServiceError["details"] = { provider, serviceMessage: message, retryable };
  if (code !== undefined) details.serviceCode = code;
  return new ModelServiceError(`${provider} failed the response: ${serviceText(message)}`, details);
}

function failIfFailed(provider: string, response: Wire | undefined): void {
  if (response?.status !== "failed") return;
  const error = response.error as { message?: unknown; code?: unknown } | undefined;
  throw streamError(provider, typeof error?.message === "string" ? error.message : "the response failed", typeof error?.code === "string" ? error.code : undefined);
}
