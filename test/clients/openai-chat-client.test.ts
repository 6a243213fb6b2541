/** OpenAIChatClient against a loopback server speaking the OpenAI wire format (no key, no internet). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import type { AgentResponseUpdate } from "../../src/runtime/agent/response.js";
import { approveToolCall } from "../../src/runtime/agent/approvals.js";
import { ModelServiceError, OpenAIChatClient } from "../../src/runtime/agent/clients/openai-chat-client.js";
import { UnsupportedContentError } from "../../src/runtime/agent/clients/openai-content.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import { userMessage, type ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import {
  chatCompletion,
  openAIError,
  outputCall,
  outputMessage,
  reasoningItem,
  response,
  streamedResponseEvents,
  streamedTextChunks,
  streamedToolCallChunks,
  weatherCalls,
} from "./fixtures/openai.js";
import { chatSse, responsesSse, startOpenAIServer, type OpenAITestServer } from "./openai-server.js";

let server: OpenAITestServer;
beforeAll(async () => (server = await startOpenAIServer()));
afterAll(() => server.close());
beforeEach(() => void server.requests.splice(0));

const weatherRuns: string[] = [];
const weather: AITool = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: ({ city }) => (weatherRuns.push(String(city)), { city, celsius: 21 }),
};

const chatClient = () =>
  new OpenAIChatClient({ model: "gpt-4.1-mini", baseURL: server.baseURL, apiKey: "test-key", maxRetries: 0 });
const responsesClient = (extra: Partial<ConstructorParameters<typeof OpenAIChatClient>[0]> = {}) =>
  new OpenAIChatClient({
    model: "gpt-4.1-mini",
    api: "responses",
    baseURL: server.baseURL,
    apiKey: "test-key",
    maxRetries: 0,
    ...extra,
  });
const history = (session: AgentSession) =>
  (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages;
const restart = (session: AgentSession) => deserializeSession(serializeSession(session, { validate: true }));

describe("Chat Completions (local sessions)", () => {
  it("sends the whole history with store: false and the tool schemas; stores the reply with usage", async () => {
    const agent = new ChatClientAgent({ client: chatClient(), instructions: "Be brief.", tools: [weather] });
    const session = agent.createSession();
    server.reply(
      { json: chatCompletion({ content: "Hi Ada!" }) },
      { json: chatCompletion({ content: "Your name is Ada." }, { id: "chatcmpl-second" }) },
    );
    await agent.run("Hi, I'm Ada.", session);
    const second = await agent.run("What is my name?", restart(session));

    expect(second.text).toBe("Your name is Ada.");
    const [first, next] = server.requests;
    expect(first.path).toBe("/v1/chat/completions");
    expect(first.headers.authorization).toBe("Bearer test-key");
    expect(first.body).toMatchObject({
      model: "gpt-4.1-mini",
      store: false,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi, I'm Ada." },
      ],
    });
    expect(first.body.tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: "Current weather for a city", parameters: weather.parameters },
      },
    ]);
    expect(next.body.messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi, I'm Ada." },
      { role: "assistant", content: "Hi Ada!" },
      { role: "user", content: "What is my name?" },
    ]);
    expect(history(session)[1]).toEqual({
      role: "assistant",
      messageId: "chatcmpl-CXq1mZ8vJt3aYk2LwN0pQe5R7sT9",
      createdAt: "2025-11-26T14:03:12.000Z",
      contents: [
        { $type: "text", text: "Hi Ada!" },
        {
          $type: "usage",
          details: {
            inputTokenCount: 57,
            outputTokenCount: 12,
            totalTokenCount: 69,
            cachedInputTokenCount: 0,
            reasoningTokenCount: 0,
            additionalCounts: {
              "prompt_tokens_details.audio_tokens": 0,
              "completion_tokens_details.audio_tokens": 0,
              "completion_tokens_details.accepted_prediction_tokens": 0,
              "completion_tokens_details.rejected_prediction_tokens": 0,
            },
          },
        },
      ],
    });
    expect(session.kind).toBe("local");
    expect(validateSession(session, { strict: true }).ok).toBe(true);
  });

  it("parallel tool calls: both run, and the next request carries the calls and one tool message per result", async () => {
    weatherRuns.splice(0);
    const agent = new ChatClientAgent({ client: chatClient(), tools: [weather] });
    server.reply({ json: weatherCalls }, { json: chatCompletion({ content: "Lisbon and Oslo are both 21 °C." }) });
    const result = await agent.run("Weather in Lisbon and Oslo?");
    expect(weatherRuns).toEqual(["Lisbon", "Oslo"]);
    expect(result.text).toBe("Lisbon and Oslo are both 21 °C.");
    expect(result.usage).toMatchObject({ inputTokenCount: 138, outputTokenCount: 58, cachedInputTokenCount: 64 });
    expect(server.requests[1].body.messages).toEqual([
      { role: "user", content: "Weather in Lisbon and Oslo?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_L1sbonYQ3xRz5Jd0cVh2aWfE",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Lisbon"}' },
          },
          {
            id: "call_9kPmT4vXq2NbR7sY1uZc3dHa",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_L1sbonYQ3xRz5Jd0cVh2aWfE", content: '{"city":"Lisbon","celsius":21}' },
      { role: "tool", tool_call_id: "call_9kPmT4vXq2NbR7sY1uZc3dHa", content: '{"city":"Oslo","celsius":21}' },
    ]);
  });

  it("streams: tool call pieces are joined, text arrives as deltas, reasoning_content is kept, usage comes last", async () => {
    weatherRuns.splice(0);
    const agent = new ChatClientAgent({ client: chatClient(), tools: [weather] });
    const session = agent.createSession();
    server.reply(
      { sse: chatSse(streamedToolCallChunks()) },
      { sse: chatSse(streamedTextChunks(["Both ", "are ", "21 °C."], ["Compare ", "the two."])) },
    );
    const updates: AgentResponseUpdate[] = [];
    for await (const u of agent.runStream("Weather in Lisbon and Oslo?", session)) updates.push(u);
    expect(weatherRuns).toEqual(["Lisbon", "Oslo"]);
    expect(server.requests[0].body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      store: false,
    });
    expect(
      updates
        .filter((u) => u.contents.some((c) => c.$type === "text"))
        .map((u) => (u.contents[0] as { text: string }).text),
    ).toEqual(["Both ", "are ", "21 °C."]);
    const stored = history(session);
    expect(stored[1].contents.slice(0, 2)).toEqual([
      {
        $type: "functionCall",
        callId: "call_s1AaBbCcDdEeFfGgHhIiJj",
        name: "get_weather",
        arguments: { city: "Lisbon" },
      },
      {
        $type: "functionCall",
        callId: "call_s2KkLlMmNnOoPpQqRrSsTt",
        name: "get_weather",
        arguments: { city: "Oslo" },
      },
    ]);
    expect(stored[3].contents.slice(0, 2)).toEqual([
      { $type: "reasoning", text: "Compare the two." },
      { $type: "text", text: "Both are 21 °C." },
    ]);
    expect(stored[3].contents[2]).toEqual({
      $type: "usage",
      details: { inputTokenCount: 30, outputTokenCount: 3, totalTokenCount: 33 },
    });
  });

  it("a refusal is kept as an error content (errorCode refusal) and sent back as the assistant's refusal", async () => {
    const agent = new ChatClientAgent({ client: chatClient() });
    const session = agent.createSession();
    server.reply(
      { json: chatCompletion({ refusal: "I'm sorry, I can't help with that." }) },
      { json: chatCompletion({ content: "Sure." }) },
    );
    await agent.run("Something forbidden", session);
    expect(history(session)[1].contents[0]).toEqual({
      $type: "error",
      message: "I'm sorry, I can't help with that.",
      errorCode: "refusal",
    });
    await agent.run("Something else", session);
    expect((server.requests[1].body.messages as unknown[])[1]).toEqual({
      role: "assistant",
      content: null,
      refusal: "I'm sorry, I can't help with that.",
    });
  });

  it("citations and images map exactly; content the format cannot carry is refused, not dropped", async () => {
    const agent = new ChatClientAgent({ client: chatClient() });
    const session = agent.createSession();
    const annotation = {
      type: "url_citation",
      url_citation: { url: "https://example.org/lisbon", title: "Lisbon", start_index: 0, end_index: 6 },
    };
    server.reply({ json: chatCompletion({ content: "Lisbon is sunny.", annotations: [annotation] }) });
    const image = "data:image/png;base64,iVBORw0KGgo=";
    await agent.run(
      userMessage([
        { $type: "text", text: "What is this?" },
        { $type: "data", uri: image },
      ]),
      session,
    );
    expect((server.requests[0].body.messages as unknown[])[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "image_url", image_url: { url: image } },
      ],
    });
    expect(history(session)[1].contents[0]).toEqual({
      $type: "text",
      text: "Lisbon is sunny.",
      annotations: [
        {
          $type: "citation",
          url: "https://example.org/lisbon",
          title: "Lisbon",
          annotatedRegions: [{ $type: "textSpan", start: 0, end: 6 }],
        },
      ],
    });
    const before = JSON.stringify(session);
    await expect(
      agent.run(userMessage([{ $type: "uri", uri: "https://example.org/clip.mp4", mediaType: "video/mp4" }]), session),
    ).rejects.toBeInstanceOf(UnsupportedContentError);
    expect(JSON.stringify(session)).toBe(before);
  });

  it("a service's message is quoted escaped and cut in the error's message, kept whole in its details", async () => {
    const agent = new ChatClientAgent({ client: chatClient() });
    const message = `\u001b[2J\nforged line${"m".repeat(100_000)}`;
    server.reply(openAIError(400, message, "invalid_request_error", null));
    const error = (await agent.run("hi", agent.createSession()).catch((e: unknown) => e)) as ModelServiceError;
    expect(error).toBeInstanceOf(ModelServiceError);
    expect(error.details.serviceMessage).toBe(message);
    // The message is one line (the hint is a field of its own): no forged line, no control character.
    const line = error.message;
    expect(line.length).toBeLessThan(1_200);
    expect(line).not.toMatch(/[\u0000-\u001f]/);
    expect(line).toContain(`(${message.length} chars)`);
  });

  it("API errors become ModelServiceError with the status and the service's message; the session is unchanged", async () => {
    const agent = new ChatClientAgent({ client: chatClient() });
    const session = agent.createSession();
    server.reply({ json: chatCompletion({ content: "First." }) });
    await agent.run("first", session);
    const before = JSON.stringify(session);
    for (const [status, message, type, code, retryable] of [
      [
        429,
        "Rate limit reached for gpt-4.1-mini on tokens per min (TPM): Limit 200000, Used 199812.",
        "tokens",
        "rate_limit_exceeded",
        true,
      ],
      [500, "The server had an error while processing your request. Sorry about that!", "server_error", null, true],
      [401, "Incorrect API key provided: test-key.", "invalid_request_error", "invalid_api_key", false],
    ] as const) {
      server.reply(openAIError(status, message, type, code));
      const error = await agent.run("second", session).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ModelServiceError);
      const e = error as ModelServiceError;
      expect(e.code).toBe("model-service");
      expect(e.status).toBe(status);
      expect(e.details).toMatchObject({ serviceMessage: message, retryable });
      expect(e.message).toContain(`answered ${status}: ${message}`);
      expect(JSON.stringify(session)).toBe(before);
    }
    // A streamed run fails the same way.
    server.reply(openAIError(503, "Service Unavailable", "server_error", null));
    const streamed = (async () => {
      for await (const _ of agent.runStream("again", session));
    })();
    await expect(streamed).rejects.toMatchObject({ code: "model-service", details: { status: 503 } });
    expect(JSON.stringify(session)).toBe(before);
  });
});

describe("Responses API (hosted sessions)", () => {
  it("the service keeps the conversation: the first turn stores, the next sends only the new turn plus previous_response_id", async () => {
    const client = responsesClient();
    expect(client.metadata.supportsServiceStorage).toBe(true);
    expect(chatClient().metadata.supportsServiceStorage).toBe(false);
    const agent = new ChatClientAgent({ client, instructions: "Be brief.", tools: [weather] });
    const session = agent.createSession({ kind: "hosted" });
    server.reply(
      { json: response([reasoningItem, outputMessage("msg_1", "Hi Ada!")], { id: "resp_first" }) },
      { json: response([outputMessage("msg_2", "Your name is Ada.")], { id: "resp_second", previous: "resp_first" }) },
    );
    await agent.run("Hi, I'm Ada.", session);
    expect(session).toMatchObject({ kind: "hosted", conversationId: "resp_first" });
    expect(session.stateBag["statebag.chatHistory"]).toBeUndefined();

    const reloaded = restart(session);
    const second = await new ChatClientAgent({
      client: responsesClient(),
      instructions: "Be brief.",
      tools: [weather],
    }).run("What is my name?", reloaded);
    expect(second.text).toBe("Your name is Ada.");
    expect(reloaded.conversationId).toBe("resp_second");

    const [first, next] = server.requests;
    expect(first.path).toBe("/v1/responses");
    expect(first.body).toMatchObject({
      model: "gpt-4.1-mini",
      store: true,
      instructions: "Be brief.",
      input: [{ role: "user", content: [{ type: "input_text", text: "Hi, I'm Ada." }] }],
    });
    expect(first.body.previous_response_id).toBeUndefined();
    expect(first.body.tools).toEqual([
      {
        type: "function",
        name: "get_weather",
        description: "Current weather for a city",
        parameters: weather.parameters,
        strict: false,
      },
    ]);
    expect(next.body).toMatchObject({
      store: true,
      previous_response_id: "resp_first",
      input: [{ role: "user", content: [{ type: "input_text", text: "What is my name?" }] }],
    });
  });

  it("hosted tool calls: the results go back alone, with the response id that made the calls", async () => {
    weatherRuns.splice(0);
    const agent = new ChatClientAgent({ client: responsesClient(), tools: [weather] });
    const session = agent.createSession({ kind: "hosted" });
    server.reply(
      {
        json: response(
          [
            outputCall("fc_1", "call_a", "get_weather", '{"city":"Lisbon"}'),
            outputCall("fc_2", "call_b", "get_weather", '{"city":"Oslo"}'),
          ],
          { id: "resp_calls" },
        ),
      },
      { json: response([outputMessage("msg_3", "Both 21 °C.")], { id: "resp_answer" }) },
    );
    const result = await agent.run("Weather in Lisbon and Oslo?", session);
    expect(result.text).toBe("Both 21 °C.");
    expect(weatherRuns).toEqual(["Lisbon", "Oslo"]);
    expect(server.requests[1].body).toMatchObject({
      previous_response_id: "resp_calls",
      input: [
        { type: "function_call_output", call_id: "call_a", output: '{"city":"Lisbon","celsius":21}' },
        { type: "function_call_output", call_id: "call_b", output: '{"city":"Oslo","celsius":21}' },
      ],
    });
    expect(session.conversationId).toBe("resp_answer");
  });

  it("streams text deltas, a citation, a reasoning item and usage; the conversation id comes with the stream", async () => {
    const agent = new ChatClientAgent({ client: responsesClient() });
    const session = agent.createSession({ kind: "hosted" });
    const annotation = {
      type: "url_citation",
      url: "https://example.org/pt",
      title: "Portugal",
      start_index: 0,
      end_index: 6,
    };
    server.reply({
      sse: responsesSse(
        streamedResponseEvents("resp_stream", ["Lisbon ", "is the capital."], [reasoningItem], annotation),
      ),
    });
    const texts: string[] = [];
    let result;
    const stream = agent.runStream("Capital of Portugal?", session);
    for (let next = await stream.next(); ; next = await stream.next()) {
      if (next.done) {
        result = next.value!;
        break;
      }
      for (const c of next.value.contents) if (c.$type === "text" && c.text) texts.push(c.text);
    }
    expect(texts).toEqual(["Lisbon ", "is the capital."]);
    expect(server.requests[0].body).toMatchObject({ stream: true, store: true });
    expect(session.conversationId).toBe("resp_stream");
    const contents = result.messages[0].contents;
    expect(contents[0]).toEqual({
      $type: "text",
      text: "Lisbon is the capital.",
      annotations: [
        {
          $type: "citation",
          url: "https://example.org/pt",
          title: "Portugal",
          annotatedRegions: [{ $type: "textSpan", start: 0, end: 6 }],
        },
      ],
    });
    expect(contents[1]).toEqual({
      $type: "reasoning",
      text: "The user wants the capital; answer directly.",
      protectedData: "gAAAAABoocLjENCRYPTEDxyz==",
      additionalProperties: { id: reasoningItem.id },
    });
    expect(contents[2]).toMatchObject({
      $type: "usage",
      details: { inputTokenCount: 41, outputTokenCount: 9, totalTokenCount: 50 },
    });
  });

  it("a failed stream is a ModelServiceError and leaves the session unchanged", async () => {
    const agent = new ChatClientAgent({ client: responsesClient() });
    const session = agent.createSession({ kind: "hosted", conversationId: "resp_kept" });
    const before = JSON.stringify(session);
    const failed = response([], { id: "resp_failed", status: "failed" });
    (failed as Record<string, unknown>).error = {
      code: "server_error",
      message: "The model produced invalid content.",
    };
    server.reply({
      sse: responsesSse([
        { type: "response.created", response: { ...failed, status: "in_progress" } },
        { type: "response.failed", response: failed },
      ]),
    });
    const run = (async () => {
      for await (const _ of agent.runStream("hello", session));
    })();
    await expect(run).rejects.toMatchObject({
      code: "model-service",
      details: { serviceCode: "server_error", serviceMessage: "The model produced invalid content.", retryable: true },
    });
    expect(JSON.stringify(session)).toBe(before);
    expect(server.requests[0].body.previous_response_id).toBe("resp_kept");
  });

  it("Conversations API mode creates the conversation once and keeps its id", async () => {
    const agent = new ChatClientAgent({ client: responsesClient({ hostedConversation: "conversation" }) });
    const session = agent.createSession({ kind: "hosted" });
    server.reply(
      { json: { id: "conv_68a1c2e3", object: "conversation", created_at: 1764165792, metadata: {} } },
      { json: response([outputMessage("msg_1", "Hello.")], { id: "resp_c1", conversation: "conv_68a1c2e3" }) },
      { json: response([outputMessage("msg_2", "Again.")], { id: "resp_c2", conversation: "conv_68a1c2e3" }) },
    );
    await agent.run("Hi", session);
    await agent.run("Hi again", session);
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/conversations", "/v1/responses", "/v1/responses"]);
    expect(server.requests[1].body.conversation).toBe("conv_68a1c2e3");
    expect(server.requests[2].body).toMatchObject({
      conversation: "conv_68a1c2e3",
      input: [{ role: "user", content: [{ type: "input_text", text: "Hi again" }] }],
    });
    expect(server.requests[2].body.previous_response_id).toBeUndefined();
    expect(session.conversationId).toBe("conv_68a1c2e3");
  });

  it("a local session on the Responses API sends its history with store: false", async () => {
    const agent = new ChatClientAgent({ client: responsesClient() });
    const session = agent.createSession({ kind: "local" });
    server.reply(
      { json: response([outputMessage("m1", "One.")], { id: "r1" }) },
      { json: response([outputMessage("m2", "Two.")], { id: "r2" }) },
    );
    await agent.run("first", session);
    await agent.run("second", session);
    expect(server.requests[1].body).toMatchObject({
      store: false,
      input: [
        { role: "user", content: [{ type: "input_text", text: "first" }] },
        { role: "assistant", content: "One." },
        { role: "user", content: [{ type: "input_text", text: "second" }] },
      ],
    });
    expect(session.conversationId).toBeUndefined();
  });

  it("an approval across a restart on a hosted session: the answer sends the result with the stopped response's id", async () => {
    const runs: string[] = [];
    const refund: AITool = {
      name: "refund",
      requiresApproval: true,
      execute: ({ orderId }) => (runs.push(String(orderId)), { ok: true }),
    };
    const first = new ChatClientAgent({ client: responsesClient(), tools: [refund] });
    const session = first.createSession({ kind: "hosted" });
    server.reply({
      json: response([outputCall("fc_9", "call_refund", "refund", '{"orderId":"A-7"}')], { id: "resp_wait" }),
    });
    const stop = await first.run("Refund order A-7", session);
    expect(stop.pendingApprovals).toHaveLength(1);
    expect(runs).toEqual([]);

    const reloaded = restart(session);
    server.reply({ json: response([outputMessage("m", "Refunded.")], { id: "resp_done" }) });
    const done = await new ChatClientAgent({ client: responsesClient(), tools: [refund] }).run([], reloaded, {
      approvals: [approveToolCall(stop.pendingApprovals![0].requestId)],
    });
    expect(done.text).toBe("Refunded.");
    expect(runs).toEqual(["A-7"]);
    expect(server.requests[1].body).toMatchObject({
      previous_response_id: "resp_wait",
      input: [{ type: "function_call_output", call_id: "call_refund", output: '{"ok":true}' }],
    });
  });
});

describe("configuration", () => {
  it("refuses a missing model or an unknown api", () => {
    expect(() => new OpenAIChatClient({ model: "" })).toThrow(/needs a model/);
    expect(() => new OpenAIChatClient({ model: "m", api: "assistants" as never })).toThrow(/unknown OpenAI api/);
  });
});
