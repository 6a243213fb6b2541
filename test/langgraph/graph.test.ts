/**
 * A LangGraph `StateGraph` with `MessagesAnnotation` on the statebag saver, as an app runs it: three
 * turns, a restart (a new saver on the same store), a fourth turn that sees the whole conversation,
 * the thread listed under its owner and removed by `eraseOwner`. The model is a node that answers
 * from the messages it is given (no network). Runs on memory, SQLite and, when their servers run,
 * PostgreSQL and Redis.
 */
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { createStatebagSaver, LANGGRAPH_STATE_KEY, type StatebagSaver } from "../../src/langgraph.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { allBackends, freshStore } from "../stores/helpers.js";

/** The stubbed model: it answers with the turn number and what the user said last. */
function fakeModel(state: typeof MessagesAnnotation.State): { messages: BaseMessage[] } {
  const turns = state.messages.filter((m) => m.getType() === "human").length;
  const last = state.messages[state.messages.length - 1];
  return {
    messages: [new AIMessage({ content: `turn ${turns}: you said ${String(last.content)}`, id: `ai-${turns}` })],
  };
}

function chatGraph(saver: StatebagSaver) {
  return new StateGraph(MessagesAnnotation)
    .addNode("model", fakeModel)
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanups.splice(0)) await done();
});

describe.each(allBackends.filter((b) => b.name !== "sqlite-better"))("a LangGraph chat on $name", (backend) => {
  it("runs three turns, restarts on the same store, continues, lists the thread under its owner, and erases it", async () => {
    const { store, url, done } = await freshStore(backend);
    cleanups.push(done);
    const config = { configurable: { thread_id: "chat-1" }, metadata: { owner: "ada" } };

    const graph = chatGraph(await createStatebagSaver(store));
    for (const text of ["Hi, I am Ada.", "What is 2+2?", "Thanks!"])
      await graph.invoke({ messages: [new HumanMessage(text)] }, config);

    // The restart: a new store object on the same location (memory: the same store) and a new saver.
    let second: SessionStore = store;
    if (backend.name !== "memory") {
      second = await openStore(url);
      cleanups.unshift(() => second.close());
    }
    const restarted = chatGraph(await createStatebagSaver(second));
    const result = await restarted.invoke({ messages: [new HumanMessage("Who am I?")] }, config);
    expect(result.messages.map((m: BaseMessage) => [m.getType(), m.content])).toEqual([
      ["human", "Hi, I am Ada."],
      ["ai", "turn 1: you said Hi, I am Ada."],
      ["human", "What is 2+2?"],
      ["ai", "turn 2: you said What is 2+2?"],
      ["human", "Thanks!"],
      ["ai", "turn 3: you said Thanks!"],
      ["human", "Who am I?"],
      ["ai", "turn 4: you said Who am I?"],
    ]);
    expect(result.messages.every((m: BaseMessage) => typeof m.id === "string")).toBe(true);

    // The thread is one statebag session, owned by the metadata's owner, its messages as chat messages.
    const listed = await second.list({ owner: "ada" });
    expect(listed.items.map((i) => i.id)).toEqual(["langgraph:chat-1"]);
    expect((await second.list({ owner: "bob" })).items).toEqual([]);
    const stored = await second.get("langgraph:chat-1");
    const text = JSON.stringify(stored?.session.stateBag[LANGGRAPH_STATE_KEY]);
    expect(text).toContain('"role":"assistant","contents":[{"$type":"text","text":"turn 4: you said Who am I?"}]');

    // Also through LangGraph's own API: the saver lists the owner's checkpoints across threads.
    const saver = await createStatebagSaver(second);
    const mine = [];
    for await (const t of saver.list({}, { filter: { owner: "ada" } })) mine.push(t);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((t) => t.config.configurable?.thread_id === "chat-1")).toBe(true);

    const receipt = await second.eraseOwner("ada");
    expect(receipt.sessions).toBe(1);
    expect(await saver.getTuple({ configurable: { thread_id: "chat-1" } })).toBeUndefined();
    expect((await second.list({ owner: "ada" })).items).toEqual([]);
  });
});
