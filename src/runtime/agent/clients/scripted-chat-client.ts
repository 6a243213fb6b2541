/**
 * A deterministic, offline chat client for tests, demos and examples. It is not a mock of any real
 * service: it answers by rules you give it (first match wins) and by a few built-in ones that make
 * conversation memory visible ("my name is Ada" ... "what is my name?"). It can emit function calls
 * and usage, and can act as a hosted service that keeps conversations and hands out ids.
 */
import { randomBytes } from "node:crypto";
import type { ChatClient, ChatClientMetadata, ChatOptions, ChatResponse, ChatResponseUpdate } from "../chat-client.js";
import { StatebagError } from "../../core/errors.js";
import { messageText, type AIContent, type ChatMessage, type UsageDetails } from "../../core/messages.js";
import type { ServiceSessionId } from "../../core/session.js";
import type { JsonValue } from "../../core/tagged.js";

export interface ScriptContext {
  /** Text of the last user message. */
  text: string;
  /** Everything the model sees: stored conversation (hosted) or sent history, plus new messages. */
  messages: readonly ChatMessage[];
  instructions: string;
  options: ChatOptions;
}

/** A scripted reply: text, a call to a tool, or full contents. */
export type ScriptedReply =
  | string
  | { toolCall: { name: string; arguments?: { [name: string]: JsonValue } } }
  | { contents: AIContent[] };

export interface ScriptRule {
  when: string | RegExp | ((context: ScriptContext) => boolean);
  reply: ScriptedReply | ((context: ScriptContext) => ScriptedReply);
}

export interface ScriptedChatClientOptions {
  rules?: ScriptRule[];
  /** Act as a service that keeps conversations (hosted sessions). Default false. */
  hosted?: boolean;
  /** Hand out a new conversation id on every response (as response-chaining APIs do). Default false. */
  newConversationIdPerTurn?: boolean;
  /** Add a usage content with word counts to each response. Default true. */
  usage?: boolean;
  /** Provider name reported in metadata. Default "scripted". */
  name?: string;
  /**
   * Keep every request in `requests`. Default true; false for a long-running client (a demo
   * server, a benchmark), where the log would only grow.
   */
  recordRequests?: boolean;
}

