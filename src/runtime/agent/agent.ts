/**
 * `ChatClientAgent`: behaviour, separate from the state it works on. It owns the providers and the chat
 * client; a session owns only state. One agent serves any number of sessions concurrently.
 *
 * A run is atomic for its session: providers write to a staged copy of the state bag, and the
 * session is updated only when the whole run (model calls, tools, every provider hook) succeeded.
 * Runs on the same session object are serialized, so concurrent callers never interleave state.
 */
import { randomUUID } from "node:crypto";
import { responseFromUpdates, type ChatClient, type ChatOptions, type ChatResponse, type ChatResponseUpdate } from "./chat-client.js";
import { ConfigurationError, StatebagError } from "../core/errors.js";
import { quoted } from "../core/json.js";
import { messageText, userMessage, type ChatMessage, type FunctionCallContent, type ToolApprovalRequestContent, type UsageDetails } from "../core/messages.js";
import {
  approvalRequestFor,
  closeRound,
  extractAnswers,
  forModel,
  pendingToolApprovals,
  recordAnswers,
  requiresApproval,
  runTool,
  settleRound,
  TOOL_APPROVALS_KEY,
  ToolApprovalError,
  toolApprovalState,
  unanswered,
  withApprovalRequests,
  type PendingToolCall,
  type ToolApprovalAnswer,
} from "./approvals.js";
import { runMiddleware, type Middleware } from "./middleware.js";
import { AIContextProvider, type AIContext } from "./providers/context-provider.js";
import { ChatHistoryProvider } from "./providers/chat-history-provider.js";
import { InMemoryChatHistoryProvider } from "./providers/in-memory-chat-history.js";
import type { ProviderContext, SessionStateProvider } from "./providers/provider.js";
import { createSessionData, type AgentSession, type CreateSessionOptions, type ServiceSessionId, type SessionKind } from "../core/session.js";
import { OwnedStateAccess, StagedState } from "../core/state-bag.js";
import type { AITool } from "./tools.js";
import { UpdateChannel } from "./update-channel.js";

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
  /**
   * How long an approved call claimed by `answerToolApprovals` counts as still running elsewhere.
   * After that, a claim without a result is reported to the model as an unknown outcome (the tool
   * is never run twice). Default 10 minutes.
   */
  toolClaimTimeoutMs?: number;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Extra instructions for this run only. */
  instructions?: string;
  /**
   * Answers to the session's pending tool approval requests (by request id or call id). Answers may
   * also come as `toolApprovalResponse` contents in the input.
   */
  approvals?: readonly ToolApprovalAnswer[];
}

export interface AgentResponse {
  sessionId: string;
  /** What the model (and tools) produced in this run. */
  messages: ChatMessage[];
  /** The text of the last assistant message. */
  text: string;
  conversationId?: ServiceSessionId;
  usage?: UsageDetails;
  /**
   * Set when the run stopped for tool approvals: the requests waiting for an answer (also kept in
   * the session). Answer them with `run(..., { approvals })` or `answerToolApprovals`.
   */
  pendingApprovals?: ToolApprovalRequestContent[];
}

export interface AgentResponseUpdate extends ChatResponseUpdate {
  sessionId: string;
}

export type AgentInput = string | ChatMessage | readonly ChatMessage[];

/** What run middleware sees: the agent, the live session, the run's input. */
export interface RunContext {
  readonly agent: ChatClientAgent;
  /** The live session: read it freely; the run itself is what changes it. */
  readonly session: Readonly<AgentSession>;
  readonly input: readonly ChatMessage[];
  readonly streaming: boolean;
}

/**
 * A function wrapping a run. Before `next()` it sees the session as it was; after `next()`
 * resolves, the run has committed and it sees the new state. If `next()` rejects, the session is
 * unchanged.
 */
