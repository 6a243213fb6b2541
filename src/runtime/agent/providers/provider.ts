/**
 * What the agent hands a provider on each call. Providers are stateless and shared by every
 * session: everything session-specific arrives here and leaves through `state`.
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import type { StateAccess } from "../../core/state-bag.js";

export interface ProviderContext {
  /** The session as it was when the run started. Read it; write through `state`. */
  readonly session: Readonly<AgentSession>;
  /** Staged state: reads see this run's writes; writes are allowed under the provider's own key only. */
  readonly state: StateAccess;
  /** The new messages the caller sent in this run. */
  readonly requestMessages: readonly ChatMessage[];
  /**
   * Set when the run starts a new branch (regenerate, edit): the history it reads is the path up to
   * this message (`null`: no message), and its messages follow it. Undefined: after the active leaf.
   */
  readonly branchFrom?: string | null;
  /** A stable id for this run, for idempotent side effects (e.g. appends to an external log). */
  readonly operationId: string;
  readonly signal?: AbortSignal;
}

/** Anything the agent hosts: it has a key, unique on its agent, under which it keeps its state. */
export interface SessionStateProvider {
  readonly key: string;
}
