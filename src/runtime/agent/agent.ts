/**
 * `ChatClientAgent`: the behaviour half of seed 001's option 2. It owns the providers and the chat
 * client; a session owns only state. One agent serves any number of sessions concurrently.
 *
 * A run is atomic for its session: providers write to a staged copy of the state bag, and the
 * session is updated only when the whole run (model calls, tools, every provider hook) succeeded.
 * Runs on the same session object are serialized, so concurrent callers never interleave state.
 */
import { randomUUID } from "node:crypto";
import { responseFromUpdates, type ChatClient, type ChatOptions, type ChatResponse, type ChatResponseUpdate } from "./chat-client.js";
import { ConfigurationError, StatebagError } from "../core/errors.js";
import { messageText, userMessage, type AIContent, type ChatMessage, type FunctionCallContent, type UsageDetails } from "../core/messages.js";
import { runMiddleware, type RunContext, type RunMiddleware } from "./middleware.js";
import { AIContextProvider, type AIContext } from "./providers/context-provider.js";
import { ChatHistoryProvider } from "./providers/chat-history-provider.js";
import { InMemoryChatHistoryProvider } from "./providers/in-memory-chat-history.js";
import type { ProviderContext, SessionStateProvider } from "./providers/provider.js";
import { createSessionData, type AgentSession, type CreateSessionOptions, type ServiceSessionId, type SessionKind } from "../core/session.js";
import { OwnedStateAccess, StagedState } from "../core/state-bag.js";
import type { AITool } from "./tools.js";
import { UpdateChannel } from "./update-channel.js";
import type { JsonValue } from "../core/tagged.js";

export interface ChatClientAgentOptions {
  client: ChatClient;
  /** Stable id of this agent (used for group-chat channel keys). Defaults to `name`. */
  id?: string;
  name?: string;
  instructions?: string;
  /** Keeps local sessions' history. Default: an `InMemoryChatHistoryProvider`. */
  history?: ChatHistoryProvider;
  contextProviders?: readonly AIContextProvider[];
  tools?: readonly AITool[];
  middleware?: readonly RunMiddleware[];
  /** Model round trips allowed for tool calls in one run. Default 8. */
  maxToolRounds?: number;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Extra instructions for this run only. */
  instructions?: string;
}

export interface AgentResponse {
  sessionId: string;
  /** What the model (and tools) produced in this run. */
  messages: ChatMessage[];
  /** The text of the last assistant message. */
  text: string;
  conversationId?: ServiceSessionId;
  usage?: UsageDetails;
}

export interface AgentResponseUpdate extends ChatResponseUpdate {
  sessionId: string;
}

export type AgentInput = string | ChatMessage | readonly ChatMessage[];

type Constructor<T> = abstract new (...args: never[]) => T;

/** How a streaming run hands out updates and learns when it may commit. */
interface StreamHooks {
  onUpdate: (update: ChatResponseUpdate) => void;
  beforeCommit: () => Promise<void>;
}

/** Serializes runs per session object: a chain of promises keyed weakly by the session. */
const sessionLocks = new WeakMap<AgentSession, Promise<void>>();

/** @internal Waits for the session's earlier runs; call the returned function when this one ends. */
export async function lockSession(session: AgentSession): Promise<() => void> {
  const previous = sessionLocks.get(session) ?? Promise.resolve();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  sessionLocks.set(session, previous.then(() => held));
  await previous;
  return release;
}

/** @internal An input as a fresh array of messages (a string is one user message). */
export function toMessages(input: AgentInput): ChatMessage[] {
  if (typeof input === "string") return [userMessage(input)];
  return Array.isArray(input) ? [...(input as readonly ChatMessage[])] : [input as ChatMessage];
}

export class ChatClientAgent {
  readonly id: string | undefined;
  readonly name: string | undefined;
  readonly instructions: string | undefined;
  readonly client: ChatClient;
  readonly history: ChatHistoryProvider;
  readonly contextProviders: readonly AIContextProvider[];
  readonly tools: readonly AITool[];
  private readonly middleware: readonly RunMiddleware[];
  private readonly maxToolRounds: number;

