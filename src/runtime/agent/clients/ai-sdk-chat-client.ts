/**
 * `AISDKChatClient`: any Vercel AI SDK language model as a statebag `ChatClient`, so every provider
 * the AI SDK supports (OpenAI, Anthropic, Google, Mistral, Bedrock, Ollama, ...) works with statebag
 * sessions.
 *
 * It speaks the provider specification directly (`LanguageModelV4` of `@ai-sdk/provider` 4, what
 * `ai` 7 resolves every model to), so the agent keeps running tools and committing runs itself.
 * A V2/V3 model is upgraded with `ai`'s `wrapLanguageModel` on first use (`ai` is then needed).
 * Sessions are local: the AI SDK has no conversation the service keeps.
 *
 * Mapping: text (with citations), reasoning, files and images (inline, by URL, or by provider
 * reference), tool calls and results (provider-executed ones as informational calls), sources and
 * usage. Provider metadata (e.g. reasoning signatures that must be sent back) is kept on the content
 * as `additionalProperties.providerMetadata` and returned as `providerOptions`, except the ids of
 * items a service stored (`itemId`): a local session sends its history as content, so it never
 * depends on the service still holding those items.
 *
 * The declarations type the model structurally (they compile without `@ai-sdk/provider` or `ai`),
 * `ai` is imported by a name a bundler does not follow, and failures are `ModelServiceError`,
 * retried by the same policy as the OpenAI client (retry.ts).
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Citation,
  LanguageModelV4Content,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4Source,
  LanguageModelV4Usage,
  SharedV4ProviderMetadata,
} from "@ai-sdk/provider";
import { resolveBlobReferences } from "../../blobs/references.js";
import type { ChatClient, ChatClientMetadata, ChatOptions, ChatResponse, ChatResponseUpdate } from "../chat-client.js";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import type {
  AIAnnotation,
  AIContent,
  ChatMessage,
  CitationAnnotation,
  FunctionCallContent,
  UsageDetails,
} from "../../core/messages.js";
import type { JsonValue } from "../../core/tagged.js";
import { connectionMessage, isCutConnection, ModelServiceError, serviceText } from "./model-service-error.js";
import { functionCall, parseDataUri, UnsupportedContentError, unresolvedReference } from "./openai-content.js";
import { importOptional, importPackage } from "../../core/optional-dependency.js";
import { checkMaxRetries, streamWithRetries, withRetries } from "./retry.js";

/**
 * A model of any specification version `ai` 7 accepts (a provider's `openai("gpt-4.1-mini")`, a
 * `MockLanguageModelV4`, ...). Structural: only what statebag calls.
 */
export type AISDKLanguageModel =
  | {
      readonly specificationVersion: "v4";
      readonly provider: string;
      readonly modelId: string;
      doGenerate(options: never): PromiseLike<unknown>;
      doStream(options: never): PromiseLike<unknown>;
    }
  | { readonly specificationVersion: "v2" | "v3"; readonly provider: string; readonly modelId: string };

/** Call settings of the provider specification (`LanguageModelV4CallOptions` without prompt, tools and signal). */
export interface AISDKCallSettings {
  maxOutputTokens?: number;
  temperature?: number;
  stopSequences?: string[];
  topP?: number;
  topK?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseFormat?: { type: "text" } | { type: "json"; schema?: unknown; name?: string; description?: string };
  toolChoice?: { type: "auto" | "none" | "required" } | { type: "tool"; toolName: string };
  includeRawChunks?: boolean;
  headers?: Record<string, string | undefined>;
  /** Per provider, e.g. `{ openai: { reasoningEffort: "low" } }`. */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Settings a newer specification adds. */
  [setting: string]: unknown;
}

export interface AISDKChatClientOptions {
  /** Call settings passed with every request (`temperature`, `maxOutputTokens`, `providerOptions`, ...). */
  settings?: AISDKCallSettings;
  /**
   * More attempts after a retryable failure (the provider's `isRetryable`, a 429/5xx, a connection
   * cut), as `OpenAIChatClient` does. A stream is retried only before any of it reached the caller.
   * Default 2.
   */
  maxRetries?: number;
}

export class AISDKChatClient implements ChatClient {
  readonly metadata: ChatClientMetadata;
  readonly maxRetries: number;
  private resolved?: Promise<LanguageModelV4>;

