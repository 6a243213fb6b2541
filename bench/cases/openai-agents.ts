/**
 * openai-agents.sqlite.* (issue #38): what a `StatebagSession` costs the OpenAI Agents SDK. The SDK
 * ships no SQLite-backed session in @openai/agents-core, so the baselines are its in-process
 * `MemorySession` and the raw driver doing the same writes.
 *
 * Workload (one sample): a new conversation of 10 turns, each turn what the runner does with a
 * session: `getItems()` (the whole history) then `addItems([user, assistant])`. Both items are
 * typical Responses API items (an assistant message with id, status and output_text parts).
 *
 *   openai-agents.sqlite.turns10         StatebagSession on SQLite (node:sqlite, WAL, synchronous
 *                                        NORMAL as statebag opens it) vs MemorySession (nothing stored)
 *   openai-agents.sqlite.turns10.raw     the same vs node:sqlite by hand with the same pragmas: one
 *                                        row per item (session id, position, JSON), each turn a SELECT
 *                                        of the session's rows (JSON.parse each) and an INSERT of the
 *                                        two new rows in one transaction: no validation, no
 *                                        compare-and-swap, no owner, no mapping to chat messages
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { isDeepStrictEqual } from "node:util";
import { MemorySession } from "@openai/agents-core";
import { StatebagSession } from "../../src/openai-agents.js";
import { openStore } from "../../src/stores.js";
import { compare, result, type BenchContext, type CaseOutcome } from "../harness.js";

const TURNS = 10;

function turnItems(t: number) {
  return [
    { type: "message", role: "user", content: `What is the weather like in Lisbon today? (${t})` },
    {
      type: "message",
      role: "assistant",
      id: `msg_${t}`,
      status: "completed",
      content: [{ type: "output_text", text: `Sunny, 24 degrees, light wind from the north-west. (${t})` }],
    },
  ];
}

interface AnySession {
  getItems(): Promise<unknown[]>;
  addItems(items: unknown[]): Promise<void>;
}

async function conversation(session: AnySession): Promise<number> {
  let seen = 0;
  for (let t = 0; t < TURNS; t++) {
    seen = (await session.getItems()).length;
    await session.addItems(turnItems(t));
  }
  if (seen !== 2 * (TURNS - 1)) throw new Error(`a session read ${seen} items before its last turn`);
  return seen;
}

export async function openAIAgentsCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-openai-agents-"));
  const store = await openStore(`sqlite:${join(dir, "sessions.db")}`);
  const raw = new DatabaseSync(join(dir, "raw.db"));
  try {
    raw.exec("PRAGMA journal_mode = WAL");
    raw.exec("PRAGMA synchronous = NORMAL");
    raw.exec(
      "CREATE TABLE items (session_id TEXT NOT NULL, seq INTEGER NOT NULL, item TEXT NOT NULL, PRIMARY KEY (session_id, seq))",
    );
    const select = raw.prepare("SELECT item FROM items WHERE session_id = ? ORDER BY seq");
    const insert = raw.prepare("INSERT INTO items (session_id, seq, item) VALUES (?, ?, ?)");
    const rawSession = (id: string): AnySession => {
      let next = 0;
      return {
        async getItems() {
          return (select.all(id) as { item: string }[]).map((r) => JSON.parse(r.item));
        },
        async addItems(items) {
          raw.exec("BEGIN");
          try {
            for (const item of items) insert.run(id, next++, JSON.stringify(item));
            raw.exec("COMMIT");
          } catch (error) {
            raw.exec("ROLLBACK");
            throw error;
          }
        },
      };
    };

    let counter = 0;
    const ours = () => conversation(new StatebagSession({ store, sessionId: `s${counter++}`, owner: "bench" }));
    const memory = () => conversation(new MemorySession());
    const byHand = () => conversation(rawSession(`r${counter++}`));

    // The three sides hold the same items.
    const check = [new StatebagSession({ store, sessionId: "check" }), new MemorySession(), rawSession("check")];
    for (const session of check) await conversation(session);
    const [oursItems, memoryItems, rawItems] = await Promise.all(check.map((s) => s.getItems()));
    if (!isDeepStrictEqual(oursItems, memoryItems) || !isDeepStrictEqual(memoryItems, rawItems)) {
      throw new Error("StatebagSession, MemorySession and the raw driver do not hold the same items");
    }

    ctx.log(`openai-agents.sqlite (${TURNS}-turn conversations)`);
    return [
      result(
        "openai-agents.sqlite.turns10",
        "MemorySession (@openai/agents-core, nothing stored)",
        await compare(ours, memory, ctx.fast),
      ),
      result(
        "openai-agents.sqlite.turns10.raw",
        "node:sqlite by hand: a row per item, SELECT + INSERT per turn",
        await compare(ours, byHand, ctx.fast),
      ),
    ];
  } finally {
    raw.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
