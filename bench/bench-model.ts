/**
 * The model of the turn cases (turn.<backend>.1000, turn.storedlog.*): answers at once, from the
 * request's last message, and checks that it was sent the whole history the case shows (so no side
 * can send less). Its own time (`spent`) is taken out of every sample of our side.
 *
 * Not ScriptedChatClient: its usage count goes over every message it is sent (~0.4 ms per call at
 * 1,000 messages, ~45 ms at 100,000). Taken out of the sample, that time still slowed the turn
 * measured after it on the shared 2 cores (a 45 ms busy wait in a client that sent nothing added the
 * same ~0.25 ms to either log size), which a real model, waiting on the network, does not do.
 * Usage here is counted from the new input only, so the reply still carries a usage content.
 */
import type {
  ChatClient,
  ChatClientMetadata,
  ChatResponse,
  ChatResponseUpdate,
} from "../src/runtime/agent/chat-client.js";
import { messageText, type ChatMessage, type UsageDetails } from "../src/runtime/core/messages.js";

export class BenchModel implements ChatClient {
  readonly metadata: ChatClientMetadata = { providerName: "bench", supportsServiceStorage: false };
  /** It reads the request only during the call (ChatClient.readsMessagesOnlyDuringCall). */
  readonly readsMessagesOnlyDuringCall = true;
  /** Milliseconds spent inside `getResponse` since the caller last set it to 0. */
  spent = 0;
  /** How many messages the next request must hold (the caller sets it before each turn). */
  expected = 0;
  private counter = 0;

  constructor(private readonly options: { usage?: boolean } = {}) {}

  async getResponse(messages: readonly ChatMessage[]): Promise<ChatResponse> {
    const start = performance.now();
    if (messages.length !== this.expected)
      throw new Error(`the model was sent ${messages.length} messages, expected ${this.expected}`);
    const said = messageText(messages[messages.length - 1]);
    const text = `You said: "${said}". I can see ${messages.length - 1} earlier messages.`;
    const reply: ChatMessage = {
      role: "assistant",
      contents: [{ $type: "text", text }],
      messageId: `msg_${++this.counter}`,
    };
    const response: ChatResponse = { messages: [reply] };
    if (this.options.usage) {
      const usage: UsageDetails = { inputTokenCount: said.length >> 2, outputTokenCount: text.length >> 2 };
      usage.totalTokenCount = usage.inputTokenCount! + usage.outputTokenCount!;
      reply.contents.push({ $type: "usage", details: usage });
      response.usage = usage;
    }
    this.spent += performance.now() - start;
    return response;
  }

  /**
   * The same answer streamed in word-sized updates, as a real service streams tokens (the
   * http.turn cases). Only the time inside this generator counts as the model's (`spent`), not
   * the time the consumer holds each update.
   */
  async *getStreamingResponse(messages: readonly ChatMessage[]): AsyncIterable<ChatResponseUpdate> {
    const response = await this.getResponse(messages);
    let start = performance.now();
    for (const message of response.messages) {
      for (const content of message.contents) {
        const pieces = content.$type === "text" ? (content.text.match(/\S+\s*|\s+/g) ?? [""]) : undefined;
        const updates: ChatResponseUpdate[] = pieces
          ? pieces.map((text) => ({
              role: message.role,
              messageId: message.messageId,
              contents: [{ $type: "text", text }],
            }))
          : [{ role: message.role, messageId: message.messageId, contents: [content] }];
        for (const update of updates) {
          this.spent += performance.now() - start;
          yield update;
          start = performance.now();
        }
      }
    }
    this.spent += performance.now() - start;
  }
}
