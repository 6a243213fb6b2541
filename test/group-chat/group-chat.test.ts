import { describe, expect, it } from "vitest";
import { ChatClientAgent, type ChatClient } from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import {
  StatebagError,
  messageText,
  type AgentSession,
  type ChatMessage,
  type StatebagErrorCode,
} from "../../src/index.js";
import { defineMigration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import {
  AgentChatRestoreError,
  AgentChatSerializer,
  AgentGroupChat,
  ChannelKeyError,
  channelKeyOf,
  type AgentChatDocument,
} from "../../src/group-chat.js";

const texts = (messages: readonly ChatMessage[]) => messages.map((m) => `${m.authorName ?? m.role}: ${messageText(m)}`);
const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value));
const historyOf = (session: AgentSession | undefined) =>
  ((session?.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }) ?? { messages: [] }).messages;

/**
 * The "world" outside the process: a hosted model service keeps conversations across restarts,
 * so restored agents get new agent objects but talk to the same service.
 */
function world() {
  const service = new ScriptedChatClient({ hosted: true, usage: false, name: "service" });
  const localModel = () => new ScriptedChatClient({ usage: false });
  const writer = () => new ChatClientAgent({ id: "writer", name: "Writer", client: localModel() });
  const researcher = () => new ChatClientAgent({ id: "researcher", name: "Researcher", client: service });
  const critic = () => new ChatClientAgent({ id: "critic", client: localModel() });
  return { service, writer, researcher, critic };
}

