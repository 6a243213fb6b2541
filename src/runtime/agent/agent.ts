/**
 * `ChatClientAgent`: behaviour, separate from the state it works on. It owns the providers and the chat
 * client; a session owns only state. One agent serves any number of sessions concurrently.
 *
 * A run is atomic for its session: providers write to a staged copy of the state bag, and the
 * session is updated only when the whole run (model calls, tools, every provider hook) succeeded.
 * Runs on the same session object are serialized, so concurrent callers never interleave state.
 */
import { randomUUID } from "node:crypto";
import type { BlobReader } from "../blobs/references.js";
import type { ChatClient } from "./chat-client.js";
import { ConfigurationError, StatebagError } from "../core/errors.js";
import { userMessage, type ChatMessage, type ToolApprovalRequestContent } from "../core/messages.js";
import { extractAnswers, pendingToolApprovals, TOOL_APPROVALS_KEY, type ToolApprovalAnswer } from "./approvals.js";
import { runMiddleware, type Middleware } from "./middleware.js";
import type { AIContextProvider } from "./providers/context-provider.js";
import type { ChatHistoryProvider } from "./providers/chat-history-provider.js";
import { HistoryBranchError, type HistoryTreeNode, type MessageSiblings } from "./providers/history-branches.js";
import { InMemoryChatHistoryProvider } from "./providers/in-memory-chat-history.js";
import type { SessionStateProvider } from "./providers/provider.js";
import { createSessionData, type AgentSession, type CreateSessionOptions, type SessionKind } from "../core/session.js";
import { StagedState } from "../core/state-bag.js";
import type { AITool } from "./tools.js";
import { localWithConversationId } from "../checks/session-rules.js";
import { UpdateChannel } from "./update-channel.js";
import type { AgentInput, AgentResponse, AgentResponseUpdate } from "./response.js";
import { closeAnsweredRound, takeApprovalAnswers } from "./run/approval-round.js";
import { commitAnswersOnly, commitRun } from "./run/commit.js";
import { firstRequest, prepareRequest } from "./run/prepare.js";
import type { RunScope, StreamHooks } from "./run/scope.js";
import { ModelRequest } from "./run/request.js";
import { runToolRounds, type ToolRoundsOutcome } from "./run/tool-round.js";

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
  /**
   * Reads the files the session keeps in the blob store (`statebag.blobReference` contents): the
   * model clients resolve references with it when they build a request. For a stored session,
   * `blobReader(store.blobs, owner)` (the chat handler passes it). Without it, a request holding a
   * reference fails with a clear error.
   */
  blobs?: BlobReader;
  /**
   * Runs as a new branch of the history after this message (`null`: as a new first message): the
   * model sees the path up to it, and the run's messages follow it and become the active path. What
   * followed it before stays, as a sibling branch. `regenerate` and `editMessage` use it; a streaming
   * regeneration is `runStream([], session, { branchFrom: await agent.regenerationPoint(session) })`.
   */
  branchFrom?: string | null;
}

/** What `fork` makes. */
export interface ForkOptions {
  /** The new session's id. Default: a new random id. */
  id?: string;
  /** When the fork was made (recorded in its `forkedFrom`). Default: now. */
  now?: Date;
}

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

/** Serializes runs per session object: a chain of promises keyed weakly by the session. */
const sessionLocks = new WeakMap<AgentSession, Promise<void>>();

/** @internal Waits for the session's earlier runs; call the returned function when this one ends. */
export async function lockSession(session: AgentSession): Promise<() => void> {
  const previous = sessionLocks.get(session) ?? Promise.resolve();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  sessionLocks.set(
    session,
    previous.then(() => held),
  );
  await previous;
  return release;
}

