/**
 * #36: the duplicate-key check of a fused load counts the round integers of keyed members in full
 * (`plainExtra`) in texts with escapes too, once it has made sure no key is written with an escape
 * and no such member's number with an exponent. These tests hold it to the exact scan
 * (`locateDuplicateKey`) on texts built against it: escapes in values and keys, exponents, unicode,
 * lone surrogates, whitespace, big documents.
 */
import { describe, expect, it } from "vitest";
import { locateDuplicateKey } from "../../src/runtime/json/json-syntax.js";
import { JsonParseError, checkDuplicateKeys, parseJson } from "../../src/runtime/json/safe-json.js";
import {
  SessionValidationError,
  deserializeSession,
  serializeSession,
} from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { fusedLimits, fusedSessionDocument } from "../../src/runtime/validation/fused.js";
import { resolveLimits } from "../../src/runtime/json/safe-json.js";
import { sessionLimits } from "../../src/runtime/persistence/stored-form.js";

/** A stored session whose one tool result is `result` (raw JSON text), after a text message `text` (raw JSON string). */
function storedWithResult(result: string, text = '"hi"'): string {
  return `{"format":"statebag.session","formatVersion":1,"session":{"id":"s1","kind":"local","stateBag":{"statebag.chatHistory":{"$type":"InMemoryChatHistoryState","$version":3,"messages":[{"role":"user","contents":[{"$type":"text","text":${text}}]},{"role":"tool","contents":[{"$type":"functionResult","callId":"c1","result":${result}}]}],"droppedMessageCount":0,"branches":[],"branchPoints":[]}}}}`;
}

/** What a load says: undefined when it loads, else the first problem's `expected`. */
function loadProblem(text: string): string | undefined {
  try {
    deserializeSession(text);
    return undefined;
  } catch (error) {
    if (!(error instanceof SessionValidationError)) throw error;
    return error.problems[0].expected;
  }
}

const REPEAT = "each key once in an object";

/** What the fused check counted for a stored session text (it must accept it). */
function counted(text: string) {
  const limits = fusedLimits(resolveLimits(sessionLimits(undefined)), undefined, false);
  const count = fusedSessionDocument(JSON.parse(text), "statebag.session", 1, true, limits!);
  if (count === undefined) throw new Error("the fused check declined the document");
  return count;
}

function seeded(seed: number) {
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
  return { next, pick };
}

