/**
 * A history is a tree (#33): regenerate, edit, switch, rewind and fork on an in-memory history,
 * what the model is shown (the active path only), sibling listings, each operation one
 * compare-and-swap save, and 0.1.0 histories loading as a single branch.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ChatClientAgent,
  HistoryBranchError,
  InMemoryChatHistoryProvider,
  MessageNotFoundError,
  RollingSummaryProvider,
  forkSession,
  keepLastMessages,
} from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { deserializeSession, messageText, serializeSession, type ChatMessage } from "../../src/index.js";
import { ConflictError, MemorySessionStore, withSession } from "../../src/stores.js";

const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);
let counter = 0;

function setup() {
  const client = new ScriptedChatClient({
    usage: false,
    rules: [{ when: () => true, reply: (c) => `answer ${++counter} to ${c.text}` }],
  });
  const agent = new ChatClientAgent({ client });
  return { client, agent };
}

const modelInput = (client: ScriptedChatClient) => texts(client.requests.at(-1)!.messages);

describe("in-memory history branches", () => {
  it("regenerate keeps the previous answer as a sibling and shows the model only the active path", async () => {
    const { client, agent } = setup();
    const session = agent.createSession();
    await agent.run("hello", session);
    await agent.run("weather?", session);
    const before = await agent.history.listMessages(session);
    const oldAnswer = before[3].messageId!;
    expect(before.every((m) => typeof m.messageId === "string")).toBe(true);

    await agent.regenerate(session);
    expect(modelInput(client)).toEqual(texts(before.slice(0, 3)));
    const after = await agent.history.listMessages(session);
    expect(after).toHaveLength(4);
    expect(after.slice(0, 3)).toEqual(before.slice(0, 3));
    expect(after[3].messageId).not.toBe(oldAnswer);

    const siblings = await agent.messageSiblings(session, after[3].messageId!);
    expect(siblings).toEqual({
      messageId: after[3].messageId,
      parentId: before[2].messageId,
      index: 1,
      count: 2,
      siblingIds: [oldAnswer, after[3].messageId],
    });
    // The next turn follows the new answer.
    await agent.run("thanks", session);
    expect(modelInput(client)).toEqual([...texts(after), "thanks"]);

    // Back to the first answer: the path ends there (it had no continuation).
    await agent.switchBranch(session, oldAnswer);
    expect(texts(await agent.history.listMessages(session))).toEqual(texts(before));
    expect((await agent.messageSiblings(session, oldAnswer)).index).toBe(0);
    // And forward again: the newest continuation of the other answer comes back.
    await agent.switchBranch(session, after[3].messageId!);
    expect(texts(await agent.history.listMessages(session))).toEqual([...texts(after), "thanks", expect.any(String)]);
    expect(await agent.messageTree(session)).toHaveLength(7);
  });

  it("edit starts a branch from the edited message's parent; rewind keeps what followed", async () => {
    const { client, agent } = setup();
    const session = agent.createSession();
    await agent.run("one", session);
    await agent.run("two", session);
    const path = await agent.history.listMessages(session);
    await agent.editMessage(session, path[2].messageId!, "two, edited");
    expect(modelInput(client)).toEqual([texts(path)[0], texts(path)[1], "two, edited"]);
    const edited = await agent.history.listMessages(session);
    expect(texts(edited).slice(0, 3)).toEqual(["one", texts(path)[1], "two, edited"]);
    expect((await agent.messageSiblings(session, edited[2].messageId!)).siblingIds).toEqual([
      path[2].messageId,
      edited[2].messageId,
    ]);
    // Editing the first message: a new root branch.
    await agent.editMessage(session, path[0].messageId!, "uno");
    expect(modelInput(client)).toEqual(["uno"]);
    expect((await agent.messageSiblings(session, path[0].messageId!)).count).toBe(2);
    // Only a user's message is edited.
    await expect(agent.editMessage(session, edited[1].messageId!, "x")).rejects.toBeInstanceOf(HistoryBranchError);
    await expect(agent.editMessage(session, "nope", "x")).rejects.toBeInstanceOf(MessageNotFoundError);

    await agent.switchBranch(session, edited[3].messageId!);
    await agent.rewind(session, edited[1].messageId!);
    expect(texts(await agent.history.listMessages(session))).toEqual(texts(edited.slice(0, 2)));
    // A new turn after a rewind is a third version of the message that followed.
    await agent.run("three", session);
    expect(
      (await agent.messageSiblings(session, (await agent.history.listMessages(session))[2].messageId!)).count,
    ).toBe(3);
    // Nothing was lost: every message written is still in the tree.
    expect((await agent.messageTree(session)).length).toBe(4 + 2 + 2 + 2);
  });

  it("fork copies the path up to a message into a new session with its origin", async () => {
    const { agent } = setup();
    const session = agent.createSession();
    await agent.run("a", session);
    await agent.run("b", session);
    const path = await agent.history.listMessages(session);
    const fork = await agent.fork(session, path[1].messageId!, { id: "fork-1", now: new Date(0) });
    expect(fork.id).toBe("fork-1");
    expect(await agent.history.listMessages(fork)).toEqual(path.slice(0, 2));
    expect(agent.history.forkedFrom(fork)).toEqual({
      sessionId: session.id,
      messageId: path[1].messageId,
      forkedAt: "1970-01-01T00:00:00.000Z",
    });
    await agent.run("c", fork);
    expect(await agent.history.listMessages(session)).toEqual(path);
    expect(deserializeSession(serializeSession(fork))).toEqual(fork);
  });

  it("a reducer keeps the branches whose parent it kept", async () => {
    const client = new ScriptedChatClient({ usage: false });
    const agent = new ChatClientAgent({
      client,
      history: new InMemoryChatHistoryProvider({ reducer: keepLastMessages(2) }),
    });
    const session = agent.createSession();
    await agent.run("one", session);
    await agent.regenerate(session);
    await agent.run("two", session);
    const tree = await agent.messageTree(session);
    // [one, answer'] dropped with its sibling answer; [two, answer] plus nothing else.
    expect(tree.filter((n) => !n.active)).toEqual([]);
    await agent.regenerate(session);
    expect((await agent.messageTree(session)).filter((n) => !n.active)).toHaveLength(1);
  });

  it("each operation is one compare-and-swap save: concurrent edits, one wins", async () => {
    const store = new MemorySessionStore();
    const { agent } = setup();
    await withSession(store, "chat", (s) => agent.run("hi", s), { owner: "ada" });
    await withSession(store, "chat", (s) => agent.run("more", s), { owner: "ada" });
    const path = await agent.history.listMessages((await store.get("chat"))!.session);
    const results = await Promise.allSettled([
      withSession(store, "chat", (s) => agent.regenerate(s), { owner: "ada", create: false }),
      withSession(store, "chat", (s) => agent.editMessage(s, path[2].messageId!, "other"), {
        owner: "ada",
        create: false,
      }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const rejected = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(ConflictError);

    const { session: fork } = await forkSession(store, agent, "chat", path[1].messageId!, {
      owner: "ada",
      id: "chat-fork",
    });
    const stored = await store.get("chat-fork");
    expect(stored?.meta.owner).toBe("ada");
    expect(await agent.history.listMessages(stored!.session)).toEqual(await agent.history.listMessages(fork));
    await expect(forkSession(store, agent, "chat", path[1].messageId!, { owner: "bob" })).rejects.toThrow(
      /does not exist/,
    );
    await expect(
      forkSession(store, agent, "chat", path[1].messageId!, { owner: "ada", id: "chat-fork" }),
    ).rejects.toBeInstanceOf(ConflictError);
  });

  it("a 0.1.0 history (v1, v2) loads as one branch, unchanged; its first branch writes the ids the UI showed", async () => {
    for (const version of [1, 2]) {
      const value = JSON.parse(readFileSync(`test/fixtures/InMemoryChatHistoryState/v${version}.json`, "utf8"));
      const session = deserializeSession(JSON.stringify({ id: "old", stateBag: { "statebag.chatHistory": value } }));
      const state = session.stateBag["statebag.chatHistory"] as unknown as Record<string, unknown>;
      expect(state.$version).toBe(3);
      expect(state.branches).toEqual([]);
      const messages = state.messages as ChatMessage[];
      expect(texts(messages)).toEqual(texts(value.messages));
      expect(messages).toEqual(value.messages);
      const { agent } = setup();
      const last = messages.length - 1;
      const lastId = messages[last].messageId ?? `statebag-${last}`;
      await agent.rewind(session, messages[1].messageId ?? "statebag-1");
      await agent.switchBranch(session, lastId);
      const after = await agent.history.listMessages(session);
      expect(after.map((m, i) => m.messageId ?? `statebag-${i}`)).toEqual(
        messages.map((m, i) => m.messageId ?? `statebag-${i}`),
      );
      expect(after.every((m) => m.messageId !== undefined)).toBe(true);
    }
  });

  it("a 0.1.0 stored history (StoredChatHistoryState v1) loads as a linear v2 state, unchanged", () => {
    const value = JSON.parse(readFileSync("test/fixtures/StoredChatHistoryState/v1.json", "utf8"));
    const session = deserializeSession(
      JSON.stringify({ id: "old", stateBag: { "statebag.storedChatHistory": value } }),
    );
    expect(session.stateBag["statebag.storedChatHistory"]).toEqual({ ...value, $version: 2 });
  });

  it("a context provider's recent messages follow the branch a run continues", async () => {
    const { agent: base, client } = setup();
    const summary = new RollingSummaryProvider({ summarizer: new ScriptedChatClient({ usage: false }) });
    const agent = new ChatClientAgent({ client, contextProviders: [summary], history: base.history });
    const session = agent.createSession();
    await agent.run("a", session);
    await agent.run("b", session);
    const oldAnswer = (await agent.history.listMessages(session))[3];
    await agent.regenerate(session);
    const path = await agent.history.listMessages(session);
    const recent = summary.state.read(session)!.recentMessages;
    expect(recent.map((m) => m.messageId)).toEqual(path.map((m) => m.messageId));
    expect(recent.map((m) => m.messageId)).not.toContain(oldAnswer.messageId);
  });
});
