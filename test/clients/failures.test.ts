/**
 * How model clients fail and retry (#21.7, #21.8): a connection cut mid-response and an error frame
 * inside a 200 stream are `ModelServiceError`s that say what happened and whether a retry may help;
 * both clients retry by one policy (`maxRetries`, never after output reached the caller); streamed
 * and non-streamed turns are stored alike; Conversations mode leaves no orphan conversation.
 */
import type { LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { AISDKChatClient } from "../../src/runtime/agent/clients/ai-sdk-chat-client.js";
import { ModelServiceError } from "../../src/runtime/agent/clients/model-service-error.js";
import { OpenAIChatClient, type OpenAIChatClientOptions } from "../../src/runtime/agent/clients/openai-chat-client.js";
import { retryTiming } from "../../src/runtime/agent/clients/retry.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import {
  chatCompletion,
  outputMessage,
  response,
  streamedResponseEvents,
  streamedTextChunks,
} from "./fixtures/openai.js";
import { chatSse, responsesSse, startOpenAIServer, type OpenAITestServer } from "./openai-server.js";

let server: OpenAITestServer;
const delayMs = retryTiming.delayMs;
beforeAll(async () => {
  server = await startOpenAIServer();
  retryTiming.delayMs = () => 0; // the policy is under test, not the clock
});
afterAll(async () => {
  retryTiming.delayMs = delayMs;
  await server.close();
});
beforeEach(() => void server.requests.splice(0));

const openai = (options: Partial<OpenAIChatClientOptions> = {}) =>
  new OpenAIChatClient({ model: "gpt-4.1-mini", baseURL: server.baseURL, apiKey: "test-key", ...options });
