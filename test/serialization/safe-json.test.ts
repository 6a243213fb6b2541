import { describe, expect, it } from "vitest";
import { JsonParseError, checkJsonLimits, checkWritableJson, parseJson } from "../../src/runtime/json/safe-json.js";
import { locateSyntaxError } from "../../src/runtime/json/json-syntax.js";

function parseError(text: string | Uint8Array, limits?: Parameters<typeof parseJson>[1]): JsonParseError {
  try {
    parseJson(text, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(JsonParseError);
    return err as JsonParseError;
  }
  throw new Error("expected parseJson to throw");
}

describe("parseJson: syntax errors", () => {
  it("reports line, column and a snippet with a caret", () => {
    const err = parseError('{\n  "a": 1,\n  "b": [1, 2,, 3]\n}');
    expect(err.code).toBe("json-syntax");
    expect(err.line).toBe(3);
    expect(err.column).toBe(14);
    expect(err.message).toContain("line 3, column 14");
    expect(err.message).toContain('  3 |   "b": [1, 2,, 3]');
    // the caret sits under the second comma
    const lines = err.message.split("\n");
    const caretLine = lines[lines.length - 1];
    const snippetLine = lines[lines.length - 2];
    expect(snippetLine[caretLine.indexOf("^")]).toBe(",");
  });

  it.each([
    ['{"a": 1', "unexpected end of input", 1, 8],
    ['{"a": 1,}', "expected a property name", 1, 9],
    ["[1, 2,]", "trailing commas", 1, 7],
    ["{'a': 1}", "expected a property name", 1, 2],
    ['{"a" 1}', "expected ':'", 1, 6],
    ['{"a": tru}', "expected a value", 1, 7],
    ['{"a": "x\ny"}', "inside a string", 1, 9],
    ['{"a": "\\x"}', "bad escape", 1, 8],
    ['{"a": 01}', "expected ',' or '}'", 1, 8],
    ['{"a": 1} x', "after the end of the JSON value", 1, 10],
    ["", "unexpected end of input", 1, 1],
    ['{"a": "unterminated', "unterminated string", 1, 7],
    ["[1.]", "after '.'", 1, 4],
  ])("%j -> %s at %i:%i", (text, reason, line, column) => {
    const err = parseError(text);
    expect(err.code).toBe("json-syntax");
    expect(err.message).toContain(reason);
    expect([err.line, err.column]).toEqual([line, column]);
  });

  it("agrees with JSON.parse on valid documents", () => {
    for (const text of [
      '{"a":[1,2,{"b":null}],"c":"\\u00e9\\n","d":-1.5e+3,"e":true,"f":false}',
      "[]",
      "{}",
      " 1 ",
      '"s"',
      "[[[]]]",
    ]) {
      expect(locateSyntaxError(text)).toBeNull();
      expect(parseJson(text)).toEqual(JSON.parse(text));
    }
  });

  it("cuts long lines around the error", () => {
    const text = '{"a": "' + "x".repeat(500) + '", "b": nope}';
    const err = parseError(text);
    const snippet = err.message.split("\n")[1];
    expect(snippet.length).toBeLessThan(100);
    expect(snippet).toContain("nope");
  });

  it("accepts UTF-8 bytes and ignores a byte-order mark; rejects invalid UTF-8", () => {
    expect(parseJson(new TextEncoder().encode('\ufeff{"a":"é"}'))).toEqual({ a: "é" });
    expect(parseJson("\ufeff[1]")).toEqual([1]);
    const err = parseError(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]));
    expect(err.code).toBe("json-input");
  });

  it("rejects non-text input clearly", () => {
    expect(parseError(42 as unknown as string).code).toBe("json-input");
  });
});

describe("parseJson: limits", () => {
  it("rejects oversize text before parsing, counting UTF-8 bytes", () => {
    const err = parseError(JSON.stringify({ s: "a".repeat(2000) }), { maxBytes: 1024 });
    expect(err.code).toBe("json-too-large");
    expect(err.message).toMatch(/over the limit of 1 KiB/);
    // 400 chars of "é" are 800 bytes + quotes: over 600 although length is 402.
    expect(parseError(JSON.stringify("é".repeat(400)), { maxBytes: 600 }).code).toBe("json-too-large");
    expect(parseJson(JSON.stringify("é".repeat(250)), { maxBytes: 600 })).toHaveLength(250);
    expect(parseError(new Uint8Array(2000), { maxBytes: 1000 }).code).toBe("json-too-large");
  });

  it("a 100,000-deep array is a clear error, not a stack overflow", () => {
    const depth = 100_000;
    const err = parseError("[".repeat(depth) + "]".repeat(depth));
    expect(err.code).toBe("json-too-deep");
    expect(err.message).toMatch(/deeper than the limit of 256 levels/);
    expect(err.pointer?.startsWith("/0/0/0")).toBe(true);
    expect(err.message.length).toBeLessThan(400);
  });

  it("a 100,000-deep object is a clear error too; depth is configurable", () => {
    const depth = 100_000;
    expect(parseError('{"a":'.repeat(depth) + "1" + "}".repeat(depth)).code).toBe("json-too-deep");
    const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
    expect(parseJson(nested(256))).toBeDefined();
    expect(parseError(nested(257)).code).toBe("json-too-deep");
    expect(parseError(nested(11), { maxDepth: 10 }).pointer).toBe("/0/0/0/0/0/0/0/0/0/0");
  });

  it("a large maxDepth switches to the explicit-stack walk, still without overflow", () => {
    const depth = 100_000;
    const err = parseError("[".repeat(depth) + "]".repeat(depth), { maxDepth: 50_000 });
    expect(err.code).toBe("json-too-deep");
    expect(err.message).toMatch(/limit of 50000 levels/);
    expect(parseJson("[".repeat(2000) + "]".repeat(2000), { maxDepth: 5000 })).toBeDefined();
    const keys = parseError(JSON.stringify({ a: { b: 1, c: 2, d: 3 } }), { maxDepth: 5000, maxKeys: 2 });
    expect([keys.code, keys.pointer]).toEqual(["json-too-many-keys", "/a"]);
    expect(parseError('{"x":[{"__proto__":1}]}', { maxDepth: 5000 }).pointer).toBe("/x/0/__proto__");
  });

  it("limits the keys of any one object", () => {
    const obj: Record<string, number> = {};
    for (let i = 0; i < 50; i++) obj["k" + i] = i;
    const err = parseError(JSON.stringify({ outer: { inner: obj } }), { maxKeys: 40 });
    expect(err.code).toBe("json-too-many-keys");
    expect(err.pointer).toBe("/outer/inner");
    expect(err.message).toContain("50 keys");
  });

  it("checkJsonLimits guards already-parsed values, including cycles", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    expect(() => checkJsonLimits(a)).toThrow(JsonParseError);
    expect(() => checkJsonLimits({ ok: [1, { b: 2 }] })).not.toThrow();
  });
});

