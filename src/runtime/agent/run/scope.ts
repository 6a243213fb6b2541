/**
 * What the steps of one run share. A run is `execute` in agent.ts: answers (approval-round.ts),
 * prepare, tool rounds, commit; each step is a module here, so a step's code reads on its own.
 */
import type { BlobReader } from "../../blobs/references.js";
import type { ChatClient, ChatResponseUpdate } from "../chat-client.js";
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession, SessionKind } from "../../core/session.js";
import { OwnedStateAccess, type StagedState } from "../../core/state-bag.js";
import type { AIContextProvider } from "../providers/context-provider.js";
import type { ChatHistoryProvider } from "../providers/chat-history-provider.js";
import type { ProviderContext } from "../providers/provider.js";
import type { AITool } from "../tools.js";

/** How a streaming run hands out updates and learns when it may commit. */
export interface StreamHooks {
  onUpdate: (update: ChatResponseUpdate) => void;
  beforeCommit: () => Promise<void>;
}

/** The parts of the agent a run uses (a `ChatClientAgent` is one). */
export interface RunAgent {
  readonly client: ChatClient;
  readonly instructions: string | undefined;
  readonly history: ChatHistoryProvider;
  readonly contextProviders: readonly AIContextProvider[];
  readonly tools: readonly AITool[];
  readonly toolClaimTimeoutMs: number;
}

/** One run's inputs and its staged state: steps write to `staged`; only the commit step changes the session. */
export interface RunScope {
  readonly agent: RunAgent;
  readonly session: AgentSession;
  /** The kind the session declares; undefined until a first response decides. */
  readonly declaredKind: SessionKind | undefined;
  /** The caller's new messages, tool approval answers taken out. */
  readonly input: readonly ChatMessage[];
  readonly staged: StagedState;
  readonly operationId: string;
  readonly signal?: AbortSignal;
  /** The message this run branches from (`RunOptions.branchFrom`); undefined: after the active leaf. */
  readonly branchFrom?: string | null;
  /** Reads the files the session keeps in the blob store (reference contents), for the model requests. */
  readonly blobs?: BlobReader;
  /** Set for streaming runs only; a non-streaming run takes the same steps without it. */
  readonly stream?: StreamHooks;
}

/** What a provider sees of the run: its own slice of the staged state. */
export function providerContext(scope: RunScope, key: string): ProviderContext {
  return {
    session: scope.session,
    state: new OwnedStateAccess(scope.staged, key),
    requestMessages: scope.input,
    operationId: scope.operationId,
    signal: scope.signal,
    ...(scope.branchFrom !== undefined ? { branchFrom: scope.branchFrom } : {}),
  };
}
