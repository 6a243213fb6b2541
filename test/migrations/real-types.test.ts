/**
 * statebag's own types evolved for real:
 * - InMemoryChatHistoryState v2 adds `droppedMessageCount` (how many messages the reducer removed,
 *   so a UI can say "N earlier messages hidden"); the provider maintains it; v1 -> v2 sets 0.
 * - RollingSummaryState v2 renames `turns` to `turnCount`.
 * A session stored by the previous release (both at v1) loads, runs and saves at v2; the .NET
 * export still writes exactly `{"messages": [...]}`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ChatClientAgent,
  InMemoryChatHistoryProvider,
  RollingSummaryProvider,
  keepLastMessages,
} from "../../src/agent.js";
import { ScriptedChatClient } from "../../src/testing.js";
import { StateVersionError, messageText, type AgentSession } from "../../src/index.js";
import { exportDotnetSession, importDotnetSession } from "../../src/interop.js";
import { deserializeSession } from "../../src/runtime/persistence/serialization.js";
import { migrateStore } from "../../src/runtime/stores/migrate.js";
import { sqliteBackend } from "../stores/helpers.js";
import { envelope, fixture } from "./helpers.js";
import { seededStore, type SeededStore } from "./store-helpers.js";

/** A session exactly as the previous release stored it: history and rolling summary at v1. */
function storedV1(): AgentSession {
  return {
    id: "ada-lisbon",
    kind: "local",
    stateBag: {
      "statebag.chatHistory": fixture("InMemoryChatHistoryState", 1) as never,
      "statebag.rollingSummary": fixture("RollingSummaryState", 1) as never,
    },
  };
}

function agentWith(reducer?: ReturnType<typeof keepLastMessages>) {
  const history = new InMemoryChatHistoryProvider({ reducer });
  const summary = new RollingSummaryProvider({ summarizer: new ScriptedChatClient(), maxMessages: 4 });
  const client = new ScriptedChatClient({ usage: false });
  return { agent: new ChatClientAgent({ client, history, contextProviders: [summary] }), history, summary, client };
}

describe("a v1 stored session with history and rolling summary", () => {
  let s: SeededStore;
  beforeAll(async () => {
    s = await seededStore(sqliteBackend);
    await s.seed(storedV1());
  });
  afterAll(async () => s?.done());

  it("loads into v2 from the store, keeps every message and the summary, and continues", async () => {
    const stored = fixture("InMemoryChatHistoryState", 1);
    const loaded = await s.store.get("ada-lisbon");
    const { agent, history, summary, client } = agentWith();
    const session = loaded!.session;
    expect(history.state.read(session)).toEqual({
      $type: "InMemoryChatHistoryState",
      $version: 3,
      messages: stored.messages,
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    });
    expect(summary.state.read(session)).toMatchObject({
      $version: 2,
      turnCount: 3,
      summary: expect.stringContaining("Lisbon"),
    });
    expect(summary.state.read(session)).not.toHaveProperty("turns");

    const response = await agent.run("And what about Sunday?", session);
    expect(response.text).toContain(`I can see ${stored.messages.length} earlier messages`);
    // The migrated summary reached the model as instructions.
    expect(client.requests.at(-1)!.options.instructions).toContain(
      "Summary of the conversation so far: Ada asked whether it will rain in Lisbon",
    );
    expect(summary.state.read(session)!.turnCount).toBe(4);
    expect(await history.listMessages(session)).toHaveLength(stored.messages.length + 2);

    await s.store.save(session, { expectedRevision: loaded!.revision });
    const text = (await s.dump()).get("ada-lisbon")!.text;
    const bag = JSON.parse(text).session.stateBag;
    expect([
      bag["statebag.chatHistory"].$version,
      bag["statebag.chatHistory"].droppedMessageCount,
      bag["statebag.rollingSummary"].$version,
      bag["statebag.rollingSummary"].turnCount,
    ]).toEqual([3, 0, 2, 4]);
  });

  it("code that bypasses loading sees the old version as an error, never silently misreads it", () => {
    const { history } = agentWith();
    expect(() => history.state.read(storedV1())).toThrow(StateVersionError);
  });
});

