/**
 * The OpenAI Agents SDK's `Session` contract as a runner-agnostic suite. The SDK (0.20.0) ships no
 * session tests in its package, so the clauses are ported from what it documents: the `Session`
 * interface's doc comments (@openai/agents-core dist/memory/session.d.ts) and what its reference
 * implementation `MemorySession` does (items returned as copies, `limit` = the newest items in
 * chronological order, `limit <= 0` = none). The SDK's `MemorySession` runs through it as the
 * control, so a clause that only statebag passes is a clause the port got wrong.
 *
 * Register it on any runner (vitest, node:test) by passing the runner's `describe`/`it`; cases
 * assert with node:assert and name the clause.
 */
import assert from "node:assert/strict";
import type { AgentItem, AgentsSession } from "../../src/openai-agents.js";

type Body = () => Promise<void>;

export interface SessionContractRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, body: Body): unknown;
}

export interface SessionContractOptions {
  name: string;
  runner: SessionContractRunner;
  /** A session over a fresh, empty location (a new id). `done` releases it. */
  open(): Promise<{ session: AgentsSession; done: () => Promise<void> }>;
  /**
   * For persistent sessions: another session object over the same stored session, as a restarted
   * process would build it. Absent for in-process sessions (MemorySession).
   */
  reopen?(session: AgentsSession): Promise<AgentsSession>;
}

/** One item of every kind an Agents SDK run writes, with the optional fields they carry. */
export const sampleItems: AgentItem[] = [
  { type: "message", role: "user", content: "What is the weather in Paris?" },
  { role: "user", content: [{ type: "input_text", text: "and in Rome" }] },
  { role: "system", content: "Answer briefly." },
  {
    id: "rs_1",
    type: "reasoning",
    content: [{ type: "input_text", text: "The user wants weather." }],
    providerData: { encrypted_content: "gAAAA" },
  },
  {
    type: "function_call",
    id: "fc_1",
    callId: "call_1",
    name: "get_weather",
    status: "completed",
    arguments: '{"city":"Paris"}',
  },
  { type: "function_call", callId: "call_2", name: "get_weather", arguments: '{ "city": "Rome" }' },
  { type: "function_call", callId: "call_3", name: "noop", arguments: "" },
  {
    type: "function_call_result",
    callId: "call_1",
    name: "get_weather",
    status: "completed",
    output: { type: "text", text: "18C, sunny" },
  },
  { type: "function_call_result", callId: "call_2", name: "get_weather", status: "completed", output: "21C" },
  {
    type: "hosted_tool_call",
    id: "ws_1",
    name: "web_search_call",
    status: "completed",
    arguments: '{"query":"weather"}',
    providerData: { action: { type: "search" } },
  },
  {
    type: "message",
    role: "assistant",
    id: "msg_1",
    status: "completed",
    content: [{ type: "output_text", text: "Paris: 18C. Rome: 21C.", providerData: { annotations: [] } }],
    providerData: { phase: "final" },
  },
  {
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "refusal", refusal: "I cannot do that." }],
  },
  { type: "computer_call", callId: "cc_1", status: "completed", action: { type: "click", x: 1, y: 2, button: "left" } },
  { type: "compaction", encrypted_content: "opaque" },
  { type: "some_future_item", nested: { deep: [1, null, true, "x"] }, empty: {} },
];

const user = (text: string): AgentItem => ({ type: "message", role: "user", content: text });