export type RunMiddleware = Middleware<RunContext, AgentResponse>;

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
  readonly toolClaimTimeoutMs: number;

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
    this.toolClaimTimeoutMs = options.toolClaimTimeoutMs ?? 10 * 60_000;
    const seen = new Map<string, SessionStateProvider>();
    for (const provider of this.providers) {
      if (typeof provider.key !== "string" || provider.key === "") throw new ConfigurationError(`a provider of this agent has no key`, "give every provider a non-empty, namespaced key");
      if (seen.has(provider.key)) {
        throw new ConfigurationError(
          `two providers on this agent use the state bag key "${provider.key}"`,
          "give one of them an explicit, namespaced key (for example { key: \"myapp.notes\" })",
        );
      }
      if (provider.key === TOOL_APPROVALS_KEY) throw new ConfigurationError(`a provider uses the state bag key "${TOOL_APPROVALS_KEY}", which the agent keeps its tool approvals under`, "give the provider another key");
      seen.set(provider.key, provider);
    }
  }

  /** The session's tool approval requests waiting for an answer (empty when none). */
  pendingApprovals(session: AgentSession): ToolApprovalRequestContent[] {
    return pendingToolApprovals(session);
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
   * since sessions hold none (they are plain data).
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
        // (An abort that already fired fires no event: check it first, or the run waits forever.)
        beforeCommit: () =>
          new Promise<void>((resolve) => {
            if (abort.signal.aborted) return resolve();
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
  private async execute(session: AgentSession, rawInput: ChatMessage[], options: RunOptions, stream?: StreamHooks): Promise<AgentResponse> {
    const onUpdate = stream?.onUpdate;
    const declaredKind = this.checkKind(session);
    const staged = new StagedState(session.stateBag);
    const operationId = randomUUID();
    const signal = options.signal;
    const { messages: input, answers } = extractAnswers(rawInput);
    for (const answer of options.approvals ?? []) answers.push(answer); // no push(...list): a long list overflows the stack

    // Answers first: refused answers (unknown, answered before) fail the run before anything runs.
    let approvals = toolApprovalState.read(staged);
    if (answers.length) {
      approvals = recordAnswers(approvals, answers);
      toolApprovalState.write(staged, approvals);
    }
    const waiting = unanswered(approvals);
    if (waiting.length) {
      if (answers.length === 0) {
        throw new ToolApprovalError(
          "tool-approval-pending",
          `session ${quoted(session.id)} is waiting for answers to tool approval requests ${waiting.map((r) => quoted(r.requestId)).join(", ")}`,
          "answer them first: agent.run(input, session, { approvals: [approveToolCall(id)] }) (or rejectToolCall(id, reason))",
          waiting[0].requestId,
        );
      }
      // Some answered, some not: keep the answers, run nothing until the round is complete.
      await stream?.beforeCommit();
      signal?.throwIfAborted();
      staged.commitTo(session.stateBag);
      const partial: AgentResponse = { sessionId: session.id, messages: [], text: "", pendingApprovals: structuredClone(waiting) };
      if (session.conversationId !== undefined) partial.conversationId = session.conversationId;
      return partial;
    }

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

    // A complete round: every call gets its result now (calls that already have one are not run again).
    let resumed: ChatMessage[] = [];
    let resumedResults: ChatMessage | undefined;
    if (approvals && approvals.pending.length) {
      const settled = await settleRound(approvals, tools, { sessionId: session.id, signal, claimTimeoutMs: this.toolClaimTimeoutMs });
      const closed = closeRound(settled);
      toolApprovalState.write(staged, closed.state);
      resumed = closed.messages;
      resumedResults = closed.results;
      onUpdate?.({ role: closed.results.role, contents: closed.results.contents });
    }


    const chatOptions: ChatOptions = { signal, sessionId: session.id };
    if (instructions) chatOptions.instructions = instructions;
    if (tools.length) chatOptions.tools = tools;
    if (declaredKind === "hosted") {
      chatOptions.store = true;
      if (session.conversationId !== undefined) chatOptions.conversationId = session.conversationId;
    } else if (declaredKind === "local" || !this.client.metadata.supportsServiceStorage) {
      chatOptions.store = false;
    }

    // Hosted: the service holds the calls already, so it gets the results and the new input only.
    let outgoing: ChatMessage[] = forModel([...history, ...contextMessages, ...resumed, ...input]);
    const produced: ChatMessage[] = [];
    let pendingApprovals: ToolApprovalRequestContent[] | undefined;
    let conversationId = session.conversationId;
    let usage: UsageDetails | undefined;
    for (let round = 0; ; round++) {
      const response = await this.callModel(outgoing, chatOptions, onUpdate);
      if (response.usage) usage = addUsage(usage, response.usage);
      const hosted = declaredKind === "hosted" || (declaredKind === undefined && response.conversationId !== undefined);
      if (hosted && response.conversationId !== undefined) conversationId = response.conversationId;
      const calls = pendingCalls(response.messages, tools);
      const planned = await this.planRound(calls, tools, session.id, signal);
      if (planned.some((p) => p.request)) {
        // Stop before running anything: the round waits in the session for the application's answers.
        for (const message of withApprovalRequests(response.messages, planned)) produced.push(message);
        toolApprovalState.write(staged, { ...toolApprovalState.readOrInit(staged), pending: planned });
        pendingApprovals = planned.flatMap((p) => (p.request ? [structuredClone(p.request)] : []));
        onUpdate?.({ role: "assistant", contents: structuredClone(pendingApprovals) });
        break;
      }
      for (const message of response.messages) produced.push(message);
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
    if (resumedResults) produced.unshift(resumedResults);

    const kind: SessionKind = declaredKind ?? (conversationId !== undefined ? "hosted" : "local");
    for (const provider of this.contextProviders) await provider.invoked({ ...ctx(provider.key), responseMessages: produced });
    // A copy: the caller keeps its input and the response's messages; editing them later must not change stored history.
    // The closed round (answers, then results) precedes the input, as the model saw it.
    const recorded = resumedResults ? [...resumed, ...input, ...produced.slice(1)] : [...input, ...produced];
    if (kind === "local") await this.history.addMessages(ctx(this.history.key), structuredClone(recorded));
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
    if (pendingApprovals) result.pendingApprovals = pendingApprovals;
    return result;
  }

  /** Which of a turn's calls need approval; `request` is set on those (nothing runs here). */
  private async planRound(calls: FunctionCallContent[], tools: readonly AITool[], sessionId: string, signal?: AbortSignal): Promise<PendingToolCall[]> {
    const planned: PendingToolCall[] = [];
    for (const call of calls) {
      const tool = tools.find((t) => t.name === call.name)!;
      const entry: PendingToolCall = { call: structuredClone(call) };
      if (await requiresApproval(tool, call, { sessionId, callId: call.callId, signal })) entry.request = approvalRequestFor(call, `approval_${randomUUID()}`);
      planned.push(entry);
    }
    return planned;
  }

  private async callModel(messages: ChatMessage[], options: ChatOptions, onUpdate?: (update: ChatResponseUpdate) => void): Promise<ChatResponse> {
    if (!onUpdate) return this.client.getResponse(messages, options);
    const updates: ChatResponseUpdate[] = [];
    for await (const update of abortable(this.client.getStreamingResponse(messages, options), options.signal)) {
      updates.push(update);
      onUpdate(update);
    }
    // A client may end its stream quietly when aborted (the OpenAI SDK does): that is no answer.
    options.signal?.throwIfAborted();
    return responseFromUpdates(updates);
  }

  private async invokeTools(calls: FunctionCallContent[], tools: readonly AITool[], sessionId: string, signal?: AbortSignal): Promise<ChatMessage> {
    const contents = [];
    // A throwing tool gives the model an error result it can recover from; the run goes on.
    for (const call of calls) contents.push(await runTool(tools.find((t) => t.name === call.name)!, call, { sessionId, callId: call.callId, signal }));
    return { role: "tool", contents };
  }
}

/**
 * A client's stream that stops as soon as the signal fires, even while the client waits for a chunk
 * that never comes (a stalled service, a client that ignores the signal): the run must end promptly
 * when its consumer leaves.
 */
async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  if (!signal) {
    yield* source;
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  let aborted!: () => void;
  const stopped = new Promise<never>((_, reject) => (aborted = () => reject(signal.reason)));
  stopped.catch(() => {});
  signal.addEventListener("abort", aborted, { once: true });
  let finished = false;
  try {
    for (;;) {
      signal.throwIfAborted();
      const next = await Promise.race([iterator.next(), stopped]);
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", aborted);
    // Not awaited: a generator busy in a read settles its return() only after that read.
    if (!finished) void Promise.resolve(iterator.return?.()).catch(() => {});
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