describe("AgentGroupChat: turn taking and synchronization", () => {
  it("round robin over a local and a hosted agent; each channel sees what the others said", async () => {
    const { service, writer, researcher } = world();
    const w = writer();
    const r = researcher();
    const chat = new AgentGroupChat({ agents: [w, r] });
    chat.addMessages("Hello everyone, let's discuss AI.");
    const turns = await chat.invoke();
    expect(turns.map((t) => t.channelKey)).toEqual(["local:writer", "hosted:researcher"]);
    expect(texts(chat.history)).toEqual([
      "user: Hello everyone, let's discuss AI.",
      `Writer: You said: "Hello everyone, let's discuss AI.". I can see 0 earlier messages.`,
      `Researcher: You said: "You said: "Hello everyone, let's discuss AI.". I can see 0 earlier messages.". I can see 1 earlier message.`,
    ]);

    // The local channel: an ordinary session whose history provider holds its adapted view.
    const writerSession = chat.channelSession(w)!;
    expect(writerSession.kind).toBe("local");
    expect(texts(historyOf(writerSession))).toEqual(
      texts(chat.history)
        .slice(0, 2)
        .map((t) => t.replace(/^Writer:/, "assistant:")),
    );
    // The hosted channel: a conversation id, no local history; the service holds the adapted view.
    const researcherSession = chat.channelSession(r)!;
    expect(researcherSession.kind).toBe("hosted");
    expect(Object.keys(researcherSession.stateBag)).toEqual(["statebag.groupChat"]);
    const atService = service.conversation(researcherSession.conversationId as string)!;
    expect(atService.map((m) => [m.role, m.authorName])).toEqual([
      ["user", undefined],
      ["user", "Writer"],
      ["assistant", undefined],
    ]);

    // Next round: the writer catches up with what the researcher said, as a user message with authorName.
    await chat.invoke({ maxTurns: 1 });
    const writerHistory = historyOf(chat.channelSession(w));
    expect(writerHistory.map((m) => [m.role, m.authorName])).toEqual([
      ["user", undefined],
      ["assistant", undefined],
      ["user", "Researcher"],
      ["assistant", undefined],
    ]);
    expect(chat.history).toHaveLength(4);
  });

  it("other agents' tool traffic is not forwarded, only what they said", async () => {
    const tooling = new ChatClientAgent({
      id: "tooling",
      client: new ScriptedChatClient({
        usage: false,
        rules: [{ when: "weather", reply: { toolCall: { name: "weather" } } }],
      }),
      tools: [{ name: "weather", execute: () => "sunny" }],
    });
    const listener = new ChatClientAgent({ id: "listener", client: new ScriptedChatClient({ usage: false }) });
    const chat = new AgentGroupChat({ agents: [tooling, listener] });
    chat.addMessages("what's the weather?");
    await chat.invoke();
    expect(chat.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "assistant"]);
    expect(
      historyOf(chat.channelSession(listener)).map((m) => `${m.role}/${m.authorName ?? "-"}: ${messageText(m)}`),
    ).toEqual([
      "user/-: what's the weather?",
      'user/tooling: The tool returned "sunny".',
      `assistant/-: You said: "The tool returned "sunny".". I can see 1 earlier message.`,
    ]);
  });

  it("the group history names the speaking agent, even over an authorName the service set", async () => {
    const named = new ChatClientAgent({
      id: "bot",
      name: "Bot",
      client: new ScriptedChatClient({
        usage: false,
        rules: [{ when: /.*/, reply: { contents: [{ $type: "text", text: "hi" }] } }],
      }),
    });
    const impostor: ChatClient = {
      metadata: { providerName: "x", supportsServiceStorage: false },
      getResponse: async () => ({
        messages: [{ authorName: "gpt-4o", role: "assistant", contents: [{ $type: "text", text: "hello" }] }],
      }),
      getStreamingResponse: () => (async function* () {})(),
    };
    const other = new ChatClientAgent({ id: "other", client: impostor });
    const chat = new AgentGroupChat({ agents: [named, other] });
    chat.addMessages("start");
    await chat.invoke({ maxTurns: 3 });
    expect(chat.history.map((m) => m.authorName)).toEqual([undefined, "Bot", "other", "Bot"]);
  });

  it("termination: a turn limit and a predicate; selection is pluggable", async () => {
    const { writer, critic } = world();
    const w = writer();
    const c = critic();
    const chat = new AgentGroupChat({
      agents: [w, c],
      termination: { maxTurns: 5, until: ({ lastTurn }) => lastTurn.agent === c },
    });
    chat.addMessages("draft a haiku");
    expect((await chat.invoke()).map((t) => t.channelKey)).toEqual(["local:writer", "local:critic"]);

    const onlyCritic = new AgentGroupChat({
      agents: [w, c],
      selectNext: ({ agents }) => agents[1],
      termination: { maxTurns: 3 },
    });
    onlyCritic.addMessages("review");
    expect((await onlyCritic.invoke()).map((t) => t.channelKey)).toEqual([
      "local:critic",
      "local:critic",
      "local:critic",
    ]);
    // Turns with nothing new to read still run (the agent sees its own history); only replies are added.
    expect(historyOf(onlyCritic.channelSession(c)).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "assistant",
      "assistant",
    ]);
    expect(() => new AgentGroupChat({ agents: [w], termination: { maxTurns: 0 } })).toThrow(RangeError);
  });

  it("a failed turn leaves the chat exactly as it was, and the chat stays usable", async () => {
    let fail = true;
    const inner = new ScriptedChatClient({ usage: false });
    const flaky: ChatClient = {
      metadata: inner.metadata,
      getResponse: async (m, o) => {
        if (fail) throw new Error("model service unavailable");
        return inner.getResponse(m, o);
      },
      getStreamingResponse: (m, o) => inner.getStreamingResponse(m, o),
    };
    const { writer } = world();
    const w = writer();
    const f = new ChatClientAgent({ id: "flaky", client: flaky });
    const chat = new AgentGroupChat({ agents: [w, f] });
    chat.addMessages("hi");
    await expect(chat.invoke()).rejects.toThrow("model service unavailable");
    const before = AgentChatSerializer.serialize(chat);
    expect(chat.history).toHaveLength(2); // the writer's turn counted; the failed one left nothing
    expect(chat.channelSession(f)).toBeUndefined();
    fail = false;
    await chat.invokeAgent(f);
    expect(chat.history).toHaveLength(3);
    expect(historyOf(chat.channelSession(f)).map((m) => m.role)).toEqual(["user", "user", "assistant"]);
    expect(before.history).toHaveLength(2);
  });
});

