/** Implied constraints and equivalent spellings (issue #26): the normalisation step before comparison. */
import type { JsonSchema } from "../../generator/compat/schema.js";
import { describe, expect, it } from "vitest";
import { diffSchemas } from "../../generator/compat/diff.js";
import type { Change, ChangeKind } from "../../generator/compat/rule-catalogue.js";
import { assessCompatibility } from "../../generator/compat/assess.js";
import { conjoin, normalise } from "../../generator/compat/normalise.js";

function verdict(changes: readonly Change[]): ChangeKind {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}
const v = (a: unknown, b: unknown): ChangeKind => verdict(diffSchemas(a as JsonSchema, b as JsonSchema));

describe("normalise", () => {
  it("rewrites equivalent spellings, and returns an unchanged schema as itself", () => {
    expect(normalise({ type: "number", multipleOf: 1 })).toEqual({ type: "integer" });
    expect(normalise({ not: { maxLength: 0 } })).toEqual({ type: "string", minLength: 1 });
    expect(normalise({ type: ["string", "null"], not: { type: "null" } })).toEqual({ type: "string" });
    // allOf members merged into the parent where the conjunction is exact (issue #34).
    expect(normalise({ allOf: [{ type: "object", required: ["a"] }, { properties: { a: {} } }] })).toEqual({
      type: "object",
      required: ["a"],
      properties: { a: {} },
    });
    expect(
      normalise({ properties: { a: {} }, additionalProperties: false, allOf: [{ properties: { b: {} } }] }),
    ).toEqual({ properties: { a: {} }, additionalProperties: false, allOf: [{ properties: { b: {} } }] });
    // propertyNames of a key language on an object without patterns: the pattern form.
    expect(
      normalise({ type: "object", propertyNames: { pattern: "^a" }, additionalProperties: { type: "string" } }),
    ).toEqual({
      type: "object",
      patternProperties: { "^a": { type: "string" } },
      additionalProperties: false,
    });
    expect(normalise({ type: "string", nullable: true })).toEqual({ type: ["string", "null"] });
    const plain = { type: "string" };
    expect(normalise(plain)).toBe(plain);
  });
  it("conjoin merges keyword by keyword, and refuses what it can not merge exactly", () => {
    expect(conjoin({ type: ["string", "null"], required: ["a"] }, { type: "string", required: ["b"] })).toEqual({
      type: "string",
      required: ["a", "b"],
    });
    expect(conjoin({ properties: { a: {} }, additionalProperties: false }, { properties: { b: {} } })).toBeUndefined();
  });
});

describe("implied constraints are no change", () => {
  it("minProperties implied by required properties", () => {
    const o = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a", "b"] };
    expect(v(o, { ...o, minProperties: 2 })).toBe("compatible");
    expect(v(o, { ...o, minProperties: 3 })).toBe("breaking");
  });
  it("uniqueItems implied by a closed tuple of distinct consts", () => {
    const t = { type: "array", items: [{ const: "a" }, { const: "b" }], additionalItems: false };
    expect(v(t, { ...t, uniqueItems: true })).toBe("compatible");
    const same = { type: "array", items: [{ const: "a" }, { enum: ["a", "b"] }], additionalItems: false };
    expect(v(same, { ...same, uniqueItems: true })).toBe("breaking");
  });
  it("contains implied by items and minItems", () => {
    const a = { type: "array", items: { type: "string" }, minItems: 1 };
    expect(v(a, { ...a, contains: { type: "string" } })).toBe("compatible");
  });
  it("number + multipleOf: 1 is integer", () => {
    expect(v({ type: "number", multipleOf: 1 }, { type: "integer" })).toBe("compatible");
    expect(v({ type: "integer" }, { type: "number", multipleOf: 1 })).toBe("compatible");
  });
  it("not: {maxLength: 0} is minLength: 1", () => {
    expect(v({ type: "string", minLength: 1 }, { type: "string", not: { maxLength: 0 } })).toBe("compatible");
    expect(v({ type: "string", not: { maxLength: 0 } }, { type: "string", minLength: 1 })).toBe("compatible");
    const r = assessCompatibility({ type: "string" }, { type: "string", not: { maxLength: 0 } }, { samples: 0 });
    expect(r.verdict).toBe("breaking");
    expect(r.changes.find((c) => c.witness)?.witness?.document).toBe("");
  });
  it("type and required inside allOf apply to the parent", () => {
    const o = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    expect(v(o, { properties: { a: { type: "string" } }, allOf: [{ type: "object" }, { required: ["a"] }] })).toBe(
      "compatible",
    );
    expect(v(o, { ...o, allOf: [{ required: ["b"] }] })).toBe("breaking");
  });
});
