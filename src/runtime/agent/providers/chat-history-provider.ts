/**
 * Chat history providers keep a local session's messages. Hosted sessions never use them: the
 * service keeps that history (seed 004, enhancement 1).
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import type { ProviderContext, SessionStateProvider } from "./provider.js";

export abstract class ChatHistoryProvider implements SessionStateProvider {
  abstract readonly key: string;

  /** The history to send to the model before this run's new messages. */
  abstract getMessages(context: ProviderContext): Promise<ChatMessage[]>;

  /** Records this run's request and response messages (called once, after a successful run). */
  abstract addMessages(context: ProviderContext, messages: readonly ChatMessage[]): Promise<void>;

  /** The stored history of a session, for callers outside a run (UIs, tests, exports). */
  abstract listMessages(session: AgentSession): Promise<ChatMessage[]>;
}
