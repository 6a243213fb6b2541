import { describe, expect, it } from "vitest";
import { AIContextProvider, ChatClientAgent, type ChatClient, type ProviderContext } from "../../src/agent.js";
import {
  ProviderSessionState,
  messageText,
  type AgentSession,
  type ChatMessage,
  type ProviderState,
} from "../../src/index.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { SequentialWorkflowAgent, participantStateKey } from "../../src/group-chat.js";
import { decodeSession, encodeSession } from "../../src/runtime/interop/session-codec.js";

/** A stored session read back in another process: through the session serialization. */
const storeAndLoad = (session: AgentSession) => decodeSession(encodeSession(session));
const historyOf = (session: AgentSession) =>
  ((session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] }) ?? { messages: [] }).messages;

interface TallyState extends ProviderState<"test.TallyState", 1> {
  /** @TJS-type integer */
  runs: number;
  /** Which agents ran with it, in order. */
  agents: string[];
}

/** A provider with per-session state: counts the runs it took part in and who ran them. */
class TallyProvider extends AIContextProvider {
  readonly state: ProviderSessionState<TallyState>;
  constructor(readonly key: string) {
    super();
    this.state = new ProviderSessionState<TallyState>(key, {
      stateType: "test.TallyState",
      version: 1,
      initial: () => ({ $type: "test.TallyState", runs: 0, agents: [] }),
    });
  }
  override invoked(context: ProviderContext & { responseMessages: readonly ChatMessage[] }) {
    const current = this.state.readOrInit(context.state);
    this.state.write(context.state, {
      $type: "test.TallyState",
      runs: current.runs + 1,
      agents: [...current.agents, context.session.id.split("#")[1] ?? "?"],
    });
  }
}

const p1 = () => new TallyProvider("app.p1");
const p2 = () => new TallyProvider("app.p2");
const p3 = () => new TallyProvider("app.p3");
const tally = (session: AgentSession, key: string) => session.stateBag[key] as unknown as TallyState | undefined;

describe("scenario 6: a session created by one agent, run by another", () => {
  const agentA = () =>
    new ChatClientAgent({ id: "A", client: new ScriptedChatClient({ usage: false }), contextProviders: [p1(), p2()] });
  const agentB = () =>
    new ChatClientAgent({ id: "B", client: new ScriptedChatClient({ usage: false }), contextProviders: [p2(), p3()] });

  it("shared providers reuse state, new ones start fresh, the others' state is kept untouched", async () => {
    const a = agentA();
    const b = agentB();
    const session = a.createSession({ id: "conv#A" });
    await a.run("Tell me about the history of AI. My name is Ada.", session);
    const p1AfterA = structuredClone(session.stateBag["app.p1"]);
    expect(tally(session, "app.p1")).toEqual({ $type: "test.TallyState", runs: 1, agents: ["A"] });

    // Later, in another process, agent B continues the same session.
    const restored = storeAndLoad(session);
    restored.id = "conv#B";
    const response = await b.run("And what about in Europe? What is my name?", restored);
    expect(response.text).toBe("Your name is Ada."); // the shared history provider continues
    expect(tally(restored, "app.p2")).toEqual({ $type: "test.TallyState", runs: 2, agents: ["A", "B"] }); // reused
    expect(tally(restored, "app.p3")).toEqual({ $type: "test.TallyState", runs: 1, agents: ["B"] }); // fresh
    expect(restored.stateBag["app.p1"]).toEqual(p1AfterA); // kept, untouched

    // A runs the session again, after another store/load: its P1 state is still there.
    const back = storeAndLoad(restored);
    back.id = "conv#A";
    await a.run("Thanks!", back);
    expect(tally(back, "app.p1")).toEqual({ $type: "test.TallyState", runs: 2, agents: ["A", "A"] });
    expect(tally(back, "app.p2")).toEqual({ $type: "test.TallyState", runs: 3, agents: ["A", "B", "A"] });
    expect(tally(back, "app.p3")).toEqual({ $type: "test.TallyState", runs: 1, agents: ["B"] }); // B's, kept for B
    expect(
      historyOf(back)
        .filter((m) => m.role === "user")
        .map(messageText),
    ).toEqual([
      "Tell me about the history of AI. My name is Ada.",
      "And what about in Europe? What is my name?",
      "Thanks!",
    ]);
  });

  it("a run never deletes or rewrites state it does not own, even when it tries", async () => {
    class Eraser extends AIContextProvider {
      readonly key = "app.eraser";
      override invoked(context: ProviderContext) {
        // A buggy provider "cleaning up" state it does not recognize.
        context.state.set("app.p1", { $type: "test.TallyState", runs: 0, agents: [] });
      }
    }
    const a = agentA();
    const session = a.createSession({ id: "conv#A" });
    await a.run("hello", session);
    const before = JSON.stringify(session);
    const b = new ChatClientAgent({
      id: "B",
      client: new ScriptedChatClient(),
      contextProviders: [p2(), new Eraser()],
    });
    await expect(b.run("hi", session)).rejects.toThrow(
      /provider "app.eraser" tried to write state bag key "app.p1", which it does not own/,
    );
    expect(JSON.stringify(session)).toBe(before);

    // And a well-behaved foreign run keeps every key it found, with the same values.
    const keysBefore = Object.keys(session.stateBag);
    await agentB().run("hi again", session);
    for (const key of keysBefore) expect(Object.keys(session.stateBag)).toContain(key);
    expect(session.stateBag["app.p1"]).toEqual(JSON.parse(before).stateBag["app.p1"]);
  });
});

