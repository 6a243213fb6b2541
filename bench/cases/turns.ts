/**
 * turn.<sqlite|postgres|redis>.1000: one `withSession` turn on a stored 1,000-message session
 * (load, `agent.run` with the bench model and the default in-memory history, save
 * with compare-and-swap), against the raw driver doing the least a turn needs on the same kind of
 * table: get + JSON.parse + append the same two messages + JSON.stringify + CAS update.
 *
 * The model's work is not statebag's: the bench model (bench/bench-model.ts) answers at once, with
 * a usage content, times itself, and that time is taken out of every sample of our side, so the
 * ratio compares the store work of a turn plus the agent's own bookkeeping against the raw driver.
 * The raw side appends the very messages the model produced (usage included), so both sides store
 * the same data (checked after the run: 1,002 messages, equal but for the reply's generated id).
 *
 * Before every timed turn both sides put the session back to its 1,000 messages (untimed), so
 * each sample is the same turn on the same document. Sides alternate which goes first.
 *
 * Our store's codec recognizes the row it wrote itself when the turn reads it back (what the turn
 * before wrote, in one process) and does not check it again (stores/written-texts.ts).
 * turn.sqlite.1000.cold is the same turn on a row this process did not write (another process, an
 * older release, a restart): our store with `writtenCache: false`, every value checked on load.
 */
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import { BenchModel } from "../bench-model.js";
import { median, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";
import { makeSides, type ProbeKind } from "../stores-probe.js";
import { storeUrls, unreachable } from "./stores.js";

export const TURN_KINDS = ["sqlite", "postgres", "redis"] as const satisfies readonly ProbeKind[];
const RAW: Record<(typeof TURN_KINDS)[number], string> = { sqlite: "node:sqlite", postgres: "pg", redis: "ioredis" };

function historyOf(session: AgentSession): ChatMessage[] {
  return (session.stateBag[HISTORY_KEY] as unknown as { messages: ChatMessage[] }).messages;
}

export async function turnCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  const samples = ctx.quick ? 15 : 41;
  const runs = [...TURN_KINDS.map((kind) => ({ kind, cold: false })), { kind: "sqlite" as const, cold: true }];
  for (const { kind, cold } of runs) {
    const name = `turn.${kind}.1000${cold ? ".cold" : ""}`;
    const reason = await unreachable(kind);
    if (reason) {
      out.push(skipped(name, `server not reachable: ${reason}`));
      continue;
    }
    ctx.log(`${name} (${samples} turns per side)`);
    const { ours, raw } = await makeSides(
      kind,
      kind === "sqlite" ? undefined : storeUrls[kind],
      cold ? defaultSessionCodec({ writtenCache: false }) : undefined,
    );
    try {
      const store = ours.store!;
      const base = makeSession({ messages: 1000, id: "turn-1000" });
      const client = new BenchModel({ usage: true });
      // Every request holds the 1,000 stored messages and the input.
      client.expected = 1001;
      const agent = new ChatClientAgent({ client, name: "bench" });
      // The two messages one turn adds (the user's and the model's reply), for the raw side.
      const probe = structuredClone(base);
      await agent.run("What is the weather like in Lisbon today?", probe);
      const added = historyOf(probe).slice(1000);
      if (added.length !== 2) throw new Error(`a turn added ${added.length} messages, expected 2`);
      let oursRevision = await ours.save(base);
      let rawRevision = await raw.save(base);
      const oursTurn = async () => {
        client.spent = 0;
        const done = await withSession(store, base.id, (session) =>
          agent.run("What is the weather like in Lisbon today?", session),
        );
        oursRevision = done.revision;
      };
      const rawTurn = async () => {
        const { session, revision } = await raw.loadWithRevision(base.id);
        historyOf(session).push(...added);
        rawRevision = await raw.update(session, revision);
      };
      const reset = async () => {
        oursRevision = await ours.update(base, oursRevision);
        rawRevision = await raw.update(base, rawRevision);
      };
      const times: [number[], number[]] = [[], []];
      for (let i = -5; i < samples; i++) {
        for (const side of i % 2 === 0 ? [0, 1] : [1, 0]) {
          await reset();
          const start = performance.now();
          await (side === 0 ? oursTurn() : rawTurn());
          const ms = performance.now() - start - (side === 0 ? client.spent : 0);
          if (i >= 0) times[side].push(ms);
        }
      }
      // One more turn each (untimed): both sides then hold the session with its turn, 1,002 messages.
      await reset();
      await oursTurn();
      await rawTurn();
      const [mine, theirs] = [await ours.load(base.id), await raw.load(base.id)];
      if (historyOf(mine).length !== 1002 || historyOf(theirs).length !== 1002)
        throw new Error("a turn did not store 1,002 messages");
      // The same turn on both sides: the stored messages differ only in the reply's generated id.
      const shown = (session: AgentSession) =>
        JSON.stringify(historyOf(session).map((m) => ({ ...m, messageId: m.messageId === undefined ? 0 : 1 })));
      if (shown(mine) !== shown(theirs)) throw new Error("the two sides stored different turns");
      out.push(
        result(name, `raw ${RAW[kind]}: get + JSON.parse + 2 messages + JSON.stringify + CAS update (model time out)`, {
          ours_ms: median(times[0]),
          baseline_ms: median(times[1]),
        }),
      );
    } finally {
      await ours.close();
      await raw.close();
    }
  }
  return out;
}
