/**
 * assessCompatibility: the verdict by meaning, a witness for every breaking change (checked here
 * with a separate ajv: the old schema accepts it, the new one rejects it), sampling of changes
 * judged compatible, and "undecided" instead of a guess.
 */
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { type Assessment, assessCompatibility } from "../../generator/compat/assess.js";
import type { JsonSchema } from "../../generator/compat/schema.js";
import { isDateTime } from "../../src/runtime/registry/formats.js";

const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
ajv.addFormat("date-time", isDateTime);

function accepts(schema: unknown, value: unknown): boolean {
  return ajv.compile(schema as object)(value) as boolean;
}

/** A closed object with one required property `x`, so pointers read `/x`. */
function obj(x: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "object", properties: { x }, required: ["x"], additionalProperties: false, ...extra };
}

/** Asserts a breaking verdict whose every breaking change carries a witness old accepts and new rejects. */
function expectBreaking(oldSchema: unknown, newSchema: unknown): Assessment {
  const a = assessCompatibility(oldSchema as JsonSchema, newSchema as JsonSchema, { samples: 50 });
  expect(a.verdict, JSON.stringify(a.changes, null, 2)).toBe("breaking");
  const breaking = a.changes.filter((c) => c.kind === "breaking");
  expect(breaking.length).toBeGreaterThan(0);
  for (const c of breaking) {
    expect(c.witness, `${c.rule} at ${c.pointer} has a witness`).toBeDefined();
    expect(accepts(oldSchema, c.witness!.document), `old accepts ${JSON.stringify(c.witness!.document)}`).toBe(true);
    expect(accepts(newSchema, c.witness!.document), `new rejects ${JSON.stringify(c.witness!.document)}`).toBe(false);
  }
  return a;
}

function expectCompatible(oldSchema: unknown, newSchema: unknown): Assessment {
  const a = assessCompatibility(oldSchema as JsonSchema, newSchema as JsonSchema, { samples: 50 });
  expect(a.verdict, JSON.stringify(a.changes, null, 2)).toBe("compatible");
  expect(a.changes.every((c) => c.witness === undefined)).toBe(true);
  return a;
}

const tagged = (tag: string, props: Record<string, unknown>) => ({
  type: "object",
  properties: { $type: { type: "string", const: tag }, ...props },
  required: ["$type", ...Object.keys(props)],
  additionalProperties: false,
});
const text = tagged("Text", { text: { type: "string" } });
const data = tagged("Data", { uri: { type: "string" } });