export function sessionContract(options: SessionContractOptions): void {
  const { describe, it } = options.runner;
  const withSession = (body: (s: AgentsSession) => Promise<void>): Body => {
    return async () => {
      const { session, done } = await options.open();
      try {
        await body(session);
      } finally {
        await done();
      }
    };
  };

  describe(`Session contract: ${options.name}`, () => {
    it(
      "getSessionId returns the same non-empty string on every call",
      withSession(async (s) => {
        const id = await s.getSessionId();
        assert.equal(typeof id, "string", "getSessionId: a string");
        assert.ok(id.length > 0, "getSessionId: not empty");
        assert.equal(await s.getSessionId(), id, "getSessionId: stable");
      }),
    );

    it(
      "a new session has no items, and popItem on it returns undefined",
      withSession(async (s) => {
        assert.deepEqual(await s.getItems(), [], "getItems on an empty session");
        assert.equal(await s.popItem(), undefined, "popItem on an empty session");
      }),
    );

    it(
      "addItems appends in order across calls; getItems returns them in chronological order",
      withSession(async (s) => {
        await s.addItems([user("1"), user("2")]);
        await s.addItems([user("3")]);
        await s.addItems([]);
        assert.deepEqual(await s.getItems(), [user("1"), user("2"), user("3")], "history order");
      }),
    );

    it(
      "every kind of item comes back exactly as it was added",
      withSession(async (s) => {
        await s.addItems(sampleItems);
        assert.deepEqual(await s.getItems(), sampleItems, "items round trip");
      }),
    );

    it(
      "getItems(limit) returns the newest `limit` items in chronological order (all when fewer; none for 0)",
      withSession(async (s) => {
        await s.addItems([user("1"), user("2"), user("3"), user("4")]);
        assert.deepEqual(await s.getItems(2), [user("3"), user("4")], "getItems(2)");
        assert.deepEqual(await s.getItems(1), [user("4")], "getItems(1)");
        assert.deepEqual(await s.getItems(10), [user("1"), user("2"), user("3"), user("4")], "getItems(10)");
        assert.deepEqual(await s.getItems(0), [], "getItems(0)");
      }),
    );

    it(
      "popItem removes and returns the most recent item, one at a time",
      withSession(async (s) => {
        await s.addItems([user("1"), sampleItems[4]!, user("3")]);
        assert.deepEqual(await s.popItem(), user("3"), "first pop");
        assert.deepEqual(await s.popItem(), sampleItems[4], "second pop");
        assert.deepEqual(await s.getItems(), [user("1")], "what is left");
        assert.deepEqual(await s.popItem(), user("1"), "last pop");
        assert.equal(await s.popItem(), undefined, "pop after the last");
      }),
    );

    it(
      "clearSession removes every item; the session keeps its id and takes new items",
      withSession(async (s) => {
        const id = await s.getSessionId();
        await s.addItems(sampleItems);
        await s.clearSession();
        assert.deepEqual(await s.getItems(), [], "after clearSession");
        assert.equal(await s.getSessionId(), id, "same id after clearSession");
        await s.addItems([user("again")]);
        assert.deepEqual(await s.getItems(), [user("again")], "usable after clearSession");
      }),
    );

    it(
      "items are copies: changing what was added or what was read changes nothing stored",
      withSession(async (s) => {
        const added = structuredClone(sampleItems[10]!);
        await s.addItems([added]);
        added.content[0].text = "changed after add";
        const read = await s.getItems();
        read[0]!.content[0].text = "changed after read";
        read.push(user("pushed"));
        assert.deepEqual(await s.getItems(), [sampleItems[10]], "stored item unchanged");
        // A result's structured output, and a verbatim item, are copies too, also for later writes.
        await s.addItems([structuredClone(sampleItems[7]!), structuredClone(sampleItems[3]!)]);
        const [, result, reasoning] = await s.getItems();
        result!.output.text = "changed";
        reasoning!.providerData.encrypted_content = "changed";
        await s.addItems([user("later")]);
        assert.deepEqual(
          await s.getItems(),
          [sampleItems[10], sampleItems[7], sampleItems[3], user("later")],
          "stored items unchanged by changes to what was read",
        );
      }),
    );

    it(
      "concurrent addItems calls lose nothing",
      withSession(async (s) => {
        const batches = Array.from({ length: 8 }, (_, i) => [user(`${i}a`), user(`${i}b`)]);
        await Promise.all(batches.map((b) => s.addItems(b)));
        const items = await s.getItems();
        assert.equal(items.length, 16, "every item kept");
        for (const [a, b] of batches) {
          const at = items.findIndex((x) => x.content === a!.content);
          assert.ok(at >= 0, `batch ${a!.content} kept`);
          assert.deepEqual(items[at + 1], b, "a batch stays in order and together");
        }
      }),
    );

    it("two sessions do not see each other's items", async () => {
      const one = await options.open();
      const two = await options.open();
      try {
        assert.notEqual(await one.session.getSessionId(), await two.session.getSessionId(), "distinct ids");
        await one.session.addItems([user("one")]);
        await two.session.addItems([user("two")]);
        assert.deepEqual(await one.session.getItems(), [user("one")], "first session");
        assert.deepEqual(await two.session.getItems(), [user("two")], "second session");
      } finally {
        await one.done();
        await two.done();
      }
    });

    const reopen = options.reopen;
    if (reopen !== undefined) {
      it(
        "a new session object over the same stored session sees, pops and clears the same items",
        withSession(async (s) => {
          await s.addItems(sampleItems);
          const again = await reopen(s);
          assert.equal(await again.getSessionId(), await s.getSessionId(), "same id");
          assert.deepEqual(await again.getItems(), sampleItems, "items after reopen");
          assert.deepEqual(await again.popItem(), sampleItems.at(-1), "pop through the new object");
          assert.deepEqual(await s.getItems(), sampleItems.slice(0, -1), "the first object sees the pop");
          await again.clearSession();
          assert.deepEqual(await s.getItems(), [], "the first object sees the clear");
        }),
      );
    }
  });
}
