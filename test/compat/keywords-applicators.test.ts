/** Keyword families decided by meaning (issue #26): not, if/then/else, dependencies, propertyNames, contains, unknown keywords. */
import type { JsonSchema } from "../../generator/compat/schema.js";
import { describe, expect, it } from "vitest";
import { assessCompatibility } from "../../generator/compat/assess.js";
import { diffSchemas } from "../../generator/compat/diff.js";
import type { Change, ChangeKind } from "../../generator/compat/rule-catalogue.js";

function verdict(changes: readonly Change[]): ChangeKind {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}
const v = (a: unknown, b: unknown): ChangeKind => verdict(diffSchemas(a as JsonSchema, b as JsonSchema));
/** Breaking after assessment: with a witness the old schema accepts and the new one rejects. */
function witness(a: unknown, b: unknown): unknown {
  const r = assessCompatibility(a as JsonSchema, b as JsonSchema, { samples: 0 });
  expect(r.verdict, JSON.stringify(r.changes)).toBe("breaking");
  return r.changes.find((c) => c.witness)!.witness!.document;
}

describe("not", () => {
  const s = { type: "string" };
  it("loosening, equivalent and implied forms are compatible", () => {
    expect(v({ ...s, not: { const: "" } }, s)).toBe("compatible");
    expect(v({ ...s, not: { enum: ["a", "b"] } }, { ...s, not: { const: "a" } })).toBe("compatible");
    expect(v({ ...s, not: { enum: ["a", "b"] } }, { ...s, not: { enum: ["b", "a"] } })).toBe("compatible");
    expect(v(s, { ...s, not: { type: "number" } })).toBe("compatible"); // no string is a number
    expect(v({ enum: ["a", "b"] }, { enum: ["a", "b"], not: { const: "c" } })).toBe("compatible");
  });
  it("tightening is breaking with the excluded value as witness", () => {
    expect(witness(s, { ...s, not: { const: "" } })).toBe("");
    expect(witness({ ...s, not: { const: "a" } }, { ...s, not: { enum: ["a", "b"] } })).toBe("b");
  });
});

describe("if / then / else", () => {
  const base = {
    type: "object",
    properties: { kind: { enum: ["a", "b"] }, x: { type: "string" } },
    required: ["kind"],
  };
  const cond = { if: { properties: { kind: { const: "a" } } }, then: { required: ["x"] } };
  it("removing the conditional or loosening a branch is compatible", () => {
    expect(v({ ...base, ...cond }, base)).toBe("compatible");
    expect(v({ ...base, ...cond, else: { required: ["x"] } }, { ...base, ...cond })).toBe("compatible");
  });
  it("an equivalent rewrite (if ¬I then E else T) is compatible", () => {
    const old = { ...base, if: cond.if, then: { required: ["x"] }, else: { maxProperties: 1 } };
    const next = { ...base, if: { not: cond.if }, then: { maxProperties: 1 }, else: { required: ["x"] } };
    expect(v(old, next)).toBe("compatible");
  });
  it("adding a conditional that requires more is breaking with a witness", () => {
    expect(witness(base, { ...base, ...cond })).toEqual({ kind: "a" });
  });
  it("a changed condition is decided by the values that change branch (issue #34): here kind b now needs x", () => {
    expect(
      witness(
        { ...base, ...cond },
        { ...base, if: { properties: { kind: { const: "b" } } }, then: { required: ["x"] } },
      ),
    ).toEqual({ kind: "b" });
  });
});