const history = (session: AgentSession) =>
  (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages;
const sse = (chunks: readonly unknown[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("");
const drain = async (stream: AsyncIterable<unknown>) => {
  for await (const _ of stream);
};

/** Runs one turn (streamed or not) and returns what it threw. */
async function failure(agent: ChatClientAgent, session: AgentSession, streamed: boolean): Promise<unknown> {
  return (streamed ? drain(agent.runStream("Hello", session)) : agent.run("Hello", session)).then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("a connection cut mid-response", () => {
  const partialChat = sse(streamedTextChunks(["Hel"]).slice(0, 2)); // role chunk and one delta, no [DONE]
  const partialResponses = responsesSse(streamedResponseEvents("resp_cut", ["Hel"]).slice(0, 3));
  const cases = [
    {
      name: "Chat Completions, non-streamed",
      api: "chat",
      streamed: false,
      cut: { cut: '{"id":"chatcmpl-cut","object":"chat.completion","choices":[{"index":0,', as: "json" },
    },
    { name: "Chat Completions, streamed", api: "chat", streamed: true, cut: { cut: partialChat, as: "sse" } },
    {
      name: "Responses, non-streamed",
      api: "responses",
      streamed: false,
      cut: { cut: '{"id":"resp_cut","object":"response","output":[', as: "json" },
    },
    { name: "Responses, streamed", api: "responses", streamed: true, cut: { cut: partialResponses, as: "sse" } },
  ] as const;

  it.each(cases)(
    "$name: a retryable ModelServiceError naming the cut; the session is unchanged",
    async ({ api, streamed, cut }) => {
      const agent = new ChatClientAgent({ client: openai({ api, maxRetries: 0 }) });
      const session = agent.createSession({ kind: "local" });
      const before = JSON.stringify(session);
      server.reply(cut);
      const error = await failure(agent, session, streamed);
      expect(error).toBeInstanceOf(ModelServiceError);
      const e = error as ModelServiceError;
      expect(e.message).toMatch(/^the connection to openai was cut before the answer was complete: /);
      expect(e.details).toMatchObject({ provider: "openai", retryable: true });
      expect(e.status).toBeUndefined();
      expect(JSON.stringify(session)).toBe(before);
    },
  );

  it("non-streamed: retried, and the retry's answer is stored", async () => {
    const agent = new ChatClientAgent({ client: openai({ maxRetries: 1 }) });
    const session = agent.createSession();
    server.reply({ cut: '{"id":"chatcmpl-cut",', as: "json" }, { json: chatCompletion({ content: "Hello!" }) });
    expect((await agent.run("Hello", session)).text).toBe("Hello!");
    expect(server.requests).toHaveLength(2);
  });

  it("streamed: retried while nothing reached the caller, never after", async () => {
    const agent = new ChatClientAgent({ client: openai({ maxRetries: 2 }) });
    const [role] = streamedTextChunks(["Hi"]);
    server.reply({ cut: sse([role]), as: "sse" }, { sse: chatSse(streamedTextChunks(["Hi ", "there."])) });
    const texts: string[] = [];
    for await (const u of agent.runStream("Hello"))
      for (const c of u.contents) if (c.$type === "text") texts.push(c.text);
    expect(texts.join("")).toBe("Hi there.");
    expect(server.requests).toHaveLength(2);

    server.requests.splice(0);
    server.reply({ cut: partialChat, as: "sse" });
    const error = await failure(agent, agent.createSession(), true);
    expect(error).toMatchObject({ code: "model-service", details: { retryable: true } });
    expect(server.requests).toHaveLength(1); // "Hel" was shown: a second answer would not match it
  });
});

describe("an error frame inside a 200 stream", () => {
  it('Chat Completions ({"error": ...} chunk): reported as the service\'s mid-stream error, not as unreachable', async () => {
    const agent = new ChatClientAgent({ client: openai({ maxRetries: 0 }) });
    const [role, delta] = streamedTextChunks(["Hel"]);
    server.reply({
      sse: sse([
        role,
        delta,
        {
          error: {
            message: "The server had an error while processing your request.",
            type: "server_error",
            param: null,
            code: null,
          },
        },
      ]),
    });
    const error = (await failure(agent, agent.createSession(), true)) as ModelServiceError;
    expect(error).toBeInstanceOf(ModelServiceError);
    expect(error.message).toMatch(
      /^openai reported an error in the middle of its streamed answer: The server had an error/,
    );
    expect(error.message).not.toMatch(/could not reach/);
    expect(error.details).toMatchObject({
      serviceMessage: "The server had an error while processing your request.",
      retryable: true,
    });
  });

  it("Responses (event: error): the same, with the service's code", async () => {
    const agent = new ChatClientAgent({ client: openai({ api: "responses", maxRetries: 0 }) });
    const events = responsesSse(streamedResponseEvents("resp_err", ["Hel"]).slice(0, 3));
    server.reply({
      sse: `${events}event: error\ndata: ${JSON.stringify({ type: "error", code: "rate_limit_exceeded", message: "Rate limit reached for gpt-4.1-mini.", param: null, sequence_number: 3 })}\n\n`,
    });
    const error = (await failure(agent, agent.createSession({ kind: "hosted" }), true)) as ModelServiceError;
    expect(error).toBeInstanceOf(ModelServiceError);
    expect(error.message).not.toMatch(/could not reach/);
    expect(error.message).toContain("Rate limit reached for gpt-4.1-mini.");
    expect(error.details).toMatchObject({ serviceCode: "rate_limit_exceeded", retryable: true });
  });
});

describe("one retry policy", () => {
  it("both clients default to the same maxRetries and refuse a bad one", () => {
    const model = new MockLanguageModelV4();
    expect(new AISDKChatClient(model).maxRetries).toBe(openai().maxRetries);
    expect(openai().maxRetries).toBe(2);
    expect(() => new AISDKChatClient(model, { maxRetries: -1 })).toThrow(/maxRetries must be a non-negative integer/);
    expect(() => openai({ maxRetries: 1.5 })).toThrow(/maxRetries must be a non-negative integer/);
  });

  it("OpenAI: a 429 is retried (its retry-after kept on the error); a 400 is not", async () => {
    const client = openai({ maxRetries: 1 });
    server.reply(
      {
        status: 429,
        json: { error: { message: "Slow down", type: "tokens", code: "rate_limit_exceeded" } },
        headers: { "retry-after-ms": "20" },
      },
      { json: chatCompletion({ content: "OK" }) },
    );
    expect((await new ChatClientAgent({ client }).run("hi")).text).toBe("OK");
    expect(server.requests).toHaveLength(2);

    server.requests.splice(0);
    server.reply({
      status: 429,
      json: { error: { message: "Slow down", type: "tokens", code: "rate_limit_exceeded" } },
      headers: { "retry-after-ms": "20" },
    });
    const limited = await new ChatClientAgent({ client: openai({ maxRetries: 0 }) }).run("hi").catch((e: unknown) => e);
    expect(limited).toMatchObject({ details: { status: 429, retryable: true, retryAfterMs: 20 } });

    server.requests.splice(0);
    server.reply({ status: 400, json: { error: { message: "Bad input", type: "invalid_request_error", code: null } } });
    await expect(new ChatClientAgent({ client }).run("hi")).rejects.toMatchObject({
      details: { status: 400, retryable: false },
    });
    expect(server.requests).toHaveLength(1);
  });

  const generated = (text: string): LanguageModelV4GenerateResult => ({
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: undefined },
    usage: {
      inputTokens: { total: 3, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 1, text: undefined, reasoning: undefined },
    },
    warnings: [],
  });
  const apiError = (statusCode: number, isRetryable: boolean) =>
    Object.assign(new Error(`HTTP ${statusCode}`), { name: "AI_APICallError", statusCode, isRetryable });

  it("AI SDK: a retryable failure or a cut connection is retried; a refused request is not", async () => {
    let calls = 0;
    const failures = [
      apiError(503, true),
      new TypeError("terminated", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) }),
    ];
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        const failure = failures[calls++];
        if (failure) throw failure;
        return generated("third time");
      },
    });
    expect((await new ChatClientAgent({ client: new AISDKChatClient(model) }).run("hi")).text).toBe("third time");
    expect(calls).toBe(3);

    const cut = await new ChatClientAgent({
      client: new AISDKChatClient(new MockLanguageModelV4({ doGenerate: async () => Promise.reject(failures[1]) }), {
        maxRetries: 0,
      }),
    })
      .run("hi")
      .catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(ModelServiceError);
    expect((cut as ModelServiceError).details).toMatchObject({
      retryable: true,
      serviceMessage: "terminated: other side closed [UND_ERR_SOCKET]",
    });

    let refused = 0;
    const strict = new MockLanguageModelV4({
      doGenerate: async () => Promise.reject((refused++, apiError(400, false))),
    });
    await expect(new ChatClientAgent({ client: new AISDKChatClient(strict) }).run("hi")).rejects.toMatchObject({
      details: { status: 400, retryable: false },
    });
    expect(refused).toBe(1);
  });

  it("AI SDK: a stream is retried before any output, never after", async () => {
    const stream = (parts: LanguageModelV4StreamPart[]) => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start: (c) => (parts.forEach((p) => c.enqueue(p)), c.close()),
      }),
    });
    const answer: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Recovered." },
      { type: "text-end", id: "t" },
    ];
    let calls = 0;
    const early = new MockLanguageModelV4({
      doStream: async () => stream(calls++ === 0 ? [{ type: "error", error: apiError(503, true) }] : answer),
    });
    let text = "";
    for await (const u of new ChatClientAgent({ client: new AISDKChatClient(early) }).runStream("hi"))
      for (const c of u.contents) if (c.$type === "text") text += c.text;
    expect(text).toBe("Recovered.");
    expect(calls).toBe(2);

    let lateCalls = 0;
    const late = new MockLanguageModelV4({
      doStream: async () => (
        lateCalls++, stream([...answer.slice(0, 2), { type: "error", error: apiError(503, true) }])
      ),
    });
    await expect(
      drain(new ChatClientAgent({ client: new AISDKChatClient(late) }).runStream("hi")),
    ).rejects.toMatchObject({ details: { status: 503, retryable: true } });
    expect(lateCalls).toBe(1);
  });
});

