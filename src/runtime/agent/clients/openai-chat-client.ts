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
 * `openai` is an optional peer dependency, imported on the first request by a name a bundler does
 * not follow (an app bundles without it, and does not carry it when it never talks to OpenAI). The
 * declarations type the SDK client structurally, so they compile without `openai` installed.
 *
 * Every failure becomes `ModelServiceError`: an HTTP error with its status and the service's own
 * message, an error frame inside a stream, a connection cut mid-response. Retryable ones are retried
 * by statebag's own policy (retry.ts; the SDK's retries are off so there is one policy), a stream
 * only while none of it has reached the caller. Since the agent commits a run only when it
 * succeeds, a failure leaves the session as it was.
 */
import { randomUUID } from "node:crypto";
import { resolveBlobReferences } from "../../blobs/references.js";
import type { ChatClient, ChatClientMetadata, ChatOptions, ChatResponse, ChatResponseUpdate } from "../chat-client.js";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import type { AIContent, ChatMessage, UsageDetails } from "../../core/messages.js";
import type { ServiceSessionId } from "../../core/session.js";
import { connectionMessage, isCutConnection, ModelServiceError, serviceText } from "./model-service-error.js";
import { shownText } from "../../core/json.js";
import { importOptional, importPackage } from "../../core/optional-dependency.js";
import { checkMaxRetries, streamWithRetries, withRetries } from "./retry.js";

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

/**
 * The part of an `openai` SDK client statebag calls: any `new OpenAI(...)` (or `AzureOpenAI`) fits.
 * Structural, so these declarations need no `openai` types.
 */
export interface OpenAIClientLike {
  readonly chat: { readonly completions: { create(body: never, options?: never): PromiseLike<unknown> } };
  readonly responses: { create(body: never, options?: never): PromiseLike<unknown> };
  readonly conversations: { create(body?: never, options?: never): PromiseLike<unknown> };
}

export interface OpenAIChatClientOptions {
  /** The model id, e.g. `"gpt-4.1-mini"` (or the model name a compatible server knows). */
  model: string;
  /** `"chat"`: Chat Completions, local sessions (default). `"responses"`: the Responses API, hosted sessions possible. */
  api?: "chat" | "responses";
  /** Responses API: how a hosted session names its conversation. Default `"previous-response"`. */
  hostedConversation?: "previous-response" | "conversation";
  /** A configured SDK client; otherwise one is built from the options below on first use. Its own retries are not used (see `maxRetries`). */
  client?: OpenAIClientLike;
  /** Default: `OPENAI_API_KEY`. Compatible local servers usually accept any value. */
  apiKey?: string;
  /** An OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1` for Ollama. Default: `OPENAI_BASE_URL` or OpenAI. */
  baseURL?: string;
  organization?: string;
  project?: string;
  /**
   * More attempts after a retryable failure (408/409/429/5xx, a connection refused or cut, a
   * retryable error frame), with exponential backoff or the service's `retry-after`. A stream is
   * retried only before any of it reached the caller. Default 2.
   */
  maxRetries?: number;
  /** Per request, in ms. Default: the SDK's (10 minutes). */
  timeoutMs?: number;
  defaultHeaders?: Record<string, string>;
  /** Extra body fields sent with every request (`temperature`, `max_tokens`, `reasoning`, `include`, ...). */
  request?: Wire;
  /** Reported in `metadata.providerName`. Default `"openai"`. */
  providerName?: string;
}

type ErrorClass = abstract new (...args: never[]) => Error;
/** What statebag uses of the `openai` module (typed here so nothing public names the package). */
interface OpenAIModule {
  OpenAI: new (options: Record<string, unknown>) => OpenAIClientLike;
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
}
/** The fields of the SDK's `APIError` read here. */
interface SDKAPIError {
  status?: number;
  error?: unknown;
  code?: unknown;
  type?: unknown;
  requestID?: unknown;
  headers?: { get(name: string): string | null };
  message: string;
}

/** Conversations created for a first turn that then failed, by session: the retry reuses them. */
const MAX_PENDING_CONVERSATIONS = 1000;

export class OpenAIChatClient implements ChatClient {
  readonly metadata: ChatClientMetadata;
  readonly model: string;
  readonly api: "chat" | "responses";
  readonly maxRetries: number;
  private sdk?: Promise<{ module: OpenAIModule; client: OpenAIClientLike }>;
  private readonly pendingConversations = new Map<string, Promise<string>>();

