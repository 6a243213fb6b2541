import { describe, expect, it } from "vitest";
import {
  AIContextProvider,
  ChatClientAgent,
  InMemoryChatHistoryProvider,
  RollingSummaryProvider,
  keepLastMessages,
  keepSystemAndLastTurns,
  type ChatClient,
  type ProviderContext,
  type RunMiddleware,
} from "../../src/agent.js";
import {
  ConfigurationError,
  ProviderSessionState,
  StateTypeError,
  StateVersionError,
  messageText,
  userMessage,
  type AgentSession,
  type ChatMessage,
  type ProviderState,
} from "../../src/index.js";
import { ScriptedChatClient } from "../../src/testing.js";

const history = (agent: ChatClientAgent, session: AgentSession) => agent.history.listMessages(session);
const texts = (messages: ChatMessage[]) => messages.map((m) => `${m.role}: ${messageText(m)}`);
const roundTrip = <T>(value: T): T => JSON.parse(JSON.stringify(value));

describe("scenario 1: the simple should be simple", () => {
  it("keeps a continuous conversation in a local session", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession();
    await agent.run("Hello, my name is Ada.", session);
    const second = await agent.run("What is my name?", session);
    expect(second.text).toBe("Your name is Ada.");
    expect(session.kind).toBe("local");
    expect(session.conversationId).toBeUndefined();
    expect((await history(agent, session)).length).toBe(4);
  });

  it("a run without a session gets a fresh one and leaves no trace elsewhere", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const response = await agent.run("my name is Bo");
    expect(response.sessionId).toMatch(/[0-9a-f-]{36}/);
    const other = agent.createSession();
    expect((await agent.run("what is my name?", other)).text).toBe("I don't know your name yet.");
  });
});

describe("scenario 2a: storing and restoring a session", () => {
  it("survives JSON.stringify / JSON.parse and a new agent instance", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession({ id: "public-1" });
    await agent.run("my name is Grace", session);
    const stored = JSON.stringify(session);

    const restartedAgent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const restored: AgentSession = JSON.parse(stored);
    expect(restored.id).toBe("public-1");
    const response = await restartedAgent.run("what is my name?", restored);
    expect(response.text).toBe("Your name is Grace.");
    expect(texts(await history(restartedAgent, restored))).toEqual([
      "user: my name is Grace",
      "assistant: Nice to meet you, Grace.",
      "user: what is my name?",
      "assistant: Your name is Grace.",
    ]);
  });

  it("serializes an array of sessions with one JSON.stringify, holding only data", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const sessions = [agent.createSession(), agent.createSession()];
    await agent.run("hi", sessions[0]);
    const parsed = roundTrip(sessions);
    expect(parsed).toEqual(sessions);
    expect(Object.keys(parsed[0]).sort()).toEqual(["id", "kind", "stateBag"]);
  });

  it("keeps state bag keys no provider of this agent reads, exactly as they were", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const foreign = { $type: "acme.NotesState", $version: 7, notes: ["x"], nested: { deep: [1, 2, { a: null }] } };
    const session = agent.createSession({ stateBag: { "acme.notes": structuredClone(foreign) } });
    await agent.run("hello", session);
    const restored = roundTrip(session);
    await agent.run("again", restored);
    expect(restored.stateBag["acme.notes"]).toEqual(foreign);
  });
});

interface FavoriteColorState extends ProviderState<"test.FavoriteColorState", 1> {
  color?: string;
}

/** A minimal memory provider: remembers a favorite color and tells the model about it. */
class FavoriteColorProvider extends AIContextProvider {
  readonly key = "test.favoriteColor";
  readonly state = new ProviderSessionState<FavoriteColorState>(this.key, {
    stateType: "test.FavoriteColorState",
    version: 1,
    initial: () => ({ $type: "test.FavoriteColorState" }),
  });
  override invoking(context: ProviderContext) {
    const color = this.state.read(context.state)?.color;
    return color ? { instructions: `my name is ${color}-lover` } : undefined;
  }
  override invoked(context: ProviderContext & { responseMessages: readonly ChatMessage[] }) {
    const said = context.requestMessages.map(messageText).join(" ");
    const match = /favorite color is (\w+)/.exec(said);
    if (match) this.state.write(context.state, { $type: "test.FavoriteColorState", color: match[1] });
  }
}

