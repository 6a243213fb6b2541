/**
 * A real Agents SDK `Agent` and `run()` (@openai/agents-core) on a `StatebagSession`, with the
 * model stubbed by a `Model` implementation in this file (deterministic, offline: it answers from
 * the history the runner sends it). On every durable backend: three turns, a restart (new store,
 * session, agent and model objects on the same location), and the conversation continues from
 * the store; and a tool needing approval interrupts a run, the run is kept in the session, the
 * process "restarts", the call is approved and the run finishes.
 */
import { type AgentInputItem, RunState, type Session, run } from "@openai/agents-core";
import { afterAll, describe, expect, it } from "vitest";
import { StatebagSession } from "../../src/openai-agents.js";
import { openStore, type SessionStore } from "../../src/stores.js";
import { durableBackends, freshStore } from "../stores/helpers.js";
import { HistoryModel, buildAgent, refunds } from "./model.js";

const opened: { done: () => Promise<void> }[] = [];
afterAll(async () => {
  for (const o of opened.splice(0)) await o.done();
});

for (const backend of durableBackends) {
  describe(`an Agents SDK agent on StatebagSession (${backend.name})`, () => {
    it("runs three turns, restarts, and continues the same conversation from the store", async () => {
      const first = await freshStore(backend);
      opened.push(first);
      const session: Session = new StatebagSession({ store: first.store, sessionId: "chat-1", owner: "ada" });
      // With the SDK's item type spelled out, too.
      const typed: Session = new StatebagSession<AgentInputItem>({
        store: first.store,
        sessionId: "chat-1",
        owner: "ada",
      });
      expect(await typed.getSessionId()).toBe("chat-1");
      const agent = buildAgent(new HistoryModel());
      const answers: unknown[] = [];
      for (const text of ["my name is Ada", "I like tea", "I live in Paris"]) {
        answers.push((await run(agent, text, { session })).finalOutput);
      }
      expect(answers).toEqual([
        "noted (1 user messages so far)",
        "noted (2 user messages so far)",
        "noted (3 user messages so far)",
      ]);

      // Restart: nothing survives but the store's location.
      const store: SessionStore = await openStore(first.url);
      opened.push({ done: () => store.close() });
      const model = new HistoryModel();
      const again = new StatebagSession({ store, sessionId: "chat-1", owner: "ada" });
      const result = await run(buildAgent(model), "what did I say?", { session: again });
      expect(result.finalOutput).toBe("you said: my name is Ada | I like tea | I live in Paris");
      // The model saw the whole conversation: 4 user messages and 3 answers.
      expect(model.requests[0]).toHaveLength(7);
      const items = await again.getItems();
      expect(items).toHaveLength(8);
      // Stored as a statebag chat session of the owner: listable, its messages statebag messages.
      expect((await store.list({ owner: "ada" })).items.map((i) => i.id)).toEqual(["chat-1"]);
      const stored = await store.get("chat-1");
      const history = stored!.session.stateBag["statebag.chatHistory"] as unknown as {
        messages: { role: string; contents: { $type: string; text?: string }[] }[];
      };
      expect(history.messages.map((m) => `${m.role}:${m.contents[0]?.text}`)).toEqual([
        "user:my name is Ada",
        "assistant:noted (1 user messages so far)",
        "user:I like tea",
        "assistant:noted (2 user messages so far)",
        "user:I live in Paris",
        "assistant:noted (3 user messages so far)",
        "user:what did I say?",
        "assistant:you said: my name is Ada | I like tea | I live in Paris",
      ]);
    }, 60_000);

    it("keeps a run interrupted for approval in the session; after a restart it is approved and finishes", async () => {
      const first = await freshStore(backend);
      opened.push(first);
      const session = new StatebagSession({ store: first.store, sessionId: "refund-1" });
      const interrupted = await run(buildAgent(new HistoryModel()), "please refund order 42", { session });
      expect(interrupted.interruptions).toHaveLength(1);
      expect(interrupted.interruptions[0]!.name).toBe("refund");
      await session.saveRunState(interrupted.state);
      const before = refunds.length;

      // Restart: a new store object, session, model and agent.
      const store = await openStore(first.url);
      opened.push({ done: () => store.close() });
      const agent = buildAgent(new HistoryModel());
      const resumed = new StatebagSession({ store, sessionId: "refund-1" });
      const state = await resumed.loadRunState<RunState<unknown, typeof agent>>(agent);
      expect(state).toBeInstanceOf(RunState);
      const pending = state!.getInterruptions();
      expect(pending.map((p) => p.name)).toEqual(["refund"]);
      state!.approve(pending[0]!);
      const done = await run(agent, state!, { session: resumed });
      expect(done.interruptions ?? []).toEqual([]);
      expect(done.finalOutput).toBe("done: refunded order 42");
      expect(refunds.slice(before)).toEqual([42]);
      expect(await resumed.clearRunState()).toBe(true);
      expect(await resumed.getRunStateString()).toBeUndefined();

      // The session holds the whole exchange once: the request, the call, its result, the answer.
      const items = await resumed.getItems();
      expect(items.map((i) => (i as { type?: string }).type ?? "message")).toEqual([
        "message",
        "function_call",
        "function_call_result",
        "message",
      ]);
    }, 60_000);

    it("loadRunState gives undefined when no run is kept", async () => {
      const first = await freshStore(backend);
      opened.push(first);
      const session = new StatebagSession({ store: first.store });
      expect(await session.loadRunState(buildAgent(new HistoryModel()))).toBeUndefined();
      expect(await session.clearRunState()).toBe(false);
    });
  });
}
