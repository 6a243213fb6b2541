/**
 * What the stream built is what a reload shows (issue 34, item 16): a chat is driven the way
 * `useChat` drives it (its message list; a user message appended, the streamed reply read with
 * `ai`'s `readUIMessageStream` and appended; an approval answered in the last assistant message,
 * whose continuation streams into that same message), and after every turn `GET /chats/:id` must
 * give exactly that list back: the same messages, ids and parts (tool states, call ids, inputs,
 * outputs, approvals). Only `createChatHandler`'s public API and Requests are used.
 */
import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import { createChatHandler, type ChatHandler } from "../../src/runtime/http/handler.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import type { ChatClient, ChatOptions, ChatResponseUpdate } from "../../src/runtime/agent/chat-client.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { BASE, call, Gate, harness, post, readReply, waitFor } from "./setup.js";

type AnyPart = Record<string, unknown> & { type: string };

/** A chat server over the scripted model, with tools that run, fail and need approval. */
function server(options: { usage?: boolean; thinking?: boolean } = {}) {
  const runs = { get_weather: 0, send_email: 0, flaky: 0 };
  const tools: AITool[] = [
    {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
      execute: ({ city }) => (runs.get_weather++, { city, celsius: 19 }),
    },
    {
      name: "send_email",
      description: "Send an email",
      parameters: { type: "object", properties: { to: { type: "string" } } },
      requiresApproval: true,
      execute: ({ to }) => (runs.send_email++, { sent: true, to }),
    },
    {
      name: "flaky",
      description: "Always fails",
      parameters: { type: "object", properties: {} },
      execute: () => {
        runs.flaky++;
        throw new Error("the flaky service is down");
      },
    },
  ];
  const client = new ScriptedChatClient({
    usage: options.usage ?? false,
    rules: [
      {
        when: /weather in (\w+)/i,
        reply: (c) => ({
          toolCall: { name: "get_weather", arguments: { city: /weather in (\w+)/i.exec(c.text)![1] } },
        }),
      },
      {
        when: /email (\S+@\S+)/i,
        reply: (c) => ({ toolCall: { name: "send_email", arguments: { to: /email (\S+@\S+)/i.exec(c.text)![1] } } }),
      },
      { when: /flaky/i, reply: { toolCall: { name: "flaky" } } },
      {
        // Two calls in one step: one runs at once, one waits for approval.
        when: /both/i,
        reply: {
          contents: [
            { $type: "functionCall", callId: "call-both-weather", name: "get_weather", arguments: { city: "Porto" } },
            {
              $type: "functionCall",
              callId: "call-both-email",
              name: "send_email",
              arguments: { to: "bo@example.com" },
            },
          ],
        },
      },
      {
        when: /think/i,
        reply: {
          contents: [
            { $type: "reasoning", text: "The user wants a number; 42 is traditional." },
            { $type: "text", text: "The answer is 42." },
          ],
        },
      },
    ],
  });
  const agent = new ChatClientAgent({
    client: options.thinking ? new Thinking(client) : client,
    name: "roundtrip",
    tools,
  });
  const errors: unknown[] = [];
  const handler = createChatHandler({
    agent,
    store: new MemorySessionStore(),
    owner: (request) => request.headers.get("x-owner") ?? "",
    onError: (error) => errors.push(error),
  });
  return { handler, runs, errors };
}

/** A model that thinks aloud before every answer (streamed or not): a reasoning block in every step. */
class Thinking implements ChatClient {
  constructor(private readonly inner: ChatClient) {}
  get metadata() {
    return this.inner.metadata;
  }
  async getResponse(messages: readonly ChatMessage[], options?: ChatOptions) {
    const response = await this.inner.getResponse(messages, options);
    const [first, ...rest] = response.messages;
    const thought = { ...first, contents: [{ $type: "reasoning" as const, text: "Let me think." }, ...first.contents] };
    return { ...response, messages: [thought, ...rest] };
  }
  async *getStreamingResponse(
    messages: readonly ChatMessage[],
    options?: ChatOptions,
  ): AsyncIterable<ChatResponseUpdate> {
    let first = true;
    for await (const update of this.inner.getStreamingResponse(messages, options)) {
      if (first) yield { ...update, contents: [{ $type: "reasoning", text: "Let me think." }] };
      first = false;
      yield update;
    }
  }
}