describe("parseJson: prototype keys", () => {
  const hostile = '{"a": {"__proto__": {"polluted": true}}, "constructor": {"prototype": {"polluted": true}}}';

  it("rejects __proto__ keys by default, naming the pointer", () => {
    const err = parseError(hostile);
    expect(err.code).toBe("json-proto-key");
    expect(err.pointer).toBe("/a/__proto__");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty("polluted");
  });

  it("a __proto__ written with a unicode escape is caught too", () => {
    expect(parseError('{"\\u005f_proto__": {"polluted": true}}').code).toBe("json-proto-key");
  });

  it("keeps them as plain own data when asked, never touching a prototype", () => {
    const value = parseJson(hostile, { protoKeys: "keep" }) as Record<string, any>;
    expect(Object.getPrototypeOf(value.a)).toBe(Object.prototype);
    expect(Object.hasOwn(value.a, "__proto__")).toBe(true);
    expect(value.a.polluted).toBeUndefined();
    expect(Object.hasOwn(value, "constructor")).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // round trip: the key survives as data
    expect(JSON.parse(JSON.stringify(value))).toEqual(JSON.parse(hostile));
    expect(JSON.stringify(value)).toBe(JSON.stringify(JSON.parse(hostile)));
  });

  it("constructor/prototype keys are ordinary data", () => {
    const value = parseJson('{"constructor": "Widget", "prototype": {"x": 1}}') as Record<string, unknown>;
    expect(value.constructor).toBe("Widget");
    expect(value.prototype).toEqual({ x: 1 });
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });
});

describe("checkWritableJson: the quick pass never clears what the exact walk refuses", () => {
  class Point {
    x = 1;
  }
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = { back: cycle };
  const cases: [string, unknown][] = [
    ["plain", { a: [1, "x", true, null, { b: {} }], c: undefined }],
    ["NaN", { a: { b: [1, NaN] } }],
    ["Infinity", { a: -Infinity }],
    ["Date", { a: [{ when: new Date(0) }] }],
    ["Map", { a: new Map() }],
    ["class instance", { a: [new Point()] }],
    ["toJSON", { a: { toJSON: () => 1 } }],
    ["undefined item", { a: [1, undefined] }],
    // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test
    ["hole", { a: [1, , 3] }],
    ["function", { a: () => 1 }],
    ["symbol", { a: Symbol("s") }],
    ["bigint", { a: 1n }],
    ["__proto__ key", JSON.parse('{"a":[{"__proto__":{"x":1}}]}')],
    ["null prototype", Object.assign(Object.create(null), { a: 1 })],
    ["many keys", { a: { k1: 1, k2: 2, k3: 3, k4: undefined } }],
    ["deep", { a: [[[[[[[1]]]]]]] }],
    ["cycle", cycle],
  ];
  const outcome = (value: unknown, maxDepth: number, protoKeys: "keep" | "reject") => {
    try {
      checkWritableJson(value, { maxDepth, maxKeys: 3, protoKeys });
      return "ok";
    } catch (err) {
      expect(err).toBeInstanceOf(JsonParseError);
      const e = err as JsonParseError;
      // A cycle is too deep at either limit; only the depth in the text differs.
      return value === cycle ? e.code : `${e.code} ${e.pointer} ${e.message}`;
    }
  };
  it.each(cases)("%s", (_, value) => {
    for (const protoKeys of ["keep", "reject"] as const) {
      // maxDepth above 1024 runs the exact walk alone.
      expect(outcome(value, 1024, protoKeys)).toBe(outcome(value, 1025, protoKeys));
    }
  });
  it("the quick pass stops at maxDepth too", () => {
    expect(outcome({ a: [[[[[[[1]]]]]]] }, 6, "keep")).toMatch(/^json-too-deep \/a\/0\/0\/0\/0\/0 /);
    expect(parseError('{"a":[[[[[[[1]]]]]]]}', { maxDepth: 6 }).pointer).toBe("/a/0/0/0/0/0");
    expect(outcome({ a: [[[[[[[1]]]]]]] }, 8, "keep")).toBe("ok");
  });
});
