/**
 * A streaming run whose consumer stops (early `break`, `return()`, an abort signal, a consumer that
 * throws) ends promptly with nothing committed, for every client, inside `withSession` on a memory
 * store: the way a server runs a browser tab that closes mid-answer. "Promptly" is shown by outcome:
 * the run settles while the model (loopback server or mock stream) is still holding its stream open.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import type { AgentResponseUpdate } from "../../src/runtime/agent/response.js";
import type { ChatClient } from "../../src/runtime/agent/chat-client.js";
import { AISDKChatClient } from "../../src/runtime/agent/clients/ai-sdk-chat-client.js";
import { OpenAIChatClient } from "../../src/runtime/agent/clients/openai-chat-client.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { MemorySessionStore } from "../../src/runtime/stores/memory.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import { streamedResponseEvents, streamedTextChunks } from "./fixtures/openai.js";
import { responsesSse, startOpenAIServer, type OpenAITestServer } from "./openai-server.js";

let server: OpenAITestServer;
beforeAll(async () => (server = await startOpenAIServer()));
afterAll(() => server.close());

/** A model that has started answering and then holds its stream open; `settled` tells it was left. */
interface Held {
  client: ChatClient;
  /** Resolves when the model side saw the run go away (connection closed, stream cancelled). */
  left: () => Promise<void>;
  /** For the loopback server: true while it never ended the stream itself. */
  stillOpen?: () => boolean;
}

const words = Array.from({ length: 40 }, (_, i) => `word${i} `);

const clients: Record<string, () => Held> = {
  // One delta, then the model pauses: the SDK is waiting for the next chunk when the consumer leaves
  // (the case where it used to end its stream quietly and the run waited forever to commit).
  "OpenAI Chat Completions": () => {
    const [role, delta] = streamedTextChunks(["Hello "]);
    server.reply({ hold: [role, delta].map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") });
    const index = server.held.length;
    return {
      client: new OpenAIChatClient({
        model: "gpt-4.1-mini",
        baseURL: server.baseURL,
        apiKey: "test-key",
        maxRetries: 0,
      }),
      left: () => server.held[index].clientLeft,
      stillOpen: () => !server.held[index].endedByServer,
    };
  },
  "OpenAI Responses": () => {
    server.reply({ hold: responsesSse(streamedResponseEvents("resp_held", ["Hello "]).slice(0, 3)) }); // created, item added, one delta
    const index = server.held.length;
    return {
      client: new OpenAIChatClient({
        model: "gpt-4.1-mini",
        api: "responses",
        baseURL: server.baseURL,
        apiKey: "test-key",
        maxRetries: 0,
      }),
      left: () => server.held[index].clientLeft,
      stillOpen: () => !server.held[index].endedByServer,
    };
  },
  "AI SDK": () => {
    let cancelled!: () => void;
    const left = new Promise<void>((resolve) => (cancelled = resolve));
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            controller.enqueue({ type: "stream-start", warnings: [] });
            controller.enqueue({
              type: "response-metadata",
              id: "held-1",
              timestamp: new Date("2026-11-26T10:00:00Z"),
            });
            controller.enqueue({ type: "text-start", id: "t" });
            for (const delta of words) controller.enqueue({ type: "text-delta", id: "t", delta });
            // ...and nothing more: the model keeps thinking.
          },
          cancel: () => cancelled(),
        }),
      }),
    });
    // The stream never closes: the run can only end because it let go of it (cancel).
    return { client: new AISDKChatClient(model, { maxRetries: 0 }), left: () => left };
  },
  scripted: () => ({
    client: new ScriptedChatClient({
      rules: [{ when: /.*/, reply: "Hello there, Ada. This answer has many words to stream." }],
    }),
    left: () => Promise.resolve(),
  }),
};

const hasText = (u: AgentResponseUpdate) => u.contents.some((c) => c.$type === "text" && c.text !== "");

/** The ways a consumer stops; each resolves or rejects as `withSession`'s fn would. */
const ways: Record<
  string,
  { stop: (agent: ChatClientAgent, session: AgentSession) => Promise<unknown>; rejects?: RegExp }
> = {
  "an early break": {
    stop: async (agent, session) => {
      for await (const u of agent.runStream("Say hello", session)) if (hasText(u)) break;
    },
  },
  "return()": {
    stop: async (agent, session) => {
      const stream = agent.runStream("Say hello", session);
      for (let next = await stream.next(); !next.done && !hasText(next.value); next = await stream.next());
      await stream.return(undefined);
    },
  },
  "an abort signal": {
    stop: async (agent, session) => {
      const tab = new AbortController();
      for await (const u of agent.runStream("Say hello", session, { signal: tab.signal }))
        if (hasText(u)) tab.abort(new Error("the tab was closed"));
    },
    rejects: /the tab was closed/,
  },
  "a consumer that throws": {
    stop: async (agent, session) => {
      for await (const u of agent.runStream("Say hello", session))
        if (hasText(u)) throw new Error("the consumer failed");
    },
    rejects: /the consumer failed/,
  },
};

describe.each(Object.keys(clients))("%s: a consumer that stops mid-stream", (clientName) => {
  it.each(Object.keys(ways))("%s ends the run promptly and commits nothing", async (wayName) => {
    const held = clients[clientName]();
    const way = ways[wayName];
    const store = new MemorySessionStore();
    await withSession(store, "tab-1", (session) =>
      new ChatClientAgent({ client: new ScriptedChatClient() }).run("Earlier question", session),
    );
    const before = JSON.stringify((await store.get("tab-1"))!.session);

    const agent = new ChatClientAgent({ client: held.client });
    const run = withSession(store, "tab-1", (session) => way.stop(agent, session));
    if (way.rejects) await expect(run).rejects.toThrow(way.rejects);
    else await run;

    // Settled while the model side still holds its stream open; and the model side was let go.
    if (held.stillOpen) expect(held.stillOpen()).toBe(true);
    await held.left();
    expect(JSON.stringify((await store.get("tab-1"))!.session)).toBe(before);
  });
});