describe("the issue's cases", () => {
  it("an added oneOf branch overlapping tagged members is breaking: the witness is an old member matching two branches", () => {
    const a = expectBreaking(obj({ oneOf: [text, data] }), obj({ oneOf: [text, data, { type: "object" }] }));
    const change = a.changes.find((c) => c.kind === "breaking")!;
    expect(change).toMatchObject({ keyword: "oneOf", pointer: "/x" });
    expect((change.witness!.document as { x: { $type: string } }).x.$type).toMatch(/^(Text|Data)$/);
  });

  it("an added tagged member (its own $type) is compatible", () => {
    expectCompatible(
      obj({ oneOf: [text, data] }),
      obj({ oneOf: [text, data, tagged("Image", { src: { type: "string" } })] }),
    );
  });

  it("a widened pattern is compatible; a narrowed one breaks with a string only the old pattern accepts", () => {
    expectCompatible(obj({ type: "string", pattern: "^[a-z]+$" }), obj({ type: "string", pattern: "^[a-z0-9]+$" }));
    const a = expectBreaking(
      obj({ type: "string", pattern: "^[a-z0-9]+$" }),
      obj({ type: "string", pattern: "^[a-z]+$" }),
    );
    expect((a.changes[0].witness!.document as { x: string }).x).toMatch(/\d/);
  });

  it("exclusiveMinimum 0 and minimum 1 on integers are the same: compatible both ways", () => {
    expectCompatible(obj({ type: "integer", exclusiveMinimum: 0 }), obj({ type: "integer", minimum: 1 }));
    expectCompatible(obj({ type: "integer", minimum: 1 }), obj({ type: "integer", exclusiveMinimum: 0 }));
    expect(
      expectBreaking(obj({ type: "number", exclusiveMinimum: 0 }), obj({ type: "number", minimum: 1 })).changes[0]
        .witness!.document,
    ).toEqual({
      x: 0.5,
    });
  });

  it("tuple items are analysed by position", () => {
    const tuple = (second: unknown) =>
      obj({ type: "array", items: [{ type: "string" }, second], additionalItems: false });
    expectCompatible(tuple({ type: "integer" }), tuple({ type: "number" }));
    const a = expectBreaking(tuple({ type: "number" }), tuple({ type: "integer" }));
    expect(a.changes[0].pointer).toBe("/x/1");
  });

  it("a closed tuple is explained as such, not as 'no item accepted'", () => {
    const a = expectBreaking(
      obj({ type: "array", items: [{ type: "string" }] }),
      obj({ type: "array", items: [{ type: "string" }], additionalItems: false }),
    );
    expect(a.changes[0].message).toContain("additionalItems");
    expect(a.changes[0].message).not.toContain("no value is accepted");
    expect((a.changes[0].witness!.document as { x: unknown[] }).x.length).toBeGreaterThan(1);
  });

  it("constraints implied by existing ones are compatible (minLength by a pattern, maxLength by an enum)", () => {
    expectCompatible(
      obj({ type: "string", pattern: "^[a-z]{3}$" }),
      obj({ type: "string", pattern: "^[a-z]{3}$", minLength: 2 }),
    );
    expectCompatible(
      obj({ type: "string", enum: ["ab", "abc"] }),
      obj({ type: "string", enum: ["ab", "abc"], maxLength: 3 }),
    );
    expectBreaking(
      obj({ type: "string", enum: ["ab", "abcd"] }),
      obj({ type: "string", enum: ["ab", "abcd"], maxLength: 3 }),
    );
  });

  it("an added pattern every date-time already matches is compatible", () => {
    expectCompatible(
      obj({ type: "string", format: "date-time" }),
      obj({ type: "string", format: "date-time", pattern: "^\\d{4}-\\d{2}-" }),
    );
    expectBreaking(
      obj({ type: "string", format: "date-time" }),
      obj({ type: "string", format: "date-time", pattern: "Z$" }),
    );
  });
});