  constructor(options: ChatClientAgentOptions) {
    this.client = options.client;
    this.name = options.name;
    this.id = options.id ?? options.name;
    this.instructions = options.instructions;
    this.history = options.history ?? new InMemoryChatHistoryProvider();
    this.contextProviders = [...(options.contextProviders ?? [])];
    this.tools = [...(options.tools ?? [])];
    this.middleware = [...(options.middleware ?? [])];
    this.maxToolRounds = options.maxToolRounds ?? 8;
    const seen = new Map<string, SessionStateProvider>();
    for (const provider of this.providers) {
      if (typeof provider.key !== "string" || provider.key === "") throw new ConfigurationError(`a provider of this agent has no key`, "give every provider a non-empty, namespaced key");
      if (seen.has(provider.key)) {
        throw new ConfigurationError(
          `two providers on this agent use the state bag key "${provider.key}"`,
          "give one of them an explicit, namespaced key (for example { key: \"myapp.notes\" })",
        );
      }
      seen.set(provider.key, provider);
    }
  }

  /** Every provider this agent hosts, history first. */
  get providers(): readonly SessionStateProvider[] {
    return [this.history, ...this.contextProviders];
  }

  /** A new session. `kind` fixes local or hosted now; left out, the first response decides. */
  createSession(options: CreateSessionOptions = {}): AgentSession {
    const session = createSessionData(options);
    this.checkKind(session);
    return session;
  }

  /**
   * Finds a provider (by class or key) or the chat client (by class): the way to reach behaviour,
   * since sessions hold none (seed 001, driver C).
   */
  getService<T>(type: Constructor<T>): T | undefined;
  getService(key: string): SessionStateProvider | undefined;
  getService(typeOrKey: string | Constructor<unknown>): unknown {
    if (typeof typeOrKey === "string") return this.providers.find((p) => p.key === typeOrKey);
    const candidates: unknown[] = [...this.providers, this.client, ...this.tools];
    return candidates.find((c) => c instanceof typeOrKey);
  }

  /** Runs one turn: the session is updated only if the whole run succeeds. */
  async run(input: AgentInput, session: AgentSession = this.createSession(), options: RunOptions = {}): Promise<AgentResponse> {
    const messages = toMessages(input);
    const release = await lockSession(session);
    try {
      const context: RunContext = { agent: this, session, input: messages, streaming: false };
      return await runMiddleware(this.middleware, context, () => this.execute(session, messages, options));
    } finally {
      release();
    }
  }

