/**
 * History in a message log survives every restart pattern: a session created afresh with a known
 * id adopts the log instead of replacing it, apps that never save sessions still get every turn
 * into the log (`commit: "run"`), and a session moved between history providers either carries its
 * history over or is refused before the model is called.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClientAgent,
  InMemoryChatHistoryProvider,
  StoredChatHistoryProvider,
  keepLastMessages,
} from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { deserializeSession, messageText, serializeSession, type ChatMessage } from "../../src/index.js";
import { withSession, type MessageLog, type SessionStore } from "../../src/stores.js";
import { HistoryProviderMismatchError } from "../../src/runtime/agent/providers/chat-history-provider.js";
import { allBackends, freshStore, type Backend } from "../stores/helpers.js";

const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);

describe.each(allBackends)("history restarts on $name", (backend: Backend) => {
  let store: SessionStore;
  let done: () => Promise<void>;
  let n = 0;
  const id = (label: string) => `${label}-${++n}`;
  const client = () => new ScriptedChatClient({ usage: false });
  const storedAgent = (
    options: { commit?: "session" | "run"; reducer?: ReturnType<typeof keepLastMessages>; log?: MessageLog } = {},
  ) => {
    const c = client();
    const agent = new ChatClientAgent({
      client: c,
      history: new StoredChatHistoryProvider({
        log: options.log ?? store.messages,
        commit: options.commit,
        reducer: options.reducer,
      }),
    });
    return { agent, client: c };
  };

  beforeAll(async () => {
    ({ store, done } = await freshStore(backend));
  });
  afterAll(async () => done());

  describe("the app keeps only the conversation id and creates a session with it after a restart", () => {
    it("a new session with the id adopts the log and never replaces it (default commit)", async () => {
      const conversationId = id("2b");
      // Phase 1: one process, one session object, two turns; nothing is saved but the log.
      const first = storedAgent().agent;
      const s1 = first.createSession({ id: conversationId });
      await first.run("Hello! I'm working on a Python project.", s1);
      await first.run("I'm interested in neural networks.", s1);
      const before = await store.messages.getMessages(conversationId);
      expect(texts(before)).toContain("Hello! I'm working on a Python project.");

      // Phase 2: after a restart, a new agent and a new session with the same id.
      const { agent: second, client: model } = storedAgent();
      const s2 = second.createSession({ id: conversationId });
      const reply = await second.run("What was I working on before?", s2);
      expect(model.requests[0].messages.slice(0, before.length)).toEqual(before);
      expect(reply.text).toContain(`I can see ${before.length} earlier messages`);
      await second.run("Can you suggest some libraries?", s2);
      const after = await store.messages.getMessages(conversationId);
      expect(after.slice(0, before.length)).toEqual(before);
      expect(texts(after)).toContain("What was I working on before?");
      expect(await second.history.listMessages(s2)).toHaveLength(before.length + 4);
    });

    it('commit: "run" writes every turn when its run commits: nothing waits for a save', async () => {
      const conversationId = id("2b-run");
      const first = storedAgent({ commit: "run" }).agent;
      const s1 = first.createSession({ id: conversationId });
      await first.run("Hello! I'm working on a Python project.", s1);
      await first.run("I'm interested in neural networks.", s1);
      // The last turn is in the log although the session was never saved.
      expect(texts(await store.messages.getMessages(conversationId))).toEqual([
        "Hello! I'm working on a Python project.",
        'You said: "Hello! I\'m working on a Python project.". I can see 0 earlier messages.',
        "I'm interested in neural networks.",
        'You said: "I\'m interested in neural networks.". I can see 2 earlier messages.',
      ]);
      expect(s1.stateBag["statebag.storedChatHistory"]).toEqual({
        $type: "StoredChatHistoryState",
        $version: 2,
        storageId: conversationId,
        messageCount: 4,
      });

      const { agent: second } = storedAgent({ commit: "run" });
      const reply = await second.run("What was I working on before?", second.createSession({ id: conversationId }));
      expect(reply.text).toContain("I can see 4 earlier messages");
      expect(await store.messages.getMessages(conversationId)).toHaveLength(6);
    });

    it('commit: "run": a failed or abandoned run writes nothing; concurrent processes lose no turn', async () => {
      const conversationId = id("2b-fail");
      const failing = new ChatClientAgent({
        client: {
          metadata: { providerName: "down", supportsServiceStorage: false },
          getResponse: async () => Promise.reject(new Error("model down")),
          getStreamingResponse: () => {
            throw new Error("model down");
          },
        },
        history: new StoredChatHistoryProvider({ log: store.messages, commit: "run" }),
      });
      await expect(failing.run("lost?", failing.createSession({ id: conversationId }))).rejects.toThrow(/model down/);
      expect(await store.messages.getMessages(conversationId)).toEqual([]);

      const { agent } = storedAgent({ commit: "run" });
      const stream = agent.runStream("streamed", agent.createSession({ id: conversationId }));
      await stream.next();
      await stream.return(undefined);
      expect(await store.messages.getMessages(conversationId)).toEqual([]);

      // Four processes, each with its own fresh session on the same conversation.
      await Promise.all(
        ["a", "b", "c", "d"].map((t) =>
          storedAgent({ commit: "run" }).agent.run(`turn ${t}`, agent.createSession({ id: conversationId })),
        ),
      );
      const log = texts(await store.messages.getMessages(conversationId));
      expect(log.filter((t) => t.startsWith("turn ")).sort()).toEqual(["turn a", "turn b", "turn c", "turn d"]);
      expect(log).toHaveLength(8);
    });

    it('commit: "run" with a reducer: a concurrent append is kept, and the reduction waits for the next run', async () => {
      const conversationId = id("2b-reduce");
      const seedAgent = storedAgent({ commit: "run" }).agent;
      for (const t of ["q0", "q1", "q2"]) await seedAgent.run(t, seedAgent.createSession({ id: conversationId }));
      // A log that lets another process append right after this run has read it.
      let sneak = true;
      const racing: MessageLog = Object.assign(Object.create(store.messages) as MessageLog, {
        readMessages: async (storageId: string) => {
          const snapshot = await store.messages.readMessages(storageId);
          if (sneak) {
            sneak = false;
            await store.messages.appendMessages(
              storageId,
              [{ role: "user", contents: [{ $type: "text", text: "other process" }] }],
              { operationId: "other" },
            );
          }
          return snapshot;
        },
      });
      const { agent } = storedAgent({ commit: "run", reducer: keepLastMessages(4), log: racing });
      await agent.run("q3", agent.createSession({ id: conversationId }));
      const log = texts(await store.messages.getMessages(conversationId));
      expect(log).toContain("other process");
      expect(log.slice(-2)[0]).toBe("q3");
      expect(log).toHaveLength(6 + 1 + 2);
      // The next run reduces (nobody races it).
      await agent.run("q4", agent.createSession({ id: conversationId }));
      expect(texts(await store.messages.getMessages(conversationId)).filter((t) => /^q\d$/.test(t))).toEqual([
        "q3",
        "q4",
      ]);
    });
  });

  describe("a session moves from an in-memory history to a stored one", () => {
    it("in-memory history is carried into the log on first use, and kept there", async () => {
      const pid = id("switch");
      const local = new ChatClientAgent({ client: client() });
      const session = local.createSession({ id: pid });
      await local.run("my name is Noor", session);
      await local.run("I like tea", session);
      const restored = deserializeSession(serializeSession(session));

      const { agent: stored, client: model } = storedAgent();
      await withSession(store, pid, () => restored, { create: () => restored });
      const { value } = await withSession(store, pid, (s) => stored.run("what is my name?", s));
      expect(value.text).toBe("Your name is Noor.");
      expect(model.requests[0].messages).toHaveLength(5);
      const { value: next } = await withSession(store, pid, (s) => stored.run("and now?", s));
      expect(next.text).toContain("I can see 6 earlier messages");
      const log = texts(await store.messages.getMessages(pid));
      expect(log.slice(0, 6)).toEqual(
        texts(await local.history.listMessages(session)).concat(["what is my name?", "Your name is Noor."]),
      );
    });

    it('in-memory history is carried over in commit: "run" mode too', async () => {
      const pid = id("switch-run");
      const local = new ChatClientAgent({ client: client() });
      const session = local.createSession({ id: pid });
      await local.run("my name is Ada", session);
      const { agent } = storedAgent({ commit: "run" });
      expect((await agent.run("what is my name?", session)).text).toBe("Your name is Ada.");
      expect(texts(await store.messages.getMessages(pid))).toEqual([
        "my name is Ada",
        "Nice to meet you, Ada.",
        "what is my name?",
        "Your name is Ada.",
      ]);
    });

    it("refuses before the model call when the log already holds a different history", async () => {
      const pid = id("switch-clash");
      await store.messages.appendMessages(
        pid,
        [{ role: "user", contents: [{ $type: "text", text: "someone else" }] }],
        { operationId: "x" },
      );
      const local = new ChatClientAgent({ client: client() });
      const session = local.createSession({ id: pid });
      await local.run("my name is Noor", session);
      const { agent, client: model } = storedAgent();
      const error = await agent.run("what is my name?", session).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HistoryProviderMismatchError);
      expect((error as HistoryProviderMismatchError).code).toBe("history-provider-mismatch");
      expect((error as Error).message).toContain('"statebag.chatHistory"');
      expect((error as Error).message).toContain("InMemoryChatHistoryState");
      expect((error as HistoryProviderMismatchError).hint).toMatch(/InMemoryChatHistoryProvider/);
      expect(model.requests).toHaveLength(0);
      expect(texts(await store.messages.getMessages(pid))).toEqual(["someone else"]);
    });

    it("an in-memory agent refuses a session whose history is in a log, naming the provider", async () => {
      const pid = id("switch-back");
      const { agent } = storedAgent();
      await withSession(store, pid, (s) => agent.run("my name is Noor", s));
      const loaded = (await store.get(pid))!.session;
      const model = client();
      const local = new ChatClientAgent({ client: model });
      const error = await local.run("what is my name?", loaded).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HistoryProviderMismatchError);
      expect((error as Error).message).toContain("StoredChatHistoryState");
      expect((error as Error).message).toContain(`message log "${pid}"`);
      expect((error as HistoryProviderMismatchError).hint).toMatch(/StoredChatHistoryProvider/);
      expect(model.requests).toHaveLength(0);
      await expect(local.history.listMessages(loaded)).rejects.toBeInstanceOf(HistoryProviderMismatchError);
      // Under another key the in-memory provider says which key holds the messages.
      const other = new InMemoryChatHistoryProvider({ key: "app.history" });
      const session = local.createSession({ id: id("keys") });
      await new ChatClientAgent({ client: client() }).run("hi", session);
      const moved = new ChatClientAgent({ client: model, history: other });
      await expect(moved.run("again", session)).rejects.toThrow(
        expect.objectContaining({ hint: expect.stringMatching(/key: "statebag.chatHistory"/) }),
      );
      expect(model.requests).toHaveLength(0);
    });
  });
});