describe("streamed and non-streamed turns are stored alike", () => {
  it("Chat Completions: same message, createdAt included", async () => {
    const agent = new ChatClientAgent({ client: openai({ maxRetries: 0 }) });
    const plain = agent.createSession();
    const streamed = agent.createSession();
    const completion = chatCompletion(
      { content: "Hi Ada!" },
      { usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } },
    );
    const chunks = streamedTextChunks(["Hi ", "Ada!"]).map((c) => ({ ...c, id: completion.id }));
    server.reply({ json: completion }, { sse: chatSse(chunks) });
    await agent.run("Hi", plain);
    await drain(agent.runStream("Hi", streamed));
    expect(history(plain)[1].createdAt).toBe("2025-11-26T14:03:12.000Z");
    expect(history(streamed)[1]).toEqual(history(plain)[1]);
  });

  it("Responses: same message, createdAt included", async () => {
    const agent = new ChatClientAgent({ client: openai({ api: "responses", maxRetries: 0 }) });
    const plain = agent.createSession({ kind: "local" });
    const streamed = agent.createSession({ kind: "local" });
    server.reply(
      { json: response([outputMessage("msg_a", "Hi Ada!")], { id: "resp_same" }) },
      { sse: responsesSse(streamedResponseEvents("resp_same", ["Hi ", "Ada!"])) },
    );
    await agent.run("Hi", plain);
    await drain(agent.runStream("Hi", streamed));
    expect(history(plain)[1].createdAt).toBe("2025-11-26T14:03:12.000Z");
    expect(history(streamed)[1]).toEqual(history(plain)[1]);
  });

  it("AI SDK: same message, createdAt included", async () => {
    const timestamp = new Date("2026-11-26T10:00:00Z");
    const usage = {
      inputTokens: { total: 3, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 2, text: undefined, reasoning: undefined },
    };
    const model = new MockLanguageModelV4({
      doGenerate: {
        content: [{ type: "text", text: "Hi Ada!" }],
        finishReason: { unified: "stop", raw: undefined },
        usage,
        warnings: [],
        response: { id: "gen-same", timestamp, modelId: "mock" },
      },
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(c) {
            for (const p of [
              { type: "response-metadata", id: "gen-same", timestamp, modelId: "mock" },
              { type: "text-start", id: "t" },
              { type: "text-delta", id: "t", delta: "Hi " },
              { type: "text-delta", id: "t", delta: "Ada!" },
              { type: "text-end", id: "t" },
              { type: "finish", usage, finishReason: { unified: "stop", raw: "stop" } },
            ] as LanguageModelV4StreamPart[])
              c.enqueue(p);
            c.close();
          },
        }),
      }),
    });
    const agent = new ChatClientAgent({ client: new AISDKChatClient(model) });
    const plain = agent.createSession();
    const streamed = agent.createSession();
    await agent.run("Hi", plain);
    await drain(agent.runStream("Hi", streamed));
    expect(history(plain)[1].createdAt).toBe(timestamp.toISOString());
    expect(history(streamed)[1]).toEqual(history(plain)[1]);
  });
});