  constructor(
    readonly model: AISDKLanguageModel,
    readonly options: AISDKChatClientOptions = {},
  ) {
    if (
      !model ||
      typeof model !== "object" ||
      typeof (model as { specificationVersion?: unknown }).specificationVersion !== "string"
    ) {
      throw new ConfigurationError(
        "AISDKChatClient needs an AI SDK language model object",
        'pass a provider\'s model, e.g. new AISDKChatClient(openai("gpt-4.1-mini"))',
      );
    }
    this.maxRetries = checkMaxRetries(options.maxRetries, "AISDKChatClient");
    this.metadata = { providerName: model.provider, supportsServiceStorage: false };
  }

  /**
   * See `ChatClient.readsMessagesOnlyDuringCall`: a call turns `messages` into its own request and
   * keeps nothing of the array. False once `getResponse` or `getStreamingResponse` is overridden or
   * replaced (that code might keep it): such a client declares it itself.
   */
  get readsMessagesOnlyDuringCall(): boolean {
    return (
      this.getResponse === AISDKChatClient.prototype.getResponse &&
      this.getStreamingResponse === AISDKChatClient.prototype.getStreamingResponse
    );
  }

  async getResponse(input: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    const model = await this.resolve();
    const messages = await resolveBlobReferences(input, options.blobs);
    const result = await withRetries(this.maxRetries, options.signal, () =>
      call(() => model.doGenerate(this.callOptions(messages, options)), model.provider, options.signal),
    );
    const contents = fromResult(result.content);
    const usage = usageFrom(result.usage);
    if (usage) contents.push({ $type: "usage", details: usage });
    const message: ChatMessage = { role: "assistant", contents };
    if (result.response?.id) message.messageId = result.response.id;
    if (result.response?.timestamp) message.createdAt = result.response.timestamp.toISOString();
    const response: ChatResponse = { messages: [message], finishReason: result.finishReason.unified };
    if (result.response?.id) response.responseId = result.response.id;
    if (usage) response.usage = usage;
    return response;
  }

  async *getStreamingResponse(
    input: readonly ChatMessage[],
    options: ChatOptions = {},
  ): AsyncIterable<ChatResponseUpdate> {
    const model = await this.resolve();
    const messages = await resolveBlobReferences(input, options.blobs);
    yield* streamWithRetries(this.maxRetries, options.signal, () => this.stream(model, messages, options));
  }

  private async *stream(
    model: LanguageModelV4,
    messages: readonly ChatMessage[],
    options: ChatOptions,
  ): AsyncGenerator<ChatResponseUpdate> {
    const signal = options.signal;
    const { stream } = await call(() => model.doStream(this.callOptions(messages, options)), model.provider, signal);
    let id: string | undefined;
    let createdAt: string | undefined;
    const update = (contents: AIContent[]): ChatResponseUpdate => ({
      role: "assistant",
      contents,
      ...(id !== undefined ? { messageId: id, responseId: id } : {}),
      ...(createdAt !== undefined ? { createdAt } : {}),
    });
    const reader = stream.getReader();
    // A model that ignores the signal would keep a stalled read waiting: cancelling the reader ends it.
    const cancel = () => void reader.cancel(signal?.reason).catch(() => {});
    signal?.addEventListener("abort", cancel, { once: true });
    let finished = false;
    try {
      for (;;) {
        const { done, value: part } = await call(() => reader.read(), model.provider, signal);
        signal?.throwIfAborted(); // a cancelled read ends as if the stream were done
        if (done) break;
        switch (part.type) {
          case "response-metadata":
            if (part.id) id = part.id;
            if (part.timestamp) createdAt = part.timestamp.toISOString();
            break;
          case "text-delta":
            if (part.delta) yield update([{ $type: "text", text: part.delta }]);
            break;
          case "text-end":
            if (part.citations?.length)
              yield update([{ $type: "text", text: "", annotations: part.citations.map(citationFrom) }]);
            break;
          case "reasoning-delta":
            if (part.delta) yield update([{ $type: "reasoning", text: part.delta }]);
            break;
          case "reasoning-end":
            // Signatures and the like arrive at the end; they must go back with the reasoning.
            if (part.providerMetadata)
              yield update([
                {
                  $type: "reasoning",
                  text: "",
                  additionalProperties: { providerMetadata: part.providerMetadata as unknown as JsonValue },
                },
              ]);
            break;
          case "tool-call":
          case "tool-result":
          case "file":
          case "reasoning-file":
          case "source":
          case "tool-approval-request":
            yield update(fromResult([part]));
            break;
          case "finish": {
            const usage = usageFrom(part.usage);
            if (usage) yield update([{ $type: "usage", details: usage }]);
            break;
          }
          case "error":
            throw serviceError(part.error, model.provider);
        }
      }
      finished = true;
    } finally {
      signal?.removeEventListener("abort", cancel);
      if (!finished) cancel(); // the consumer left, or the stream failed: the provider stops sending
      reader.releaseLock();
    }
  }