  /**
   * Runs one turn, streaming updates. The session is updated when the stream completes; a
   * consumer that stops early leaves it exactly as it was.
   */
  async *runStream(input: AgentInput, session: AgentSession = this.createSession(), options: RunOptions = {}): AsyncGenerator<AgentResponseUpdate, AgentResponse | undefined> {
    const messages = toMessages(input);
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onOuterAbort, { once: true });
    const channel = new UpdateChannel<AgentResponseUpdate>();
    const release = await lockSession(session);
    const context: RunContext = { agent: this, session, input: messages, streaming: true };
    const running = runMiddleware(this.middleware, context, () =>
      this.execute(session, messages, { ...options, signal: abort.signal }, {
        onUpdate: (update) => channel.push({ ...update, sessionId: session.id }),
        // Commit only once the consumer has taken every update; if it stops instead, the abort
        // below releases the wait and the run fails before committing.
        beforeCommit: () =>
          new Promise<void>((resolve) => {
            abort.signal.addEventListener("abort", () => resolve(), { once: true });
            void channel.drained().then(resolve);
          }),
      }),
    ).then(
      (response) => (channel.close(), response),
      (error: unknown) => {
        channel.fail(error);
        throw error;
      },
    );
    running.catch(() => {}); // surfaced through the channel
    let completed = false;
    try {
      for await (const update of channel) yield update;
      const response = await running;
      completed = true;
      return response;
    } finally {
      if (!completed) {
        abort.abort(new StatebagError("stream-abandoned", "the stream consumer stopped before the run completed; the session was left unchanged"));
        await running.catch(() => {});
      }
      options.signal?.removeEventListener("abort", onOuterAbort);
      release();
    }
  }

  private checkKind(session: AgentSession): SessionKind | undefined {
    const kind = session.kind ?? (session.conversationId !== undefined ? "hosted" : undefined);
    if (session.kind === "local" && session.conversationId !== undefined) {
      throw new ConfigurationError(
        `session ${session.id} is local but carries a service conversation id`,
        "a local session keeps its history itself: drop conversationId, or create the session with { kind: \"hosted\" }",
      );
    }
    if (kind === "hosted" && !this.client.metadata.supportsServiceStorage) {
      throw new ConfigurationError(
        `session ${session.id} is hosted, but the "${this.client.metadata.providerName}" chat client cannot keep conversations`,
        "use a client whose service stores conversations, or create the session with { kind: \"local\" }",
      );
    }
    return kind;
  }

  private providerContext(session: AgentSession, staged: StagedState, key: string, requestMessages: readonly ChatMessage[], operationId: string, signal?: AbortSignal): ProviderContext {
    return { session, state: new OwnedStateAccess(staged, key), requestMessages, operationId, signal };
  }

  /** The run itself: everything is staged, then committed in one step at the end. */
  private async execute(session: AgentSession, input: ChatMessage[], options: RunOptions, stream?: StreamHooks): Promise<AgentResponse> {
    const onUpdate = stream?.onUpdate;
    const declaredKind = this.checkKind(session);
    const staged = new StagedState(session.stateBag);
    const operationId = randomUUID();
    const signal = options.signal;
    const ctx = (key: string) => this.providerContext(session, staged, key, input, operationId, signal);
    // Hosted sessions' history lives at the service; the history provider is not consulted.
    const history = declaredKind === "hosted" ? [] : await this.history.getMessages(ctx(this.history.key));

    const contexts: AIContext[] = [];
    for (const provider of this.contextProviders) {
      const added = await provider.invoking(ctx(provider.key));
      if (added) contexts.push(added);
    }
    const instructions = [this.instructions, options.instructions, ...contexts.map((c) => c.instructions)].filter(Boolean).join("\n\n");
    const tools = [...this.tools, ...contexts.flatMap((c) => c.tools ?? [])];
    const contextMessages = contexts.flatMap((c) => c.messages ?? []);

    const chatOptions: ChatOptions = { signal };
    if (instructions) chatOptions.instructions = instructions;
    if (tools.length) chatOptions.tools = tools;
    if (declaredKind === "hosted") {
      chatOptions.store = true;
      if (session.conversationId !== undefined) chatOptions.conversationId = session.conversationId;
    } else if (declaredKind === "local" || !this.client.metadata.supportsServiceStorage) {
      chatOptions.store = false;
    }

    let outgoing: ChatMessage[] = [...history, ...contextMessages, ...input];
    const produced: ChatMessage[] = [];
    let conversationId = session.conversationId;
    let usage: UsageDetails | undefined;
    for (let round = 0; ; round++) {
      const response = await this.callModel(outgoing, chatOptions, onUpdate);
      produced.push(...response.messages);
      if (response.usage) usage = addUsage(usage, response.usage);
      const hosted = declaredKind === "hosted" || (declaredKind === undefined && response.conversationId !== undefined);
      if (hosted && response.conversationId !== undefined) conversationId = response.conversationId;
      const calls = pendingCalls(response.messages, tools);
      if (calls.length === 0) break;
      if (round + 1 >= this.maxToolRounds) {
        // Answer every call anyway: a call without a result would break the next model request.
        const notRun: ChatMessage = {
          role: "tool",
          contents: calls.map((call) => ({ $type: "functionResult", callId: call.callId, result: { error: `not run: this run reached maxToolRounds (${this.maxToolRounds})` } })),
        };
        produced.push(notRun);
        onUpdate?.({ role: notRun.role, contents: notRun.contents });
        break;
      }
      const results = await this.invokeTools(calls, tools, session.id, signal);
      produced.push(results);
      onUpdate?.({ role: results.role, contents: results.contents });
      if (hosted) {
        // The service already holds everything before the results.
        outgoing = [results];
        chatOptions.conversationId = conversationId;
        chatOptions.store = true;
      } else {
        outgoing = [...outgoing, ...response.messages, results];
      }
    }

    const kind: SessionKind = declaredKind ?? (conversationId !== undefined ? "hosted" : "local");
    for (const provider of this.contextProviders) await provider.invoked({ ...ctx(provider.key), responseMessages: produced });
    // A copy: the caller keeps its input and the response's messages; editing them later must not change stored history.
    if (kind === "local") await this.history.addMessages(ctx(this.history.key), structuredClone([...input, ...produced]));
    await stream?.beforeCommit();
    signal?.throwIfAborted();
    // Last step that may fail: a history kept outside the session is written only for a run that commits.
    if (kind === "local") await this.history.committing(ctx(this.history.key));

    // Commit: the only place the session changes.
    staged.commitTo(session.stateBag);
    session.kind = kind;
    if (kind === "hosted" && conversationId !== undefined) session.conversationId = conversationId;

    const lastAssistant = [...produced].reverse().find((m) => m.role === "assistant");
    const result: AgentResponse = { sessionId: session.id, messages: produced, text: lastAssistant ? messageText(lastAssistant) : "" };
    if (session.conversationId !== undefined) result.conversationId = session.conversationId;
    if (usage) result.usage = usage;
    return result;
  }

  private async callModel(messages: ChatMessage[], options: ChatOptions, onUpdate?: (update: ChatResponseUpdate) => void): Promise<ChatResponse> {
    if (!onUpdate) return this.client.getResponse(messages, options);
    const updates: ChatResponseUpdate[] = [];
    for await (const update of this.client.getStreamingResponse(messages, options)) {
      options.signal?.throwIfAborted();
      updates.push(update);
      onUpdate(update);
    }
    return responseFromUpdates(updates);
  }

  private async invokeTools(calls: FunctionCallContent[], tools: readonly AITool[], sessionId: string, signal?: AbortSignal): Promise<ChatMessage> {
    const contents: AIContent[] = [];
    for (const call of calls) {
      const tool = tools.find((t) => t.name === call.name)!;
      let result: JsonValue;
      try {
        result = await tool.execute!(call.arguments ?? {}, { sessionId, callId: call.callId, signal });
      } catch (error) {
        // The model sees the failure and can recover; the run goes on.
        result = { error: error instanceof Error ? error.message : String(error) };
      }
      contents.push({ $type: "functionResult", callId: call.callId, result: result ?? null });
    }
    return { role: "tool", contents };
  }
}