  constructor(readonly options: OpenAIChatClientOptions) {
    if (typeof options?.model !== "string" || options.model === "")
      throw new ConfigurationError(
        "OpenAIChatClient needs a model",
        'pass { model: "gpt-4.1-mini" } (or the model name your server knows)',
      );
    const api = options.api ?? "chat";
    if (api !== "chat" && api !== "responses")
      throw new ConfigurationError(
        `unknown OpenAI api ${JSON.stringify(api)}`,
        'use "chat" (Chat Completions) or "responses" (Responses API)',
      );
    this.model = options.model;
    this.api = api;
    this.maxRetries = checkMaxRetries(options.maxRetries, "OpenAIChatClient");
    this.metadata = { providerName: options.providerName ?? "openai", supportsServiceStorage: api === "responses" };
  }

  /**
   * See `ChatClient.readsMessagesOnlyDuringCall`: a call turns `messages` into its own request and
   * keeps nothing of the array. False once `getResponse` or `getStreamingResponse` is overridden or
   * replaced (that code might keep it): such a client declares it itself.
   */
  get readsMessagesOnlyDuringCall(): boolean {
    return (
      this.getResponse === OpenAIChatClient.prototype.getResponse &&
      this.getStreamingResponse === OpenAIChatClient.prototype.getStreamingResponse
    );
  }

  async getResponse(input: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    const { module, client } = await this.load();
    const messages = await resolveBlobReferences(input, options.blobs);
    const turn = this.turnKey(options);
    let answered = false;
    try {
      const response = await withRetries(this.maxRetries, options.signal, async () => {
        try {
          return this.api === "chat"
            ? await this.chat(client, messages, options)
            : await this.responses(client, messages, options, turn);
        } catch (error) {
          throw this.mapError(module, error, options.signal);
        }
      });
      answered = true;
      return response;
    } finally {
      this.endTurn(turn, answered);
    }
  }

  async *getStreamingResponse(
    input: readonly ChatMessage[],
    options: ChatOptions = {},
  ): AsyncIterable<ChatResponseUpdate> {
    const { module, client } = await this.load();
    const messages = await resolveBlobReferences(input, options.blobs);
    const turn = this.turnKey(options);
    const map = this.mapError.bind(this, module);
    let answered = false;
    try {
      yield* streamWithRetries(
        this.maxRetries,
        options.signal,
        async function* (this: OpenAIChatClient) {
          try {
            if (this.api === "chat") yield* this.chatStream(client, messages, options);
            else yield* this.responsesStream(client, messages, options, turn);
          } catch (error) {
            throw map(error, options.signal);
          }
          // The SDK ends a stream quietly when its request is aborted: that is not an answer.
          options.signal?.throwIfAborted();
        }.bind(this),
      );
      answered = true;
    } finally {
      this.endTurn(turn, answered);
    }
  }

  /** Which turn a request belongs to: its session's (a failed first turn's retry finds its conversation), else this call's. */
  private turnKey(options: ChatOptions): string {
    return options.sessionId !== undefined ? `session:${options.sessionId}` : `call:${randomUUID()}`;
  }

  /** An answered turn's conversation now lives in the session; a failed session turn keeps it for the retry. */
  private endTurn(turn: string, answered: boolean): void {
    if (answered || turn.startsWith("call:")) this.pendingConversations.delete(turn);
  }

  private load(): Promise<{ module: OpenAIModule; client: OpenAIClientLike }> {
    this.sdk ??= importOptional("openai", "OpenAIChatClient", () => importPackage<OpenAIModule>("openai")).then(
      (module) => {
        const options = this.options;
        const client =
          options.client ??
          new module.OpenAI({
            apiKey: options.apiKey ?? process.env.OPENAI_API_KEY ?? (options.baseURL ? "not-needed" : undefined),
            baseURL: options.baseURL,
            organization: options.organization,
            project: options.project,
            maxRetries: 0, // statebag retries (one policy for every client; see retry.ts)
            timeout: options.timeoutMs,
            defaultHeaders: options.defaultHeaders,
          });
        return { module, client };
      },
    );
    this.sdk.catch(() => (this.sdk = undefined)); // a failed load may be retried (e.g. after installing)
    return this.sdk;
  }

  // ---- Chat Completions

  private chatBody(messages: readonly ChatMessage[], options: ChatOptions): Wire {
    if (options.conversationId !== undefined) {
      throw new ConfigurationError(
        "Chat Completions keeps no conversations, but a conversation id was given",
        'use { api: "responses" } for hosted sessions',
      );
    }
    const body: Wire = {
      model: this.model,
      messages: toChatMessages(messages, options.instructions),
      store: false,
      ...this.options.request,
    };
    const tools = functionTools(options.tools, "chat");
    if (tools) body.tools = tools;
    return body;
  }