describe("droppedMessageCount", () => {
  it("counts what the reducer removes, run after run, and survives a store round trip", async () => {
    const { agent, history } = agentWith(keepLastMessages(4));
    const session = agent.createSession();
    await agent.run("one", session);
    expect(history.droppedMessageCount(session)).toBe(0);
    await agent.run("two", session);
    await agent.run("three", session);
    expect(await history.listMessages(session)).toHaveLength(4);
    expect(history.droppedMessageCount(session)).toBe(2);
    const restored = deserializeSession(envelope(session));
    await agent.run("four", restored);
    expect(history.droppedMessageCount(restored)).toBe(4);
    const visible = await history.listMessages(restored);
    // What a UI shows above the visible messages:
    expect(`${history.droppedMessageCount(restored)} earlier messages hidden`).toBe("4 earlier messages hidden");
    expect(visible.map(messageText)[0]).toBe("three");
  });

  it("starts at 0 for a v1 history (whether it was ever reduced was not recorded)", () => {
    const session = deserializeSession(envelope(storedV1()));
    expect(new InMemoryChatHistoryProvider().droppedMessageCount(session)).toBe(0);
  });
});

describe(".NET interop with the v2 history", () => {
  it("export writes exactly {messages}; import gives a valid v2 state; the count travels in statebag's metadata", async () => {
    const { agent } = agentWith(keepLastMessages(4));
    const session = deserializeSession(envelope(storedV1()));
    await agent.run("Sunday?", session);
    const state = session.stateBag["statebag.chatHistory"] as unknown as {
      messages: unknown[];
      droppedMessageCount: number;
    };
    // 5 stored + 2 new messages, the last 4 kept (fewer when a tool result would be orphaned).
    expect(state.droppedMessageCount).toBe(7 - state.messages.length);
    expect(state.droppedMessageCount).toBeGreaterThanOrEqual(3);

    const dotnet = JSON.parse(JSON.stringify(exportDotnetSession(session, { metadata: true })));
    expect(Object.keys(dotnet.stateBag.InMemoryChatHistoryProvider)).toEqual(["messages"]);
    expect(dotnet.stateBag.InMemoryChatHistoryProvider.messages).toHaveLength(state.messages.length);
    expect(dotnet.stateBag["statebag.session"]).toMatchObject({
      historyDroppedMessageCount: state.droppedMessageCount,
    });

    const back = importDotnetSession(dotnet);
    expect(back.stateBag["statebag.chatHistory"]).toEqual(session.stateBag["statebag.chatHistory"]);
    expect(back.stateBag["statebag.rollingSummary"]).toEqual(session.stateBag["statebag.rollingSummary"]);

    // What .NET itself writes (no statebag metadata): a v2 state that starts counting at 0.
    const bare = importDotnetSession(exportDotnetSession(session, { metadata: false }));
    expect(bare.stateBag["statebag.chatHistory"]).toMatchObject({
      $type: "InMemoryChatHistoryState",
      $version: 3,
      droppedMessageCount: 0,
    });
  });
});

describe("bulk migration of the real types", () => {
  it("rewrites v1 sessions at v2 and reports both types", async () => {
    const s = await seededStore(sqliteBackend);
    for (let i = 0; i < 5; i++) await s.seed({ ...storedV1(), id: `real-${i}` });
    const report = await migrateStore(s.store);
    expect(report.states).toEqual([
      { type: "InMemoryChatHistoryState", from: 1, toType: "InMemoryChatHistoryState", to: 3, count: 5 },
      { type: "RollingSummaryState", from: 1, toType: "RollingSummaryState", to: 2, count: 5 },
    ]);
    const loaded = await s.store.get("real-3");
    expect(loaded!.session.stateBag["statebag.rollingSummary"]).toMatchObject({ $version: 2, turnCount: 3 });
    await s.done();
  });
});
