/**
 * An open object (`additionalProperties` absent or `true`) accepts any value under a name it does not
 * declare: a declaration added for such a name is a tightening for the documents that carry it
 * (issue #34, item 11). Every break is checked by validating its witness with a plain ajv against the
 * old and the new schema; every compatible verdict is sampled.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { assessCompatibility } from "../../generator/compat/assess.js";
import type { JsonSchema } from "../../generator/compat/schema.js";

const ajv = new Ajv({ strict: false, allErrors: false });
const accepts = (schema: unknown, doc: unknown): boolean => ajv.validate(schema as object, doc) as boolean;

/** The verdict, and for a break its witness validated against both schemas. */
function judge(old: unknown, next: unknown): { verdict: string; witness?: unknown } {
  const a = assessCompatibility(old as JsonSchema, next as JsonSchema, { samples: 60 });
  if (a.verdict !== "breaking") return { verdict: a.verdict };
  const witness = a.changes.find((c) => c.kind === "breaking" && c.witness)?.witness?.document;
  expect(witness, "a break carries a witness").toBeDefined();
  expect(accepts(old, witness), "the old schema accepts the witness").toBe(true);
  expect(accepts(next, witness), "the new schema rejects the witness").toBe(false);
  return { verdict: a.verdict, witness };
}

const open = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
});

describe("a declaration added on an open object", () => {
  it.each([
    [
      "additionalProperties absent, optional integer added",
      open({ a: { type: "string" } }),
      "retries",
      { type: "integer" },
    ],
    [
      "additionalProperties true, optional string added",
      open({ a: {} }, { additionalProperties: true }),
      "note",
      { type: "string" },
    ],
    ["additionalProperties {}, a const added", open({}, { additionalProperties: {} }), "kind", { const: "a" }],
    ["the false schema added", open({ a: { type: "string" } }), "legacy", false],
    ["a bounded number added", open({}), "n", { type: "number", maximum: 10 }],
    ["a nested object added", open({}), "meta", { type: "object", additionalProperties: false }],
  ])("%s is breaking", (_name, old, key, schema) => {
    const next = { ...old, properties: { ...(old.properties as object), [key]: schema } };
    const r = judge(old, next);
    expect(r.verdict).toBe("breaking");
    expect(Object.hasOwn(r.witness as object, key)).toBe(true);
  });

  it("inside array items, two levels down", () => {
    const old = { type: "object", properties: { steps: { type: "array", items: open({ id: { type: "string" } }) } } };
    const next = structuredClone(old);
    (next.properties.steps.items.properties as Record<string, unknown>).retries = { type: "integer", minimum: 0 };
    const r = judge(old, next);
    expect(r.verdict).toBe("breaking");
    expect((r.witness as { steps: Record<string, unknown>[] }).steps[0]).toHaveProperty("retries");
  });

  it("a name an old pattern covered: its values must still match", () => {
    const old = { type: "object", patternProperties: { "^x_": { type: "string" } } };
    const next = { ...old, properties: { x_count: { type: "integer" } } };
    expect(judge(old, next).verdict).toBe("breaking");
    // The same type as the pattern: nothing stored under it changes.
    expect(judge(old, { ...old, properties: { x_count: { type: "string" } } }).verdict).toBe("compatible");
  });

  it("a name the old schema required without declaring it: a type on it breaks, requiredness does not", () => {
    const old = { type: "object", required: ["id"] };
    const typed = judge(old, { type: "object", properties: { id: { type: "string" } }, required: ["id"] });
    expect(typed.verdict).toBe("breaking");
    expect(typeof (typed.witness as { id: unknown }).id).not.toBe("string");
    expect(judge(old, { type: "object", properties: { id: {} }, required: ["id"] }).verdict).toBe("compatible");
  });

  it("through dependencies and then: a constraint on an undeclared name is a tightening too", () => {
    const old = open({ a: { type: "string" } });
    const deps = { ...old, dependencies: { a: { properties: { z: { type: "integer" } } } } };
    expect(judge(old, deps).verdict).toBe("breaking");
    const cond = { ...old, if: { required: ["a"] }, then: { properties: { z: { type: "integer" } } } };
    expect(judge(old, cond).verdict).toBe("breaking");
  });
});

describe("what stays compatible", () => {
  it("a property added to a closed object (no stored document has it)", () => {
    const old = open({ a: { type: "string" } }, { additionalProperties: false });
    const next = { ...old, properties: { a: { type: "string" }, retries: { type: "integer" } } };
    expect(judge(old, next).verdict).toBe("compatible");
  });

  it("a declaration that accepts anything (true, {}) on an open object", () => {
    const old = open({ a: { type: "string" } });
    expect(judge(old, open({ a: { type: "string" }, b: true })).verdict).toBe("compatible");
    expect(judge(old, open({ a: { type: "string" }, b: {} })).verdict).toBe("compatible");
  });

  it("a declaration removed from an open object: the name accepts any value now", () => {
    const old = open({ a: { type: "string" }, b: { type: "integer" } }, { required: ["b"] });
    expect(judge(old, open({ a: { type: "string" } })).verdict).toBe("compatible");
    // Removed from a closed object it is still a removal.
    const closed = { ...old, additionalProperties: false };
    expect(judge(closed, { ...open({ a: { type: "string" } }), additionalProperties: false }).verdict).toBe("breaking");
  });

  it("a declaration added where the old additionalProperties schema already implied it", () => {
    const old = open({}, { additionalProperties: { type: "string" } });
    expect(judge(old, { ...old, properties: { note: { type: "string" } } }).verdict).toBe("compatible");
    expect(judge(old, { ...old, properties: { note: { type: "string", minLength: 1 } } }).verdict).toBe("breaking");
  });
});
