/**
 * The default history provider: messages live in the session's own state bag, so the session alone
 * carries the whole conversation and survives a restart by being stored.
 */
import type { ChatMessage } from "../../core/messages.js";
import { defineMigration } from "../../registry/migrations.js";
import type { AgentSession } from "../../core/session.js";
import { ProviderSessionState } from "../../core/state-bag.js";
import { InMemoryChatHistoryStateType } from "../../../generated/descriptors.js";
import type { InMemoryChatHistoryState_v1, InMemoryChatHistoryState_v2 } from "../../../generated/versions.js";
import type { ProviderState } from "../../core/tagged.js";
import {
  ChatHistoryProvider,
  foreignHistoryStates,
  HistoryProviderMismatchError,
  type HistoryView,
} from "./chat-history-provider.js";
import type { ProviderContext } from "./provider.js";
import type { ChatReducer } from "./reducers.js";

/** A local session's history, kept in the session itself. */
export interface InMemoryChatHistoryState extends ProviderState<"InMemoryChatHistoryState", 2> {
  messages: ChatMessage[];
  /**
   * How many messages the history's reducer has removed so far (messages in minus messages out,
   * summed over runs), so a UI can say "12 earlier messages hidden" and a summary knows the
   * history was trimmed. 0 for a history that was never reduced. Added in version 2.
   * @TJS-type integer
   * @minimum 0
   */
  droppedMessageCount: number;
}

/**
 * Version 1 had no `droppedMessageCount`. Whether a v1 history was ever reduced is not recorded,
 * so it starts counting at 0 (what it shows is exactly what is kept).
 */
export const inMemoryChatHistoryMigrations = [
  defineMigration<InMemoryChatHistoryState_v1, InMemoryChatHistoryState_v2>({
    type: "InMemoryChatHistoryState",
    from: 1,
    to: 2,
    up: (v) => ({ ...v, droppedMessageCount: 0 }),
  }),
];

/** A history state at the current version (empty unless `messages` are given), as the provider writes it. */
export function chatHistoryState(messages: ChatMessage[] = []): InMemoryChatHistoryState {
  return { $type: "InMemoryChatHistoryState", $version: 2, messages, droppedMessageCount: 0 };
}

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
    const own = this.state.read(context.state);
    this.checkNoHistoryElsewhere(context.session, own !== undefined);
    return [...(own?.messages ?? [])];
  }

  /** @internal The stored messages themselves (never changed in place: `addMessages` writes a new array). */
  override async historyView(context: ProviderContext): Promise<HistoryView> {
    // A subclass that changes what getMessages returns is asked through it.
    if (this.getMessages !== InMemoryChatHistoryProvider.prototype.getMessages) return super.historyView(context);
    const own = this.state.read(context.state);
    this.checkNoHistoryElsewhere(context.session, own !== undefined);
    const messages = own?.messages ?? [];
    return { messages, length: messages.length };
  }

  async addMessages(context: ProviderContext, messages: readonly ChatMessage[]): Promise<void> {
    const current = this.state.readOrInit(context.state);
    let next = [...current.messages, ...messages];
    let dropped = current.droppedMessageCount;
    if (this.reducer) {
      const before = next.length;
      next = await this.reducer(next);
      dropped += Math.max(0, before - next.length);
    }
    // A new value, never a mutation: an aborted run must leave the committed state untouched.
    this.state.write(context.state, { ...current, messages: next, droppedMessageCount: dropped });
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
