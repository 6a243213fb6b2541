/**
 * Chat history providers keep a local session's messages. Hosted sessions never use them: the
 * service keeps that history and the session holds only its conversation id.
 */
import { StatebagError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import type { ProviderContext, SessionStateProvider } from "./provider.js";
import type { ForkOrigin } from "../../builtins/chat-history-state.js";
import { HistoryBranchError, type HistoryTreeNode, type MessageSiblings } from "./history-branches.js";

/**
 * A history as the agent reads it before a run: the first `length` messages of `messages`, shared
 * with the provider (no copy). Nobody changes them: read only. With `appendOnly`, the array only
 * ever grows at its end (its first `length` messages never change), so what is derived from a
 * prefix of it may be kept and extended (the agent's model view, see approvals.ts `modelView`).
 * @internal
 */
export interface HistoryView {
  readonly messages: readonly ChatMessage[];
  readonly length: number;
  readonly appendOnly?: boolean;
}

export abstract class ChatHistoryProvider implements SessionStateProvider {
  abstract readonly key: string;

  /** The history to send to the model before this run's new messages. */
  abstract getMessages(context: ProviderContext): Promise<ChatMessage[]>;

  /**
   * @internal What the agent reads before a run: `getMessages` without its copy, when the provider
   * can hand out its messages read-only. Default: `getMessages`.
   */
  async historyView(context: ProviderContext): Promise<HistoryView> {
    const messages = await this.getMessages(context);
    return { messages, length: messages.length };
  }

  /** Records this run's request and response messages (called once, after a successful run). */
  abstract addMessages(context: ProviderContext, messages: readonly ChatMessage[]): Promise<void>;

  /**
   * Called once the run has succeeded, right before its staged state is committed to the session.
   * A provider that writes history outside the session does it here; throwing fails the run and
   * leaves the session unchanged.
   */
  committing(_context: ProviderContext): Promise<void> | void {}

  /** The stored history of a session (its active path), for callers outside a run (UIs, tests, exports). */
  abstract listMessages(session: AgentSession): Promise<ChatMessage[]>;

  /**
   * Whether this provider keeps branches: a run with `branchFrom` (regenerate, edit), and the
   * branch operations below. statebag's own history providers do; a provider that does not keeps
   * the defaults, which refuse.
   */
  get supportsBranches(): boolean {
    return false;
  }

  /** The id of the message `messageId` follows on its branch (`null` for a first message). */
  parentOf(session: AgentSession, messageId: string): Promise<string | null> {
    return this.unsupported(session, messageId);
  }

  /** The versions of the message (`messageId` and the messages that follow the same parent), oldest first. */
  siblings(session: AgentSession, messageId: string): Promise<MessageSiblings> {
    return this.unsupported(session, messageId);
  }

  /**
   * The newest `count` messages of the path from the root to `messageId` (default: the active
   * leaf), oldest first, each with its id set (`statebag-<index>` for one without): what the agent
   * reads to find the question an answer belongs to, without reading a long path whole.
   */
  pathTail(session: AgentSession, count: number, messageId?: string): Promise<ChatMessage[]> {
    void count;
    return this.unsupported(session, messageId);
  }

  /** Every message of every branch, each with its parent and whether it is on the active path. */
  messageTree(session: AgentSession): Promise<HistoryTreeNode[]> {
    return this.unsupported(session);
  }

  /**
   * Makes the branch holding `messageId` active: the path to it, then on through the newest
   * message after each one. Changes `session` (save it to keep the change).
   */
  switchBranch(session: AgentSession, messageId: string): Promise<void> {
    return this.unsupported(session, messageId);
  }

  /** Makes `messageId` the last message of the active path; what followed it stays, as a branch. Changes `session`. */
  rewind(session: AgentSession, messageId: string): Promise<void> {
    return this.unsupported(session, messageId);
  }

  /**
   * Writes into `target` (a new session) a history that is `session`'s path up to `messageId`,
   * with `origin` as its provenance. Messages are shared, never copied, when the history is kept
   * outside the session. Changes `target` only.
   */
  fork(session: AgentSession, messageId: string, target: AgentSession, origin: ForkOrigin): Promise<void> {
    void target;
    void origin;
    return this.unsupported(session, messageId);
  }

  /** Where `session` was forked from (`undefined` when it was not). */
  forkedFrom(session: AgentSession): ForkOrigin | undefined {
    void session;
    return undefined;
  }

  private unsupported(session: AgentSession, messageId?: string): never {
    void messageId;
    throw new HistoryBranchError(
      `the history provider ${this.constructor.name} of session ${quoted(session.id)} keeps no branches`,
      "use statebag's InMemoryChatHistoryProvider or StoredChatHistoryProvider, or override the branch methods of ChatHistoryProvider",
    );
  }
}

/** The state types statebag's own history providers keep. */
export const HISTORY_STATE_TYPES: ReadonlySet<string> = new Set(["InMemoryChatHistoryState", "StoredChatHistoryState"]);

/** History state found in a session under a key other than the asking provider's. */
export interface ForeignHistoryState {
  key: string;
  $type: string;
  value: Readonly<Record<string, unknown>>;
}

/**
 * History that another provider keeps in this session: a value of a history state type under any
 * key but `ownKey`. A session moved to an agent with a different history provider carries it.
 */
export function foreignHistoryStates(session: Readonly<AgentSession>, ownKey: string): ForeignHistoryState[] {
  const found: ForeignHistoryState[] = [];
  for (const [key, value] of Object.entries(session.stateBag ?? {})) {
    if (key === ownKey || value === null || typeof value !== "object" || Array.isArray(value)) continue;
    const type = (value as { $type?: unknown }).$type;
    if (typeof type === "string" && HISTORY_STATE_TYPES.has(type))
      found.push({ key, $type: type, value: value as Record<string, unknown> });
  }
  return found;
}

/**
 * A session's history is held by a provider this agent does not have (or under another key), and
 * taking it over would lose or mix messages. Thrown before the model is called, so the agent never
 * answers as if the conversation were new.
 */
export class HistoryProviderMismatchError extends StatebagError {
  constructor(
    readonly sessionId: string,
    /** The state bag key and state type that hold the history now. */
    readonly heldBy: { key: string; $type: string },
    /** The provider class of the agent that was asked to run the session. */
    readonly provider: string,
    detail: string,
    hint: string,
  ) {
    super(
      "history-provider-mismatch",
      `session ${quoted(sessionId)} keeps its history in "${heldBy.$type}" under state bag key "${heldBy.key}", ` +
        `which this agent's ${provider} does not read: ${detail}; nothing was run`,
      { hint },
    );
  }
}