  private async chat(
    client: OpenAIClientLike,
    messages: readonly ChatMessage[],
    options: ChatOptions,
  ): Promise<ChatResponse> {
    const completion = (await client.chat.completions.create(
      this.chatBody(messages, options) as never,
      requestOptions(options),
    )) as Wire;
    const choice = ((completion.choices as Wire[] | undefined) ?? [])[0] as
      | { message?: Wire; finish_reason?: string }
      | undefined;
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

  private async *chatStream(
    client: OpenAIClientLike,
    messages: readonly ChatMessage[],
    options: ChatOptions,
  ): AsyncGenerator<ChatResponseUpdate> {
    const body = { ...this.chatBody(messages, options), stream: true, stream_options: { include_usage: true } };
    const stream = (await client.chat.completions.create(
      body as never,
      requestOptions(options),
    )) as AsyncIterable<Wire>;
    let id: string | undefined;
    let createdAt: string | undefined;
    let refusal = "";
    let usage: UsageDetails | undefined;
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    const update = (contents: AIContent[]): ChatResponseUpdate => ({
      role: "assistant",
      contents,
      ...(id !== undefined ? { messageId: id, responseId: id } : {}),
      ...(createdAt !== undefined ? { createdAt } : {}),
    });
    for await (const chunk of stream) {
      if (id === undefined && typeof chunk.id === "string") id = chunk.id;
      if (createdAt === undefined && typeof chunk.created === "number")
        createdAt = new Date(chunk.created * 1000).toISOString();
      if (chunk.usage) usage = usageFromChat(chunk.usage as Wire);
      const delta = (((chunk.choices as Wire[] | undefined) ?? [])[0]?.delta ?? {}) as Record<string, unknown>;
      const reasoning =
        typeof delta.reasoning_content === "string"
          ? delta.reasoning_content
          : typeof delta.reasoning === "string"
            ? delta.reasoning
            : "";
      if (reasoning) yield update([{ $type: "reasoning", text: reasoning }]);
      if (typeof delta.content === "string" && delta.content !== "")
        yield update([{ $type: "text", text: delta.content }]);
      if (Array.isArray(delta.annotations) && delta.annotations.length)
        yield update([{ $type: "text", text: "", annotations: (delta.annotations as Wire[]).map(annotationFromWire) }]);
      if (typeof delta.refusal === "string") refusal += delta.refusal;
      for (const part of (delta.tool_calls as Wire[] | undefined) ?? []) {
        const toolCallDelta = part as { index: number; id?: string; function?: { name?: string; arguments?: string } };
        const call = calls.get(toolCallDelta.index) ?? { id: "", name: "", arguments: "" };
        if (toolCallDelta.id) call.id = toolCallDelta.id;
        if (toolCallDelta.function?.name) call.name += toolCallDelta.function.name;
        if (toolCallDelta.function?.arguments) call.arguments += toolCallDelta.function.arguments;
        calls.set(toolCallDelta.index, call);
      }
    }
    const tail: AIContent[] = [];
    if (refusal) tail.push({ $type: "error", message: refusal, errorCode: "refusal" });
    for (const [, call] of [...calls].sort(([a], [b]) => a - b))
      tail.push(functionCall(call.id, call.name, call.arguments));
    if (usage) tail.push({ $type: "usage", details: usage });
    if (tail.length) yield update(tail);
  }

  // ---- Responses API

  private async responsesBody(
    client: OpenAIClientLike,
    messages: readonly ChatMessage[],
    options: ChatOptions,
    turn: string,
  ): Promise<{ body: Wire; hosted: boolean; conversation?: string }> {
    const hosted = options.store !== false;
    const body: Wire = { model: this.model, input: toResponsesInput(messages), store: hosted, ...this.options.request };
    if (options.instructions) body.instructions = options.instructions;
    const tools = functionTools(options.tools, "responses");
    if (tools) body.tools = tools;
    let conversation: string | undefined;
    if (options.conversationId !== undefined) {
      if (!hosted)
        throw new ConfigurationError(
          "a conversation id was given with store: false",
          "a local session sends its history; only hosted sessions continue a service conversation",
        );
      const id = conversationKey(options.conversationId);
      if (this.options.hostedConversation === "conversation") body.conversation = conversation = id;
      else body.previous_response_id = id;
    } else if (hosted && this.options.hostedConversation === "conversation") {
      // The Conversations API needs the conversation to exist before a response can be added to it.
      // Created once per turn: a retry of a failed first turn (by statebag or by the application,
      // same session) continues it instead of leaving an empty conversation behind.
      body.conversation = conversation = await this.firstConversation(client, turn, options);
    }
    return { body, hosted, conversation };
  }

  private firstConversation(client: OpenAIClientLike, turn: string, options: ChatOptions): Promise<string> {
    let created = this.pendingConversations.get(turn);
    if (!created) {
      created = Promise.resolve(client.conversations.create({} as never, requestOptions(options))).then(
        (c) => (c as { id: string }).id,
      );
      created.catch(() => this.pendingConversations.delete(turn));
      if (this.pendingConversations.size >= MAX_PENDING_CONVERSATIONS)
        this.pendingConversations.delete(this.pendingConversations.keys().next().value!);
      this.pendingConversations.set(turn, created);
    }
    return created;
  }

  private conversationIdOf(response: Wire, hosted: boolean, conversation: string | undefined): string | undefined {
    if (!hosted) return undefined;
    if (this.options.hostedConversation === "conversation") {
      const fromResponse = (response.conversation as { id?: string } | undefined)?.id;
      return fromResponse ?? conversation;
    }
    return typeof response.id === "string" ? response.id : undefined;
  }

  private async responses(
    client: OpenAIClientLike,
    messages: readonly ChatMessage[],
    options: ChatOptions,
    turn: string,
  ): Promise<ChatResponse> {
    const { body, hosted, conversation } = await this.responsesBody(client, messages, options, turn);
    const response = (await client.responses.create(body as never, requestOptions(options))) as Wire;
    failIfFailed(this.metadata.providerName, response);
    const contents: AIContent[] = [];
    for (const item of (response.output as Wire[] | undefined) ?? [])
      for (const content of fromResponsesItem(item).contents) contents.push(content);
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

  private async *responsesStream(
    client: OpenAIClientLike,
    messages: readonly ChatMessage[],
    options: ChatOptions,
    turn: string,
  ): AsyncGenerator<ChatResponseUpdate> {
    const { body, hosted, conversation } = await this.responsesBody(client, messages, options, turn);
    const stream = (await client.responses.create(
      { ...body, stream: true } as never,
      requestOptions(options),
    )) as AsyncIterable<Wire>;
    let id: string | undefined;
    let createdAt: string | undefined;
    let conversationId: string | undefined = hosted ? conversation : undefined;
    const update = (contents: AIContent[]): ChatResponseUpdate => {
      const finalUpdate: ChatResponseUpdate = { role: "assistant", contents };
      if (id !== undefined) finalUpdate.messageId = finalUpdate.responseId = id;
      if (createdAt !== undefined) finalUpdate.createdAt = createdAt;
      if (conversationId !== undefined) finalUpdate.conversationId = conversationId;
      return finalUpdate;
    };
    for await (const event of stream) {
      switch (event.type) {
        case "response.created":
        case "response.in_progress": {
          const response = event.response as Wire;
          if (typeof response?.id === "string") id = response.id;
          if (typeof response?.created_at === "number") createdAt = new Date(response.created_at * 1000).toISOString();
          conversationId = this.conversationIdOf(response, hosted, conversation) ?? conversationId;
          break;
        }
        case "response.output_text.delta":
          if (typeof event.delta === "string" && event.delta !== "")
            yield update([{ $type: "text", text: event.delta }]);
          break;
        case "response.output_text.annotation.added":
          yield update([{ $type: "text", text: "", annotations: [annotationFromWire(event.annotation as Wire)] }]);
          break;
        case "response.output_item.done": {
          const item = event.item as Wire;
          // Message text came as deltas; a refusal comes whole with its item.
          const contents = fromResponsesItem(item).contents.filter(
            (c) => item.type !== "message" || c.$type === "error",
          );
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
          throw streamError(
            this.metadata.providerName,
            String(event.message ?? "stream error"),
            typeof event.code === "string" ? event.code : undefined,
          );
      }
    }
  }

  /** Any failure of a request as `ModelServiceError`, or as it is when it is statebag's own or an abort. */
  private mapError(module: OpenAIModule, error: unknown, signal?: AbortSignal): unknown {
    if (error instanceof StatebagError) return error;
    if (signal?.aborted) return signal.reason ?? error;
    const provider = this.metadata.providerName;
    if (error instanceof module.APIConnectionError) {
      const timedOut = error instanceof module.APIConnectionTimeoutError;
      const cause = error.cause instanceof Error ? error.cause.message : undefined;
      const serviceMessage = cause && cause !== error.message ? `${error.message} (${cause})` : error.message;
      return new ModelServiceError(
        `${timedOut ? `timed out waiting for ${provider}` : `could not reach ${provider}`}: ${serviceText(serviceMessage)}`,
        { provider, serviceMessage, retryable: true },
        error,
      );
    }
    if (error instanceof module.APIError) {
      const apiError = error as SDKAPIError;
      const status = typeof apiError.status === "number" ? apiError.status : undefined;
      const body = apiError.error as { message?: unknown } | undefined;
      const serviceMessage = typeof body?.message === "string" ? body.message : apiError.message;
      const details: ModelServiceError["details"] = { provider, serviceMessage, retryable: false };
      if (typeof apiError.code === "string") details.serviceCode = apiError.code;
      if (typeof apiError.requestID === "string") details.requestId = apiError.requestID;
      if (status === undefined) {
        // No status on an APIError that is not a connection error: an error frame inside a 200 stream.
        details.retryable = retryableCode(apiError.code) || retryableCode(apiError.type);
        return new ModelServiceError(
          `${provider} reported an error in the middle of its streamed answer: ${serviceText(serviceMessage)}`,
          details,
          error,
        );
      }
      details.status = status;
      details.retryable = status === 408 || status === 409 || status === 429 || status >= 500;
      const retryAfterMs = retryAfter(apiError.headers);
      if (retryAfterMs !== undefined) details.retryAfterMs = retryAfterMs;
      return new ModelServiceError(`${provider} answered ${status}: ${serviceText(serviceMessage)}`, details, error);
    }
    if (isCutConnection(error)) {
      const serviceMessage = connectionMessage(error);
      return new ModelServiceError(
        `the connection to ${provider} was cut before the answer was complete: ${serviceText(serviceMessage)}`,
        { provider, serviceMessage, retryable: true },
        error,
      );
    }
    if (error instanceof SyntaxError) {
      return new ModelServiceError(
        `${provider} sent an answer that is not valid JSON: ${serviceText(error.message)}`,
        { provider, serviceMessage: error.message, retryable: false },
        error,
      );
    }
    return error;
  }
}

/** The SDK's per-request options: the caller's signal, and no SDK retries (statebag retries). */
function requestOptions(options: ChatOptions): never {
  return { signal: options.signal, maxRetries: 0 } as never;
}

/** Error codes and types OpenAI uses for failures worth retrying. */
function retryableCode(code: unknown): boolean {
  return (
    typeof code === "string" &&
    /^(server_error|rate_limit_exceeded|rate_limit_error|overloaded|overloaded_error|service_unavailable|timeout|internal_error|api_error)$/.test(
      code,
    )
  );
}

/** The wait the service asked for, in ms (`retry-after-ms`, or `retry-after` in seconds or as a date). */
function retryAfter(headers: SDKAPIError["headers"]): number | undefined {
  const ms = Number.parseFloat(headers?.get?.("retry-after-ms") ?? "");
  if (Number.isFinite(ms)) return ms;
  const after = headers?.get?.("retry-after");
  if (!after) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

function conversationKey(id: ServiceSessionId): string {
  if (typeof id === "string") return id;
  const value = id.responseId ?? id.conversationId ?? Object.values(id)[0];
  if (typeof value !== "string")
    throw new ConfigurationError(
      `the session's conversation id ${shownText(JSON.stringify(id))} names no OpenAI response or conversation`,
      "hosted OpenAI sessions keep a string id",
    );
  return value;
}

function finishReasonOf(response: Wire): string {
  if (response.status === "incomplete")
    return String((response.incomplete_details as { reason?: unknown } | undefined)?.reason ?? "incomplete");
  const output = (response.output as Wire[] | undefined) ?? [];
  return output.some((i) => i.type === "function_call") ? "tool_calls" : "stop";
}

function streamError(provider: string, message: string, code?: string): ModelServiceError {
  const details: ModelServiceError["details"] = { provider, serviceMessage: message, retryable: retryableCode(code) };
  if (code !== undefined) details.serviceCode = code;
  return new ModelServiceError(`${provider} failed the response: ${serviceText(message)}`, details);
}

function failIfFailed(provider: string, response: Wire | undefined): void {
  if (response?.status !== "failed") return;
  const error = response.error as { message?: unknown; code?: unknown } | undefined;
  throw streamError(
    provider,
    typeof error?.message === "string" ? error.message : "the response failed",
    typeof error?.code === "string" ? error.code : undefined,
  );
}