describe("scenario 3: context providers", () => {
  it("a rolling summary provider keeps its state per session and restores it", async () => {
    const summarizer = new ScriptedChatClient();
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient(),
      contextProviders: [new RollingSummaryProvider({ summarizer, maxMessages: 4 })],
    });
    const a = agent.createSession();
    const b = agent.createSession();
    await agent.run("I like pirates", a);
    await agent.run("I like robots", b);
    await agent.run("Tell me a joke", a);

    const provider = agent.getService(RollingSummaryProvider)!;
    const stateA = provider.state.read(a)!;
    expect(stateA.turnCount).toBe(2);
    expect(stateA.recentMessages).toHaveLength(4);
    expect(stateA.summary).toContain("Tell me a joke");
    expect(provider.state.read(b)!.summary).toBe("The user said: I like robots.");
    expect(provider.state.read(b)!.turnCount).toBe(1);

    // The summary reaches the model as instructions on the next turn, also after a restore.
    const client = agent.client as ScriptedChatClient;
    const restored = roundTrip(b);
    await agent.run("and now?", restored);
    expect(client.requests.at(-1)!.options.instructions).toBe(
      "Summary of the conversation so far: The user said: I like robots.",
    );
  });

  it("context provider instructions reach the model and state is owned per key", async () => {
    const client = new ScriptedChatClient();
    const agent = new ChatClientAgent({
      client,
      contextProviders: [new FavoriteColorProvider()],
      instructions: "Be brief.",
    });
    const session = agent.createSession();
    await agent.run("my favorite color is teal", session);
    expect(session.stateBag["test.favoriteColor"]).toEqual({ $type: "test.FavoriteColorState", color: "teal" });
    await agent.run("what is my name?", session);
    expect(client.requests.at(-1)!.options.instructions).toBe("Be brief.\n\nmy name is teal-lover");
  });
});

describe("scenario 7: chat history reduction on local sessions", () => {
  it("keepLastMessages keeps the last N messages", async () => {
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient({ usage: false }),
      history: new InMemoryChatHistoryProvider({ reducer: keepLastMessages(10) }),
    });
    const session = agent.createSession();
    for (let i = 0; i < 20; i++) await agent.run(`Question ${i}`, session);
    const kept = await history(agent, session);
    expect(kept).toHaveLength(10);
    expect(messageText(kept[0])).toBe("Question 15");
  });

  it("never splits a function call from its result", () => {
    const msgs: ChatMessage[] = [
      { role: "user", contents: [{ $type: "text", text: "weather?" }] },
      { role: "assistant", contents: [{ $type: "functionCall", callId: "c1", name: "weather" }] },
      { role: "tool", contents: [{ $type: "functionResult", callId: "c1", result: "sunny" }] },
      { role: "assistant", contents: [{ $type: "text", text: "sunny" }] },
    ];
    // The last 2 would start with the orphaned tool result: it is dropped too.
    expect(keepLastMessages(2)(msgs)).toEqual([msgs[3]]);
    expect(keepLastMessages(3)(msgs)).toEqual(msgs.slice(1));
  });

  it("keepSystemAndLastTurns keeps the system message and whole turns", async () => {
    const msgs: ChatMessage[] = [
      { role: "system", contents: [{ $type: "text", text: "sys" }] },
      { role: "user", contents: [{ $type: "text", text: "u1" }] },
      { role: "assistant", contents: [{ $type: "text", text: "a1" }] },
      { role: "user", contents: [{ $type: "text", text: "u2" }] },
      { role: "assistant", contents: [{ $type: "functionCall", callId: "c", name: "f" }] },
      { role: "tool", contents: [{ $type: "functionResult", callId: "c", result: 1 }] },
      { role: "assistant", contents: [{ $type: "text", text: "a2" }] },
    ];
    const reduced = await keepSystemAndLastTurns(1)(msgs);
    expect(reduced.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(await keepSystemAndLastTurns(5)(msgs)).toEqual(msgs);
    expect(() => keepSystemAndLastTurns(0)).toThrow(RangeError);
  });

  it("does not apply to hosted sessions, whose history the service keeps", async () => {
    const client = new ScriptedChatClient({ hosted: true });
    const agent = new ChatClientAgent({
      client,
      history: new InMemoryChatHistoryProvider({ reducer: keepLastMessages(1) }),
    });
    const session = agent.createSession({ kind: "hosted" });
    await agent.run("my name is Lin", session);
    await agent.run("what is my name?", session);
    expect(session.stateBag).toEqual({});
    expect(client.conversation(session.conversationId as string)).toHaveLength(4);
  });
});

