/**
 * Branches of a history kept in a store's message log (#33), on every store, through `withSession`:
 * regenerate, edit, switch, rewind and fork, each one compare-and-swap save; the model sees the
 * active path only; a branch appends to the log and never copies or rewrites the shared prefix; a
 * fork shares its source's log entries, survives the source session's deletion, and a concurrent
 * edit loses with `ConflictError`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClientAgent, StoredChatHistoryProvider, forkSession, type MessageSiblings } from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { messageText, type ChatMessage } from "../../src/index.js";
import { ConflictError, withSession, type SessionStore } from "../../src/stores.js";
import { resolveStoredHistory } from "../../src/interop.js";
import { allBackends, freshStore, scaleOutBackends, type Backend } from "../stores/helpers.js";

const texts = (messages: readonly ChatMessage[]) => messages.map(messageText);
const backends = [...allBackends, ...scaleOutBackends.filter((b) => b.name === "redis-cluster")];

describe.each(backends)("stored history branches on $name", (backend: Backend) => {
  let store: SessionStore;
  let done: () => Promise<void>;
  let n = 0;
  let answers = 0;
  const id = (label: string) => `${label}-${++n}`;
  const client = new ScriptedChatClient({
    usage: false,
    rules: [{ when: () => true, reply: (c) => `answer ${++answers} to ${c.text}` }],
  });
  let agent: ChatClientAgent;
  const lastInput = () => texts(client.requests.at(-1)!.messages);

  beforeAll(async () => {
    ({ store, done } = await freshStore(backend));
    agent = new ChatClientAgent({ client, history: new StoredChatHistoryProvider({ log: store.messages }) });
  });
  afterAll(async () => done());

  const chat = <R>(chatId: string, fn: (s: Parameters<Parameters<typeof withSession<R>>[2]>[0]) => Promise<R>) =>
    withSession(store, chatId, fn, { owner: "ada" });
  const path = async (chatId: string) => agent.history.listMessages((await store.get(chatId))!.session);

  it("regenerate, edit, switch and rewind: the model sees the active path; the log only grows", async () => {
    const c = id("chat");
    await chat(c, (s) => agent.run("one", s));
    await chat(c, (s) => agent.run("two", s));
    const linear = await path(c);
    const logBefore = await store.messages.getMessages(c);

    await chat(c, (s) => agent.regenerate(s));
    expect(lastInput()).toEqual(texts(linear.slice(0, 3)));
    const regenerated = await path(c);
    expect(texts(regenerated.slice(0, 3))).toEqual(texts(linear.slice(0, 3)));
    expect(regenerated[3].messageId).not.toBe(linear[3].messageId);
    // The log kept every message and only grew (after the next run applies the pending write).
    await chat(c, (s) => agent.run("three", s));
    expect(lastInput()).toEqual([...texts(regenerated), "three"]);
    const log = await store.messages.getMessages(c);
    expect(texts(log.slice(0, logBefore.length))).toEqual(texts(logBefore));

    const s1 = (await store.get(c))!.session;
    const versions: MessageSiblings = await agent.messageSiblings(s1, regenerated[3].messageId!);
    expect(versions).toMatchObject({ index: 1, count: 2 });
    expect(versions.siblingIds[0]).toBe(linear[3].messageId ?? "statebag-3");

    await chat(c, (s) => agent.switchBranch(s, versions.siblingIds[0]));
    expect(texts(await path(c))).toEqual(texts(linear));
    await chat(c, (s) => agent.run("four", s));
    expect(lastInput()).toEqual([...texts(linear), "four"]);

    const edited = await path(c);
    await chat(c, (s) => agent.editMessage(s, edited[2].messageId ?? "statebag-2", "two, edited"));
    expect(lastInput()).toEqual([...texts(linear.slice(0, 2)), "two, edited"]);
    const s2 = (await store.get(c))!.session;
    const afterEdit = await agent.history.listMessages(s2);
    expect((await agent.messageSiblings(s2, afterEdit[2].messageId!)).count).toBe(2);

    // An export reads the active path, not the log's entries of every branch.
    const resolved = await resolveStoredHistory(s2, store.messages);
    expect(
      texts((resolved.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }).messages),
    ).toEqual(texts(afterEdit));

    await chat(c, (s) => agent.rewind(s, afterEdit[1].messageId ?? "statebag-1"));
    expect(texts(await path(c))).toEqual(texts(linear.slice(0, 2)));
    // Nothing written was lost: 4 + answer' + three, answer + four, answer + edit, answer.
    const tree = await agent.messageTree((await store.get(c))!.session);
    expect(tree).toHaveLength(11);
    expect(tree.filter((node) => node.active)).toHaveLength(2);
  });

  it("fork shares the source's log, survives the source's deletion, and goes its own way", async () => {
    const c = id("source");
    await chat(c, (s) => agent.run("a", s));
    await chat(c, (s) => agent.run("b", s));
    const source = await path(c);
    const forkId = id("fork");
    const { session: fork } = await forkSession(store, agent, c, source[3].messageId ?? "statebag-3", {
      owner: "ada",
      id: forkId,
    });
    expect((await store.get(forkId))!.meta.owner).toBe("ada");
    expect(agent.history.forkedFrom(fork)).toMatchObject({ sessionId: c });
    // Nothing was copied: the fork's own log is empty.
    expect(await store.messages.getMessages(forkId)).toEqual([]);
    expect(texts(await path(forkId))).toEqual(texts(source));

    await chat(forkId, (s) => agent.run("c", s));
    expect(lastInput()).toEqual([...texts(source), "c"]);
    await chat(c, (s) => agent.run("other", s));
    expect(texts(await path(forkId)).slice(0, 4)).toEqual(texts(source));

    // Deleting the source session keeps its log (store.delete never removes logs): the fork reads on.
    await store.delete(c);
    await chat(forkId, (s) => agent.run("d", s));
    expect(texts(await path(forkId))).toHaveLength(8);
    // A fork of a fork names the first source's entries too.
    const second = await agent.fork((await store.get(forkId))!.session, (await path(forkId))[5].messageId!, {
      id: id("fork2"),
    });
    expect(texts(await agent.history.listMessages(second))).toEqual(texts((await path(forkId)).slice(0, 6)));
  });

  it("two edits of one chat at once: one wins, the other gets ConflictError and leaves nothing", async () => {
    const c = id("race");
    await chat(c, (s) => agent.run("q", s));
    const question = (await path(c))[0];
    // Both load the same revision (as two requests would), each changes its copy, both save.
    const first = (await store.get(c))!;
    const second = (await store.get(c))!;
    await agent.regenerate(first.session);
    await agent.editMessage(second.session, question.messageId ?? "statebag-0", "q2");
    await store.save(first.session, { expectedRevision: first.revision, meta: { owner: "ada" } });
    await expect(
      store.save(second.session, { expectedRevision: second.revision, meta: { owner: "ada" } }),
    ).rejects.toBeInstanceOf(ConflictError);
    // Only the winner's messages: the question, its first answer and the regenerated one.
    await chat(c, (s) => agent.run("after", s));
    const tree = await agent.messageTree((await store.get(c))!.session);
    expect(tree.map((n) => messageText(n.message))).not.toContain("q2");
    expect(tree).toHaveLength(5);
    // Through withSession too: two at once, one ConflictError (when they overlap; never two wins on one revision).
    const results = await Promise.allSettled([
      chat(c, (s) => agent.regenerate(s)),
      chat(c, (s) => agent.editMessage(s, question.messageId ?? "statebag-0", "q3")),
    ]);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(ConflictError);
  });

  it("a fork whose source log is gone says so (coded); erasing the owner removes the source, the fork and their logs", async () => {
    const owner = id("owner");
    const c = id("erase-source");
    await withSession(store, c, (s) => agent.run("x", s), { owner });
    await withSession(store, c, (s) => agent.run("y", s), { owner });
    const source = await path(c);
    const forkId = id("erase-fork");
    await forkSession(store, agent, c, source[3].messageId ?? "statebag-3", { owner, id: forkId });
    await withSession(store, forkId, (s) => agent.run("z", s), { owner });
    await withSession(store, forkId, (s) => agent.run("w", s), { owner }); // applies z's pending write
    expect(await store.messages.getMessages(forkId)).toHaveLength(2);

    const receipt = await store.eraseOwner(owner);
    expect(receipt.sessions).toBe(2);
    expect(await store.get(c)).toBeUndefined();
    expect(await store.get(forkId)).toBeUndefined();
    expect(await store.messages.getMessages(c)).toEqual([]);
    expect(await store.messages.getMessages(forkId)).toEqual([]);

    // A source log removed under a live fork (retention of the source, say): a coded error naming it.
    const c2 = id("gone-source");
    await chat(c2, (s) => agent.run("x", s));
    await chat(c2, (s) => agent.run("y", s));
    const p2 = await path(c2);
    const f2 = id("gone-fork");
    await forkSession(store, agent, c2, p2[3].messageId ?? "statebag-3", { owner: "ada", id: f2 });
    await store.messages.deleteMessages(c2);
    await expect(path(f2)).rejects.toMatchObject({ code: "history-fork-source-missing" });
  });

  it("on a long log a branch reads the path's own entries only, and a windowed run only its window", async () => {
    const c = id("long");
    const seed = Array.from({ length: 3000 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      contents: [{ $type: "text" as const, text: `old ${i}` }],
    }));
    await store.messages.appendMessages(c, seed, { operationId: "seed" });
    let read = 0;
    let whole = 0;
    const counted = new Proxy(store.messages, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const out = await value.apply(target, args);
          if (name === "readMessages") whole++;
          if (name === "readMessageRange" || name === "readMessageWindow") read += out.messages.length;
          return out;
        };
      },
    });
    const windowed = new ChatClientAgent({
      client,
      history: new StoredChatHistoryProvider({ log: counted, window: 20 }),
    });
    await withSession(store, c, (s) => windowed.run("new", s), { owner: "ada" });
    read = 0;
    await withSession(store, c, (s) => windowed.regenerate(s), { owner: "ada" });
    await withSession(store, c, (s) => windowed.run("next", s), { owner: "ada" });
    const session = (await store.get(c))!.session;
    const last = (await windowed.history.pathTail(session, 1))[0];
    await windowed.switchBranch(session, last.messageId!);
    await windowed.messageSiblings(session, last.messageId!);
    expect(whole).toBe(0);
    expect(read).toBeLessThan(400);
    expect(lastInput()).toHaveLength(21);
  });

  it('commit: "run" keeps no branches: every branch operation says so, and a linear log is unchanged', async () => {
    const c = id("run-mode");
    const runAgent = new ChatClientAgent({
      client,
      history: new StoredChatHistoryProvider({ log: store.messages, commit: "run" }),
    });
    const session = runAgent.createSession({ id: c });
    await runAgent.run("hello", session);
    expect(runAgent.history.supportsBranches).toBe(false);
    const before = await store.messages.getMessages(c);
    await expect(runAgent.regenerate(session)).rejects.toMatchObject({ code: "history-branch" });
    await expect(runAgent.rewind(session, before[0].messageId!)).rejects.toMatchObject({ code: "history-branch" });
    await expect(runAgent.fork(session, before[0].messageId!)).rejects.toMatchObject({ code: "history-branch" });
    expect(await store.messages.getMessages(c)).toEqual(before);
  });
});
