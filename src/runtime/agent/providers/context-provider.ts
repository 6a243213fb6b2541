/**
 * Context providers add to a model call (instructions, messages, tools) and learn from its outcome
 * (memory, summaries, RAG). They live on the agent and hold no session data; their per-session state
 * lives in the session's bag.
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AITool } from "../tools.js";
import type { ProviderContext, SessionStateProvider } from "./provider.js";

/** What a provider contributes before the model call. */
export interface AIContext {
  instructions?: string;
  messages?: ChatMessage[];
  tools?: AITool[];
}

export interface InvokedContext extends ProviderContext {
  /** The messages the model produced in this run (including tool calls and results). */
  readonly responseMessages: readonly ChatMessage[];
}

export abstract class AIContextProvider implements SessionStateProvider {
  abstract readonly key: string;

  /** Before the model call. */
  invoking(_context: ProviderContext): Promise<AIContext | undefined> | AIContext | undefined {
    return undefined;
  }

  /** After a successful model call. */
  invoked(_context: InvokedContext): Promise<void> | void {}
}
