/**
 * turn.storedlog.<1000|100000>.<windowed|warm> (issue #25): one `agent.run` turn on a stored
 * message log of N messages (SQLite, node:sqlite), the app keeping only the conversation id
 * (`StoredChatHistoryProvider`, `commit: "run"`: the run reads the log, the turn is appended when
 * the run commits). The model (bench/bench-model.ts) answers at once and its own time is taken out
 * of every sample, so what is left is statebag's work.
 *
 * - windowed: `window: 20`, one windowed read per run.
 * - warm: no window; the provider's decoded-log cache (sized to hold the log) reads only what was
 *   appended since its last run.
 * - full: the same provider with `cacheBytes: 0`, which reads and decodes the whole log every run
 *   (the behaviour before #25): the baseline of the 1,000-message cases, and
 *   turn.storedlog.100000.full against turn.storedlog.1000.full shows the old growth.
 *
 * `turn.storedlog.100000.<variant>`'s baseline is `turn.storedlog.1000.<variant>`, measured in the
 * same rounds, so its ratio is the 100,000 / 1,000 ratio. Every side runs once per round, in a
 * rotating order; medians over the rounds. Each turn appends two messages (the logs grow by a few
 * dozen messages over the run, nothing next to their size).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { StoredChatHistoryProvider } from "../../src/runtime/agent/providers/stored-chat-history.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { BenchModel } from "../bench-model.js";
import { median, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";

const SIZES = [1000, 100_000] as const;
const VARIANTS = ["windowed", "warm", "full"] as const;
type Variant = (typeof VARIANTS)[number];

export async function storedLogCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-storedlog-"));
  const store = await openStore(`sqlite:${join(dir, "log.db")}`);
  try {
    const history = (
      makeSession({ messages: SIZES[SIZES.length - 1], id: "storedlog" }).stateBag[HISTORY_KEY] as unknown as {
        messages: ChatMessage[];
      }
    ).messages;
    const sides: { size: number; variant: Variant; turn: () => Promise<number>; times: number[] }[] = [];
    for (const size of SIZES) {
      for (const variant of VARIANTS) {
        const storageId = `log-${size}-${variant}`;
        await store.messages.appendMessages(storageId, history.slice(0, size), { operationId: "seed" });
        const provider = new StoredChatHistoryProvider({
          log: store.messages,
          commit: "run",
          ...(variant === "windowed"
            ? { window: 20 }
            : variant === "warm"
              ? { cacheBytes: 1024 * 1024 * 1024 }
              : { cacheBytes: 0 }),
        });
        const client = new BenchModel();
        const agent = new ChatClientAgent({ client, name: "bench", history: provider });
        let counter = 0;
        const turn = async () => {
          client.spent = 0;
          // The history shown (the window, or the whole log with this side's turns), then the input.
          client.expected = (variant === "windowed" ? 20 : size + 2 * counter) + 1;
          const start = performance.now();
          await agent.run(
            `What is the weather like in Lisbon today? (${counter++})`,
            agent.createSession({ id: storageId }),
          );
          return performance.now() - start - client.spent;
        };
        sides.push({ size, variant, turn, times: [] });
      }
    }
    const rounds = ctx.quick ? 9 : 25;
    ctx.log(`turn.storedlog (${rounds} turns per side, ${sides.length} sides)`);
    for (let i = -3; i < rounds; i++) {
      const offset = ((i % sides.length) + sides.length) % sides.length;
      for (let j = 0; j < sides.length; j++) {
        const side = sides[(offset + j) % sides.length];
        const ms = await side.turn();
        if (i >= 0) side.times.push(ms);
      }
    }
    // Every side wrote exactly its turns, two messages each.
    for (const side of sides) {
      const length = (await store.messages.readMessageWindow!(`log-${side.size}-${side.variant}`, { last: 0 })).length;
      if (length !== side.size + 2 * (rounds + 3))
        throw new Error(
          `log-${side.size}-${side.variant} holds ${length} messages, expected ${side.size + 2 * (rounds + 3)}`,
        );
    }
    const ms = (size: number, variant: Variant) =>
      median(sides.find((s) => s.size === size && s.variant === variant)!.times);
    return [
      result("turn.storedlog.1000.windowed", "the same turn reading the whole log (cacheBytes: 0, before #25)", {
        ours_ms: ms(1000, "windowed"),
        baseline_ms: ms(1000, "full"),
      }),
      result("turn.storedlog.100000.windowed", "turn.storedlog.1000.windowed (same run)", {
        ours_ms: ms(100_000, "windowed"),
        baseline_ms: ms(1000, "windowed"),
      }),
      result("turn.storedlog.1000.warm", "the same turn reading the whole log (cacheBytes: 0, before #25)", {
        ours_ms: ms(1000, "warm"),
        baseline_ms: ms(1000, "full"),
      }),
      result("turn.storedlog.100000.warm", "turn.storedlog.1000.warm (same run)", {
        ours_ms: ms(100_000, "warm"),
        baseline_ms: ms(1000, "warm"),
      }),
      result("turn.storedlog.100000.full", "turn.storedlog.1000.full (whole-log reads, before #25)", {
        ours_ms: ms(100_000, "full"),
        baseline_ms: ms(1000, "full"),
      }),
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
