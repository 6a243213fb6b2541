/**
 * #21.3 and #21.17 (duplicate keys): numbers no double holds, and keys given twice, are refused with
 * their pointer on load (parseJson, deserializeSession, interop readers, the CLI's import and
 * validate); NaN and Infinity are refused on every save, never written as null.
 */
import { afterAll, describe, expect, it } from "vitest";
import { readDocument } from "../../src/runtime/interop/session-codec.js";
import { locateDuplicateKey } from "../../src/runtime/json/json-syntax.js";
import { JsonParseError, checkJsonLimits, parseJson } from "../../src/runtime/json/safe-json.js";
import {
  SessionValidationError,
  deserializeSession,
  serializeSession,
} from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { cli, tempDir } from "../cli/helpers.js";

const tmp = tempDir("statebag-numbers-keys-");
afterAll(() => tmp.cleanup());

function thrown<T>(f: () => unknown, type: new (...args: any[]) => T): T {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(type);
    return error as T;
  }
  throw new Error("expected a throw");
}

/** A stored session whose one tool result is `result` (raw JSON text). */
function storedWithResult(result: string): string {
  return `{"format":"statebag.session","formatVersion":1,"session":{"id":"s1","kind":"local","stateBag":{"statebag.chatHistory":{"$type":"InMemoryChatHistoryState","$version":3,"messages":[{"role":"tool","contents":[{"$type":"functionResult","callId":"c1","result":${result}}]}],"droppedMessageCount":0,"branches":[],"branchPoints":[]}}}}`;
}

/** The same, as objects (an envelope and its session), with `result` put in as it is. */
function envelopeWithResult(result: unknown): { session: AgentSession } {
  return JSON.parse(storedWithResult("null"), (key, value) => (key === "result" ? result : value)) as {
    session: AgentSession;
  };
}

const RESULT = "/session/stateBag/statebag.chatHistory/messages/0/contents/0/result";

describe("numbers no double holds (#21.3)", () => {
  it("1e400 and -1e999 are refused at load with their pointer and a hint, not read as Infinity", () => {
    const e = thrown(() => parseJson('{"a":[1,2,{"b":-1e999}]}'), JsonParseError);
    expect(e.code).toBe("json-value");
    expect(e.pointer).toBe("/a/2/b");
    expect(e.message).toContain("the number at /a/2/b is too large for a double: it reads as -Infinity");
    expect(e.hint).toMatch(/as a string/);
    expect(thrown(() => parseJson("1e400"), JsonParseError).message).toContain("at the root");

    const loaded = thrown(() => deserializeSession(storedWithResult('{"amount":1e400}')), SessionValidationError);
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).toMatchObject({ code: "not-json", pointer: `${RESULT}/amount` });
    expect(loaded.problems[0].message).toContain("reads as Infinity");
  });

  it("the largest double and the smallest denormal still load, and save back equal", () => {
    const text = storedWithResult("[1.7976931348623157e308,-1.7976931348623157e308,5e-324,1e-400]");
    const session = deserializeSession(text);
    const result = (session.stateBag["statebag.chatHistory"] as any).messages[0].contents[0].result;
    expect(result).toEqual([Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324, 0]);
    expect(deserializeSession(serializeSession(session, { validate: true }))).toEqual(session);
  });

  it("an already-parsed value holding NaN or Infinity is refused at load too (the object path)", () => {
    const e = thrown(() => checkJsonLimits({ a: { b: [0, Number.NaN] } }), JsonParseError);
    expect(e).toMatchObject({ code: "json-value", pointer: "/a/b/1" });
    expect(e.message).toContain("is NaN");
    const loaded = thrown(
      () => deserializeSession(envelopeWithResult({ x: Number.POSITIVE_INFINITY })),
      SessionValidationError,
    );
    expect(loaded.problems[0]).toMatchObject({ code: "not-json", pointer: `${RESULT}/x` });
  });

  it("NaN and Infinity are refused on every save with their pointer, never written as null", () => {
    for (const bad of [Number.NaN, Number.NEGATIVE_INFINITY]) {
      for (const validate of [false, true]) {
        const e = thrown(
          () => serializeSession(envelopeWithResult({ ok: null, v: [1, bad] }).session, { validate }),
          SessionValidationError,
        );
        expect(e.problems).toHaveLength(1);
        expect(e.problems[0]).toMatchObject({ code: "not-json", pointer: `${RESULT}/v/1` });
        expect(e.problems[0].message).toContain(`the number ${bad} (JSON has no ${bad}; it would be written as null)`);
      }
    }
    // A real null (the cue for the walk) with finite numbers is written as it is.
    const fine = envelopeWithResult({ ok: null, v: [1, 2.5] }).session;
    expect(deserializeSession(serializeSession(fine))).toEqual(fine);
  });

  it("interop readers go through the same rule", () => {
    const e = thrown(() => readDocument('{"stateBag":{"x":{"n":1e400}}}'), JsonParseError);
    expect(e).toMatchObject({ code: "json-value", pointer: "/stateBag/x/n" });
  });
});