describe("channel keys", () => {
  it("come from the agent's id (or name) and kind, nothing else", () => {
    const { writer, researcher } = world();
    expect(channelKeyOf(writer())).toBe("local:writer");
    expect(channelKeyOf(researcher())).toBe("hosted:researcher");
    expect(channelKeyOf(new ChatClientAgent({ name: "Only A Name", client: new ScriptedChatClient() }))).toBe(
      "local:Only A Name",
    );
    // A hosted-capable agent may take part as a local channel.
    const chat = new AgentGroupChat({ agents: [{ agent: researcher(), kind: "local" }] });
    expect(chat.channelKey(chat.agents[0])).toBe("local:researcher");
  });

  it("an agent without id or name is a clear error", () => {
    const anonymous = new ChatClientAgent({ client: new ScriptedChatClient() });
    const error = (() => {
      try {
        new AgentGroupChat({ agents: [anonymous] });
      } catch (e) {
        return e as ChannelKeyError;
      }
    })();
    expect(error).toBeInstanceOf(ChannelKeyError);
    expect(error!.code).toBe("channel-key");
    expect(error!.message).toMatch(/has no id or name/);
    expect(error!.hint).toMatch(/id: "researcher"/);
  });

  it("two agents that would share a key is an error naming it; the chat keeps its agents", () => {
    const { writer } = world();
    expect(() => new AgentGroupChat({ agents: [writer(), writer()] })).toThrow(
      /two agents would share the channel key "local:writer"/,
    );
    const chat = new AgentGroupChat({ agents: [writer()] });
    expect(() => chat.addAgent(writer())).toThrow(ChannelKeyError);
    expect(chat.agents).toHaveLength(1);
  });
});

