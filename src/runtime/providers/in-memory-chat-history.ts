/**
 * The default history provider: messages live in the session's own state bag, so the session alone
 * carries the whole conversation (seed 004, enhancement 2).
 */
import type { ChatMessage } from "../messages.js";
import type { AgentSession } from "../session.js";
import { ProviderSessionState } from "../state-bag.js";
import type { ProviderState } from "../tagged.js";
import { ChatHistoryProvider } from "./chat-history-provider.js";
import type { ProviderContext } from "./provider.js";
import type { ChatReducer } from "./reducers.js";

/** A local session's history, kept in the session itself. */
export interface InMemoryChatHistoryState extends ProviderState<"InMemoryChatHistoryState", 1> {
  messages: ChatMessage[];
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
    this.state = new ProviderSessionState<InMemoryChatHistoryState>(this.key, {
      stateType: "InMemoryChatHistoryState",
      version: 1,
      initial: () => ({ $type: "InMemoryChatHistoryState", messages: [] }),
    });
  }

  async getMessages(context: ProviderContext): Promise<ChatMessage[]> {
    return [...this.state.readOrInit(context.state).messages];
  }

  async addMessages(context: ProviderContext, messages: readonly ChatMessage[]): Promise<void> {
    const current = this.state.readOrInit(context.state);
    let next = [...current.messages, ...messages];
    if (this.reducer) next = await this.reducer(next);
    // A new value, never a mutation: an aborted run must leave the committed state untouched.
    this.state.write(context.state, { ...current, messages: next });
  }

  async listMessages(session: AgentSession): Promise<ChatMessage[]> {
    return [...(this.state.read(session)?.messages ?? [])];
  }
}