describe("each keyword family, both directions, with witnesses", () => {
  it.each([
    ["type", { type: "integer" }, { type: "number" }, { type: "number" }, { type: "integer" }],
    ["nullable", { type: "string" }, { type: ["string", "null"] }, { type: ["string", "null"] }, { type: "string" }],
    ["enum", { enum: ["a"] }, { enum: ["a", "b"] }, { enum: ["a", "b"] }, { enum: ["a"] }],
    ["const", { const: "a" }, { enum: ["a", "b"] }, { type: "string" }, { const: "a" }],
    [
      "minimum",
      { type: "number", minimum: 1 },
      { type: "number", minimum: 0 },
      { type: "number", minimum: 0 },
      { type: "number", minimum: 1 },
    ],
    [
      "maximum",
      { type: "integer", maximum: 5 },
      { type: "integer", exclusiveMaximum: 6 },
      { type: "integer", maximum: 5 },
      { type: "integer", maximum: 4 },
    ],
    [
      "multipleOf",
      { type: "number", multipleOf: 4 },
      { type: "number", multipleOf: 2 },
      { type: "number", multipleOf: 2 },
      { type: "number", multipleOf: 4 },
    ],
    [
      "minLength",
      { type: "string", minLength: 2 },
      { type: "string", minLength: 1 },
      { type: "string" },
      { type: "string", minLength: 1 },
    ],
    [
      "maxLength",
      { type: "string", maxLength: 5 },
      { type: "string", maxLength: 6 },
      { type: "string", maxLength: 6 },
      { type: "string", maxLength: 5 },
    ],
    [
      "format",
      { type: "string", format: "date-time" },
      { type: "string" },
      { type: "string" },
      { type: "string", format: "date-time" },
    ],
    [
      "pattern",
      { type: "string", pattern: "^ab" },
      { type: "string", pattern: "^a" },
      { type: "string", pattern: "^a" },
      { type: "string", pattern: "^ab" },
    ],
    [
      "minItems",
      { type: "array", minItems: 2 },
      { type: "array", minItems: 1 },
      { type: "array" },
      { type: "array", minItems: 1 },
    ],
    [
      "maxItems",
      { type: "array", maxItems: 2 },
      { type: "array", maxItems: 3 },
      { type: "array", maxItems: 3 },
      { type: "array", maxItems: 2 },
    ],
    [
      "uniqueItems",
      { type: "array", uniqueItems: true },
      { type: "array" },
      { type: "array", items: { type: "integer" } },
      { type: "array", items: { type: "integer" }, uniqueItems: true },
    ],
    [
      "items",
      { type: "array", items: { type: "integer" } },
      { type: "array", items: { type: "number" } },
      { type: "array", items: { type: "number" } },
      { type: "array", items: { type: "integer" } },
    ],
    [
      "additionalProperties (schema)",
      { type: "object", additionalProperties: { type: "integer" } },
      { type: "object", additionalProperties: { type: "number" } },
      { type: "object", additionalProperties: { type: "number" } },
      { type: "object", additionalProperties: { type: "integer" } },
    ],
    [
      "additionalProperties (boolean)",
      { type: "object", additionalProperties: false },
      { type: "object" },
      { type: "object" },
      { type: "object", additionalProperties: false },
    ],
    [
      "required, nested",
      { type: "object", properties: { a: obj({ type: "string" }) }, required: ["a"] },
      { type: "object", properties: { a: obj({ type: "string" }, { required: [] }) }, required: ["a"] },
      { type: "object", properties: { a: obj({ type: "string" }, { required: [] }) }, required: ["a"] },
      { type: "object", properties: { a: obj({ type: "string" }) }, required: ["a"] },
    ],
    [
      "anyOf",
      { anyOf: [{ type: "string" }] },
      { anyOf: [{ type: "string" }, { type: "integer" }] },
      { anyOf: [{ type: "string" }, { type: "integer" }] },
      { anyOf: [{ type: "string" }] },
    ],
    [
      "allOf",
      { allOf: [{ type: "string" }, { minLength: 2 }] },
      { allOf: [{ type: "string" }] },
      { allOf: [{ type: "string" }] },
      { allOf: [{ type: "string" }, { minLength: 2 }] },
    ],
    [
      "patternProperties",
      { type: "object", patternProperties: { "^a": { type: "string" } }, additionalProperties: false },
      { type: "object", patternProperties: { "^[ab]": { type: "string" } }, additionalProperties: false },
      { type: "object", patternProperties: { "^[ab]": { type: "string" } }, additionalProperties: false },
      { type: "object", patternProperties: { "^a": { type: "string" } }, additionalProperties: false },
    ],
  ])("%s", (_family, compatibleOld, compatibleNew, breakingOld, breakingNew) => {
    expectCompatible(obj(compatibleOld), obj(compatibleNew));
    expectBreaking(obj(breakingOld), obj(breakingNew));
  });

  it("$ref: a renamed definition with equal content is no change; a changed target breaks", () => {
    const v1 = { definitions: { Name: { type: "string" } }, ...obj({ $ref: "#/definitions/Name" }) };
    const renamed = { definitions: { Label: { type: "string" } }, ...obj({ $ref: "#/definitions/Label" }) };
    const narrowed = {
      definitions: { Name: { type: "string", maxLength: 3 } },
      ...obj({ $ref: "#/definitions/Name" }),
    };
    expect(assessCompatibility(v1, renamed)).toMatchObject({ verdict: "compatible", changes: [] });
    expectBreaking(v1, narrowed);
  });

  it("required-ness: a property made required or added as required breaks (the witness leaves it out)", () => {
    const optional = { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, required: ["a"] };
    const a = expectBreaking(optional, { ...optional, required: ["a", "b"] });
    expect(a.changes[0].witness!.document).toEqual({ a: "" });
  });

  it("a removed property of a closed object breaks: the witness holds it", () => {
    const old = {
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" } },
      additionalProperties: false,
    };
    const a = expectBreaking(old, { ...old, properties: { a: { type: "string" } } });
    expect(a.changes.find((c) => c.kind === "breaking")!.witness!.document).toHaveProperty("b");
  });
});

