/**
 * turn.storedlog.<1000|100000>.<windowed|warm> (issue #25): one `agent.run` turn on a stored
 * message log of N messages (SQLite, node:sqlite), the app keeping only the conversation id
 * (`StoredChatHistoryProvider`, `commit: "run"`: the run reads the log, the turn is appended when
 * the run commits). The model (`BenchModel`) answers at once and its own time is taken out of every
 * sample, so what is left is statebag's work.
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
import type {
  ChatClient,
  ChatClientMetadata,
  ChatResponse,
  ChatResponseUpdate,
} from "../../src/runtime/agent/chat-client.js";
import { StoredChatHistoryProvider } from "../../src/runtime/agent/providers/stored-chat-history.js";
import { messageText, type ChatMessage } from "../../src/runtime/core/messages.js";
import { openStore } from "../../src/runtime/stores/open.js";
import { median, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";

/**
 * The model: answers at once, from the request's last message, and checks that it was sent the
 * whole history the side shows (so no side can send less). Not ScriptedChatClient: its usage count
 * goes over every message sent, ~45 ms of this process's CPU per call on the 100,000-message log;
 * taken out of the sample, that time still slowed the turn measured after it (on the shared 2
 * cores, a 45 ms busy wait in a client that sent nothing added the same ~0.25 ms to either size),
 * which a real model, waiting on the network, does not do. Its own time is taken out too.
 */
class BenchModel implements ChatClient {
  readonly metadata: ChatClientMetadata = { providerName: "bench", supportsServiceStorage: false };
  readonly readsMessagesOnlyDuringCall = true;
  spent = 0;
  /** How many messages the next request must hold. */
  expected = 0;
  private counter = 0;

  async getResponse(messages: readonly ChatMessage[]): Promise<ChatResponse> {
    const start = performance.now();
    if (messages.length !== this.expected)
      throw new Error(`the model was sent ${messages.length} messages, expected ${this.expected}`);
    const said = messageText(messages[messages.length - 1]);
    const reply: ChatMessage = {
      role: "assistant",
      contents: [{ $type: "text", text: `You said: "${said}". I can see ${messages.length - 1} earlier messages.` }],
      messageId: `msg_${++this.counter}`,
    };
    this.spent += performance.now() - start;
    return { messages: [reply] };
  }

  getStreamingResponse(): AsyncIterable<ChatResponseUpdate> {
    throw new Error("the bench does not stream");
  }
}

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
        let n = 0;
        const turn = async () => {
          client.spent = 0;
          // The history shown (the window, or the whole log with this side's turns), then the input.
          client.expected = (variant === "windowed" ? 20 : size + 2 * n) + 1;
          const start = performance.now();
          await agent.run(`What is the weather like in Lisbon today? (${n++})`, agent.createSession({ id: storageId }));
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