describe("scenario 8: run middleware sees state before and after", () => {
  it("reads the session around a run", async () => {
    const seen: string[] = [];
    const counting: RunMiddleware = async (context, next) => {
      const before = await context.agent.history.listMessages(context.session as AgentSession);
      seen.push(`before ${before.length}`);
      const response = await next();
      seen.push(`after ${(await context.agent.history.listMessages(context.session as AgentSession)).length}`);
      return response;
    };
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), middleware: [counting] });
    const session = agent.createSession();
    await agent.run("one", session);
    for await (const _ of agent.runStream("two", session));
    expect(seen).toEqual(["before 0", "after 2", "before 2", "after 4"]);
  });

  it("middleware that fails after a failed run leaves the session unchanged", async () => {
    const failing: RunMiddleware = async () => {
      throw new Error("policy says no");
    };
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), middleware: [failing] });
    const session = agent.createSession();
    await expect(agent.run("hi", session)).rejects.toThrow("policy says no");
    expect(session.stateBag).toEqual({});
  });

  it("middleware that calls next() twice gets a configuration error naming it, and the run happens once", async () => {
    const twice: RunMiddleware = async (_context, next) => {
      const first = await next();
      await next();
      return first;
    };
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), middleware: [twice] });
    const session = agent.createSession();
    const error = await agent.run("hi", session).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toMatchObject({ code: "configuration", message: "run middleware 1 of 1 called next() twice" });
    expect((error as { hint: string }).hint).toMatch(/call next\(\) once/);
    expect(await agent.history.listMessages(session)).toHaveLength(2);
  });
});

describe("local and hosted sessions", () => {
  it("a hosted session carries the conversation id and sends only new messages", async () => {
    const client = new ScriptedChatClient({ hosted: true, newConversationIdPerTurn: true });
    const agent = new ChatClientAgent({ client });
    const session = agent.createSession();
    await agent.run("my name is Kai", session);
    expect(session.kind).toBe("hosted");
    const first = session.conversationId;
    expect(first).toMatch(/^conv_/);
    const response = await agent.run("what is my name?", session);
    expect(response.text).toBe("Your name is Kai.");
    expect(session.conversationId).not.toBe(first);
    expect(client.requests[1].messages).toHaveLength(1);
    expect(client.requests[1].options.conversationId).toBe(first);
    expect(session.stateBag).toEqual({});
  });

  it("a local session never sends a conversation id, even on a hosted-capable client", async () => {
    const client = new ScriptedChatClient({ hosted: true });
    const agent = new ChatClientAgent({ client });
    const session = agent.createSession({ kind: "local" });
    await agent.run("one", session);
    await agent.run("two", session);
    expect(session.conversationId).toBeUndefined();
    expect(client.requests.every((r) => r.options.conversationId === undefined && r.options.store === false)).toBe(
      true,
    );
    expect(client.requests[1].messages).toHaveLength(3);
  });

  it("fails fast before any call: local session with a conversation id", async () => {
    const client = new ScriptedChatClient({ hosted: true });
    const agent = new ChatClientAgent({ client });
    expect(() => agent.createSession({ kind: "local", conversationId: "conv_9" })).toThrow(
      /local but carries a service conversation id/,
    );
    const session: AgentSession = { id: "s", kind: "local", conversationId: "conv_9", stateBag: {} };
    await expect(agent.run("hi", session)).rejects.toBeInstanceOf(ConfigurationError);
    expect(client.requests).toHaveLength(0);
  });

  it("fails fast before any call: hosted session on a client without service storage", async () => {
    const client = new ScriptedChatClient();
    const agent = new ChatClientAgent({ client });
    expect(() => agent.createSession({ kind: "hosted" })).toThrow(/cannot keep conversations/);
    await expect(agent.run("hi", { id: "s", conversationId: "c", stateBag: {} })).rejects.toThrow(
      /cannot keep conversations/,
    );
    expect(client.requests).toHaveLength(0);
  });
});

