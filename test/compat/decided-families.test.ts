/**
 * Families the check used to leave `undecided` although an answer exists (issue #34, item 11),
 * decided by meaning: a changed `if` condition, an `else` added, `dependencies` extended or
 * tightened, `propertyNames` against the equivalent `patternProperties` + closed object, an `allOf`
 * merged into its parent, `patternProperties` with `additionalProperties: false` added. Several
 * variants each, in both directions where one is a loosening. Every break is checked by validating
 * its witness with a plain ajv against the old and the new schema; every compatible verdict is sampled.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { assessCompatibility } from "../../generator/compat/assess.js";
import type { JsonSchema } from "../../generator/compat/schema.js";
import { FORMATS } from "../../src/runtime/registry/formats.js";

// The runtime's formats, as the validators assert them.
const ajv = new Ajv({ strict: false, formats: { ...FORMATS } });
const accepts = (schema: unknown, doc: unknown): boolean => ajv.validate(schema as object, doc) as boolean;

function judge(old: unknown, next: unknown): { verdict: string; witness?: unknown } {
  const a = assessCompatibility(old as JsonSchema, next as JsonSchema, { samples: 80 });
  if (a.verdict !== "breaking") return { verdict: a.verdict };
  const witness = a.changes.find((c) => c.kind === "breaking" && c.witness)?.witness?.document;
  expect(witness, "a break carries a witness").toBeDefined();
  expect(accepts(old, witness), "the old schema accepts the witness").toBe(true);
  expect(accepts(next, witness), "the new schema rejects the witness").toBe(false);
  return { verdict: a.verdict, witness };
}

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

describe("an if condition widened or narrowed", () => {
  const rest = obj(
    { kind: { enum: ["a", "b", "c"] }, x: { type: "string" }, y: { type: "string" } },
    { required: ["kind"] },
  );
  const when = (kind: unknown, branches: Record<string, unknown>) => ({
    ...rest,
    if: { properties: { kind } },
    ...branches,
  });

  it("const -> enum: values newly in the condition must meet then (witness: one that does not)", () => {
    const r = judge(
      when({ const: "a" }, { then: { required: ["x"] } }),
      when({ enum: ["a", "b"] }, { then: { required: ["x"] } }),
    );
    expect(r.verdict).toBe("breaking");
    expect(r.witness).toMatchObject({ kind: "b" });
  });

  it("enum -> const with no else: values leaving the condition need nothing", () => {
    expect(
      judge(
        when({ enum: ["a", "b"] }, { then: { required: ["x"] } }),
        when({ const: "a" }, { then: { required: ["x"] } }),
      ).verdict,
    ).toBe("compatible");
  });

  it("enum -> const with an else the values leaving the condition do not meet", () => {
    const r = judge(
      when({ enum: ["a", "b"] }, { then: { required: ["x"] }, else: { required: ["y"] } }),
      when({ const: "a" }, { then: { required: ["x"] }, else: { required: ["y"] } }),
    );
    expect(r.verdict).toBe("breaking");
    expect(r.witness).toMatchObject({ kind: "b" });
  });

  it("widened where the branch is implied for every value: compatible", () => {
    expect(
      judge(
        when({ const: "a" }, { then: { properties: { x: { type: "string" } } } }),
        when({ enum: ["a", "b"] }, { then: { properties: { x: { type: "string" } } } }),
      ).verdict,
    ).toBe("compatible");
  });

  it("a numeric condition widened (minimum 10 -> 5): a value between needs the branch now", () => {
    const base = obj({ n: { type: "number" }, x: { type: "string" } });
    const r = judge(
      { ...base, if: { properties: { n: { minimum: 10 } } }, then: { required: ["x"] } },
      { ...base, if: { properties: { n: { minimum: 5 } } }, then: { required: ["x"] } },
    );
    expect(r.verdict).toBe("breaking");
    const n = (r.witness as { n: number }).n;
    expect(n >= 5 && n < 10).toBe(true);
    // Narrowed (5 -> 10), no else: compatible.
    expect(
      judge(
        { ...base, if: { properties: { n: { minimum: 5 } } }, then: { required: ["x"] } },
        { ...base, if: { properties: { n: { minimum: 10 } } }, then: { required: ["x"] } },
      ).verdict,
    ).toBe("compatible");
  });
});

describe("a condition narrowed with an else: values between the conditions meet else now", () => {
  it("minimum 5 -> 10 with then: x, else: y: an n in [5, 10) with x and no y", () => {
    const rest = obj({ x: { type: "string" }, y: { type: "integer" }, n: { type: "number" } });
    const at = (min: number) => ({
      ...rest,
      if: { properties: { n: { minimum: min } } },
      then: { required: ["x"] },
      else: { required: ["y"] },
    });
    const r = judge(at(5), at(10));
    expect(r.witness).toMatchObject({ x: expect.any(String) });
    const n = (r.witness as { n: number }).n;
    expect(n >= 5 && n < 10).toBe(true);
    expect(r.witness).not.toHaveProperty("y");
  });
});

describe("an else branch added", () => {
  const rest = obj(
    { kind: { enum: ["a", "b"] }, x: { type: "string" }, y: { type: "integer" } },
    { required: ["kind"] },
  );
  const cond = { if: { properties: { kind: { const: "a" } } }, then: { required: ["x"] } };

  it("requiring what the values outside the condition lack: breaking, witness outside it", () => {
    const r = judge({ ...rest, ...cond }, { ...rest, ...cond, else: { required: ["y"] } });
    expect(r.witness).toMatchObject({ kind: "b" });
    expect(r.witness).not.toHaveProperty("y");
  });

  it("narrowing a property for the values outside the condition: breaking", () => {
    const r = judge({ ...rest, ...cond }, { ...rest, ...cond, else: { properties: { y: { minimum: 0 } } } });
    expect(r.verdict).toBe("breaking");
    expect((r.witness as { y: number }).y).toBeLessThan(0);
  });

  it("implied by the old schema, or taken by no value: compatible", () => {
    expect(
      judge({ ...rest, ...cond }, { ...rest, ...cond, else: { properties: { x: { type: "string" } } } }).verdict,
    ).toBe("compatible");
    const onlyA = { ...rest, properties: { ...rest.properties, kind: { const: "a" } } };
    expect(judge({ ...onlyA, ...cond }, { ...onlyA, ...cond, else: { required: ["y"] } }).verdict).toBe("compatible");
    // The else requires what every value outside the condition has anyway.
    const bNeedsY = { ...rest, required: ["kind", "y"] };
    expect(judge({ ...bNeedsY, ...cond }, { ...bNeedsY, ...cond, else: { required: ["y"] } }).verdict).toBe(
      "compatible",
    );
  });
});

describe("a condition with a type", () => {
  it("values of another kind take else: an else added that refuses them breaks (witness: such a value)", () => {
    const rest = { properties: { k: { enum: ["a"] } } };
    const cond = { if: { type: "object", properties: { k: { const: "a" } } }, then: { required: ["k"] } };
    const r = judge({ ...rest, ...cond }, { ...rest, ...cond, else: { type: "object" } });
    expect(r.verdict).toBe("breaking");
    expect(typeof r.witness).not.toBe("object");
  });
});

describe("dependencies extended or tightened", () => {
  const rest = obj({ a: { type: "string" }, b: { type: "string" }, c: { type: ["string", "integer"] } });

  it("a property list extended (a: [b] -> a: [b, c]): an object with a and b but no c", () => {
    const r = judge({ ...rest, dependencies: { a: ["b"] } }, { ...rest, dependencies: { a: ["b", "c"] } });
    expect(r.witness).toMatchObject({ a: expect.any(String), b: expect.any(String) });
    expect(r.witness).not.toHaveProperty("c");
  });

  it("a list turned into a schema that asks more, and a schema tightened", () => {
    expect(
      judge({ ...rest, dependencies: { a: ["b"] } }, { ...rest, dependencies: { a: { required: ["b", "c"] } } })
        .verdict,
    ).toBe("breaking");
    const r = judge(
      { ...rest, dependencies: { a: { properties: { c: { type: ["string", "integer"] } } } } },
      { ...rest, dependencies: { a: { properties: { c: { type: "string" } } } } },
    );
    expect(r.witness).toMatchObject({ a: expect.any(String), c: expect.any(Number) });
  });

  it("a new dependency on a closed object's key: breaking; one every object meets: compatible", () => {
    const closed = { ...rest, additionalProperties: false };
    expect(judge(closed, { ...closed, dependencies: { a: ["c"] } }).verdict).toBe("breaking");
    const cRequired = { ...closed, required: ["c"] };
    expect(
      judge({ ...cRequired, dependencies: { a: ["b"] } }, { ...cRequired, dependencies: { a: ["b", "c"] } }).verdict,
    ).toBe("compatible");
  });
});

describe("propertyNames against patternProperties + a closed object", () => {
  const names = { type: "object", propertyNames: { pattern: "^[a-z]+$" }, additionalProperties: { type: "string" } };
  const patterns = {
    type: "object",
    patternProperties: { "^[a-z]+$": { type: "string" } },
    additionalProperties: false,
  };

  it("equivalent spellings are compatible both ways", () => {
    expect(judge(names, patterns).verdict).toBe("compatible");
    expect(judge(patterns, names).verdict).toBe("compatible");
    // Keys as an enum, values unconstrained, named properties in the language.
    const enumNames = { type: "object", properties: { ab: { type: "string" } }, propertyNames: { enum: ["ab", "cd"] } };
    const enumPatterns = {
      type: "object",
      properties: { ab: { type: "string" } },
      patternProperties: { "^(?:ab|cd)$": {} },
      additionalProperties: false,
    };
    expect(judge(enumNames, enumPatterns).verdict).toBe("compatible");
    expect(judge(enumPatterns, enumNames).verdict).toBe("compatible");
  });

  it("propertyNames length bounds read as a key language", () => {
    const short = { type: "object", propertyNames: { maxLength: 3 } };
    const anyThree = { type: "object", patternProperties: { "^[\\s\\S]{0,3}$": {} }, additionalProperties: false };
    expect(judge(short, anyThree).verdict).toBe("compatible");
    expect(judge(anyThree, short).verdict).toBe("compatible");
    // "." leaves out line terminators (ajv's patterns are unicode, not dotAll): a key "\n" is lost.
    const dots = { type: "object", patternProperties: { "^.{0,3}$": {} }, additionalProperties: false };
    expect(Object.keys(judge(short, dots).witness as object)).toEqual(["\n"]);
  });

  it("not equivalent: a narrower key language or value schema is a break", () => {
    const narrower = { ...patterns, patternProperties: { "^[a-m]+$": { type: "string" } } };
    const r = judge(names, narrower);
    expect(Object.keys(r.witness as object).some((k) => /^[n-z]/.test(k))).toBe(true);
    expect(
      judge(names, { ...patterns, patternProperties: { "^[a-z]+$": { type: "string", minLength: 1 } } }).verdict,
    ).toBe("breaking");
    // Wider is compatible.
    expect(judge(names, { ...patterns, patternProperties: { "^[a-z0-9]+$": { type: "string" } } }).verdict).toBe(
      "compatible",
    );
  });
});

describe("an allOf merged into its parent", () => {
  it("the same constraints written in the parent: compatible both ways", () => {
    const split = obj(
      { a: { type: "string" } },
      { allOf: [{ properties: { b: { type: "integer" } }, required: ["b"] }] },
    );
    const merged = obj({ a: { type: "string" }, b: { type: "integer" } }, { required: ["b"] });
    expect(judge(split, merged).verdict).toBe("compatible");
    expect(judge(merged, split).verdict).toBe("compatible");
    const two = {
      type: "object",
      allOf: [{ properties: { b: { type: "integer" } } }, { required: ["b"] }, { minProperties: 1 }],
    };
    expect(judge(two, obj({ b: { type: "integer" } }, { required: ["b"], minProperties: 1 })).verdict).toBe(
      "compatible",
    );
    const numbers = { allOf: [{ type: "number" }, { minimum: 0 }, { maximum: 10 }] };
    expect(judge(numbers, { type: "number", minimum: 0, maximum: 10 }).verdict).toBe("compatible");
  });

  it("merged with a change: the change is judged", () => {
    const split = obj({ a: { type: "string" } }, { allOf: [{ properties: { b: { type: "integer" } } }] });
    const r = judge(split, obj({ a: { type: "string" }, b: { type: "integer", minimum: 0 } }));
    expect((r.witness as { b: number }).b).toBeLessThan(0);
    expect(judge({ allOf: [{ type: "number" }, { minimum: 0 }] }, { type: "number", minimum: 1 }).verdict).toBe(
      "breaking",
    );
  });
});

describe("patternProperties with additionalProperties: false added", () => {
  it("to an open object: keys outside the patterns are refused now (witness: such a key)", () => {
    const old = obj({ a: { type: "string" } });
    const next = { ...old, patternProperties: { "^x_": { type: "string" } }, additionalProperties: false };
    expect(judge(old, next).verdict).toBe("breaking");
    // The closing itself has its witness (besides the new pattern narrowing x_ keys' values).
    const closing = assessCompatibility(old as JsonSchema, next as JsonSchema, { samples: 0 }).changes.find(
      (c) => c.rule === "close-additional-properties",
    )!;
    expect(closing.kind).toBe("breaking");
    const doc = closing.witness!.document as object;
    expect(Object.keys(doc).some((k) => k !== "a" && !k.startsWith("x_"))).toBe(true);
    expect(accepts(old, doc) && !accepts(next, doc)).toBe(true);
  });

  it("to an object whose additionalProperties had a schema: keys outside the patterns are refused", () => {
    const old = obj({}, { additionalProperties: { type: "string" } });
    expect(
      judge(old, { ...old, patternProperties: { "^[a-z]+$": { type: "string" } }, additionalProperties: false })
        .verdict,
    ).toBe("breaking");
  });

  it("to an already closed object: the patterns only open it (compatible)", () => {
    const old = obj({ a: { type: "string" } }, { additionalProperties: false });
    expect(judge(old, { ...old, patternProperties: { "^x_": { type: "string" } } }).verdict).toBe("compatible");
  });
});

describe("other families decided by meaning", () => {
  it("not of an object or string schema added: breaking with a value it matches; removed: compatible", () => {
    const o = obj({ a: {} });
    expect(judge(o, { ...o, not: { required: ["a"] } }).witness).toHaveProperty("a");
    expect(judge(o, { ...o, not: { properties: { a: { const: 1 } }, required: ["a"] } }).witness).toEqual({ a: 1 });
    expect(judge({ type: "string" }, { type: "string", not: { pattern: "^a" } }).witness).toMatch(/^a/);
    expect(
      judge({ type: "string" }, { type: "string", not: { anyOf: [{ const: "a" }, { const: "b" }] } }).verdict,
    ).toBe("breaking");
    expect(judge({ ...o, not: { required: ["a"] } }, o).verdict).toBe("compatible");
  });

  it("propertyNames with a format no automaton reads: a plain key it refuses", () => {
    const r = judge(obj({}), obj({}, { propertyNames: { format: "email" } }));
    expect(Object.keys(r.witness as object).length).toBeGreaterThan(0);
  });

  it("an enum or const of objects: what they hold under a name is known exactly", () => {
    const target = obj({ a: { type: "integer" } }, { required: ["a"] });
    expect(judge({ const: { a: 1 } }, target).verdict).toBe("compatible");
    expect(judge({ enum: [{ a: 1 }, { a: 2 }] }, target).verdict).toBe("compatible");
    expect(judge({ enum: [{ a: 1 }, { b: 2 }] }, target).witness).toEqual({ b: 2 });
    expect(judge({ enum: [{ a: 1 }, { a: "x" }] }, obj({ a: { type: "integer" } })).witness).toEqual({ a: "x" });
  });

  it("a string pattern replaced by the enum of its strings: compatible; a missing one breaks", () => {
    expect(judge({ type: "string", pattern: "^(a|b)$" }, { enum: ["a", "b"] }).verdict).toBe("compatible");
    expect(judge({ type: "string", pattern: "^[ab]$" }, { type: "string", enum: ["a", "b", "z"] }).verdict).toBe(
      "compatible",
    );
    expect(judge({ type: "string", pattern: "^(a|b|c)$" }, { enum: ["a", "b"] }).witness).toBe("c");
  });
});

describe("sizes and unions", () => {
  it("maxProperties lowered on a pattern map: an object just past the new bound", () => {
    const map = { type: "object", patternProperties: { "^a": {} }, additionalProperties: false };
    expect(Object.keys(judge(map, { ...map, maxProperties: 3 }).witness as object)).toHaveLength(4);
    expect(judge({ ...map, maxProperties: 3 }, map).verdict).toBe("compatible");
  });

  it("minItems raised where contains already asks for an item: implied; beyond it: breaking", () => {
    const a = { type: "array", contains: { type: "string" } };
    expect(judge(a, { type: "array", minItems: 1 }).verdict).toBe("compatible");
    expect(judge(a, { ...a, minItems: 1 }).verdict).toBe("compatible");
    expect(judge(a, { ...a, minItems: 2 }).verdict).toBe("breaking");
  });

  it("a oneOf branch added that overlaps an open one: a value holding both branches' properties", () => {
    const branch = (p: string) => obj({ [p]: { type: "string" } }, { required: [p] });
    const r = judge({ oneOf: [branch("a")] }, { oneOf: [branch("a"), branch("b")] });
    expect(r.witness).toMatchObject({ a: expect.any(String), b: expect.any(String) });
    // Branches pinned by a required const (a discriminator not named $type) are matched by it: a
    // property declared on one open branch is judged there (here a number where any value was).
    const pinned = (k: string, extra: Record<string, unknown> = {}) =>
      obj({ kind: { const: k }, ...extra }, { required: ["kind"] });
    const d = judge(
      { oneOf: [pinned("a"), pinned("b")] },
      { oneOf: [pinned("a", { n: { type: "number" } }), pinned("b")] },
    );
    expect(d.witness).toMatchObject({ kind: "a", n: expect.anything() });
    expect(judge({ oneOf: [pinned("a"), pinned("b")] }, { oneOf: [pinned("a", { n: {} }), pinned("b")] }).verdict).toBe(
      "compatible",
    );
    // Closed branches can not overlap: compatible.
    const closed = (p: string) => ({ ...branch(p), additionalProperties: false });
    expect(judge({ oneOf: [closed("a")] }, { oneOf: [closed("a"), closed("b")] }).verdict).toBe("compatible");
  });
});