  private resolve(): Promise<LanguageModelV4> {
    if (this.model.specificationVersion === "v4") return Promise.resolve(this.model as unknown as LanguageModelV4);
    this.resolved ??= importOptional("ai", "AISDKChatClient (for a v2/v3 model)", () =>
      importPackage<{ wrapLanguageModel(options: { model: unknown; middleware: unknown[] }): LanguageModelV4 }>("ai"),
    ).then((ai) => ai.wrapLanguageModel({ model: this.model, middleware: [] }));
    this.resolved.catch(() => (this.resolved = undefined)); // a failed load may be retried (e.g. after installing)
    return this.resolved;
  }

  private callOptions(messages: readonly ChatMessage[], options: ChatOptions): LanguageModelV4CallOptions {
    const out = {
      ...this.options.settings,
      prompt: toPrompt(messages, options.instructions, this.metadata.providerName),
    } as LanguageModelV4CallOptions;
    if (options.tools?.length) {
      out.tools = options.tools.map((t) => {
        const tool: NonNullable<LanguageModelV4CallOptions["tools"]>[number] = {
          type: "function",
          name: t.name,
          inputSchema: (t.parameters ?? { type: "object", properties: {} }) as never,
        };
        if (t.description !== undefined) tool.description = t.description;
        return tool;
      });
    }
    if (options.signal) out.abortSignal = options.signal;
    return out;
  }
}

async function call<T>(fn: () => PromiseLike<T>, provider: string, signal?: AbortSignal): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    throw serviceError(error, provider);
  }
}

/** AI SDK errors (`APICallError` and kin) and transport failures as `ModelServiceError`; statebag's own errors pass through. */
function serviceError(error: unknown, provider: string): unknown {
  if (error instanceof StatebagError) return error;
  if (isCutConnection(error)) {
    const serviceMessage = connectionMessage(error);
    return new ModelServiceError(
      `the connection to ${provider} failed or was cut before the answer was complete: ${serviceText(serviceMessage)}`,
      { provider, serviceMessage, retryable: true },
      error,
    );
  }
  const failure = error as {
    statusCode?: unknown;
    isRetryable?: unknown;
    message?: unknown;
    responseBody?: unknown;
    responseHeaders?: unknown;
    name?: unknown;
  } | null;
  if (!failure || typeof failure !== "object")
    return new ModelServiceError(`${provider} failed: ${serviceText(String(error))}`, {
      provider,
      serviceMessage: String(error),
      retryable: false,
    });
  const status = typeof failure.statusCode === "number" ? failure.statusCode : undefined;
  const serviceMessage = typeof failure.message === "string" ? failure.message : String(error);
  const retryable =
    typeof failure.isRetryable === "boolean"
      ? failure.isRetryable
      : status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);
  const details: ModelServiceError["details"] = { provider, serviceMessage, retryable };
  if (status !== undefined) details.status = status;
  if (typeof failure.name === "string" && failure.name.startsWith("AI_")) details.serviceCode = failure.name;
  const headers = failure.responseHeaders as Record<string, string | undefined> | undefined;
  const retryAfterMs =
    Number.parseFloat(headers?.["retry-after-ms"] ?? "") || Number.parseFloat(headers?.["retry-after"] ?? "") * 1000;
  if (Number.isFinite(retryAfterMs)) details.retryAfterMs = retryAfterMs;
  return new ModelServiceError(
    `${provider} ${status === undefined ? "failed" : `answered ${status}`}: ${serviceText(serviceMessage)}`,
    details,
    error,
  );
}

/**
 * A content's provider metadata as the options it goes back with, minus `itemId`: with it, a
 * Responses API provider sends an `item_reference` instead of the content, and the request then
 * depends on the service still holding that item. A local session carries its own history.
 */
function providerOptionsOf(content: AIContent): { providerOptions?: SharedV4ProviderMetadata } {
  const metadata = content.additionalProperties?.providerMetadata;
  if (!metadata || typeof metadata !== "object" || Array.isArray(metadata)) return {};
  const options: SharedV4ProviderMetadata = {};
  for (const [provider, values] of Object.entries(metadata)) {
    if (!values || typeof values !== "object" || Array.isArray(values)) continue;
    const { itemId: _stored, ...rest } = values as Record<string, JsonValue>;
    if (Object.keys(rest).length) options[provider] = rest as SharedV4ProviderMetadata[string];
  }
  return Object.keys(options).length ? { providerOptions: options } : {};
}