describe("duplicate keys (#21.17)", () => {
  it("are refused with the object's pointer, the key and where it comes again", () => {
    const e = thrown(() => parseJson('{"a":{"list":[{"k":1},\n  {"k":2, "k" : 3}]}}'), JsonParseError);
    expect(e.code).toBe("json-duplicate-key");
    expect(e.pointer).toBe("/a/list/1/k");
    expect(e.message).toContain('the object at /a/list/1 has the key "k" twice (again at line 2, column 11)');
    expect(e).toMatchObject({ line: 2, column: 11 });
    expect(e.hint).toMatch(/remove or rename one of the two/);

    const loaded = thrown(
      () => deserializeSession(storedWithResult('{"to":"Bob","amount":70,"amount":7000}')),
      SessionValidationError,
    );
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).toMatchObject({
      code: "json",
      pointer: `${RESULT}/amount`,
      expected: "each key once in an object",
    });
  });

  it("keys are compared decoded; the key is shown escaped and cut, the pointer escaped", () => {
    expect(thrown(() => parseJson('{"a":1,"\\u0061":2}'), JsonParseError).message).toContain('has the key "a" twice');
    const long = "x/~".repeat(200) + "\\n";
    const e = thrown(() => parseJson(`{"${long}":1,"${long}":2}`), JsonParseError);
    expect(e.message).not.toContain("\n" + "x/~".repeat(10));
    expect(e.message).toContain("\\n");
    expect(e.message.split("\n")[0].length).toBeLessThan(400);
    expect(e.pointer!.startsWith("/x~1~0x~1~0")).toBe(true);
  });

  it("text that only looks like a repeat is accepted: equal keys in different objects, colons inside strings", () => {
    for (const text of [
      '[{"a":1},{"a":1}]',
      '{"a":{"a":{"a":1}}}',
      '{"a":":x","b":" : y","c":"\\":","d":"\\\\","e":{}, "f": [":"]}',
      '{"t":"09:00:01","u":"https://x","v":"\\"k\\":\\"v\\""}',
      '{ "a" :\n 1 ,\t"b"\r\n:2 }',
    ]) {
      expect(parseJson(text)).toEqual(JSON.parse(text));
    }
  });

  it("the CLI's import and validate refuse both, naming the pointer", async () => {
    const dup = tmp.file("dup.json", '{"stateBag":{"InMemoryChatHistoryProvider":{"messages":[]}},"stateBag":{}}');
    const big = tmp.file("big.json", storedWithResult("[1e400]"));
    const imported = await cli(["import", "--from", "dotnet", dup]);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain('has the key "stateBag" twice');
    const hugeNumber = await cli([
      "import",
      "--from",
      "dotnet",
      tmp.file(
        "huge.json",
        '{"stateBag":{"InMemoryChatHistoryProvider":{"messages":[{"role":"tool","contents":[{"$type":"functionResult","callId":"c","result":1e400}]}]}}}',
      ),
    ]);
    expect(hugeNumber.code).toBe(1);
    expect(hugeNumber.stderr).toContain(
      "/stateBag/InMemoryChatHistoryProvider/messages/0/contents/0/result is too large for a double",
    );
    expect(hugeNumber.stdout).not.toContain("null");
    const validated = await cli(["validate", big]);
    expect(validated.code).toBe(1);
    expect(validated.stdout + validated.stderr).toContain(`${RESULT}/0`);
    const dupValidated = await cli(["validate", tmp.file("dup2.json", storedWithResult('{"k":1,"k":2}'))]);
    expect(dupValidated.code).toBe(1);
    expect(dupValidated.stdout + dupValidated.stderr).toContain('has the key "k" twice');
  });

  it("agrees with a reference parser on seeded random documents, compact and pretty, with and without a repeat", () => {
    const { next, pick } = seeded(21);
    const strings = ["x", ":", ": y", '"', '\\":', "09:00", "\\", "", " :"];
    const gen = randomDocuments({
      next,
      // No key starting with a backslash: parsing one makes V8 (Node 24, V8 13.6) decode later escaped
      // keys wrongly in the same process (nodejs/node#63785), which no check after JSON.parse can see.
      keys: ["a", "b", "k", ":", '"', "a:", " ", "\u00e9", ""],
      leaf: 0.3,
      scalar: () => pick([JSON.stringify(pick(strings)), "1", "-2.5e3", "true", "null"]),
      ws: () => pick(["", "", "", " ", "\n  ", "\t"]),
      members: 5,
    });
    let repeats = 0;
    for (let i = 0; i < 3000; i++) {
      const [text, dup] = gen(0);
      if (dup) repeats++;
      let code: string | undefined;
      try {
        parseJson(text, { protoKeys: "keep" });
      } catch (error) {
        code = (error as JsonParseError).code;
      }
      expect(code, text).toBe(dup ? "json-duplicate-key" : undefined);
      expect(locateDuplicateKey(text) !== null, text).toBe(dup);
    }
    expect(repeats).toBeGreaterThan(300);
  });

  it("a fused load finds a repeat the character bound hides nowhere: minimal members, escapes, short numbers, whitespace", () => {
    // Each document is compact and accepted by the fused check but for its repeat: then only the
    // text's length (less its escapes' extra) against the counted characters stands between it and a load.
    const esc = '"\\u0041\\n\\"\\\\"';
    // [with a repeat, the repeated key, the same without it]
    const cases: [string, string, string][] = [
      ['{"":0,"":1}', "", '{"":1}'],
      ['{"k":1,"k":2}', "k", '{"k":2}'],
      [`{"a":${esc},"":0,"":0}`, "", `{"a":${esc},"":0}`],
      [`[${esc},${esc},{"x":1,"x":1}]`, "x", `[${esc},${esc},{"x":1}]`],
      ['{"n":1e6,"m":1E+6,"o":-2e-7,"p":1.5e2,"":0,"":0}', "", '{"n":1e6,"m":1E+6,"o":-2e-7,"p":1.5e2,"":0}'],
      ['{"n":1000000.0,"o":-0,"":0,"":0}', "", '{"n":1000000.0,"o":-0,"":0}'],
      ['{"d":"2025-01-06T09:00:00Z","":true,"":false}', "", '{"d":"2025-01-06T09:00:00Z","":false}'],
      ['{ "k" : 1 ,\n "k" : 2 }', "k", '{ "k" : 1 \n }'],
      ['{"\\u006b":1,"k":2}', "k", '{"\\u006b":1}'],
    ];
    for (const [result, key] of cases) {
      expect(JSON.parse(result), result).toBeDefined();
      const e = thrown(() => deserializeSession(storedWithResult(result)), SessionValidationError);
      expect(e.problems[0], result).toMatchObject({ code: "json", expected: "each key once in an object" });
      expect(e.problems[0].message, result).toContain(`has the key ${JSON.stringify(key)} twice`);
    }
    // A repeat of a typed key (the message's "role"), and of the envelope's.
    const typed = storedWithResult("1").replace('"role":"tool",', '"role":"user","role":"tool",');
    expect(thrown(() => deserializeSession(typed), SessionValidationError).problems[0].pointer).toBe(
      "/session/stateBag/statebag.chatHistory/messages/0/role",
    );
    const envelope = storedWithResult("1").replace('"formatVersion":1,', '"formatVersion":1,"formatVersion":1,');
    expect(thrown(() => deserializeSession(envelope), SessionValidationError).problems[0].pointer).toBe(
      "/formatVersion",
    );
    // Without the repeat, each loads (the escapes, numbers and whitespace alone do not trip the check).
    for (const [, , once] of cases) {
      const loaded = deserializeSession(storedWithResult(once));
      const message = (loaded.stateBag["statebag.chatHistory"] as unknown as { messages: { contents: unknown[] }[] })
        .messages[0];
      expect(message.contents[0], once).toMatchObject({ result: JSON.parse(once) });
    }
  });

  it("a fused load agrees with a reference parser on seeded random tool results, with and without a repeat", () => {
    const { next, pick } = seeded(25);
    const scalars = ["0", "-0", "1e6", "1000000", "0.5", "5e-1", "28.3", "-1.25E+2", "true", "false", "null"];
    const strings = ['""', '"x"', '"\\u0041"', '"\\n\\t"', '"\\\\"', '"\\""', '"09:00:00"', '": y"'];
    const gen = randomDocuments({
      next,
      keys: ["a", "b", "", ":", "\u00e9", 'k"', " "],
      leaf: 0.35,
      scalar: () => (next() < 0.5 ? pick(scalars) : pick(strings)),
      ws: () => (next() < 0.9 ? "" : pick([" ", "\n", "\t"])),
      members: 4,
    });
    let repeats = 0;
    for (let i = 0; i < 3000; i++) {
      const [result, dup] = gen(0);
      if (dup) repeats++;
      let problem: string | undefined;
      try {
        deserializeSession(storedWithResult(result));
      } catch (error) {
        problem = (error as SessionValidationError).problems[0].expected;
      }
      expect(problem, result).toBe(dup ? "each key once in an object" : undefined);
    }
    expect(repeats).toBeGreaterThan(300);
  });

  // A round integer (`1000`) counts at its shortest token (`1e3`) in the character bound; a text
  // whose keys hold no escape and whose members keyed so write every number without an exponent
  // counts it in full (`plainExtra`; more cases with escapes in duplicate-keys-escapes.test.ts). Each document below hides a repeat in exactly the characters that would win back.
  it("round integers counted in full hide no repeat: exponents, whitespace, escaped keys, array items", () => {
    // [with a repeat, the repeated key]
    const cases: [string, string][] = [
      // A repeat's five characters paid for by a number written short under its key.
      ['{"n":1e5,"":0,"":0}', ""],
      ['{"n":1E+5,"":0,"":0}', ""],
      ['{"n" :\t1e5,"":0,"":0}', ""],
      ['{"a":1000000,"n":1e5,"":0,"":0}', ""],
      ['{"n":100000,"n":1e5}', "n"],
      ['{"n":1e5,"n":100000}', "n"],
      // The same key elsewhere, plain, and the exponent under it in another object.
      ['[{"n":100000},{"n":1e5,"":0,"":0}]', ""],
      // A string that reads like the key, next to the member.
      ['{"s":"n","n":1e5,"":0,"":0}', ""],
      // An array item is no member: never counted in full.
      ['{"n":[1e5,1e5],"":0,"":0}', ""],
      // An escaped key: the search for the key would miss it, so the bound does not apply.
      ['{"\\u006e":1e5,"":0,"":0}', ""],
      ['{"\\/":1e5,"":0,"":0}', ""],
      ['{"n":-1e5,"":0,"":0}', ""],
    ];
    for (const [result, key] of cases) {
      expect(() => JSON.parse(result), result).not.toThrow();
      const e = thrown(() => deserializeSession(storedWithResult(result)), SessionValidationError);
      expect(e.problems[0], result).toMatchObject({ code: "json", expected: "each key once in an object" });
      expect(e.problems[0].message, result).toContain(`has the key ${JSON.stringify(key)} twice`);
    }
    // Typed members (usage token counts): five round counts written short pay for a repeat.
    const usage = (count: string) =>
      `{"$type":"usage","details":{"inputTokenCount":${count},"outputTokenCount":7,"totalTokenCount":${count}}}`;
    const typed = (counts: string[], result: string) =>
      storedWithResult(result).replace(
        '"result":' + result + "}",
        '"result":' + result + "}," + counts.map(usage).join(","),
      );
    // Eight round counts (eight characters more in full), two of them written short: the repeat's five fit.
    const hostile = typed(["1e3", "1000", "1000", "1000"], '{"":0,"":0}');
    expect(JSON.parse(hostile)).toBeDefined();
    expect(thrown(() => deserializeSession(hostile), SessionValidationError).problems[0].message).toContain(
      'has the key "" twice',
    );
    // Written out in full, the same counts load, with and without whitespace and escapes elsewhere.
    for (const text of [
      typed(["1000", "2000", "3000", "1000", "2000000"], '{"":0}'),
      typed(["1000", "2000", "3000", "1000", "2000000"], '{"":0, "k" : "\\n"}'),
      typed(["1e3", "2000", "3000", "1000", "2000000"], '{"":0}'),
    ]) {
      const loaded = deserializeSession(text);
      expect(JSON.stringify(loaded), text).toBe(JSON.stringify(JSON.parse(text).session));
    }
  });

  it("a fused load agrees with a reference parser on seeded random documents of round integers, with and without a repeat", () => {
    const { next, pick } = seeded(36);
    const scalars = [
      "1000",
      "1e3",
      "1E3",
      "1e+3",
      "100000",
      "1e5",
      "10e4",
      "-2000",
      "-2e3",
      "0",
      "7",
      "1000.0",
      '"n"',
      '""',
    ];
    const gen = randomDocuments({
      next,
      keys: ["n", "m", "", "a"],
      leaf: 0.35,
      scalar: () => pick(scalars),
      ws: () => (next() < 0.95 ? "" : pick([" ", "\n"])),
      members: 5,
      escapes: false,
    });
    let repeats = 0;
    for (let i = 0; i < 4000; i++) {
      const [result, dup] = gen(0);
      if (dup) repeats++;
      let problem: string | undefined;
      try {
        deserializeSession(storedWithResult(result));
      } catch (error) {
        problem = (error as SessionValidationError).problems[0].expected;
      }
      expect(problem, result).toBe(dup ? "each key once in an object" : undefined);
    }
    expect(repeats).toBeGreaterThan(400);
  });

  it("stays linear when the key of a round integer is everywhere: strings and members that read like it", () => {
    const n = 50_000;
    const strings = Array.from({ length: n }, () => '"inputTokenCount"').join(",");
    const members = Array.from({ length: n }, (_, i) => `"inputTokenCount${i}":1`).join(",");
    const body = `"a":[${strings}],"b":{${members}},"c":[${strings}],"x":1000`;
    // 1e6 and 1000 count five more in full: the repeat fits, and only the exponent at the very end gives it away.
    const hostile = `{${body},"":0,"":0,"inputTokenCount":1e6}`;
    const e = thrown(() => deserializeSession(storedWithResult(hostile)), SessionValidationError);
    expect(e.problems[0].message).toContain('has the key "" twice');
    const honest = `{${body},"":0,"inputTokenCount":1000000}`;
    expect(deserializeSession(storedWithResult(honest))).toBeDefined();
  });

  // No wall-clock threshold (speed is `npm run bench`'s): a check that looked back or ahead per
  // colon or per quote would never finish on these 2-4 MB texts; finishing with the verdict is the proof.
  it("stays linear on texts built against it: runs of escaped quotes, spaces and colons, many suspect keys", () => {
    const n = 500_000;
    const backslashes = `{"s":"${'\\"'.repeat(n)}:","t":"${" ".repeat(n)}:${":".repeat(n)}"}`;
    expect(Object.keys(parseJson(backslashes) as object)).toEqual(["s", "t"]);
    // Every member's value opens with a colon, so the quick bound never matches and the full scan runs.
    const suspects = `{${Array.from({ length: 100_000 }, (_, i) => `"k${i}":":"`).join(",")}}`;
    expect(Object.keys(parseJson(suspects) as object)).toHaveLength(100_000);
    expect(thrown(() => parseJson(suspects.slice(0, -1) + ',"k99999":1}'), JsonParseError).message).toContain(
      'the key "k99999" twice',
    );
  });
});

