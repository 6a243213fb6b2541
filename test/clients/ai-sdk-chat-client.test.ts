/** AISDKChatClient with the AI SDK's own mock models (no provider, no key). */
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { MockLanguageModelV3, MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { AISDKChatClient } from "../../src/runtime/agent/clients/ai-sdk-chat-client.js";
import { ModelServiceError } from "../../src/runtime/agent/clients/model-service-error.js";
import type { AITool } from "../../src/runtime/agent/tools.js";
import { userMessage, type ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { validateSession } from "../../src/runtime/validation/validate.js";

const usage = (input: number, output: number, extra: { cacheRead?: number; reasoning?: number } = {}) => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: extra.cacheRead, cacheWrite: undefined },
  outputTokens: { total: output, text: undefined, reasoning: extra.reasoning },
});
const generated = (content: LanguageModelV4GenerateResult["content"], id = "gen-1"): LanguageModelV4GenerateResult => ({
  content,
  finishReason: { unified: content.some((c) => c.type === "tool-call") ? "tool-calls" : "stop", raw: undefined },
  usage: usage(20, 8, { cacheRead: 4, reasoning: 3 }),
  warnings: [],
  response: { id, timestamp: new Date("2026-11-26T10:00:00Z"), modelId: "mock" },
});
const streamOf = (parts: LanguageModelV4StreamPart[]) => ({
  stream: new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      for (const p of parts) controller.enqueue(p);
      controller.close();
    },
  }),
});
const history = (session: AgentSession) =>
  (session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages;

const runs: string[] = [];
const weather: AITool = {
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: ({ city }) => (runs.push(String(city)), { city, celsius: 19 }),
};

describe("AISDKChatClient", () => {
  it("generates: tool calls run, the prompt carries history, calls and results; reasoning, citations and usage are stored", async () => {
    runs.splice(0);
    const model = new MockLanguageModelV4({
      provider: "mock-provider",
      doGenerate: [
        generated([
          { type: "reasoning", text: "Need the weather.", providerMetadata: { anthropic: { signature: "sig-1" } } },
          { type: "tool-call", toolCallId: "tc-1", toolName: "get_weather", input: '{"city":"Lisbon"}' },
          { type: "tool-call", toolCallId: "tc-2", toolName: "get_weather", input: '{"city":"Oslo"}' },
        ]),
        generated(
          [
            {
              type: "text",
              text: "Both 19 °C.",
              citations: [
                {
                  source: {
                    type: "source",
                    sourceType: "url",
                    id: "s1",
                    url: "https://example.org/w",
                    title: "Weather",
                  },
                  startIndex: 0,
                  endIndex: 4,
                  citedText: "19 °C",
                },
              ],
            },
          ],
          "gen-2",
        ),
      ],
    });
    const client = new AISDKChatClient(model);
    expect(client.metadata).toEqual({ providerName: "mock-provider", supportsServiceStorage: false });
    const agent = new ChatClientAgent({ client, instructions: "Be brief.", tools: [weather] });
    const session = agent.createSession();
    const result = await agent.run("Weather in Lisbon and Oslo?", session);

    expect(runs).toEqual(["Lisbon", "Oslo"]);
    expect(result.text).toBe("Both 19 °C.");
    const first = model.doGenerateCalls[0] as LanguageModelV4CallOptions;
    expect(first.prompt).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Weather in Lisbon and Oslo?" }] },
    ]);
    expect(first.tools).toEqual([
      { type: "function", name: "get_weather", description: "Weather for a city", inputSchema: weather.parameters },
    ]);
    const second = model.doGenerateCalls[1] as LanguageModelV4CallOptions;
    expect(second.prompt.slice(2)).toEqual([
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Need the weather.", providerOptions: { anthropic: { signature: "sig-1" } } },
          { type: "tool-call", toolCallId: "tc-1", toolName: "get_weather", input: { city: "Lisbon" } },
          { type: "tool-call", toolCallId: "tc-2", toolName: "get_weather", input: { city: "Oslo" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "tc-1",
            toolName: "get_weather",
            output: { type: "json", value: { city: "Lisbon", celsius: 19 } },
          },
          {
            type: "tool-result",
            toolCallId: "tc-2",
            toolName: "get_weather",
            output: { type: "json", value: { city: "Oslo", celsius: 19 } },
          },
        ],
      },
    ]);
    const reply = history(session)[3];
    expect(reply.messageId).toBe("gen-2");
    expect(reply.contents[0]).toEqual({
      $type: "text",
      text: "Both 19 °C.",
      annotations: [
        {
          $type: "citation",
          url: "https://example.org/w",
          title: "Weather",
          snippet: "19 °C",
          additionalProperties: { sourceId: "s1" },
          annotatedRegions: [{ $type: "textSpan", start: 0, end: 4 }],
        },
      ],
    });
    expect(reply.contents[1]).toEqual({
      $type: "usage",
      details: {
        inputTokenCount: 20,
        outputTokenCount: 8,
        totalTokenCount: 28,
        cachedInputTokenCount: 4,
        reasoningTokenCount: 3,
      },
    });
    expect(validateSession(session, { strict: true }).ok).toBe(true);
  });

  it("streams text and reasoning deltas, a generated file, and usage at the finish", async () => {
    const model = new MockLanguageModelV4({
      doStream: streamOf([
        { type: "stream-start", warnings: [] },
        { type: "response-metadata", id: "stream-1" },
        { type: "reasoning-start", id: "r" },
        { type: "reasoning-delta", id: "r", delta: "Think " },
        { type: "reasoning-delta", id: "r", delta: "briefly." },
        { type: "reasoning-end", id: "r" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Here " },
        { type: "text-delta", id: "t", delta: "it is." },
        { type: "text-end", id: "t" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: new Uint8Array([137, 80, 78, 71]) } },
        { type: "finish", usage: usage(5, 4), finishReason: { unified: "stop", raw: "stop" } },
      ]),
    });
    const agent = new ChatClientAgent({ client: new AISDKChatClient(model) });
    const session = agent.createSession();
    const deltas: string[] = [];
    for await (const u of agent.runStream("Draw a dot", session))
      for (const c of u.contents) if (c.$type === "text") deltas.push(c.text);
    expect(deltas).toEqual(["Here ", "it is."]);
    expect(history(session)[1]).toEqual({
      role: "assistant",
      messageId: "stream-1",
      contents: [
        { $type: "reasoning", text: "Think briefly." },
        { $type: "text", text: "Here it is." },
        { $type: "data", uri: "data:image/png;base64,iVBORw==" },
        { $type: "usage", details: { inputTokenCount: 5, outputTokenCount: 4, totalTokenCount: 9 } },
      ],
    });
  });

  it("sends images and files as file parts (inline, by URL)", async () => {
    const model = new MockLanguageModelV4({ doGenerate: generated([{ type: "text", text: "A cat." }]) });
    const agent = new ChatClientAgent({ client: new AISDKChatClient(model) });
    await agent.run(
      userMessage([
        { $type: "text", text: "What is this?" },
        { $type: "data", uri: "data:image/jpeg;base64,/9j/4AAQ", name: "cat.jpg" },
        { $type: "uri", uri: "https://example.org/report.pdf", mediaType: "application/pdf" },
      ]),
    );
    expect(model.doGenerateCalls[0].prompt[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "What is this?" },
        { type: "file", mediaType: "image/jpeg", data: { type: "data", data: "/9j/4AAQ" }, filename: "cat.jpg" },
        {
          type: "file",
          mediaType: "application/pdf",
          data: { type: "url", url: new URL("https://example.org/report.pdf") },
        },
      ],
    });
  });

  it("a provider error becomes ModelServiceError (status, retryable) and the session is unchanged", async () => {
    const apiError = Object.assign(new Error("Too Many Requests"), {
      name: "AI_APICallError",
      statusCode: 429,
      isRetryable: true,
    });
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        throw apiError;
      },
    });
    const agent = new ChatClientAgent({ client: new AISDKChatClient(model, { maxRetries: 0 }) });
    const session = agent.createSession();
    const before = JSON.stringify(session);
    const error = await agent.run("hi", session).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelServiceError);
    expect((error as ModelServiceError).details).toMatchObject({
      status: 429,
      retryable: true,
      serviceMessage: "Too Many Requests",
      provider: "mock-provider",
    });
    expect(JSON.stringify(session)).toBe(before);

    const streaming = new MockLanguageModelV4({ doStream: streamOf([{ type: "error", error: apiError }]) });
    const run = (async () => {
      for await (const _ of new ChatClientAgent({
        client: new AISDKChatClient(streaming, { maxRetries: 0 }),
      }).runStream("hi", session));
    })();
    await expect(run).rejects.toBeInstanceOf(ModelServiceError);
    expect(JSON.stringify(session)).toBe(before);
  });

  it("a local session sends earlier assistant turns as content, never as references to items the service stored (#21.16)", async () => {
    // What @ai-sdk/openai's .responses() model returns: each part names the stored item it came from.
    const model = new MockLanguageModelV4({
      provider: "openai.responses",
      doGenerate: [
        generated([
          {
            type: "reasoning",
            text: "",
            providerMetadata: {
              openai: { itemId: "rs_0c1d2e3f4a5b6c7d8", reasoningEncryptedContent: "gAAAAABencrypted==" },
            },
          },
          {
            type: "text",
            text: "Nice to meet you, Ada.",
            providerMetadata: { openai: { itemId: "msg_0a1b2c3d4e5f60718" } },
          },
        ]),
        generated(
          [
            {
              type: "text",
              text: "Your name is Ada.",
              providerMetadata: { openai: { itemId: "msg_0f1e2d3c4b5a69788" } },
            },
          ],
          "gen-2",
        ),
      ],
    });
    const agent = new ChatClientAgent({ client: new AISDKChatClient(model) });
    const session = agent.createSession({ kind: "local" });
    await agent.run("Hi, I'm Ada.", session);
    await agent.run("What is my name?", session);

    const second = (model.doGenerateCalls[1] as LanguageModelV4CallOptions).prompt;
    expect(second[1]).toEqual({
      role: "assistant",
      content: [
        {
          type: "reasoning",
          text: "",
          providerOptions: { openai: { reasoningEncryptedContent: "gAAAAABencrypted==" } },
        },
        { type: "text", text: "Nice to meet you, Ada." },
      ],
    });
    expect(JSON.stringify(second)).not.toMatch(/itemId|item_reference|msg_0a1b2c3d4e5f60718|rs_0c1d2e3f4a5b6c7d8/);
    // The session still records where each part came from.
    expect(history(session)[1].contents[1]).toMatchObject({
      additionalProperties: { providerMetadata: { openai: { itemId: "msg_0a1b2c3d4e5f60718" } } },
    });
  });

  it("a v3 model is upgraded through ai's wrapLanguageModel", async () => {
    const model = new MockLanguageModelV3({
      doGenerate: {
        content: [{ type: "text", text: "from v3" }],
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: 1, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 2, text: undefined, reasoning: undefined },
        },
        warnings: [],
      },
    });
    const result = await new ChatClientAgent({ client: new AISDKChatClient(model) }).run("hi");
    expect(result.text).toBe("from v3");
    expect(() => new AISDKChatClient("openai/gpt-4.1" as never)).toThrow(/needs an AI SDK language model/);
  });
});