describe("atomic runs", () => {
  const failingClient = (after: number): ChatClient => {
    const inner = new ScriptedChatClient();
    let calls = 0;
    return {
      metadata: inner.metadata,
      getResponse: async (m, o) => {
        if (++calls > after) throw new Error("model service unavailable");
        return inner.getResponse(m, o);
      },
      getStreamingResponse: (m, o) => inner.getStreamingResponse(m, o),
    };
  };

  it("a throwing client leaves the session exactly as before", async () => {
    const agent = new ChatClientAgent({ client: failingClient(1), contextProviders: [new FavoriteColorProvider()] });
    const session = agent.createSession();
    await agent.run("my favorite color is red", session);
    const before = JSON.stringify(session);
    await expect(agent.run("my favorite color is blue", session)).rejects.toThrow("model service unavailable");
    expect(JSON.stringify(session)).toBe(before);
  });

  it("a provider throwing after another provider wrote leaves the session exactly as before", async () => {
    class Exploding extends AIContextProvider {
      readonly key = "test.exploding";
      override invoked(): void {
        throw new Error("provider broke");
      }
    }
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient(),
      contextProviders: [new FavoriteColorProvider(), new Exploding()],
    });
    const session = agent.createSession();
    await expect(agent.run("my favorite color is green", session)).rejects.toThrow("provider broke");
    expect(session).toEqual({ id: session.id, stateBag: {} });
  });

  it("a stream consumer that stops early leaves the session unchanged; a completed stream updates it", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession();
    let received = 0;
    for await (const _ of agent.runStream("a fairly long message to stream back", session)) {
      if (++received === 2) break;
    }
    expect(received).toBe(2);
    expect(session.stateBag).toEqual({});

    const chunks: string[] = [];
    for await (const update of agent.runStream("stream me", session)) {
      for (const c of update.contents) if (c.$type === "text") chunks.push(c.text);
    }
    expect(chunks.length).toBeGreaterThan(2);
    const stored = await history(agent, session);
    expect(texts(stored)).toEqual(["user: stream me", `assistant: ${chunks.join("")}`]);
  });

  it("a stream consumer that stops right after the last update still leaves the session unchanged", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession();
    let received = 0;
    for await (const update of agent.runStream("hello there", session)) {
      received++;
      if (update.contents.some((c) => c.$type === "usage")) break; // the scripted client's last update
    }
    expect(received).toBeGreaterThan(1);
    expect(session).toEqual({ id: session.id, stateBag: {} });
  });

  it("an aborted run leaves the session unchanged", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession();
    const controller = new AbortController();
    controller.abort(new Error("user cancelled"));
    await expect(agent.run("hi", session, { signal: controller.signal })).rejects.toThrow("user cancelled");
    expect(session.stateBag).toEqual({});
  });
});

describe("providers are stateless and shared", () => {
  it("1,000 concurrent runs over 100 sessions: each history is exactly its own", async () => {
    const agent = new ChatClientAgent({
      client: new ScriptedChatClient({ usage: false }),
      contextProviders: [new RollingSummaryProvider({ summarizer: new ScriptedChatClient() })],
    });
    const sessions = Array.from({ length: 100 }, (_, i) => agent.createSession({ id: `s${i}` }));
    await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        agent.run(`session ${n % 100} turn ${Math.floor(n / 100)}`, sessions[n % 100]),
      ),
    );
    for (const [i, session] of sessions.entries()) {
      const msgs = await history(agent, session);
      expect(msgs).toHaveLength(20);
      const userTexts = msgs.filter((m) => m.role === "user").map(messageText);
      expect(userTexts).toEqual(Array.from({ length: 10 }, (_, t) => `session ${i} turn ${t}`));
      expect(agent.getService(RollingSummaryProvider)!.state.read(session)!.turnCount).toBe(10);
    }
  });

  it("two providers with the same key is an error at construction naming the key", () => {
    const client = new ScriptedChatClient();
    expect(
      () =>
        new ChatClientAgent({ client, contextProviders: [new FavoriteColorProvider(), new FavoriteColorProvider()] }),
    ).toThrow(/"test\.favoriteColor"/);
    expect(
      () =>
        new ChatClientAgent({
          client,
          history: new InMemoryChatHistoryProvider({ key: "shared" }),
          contextProviders: [new RollingSummaryProvider({ summarizer: client, key: "shared" })],
        }),
    ).toThrow(ConfigurationError);
  });

  it("a provider may not write another provider's key", async () => {
    class Trespasser extends AIContextProvider {
      readonly key = "test.trespasser";
      override invoked(context: ProviderContext): void {
        context.state.set(InMemoryChatHistoryProvider.defaultKey, { $type: "InMemoryChatHistoryState", messages: [] });
      }
    }
    const agent = new ChatClientAgent({ client: new ScriptedChatClient(), contextProviders: [new Trespasser()] });
    const session = agent.createSession();
    await expect(agent.run("hi", session)).rejects.toThrow(
      /tried to write state bag key "statebag.chatHistory", which it does not own/,
    );
    expect(session.stateBag).toEqual({});
  });

  it("a foreign value under a provider's key is reported, never overwritten", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession({ stateBag: { "statebag.chatHistory": { $type: "acme.Other", x: 1 } } });
    await expect(agent.run("hi", session)).rejects.toBeInstanceOf(StateTypeError);
    expect(session.stateBag["statebag.chatHistory"]).toEqual({ $type: "acme.Other", x: 1 });
  });

  it("state from a newer version is kept, and the run fails rather than clobbering it", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const newer = { $type: "InMemoryChatHistoryState", $version: 99, messages: [], future: true };
    const session = agent.createSession({ stateBag: { "statebag.chatHistory": newer } });
    await expect(agent.run("hi", session)).rejects.toBeInstanceOf(StateVersionError);
    expect(session.stateBag["statebag.chatHistory"]).toBe(newer);
  });

  it("getService finds providers by class or key, and the client", () => {
    const client = new ScriptedChatClient();
    const agent = new ChatClientAgent({ client, contextProviders: [new FavoriteColorProvider()] });
    expect(agent.getService(FavoriteColorProvider)).toBeInstanceOf(FavoriteColorProvider);
    expect(agent.getService("statebag.chatHistory")).toBe(agent.history);
    expect(agent.getService(ScriptedChatClient)).toBe(client);
    expect(agent.getService(RollingSummaryProvider)).toBeUndefined();
  });
});

