/**
 * A chat server process for test/http/processes.test.ts: `createChatHandler` over the store at
 * `STATEBAG_CHAT_STORE_URL`, served by `toNodeListener` on 127.0.0.1 (a free port, printed as
 * `listening <port>` on stdout). The model is the scripted one slowed down: a "story" is 400
 * words, one every `STATEBAG_CHAT_WORD_MS` ms, so another process can resume, stop or outlive it
 * mid-turn. The owner is the `x-owner` header (a test server; an app verifies its users).
 */
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { ChatClient, ChatOptions, ChatResponseUpdate } from "../../src/runtime/agent/chat-client.js";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { createChatHandler } from "../../src/runtime/http/handler.js";
import { toNodeListener } from "../../src/runtime/http/node.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";

const url = process.env.STATEBAG_CHAT_STORE_URL;
if (!url) throw new Error("STATEBAG_CHAT_STORE_URL is not set");
const wordMs = Number(process.env.STATEBAG_CHAT_WORD_MS ?? 20);
const leaseMs = Number(process.env.STATEBAG_CHAT_LEASE_MS ?? 1000);

const story = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");

class SlowClient implements ChatClient {
  constructor(private readonly inner: ChatClient) {}
  get metadata() {
    return this.inner.metadata;
  }
  getResponse(messages: readonly ChatMessage[], options?: ChatOptions) {
    return this.inner.getResponse(messages, options);
  }
  async *getStreamingResponse(
    messages: readonly ChatMessage[],
    options: ChatOptions = {},
  ): AsyncIterable<ChatResponseUpdate> {
    for await (const update of this.inner.getStreamingResponse(messages, options)) {
      await sleep(wordMs, undefined, { signal: options.signal });
      yield update;
    }
  }
}

const store = await openStore(url);
const agent = new ChatClientAgent({
  name: "process-test",
  client: new SlowClient(
    new ScriptedChatClient({ usage: false, recordRequests: false, rules: [{ when: /story/i, reply: story }] }),
  ),
});
const handler = createChatHandler({
  agent,
  store,
  owner: (request) => request.headers.get("x-owner") ?? "",
  leaseMs,
  onError: (error) => console.error("chat server error:", error),
});
const server = createServer(toNodeListener(handler));
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  if (address && typeof address === "object") console.log(`listening ${address.port}`);
});
process.on("SIGTERM", () => {
  server.close();
  void store.close().finally(() => process.exit(0));
});
