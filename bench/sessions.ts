/**
 * Realistic, deterministic sessions for the benchmarks: local sessions whose history holds the mix
 * a tool-using assistant produces (text, function calls and results, usage, the odd citation with
 * text spans, a reasoning note), every message with an id and an ISO-8601 `createdAt`.
 *
 * Deterministic (seeded PRNG) so every run and every machine measures the same documents.
 */
import type { AgentSession, AIContent, ChatMessage } from "../src/index.js";

/** Mulberry32: tiny, fast, good enough to vary benchmark data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the a session agent state provider history message tool call result weather city forecast order invoice " +
  "customer refund shipping address please could you tell me about update summary version migrate store " +
  "load save quickly safely today tomorrow yesterday because therefore however also again thanks great sure"
).split(" ");

const CITIES = ["Lisbon", "Oslo", "Nairobi", "Osaka", "Lima", "Tallinn", "Austin", "Porto"];

function sentence(rand: () => number, min: number, max: number): string {
  const wordCount = min + Math.floor(rand() * (max - min + 1));
  const out: string[] = [];
  for (let i = 0; i < wordCount; i++) out.push(WORDS[Math.floor(rand() * WORDS.length)]);
  const text = out.join(" ");
  return text[0].toUpperCase() + text.slice(1) + ".";
}

/** History key the default provider uses. */
export const HISTORY_KEY = "statebag.chatHistory";

export interface SessionShape {
  /** Number of chat messages in the history. */
  messages: number;
  seed?: number;
  id?: string;
}

/**
 * A session with `messages` history messages. Turns follow the pattern a tool-using assistant
 * produces: user text; sometimes assistant function call + tool result; assistant text (+ usage,
 * sometimes a citation annotation). The total is exactly `messages`.
 */
export function makeSession(shape: SessionShape): AgentSession {
  const rand = prng(shape.seed ?? 42);
  const start = Date.UTC(2025, 0, 6, 9, 0, 0);
  const history: ChatMessage[] = [];
  let elapsed = 0;
  let call = 0;
  const stamp = () => {
    elapsed += 1000 + Math.floor(rand() * 60_000);
    const date = new Date(start + elapsed);
    // Alternate Z and an explicit offset: both occur in stored history.
    return rand() < 0.5 ? date.toISOString() : date.toISOString().replace("Z", "+00:00");
  };
  const push = (m: ChatMessage) => {
    if (history.length < shape.messages) history.push(m);
  };
  while (history.length < shape.messages) {
    const count = history.length;
    push({
      role: "user",
      authorName: "ada",
      createdAt: stamp(),
      messageId: `m${count}`,
      contents: [{ $type: "text", text: sentence(rand, 6, 24) }],
    });
    if (rand() < 0.35) {
      const callId = `call_${++call}`;
      const city = CITIES[Math.floor(rand() * CITIES.length)];
      push({
        role: "assistant",
        createdAt: stamp(),
        messageId: `m${history.length}`,
        contents: [
          {
            $type: "functionCall",
            callId,
            name: "get_weather",
            arguments: { city, unit: rand() < 0.5 ? "celsius" : "fahrenheit", days: 1 + Math.floor(rand() * 5) },
          },
        ],
      });
      push({
        role: "tool",
        createdAt: stamp(),
        messageId: `m${history.length}`,
        contents: [
          {
            $type: "functionResult",
            callId,
            result: {
              city,
              temperature: Math.round(rand() * 350) / 10,
              conditions: ["sunny", "rain", "cloudy"][Math.floor(rand() * 3)],
              hourly: [12.5, 13.1, 14.0, 13.7],
            },
          },
        ],
      });
    }
    const text = sentence(rand, 12, 60);
    const contents: AIContent[] = [];
    if (rand() < 0.1) contents.push({ $type: "reasoning", text: sentence(rand, 8, 20) });
    const answer: AIContent = { $type: "text", text };
    if (rand() < 0.15) {
      answer.annotations = [
        {
          $type: "citation",
          title: "Weather service",
          url: "https://example.com/forecast",
          snippet: sentence(rand, 4, 10),
          annotatedRegions: [{ $type: "textSpan", start: 0, end: Math.min(20, text.length) }],
        },
      ];
    }
    contents.push(answer);
    const input = 20 + Math.floor(rand() * 2000);
    const output = 5 + Math.floor(rand() * 300);
    contents.push({
      $type: "usage",
      details: { inputTokenCount: input, outputTokenCount: output, totalTokenCount: input + output },
    });
    push({ role: "assistant", createdAt: stamp(), messageId: `m${history.length}`, contents });
  }
  return {
    id: shape.id ?? `bench-${shape.messages}-${shape.seed ?? 42}`,
    kind: "local",
    stateBag: {
      [HISTORY_KEY]: {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: history as unknown as never,
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      },
    },
  };
}

/** `count` distinct sessions of `messages` messages each (ids `<prefix>-000001`, ...). */
export function makeSessions(count: number, messages: number, prefix = "bench"): AgentSession[] {
  const out: AgentSession[] = [];
  for (let i = 0; i < count; i++)
    out.push(makeSession({ messages, seed: 1000 + i, id: `${prefix}-${String(i + 1).padStart(6, "0")}` }));
  return out;
}