describe("AgentChatSerializer: restoring into an equivalent, enhanced, reduced, empty or non-empty chat", () => {
  async function conversation() {
    const w = world();
    const chat = new AgentGroupChat({ agents: [w.writer(), w.researcher()] });
    chat.addMessages("Hello everyone, let's discuss AI.");
    await chat.invoke({ maxTurns: 3 });
    return { ...w, chat };
  }

  it("writes a versioned document holding state only", async () => {
    const { chat } = await conversation();
    const doc = AgentChatSerializer.serialize(chat);
    expect(doc.format).toBe("statebag.agentChat");
    expect(doc.formatVersion).toBe(1);
    expect(doc.history).toHaveLength(4);
    expect(doc.channels.map((c) => c.channelKey)).toEqual(["hosted:researcher", "local:writer"]);
    // Each channel state is a session in its stored form (validated, versioned, migratable).
    const stored = doc.channels[1].channelState as unknown as {
      format: string;
      formatVersion: number;
      session: AgentSession;
    };
    expect(stored.format).toBe("statebag.session");
    expect(stored.formatVersion).toBe(1);
    const writerState = stored.session;
    expect(writerState.kind).toBe("local");
    expect(writerState.stateBag["statebag.groupChat"]).toEqual({
      $type: "statebag.GroupChatChannelState",
      channelKey: "local:writer",
      synced: 4,
    });
    // No agent definition, instructions, client or tool ever appears.
    expect(JSON.stringify(doc)).not.toMatch(/scripted|service|instructions|"client"/);
  });

  it("1. Equivalent: the same agents restore everything and the conversation continues", async () => {
    const { chat, service, writer, researcher } = await conversation();
    const stored = JSON.stringify(AgentChatSerializer.serialize(chat));

    const restored = new AgentGroupChat({ agents: [writer(), researcher()] });
    const report = AgentChatSerializer.deserialize(restored, stored);
    expect(report).toEqual({ restored: ["hosted:researcher", "local:writer"], pending: [], fresh: [] });
    expect(restored.history).toEqual(chat.history);
    expect(restored.channelSession("local:writer")).toEqual(chat.channelSession("local:writer"));
    expect(AgentChatSerializer.serialize(restored)).toEqual(JSON.parse(stored));

    // Round robin continues after the last speaker (the writer spoke third): the researcher is next,
    // in its existing service conversation, receiving only what it has not seen.
    const conversationId = restored.channelSession("hosted:researcher")!.conversationId;
    const [turn] = await restored.invoke({ maxTurns: 1 });
    expect(turn.channelKey).toBe("hosted:researcher");
    const request = service.requests.at(-1)!;
    expect(request.options.conversationId).toBe(conversationId);
    expect(request.messages.map((m) => m.authorName)).toEqual(["Writer"]);
  });

  it("1. Equivalent, encoded: base64 channel states; both forms and a mix load", async () => {
    const { chat, writer, researcher } = await conversation();
    const encoded = AgentChatSerializer.serialize(chat, { encoding: "base64" });
    for (const channel of encoded.channels) {
      expect(typeof channel.channelState).toBe("string");
      expect(channel.channelState).toMatch(/^[A-Za-z0-9+/]+=*$/);
    }
    const plain = AgentChatSerializer.serialize(chat);
    const mixed: AgentChatDocument = { ...plain, channels: [encoded.channels[0], plain.channels[1]] };
    for (const doc of [encoded, roundTrip(encoded), mixed]) {
      const target = new AgentGroupChat({ agents: [writer(), researcher()] });
      AgentChatSerializer.deserialize(target, doc);
      expect(AgentChatSerializer.serialize(target)).toEqual(plain);
    }
    // Option 2's escaped form (channel state as JSON text) loads too.
    const escaped = {
      ...plain,
      channels: plain.channels.map((c) => ({ ...c, channelState: JSON.stringify(c.channelState) })),
    };
    const target = new AgentGroupChat({ agents: [writer(), researcher()] });
    AgentChatSerializer.deserialize(target, escaped);
    expect(AgentChatSerializer.serialize(target)).toEqual(plain);
  });

  it("2. Enhanced: an extra agent synchronizes from the primary history on its first turn", async () => {
    const w = world();
    const source = new AgentGroupChat({ agents: [w.writer()] });
    source.addMessages("my name is Ada");
    await source.invoke();
    const doc = roundTrip(AgentChatSerializer.serialize(source));

    const critic = w.critic();
    const target = new AgentGroupChat({ agents: [w.writer(), critic] });
    expect(AgentChatSerializer.deserialize(target, doc)).toEqual({
      restored: ["local:writer"],
      pending: [],
      fresh: ["local:critic"],
    });
    const [turn] = await target.invoke({ maxTurns: 1 });
    expect(turn.channelKey).toBe("local:critic");
    expect(
      historyOf(target.channelSession(critic)).map((m) => `${m.role}/${m.authorName ?? "-"}: ${messageText(m)}`),
    ).toEqual([
      "user/-: my name is Ada",
      "user/Writer: Nice to meet you, Ada.",
      `assistant/-: You said: "Nice to meet you, Ada.". I can see 1 earlier message.`,
    ]);
    target.addMessages("what is my name?");
    const [writerTurn] = await target.invoke({ maxTurns: 1 });
    expect(messageText(writerTurn.messages[0])).toBe("Your name is Ada.");
  });

  it("3. Reduced: a missing agent's channel is kept, written back, and restored when it rejoins", async () => {
    const { chat, service, writer, researcher } = await conversation();
    const original = AgentChatSerializer.serialize(chat);
    const researcherState = original.channels.find((c) => c.channelKey === "hosted:researcher")!.channelState;

    const reduced = new AgentGroupChat({ agents: [writer()] });
    expect(AgentChatSerializer.deserialize(reduced, roundTrip(original))).toEqual({
      restored: ["local:writer"],
      pending: ["hosted:researcher"],
      fresh: [],
    });
    expect(reduced.pendingChannelKeys).toEqual(["hosted:researcher"]);
    await reduced.invoke({ maxTurns: 1 });
    reduced.addMessages("researcher, are you there?");

    // Written back unchanged on the next serialize (and through another process).
    const next = roundTrip(AgentChatSerializer.serialize(reduced, { encoding: "base64" }));
    const again = new AgentGroupChat({ agents: [writer()] });
    AgentChatSerializer.deserialize(again, next);
    expect(
      AgentChatSerializer.serialize(again).channels.find((c) => c.channelKey === "hosted:researcher")!.channelState,
    ).toEqual(researcherState);

    // The researcher rejoins: same service conversation, and it catches up with what it missed
    // (the writer's turn before the save, the writer's turn after the restore, the user).
    const r = researcher();
    again.addAgent(r);
    expect(again.pendingChannelKeys).toEqual([]);
    const conversationId = again.channelSession(r)!.conversationId;
    await again.invokeAgent(r);
    const request = service.requests.at(-1)!;
    expect(request.options.conversationId).toBe(conversationId);
    expect(request.messages.map((m) => `${m.authorName ?? m.role}: ${messageText(m)}`)).toEqual([
      expect.stringMatching(/^Writer: .*I can see 2 earlier messages\.$/),
      expect.stringMatching(/^Writer: .*I can see 3 earlier messages\.$/),
      "user: researcher, are you there?",
    ]);
  });

  it("4. Empty: no agents fails fast; the chat stays usable", async () => {
    const { chat, writer, researcher } = await conversation();
    const doc = AgentChatSerializer.serialize(chat);
    const empty = new AgentGroupChat();
    const error = (() => {
      try {
        AgentChatSerializer.deserialize(empty, doc);
      } catch (e) {
        return e as AgentChatRestoreError;
      }
    })()!;
    expect(error).toBeInstanceOf(AgentChatRestoreError);
    expect(error).toBeInstanceOf(StatebagError);
    expect(error.reason).toBe("empty");
    expect(error.code).toBe("agent-chat-empty");
    expect(error.hint).toMatch(/create the chat with the same agents/);
    expect(empty.history).toEqual([]);
    // Usable: add the agents and restore, or use it on its own.
    empty.addAgent(writer());
    empty.addAgent(researcher());
    expect(AgentChatSerializer.deserialize(empty, doc).restored).toHaveLength(2);
  });

  it("5. Invalid: a chat with history or channels fails fast; it is unchanged and usable", async () => {
    const { chat, writer } = await conversation();
    const doc = AgentChatSerializer.serialize(chat);

    const busy = new AgentGroupChat({ agents: [writer()] });
    busy.addMessages("already talking");
    const snapshot = AgentChatSerializer.serialize(busy);
    expect(() => AgentChatSerializer.deserialize(busy, doc)).toThrow(AgentChatRestoreError);
    expect(() => AgentChatSerializer.deserialize(busy, doc)).toThrow(
      /already has 1 history message\(s\) and 0 channel\(s\)/,
    );
    expect(AgentChatSerializer.serialize(busy)).toEqual(snapshot);
    await busy.invoke();
    expect(busy.history).toHaveLength(2);

    // Restoring twice is invalid too (the first restore gave it channels).
    const once = new AgentGroupChat({ agents: [writer()] });
    AgentChatSerializer.deserialize(once, doc);
    let caught: AgentChatRestoreError | undefined;
    try {
      AgentChatSerializer.deserialize(once, doc);
    } catch (e) {
      caught = e as AgentChatRestoreError;
    }
    expect(caught?.reason).toBe("not-empty");
    expect(caught?.code).toBe("agent-chat-not-empty");
  });

  it("channel states and history are validated strictly and migrated like any stored session", async () => {
    const { chat, writer, researcher } = await conversation();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const doc: any = roundTrip(AgentChatSerializer.serialize(chat));
    const strict = new AgentGroupChat({ agents: [writer(), researcher()] });
    expect(AgentChatSerializer.deserialize(strict, doc, { strict: true }).restored).toHaveLength(2);

    // A document written when tool approval requests were called "functionApprovalRequest".
    const old = {
      $type: "functionApprovalRequest",
      requestId: "r1",
      toolCall: { $type: "functionCall", callId: "c1", name: "f" },
    };
    const writerState = doc.channels[1].channelState.session;
    writerState.stateBag["statebag.chatHistory"].messages[1].contents.push(old);
    doc.history[1].contents.push(old);
    const registry = TypeRegistry.compose(defaultRegistry(), {
      source: "test",
      migrations: [
        defineMigration({
          type: "functionApprovalRequest",
          from: 1,
          to: { type: "toolApprovalRequest", version: 1 },
          up: (v) => v,
        }),
      ],
    });
    const migrated = new AgentGroupChat({ agents: [writer(), researcher()] });
    AgentChatSerializer.deserialize(migrated, doc, { registry, strict: true });
    expect(migrated.history[1].contents.at(-1)!.$type).toBe("toolApprovalRequest");
    expect(historyOf(migrated.channelSession("local:writer"))[1].contents.at(-1)!.$type).toBe("toolApprovalRequest");
    // Without the migration, strict loading names the unknown type and its place in the document.
    expect(() =>
      AgentChatSerializer.deserialize(new AgentGroupChat({ agents: [writer()] }), doc, { strict: true }),
    ).toThrow(/"\/history\/1\/contents\/1": .*functionApprovalRequest/);
    delete doc.history[1].contents[1];
    doc.history[1].contents.length = 1;
    expect(() =>
      AgentChatSerializer.deserialize(new AgentGroupChat({ agents: [writer()] }), doc, { strict: true }),
    ).toThrow(
      /"\/channels\/1\/channelState\/session\/stateBag\/statebag.chatHistory\/messages\/1\/contents\/1": .*functionApprovalRequest/,
    );
  });

  it("a hostile document (deep, __proto__, malformed text) is refused at the door with where and why", async () => {
    const { chat, writer, researcher } = await conversation();
    const good = AgentChatSerializer.serialize(chat);
    const deep: Record<string, unknown> = {};
    let node = deep;
    for (let i = 0; i < 100_000; i++) node = (node.a = {}) as Record<string, unknown>;
    const cases: [string, unknown, string, string | undefined][] = [
      [
        "deep object",
        { ...good, channels: [{ channelKey: "local:writer", channelState: { id: "w", stateBag: { x: deep } } }] },
        "json-too-deep",
        "/channels/0/channelState/stateBag/x/a/a",
      ],
      ["deep history", { ...good, history: [deep] }, "json-too-deep", "/history/0/a/a"],
      [
        "__proto__ key",
        JSON.stringify(good).replace('"history":', '"__proto__":{"polluted":true},"history":'),
        "json-proto-key",
        "/__proto__",
      ],
      ["malformed text", JSON.stringify(good).slice(0, -5), "json-syntax", undefined],
    ];
    for (const [name, doc, code, pointer] of cases) {
      const target = new AgentGroupChat({ agents: [writer(), researcher()] });
      let error: StatebagError & { pointer?: string } = new StatebagError("none" as StatebagErrorCode, "no error");
      try {
        AgentChatSerializer.deserialize(target, doc as AgentChatDocument);
      } catch (e) {
        error = e as StatebagError & { pointer?: string };
      }
      expect(error.code, name).toBe(code);
      if (pointer !== undefined) expect(error.pointer?.startsWith(pointer), name).toBe(true);
      expect(target.history, name).toEqual([]);
      expect(AgentChatSerializer.deserialize(target, good).restored, name).toHaveLength(2);
    }
  });

  it("a damaged document is rejected with where and why, before the chat is touched", async () => {
    const { chat, writer, researcher } = await conversation();
    const good = AgentChatSerializer.serialize(chat);
    const cases: [string, unknown, RegExp, string][] = [
      ["wrong format", { ...good, format: "sk.agentChat" }, /expected "format": "statebag.agentChat"/, "/format"],
      ["newer version", { ...good, formatVersion: 2 }, /newer than this release reads/, "/formatVersion"],
      ["history not an array", { ...good, history: { a: 1 } }, /history must be an array/, "/history"],
      [
        "channel state garbage",
        { ...good, channels: [{ channelKey: "local:writer", channelState: "not base64!" }] },
        /neither JSON nor base64/,
        "/channels/0/channelState",
      ],
      [
        "base64 of garbage",
        { ...good, channels: [{ channelKey: "local:writer", channelState: Buffer.from("{oops").toString("base64") }] },
        /does not hold JSON/,
        "/channels/0/channelState",
      ],
      [
        "not a session",
        { ...good, channels: [{ channelKey: "local:writer", channelState: { stateBag: {} } }] },
        /not a valid session/,
        "/channels/0/channelState",
      ],
      [
        "duplicate key",
        { ...good, channels: [good.channels[1], good.channels[1]] },
        /appears twice/,
        "/channels/1/channelKey",
      ],
      [
        "cursor past history",
        { ...good, history: (good.history as ChatMessage[]).slice(0, 1) },
        /has seen \d+ messages but the history holds 1/,
        "/channels/0/channelState",
      ],
      [
        "no channel key",
        { ...good, channels: [{ channelState: {} }] },
        /non-empty string channel key/,
        "/channels/0/channelKey",
      ],
    ];
    for (const [name, doc, message, pointer] of cases) {
      const target = new AgentGroupChat({ agents: [writer(), researcher()] });
      let error: AgentChatRestoreError | undefined;
      try {
        AgentChatSerializer.deserialize(target, doc as AgentChatDocument);
      } catch (e) {
        error = e as AgentChatRestoreError;
      }
      expect(error, name).toBeInstanceOf(AgentChatRestoreError);
      expect(error!.message, name).toMatch(message);
      expect(error!.pointer, name).toBe(pointer);
      expect(target.history, name).toEqual([]);
      // Nothing was applied: a good document still restores into the same chat.
      expect(AgentChatSerializer.deserialize(target, good).restored, name).toHaveLength(2);
    }
  });
});