/** A seeded generator (an LCG: deterministic runs) and a pick from a list. */
function seeded(seed: number) {
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)];
  return { next, pick };
}

/**
 * Random JSON texts up to depth 4, each returned with whether some object in it holds a key twice:
 * `leaf` is the chance of a scalar (always one below depth 3), arrays of up to 3 items, objects of
 * up to `members - 1` members drawn from `keys` (a fifth of them with the first character escaped
 * as `\uXXXX`), `ws()` between tokens.
 */
function randomDocuments(o: {
  next: () => number;
  keys: readonly string[];
  leaf: number;
  scalar: () => string;
  ws: () => string;
  members: number;
  /** Escape the first character of a fifth of the keys (default true). */
  escapes?: boolean;
}): (depth: number) => [string, boolean] {
  const { next, ws } = o;
  const key = (k: string) =>
    o.escapes !== false && next() < 0.2 && k !== ""
      ? `"\\u${k.charCodeAt(0).toString(16).padStart(4, "0")}${JSON.stringify(k.slice(1)).slice(1)}`
      : JSON.stringify(k);
  const gen = (depth: number): [string, boolean] => {
    const r = next();
    if (depth > 3 || r < o.leaf) return [o.scalar(), false];
    if (r < 0.55) {
      const items = Array.from({ length: Math.floor(next() * 4) }, () => gen(depth + 1));
      return [`[${items.map(([t]) => ws() + t + ws()).join(",")}]`, items.some(([, d]) => d)];
    }
    const members = Array.from(
      { length: Math.floor(next() * o.members) },
      () => [o.keys[Math.floor(next() * o.keys.length)], gen(depth + 1)] as const,
    );
    const names = members.map(([k]) => k);
    const dup = new Set(names).size !== names.length || members.some(([, [, d]]) => d);
    return [`{${members.map(([k, [t]]) => ws() + key(k) + ws() + ":" + ws() + t).join(",")}}`, dup];
  };
  return gen;
}