/** A message the user typed (not only tool results or approval answers). */
function isTypedUserMessage(message: ChatMessage): boolean {
  return (
    message.role === "user" &&
    message.contents.some((c) => c.$type !== "toolApprovalResponse" && c.$type !== "functionResult")
  );
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
      if (typeof provider.key !== "string" || provider.key === "")
        throw new ConfigurationError(
          `a provider of this agent has no key`,
          "give every provider a non-empty, namespaced key",
        );
      if (seen.has(provider.key)) {
        throw new ConfigurationError(
          `two providers on this agent use the state bag key "${provider.key}"`,
          'give one of them an explicit, namespaced key (for example { key: "myapp.notes" })',
        );
      }
      if (provider.key === TOOL_APPROVALS_KEY)
        throw new ConfigurationError(
          `a provider uses the state bag key "${TOOL_APPROVALS_KEY}", which the agent keeps its tool approvals under`,
          "give the provider another key",
        );
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
  async run(
    input: AgentInput,
    session: AgentSession = this.createSession(),
    options: RunOptions = {},
  ): Promise<AgentResponse> {
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
  async *runStream(
    input: AgentInput,
    session: AgentSession = this.createSession(),
    options: RunOptions = {},
  ): AsyncGenerator<AgentResponseUpdate, AgentResponse | undefined> {
    const messages = toMessages(input);
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onOuterAbort, { once: true });
    const channel = new UpdateChannel<AgentResponseUpdate>();
    const release = await lockSession(session);
    const context: RunContext = { agent: this, session, input: messages, streaming: true };
    const running = runMiddleware(this.middleware, context, () =>
      this.execute(
        session,
        messages,
        { ...options, signal: abort.signal },
        {
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
        },
      ),
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
        abort.abort(
          new StatebagError(
            "stream-abandoned",
            "the stream consumer stopped before the run completed; the session was left unchanged",
          ),
        );
        await running.catch(() => {});
      }
      options.signal?.removeEventListener("abort", onOuterAbort);
      release();
    }
  }

  // --- Branches: regenerate, edit, switch, rewind, fork (each changes the session once; save it with CAS) ---

  /**
   * Answers again: runs the model on the active path up to the user message that asked for the
   * answer `messageId` (default: the last answer; any message after that user message names the
   * same answer). The new answer becomes the active path; the previous one stays as its sibling.
   */
  async regenerate(session: AgentSession, options: RunOptions & { messageId?: string } = {}): Promise<AgentResponse> {
    const { messageId, ...runOptions } = options;
    const branchFrom = await this.regenerationPoint(session, messageId);
    return this.run([], session, { ...runOptions, branchFrom });
  }

  /**
   * The message a regeneration of `messageId` (default: the last answer on the active path)
   * branches from: the user message that asked for it. Pass it as `branchFrom` to `runStream` to
   * regenerate with streaming.
   */
  async regenerationPoint(session: AgentSession, messageId?: string): Promise<string> {
    this.checkBranches(session);
    // The question is usually a few messages back: read the path's tail, more only when needed.
    for (let count = 16; ; count *= 8) {
      const tail = await this.history.pathTail(session, count, messageId);
      for (let i = tail.length - 1; i >= 0; i--) if (isTypedUserMessage(tail[i])) return tail[i].messageId!;
      if (tail.length < count)
        throw new HistoryBranchError(
          `session "${session.id}" has no user message before ${messageId === undefined ? "the end of its active branch" : `message "${messageId}"`}, so there is no answer to regenerate`,
          "send a message first (agent.run)",
        );
    }
  }

  /**
   * Edits a user message: `input` (the new text or message) starts a new branch from the edited
   * message's parent, and the model answers it. The original message and what followed it stay, as
   * a sibling branch.
   */
  async editMessage(
    session: AgentSession,
    messageId: string,
    input: AgentInput,
    options: RunOptions = {},
  ): Promise<AgentResponse> {
    this.checkBranches(session);
    const [message] = await this.history.pathTail(session, 1, messageId);
    if (!isTypedUserMessage(message)) {
      throw new HistoryBranchError(
        `message "${messageId}" of session "${session.id}" is a ${message.role} message; only a user's message can be edited`,
        "regenerate an answer instead (agent.regenerate(session, { messageId }))",
      );
    }
    const branchFrom = await this.history.parentOf(session, messageId);
    return this.run(input, session, { ...options, branchFrom });
  }

  /** Makes the branch holding `messageId` active (the path to it, then its newest continuation). */
  async switchBranch(session: AgentSession, messageId: string): Promise<void> {
    this.checkBranches(session);
    const release = await lockSession(session);
    try {
      await this.history.switchBranch(session, messageId);
    } finally {
      release();
    }
  }

  /** Makes `messageId` the end of the active path; the messages after it stay, as a branch. */
  async rewind(session: AgentSession, messageId: string): Promise<void> {
    this.checkBranches(session);
    const release = await lockSession(session);
    try {
      await this.history.rewind(session, messageId);
    } finally {
      release();
    }
  }

  /**
   * A new session whose history is `session`'s path up to `messageId`, recording where it came
   * from (`forkedFrom`). Only the history goes over (context providers' state and pending tool
   * approvals stay with the source); a history kept in a store shares the source's messages
   * instead of copying them. Save it like any new session (`forkSession` does, with the source's owner).
   */
  async fork(session: AgentSession, messageId: string, options: ForkOptions = {}): Promise<AgentSession> {
    this.checkBranches(session);
    const target = createSessionData({ ...(options.id !== undefined ? { id: options.id } : {}), kind: "local" });
    if (target.id === session.id)
      throw new HistoryBranchError(
        `a fork of session "${session.id}" needs an id of its own`,
        "leave ForkOptions.id out for a new random id",
      );
    await this.history.fork(session, messageId, target, {
      sessionId: session.id,
      messageId,
      forkedAt: (options.now ?? new Date()).toISOString(),
    });
    return target;
  }

  /** The versions of `messageId` (it and the messages that follow the same parent), oldest first: ‹ index+1/count ›. */
  messageSiblings(session: AgentSession, messageId: string): Promise<MessageSiblings> {
    this.checkBranches(session);
    return this.history.siblings(session, messageId);
  }

  /** Every message of every branch, with its parent and whether it is on the active path. */
  messageTree(session: AgentSession): Promise<HistoryTreeNode[]> {
    this.checkBranches(session);
    return this.history.messageTree(session);
  }

  private checkBranches(session: AgentSession): void {
    if (this.checkKind(session) === "hosted") {
      throw new HistoryBranchError(
        `session "${session.id}" is hosted: its history is kept by the model service, which statebag cannot branch`,
        'branch local sessions only (createSession({ kind: "local" }))',
      );
    }
  }

  private checkKind(session: AgentSession): SessionKind | undefined {
    const kind = session.kind ?? (session.conversationId !== undefined ? "hosted" : undefined);
    // The rule loading and validation hold a stored session to (checks/session-rules.ts).
    if (localWithConversationId(session.kind, session.conversationId)) {
      throw new ConfigurationError(
        `session ${session.id} is local but carries a service conversation id`,
        'a local session keeps its history itself: drop conversationId, or create the session with { kind: "hosted" }',
      );
    }
    if (kind === "hosted" && !this.client.metadata.supportsServiceStorage) {
      throw new ConfigurationError(
        `session ${session.id} is hosted, but the "${this.client.metadata.providerName}" chat client cannot keep conversations`,
        'use a client whose service stores conversations, or create the session with { kind: "local" }',
      );
    }
    return kind;
  }

  /**
   * The run itself, streaming or not: every step writes to staged state, and only the commit step
   * changes the session (see run/).
   */
  private async execute(
    session: AgentSession,
    rawInput: ChatMessage[],
    options: RunOptions,
    stream?: StreamHooks,
  ): Promise<AgentResponse> {
    const declaredKind = this.checkKind(session);
    if (options.branchFrom !== undefined) {
      this.checkBranches(session);
      if (!this.history.supportsBranches) await this.history.parentOf(session, options.branchFrom ?? ""); // refuses, naming the provider
    }
    const { messages: input, answers } = extractAnswers(rawInput);
    for (const answer of options.approvals ?? []) answers.push(answer); // no push(...list): a long list overflows the stack
    const scope: RunScope = {
      agent: this,
      session,
      declaredKind,
      input,
      staged: new StagedState(session.stateBag),
      operationId: randomUUID(),
      signal: options.signal,
      ...(options.branchFrom !== undefined ? { branchFrom: options.branchFrom } : {}),
      ...(options.blobs ? { blobs: options.blobs } : {}),
      stream,
    };

    const { approvals, waiting } = takeApprovalAnswers(scope, answers);
    if (waiting.length) return commitAnswersOnly(scope, waiting);
    const prepared = await prepareRequest(scope, options.instructions);
    const closed = await closeAnsweredRound(scope, approvals, prepared.tools);
    const request = firstRequest(prepared, closed, input, ModelRequest.reusable(this.client));
    let outcome: ToolRoundsOutcome;
    try {
      outcome = await runToolRounds(scope, prepared, request, this.maxToolRounds);
    } finally {
      request.release(); // success, error or abort: a lent history view goes back before the commit
    }
    return commitRun(scope, closed, outcome);
  }
}