describe("SequentialWorkflowAgent: several agents behind one session", () => {
  function setup(reviewerClient?: ChatClient) {
    const service = new ScriptedChatClient({ hosted: true, usage: false });
    const writer = new ChatClientAgent({
      id: "writer",
      name: "Writer",
      client: new ScriptedChatClient({ usage: false }),
      contextProviders: [p1()],
    });
    const reviewer = new ChatClientAgent({ id: "reviewer", name: "Reviewer", client: reviewerClient ?? service });
    const workflow = new SequentialWorkflowAgent({ name: "draft-and-review", participants: [writer, reviewer] });
    return { service, writer, reviewer, workflow };
  }

  it("exposes one session holding each participant's state, namespaced by channel key", async () => {
    const { service, writer, reviewer, workflow } = setup();
    expect(workflow.participants.map((p) => p.key)).toEqual(["local:writer", "hosted:reviewer"]);
    const session = workflow.createSession({ id: "wf-1" });
    const response = await workflow.run("my name is Ada", session);
    expect(response.sessionId).toBe("wf-1");
    expect(response.steps.map((s) => s.channelKey)).toEqual(["local:writer", "hosted:reviewer"]);
    expect(response.messages.map((m) => m.authorName)).toEqual(["Writer", "Reviewer"]);
    expect(response.text).toBe(messageText(response.messages[1]));

    expect(Object.keys(session.stateBag).sort()).toEqual([
      participantStateKey("local:writer", "app.p1"),
      participantStateKey("local:writer", "statebag.chatHistory"),
      "statebag.workflow",
    ]);
    const conversationId = (
      session.stateBag["statebag.workflow"] as unknown as { participants: Record<string, { conversationId?: string }> }
    ).participants["hosted:reviewer"].conversationId;
    expect(session.stateBag["statebag.workflow"]).toEqual({
      $type: "statebag.WorkflowState",
      participants: { "local:writer": { kind: "local" }, "hosted:reviewer": { kind: "hosted", conversationId } },
    });
    // The reviewer saw the input and the writer's reply (as a user message with authorName).
    expect(service.conversation(conversationId!)!.map((m) => [m.role, m.authorName])).toEqual([
      ["user", undefined],
      ["user", "Writer"],
      ["assistant", undefined],
    ]);

    // Serializes and validates like any session; a second run continues every participant.
    const restored = storeAndLoad(session);
    await workflow.run("what is my name?", restored);
    expect(messageText(historyOf(workflow.participantSession(restored, writer)).at(-1)!)).toBe("Your name is Ada.");
    expect(service.requests.at(-1)!.options.conversationId).toBe(conversationId);
    expect(workflow.participantSession(restored, "hosted:reviewer")).toMatchObject({
      id: "wf-1/hosted:reviewer",
      kind: "hosted",
      conversationId,
      stateBag: {},
    });
    expect(workflow.participantSession(restored, reviewer).stateBag).toEqual({});
  });

  it("keeps state bag keys it does not know, and fails atomically: all participants or none", async () => {
    let fail = false;
    const inner = new ScriptedChatClient({ usage: false });
    const flaky: ChatClient = {
      metadata: inner.metadata,
      getResponse: async (m, o) => {
        if (fail) throw new Error("reviewer down");
        return inner.getResponse(m, o);
      },
      getStreamingResponse: (m, o) => inner.getStreamingResponse(m, o),
    };
    const { workflow } = setup(flaky);
    const session = workflow.createSession({ stateBag: { "app.other": { $type: "acme.Other", keep: true } } });
    await workflow.run("one", session);
    const before = JSON.stringify(session);
    fail = true;
    await expect(workflow.run("two", session)).rejects.toThrow("reviewer down");
    expect(JSON.stringify(session)).toBe(before); // the writer's successful step was not committed
    fail = false;
    await workflow.run("two", session);
    expect(session.stateBag["app.other"]).toEqual({ $type: "acme.Other", keep: true });
    expect((session.stateBag[participantStateKey("local:writer", "app.p1")] as unknown as TallyState).runs).toBe(2);
  });

  it("a workflow session passes strict validation: every value is a registered provider state", async () => {
    const a = new ChatClientAgent({ id: "a", client: new ScriptedChatClient({ usage: false }) });
    const b = new ChatClientAgent({ id: "b", client: new ScriptedChatClient({ hosted: true, usage: false }) });
    const workflow = new SequentialWorkflowAgent({ participants: [a, b] });
    const session = workflow.createSession();
    await workflow.run("hello", session);
    expect(decodeSession(encodeSession(session, { strict: true }), { strict: true })).toEqual(session);
  });

  it("needs participants with distinct keys", () => {
    const agent = new ChatClientAgent({ id: "same", client: new ScriptedChatClient() });
    expect(() => new SequentialWorkflowAgent({ participants: [] })).toThrow(/at least one participant/);
    expect(() => new SequentialWorkflowAgent({ participants: [agent, agent] })).toThrow(/"local:same"/);
  });
});
