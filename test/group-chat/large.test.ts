/**
 * Long chats: no call-stack limits on the number of messages (no push(...array)), bounded errors,
 * and a serialized chat always restores (per-part limits: a channel state is judged from its own root).
 */
import { describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import type { ChatMessage } from "../../src/index.js";
import { AgentChatRestoreError, AgentChatSerializer, AgentGroupChat } from "../../src/group-chat.js";

const agent = (id = "writer") =>
  new ChatClientAgent({ id, name: id, client: new ScriptedChatClient({ usage: false }) });

function userMessages(n: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < n; i++) out.push({ role: "user", contents: [{ $type: "text", text: `m${i}` }] } as ChatMessage);
  return out;
}

describe("group chats with very long histories", () => {
  it("addMessages takes 150,000 messages, and a 150,000-message chat serializes and restores", () => {
    const chat = new AgentGroupChat({ agents: [agent()] });
    chat.addMessages(userMessages(150_000));
    const doc = AgentChatSerializer.serialize(chat);
    const target = new AgentGroupChat({ agents: [agent()] });
    const report = AgentChatSerializer.deserialize(target, JSON.stringify(doc));
    expect(report.fresh).toEqual(["local:writer"]);
    const history = target.history;
    expect(history).toHaveLength(150_000);
    expect(history[149_999]).toEqual({ role: "user", contents: [{ $type: "text", text: "m149999" }] });
  });

  it("a history with 20,000 bad messages is refused with a bounded message and the count", () => {
    const messages = userMessages(20_000).map((m) => ({ ...m, contents: [{ $type: "text", text: 5 }] }));
    const doc = { format: "statebag.agentChat", formatVersion: 1, history: messages, channels: [] };
    let error: AgentChatRestoreError | undefined;
    try {
      AgentChatSerializer.deserialize(new AgentGroupChat({ agents: [agent()] }), doc);
    } catch (e) {
      error = e as AgentChatRestoreError;
    }
    expect(error).toBeInstanceOf(AgentChatRestoreError);
    expect(error!.message.length).toBeLessThan(6_000);
    expect(error!.message).toMatch(/20000 problems in all/);
    expect(error!.message).toMatch(/"\/history\/0\/contents\/0\/text"/);
  });

  it("what serialize writes always restores: a channel state nested to the session limit inside the chat document", async () => {
    // A local agent whose history holds a tool result nested so deep that its channel session is
    // just within a stored session's depth limit, and so 3 levels past it inside the chat document.
    let deep: unknown = "bottom";
    for (let i = 0; i < 248; i++) deep = [deep];
    const client = new ScriptedChatClient({
      usage: false,
      rules: [
        { when: () => true, reply: { contents: [{ $type: "functionResult", callId: "c1", result: deep } as never] } },
      ],
    });
    const writer = new ChatClientAgent({ id: "writer", name: "writer", client });
    const chat = new AgentGroupChat({ agents: [writer] });
    chat.addMessages("go");
    await chat.invoke();
    const doc = AgentChatSerializer.serialize(chat);
    const target = new AgentGroupChat({ agents: [new ChatClientAgent({ id: "writer", name: "writer", client })] });
    expect(AgentChatSerializer.deserialize(target, JSON.stringify(doc)).restored).toEqual(["local:writer"]);
    expect(target.history).toEqual(chat.history);
  });
});
