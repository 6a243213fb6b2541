/**
 * Reference contents (files kept in the blob store) reach the model as the bytes they name: the
 * OpenAI client (Chat Completions and Responses, against the loopback OpenAI server) and the AI SDK
 * client resolve them when they build a request, with the reader the run was given. A session
 * holding references saves and loads without the bytes; a reference without a reader, or whose
 * blob is gone, fails clearly instead of being left out.
 */
import { randomBytes } from "node:crypto";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { AISDKChatClient } from "../../src/runtime/agent/clients/ai-sdk-chat-client.js";
import { OpenAIChatClient } from "../../src/runtime/agent/clients/openai-chat-client.js";
import {
  blobReader,
  blobWriter,
  offloadDataContents,
  referencedBlobs,
  sha256Hex,
} from "../../src/runtime/blobs/references.js";
import { userMessage } from "../../src/runtime/core/messages.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { chatCompletion, response } from "./fixtures/openai.js";
import { startOpenAIServer, type OpenAITestServer } from "./openai-server.js";

let server: OpenAITestServer;
beforeAll(async () => (server = await startOpenAIServer()));
afterAll(() => server.close());

const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(30_000)]);
const pngUri = `data:image/png;base64,${png.toString("base64")}`;

async function storedImage() {
  const store = new MemorySessionStore();
  const { messages } = await offloadDataContents(
    [
      userMessage([
        { $type: "text", text: "What is this?" },
        { $type: "data", uri: pngUri, name: "cat.png" },
      ]),
    ],
    blobWriter(store.blobs!, "ada"),
  );
  return { store, message: messages[0], reader: blobReader(store.blobs!, "ada") };
}

describe("reference contents in model requests", () => {
  it("offloading keeps a reference; the session saves and loads without the bytes", async () => {
    const { store, message } = await storedImage();
    expect(message.contents[1]).toEqual({
      $type: "statebag.blobReference",
      hash: sha256Hex(png),
      mediaType: "image/png",
      size: png.length,
      name: "cat.png",
    });
    const agent = new ChatClientAgent({ client: new AISDKChatClient(new MockLanguageModelV4()) });
    const session = agent.createSession();
    session.stateBag["statebag.chatHistory"] = {
      $type: "InMemoryChatHistoryState",
      $version: 2,
      messages: [message],
      droppedMessageCount: 0,
    } as never;
    const text = serializeSession(session, { validate: true });
    expect(text.length).toBeLessThan(2_000);
    expect([...referencedBlobs(deserializeSession(text))]).toEqual([sha256Hex(png)]);
    expect(await store.blobs!.has(sha256Hex(png), { owner: "ada" })).toBe(true);
  });

  it("Chat Completions gets an image_url part with the bytes; the Responses API an input_image", async () => {
    const { message, reader } = await storedImage();
    server.reply({ json: chatCompletion({ role: "assistant", content: "A cat." }) });
    const chat = new OpenAIChatClient({ model: "gpt-4.1-mini", baseURL: server.baseURL, apiKey: "k", maxRetries: 0 });
    await new ChatClientAgent({ client: chat }).run(message, undefined, { blobs: reader });
    const sent = server.requests.at(-1)!.body.messages as { content: unknown }[];
    expect(sent.at(-1)!.content).toEqual([
      { type: "text", text: "What is this?" },
      { type: "image_url", image_url: { url: pngUri } },
    ]);

    server.reply({
      json: response([
        {
          type: "message",
          id: "m1",
          role: "assistant",
          content: [{ type: "output_text", text: "A cat.", annotations: [] }],
        },
      ]),
    });
    const responses = new OpenAIChatClient({
      model: "gpt-4.1-mini",
      api: "responses",
      baseURL: server.baseURL,
      apiKey: "k",
      maxRetries: 0,
    });
    await new ChatClientAgent({ client: responses }).run(message, undefined, { blobs: reader });
    const input = server.requests.at(-1)!.body.input as { content: unknown }[];
    expect(input.at(-1)!.content).toContainEqual({ type: "input_image", image_url: pngUri, detail: "auto" });
  });

  it("the AI SDK client gets a file part with the bytes", async () => {
    const { message, reader } = await storedImage();
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [{ type: "text", text: "A cat." }],
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 },
        },
        warnings: [],
      }),
    });
    await new ChatClientAgent({ client: new AISDKChatClient(model) }).run(message, undefined, { blobs: reader });
    expect(model.doGenerateCalls[0].prompt[0].content[1]).toEqual({
      type: "file",
      mediaType: "image/png",
      data: { type: "data", data: png.toString("base64") },
      filename: "cat.png",
    });
  });

  it("a reference without a reader, or whose blob is gone, fails clearly and nothing is sent", async () => {
    const { store, message, reader } = await storedImage();
    const before = server.requests.length;
    const chat = new OpenAIChatClient({ model: "gpt-4.1-mini", baseURL: server.baseURL, apiKey: "k", maxRetries: 0 });
    const agent = new ChatClientAgent({ client: chat });
    await expect(agent.run(message)).rejects.toThrow(/no blob reader/);
    await store.blobs!.delete(sha256Hex(png), { owner: "ada" });
    await expect(agent.run(message, undefined, { blobs: reader })).rejects.toThrow(
      /"cat.png" .* is no longer in the blob store/,
    );
    expect(server.requests.length).toBe(before);
  });
});