function filePart(content: AIContent, provider: string): LanguageModelV4FilePart | undefined {
  if (content.$type === "data") {
    const { mediaType, base64 } = parseDataUri(content.uri);
    const part: LanguageModelV4FilePart = {
      type: "file",
      mediaType,
      data: { type: "data", data: base64 },
      ...providerOptionsOf(content),
    };
    if (content.name !== undefined) part.filename = content.name;
    return part;
  }
  if (content.$type === "uri")
    return {
      type: "file",
      mediaType: content.mediaType,
      data: { type: "url", url: new URL(content.uri) },
      ...providerOptionsOf(content),
    };
  if (content.$type === "hostedFile") {
    const part: LanguageModelV4FilePart = {
      type: "file",
      mediaType: content.mediaType ?? "application/octet-stream",
      data: { type: "reference", reference: { [provider]: content.fileId } },
      ...providerOptionsOf(content),
    };
    if (content.name !== undefined) part.filename = content.name;
    return part;
  }
  if (content.$type === "statebag.blobReference") throw unresolvedReference();
  return undefined;
}

/** statebag messages as the provider specification's prompt. */
function toPrompt(
  messages: readonly ChatMessage[],
  instructions: string | undefined,
  provider: string,
): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (instructions) prompt.push({ role: "system", content: instructions });
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    const text = message.contents.map((c) => (c.$type === "text" ? c.text : "")).join("");
    if (message.role === "system" || message.role === "developer") {
      prompt.push({ role: "system", content: text });
    } else if (message.role === "assistant") {
      const content: Extract<LanguageModelV4Message, { role: "assistant" }>["content"] = [];
      for (const part of message.contents) {
        if (part.$type === "text") content.push({ type: "text", text: part.text, ...providerOptionsOf(part) });
        else if (part.$type === "reasoning")
          content.push({ type: "reasoning", text: part.text ?? "", ...providerOptionsOf(part) });
        else if (part.$type === "functionCall") {
          toolNames.set(part.callId, part.name);
          content.push({
            type: "tool-call",
            toolCallId: part.callId,
            toolName: part.name,
            input: part.arguments ?? {},
            ...(part.informationalOnly ? { providerExecuted: true } : {}),
            ...providerOptionsOf(part),
          });
        } else if (part.$type === "functionResult" && toolNames.has(part.callId)) {
          content.push({
            type: "tool-result",
            toolCallId: part.callId,
            toolName: toolNames.get(part.callId)!,
            output: { type: "json", value: (part.result ?? null) as never },
          });
        } else {
          const file = filePart(part, provider);
          if (file) content.push(file);
        }
      }
      if (content.length) prompt.push({ role: "assistant", content });
    } else if (message.role === "tool") {
      const content: Extract<LanguageModelV4Message, { role: "tool" }>["content"] = [];
      for (const part of message.contents) {
        if (part.$type !== "functionResult") continue;
        const toolName = toolNames.get(part.callId) ?? "unknown";
        const result = part.result ?? null;
        content.push({
          type: "tool-result",
          toolCallId: part.callId,
          toolName,
          output:
            typeof result === "string" ? { type: "text", value: result } : { type: "json", value: result as never },
        });
      }
      if (content.length) prompt.push({ role: "tool", content });
    } else {
      const content: Extract<LanguageModelV4Message, { role: "user" }>["content"] = [];
      for (const part of message.contents) {
        if (part.$type === "text") content.push({ type: "text", text: part.text, ...providerOptionsOf(part) });
        else {
          const file = filePart(part, provider);
          if (file) content.push(file);
          else if (part.$type === "functionCall" || part.$type === "functionResult") {
            throw new UnsupportedContentError(
              `a ${message.role} message holds a ${part.$type} content, which the AI SDK prompt has no place for`,
              "function calls belong to assistant messages, results to tool messages",
            );
          }
        }
      }
      if (content.length) prompt.push({ role: "user", content });
    }
  }
  return prompt;
}

function withMetadata<T extends AIContent>(content: T, metadata: SharedV4ProviderMetadata | undefined): T {
  if (metadata && Object.keys(metadata).length)
    content.additionalProperties = {
      ...content.additionalProperties,
      providerMetadata: metadata as unknown as JsonValue,
    };
  return content;
}