describe("tools", () => {
  it("runs tool calls and records call and result together", async () => {
    const client = new ScriptedChatClient({
      rules: [{ when: "weather", reply: { toolCall: { name: "getWeather", arguments: { city: "Oslo" } } } }],
    });
    const agent = new ChatClientAgent({
      client,
      tools: [{ name: "getWeather", execute: (args) => ({ city: args.city, sky: "clear" }) }],
    });
    const session = agent.createSession();
    const response = await agent.run("what's the weather?", session);
    expect(response.text).toBe('The tool returned {"city":"Oslo","sky":"clear"}.');
    const roles = (await history(agent, session)).map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(response.usage?.totalTokenCount).toBeGreaterThan(0);
  });

  it("sums usage over tool rounds, named counts included", async () => {
    let round = 0;
    const client: ChatClient = {
      metadata: { providerName: "counting", supportsServiceStorage: false },
      async getResponse() {
        round++;
        const contents =
          round === 1
            ? [{ $type: "functionCall" as const, callId: "c1", name: "noop" }]
            : [{ $type: "text" as const, text: "done" }];
        return {
          messages: [{ role: "assistant", contents }],
          usage: {
            inputTokenCount: 10,
            additionalCounts: round === 1 ? { audio: 2 } : ({ audio: 3, image: 1 } as { [name: string]: number }),
          },
        };
      },
      getStreamingResponse() {
        throw new Error("not used");
      },
    };
    const agent = new ChatClientAgent({ client, tools: [{ name: "noop", execute: () => null }] });
    const response = await agent.run("go");
    expect(response.usage).toEqual({ inputTokenCount: 20, additionalCounts: { audio: 5, image: 1 } });
  });

  it("at maxToolRounds every pending call still gets a result, so history stays well-formed", async () => {
    const client = new ScriptedChatClient({ rules: [{ when: () => true, reply: { toolCall: { name: "loop" } } }] });
    let ran = 0;
    const agent = new ChatClientAgent({
      client,
      maxToolRounds: 1,
      tools: [{ name: "loop", execute: () => (ran++, "again") }],
    });
    const session = agent.createSession();
    await agent.run("go", session);
    const stored = await history(agent, session);
    const calls = stored
      .flatMap((m) => m.contents)
      .filter((c) => c.$type === "functionCall")
      .map((c) => (c as { callId: string }).callId);
    const results = stored.flatMap((m) => m.contents).filter((c) => c.$type === "functionResult");
    expect(calls).toHaveLength(1);
    expect(ran).toBe(0);
    expect(results.map((r) => (r as { callId: string }).callId)).toEqual(calls);
    expect((results[0] as { result: unknown }).result).toEqual({
      error: "not run: this run reached maxToolRounds (1)",
    });
  });

  it("editing the caller's input or the response afterwards does not change stored history", async () => {
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession();
    const input = userMessage("original");
    const response = await agent.run(input, session);
    (input.contents[0] as { text: string }).text = "edited";
    response.messages[0].contents.length = 0;
    const stored = await history(agent, session);
    expect(messageText(stored[0])).toBe("original");
    expect(stored[1].contents.length).toBeGreaterThan(0);
  });

  it("a failing tool reports its error to the model and the run goes on", async () => {
    const client = new ScriptedChatClient({ rules: [{ when: "boom", reply: { toolCall: { name: "explode" } } }] });
    const agent = new ChatClientAgent({
      client,
      tools: [
        {
          name: "explode",
          execute: () => {
            throw new Error("kaboom");
          },
        },
      ],
    });
    const response = await agent.run("boom");
    expect(response.text).toBe('The tool returned {"error":"kaboom"}.');
  });
});
