/**
 * The default history provider: messages live in the session's own state bag, so the session alone
 * carries the whole conversation and survives a restart by being stored.
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { ProviderSessionState } from "../../core/state-bag.js";
import { InMemoryChatHistoryStateType } from "../../../generated/descriptors.js";
import { chatHistoryState, type ForkOrigin, type InMemoryChatHistoryState } from "../../builtins/chat-history-state.js";
import {
  ChatHistoryProvider,
  foreignHistoryStates,
  HistoryProviderMismatchError,
  type HistoryView,
} from "./chat-history-provider.js";
import {
  inMemoryAppend,
  inMemoryParentOf,
  inMemoryPathTo,
  inMemoryPrune,
  inMemoryRewind,
  inMemorySiblings,
  inMemorySwitch,
  inMemoryTree,
  messageIdAt,
  type HistoryTreeNode,
  type MessageSiblings,
} from "./history-branches.js";
import type { ProviderContext } from "./provider.js";
import type { ChatReducer } from "./reducers.js";

export { chatHistoryState, inMemoryChatHistoryMigrations } from "../../builtins/chat-history-state.js";
export type { InMemoryChatHistoryState } from "../../builtins/chat-history-state.js";

export interface InMemoryChatHistoryOptions {
  /** State bag key. Default `"statebag.chatHistory"`. */
  key?: string;
  /** Shrinks the stored history after each run (local sessions only). */
  reducer?: ChatReducer;
}

export class InMemoryChatHistoryProvider extends ChatHistoryProvider {
  static readonly defaultKey = "statebag.chatHistory";
  readonly key: string;
  readonly reducer?: ChatReducer;
  readonly state: ProviderSessionState<InMemoryChatHistoryState>;

  constructor(options: InMemoryChatHistoryOptions = {}) {
    super();
    this.key = options.key ?? InMemoryChatHistoryProvider.defaultKey;
    this.reducer = options.reducer;
    this.state = new ProviderSessionState(this.key, InMemoryChatHistoryStateType, {
      initial: () => chatHistoryState(),
    });
  }

  async getMessages(context: ProviderContext): Promise<ChatMessage[]> {
    const view = await this.historyView(context);
    return view.messages.slice(0, view.length);
  }

  /** @internal The stored messages themselves (never changed in place: `addMessages` writes a new array). */
  override async historyView(context: ProviderContext): Promise<HistoryView> {
    // A subclass that changes what getMessages returns is asked through it.
    if (this.getMessages !== InMemoryChatHistoryProvider.prototype.getMessages) return super.historyView(context);
    const own = this.state.read(context.state);
    this.checkNoHistoryElsewhere(context.session, own !== undefined);
    const messages =
      context.branchFrom !== undefined
        ? inMemoryPathTo(own ?? chatHistoryState(), context.session.id, context.branchFrom)
        : (own?.messages ?? []);
    return { messages, length: messages.length };
  }

  async addMessages(context: ProviderContext, messages: readonly ChatMessage[]): Promise<void> {
    const current = this.state.readOrInit(context.state);
    // Every message gets an id (a branch names its parent by it); a run with branchFrom starts a branch.
    let next = inMemoryAppend(current, context.session.id, context.branchFrom, messages);
    let dropped = current.droppedMessageCount;
    if (this.reducer) {
      const before = next.messages;
      const reduced = await this.reducer(before);
      dropped += Math.max(0, before.length - reduced.length);
      next = inMemoryPrune({ ...next, messages: reduced }, before);
    }
    // A new value, never a mutation: an aborted run must leave the committed state untouched.
    this.state.write(context.state, { ...next, droppedMessageCount: dropped });
  }

  override get supportsBranches(): boolean {
    return true;
  }

  override async parentOf(session: AgentSession, messageId: string): Promise<string | null> {
    return inMemoryParentOf(this.own(session), session.id, messageId);
  }