function sourceCitation(source: LanguageModelV4Source): CitationAnnotation {
  const out: CitationAnnotation = { $type: "citation" };
  if (source.title !== undefined) out.title = source.title;
  if (source.sourceType === "url") out.url = source.url;
  else
    out.additionalProperties = {
      mediaType: source.mediaType,
      ...(source.filename !== undefined ? { filename: source.filename } : {}),
    };
  out.additionalProperties = { ...out.additionalProperties, sourceId: source.id };
  return out;
}

function citationFrom(citation: LanguageModelV4Citation): AIAnnotation {
  const out = sourceCitation(citation.source);
  if (citation.citedText !== undefined) out.snippet = citation.citedText;
  if (citation.startIndex !== undefined || citation.endIndex !== undefined) {
    out.annotatedRegions = [
      {
        $type: "textSpan",
        ...(citation.startIndex !== undefined ? { start: citation.startIndex } : {}),
        ...(citation.endIndex !== undefined ? { end: citation.endIndex } : {}),
      },
    ];
  }
  return out;
}

function fileContent(
  mediaType: string,
  data: { type: "data"; data: Uint8Array | string } | { type: "url"; url: URL },
): AIContent {
  if (data.type === "url") return { $type: "uri", uri: data.url.href, mediaType };
  const base64 = typeof data.data === "string" ? data.data : Buffer.from(data.data).toString("base64");
  return { $type: "data", uri: `data:${mediaType};base64,${base64}` };
}

/** Generated content as statebag contents; sources become citations on an empty text, in order. */
function fromResult(content: readonly LanguageModelV4Content[]): AIContent[] {
  const out: AIContent[] = [];
  for (const part of content) {
    switch (part.type) {
      case "text": {
        const text: AIContent = { $type: "text", text: part.text };
        if (part.citations?.length) text.annotations = part.citations.map(citationFrom);
        out.push(withMetadata(text, part.providerMetadata));
        break;
      }
      case "reasoning":
        out.push(withMetadata({ $type: "reasoning", text: part.text }, part.providerMetadata));
        break;
      case "file":
      case "reasoning-file": {
        const file = fileContent(part.mediaType, part.data);
        if (part.type === "reasoning-file") file.additionalProperties = { reasoning: true };
        out.push(withMetadata(file, part.providerMetadata));
        break;
      }
      case "tool-call": {
        const call: FunctionCallContent = functionCall(part.toolCallId, part.toolName, part.input);
        if (part.providerExecuted) call.informationalOnly = true;
        out.push(withMetadata(call, part.providerMetadata));
        break;
      }
      case "tool-result": {
        const result: AIContent = {
          $type: "functionResult",
          callId: part.toolCallId,
          result: (part.isError ? { error: part.result } : part.result) as JsonValue,
        };
        out.push(withMetadata(result, part.providerMetadata));
        break;
      }
      case "source":
        out.push(withMetadata({ $type: "text", text: "", annotations: [sourceCitation(part)] }, part.providerMetadata));
        break;
      case "tool-approval-request":
        // A provider-executed tool waiting for approval: kept as data (statebag runs no provider tools).
        out.push(
          withMetadata(
            {
              $type: "toolApprovalRequest",
              requestId: part.approvalId,
              toolCall: {
                $type: "functionCall",
                callId: part.toolCallId,
                name: "provider-tool",
                informationalOnly: true,
              },
            },
            part.providerMetadata,
          ),
        );
        break;
      case "custom":
        out.push(
          withMetadata({ $type: "text", text: "", additionalProperties: { custom: part.kind } }, part.providerMetadata),
        );
        break;
    }
  }
  return out;
}

function usageFrom(usage: LanguageModelV4Usage | undefined): UsageDetails | undefined {
  if (!usage) return undefined;
  const out: UsageDetails = {};
  const input = usage.inputTokens.total;
  const output = usage.outputTokens.total;
  if (input !== undefined) out.inputTokenCount = input;
  if (output !== undefined) out.outputTokenCount = output;
  if (input !== undefined || output !== undefined) out.totalTokenCount = (input ?? 0) + (output ?? 0);
  if (usage.inputTokens.cacheRead !== undefined) out.cachedInputTokenCount = usage.inputTokens.cacheRead;
  if (usage.outputTokens.reasoning !== undefined) out.reasoningTokenCount = usage.outputTokens.reasoning;
  if (usage.inputTokens.cacheWrite !== undefined)
    out.additionalCounts = { "inputTokens.cacheWrite": usage.inputTokens.cacheWrite };
  return Object.keys(out).length ? out : undefined;
}