/** Whitespace as `\s` and `trim()` define it. */
function isSpace(c: number): boolean {
  return (
    c === 32 ||
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Number of whitespace-separated words; counted in place, since usage counts every message a request holds. */
function words(s: string): number {
  let calls = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    if (isSpace(s.charCodeAt(i))) inWord = false;
    else if (!inWord) {
      inWord = true;
      calls++;
    }
  }
  return calls;
}

export class ScriptedChatClient implements ChatClient {
  readonly metadata: ChatClientMetadata;
  /** Every request the client received, for assertions (unless `recordRequests` is false). */
  readonly requests: { messages: ChatMessage[]; options: ChatOptions }[] = [];
  private readonly rules: ScriptRule[];
  private readonly conversations = new Map<string, ChatMessage[]>();
  private counter = 0;
  /** Makes ids unique across client instances (a restarted process must not reuse `msg_1`). */
  private readonly idTag = randomBytes(3).toString("hex");

  constructor(private readonly options: ScriptedChatClientOptions = {}) {
    this.rules = options.rules ?? [];
    this.metadata = { providerName: options.name ?? "scripted", supportsServiceStorage: options.hosted ?? false };
  }

  /** The conversation a hosted client keeps under an id (for assertions). */
  conversation(id: string): readonly ChatMessage[] | undefined {
    return this.conversations.get(id);
  }

  /**
   * See `ChatClient.readsMessagesOnlyDuringCall`: what it keeps of a request (`requests`, a hosted
   * conversation, what rules see in `ScriptContext.messages`) are copies. False once `getResponse`
   * or `getStreamingResponse` is overridden or replaced (that code might keep the array): such a
   * client declares it itself.
   */
  get readsMessagesOnlyDuringCall(): boolean {
    return (
      this.getResponse === ScriptedChatClient.prototype.getResponse &&
      this.getStreamingResponse === ScriptedChatClient.prototype.getStreamingResponse
    );
  }

  async getResponse(messages: readonly ChatMessage[], options: ChatOptions = {}): Promise<ChatResponse> {
    options.signal?.throwIfAborted();
    // One copy of the request for what may keep it (`requests`, a rule function given
    // ScriptContext.messages): the caller may reuse the array once this call is over.
    const record = this.options.recordRequests !== false;
    const sent =
      record || this.rules.some((r) => typeof r.when === "function" || typeof r.reply === "function")
        ? [...messages]
        : messages;
    if (record) this.requests.push({ messages: sent as ChatMessage[], options });
    const seen = this.visibleMessages(sent, options);
    const last = lastUserMessage(messages);
    const context: ScriptContext = {
      text: last ? messageText(last) : "",
      messages: seen,
      instructions: options.instructions ?? "",
      options,
    };
    const contents = this.contentsFor(context, messages);
    const reply: ChatMessage = { role: "assistant", contents, messageId: `msg_${this.idTag}_${++this.counter}` };
    const usage: UsageDetails = {
      inputTokenCount: seen.reduce((n, m) => n + words(messageText(m)), 0),
      outputTokenCount: words(messageText(reply)),
    };
    usage.totalTokenCount = usage.inputTokenCount! + usage.outputTokenCount!;
    if (this.options.usage !== false) reply.contents.push({ $type: "usage", details: usage });
    const response: ChatResponse = { messages: [reply], usage, responseId: `resp_${this.idTag}_${this.counter}` };
    const conversationId = this.keep(options, [...messages, reply]);
    if (conversationId !== undefined) response.conversationId = conversationId;
    return response;
  }

  async *getStreamingResponse(
    messages: readonly ChatMessage[],
    options: ChatOptions = {},
  ): AsyncIterable<ChatResponseUpdate> {
    const response = await this.getResponse(messages, options);
    for (const message of response.messages) {
      for (const content of message.contents) {
        if (content.$type === "text") {
          // Word-sized chunks, as a real service streams tokens.
          for (const piece of content.text.match(/\S+\s*|\s+/g) ?? [""]) {
            options.signal?.throwIfAborted();
            yield {
              role: message.role,
              messageId: message.messageId,
              contents: [{ $type: "text", text: piece }],
              conversationId: response.conversationId,
            };
          }
        } else {
          yield {
            role: message.role,
            messageId: message.messageId,
            contents: [content],
            conversationId: response.conversationId,
          };
        }
      }
    }
  }

  private visibleMessages(messages: readonly ChatMessage[], options: ChatOptions): readonly ChatMessage[] {
    // `messages` is already the request's copy: no second copy of a long history per request.
    if (options.conversationId === undefined) return messages;
    if (!this.metadata.supportsServiceStorage) {
      throw new StatebagError(
        "client-capability",
        `${this.metadata.providerName} client keeps no conversations but got conversation id ${JSON.stringify(options.conversationId)}`,
      );
    }
    const stored = this.conversations.get(idKey(options.conversationId));
    if (!stored) {
      throw new StatebagError(
        "conversation-not-found",
        `conversation ${JSON.stringify(options.conversationId)} does not exist on this service`,
        {
          hint: "the service forgot it or it belongs to another service; start a new session",
        },
      );
    }
    return [...stored, ...messages];
  }

  /** Keeps the exchange when acting as a hosted service; returns the id to continue with. */
  private keep(options: ChatOptions, exchange: ChatMessage[]): string | undefined {
    if (!this.metadata.supportsServiceStorage || options.store === false) return undefined;
    const previous = options.conversationId === undefined ? undefined : idKey(options.conversationId);
    const history = previous === undefined ? [] : (this.conversations.get(previous) ?? []);
    const id =
      previous === undefined || this.options.newConversationIdPerTurn
        ? `conv_${this.idTag}_${++this.counter}`
        : previous;
    this.conversations.set(id, [...history, ...exchange]);
    return id;
  }

  private contentsFor(context: ScriptContext, sent: readonly ChatMessage[]): AIContent[] {
    const lastSent = sent[sent.length - 1];
    // After a tool result, report it rather than calling the tool again.
    if (lastSent?.role === "tool") {
      const results = lastSent.contents.filter((c) => c.$type === "functionResult");
      return [{ $type: "text", text: results.map((r) => `The tool returned ${JSON.stringify(r.result)}.`).join(" ") }];
    }
    for (const rule of this.rules) {
      if (matches(rule.when, context))
        return this.toContents(typeof rule.reply === "function" ? rule.reply(context) : rule.reply);
    }
    return [{ $type: "text", text: builtInReply(context) }];
  }

  private toContents(reply: ScriptedReply): AIContent[] {
    if (typeof reply === "string") return [{ $type: "text", text: reply }];
    if ("toolCall" in reply) {
      const call: AIContent = {
        $type: "functionCall",
        callId: `call_${this.idTag}_${++this.counter}`,
        name: reply.toolCall.name,
      };
      if (reply.toolCall.arguments) call.arguments = reply.toolCall.arguments;
      return [call];
    }
    return [...reply.contents];
  }
}

function lastUserMessage(messages: readonly ChatMessage[]): ChatMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "user") return messages[i];
  return undefined;
}

function idKey(id: ServiceSessionId): string {
  return typeof id === "string" ? id : JSON.stringify(Object.entries(id).sort());
}

function matches(when: ScriptRule["when"], context: ScriptContext): boolean {
  if (typeof when === "string") return context.text.toLowerCase().includes(when.toLowerCase());
  if (when instanceof RegExp) return when.test(context.text);
  return when(context);
}

/** Replies that make memory visible: names, summaries, and a count of what the model can see. */
function builtInReply(context: ScriptContext): string {
  const text = context.text.trim();
  const name = /\bmy name is (\w[\w-]*)/i.exec(text);
  if (name) return `Nice to meet you, ${name[1]}.`;
  if (/\bwhat(?:'s| is) my name\b/i.test(text)) {
    const everything = [
      context.instructions,
      ...context.messages.filter((m) => m.role === "user").map(messageText),
    ].join("\n");
    const found = [...everything.matchAll(/\bmy name is (\w[\w-]*)/gi)].pop();
    return found ? `Your name is ${found[1]}.` : "I don't know your name yet.";
  }
  if (/^summari[sz]e\b/i.test(text)) {
    const said = [...text.matchAll(/^user: (.*)$/gim)].map((m) => m[1].trim()).filter(Boolean);
    return said.length ? `The user said: ${said.join("; ")}.` : "Nothing to summarize yet.";
  }
  const earlier = context.messages.length - 1;
  return `You said: "${text}". I can see ${earlier} earlier message${earlier === 1 ? "" : "s"}.`;
}
