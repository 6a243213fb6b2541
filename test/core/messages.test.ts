import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ChatClientAgent,
  InMemoryChatHistoryProvider,
  chatHistoryState,
  responseFromUpdates,
} from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import {
  assistantMessage,
  chatMessageFromMeai,
  functionCallContent,
  functionResultContent,
  messageText,
  systemMessage,
  toolMessage,
  userMessage,
  type ChatMessage,
} from "../../src/index.js";

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/maf/${name}`, import.meta.url), "utf8"));

describe("messages in the Microsoft.Extensions.AI shape", () => {
  it("the canonical MEAI ChatMessage payload is a statebag ChatMessage as-is", () => {
    const payload = fixture("03_meai_chatmessage_known_payload.json");
    const message: ChatMessage = chatMessageFromMeai(payload);
    expect(message).toEqual(payload);
    expect(messageText(message)).toBe("Hello, world!");
    expect(message.contents.map((c) => c.$type)).toEqual(["text", "functionCall", "functionResult"]);
    // Plain data: serializing gives back the same JSON.
    expect(JSON.parse(JSON.stringify(message))).toEqual(payload);
  });

  it("applies MEAI defaults (role user, empty contents) to the minimal .NET message", () => {
    const session = fixture("01_dotnet_chatclientagentsession_inmemory_history.json");
    const [raw] = session.stateBag.InMemoryChatHistoryProvider.messages;
    expect(chatMessageFromMeai(raw)).toEqual({ authorName: "testAuthor", role: "user", contents: [] });
  });

  it("a .NET session's history becomes readable by the in-memory history provider", async () => {
    const dotnet = fixture("01_dotnet_chatclientagentsession_inmemory_history.json");
    const messages = dotnet.stateBag.InMemoryChatHistoryProvider.messages.map(chatMessageFromMeai);
    const provider = new InMemoryChatHistoryProvider({ key: "InMemoryChatHistoryProvider" });
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), history: provider });
    const session = agent.createSession({
      stateBag: { InMemoryChatHistoryProvider: { ...chatHistoryState(messages) } },
    });
    expect((await provider.listMessages(session))[0].authorName).toBe("testAuthor");
    await agent.run("hello", session);
    expect(await provider.listMessages(session)).toHaveLength(3);
  });

  it("helper constructors build plain data", () => {
    expect(userMessage("hi")).toEqual({ role: "user", contents: [{ $type: "text", text: "hi" }] });
    expect(systemMessage("s", { authorName: "ops" })).toEqual({
      authorName: "ops",
      role: "system",
      contents: [{ $type: "text", text: "s" }],
    });
    expect(assistantMessage([functionCallContent("c1", "f", { a: 1 })]).contents[0]).toEqual({
      $type: "functionCall",
      callId: "c1",
      name: "f",
      arguments: { a: 1 },
    });
    expect(toolMessage([functionResultContent("c1", null)]).role).toBe("tool");
    expect(Object.getPrototypeOf(userMessage("x"))).toBe(Object.prototype);
  });

  it("folds streaming updates into messages, merging text", () => {
    const response = responseFromUpdates([
      { role: "assistant", messageId: "m1", contents: [{ $type: "text", text: "Hel" }] },
      { messageId: "m1", contents: [{ $type: "text", text: "lo" }], conversationId: "conv_1" },
      { messageId: "m1", contents: [{ $type: "usage", details: { totalTokenCount: 3 } }] },
      { role: "tool", messageId: "m2", contents: [{ $type: "functionResult", callId: "c", result: 1 }] },
    ]);
    expect(response.conversationId).toBe("conv_1");
    expect(response.usage).toEqual({ totalTokenCount: 3 });
    expect(response.messages.map((m) => [m.role, m.contents.length])).toEqual([
      ["assistant", 2],
      ["tool", 1],
    ]);
    expect(messageText(response.messages[0])).toBe("Hello");
  });
});