  override async siblings(session: AgentSession, messageId: string): Promise<MessageSiblings> {
    return inMemorySiblings(this.own(session), session.id, messageId);
  }

  override async pathTail(session: AgentSession, count: number, messageId?: string): Promise<ChatMessage[]> {
    const own = this.own(session);
    const path = messageId === undefined ? own.messages : inMemoryPathTo(own, session.id, messageId);
    const from = Math.max(0, path.length - count);
    return structuredClone(path.slice(from).map((m, i) => ({ ...m, messageId: messageIdAt(m, from + i) })));
  }

  override async messageTree(session: AgentSession): Promise<HistoryTreeNode[]> {
    return structuredClone(inMemoryTree(this.own(session)));
  }

  override async switchBranch(session: AgentSession, messageId: string): Promise<void> {
    this.state.write(session, inMemorySwitch(this.own(session), session.id, messageId));
  }

  override async rewind(session: AgentSession, messageId: string): Promise<void> {
    this.state.write(session, inMemoryRewind(this.own(session), session.id, messageId));
  }

  override async fork(
    session: AgentSession,
    messageId: string,
    target: AgentSession,
    origin: ForkOrigin,
  ): Promise<void> {
    const own = this.own(session);
    const path = structuredClone(inMemoryPathTo(own, session.id, messageId));
    // Named as in the source: a message without an id keeps the one it went by there.
    const messages = path.map((m, i) => (m.messageId === undefined ? { ...m, messageId: messageIdAt(m, i) } : m));
    this.state.write(target, { ...chatHistoryState(messages), forkedFrom: { ...origin } });
  }

  override forkedFrom(session: AgentSession): ForkOrigin | undefined {
    const origin = this.state.read(session)?.forkedFrom;
    return origin ? { ...origin } : undefined;
  }

  /** The session's history state (an empty one when it has none), checked as `getMessages` checks it. */
  private own(session: AgentSession): InMemoryChatHistoryState {
    const own = this.state.read(session);
    this.checkNoHistoryElsewhere(session, own !== undefined);
    return own ?? chatHistoryState();
  }

  /** How many messages the reducer has removed from this session's history (0 when none). */
  droppedMessageCount(session: AgentSession): number {
    return this.state.read(session)?.droppedMessageCount ?? 0;
  }

  async listMessages(session: AgentSession): Promise<ChatMessage[]> {
    const own = this.state.read(session);
    this.checkNoHistoryElsewhere(session, own !== undefined);
    return [...(own?.messages ?? [])];
  }

  /**
   * A session whose history another provider keeps (a message log, or this provider's state under
   * another key) must not be run as if it had none. A message log cannot be read from here, and a
   * log-backed session that also holds this provider's state has moved on from it: both refuse.
   */
  private checkNoHistoryElsewhere(session: Readonly<AgentSession>, hasOwn: boolean): void {
    for (const other of foreignHistoryStates(session, this.key)) {
      if (other.$type === "StoredChatHistoryState") {
        const storageId = typeof other.value.storageId === "string" ? other.value.storageId : "?";
        throw new HistoryProviderMismatchError(
          session.id,
          other,
          "InMemoryChatHistoryProvider",
          `its messages are in the message log ${JSON.stringify(storageId)} of a store`,
          "run it with an agent whose history is a StoredChatHistoryProvider on that store (new ChatClientAgent({ history: new StoredChatHistoryProvider({ log: store.messages }) }))",
        );
      }
      const messages = other.value.messages;
      if (!hasOwn && Array.isArray(messages) && messages.length > 0) {
        throw new HistoryProviderMismatchError(
          session.id,
          other,
          "InMemoryChatHistoryProvider",
          `this provider uses the key "${this.key}", and the session holds ${messages.length} message(s) under "${other.key}"`,
          `give the provider the session's key: new InMemoryChatHistoryProvider({ key: ${JSON.stringify(other.key)} })`,
        );
      }
    }
  }
}