/** A chat as `useChat` holds it: its messages, changed only the way `useChat` changes them. */
class Chat {
  messages: UIMessage[] = [];
  private n = 0;
  constructor(
    private readonly handler: ChatHandler,
    readonly id: string,
  ) {}

  /** Sends a user message; the streamed reply is appended. */
  async say(text: string): Promise<UIMessage> {
    this.messages.push({ id: `${this.id}-u${++this.n}`, role: "user", parts: [{ type: "text", text }] });
    const response = await post(this.handler, { id: this.id, messages: this.messages, trigger: "submit-message" });
    expect(response.status).toBe(200);
    const { message, errors } = await readReply(response);
    expect(errors).toEqual([]);
    this.messages.push(message);
    return message;
  }

  /** Answers the approvals of the last message (`addToolApprovalResponse`); the continuation streams into it. */
  async answer(answers: Record<string, { approved: boolean; reason?: string }>): Promise<UIMessage> {
    const last = this.messages.at(-1)!;
    const answered: UIMessage = {
      ...last,
      parts: last.parts.map((p) => {
        const part = p as AnyPart;
        const approval = part.approval as { id: string } | undefined;
        const given = approval && part.state === "approval-requested" ? answers[part.toolCallId as string] : undefined;
        return (
          given ? { ...part, state: "approval-responded", approval: { id: approval!.id, ...given } } : p
        ) as never;
      }),
    };
    this.messages[this.messages.length - 1] = answered;
    const response = await post(this.handler, { id: this.id, messages: this.messages, trigger: "submit-message" });
    expect(response.status).toBe(200);
    const { message, errors } = await readReply(response, answered);
    expect(errors).toEqual([]);
    this.messages[this.messages.length - 1] = message;
    return message;
  }

  /** What a reload shows. */
  async reload(): Promise<UIMessage[]> {
    const response = await call(this.handler, "GET", `/chats/${this.id}`);
    expect(response.status).toBe(200);
    return (await response.json()) as UIMessage[];
  }

  /**
   * The reload equals what the streams built, message for message (as JSON: what useChat would
   * save), metadata included. One thing only the stream has is left out: a reasoning part's `id`
   * (the stream's block id, which ai copies into the part; statebag does not store it and ai never
   * sends it to a model). With `metadata: false` the metadata is left out too.
   */
  async expectReloadSame(options: { metadata?: boolean } = {}): Promise<UIMessage[]> {
    const stored = await this.reload();
    const shown = JSON.parse(JSON.stringify(this.messages)) as UIMessage[];
    for (const message of shown)
      for (const part of message.parts as AnyPart[]) if (part.type === "reasoning") delete part.id;
    const view = (m: UIMessage) =>
      options.metadata === false
        ? { id: m.id, role: m.role, parts: m.parts }
        : { id: m.id, role: m.role, metadata: m.metadata, parts: m.parts };
    expect(stored.map((m) => m.id)).toEqual(shown.map((m) => m.id));
    expect(stored.map(view)).toEqual(shown.map(view));
    return stored;
  }
}

const types = (message: UIMessage) => message.parts.map((p) => p.type);
const tool = (message: UIMessage, type: string) => message.parts.find((p) => p.type === type) as AnyPart;