describe("round integers counted in full in texts with escapes (#36)", () => {
  it("a repeat paid for by a number written short is found, whatever the escapes around it", () => {
    // [result with a repeat, the repeated key]; a text message with escapes before it in each.
    const cases: [string, string][] = [
      ['{"n":1e5,"":0,"":0}', ""],
      ['{"n":1E+5,"":0,"":0}', ""],
      ['{"n" :\t1e5,"":0,"":0}', ""],
      ['{"s":"a\\nb","n":1e5,"":0,"":0}', ""],
      // The key of the exponent written with an escape: the search would miss it.
      ['{"\\u006e":1e5,"":0,"":0}', ""],
      ['{"n":100000,"\\u006e":1e5}', "n"],
      ['{"\\u006e":100000,"n":1e5}', "n"],
      ['{"\\n":1e5,"n":1000000,"":0,"":0}', ""],
      // A string that reads like the key (an escaped quote before it), next to the member.
      ['{"s":"\\"n","n":1e5,"":0,"":0}', ""],
      ['{"s":"\\"n\\":1e5","n":1e5,"":0,"":0}', ""],
      // A key ending with an escaped quote, one that holds the key's text.
      ['{"\\"n":1e5,"":0,"":0}', ""],
      ['{"a\\\\":1e5,"":0,"":0}', ""],
      ['{"n":[1e5,1e5],"s":"\\t","":0,"":0}', ""],
      ['{"n":-1e5,"s":"\\ud800","":0,"":0}', ""],
      ['{"n":1e5,"s":"\\u00e9\\u20ac","":0,"":0}', ""],
    ];
    for (const escapes of ['"hi"', '"line\\nbreak \\"quoted\\" \\\\ \\u00e9 \\ud83d\\ude00 \\udc00"']) {
      for (const [result, key] of cases) {
        const text = storedWithResult(result, escapes);
        expect(() => JSON.parse(text), text).not.toThrow();
        expect(locateDuplicateKey(text)?.key, text).toBe(key);
        const e = (() => {
          try {
            deserializeSession(text);
          } catch (error) {
            return error as SessionValidationError;
          }
          throw new Error(`loaded: ${text}`);
        })();
        expect(e.problems[0], text).toMatchObject({ code: "json", expected: REPEAT });
        expect(e.problems[0].message, text).toContain(`has the key ${JSON.stringify(key)} twice`);
      }
    }
  });

  it("compact texts with escapes and round integers written out load without the colon scan's verdict changing", () => {
    for (const result of [
      '{"n":1000000,"s":"a\\nb"}',
      '{"n":1000000,"\\u0073":"\\"n\\":1e5"}',
      '{"n":1000000,"m":{"n":2000000,"s":"\\\\"}}',
      '{"inputTokenCount":1000,"outputTokenCount":1e3,"totalTokenCount":2000,"t":"\\n"}',
    ]) {
      const text = storedWithResult(result, '"a\\nb"');
      const count = counted(text);
      expect(count.plainExtra, result).toBeGreaterThan(0);
      expect(() => checkDuplicateKeys(text, count.keys, count.chars, count.plainExtra, count.numberKeys)).not.toThrow();
      expect(loadProblem(text), result).toBeUndefined();
    }
  });

  it("agrees with the exact scan on seeded random documents of round integers with escapes, with and without a repeat", () => {
    const { next, pick } = seeded(3601);
    const scalars = [
      "1000",
      "1e3",
      "1E3",
      "1e+3",
      "100000",
      "1e5",
      "-2000",
      "-2e3",
      "7",
      "1000.0",
      '"n"',
      '"\\n"',
      '"\\"n\\":1e5"',
      '"\\\\"',
      '"\\u00e9"',
      '"\\ud800"',
      '"\\udfff\\ud800"',
      '"\u00e9\u20ac"',
    ];
    const keys = ["n", "m", "", "a", "\u00e9"];
    const key = (k: string) => {
      const r = next();
      // A fifth of the keys escaped: the first character as \uXXXX, or a key with an escape inside.
      if (r < 0.1 && k !== "") return `"\\u${k.charCodeAt(0).toString(16).padStart(4, "0")}${k.slice(1)}"`;
      if (r < 0.2) return JSON.stringify(`${k}\n`);
      return JSON.stringify(k);
    };
    const ws = () => (next() < 0.95 ? "" : pick([" ", "\n"]));
    const gen = (depth: number): string => {
      const r = next();
      if (depth > 3 || r < 0.35) return pick(scalars);
      if (r < 0.5) return `[${Array.from({ length: Math.floor(next() * 4) }, () => gen(depth + 1)).join(",")}]`;
      const members = Array.from({ length: Math.floor(next() * 5) }, () => [key(pick(keys)), gen(depth + 1)]);
      return `{${members.map(([k, v]) => ws() + k + ws() + ":" + ws() + v).join(",")}}`;
    };
    let repeats = 0;
    let plain = 0;
    for (let i = 0; i < 4000; i++) {
      const result = gen(0);
      const text = storedWithResult(result, pick(['"hi"', '"a\\nb"', '"\\u00e9"']));
      const dup = locateDuplicateKey(text) !== null;
      if (dup) repeats++;
      expect(loadProblem(text), text).toBe(dup ? REPEAT : undefined);
      if (!dup && counted(text).plainExtra > 0) plain++;
    }
    expect(repeats).toBeGreaterThan(300);
    expect(plain).toBeGreaterThan(300);
  });

  it("a big session with line breaks in its messages and round token counts: one repeat anywhere is found", () => {
    const messages: unknown[] = [
      { role: "tool", contents: [{ $type: "functionResult", callId: "c1", result: { "": 0 } }] },
    ];
    for (let i = 0; i < 3000; i++) {
      messages.push({
        role: i % 2 === 0 ? "user" : "assistant",
        createdAt: "2025-01-06T09:00:00Z",
        messageId: `m${i}`,
        contents: [
          { $type: "text", text: `line one\nline two "quoted" \\ \u00e9 ${i}` },
          ...(i % 2 === 1
            ? [
                {
                  $type: "usage",
                  details: { inputTokenCount: 1000 * (1 + (i % 3)), outputTokenCount: 7, totalTokenCount: 1000 },
                },
              ]
            : []),
        ],
      });
    }
    const session = {
      id: "big",
      kind: "local",
      stateBag: {
        "statebag.chatHistory": {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          messages,
          droppedMessageCount: 0,
          branches: [],
          branchPoints: [],
        },
      },
    } as unknown as AgentSession;
    const text = serializeSession(session);
    expect(text).toContain("\\n");
    const count = counted(text);
    expect(count.plainExtra).toBeGreaterThan(0);
    expect(loadProblem(text)).toBeUndefined();
    // Round counts written short in the second half pay for a repeat in the first message.
    const half = text.length / 2;
    const shortCounts = text.replace(/"totalTokenCount":1000\}/g, (member: string, offset: number) =>
      offset > half ? '"totalTokenCount":1e3}' : member,
    );
    expect(loadProblem(shortCounts)).toBeUndefined();
    const hostile = shortCounts.replace('"result":{"":0}', '"result":{"":0,"":0}');
    expect(locateDuplicateKey(hostile)?.key).toBe("");
    expect(loadProblem(hostile)).toBe(REPEAT);
    // One count written short, at the very end: the repeat is found all the same.
    const last = text.lastIndexOf('"totalTokenCount":1000}');
    const oneShort = `${text.slice(0, last)}"totalTokenCount":1e3}${text.slice(last + 23)}`;
    expect(loadProblem(oneShort.replace('"result":{"":0}', '"result":{"":0,"":0}'))).toBe(REPEAT);
    // A repeated typed key far in, with every count written out.
    const late = text.replace('"messageId":"m2999",', '"messageId":"m2999","messageId":"m2999",');
    expect(loadProblem(late)).toBe(REPEAT);
  });

  // No wall-clock threshold (speed is `npm run bench`'s): a check that looked ahead per escape or
  // per hit would not finish on these texts; finishing with the verdict is the proof.
  it("stays linear on texts built against the escape hop: runs of escapes, long strings after one escape, whitespace after strings", () => {
    const n = 200_000;
    const body = [
      `"a":"\\n${"x".repeat(n)}"`,
      `"b":"${'\\"'.repeat(n)}"`,
      `"c":[${Array.from({ length: n / 10 }, () => '"\\n"     ').join(",")}]`,
      `"d":"${"\\n".repeat(n)}${" ".repeat(n)}"`,
      `"e":[${Array.from({ length: n / 10 }, () => '{"k":1000,"s":"\\"k\\":1"}').join(",")}]`,
    ];
    for (const members of [body, body.filter((member) => !member.startsWith('"c"'))]) {
      const honest = `{${members.join(",")},"inputTokenCount":1000000}`;
      expect(loadProblem(storedWithResult(honest, '"\\n"'))).toBeUndefined();
      const hostile = `{${members.join(",")},"":0,"":0,"inputTokenCount":1e6}`;
      expect(loadProblem(storedWithResult(hostile, '"\\n"'))).toBe(REPEAT);
      expect(() => parseJson(hostile)).toThrow(JsonParseError);
    }
  });
});