describe("cannot decide: never a guess", () => {
  it("a pattern the automata can not read (a backreference) is undecided, with keyword and pointer", () => {
    const a = assessCompatibility(obj({ type: "string" }), obj({ type: "string", pattern: "^(a)\\1$" }), {
      samples: 20,
    });
    expect(a.verdict).not.toBe("compatible");
    const change = a.changes.find((c) => c.kind !== "compatible")!;
    expect(change).toMatchObject({ keyword: "pattern", pointer: "/x" });
  });

  it("a breaking rule with no document to show it is reported as undecided (an unknown keyword no validator reads)", () => {
    const a = assessCompatibility(obj({ type: "string", "acme-rule": 1 }), obj({ type: "string", "acme-rule": 2 }), {
      samples: 20,
    });
    expect(a.verdict).toBe("undecided");
    expect(a.changes[0]).toMatchObject({ kind: "undecided", keyword: "acme-rule", pointer: "/x" });
    expect(a.changes[0].message).toContain("cannot decide");
    expect(a.changes[0].witness).toBeUndefined();
  });
});

describe("sampling: the second line of defence", () => {
  // A family slot at /x is compared by family only; the validators still see the schemas, so a
  // difference the analysis skipped there is found by sampling old documents.
  const slot = { path: ["x"], family: "AIContent" };
  // Closed objects: a property added to an open one is itself a break the analysis sees (issue #34).
  const old = { type: "object", properties: { x: { type: "string" } }, required: ["x"], additionalProperties: false };
  const next = {
    type: "object",
    properties: { x: { type: "integer" }, note: { type: "string" } },
    required: ["x"],
    additionalProperties: false,
  };

  it("a counterexample drawn from the old schema makes the verdict breaking, with the seed that draws it", () => {
    const a = assessCompatibility(old, next, { oldSlots: [slot], newSlots: [slot], seed: 7, samples: 30 });
    expect(a.verdict).toBe("breaking");
    expect(a.sampling).toMatchObject({ seed: 7 });
    const counter = a.changes.find((c) => c.rule === "sampled-counterexample")!;
    expect(counter).toMatchObject({ kind: "breaking", pointer: "/x" });
    expect(counter.message).toContain("seed 7");
    expect(counter.witness).toMatchObject({ source: "sampled", seed: 7 });
    expect(accepts(old, counter.witness!.document)).toBe(true);
    expect(accepts(next, counter.witness!.document)).toBe(false);
    // The same seed draws the same counterexample.
    const again = assessCompatibility(old, next, { oldSlots: [slot], newSlots: [slot], seed: 7, samples: 30 });
    expect(again.changes.find((c) => c.rule === "sampled-counterexample")!.witness!.document).toEqual(
      counter.witness!.document,
    );
  });

  it("a compatible change is sampled and stays compatible; samples: 0 turns sampling off", () => {
    const widened = { ...old, properties: { x: { type: "string" }, note: { type: "string" } } };
    const a = assessCompatibility(old, widened, { samples: 40, seed: 3 });
    expect(a.verdict).toBe("compatible");
    expect(a.sampling).toMatchObject({ seed: 3, timedOut: false });
    expect(a.sampling!.drawn).toBeGreaterThan(0);
    // Sampling off is said, never silent (issue #26): 0 drawn, with a warning.
    expect(assessCompatibility(old, widened, { samples: 0 }).sampling).toMatchObject({
      drawn: 0,
      accepted: 0,
      warning: expect.stringContaining("turned off"),
    });
  });

  it("identical schemas are not sampled", () => {
    expect(assessCompatibility(old, old)).toEqual({ verdict: "compatible", changes: [] });
  });
});
