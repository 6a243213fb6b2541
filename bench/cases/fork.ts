/**
 * fork.sqlite.<1000|100000> (issue #33): `forkSession` of a stored session whose history is a
 * message log of N messages (SQLite, node:sqlite), at its newest message: the source is read, the
 * message found (one range read of the path's newest page), and the fork saved as a new session
 * naming the source's log entries. Nothing is copied, so the 100,000-message fork should cost about
 * what the 1,000-message one does.
 *
 * - fork.sqlite.1000: against a fork that copies the path into the fork's own log (the whole log
 *   read, then appended under the new id, then the session saved): what a fork costs without
 *   shared entries.
 * - fork.sqlite.100000: against fork.sqlite.1000 in the same rounds (the ratio is the growth).
 *   Quick mode seeds 10,000 messages instead of 100,000 (a smoke run).
 *
 * Every side runs once per round, in a rotating order; medians over the rounds.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { forkSession } from "../../src/runtime/agent/fork-session.js";
import { StoredChatHistoryProvider } from "../../src/runtime/agent/providers/stored-chat-history.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { BenchModel } from "../bench-model.js";
import { median, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";

export async function forkCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const large = ctx.quick ? 10_000 : 100_000;
  const dir = mkdtempSync(join(tmpdir(), "statebag-fork-"));
  const store = await openStore(`sqlite:${join(dir, "fork.db")}`);
  try {
    const history = (
      makeSession({ messages: large, id: "fork" }).stateBag[HISTORY_KEY] as unknown as { messages: ChatMessage[] }
    ).messages.map((m, i) => ({ ...m, messageId: m.messageId ?? `m-${i}` }));
    const agent = new ChatClientAgent({
      client: new BenchModel(),
      name: "bench",
      history: new StoredChatHistoryProvider({ log: store.messages }),
    });
    const seed = async (size: number) => {
      const id = `source-${size}`;
      await store.messages.appendMessages(id, history.slice(0, size), { operationId: "seed" });
      await store.save(
        {
          id,
          kind: "local",
          stateBag: {
            [StoredChatHistoryProvider.defaultKey]: {
              $type: "StoredChatHistoryState",
              $version: 2,
              storageId: id,
              messageCount: size,
            } as never,
          },
        },
        { expectedRevision: null, meta: { owner: "bench" } },
      );
      return { id, last: history[size - 1].messageId! };
    };
    let n = 0;
    let lastFork = "";
    const small = await seed(1000);
    const sides = [
      { name: "shared-1000", source: small, copy: false, times: [] as number[] },
      { name: "copied-1000", source: small, copy: true, times: [] as number[] },
      { name: "shared-large", source: await seed(large), copy: false, times: [] as number[] },
    ];
    const run = async (side: (typeof sides)[number]) => {
      const id = `fork-${side.name}-${++n}`;
      if (side.name === "shared-large") lastFork = id;
      const start = performance.now();
      if (!side.copy) {
        await forkSession(store, agent, side.source.id, side.source.last, { owner: "bench", id });
      } else {
        // The baseline: the path copied into the fork's own log, then the session saved.
        const stored = await store.get(side.source.id);
        const { messages } = await store.messages.readMessages(side.source.id);
        await store.messages.appendMessages(id, messages, { operationId: "fork" });
        await store.save(
          {
            id,
            kind: "local",
            stateBag: {
              [StoredChatHistoryProvider.defaultKey]: {
                $type: "StoredChatHistoryState",
                $version: 2,
                storageId: id,
                messageCount: messages.length,
              } as never,
            },
          },
          { expectedRevision: null, meta: { owner: stored!.meta.owner } },
        );
      }
      return performance.now() - start;
    };
    const rounds = ctx.quick ? 9 : 31;
    ctx.log(`fork.sqlite (${rounds} forks per side, ${large.toLocaleString("en")} messages on the large side)`);
    for (let i = -3; i < rounds; i++) {
      for (let j = 0; j < sides.length; j++) {
        const side = sides[(((i + j) % sides.length) + sides.length) % sides.length];
        const ms = await run(side);
        if (i >= 0) side.times.push(ms);
      }
    }
    // The last fork of the large log reads as its source's path, and its own log is empty.
    const fork = (await store.get(lastFork))!.session;
    const path = await agent.history.listMessages(fork);
    if (path.length !== large || (await store.messages.readMessages(lastFork)).messages.length !== 0)
      throw new Error(`a fork of the ${large}-message log reads ${path.length} messages, or copied some`);
    const ms = (name: string) => median(sides.find((s) => s.name === name)!.times);
    return [
      result("fork.sqlite.1000", "the same fork copying the 1,000 messages into the fork's own log", {
        ours_ms: ms("shared-1000"),
        baseline_ms: ms("copied-1000"),
      }),
      result(
        "fork.sqlite.100000",
        `fork.sqlite.1000 (same run${ctx.quick ? `; quick: ${large.toLocaleString("en")} messages` : ""})`,
        { ours_ms: ms("shared-large"), baseline_ms: ms("shared-1000") },
      ),
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
