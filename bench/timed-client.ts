/**
 * The scripted model, timing itself: cases that run `agent.run` against a raw baseline that has no
 * model take the client's own time (`spent`) out of their samples, so the ratio is statebag's work.
 * The client answers exactly as `ScriptedChatClient` does (same replies, same usage), so what the
 * turn stores is unchanged.
 */
import type { ChatOptions, ChatResponse } from "../src/runtime/agent/chat-client.js";
import { ScriptedChatClient } from "../src/runtime/agent/clients/scripted-chat-client.js";
import type { ChatMessage } from "../src/runtime/core/messages.js";

export class TimedClient extends ScriptedChatClient {
  /** Milliseconds spent inside `getResponse` since the last reset (the caller sets it to 0). */
  spent = 0;

  override async getResponse(messages: readonly ChatMessage[], options?: ChatOptions): Promise<ChatResponse> {
    const start = performance.now();
    try {
      return await super.getResponse(messages, options);
    } finally {
      // The request log only grows in a bench: dropped, inside the timed span, as the client's own work.
      this.requests.length = 0;
      this.spent += performance.now() - start;
    }
  }
}
