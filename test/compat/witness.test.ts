import { describe, expect, it } from "vitest";
import { bundleSchema, compileBundled } from "../../generator/compat/bundle.js";
import { diffSchemas } from "../../generator/compat/diff.js";
import type { Change } from "../../generator/compat/rule-catalogue.js";
import type { JsonSchema } from "../../generator/compat/schema.js";
import { findWitness, formatWitness, isWitness } from "../../generator/compat/witness.js";

function context(oldSchema: JsonSchema, newSchema: JsonSchema) {
  const o = compileBundled(bundleSchema(oldSchema, undefined));
  const n = compileBundled(bundleSchema(newSchema, undefined));
  if ("error" in o || "error" in n) throw new Error("schemas must compile");
  return { oldSchema, validOld: o.validate, validNew: n.validate };
}

describe("findWitness", () => {
  it("builds the smallest document: required properties only, the probe at the change's pointer", () => {
    const old = {
      type: "object",
      properties: {
        id: { type: "string" },
        items: { type: "array", items: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } },
      },
      required: ["id", "items"],
    };
    const next = {
      ...old,
      properties: {
        ...old.properties,
        items: {
          type: "array",
          items: { type: "object", properties: { n: { type: "integer", maximum: 9 } }, required: ["n"] },
        },
      },
    };
    const change = diffSchemas(old, next).find((c) => c.kind === "breaking")!;
    expect(change.pointer).toBe("/items/*/n");
    const ctx = context(old, next);
    const witness = findWitness(change, ctx);
    expect(witness).toEqual({ id: "", items: [{ n: 10 }] });
    expect(isWitness(witness, ctx)).toBe(true);
  });

  it("finds none when no document tells the schemas apart (the change is not a real break)", () => {
    const old = { type: "object", properties: { a: { type: "string" } }, "acme-rule": 1 };
    const next = { ...old, "acme-rule": 2 };
    // A change claimed breaking by hand: what the analysis says about unknown keywords is not this test's concern.
    const change: Change = {
      pointer: "",
      rule: "unknown-keyword-change",
      kind: "breaking",
      message: "acme-rule changed",
      keyword: "acme-rule",
    };
    expect(findWitness(change, context(old, next))).toBeUndefined();
  });

  it("isWitness needs both: accepted by the old schema and rejected by the new one", () => {
    const ctx = context({ type: "string" }, { type: "string", maxLength: 1 });
    expect(isWitness("ab", ctx)).toBe(true);
    expect(isWitness("a", ctx)).toBe(false);
    expect(isWitness(1, ctx)).toBe(false);
  });
});

describe("formatWitness", () => {
  it("prints canonical JSON on one line", () => {
    expect(formatWitness({ b: 1, a: [true, null] })).toBe('{"a":[true,null],"b":1}');
    expect(formatWitness(JSON.parse('{"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1}}');
  });

  it("escapes control and invisible characters (no terminal tricks)", () => {
    const shown = formatWitness({ "k\u0007": "a\u0000b\u001b[31m\u202e\u2028" });
    expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e\u2028]/);
    expect(shown).toContain("\\u0000");
    expect(shown).toContain("\\u001b");
    expect(shown).toContain("\\u202e");
    expect(shown).toContain("\\u2028");
  });

  it("cuts long strings, long arrays, many keys, and the whole line", () => {
    expect(formatWitness("x".repeat(500))).toBe(JSON.stringify("x".repeat(37) + "..."));
    expect(formatWitness(Array.from({ length: 50 }, (_, i) => i))).toContain('"... 40 more"');
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`k${i}`, i]));
    expect(formatWitness(many)).toContain("10 more");
    const wide = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`key${i}`, "v".repeat(39)]));
    const line = formatWitness(wide);
    expect(line.length).toBeLessThanOrEqual(240);
    expect(line.endsWith("...")).toBe(true);
  });
});