/** Function calls this agent can answer itself (a tool with `execute`); others go back to the caller. */
function pendingCalls(messages: readonly ChatMessage[], tools: readonly AITool[]): FunctionCallContent[] {
  const calls: FunctionCallContent[] = [];
  for (const message of messages) {
    for (const content of message.contents) {
      if (content.$type === "functionCall" && !content.informationalOnly) calls.push(content);
    }
  }
  const runnable = calls.filter((call) => tools.some((t) => t.name === call.name && t.execute));
  return runnable.length === calls.length ? calls : [];
}

/** Sums two rounds' usage, named counts included (a count only one round reports is kept as is). */
function addUsage(a: UsageDetails | undefined, b: UsageDetails): UsageDetails {
  if (!a) return { ...b };
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const out: UsageDetails = {};
  for (const key of ["inputTokenCount", "outputTokenCount", "totalTokenCount", "cachedInputTokenCount", "reasoningTokenCount"] as const) {
    const value = sum(a[key], b[key]);
    if (value !== undefined) out[key] = value;
  }
  if (a.additionalCounts || b.additionalCounts) {
    const counts = new Map<string, number>();
    for (const source of [a.additionalCounts, b.additionalCounts]) for (const [name, n] of Object.entries(source ?? {})) counts.set(name, (counts.get(name) ?? 0) + n);
    out.additionalCounts = Object.fromEntries(counts);
  }
  return out;
}
