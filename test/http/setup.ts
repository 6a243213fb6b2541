/**
 * What the statebag/http tests share: a chat handler over a memory store and the offline scripted
 * model (get_weather; send_email, which needs approval; a "story" that waits on a gate the test
 * opens, so a stream can be interrupted at a known point without timers), a store wrapper that
 * counts reads, and the response read back the way `useChat` reads it: `ai`'s own SSE parser and
 * `readUIMessageStream`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
  type UIMessage,
  type UIMessageChunk,
} from "ai";
import type { ChatClient, ChatOptions, ChatResponseUpdate } from "../../src/runtime/agent/chat-client.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { createChatHandler, type ChatHandler, type ChatHandlerOptions } from "../../src/runtime/http/handler.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";

export const FIXTURES = join(import.meta.dirname, "../fixtures/ai-sdk-ui-requests");

/** A recorded request body (see test/fixtures/ai-sdk-ui-requests/README.txt). */
export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(FIXTURES, name), "utf8")) as Record<string, unknown>;
}

/** A gate a test opens: `wait()` resolves once `open()` was called, or rejects when the signal aborts. */
export class Gate {
  private release!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  /** Resolves when the model reached the gate (the first piece of the story was streamed). */
  reached!: () => void;
  readonly reachedPromise = new Promise<void>((resolve) => (this.reached = resolve));
  open(): void {
    this.release();
  }
  wait(signal: AbortSignal | undefined): Promise<void> {
    this.reached();
    if (!signal) return this.opened;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      void this.opened.then(() => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
  }
}

/**
 * The scripted model; a "story" streams up to "upon", then waits at `gate` before the rest. A
 * non-streamed call (the continuation after an approval) waits at `responseGate` when one is set.
 */
export class GatedClient implements ChatClient {
  gate: Gate | undefined;
  responseGate: Gate | undefined;
  constructor(private readonly inner: ChatClient) {}
  get metadata() {
    return this.inner.metadata;
  }
  async getResponse(messages: readonly ChatMessage[], options?: ChatOptions) {
    await this.responseGate?.wait(options?.signal);
    return this.inner.getResponse(messages, options);
  }
  async *getStreamingResponse(
    messages: readonly ChatMessage[],
    options: ChatOptions = {},
  ): AsyncIterable<ChatResponseUpdate> {
    let waited = false;
    for await (const update of this.inner.getStreamingResponse(messages, options)) {
      yield update;
      if (!waited && this.gate && update.contents.some((c) => c.$type === "text" && c.text.includes("upon"))) {
        waited = true;
        await this.gate.wait(options.signal);
      }
    }
  }
}

export interface Harness {
  handler: ChatHandler;
  store: SessionStore;
  /** Calls of each tool that actually ran. */
  toolRuns: { get_weather: number; send_email: number };
  /** `store.get` calls, by id. */
  gets: string[];
  client: GatedClient;
  errors: unknown[];
}

/** A store whose `get` calls are counted (a Proxy: every other member is the store's own). */
export function countingStore(store: SessionStore, gets: string[]): SessionStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "get") return (id: string) => (gets.push(id), target.get(id));
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A handler over `base` (default: a new memory store), with the scripted tools and the gated model. */
export function harness(
  options: Partial<Omit<ChatHandlerOptions, "agent" | "store">> = {},
  base: SessionStore = new MemorySessionStore(),
): Harness {
  const toolRuns = { get_weather: 0, send_email: 0 };
  const weather: AITool = {
    name: "get_weather",
    description: "Current weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    execute: ({ city }) => (toolRuns.get_weather++, { city, celsius: 19, conditions: "sunny" }),
  };
  const email: AITool = {
    name: "send_email",
    description: "Send an email",
    parameters: { type: "object", properties: { to: { type: "string" } }, required: ["to"] },
    requiresApproval: true,
    execute: ({ to }) => (toolRuns.send_email++, { sent: true, to }),
  };
  const client = new GatedClient(
    new ScriptedChatClient({
      usage: false,
      rules: [
        {
          when: /weather in (\w+)/i,
          reply: (ctx) => ({
            toolCall: { name: "get_weather", arguments: { city: /weather in (\w+)/i.exec(ctx.text)![1] } },
          }),
        },
        {
          when: /email (\S+@\S+)/i,
          reply: (ctx) => ({
            toolCall: { name: "send_email", arguments: { to: /email (\S+@\S+)/i.exec(ctx.text)![1] } },
          }),
        },
        { when: /story/i, reply: "Once upon a time there was a chat that was never saved." },
      ],
    }),
  );
  const agent = new ChatClientAgent({ client, name: "http-test", tools: [weather, email] });
  const gets: string[] = [];
  const store = countingStore(base, gets);
  const errors: unknown[] = [];
  const handler = createChatHandler({
    agent,
    store,
    owner: (request) => request.headers.get("x-owner") ?? "",
    onError: (error) => errors.push(error),
    ...options,
  });
  return { handler, store, toolRuns, gets, client, errors };
}

export const BASE = "http://app.test/api";

export function post(
  handler: ChatHandler,
  body: unknown,
  init: { owner?: string; signal?: AbortSignal; raw?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return handler(
    new Request(`${BASE}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-owner": init.owner ?? "ada", ...init.headers },
      body: init.raw ?? JSON.stringify(body),
      signal: init.signal,
    }),
  );
}

export function call(handler: ChatHandler, method: "GET" | "DELETE", path: string, owner = "ada"): Promise<Response> {
  return handler(new Request(`${BASE}${path}`, { method, headers: { "x-owner": owner } }));
}

/** The streamed reply as `useChat` builds it (continuing `resume`, the last assistant message, when an approval answer is sent): every chunk (validated by `ai`'s schema) and the final message. */
export async function readReply(
  response: Response,
  resume?: UIMessage,
): Promise<{ message: UIMessage; chunks: UIMessageChunk[]; errors: unknown[] }> {
  if (response.headers.get("x-vercel-ai-ui-message-stream") !== "v1")
    throw new Error(`not a UI message stream: ${response.status} ${await response.text()}`);
  const chunks: UIMessageChunk[] = [];
  const errors: unknown[] = [];
  const stream = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(part, controller) {
        if (!part.success) throw part.error;
        chunks.push(part.value);
        controller.enqueue(part.value);
      },
    }),
  );
  let message: UIMessage | undefined;
  for await (const m of readUIMessageStream({
    message: resume ? structuredClone(resume) : undefined,
    stream,
    onError: (e) => errors.push(e),
  }))
    message = structuredClone(m);
  // A continuation that changed nothing (stopped before it said anything) leaves the message as it was.
  if (!message && resume) message = structuredClone(resume);
  if (!message) throw new Error("the stream had no message");
  return { message, chunks, errors };
}

/** A user turn as DefaultChatTransport sends it (the recorded text turn, with another text and id). */
export function userTurn(chatId: string, text: string, messageId = `m-${chatId}`): Record<string, unknown> {
  const body = fixture("text-turn.json");
  const message = { id: messageId, role: "user", parts: [{ type: "text", text }] };
  return { ...body, id: chatId, messages: [message] };
}

/** Polls `probe` (with growing pauses, at most `tries` times) until it returns a value; no clock is asserted. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, Math.min(5 * (i + 1), 100)));
  }
  throw new Error("the condition was not reached");
}
