/**
 * `npm run demo` against an OpenAI-compatible model server (STATEBAG_MODEL=<baseURL>#<model>): the
 * loopback server from test/clients/ replays recorded Chat Completions bodies, so this runs the real
 * OpenAIChatClient path of the demo with no key and no internet.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/stores.js";
import { chatCompletion, openAIError } from "../clients/fixtures/openai.js";
import { startOpenAIServer, type OpenAITestServer } from "../clients/openai-server.js";
import { runExample, tempDir } from "./helpers.js";

// A fresh server per test, so replies one test queued and did not use cannot reach the next.
let server: OpenAITestServer;
beforeEach(async () => void (server = await startOpenAIServer()));
afterEach(() => server.close());
const tmp = tempDir("statebag-demo-model-");
afterAll(() => tmp.cleanup());

const MODEL = "llama3.2";
const runDemo = (store: string) =>
  runExample("demo.ts", [], { env: { STATEBAG_STORE: store, STATEBAG_MODEL: `${server.baseURL}#${MODEL}` } });
const answer = (content: string, n: number) => ({
  json: chatCompletion({ content }, { id: `chatcmpl-DemoTurn${String(n).padStart(20, "0")}` }),
});
const weatherCall = (callId: string, args: string, n: number) => ({
  json: chatCompletion(
    { tool_calls: [{ id: callId, type: "function", function: { name: "get_weather", arguments: args } }] },
    { id: `chatcmpl-DemoTool${String(n).padStart(21, "0")}`, finish: "tool_calls" },
  ),
});

describe("the demo with a model server (STATEBAG_MODEL=<baseURL>#<model>)", () => {
  it("sends the whole history and the tool schema, stores the model's answers, validates", async () => {
    server.reply(
      // 1. "Hi! My name is Ada." (then the rolling summary's call, after every turn)
      answer("Nice to meet you, Ada!", 1),
      answer("The user introduced themselves as Ada.", 2),
      // "I prefer celsius, please."
      answer("Got it, celsius from now on.", 3),
      answer("The user is Ada and prefers celsius.", 4),
      // "What's the weather in Lisbon?": a tool call, then the answer from its result
      weatherCall("call_L1sbonYQ3xRz5Jd0cVh2aWfE", '{"city":"Lisbon","unit":"celsius"}', 5),
      answer("It is sunny and 24 °C in Lisbon.", 6),
      answer("Ada prefers celsius and asked about Lisbon (sunny, 24 °C).", 7),
      // 2. After the restart: "What is my name?"
      answer("Your name is Ada.", 8),
      answer("Ada prefers celsius, asked about Lisbon and her name.", 9),
      // "And the weather in Oslo?"
      weatherCall("call_9kPmT4vXq2NbR7sY1uZc3dHa", '{"city":"Oslo","unit":"celsius"}', 10),
      answer("Oslo: sunny, 25 °C.", 11),
      answer("Ada prefers celsius; Lisbon 24 °C, Oslo 25 °C.", 12),
    );
    const r = await runDemo(`sqlite:${tmp.dir}/ok.db`);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`model: openai-compatible ${MODEL}`);

    // What statebag sent: every call to Chat Completions with the model named, store: false;
    // the agent's calls carry the tool schema, the rolling summary's calls carry none.
    expect(server.requests).toHaveLength(12);
    for (const request of server.requests) {
      expect(request.method).toBe("POST");
      expect(request.path).toBe("/v1/chat/completions");
      expect(request.body).toMatchObject({ model: MODEL, store: false });
    }
    const summaries = [2, 4, 7, 9, 12].map((n) => server.requests[n - 1]);
    for (const request of summaries) {
      expect(request.body.tools).toBeUndefined();
      expect((request.body.messages as { content: string }[])[0].content).toMatch(/^Summarize the conversation/);
    }
    const agentCalls = server.requests.filter((request) => !summaries.includes(request));
    for (const request of agentCalls) {
      expect(request.body.tools).toEqual([
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Current weather for a city",
            parameters: {
              type: "object",
              properties: { city: { type: "string" }, unit: { enum: ["celsius", "fahrenheit"] } },
              required: ["city"],
            },
          },
        },
      ]);
    }

    // The first call after the restart: the fresh agent sends the whole stored history, tool call
    // and tool result included, and its providers' state (summary, profile) in the system message.
    const lisbonCall = {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_L1sbonYQ3xRz5Jd0cVh2aWfE",
          type: "function",
          function: { name: "get_weather", arguments: '{"city":"Lisbon","unit":"celsius"}' },
        },
      ],
    };
    const lisbonResult = {
      role: "tool",
      tool_call_id: "call_L1sbonYQ3xRz5Jd0cVh2aWfE",
      content: '{"city":"Lisbon","unit":"celsius","temperature":24,"conditions":"sunny"}',
    };
    expect(server.requests[7].body.messages).toEqual([
      {
        role: "system",
        content:
          "You are a concise, friendly assistant.\n\nSummary of the conversation so far: Ada prefers celsius and asked about Lisbon (sunny, 24 °C).\n\nUser profile (name: Ada; preferred unit: celsius).",
      },
      { role: "user", content: "Hi! My name is Ada." },
      { role: "assistant", content: "Nice to meet you, Ada!" },
      { role: "user", content: "I prefer celsius, please." },
      { role: "assistant", content: "Got it, celsius from now on." },
      { role: "user", content: "What's the weather in Lisbon?" },
      lisbonCall,
      lisbonResult,
      { role: "assistant", content: "It is sunny and 24 °C in Lisbon." },
      { role: "user", content: "What is my name?" },
    ]);
    // The tool ran in the demo with the model's arguments; its result went back on the next call.
    expect(server.requests[5].body.messages).toEqual([
      ...(server.requests[4].body.messages as unknown[]),
      lisbonCall,
      lisbonResult,
    ]);
    expect((server.requests[10].body.messages as unknown[]).at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_9kPmT4vXq2NbR7sY1uZc3dHa",
      content: '{"city":"Oslo","unit":"celsius","temperature":25,"conditions":"sunny"}',
    });

    // The stored session the demo printed holds the model's answers, with their ids and usage.
    const printed = /^.*The stored session \(revision 5\).*$([\s\S]*?)^\S*4\./m.exec(r.stdout)?.[1];
    expect(printed).toBeDefined();
    const document = JSON.parse(printed!);
    expect(document).toMatchObject({ format: "statebag.session", session: { kind: "local" } });
    const history = document.session.stateBag["statebag.chatHistory"].messages as {
      role: string;
      messageId?: string;
      contents: { $type: string; text?: string; name?: string; arguments?: unknown; result?: unknown }[];
    }[];
    expect(history.map((m) => [m.role, m.contents[0].$type, m.contents[0].text ?? m.contents[0].name ?? null])).toEqual(
      [
        ["user", "text", "Hi! My name is Ada."],
        ["assistant", "text", "Nice to meet you, Ada!"],
        ["user", "text", "I prefer celsius, please."],
        ["assistant", "text", "Got it, celsius from now on."],
        ["user", "text", "What's the weather in Lisbon?"],
        ["assistant", "functionCall", "get_weather"],
        ["tool", "functionResult", null],
        ["assistant", "text", "It is sunny and 24 °C in Lisbon."],
        ["user", "text", "What is my name?"],
        ["assistant", "text", "Your name is Ada."],
        ["user", "text", "And the weather in Oslo?"],
        ["assistant", "functionCall", "get_weather"],
        ["tool", "functionResult", null],
        ["assistant", "text", "Oslo: sunny, 25 °C."],
      ],
    );
    expect(history[9]).toMatchObject({
      messageId: "chatcmpl-DemoTurn00000000000000000008",
      createdAt: "2025-11-26T14:03:12.000Z",
    });
    expect(history[9].contents[1]).toMatchObject({
      $type: "usage",
      details: { inputTokenCount: 57, outputTokenCount: 12, totalTokenCount: 69 },
    });
    expect(history[11].contents[0]).toMatchObject({
      callId: "call_9kPmT4vXq2NbR7sY1uZc3dHa",
      arguments: { city: "Oslo", unit: "celsius" },
    });
    expect(history[12].contents[0]).toMatchObject({
      callId: "call_9kPmT4vXq2NbR7sY1uZc3dHa",
      result: { city: "Oslo", temperature: 25 },
    });
    expect(document.session.stateBag["statebag.rollingSummary"].summary).toBe(
      "Ada prefers celsius; Lisbon 24 °C, Oslo 25 °C.",
    );
    expect(document.session.stateBag["example.userProfile"]).toMatchObject({ name: "Ada", unit: "celsius" });

    expect(r.stdout).toMatch(/✔ valid \(strict/);
    expect(r.stdout).toContain("statebag.chatHistory: InMemoryChatHistoryState v3 (14 messages)");
  }, 30_000);

  it("fails clearly when the server answers 500, and stores no half-written session", async () => {
    const failure = openAIError(
      500,
      "The server had an error while processing your request. Sorry about that!",
      "server_error",
      null,
    );
    // The client retries a 500 (the SDK's default two retries): every attempt gets the same answer.
    server.reply(failure, failure, failure);
    const store = `sqlite:${tmp.dir}/failed.db`;
    const r = await runDemo(store);

    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /^demo failed: openai-compatible answered 500: The server had an error while processing your request\. Sorry about that!$/m,
    );
    expect(r.stdout).not.toContain("agent:");
    expect(r.stdout).not.toContain("saved:");
    expect(server.requests.length).toBeGreaterThanOrEqual(1);
    for (const request of server.requests) {
      expect(request.body.messages).toEqual([
        { role: "system", content: "You are a concise, friendly assistant." },
        { role: "user", content: "Hi! My name is Ada." },
      ]);
    }

    // The session the demo created was never written: the store is empty.
    const id = /session ([0-9a-f-]{36})/.exec(r.stdout)?.[1];
    expect(id).toBeDefined();
    const opened = await openStore(store);
    try {
      expect((await opened.scan()).items).toEqual([]);
      expect(await opened.get(id!)).toBeUndefined();
    } finally {
      await opened.close();
    }
  }, 30_000);
});