describe("dependencies (property lists and schemas)", () => {
  const base = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } } };
  it("loosening and implied dependencies are compatible", () => {
    expect(v({ ...base, dependencies: { a: ["b"] } }, base)).toBe("compatible");
    expect(v({ ...base, dependencies: { a: ["b"] } }, { ...base, dependencies: { a: { required: ["b"] } } })).toBe(
      "compatible",
    );
    expect(v({ ...base, required: ["b"] }, { ...base, required: ["b"], dependencies: { a: ["b"] } })).toBe(
      "compatible",
    );
  });
  it("a new dependency is breaking with a witness holding the key without its dependency", () => {
    expect(witness(base, { ...base, dependencies: { a: ["b"] } })).toEqual({ a: "" });
    expect(verdict(diffSchemas(base, { ...base, dependencies: { a: { properties: { b: { const: "z" } } } } }))).toBe(
      "breaking",
    );
  });
  it("dependentRequired / dependentSchemas are not read by draft-07 validators: annotations", () => {
    expect(v(base, { ...base, dependentRequired: { a: ["b"] } })).toBe("compatible");
    expect(v(base, { ...base, dependentSchemas: { a: { required: ["b"] } } })).toBe("compatible");
  });
});

describe("propertyNames", () => {
  const open = { type: "object", additionalProperties: { type: "string" } };
  it("loosening and implied key constraints are compatible", () => {
    expect(
      v({ ...open, propertyNames: { pattern: "^[a-z]+$" } }, { ...open, propertyNames: { pattern: "^[a-z0-9]+$" } }),
    ).toBe("compatible");
    expect(v({ ...open, propertyNames: { maxLength: 3 } }, open)).toBe("compatible");
    const closed = { type: "object", properties: { ab: { type: "string" } }, additionalProperties: false };
    expect(v(closed, { ...closed, propertyNames: { maxLength: 2 } })).toBe("compatible");
  });
  it("tightening is breaking with a key the new names reject", () => {
    const w = witness(
      { ...open, propertyNames: { pattern: "^[a-z0-9]+$" } },
      { ...open, propertyNames: { pattern: "^[a-z]+$" } },
    ) as object;
    expect(Object.keys(w).some((k) => /^[a-z0-9]+$/.test(k) && !/^[a-z]+$/.test(k))).toBe(true);
    const closed = {
      type: "object",
      properties: { abc: { type: "string" } },
      required: ["abc"],
      additionalProperties: false,
    };
    expect(witness(closed, { ...closed, propertyNames: { maxLength: 2 } })).toEqual({ abc: "" });
  });
});

describe("contains (minContains / maxContains are ignored by draft-07 validators)", () => {
  const ints = { type: "array", items: { type: "integer" } };
  it("loosening and implied contains are compatible", () => {
    expect(v({ ...ints, contains: { const: 1 } }, ints)).toBe("compatible");
    expect(v({ ...ints, contains: { const: 1 } }, { ...ints, contains: { type: "integer" } })).toBe("compatible");
    expect(v({ ...ints, minItems: 1 }, { ...ints, minItems: 1, contains: { type: "number" } })).toBe("compatible");
    expect(v({ ...ints, contains: { const: 1 } }, { ...ints, contains: { const: 1 }, minContains: 2 })).toBe(
      "compatible",
    );
  });
  it("tightening is breaking with a witness", () => {
    expect(witness(ints, { ...ints, contains: { const: 1 } })).toEqual([]);
    expect(verdict(diffSchemas({ ...ints, contains: { type: "integer" } }, { ...ints, contains: { const: 1 } }))).toBe(
      "breaking",
    );
  });
});

describe("unknown keywords", () => {
  it("unchanged is compatible; added or changed is undecided, naming the keyword", () => {
    expect(v({ type: "string", "acme-rule": 1 }, { type: "string", "acme-rule": 1 })).toBe("compatible");
    const r = assessCompatibility({ type: "string" }, { type: "string", "acme-rule": 1 }, { samples: 0 });
    expect(r.verdict).toBe("undecided");
    expect(r.changes[0]).toMatchObject({ keyword: "acme-rule", kind: "undecided" });
  });
  it("keywords of later drafts that ajv's draft-07 build ignores are annotations", () => {
    expect(v({ type: "object" }, { type: "object", unevaluatedProperties: false })).toBe("compatible");
  });
});