describe("Conversations mode leaves no orphan conversation", () => {
  const conversation = { json: { id: "conv_once", object: "conversation", created_at: 1764165792, metadata: {} } };
  const failed = {
    status: 500,
    json: { error: { message: "The server had an error", type: "server_error", code: null } },
  };

  it("a failed first turn, then a successful one: one conversation, continued", async () => {
    const agent = new ChatClientAgent({
      client: openai({ api: "responses", hostedConversation: "conversation", maxRetries: 0 }),
    });
    const session = agent.createSession({ kind: "hosted" });
    server.reply(conversation, failed);
    await expect(agent.run("Hi", session)).rejects.toMatchObject({ details: { status: 500 } });
    expect(session.conversationId).toBeUndefined();
    server.reply({ json: response([outputMessage("msg_1", "Hello.")], { id: "resp_1", conversation: "conv_once" }) });
    await agent.run("Hi", session);
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/conversations", "/v1/responses", "/v1/responses"]);
    expect(server.requests[1].body.conversation).toBe("conv_once");
    expect(server.requests[2].body.conversation).toBe("conv_once");
    expect(session.conversationId).toBe("conv_once");

    // Another session's first turn never continues it: it gets a conversation of its own.
    server.requests.splice(0);
    server.reply(
      { json: { ...conversation.json, id: "conv_other" } },
      { json: response([outputMessage("msg_2", "Hi.")], { id: "resp_2", conversation: "conv_other" }) },
    );
    const other = agent.createSession({ kind: "hosted" });
    await agent.run("Hi", other);
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/conversations", "/v1/responses"]);
    expect(other.conversationId).toBe("conv_other");
  });

  it("a first turn the client retries itself, streamed: one conversation", async () => {
    const agent = new ChatClientAgent({
      client: openai({ api: "responses", hostedConversation: "conversation", maxRetries: 1 }),
    });
    const session = agent.createSession({ kind: "hosted" });
    server.reply(conversation, failed, { sse: responsesSse(streamedResponseEvents("resp_2", ["Hello."])) });
    await drain(agent.runStream("Hi", session));
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/conversations", "/v1/responses", "/v1/responses"]);
    expect(server.requests[2].body.conversation).toBe("conv_once");
    expect(session.conversationId).toBe("conv_once");
  });
});