describe("a reload shows what the stream built", () => {
  it("plain text turns", async () => {
    const { handler } = server();
    const chat = new Chat(handler, "rt-text");
    const reply = await chat.say("Hi, my name is Ada.");
    expect(types(reply)).toEqual(["step-start", "text"]);
    await chat.say("What is my name?");
    const stored = await chat.expectReloadSame();
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("a tool call with its result, then the answer: one message of two steps", async () => {
    const { handler, runs } = server();
    const chat = new Chat(handler, "rt-tool");
    const reply = await chat.say("What's the weather in Lisbon?");
    expect(types(reply)).toEqual(["step-start", "tool-get_weather", "step-start", "text"]);
    expect(tool(reply, "tool-get_weather")).toMatchObject({ state: "output-available", output: { city: "Lisbon" } });
    expect(runs.get_weather).toBe(1);
    const stored = await chat.expectReloadSame();
    expect(stored).toHaveLength(2);
  });

  it("a tool that fails: output-error with its message, in the stream and after a reload", async () => {
    const { handler, runs } = server();
    const chat = new Chat(handler, "rt-flaky");
    const reply = await chat.say("Call the flaky tool");
    expect(runs.flaky).toBe(1);
    expect(tool(reply, "tool-flaky")).toMatchObject({
      state: "output-error",
      errorText: "the flaky service is down",
    });
    await chat.expectReloadSame();
  });

  it("an approval requested, then approved: the continuation joins the same message", async () => {
    const { handler, runs } = server();
    const chat = new Chat(handler, "rt-approve");
    const asked = await chat.say("Please email ada@example.com");
    expect(tool(asked, "tool-send_email")).toMatchObject({ state: "approval-requested" });
    await chat.expectReloadSame();

    const callId = tool(asked, "tool-send_email").toolCallId as string;
    const done = await chat.answer({ [callId]: { approved: true } });
    expect(runs.send_email).toBe(1);
    expect(types(done)).toEqual(["step-start", "tool-send_email", "step-start", "text"]);
    expect(tool(done, "tool-send_email")).toMatchObject({
      state: "output-available",
      approval: { approved: true },
      output: { sent: true },
    });
    const stored = await chat.expectReloadSame();
    expect(stored).toHaveLength(2);
  });

  it("an approval denied with a reason: output-denied, the same after a reload", async () => {
    const { handler, runs } = server();
    const chat = new Chat(handler, "rt-deny");
    const asked = await chat.say("Please email bob@example.com");
    const callId = tool(asked, "tool-send_email").toolCallId as string;
    const done = await chat.answer({ [callId]: { approved: false, reason: "not now" } });
    expect(runs.send_email).toBe(0);
    expect(tool(done, "tool-send_email")).toMatchObject({
      state: "output-denied",
      approval: { approved: false, reason: "not now" },
    });
    await chat.expectReloadSame();
  });

  it("a step with a tool that runs and one that waits for approval, answered after a reload", async () => {
    const { handler, runs } = server();
    const chat = new Chat(handler, "rt-both");
    const asked = await chat.say("Do both, please");
    expect(tool(asked, "tool-send_email")).toMatchObject({ state: "approval-requested" });
    await chat.expectReloadSame();

    // The page is reloaded: the approval is answered on the stored form.
    chat.messages = await chat.reload();
    await chat.answer({ "call-both-email": { approved: true } });
    expect(runs).toMatchObject({ get_weather: 1, send_email: 1 });
    const stored = await chat.expectReloadSame();
    expect(stored).toHaveLength(2);
    expect(tool(stored[1], "tool-get_weather")).toMatchObject({ state: "output-available" });
    expect(tool(stored[1], "tool-send_email")).toMatchObject({ state: "output-available", output: { sent: true } });
  });

  it("reasoning and text in one step", async () => {
    const { handler } = server();
    const chat = new Chat(handler, "rt-think");
    const reply = await chat.say("Think hard: what is the answer?");
    expect(types(reply)).toEqual(["step-start", "reasoning", "text"]);
    await chat.expectReloadSame();
  });

  it("a conversation of every kind of turn, with usage, stays the same message for message", async () => {
    const { handler, errors } = server({ usage: true });
    const chat = new Chat(handler, "rt-all");
    await chat.say("Hi, my name is Ada.");
    await chat.say("What's the weather in Oslo?");
    const asked = await chat.say("Please email ada@example.com");
    await chat.answer({ [tool(asked, "tool-send_email").toolCallId as string]: { approved: true } });
    await chat.say("Think, then answer");
    await chat.say("Call the flaky tool");
    const stored = await chat.expectReloadSame();
    // The turn's usage, summed over its steps, is the reloaded message's metadata, and the stream's.
    expect(stored[3].metadata).toMatchObject({ usage: { inputTokenCount: expect.any(Number) } });
    expect(stored.map((m) => m.role)).toEqual(Array.from({ length: 5 }, () => ["user", "assistant"]).flat());
    expect(errors).toEqual([]);
  });
});

describe("a turn that ended early reads back as the stream built it", () => {
  const stop = (handler: ChatHandler, id: string) =>
    handler(
      new Request(`${BASE}/chat/${id}/stop`, {
        method: "POST",
        headers: { "x-owner": "ada", "content-type": "application/json" },
      }),
    );

  it("stopped mid-answer: [step-start, text(done)] and the stopped marker, in the stream and after a reload", async () => {
    const { handler, client } = harness();
    const chat = new Chat(handler, "rt-stop");
    await chat.say("Hi, my name is Ada.");
    const gate = (client.gate = new Gate());
    chat.messages.push({ id: "rt-stop-u2", role: "user", parts: [{ type: "text", text: "Tell me a story" }] });
    const reading = readReply(
      await post(handler, { id: "rt-stop", messages: chat.messages, trigger: "submit-message" }),
    );
    await gate.reachedPromise;
    const stopped = await stop(handler, "rt-stop");
    expect(stopped.status).toBe(200);
    const { kept } = (await stopped.json()) as { kept: UIMessage };
    const { message } = await reading;
    chat.messages.push(message);
    expect(types(message)).toEqual(["step-start", "text"]);
    expect(message.parts[1]).toMatchObject({ state: "done" });
    const stored = await chat.expectReloadSame();
    expect(stored.at(-1)!.metadata).toEqual({ statebag: { finish: "stopped" } });
    expect(kept).toEqual(stored.at(-1));
  });

  it("interrupted (its server died) after a tool step: both steps, as the stream showed them", async () => {
    const { handler, store } = harness({ leaseMs: 300 });
    // The chunks a real tool turn streams, cut in the middle of its second step's text.
    const source = await readReply(
      await post(handler, {
        id: "rt-src",
        messages: [{ id: "s1", role: "user", parts: [{ type: "text", text: "weather in Oslo?" }] }],
        trigger: "submit-message",
      }),
    );
    const cut = source.chunks.findIndex((c) => c.type === "text-delta") + 1;
    expect(cut).toBeGreaterThan(0);
    const streamId = `dead-${Date.now()}`;
    const chunks = source.chunks
      .slice(0, cut)
      .map((c) => (c.type === "start" ? { ...c, messageId: `msg-${streamId}` } : c));

    const chat = new Chat(handler, "rt-dead");
    await chat.say("Hello");
    // What a server killed mid-turn leaves: the user's message, the label, chunks, a lease nobody renews.
    const before = (await store.get("ui-chat/rt-dead"))!;
    await store.streams!.open(streamId, { sessionId: "ui-chat/rt-dead", owner: "ada", leaseMs: 300 });
    await store.streams!.append(
      streamId,
      chunks.map((c) => JSON.stringify(c)),
      300,
    );
    const session = structuredClone(before.session);
    const history = session.stateBag["statebag.chatHistory"] as unknown as { messages: unknown[] };
    history.messages = [
      ...history.messages,
      { role: "user", contents: [{ $type: "text", text: "weather in Oslo?" }], messageId: "rt-dead-u2" },
    ];
    await store.save(session, {
      expectedRevision: before.revision,
      meta: { owner: "ada", labels: { "statebag.type": "chat", "statebag.activeStream": streamId } },
    });
    chat.messages.push({ id: "rt-dead-u2", role: "user", parts: [{ type: "text", text: "weather in Oslo?" }] });
    const shown = await readReply(
      new Response(
        new ReadableStream({
          start(controller) {
            // Read as a client holds it once the reply is known to be over: its open text block closed.
            const open = chunks.at(-1) as { id: string };
            for (const c of [...chunks, { type: "text-end", id: open.id }])
              controller.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(c)}\n\n`));
            controller.close();
          },
        }),
        { headers: { "x-vercel-ai-ui-message-stream": "v1" } },
      ),
    );
    expect(types(shown.message)).toEqual(["step-start", "tool-get_weather", "step-start", "text"]);
    await waitFor(async () => ((await chat.reload()).some((m) => m.id === `msg-${streamId}`) ? true : undefined));
    chat.messages.push(shown.message);
    // The stream was cut: it never said how it ended; the reload says interrupted.
    const stored = await chat.expectReloadSame({ metadata: false });
    expect(stored.at(-1)!.metadata).toEqual({ statebag: { finish: "interrupted" } });
  });

  it("reasoning block ids are unique in a message whose approval continuation streams into it", async () => {
    const { handler } = server({ thinking: true });
    const chat = new Chat(handler, "rt-rsn");
    const asked = await chat.say("Please email ada@example.com");
    const done = await chat.answer({ [tool(asked, "tool-send_email").toolCallId as string]: { approved: true } });
    const ids = (done.parts as AnyPart[]).filter((p) => p.type === "reasoning").map((p) => p.id);
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    await chat.expectReloadSame();
  });
});
