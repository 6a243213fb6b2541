/**
 * diffSchemas decides by meaning: one breaking and one compatible example per keyword family,
 * and the cases where text comparison used to get the verdict wrong.
 */
import { describe, expect, it } from "vitest";
import { diffSchemas } from "../../generator/compat/diff.js";
import { type Change, type ChangeKind, probeOf } from "../../generator/compat/rule-catalogue.js";
import { compileBundled } from "../../generator/compat/bundle.js";
import type { JsonSchema } from "../../generator/compat/schema.js";

function obj(x: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "object", properties: { x }, required: ["x"], additionalProperties: false, ...extra };
}

function verdict(changes: readonly Change[]): ChangeKind {
  if (changes.some((c) => c.kind === "breaking")) return "breaking";
  if (changes.some((c) => c.kind === "undecided")) return "undecided";
  return "compatible";
}

/** The probe value of the first breaking change, checked: the old schema accepts it, the new one rejects it. */
function probeValue(oldX: unknown, newX: unknown): unknown {
  const change = diffSchemas(obj(oldX), obj(newX)).find((c) => c.kind === "breaking");
  expect(change, "a breaking change").toBeDefined();
  const probe = probeOf(change!);
  expect(probe && "value" in probe, JSON.stringify(probe)).toBe(true);
  const value = (probe as { value: unknown }).value;
  const validate = (schema: unknown) => {
    const compiled = compileBundled(schema as JsonSchema);
    if (!("validate" in compiled)) throw new Error(compiled.error);
    return compiled.validate(value) as boolean;
  };
  expect(validate(oldX), `old accepts ${JSON.stringify(value)}`).toBe(true);
  expect(validate(newX), `new rejects ${JSON.stringify(value)}`).toBe(false);
  return value;
}

describe("pattern: regular-expression inclusion, not text comparison", () => {
  it("a pattern that accepts more is compatible", () => {
    const changes = diffSchemas(
      obj({ type: "string", pattern: "^[a-z]+$" }),
      obj({ type: "string", pattern: "^[a-z0-9]+$" }),
    );
    expect(verdict(changes)).toBe("compatible");
    expect(changes).toMatchObject([{ rule: "loosen-constraint", keyword: "pattern", pointer: "/x" }]);
  });

  it("a pattern that accepts less is breaking, with a string the old pattern accepts and the new one rejects", () => {
    expect(
      verdict(
        diffSchemas(obj({ type: "string", pattern: "^[a-z0-9]+$" }), obj({ type: "string", pattern: "^[a-z]+$" })),
      ),
    ).toBe("breaking");
    expect(probeValue({ type: "string", pattern: "^[a-z0-9]+$" }, { type: "string", pattern: "^[a-z]+$" })).toMatch(
      /\d/,
    );
  });

  it("rewritten patterns with the same strings are no break (^a vs a|^a, anchors in alternations)", () => {
    expect(
      verdict(diffSchemas(obj({ type: "string", pattern: "^(?:a|b)$" }), obj({ type: "string", pattern: "^a$|^b$" }))),
    ).toBe("compatible");
    expect(verdict(diffSchemas(obj({ type: "string", pattern: "^a" }), obj({ type: "string", pattern: "a" })))).toBe(
      "compatible",
    );
    expect(verdict(diffSchemas(obj({ type: "string", pattern: "a" }), obj({ type: "string", pattern: "^a" })))).toBe(
      "breaking",
    );
  });

  it("an added pattern that every value of the existing format matches is compatible", () => {
    const changes = diffSchemas(
      obj({ type: "string", format: "date-time" }),
      obj({ type: "string", format: "date-time", pattern: "^\\d{4}-" }),
    );
    expect(verdict(changes)).toBe("compatible");
    expect(changes).toMatchObject([{ rule: "implied-constraint", keyword: "pattern" }]);
    expect(
      verdict(
        diffSchemas(
          obj({ type: "string", format: "date-time" }),
          obj({ type: "string", format: "date-time", pattern: "Z$" }),
        ),
      ),
    ).toBe("breaking");
  });

  it("a pattern refa can not analyse is cannot-decide, naming the keyword and pointer", () => {
    const changes = diffSchemas(
      obj({ type: "string", pattern: "^(\\w+)\\1$" }),
      obj({ type: "string", pattern: "^\\w+$" }),
    );
    expect(changes).toMatchObject([{ rule: "cannot-decide", kind: "undecided", keyword: "pattern", pointer: "/x" }]);
    expect(changes[0]!.message).toContain("can not be analysed");
  });
});

describe("implied constraints", () => {
  it("a minLength implied by the pattern is compatible; one the pattern does not imply is breaking", () => {
    const changes = diffSchemas(
      obj({ type: "string", pattern: "^[a-z]{3,}$" }),
      obj({ type: "string", pattern: "^[a-z]{3,}$", minLength: 2 }),
    );
    expect(changes).toMatchObject([{ rule: "implied-constraint", keyword: "minLength", kind: "compatible" }]);
    expect(
      probeValue({ type: "string", pattern: "^[a-z]{3,}$" }, { type: "string", pattern: "^[a-z]{3,}$", minLength: 4 }),
    ).toHaveLength(3);
  });

  it("a maxLength implied by the enum is compatible; one shorter than an enum value is breaking", () => {
    expect(
      verdict(
        diffSchemas(
          obj({ type: "string", enum: ["user", "tool"] }),
          obj({ type: "string", enum: ["user", "tool"], maxLength: 4 }),
        ),
      ),
    ).toBe("compatible");
    expect(
      probeValue(
        { type: "string", enum: ["user", "assistant"] },
        { type: "string", enum: ["user", "assistant"], maxLength: 4 },
      ),
    ).toBe("assistant");
  });

  it("bounds implied by a const are no change", () => {
    expect(
      verdict(
        diffSchemas(obj({ type: "integer", const: 2 }), obj({ type: "integer", const: 2, minimum: 1, maximum: 2 })),
      ),
    ).toBe("compatible");
  });

  it("a maxItems implied by a closed tuple is compatible", () => {
    const tuple = { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false };
    expect(verdict(diffSchemas(obj(tuple), obj({ ...tuple, maxItems: 2 })))).toBe("compatible");
    expect(verdict(diffSchemas(obj(tuple), obj({ ...tuple, maxItems: 1 })))).toBe("breaking");
  });
});

describe("numbers: integer semantics, multipleOf", () => {
  it("exclusiveMinimum 0 and minimum 1 admit the same integers", () => {
    expect(diffSchemas(obj({ type: "integer", exclusiveMinimum: 0 }), obj({ type: "integer", minimum: 1 }))).toEqual(
      [],
    );
    expect(diffSchemas(obj({ type: "integer", minimum: 1 }), obj({ type: "integer", exclusiveMinimum: 0 }))).toEqual(
      [],
    );
    expect(diffSchemas(obj({ type: "integer", maximum: 9 }), obj({ type: "integer", exclusiveMaximum: 10 }))).toEqual(
      [],
    );
  });

  it("on numbers they differ: 0.5 passes exclusiveMinimum 0, not minimum 1", () => {
    expect(
      verdict(diffSchemas(obj({ type: "number", exclusiveMinimum: 0 }), obj({ type: "number", minimum: 1 }))),
    ).toBe("breaking");
    expect(probeValue({ type: "number", exclusiveMinimum: 0 }, { type: "number", minimum: 1 })).toBe(0.5);
  });

  it("a raised integer minimum is breaking with the old lowest integer as the value", () => {
    expect(probeValue({ type: "integer", exclusiveMinimum: 0 }, { type: "integer", minimum: 2 })).toBe(1);
  });

  it("multipleOf: a divisor of the old one is compatible, multipleOf 1 on integers is implied, others break", () => {
    expect(verdict(diffSchemas(obj({ type: "number", multipleOf: 4 }), obj({ type: "number", multipleOf: 2 })))).toBe(
      "compatible",
    );
    expect(diffSchemas(obj({ type: "integer" }), obj({ type: "integer", multipleOf: 1 }))).toEqual([]); // every integer is a multiple of 1
    expect(probeValue({ type: "number", multipleOf: 2 }, { type: "number", multipleOf: 4 })).toBe(2);
    expect(probeValue({ type: "integer" }, { type: "integer", multipleOf: 2 })).toBe(1);
  });
});

describe("arrays: tuple and list items, additionalItems", () => {
  it("tuple items are compared by position (a widened position is compatible)", () => {
    const old = { type: "array", items: [{ type: "string" }, { type: "integer" }], additionalItems: false };
    const next = { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false };
    expect(diffSchemas(obj(old), obj(next))).toMatchObject([
      { pointer: "/x/1", rule: "widen-type", kind: "compatible" },
    ]);
    expect(diffSchemas(obj(next), obj(old))).toMatchObject([
      { pointer: "/x/1", rule: "narrow-type", kind: "breaking" },
    ]);
  });

  it("a list turned into a closed tuple: positions compared with the list's item schema, the rest explained as additionalItems", () => {
    const list = { type: "array", items: { type: "string" } };
    const tuple = { type: "array", items: [{ type: "string" }], additionalItems: false };
    const changes = diffSchemas(obj(list), obj(tuple));
    expect(changes).toMatchObject([
      { pointer: "/x", rule: "tighten-constraint", keyword: "additionalItems", kind: "breaking" },
    ]);
    expect(changes[0]!.message).toBe("items after position 1 are no longer accepted (additionalItems is false)");
    expect(changes[0]!.message).not.toContain("no value is accepted");
    expect(probeOf(changes[0]!)).toEqual({ itemsBeyond: 2 });
  });

  it("closing a tuple that maxItems already capped is compatible", () => {
    const open = { type: "array", items: [{ type: "string" }], maxItems: 1 };
    expect(verdict(diffSchemas(obj(open), obj({ ...open, additionalItems: false })))).toBe("compatible");
  });

  it("uniqueItems: implied when at most one item fits, breaking otherwise", () => {
    const one = { type: "array", items: [{ type: "string" }], additionalItems: false };
    expect(diffSchemas(obj(one), obj({ ...one, uniqueItems: true }))).toMatchObject([
      { rule: "implied-constraint", keyword: "uniqueItems" },
    ]);
    expect(diffSchemas(obj({ type: "array" }), obj({ type: "array", uniqueItems: true }))).toMatchObject([
      { kind: "breaking", keyword: "uniqueItems" },
    ]);
  });
});

describe("oneOf: branch overlap", () => {
  const tagged = (tag: string, extra: Record<string, unknown> = {}) => ({
    type: "object",
    properties: { $type: { type: "string", const: tag }, ...extra },
    required: ["$type"],
  });

  it("adding a catch-all object next to tagged members is breaking: old members match two branches", () => {
    const old = obj({ oneOf: [tagged("a"), tagged("b")] });
    const next = obj({ oneOf: [tagged("a"), tagged("b"), { type: "object" }] });
    const changes = diffSchemas(old, next);
    expect(verdict(changes)).toBe("breaking");
    const overlap = changes.find((c) => c.kind === "breaking")!;
    expect(overlap).toMatchObject({ pointer: "/x", rule: "tighten-constraint", kind: "breaking" });
    expect(overlap.message).toContain("can both match");
    // Candidates that may match both branches go with it (issue #34): here the tagged members themselves.
    expect(probeOf(overlap)).toMatchObject({ candidates: expect.arrayContaining([{ $type: "a" }]) });
  });

  it("adding a member with its own $type is compatible (the discriminator proves the branches disjoint)", () => {
    const changes = diffSchemas(
      obj({ oneOf: [tagged("a"), tagged("b")] }),
      obj({ oneOf: [tagged("a"), tagged("b"), tagged("c")] }),
    );
    expect(verdict(changes)).toBe("compatible");
  });

  it("branches told apart by a required const property, or a property one requires and the other forbids, are disjoint", () => {
    const kind = (k: string) => ({ type: "object", properties: { kind: { const: k } }, required: ["kind"] });
    expect(verdict(diffSchemas(obj({ oneOf: [kind("a")] }), obj({ oneOf: [kind("a"), kind("b")] })))).toBe(
      "compatible",
    );
    const closed = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
    const needsB = { type: "object", properties: { b: { type: "string" } }, required: ["b"] };
    expect(verdict(diffSchemas(obj({ oneOf: [closed] }), obj({ oneOf: [closed, needsB] })))).toBe("compatible");
  });

  it("anyOf is not exclusive: the same added catch-all is compatible there", () => {
    expect(verdict(diffSchemas(obj({ anyOf: [tagged("a")] }), obj({ anyOf: [tagged("a"), { type: "object" }] })))).toBe(
      "compatible",
    );
  });
});

describe("patternProperties: key languages", () => {
  const map = (patterns: Record<string, unknown>, additional: unknown = false) => ({
    type: "object",
    patternProperties: patterns,
    additionalProperties: additional,
  });

  it("a key pattern that accepts more keys is compatible", () => {
    expect(
      verdict(
        diffSchemas(obj(map({ "^[a-z]+$": { type: "string" } })), obj(map({ "^[a-z0-9]+$": { type: "string" } }))),
      ),
    ).toBe("compatible");
  });

  it("a key pattern that accepts fewer keys (closed map) is breaking, naming a key that is lost", () => {
    const changes = diffSchemas(
      obj(map({ "^[a-z0-9]+$": { type: "string" } })),
      obj(map({ "^[a-z]+$": { type: "string" } })),
    );
    const lost = changes.find((c) => c.kind === "breaking")!;
    expect(lost).toMatchObject({ rule: "close-additional-properties", keyword: "patternProperties" });
    expect(probeOf(lost)).toMatchObject({ extraKey: expect.stringMatching(/\d/) });
  });

  it("values under overlapping patterns are compared at a key both match", () => {
    const changes = diffSchemas(obj(map({ "^a": { type: "number" } })), obj(map({ "^a": { type: "integer" } })));
    expect(changes).toMatchObject([{ pointer: "/x/a", rule: "narrow-type", kind: "breaking" }]);
  });

  it("a new pattern covering a named property applies to its values", () => {
    const old = { type: "object", properties: { ab: { type: "string" } } };
    expect(verdict(diffSchemas(old, { ...old, patternProperties: { "^a": { type: "string" } } }))).toBe("breaking"); // other ^a keys were free
    const closed = { ...old, additionalProperties: false };
    expect(verdict(diffSchemas(closed, { ...closed, patternProperties: { "^a": { type: "string" } } }))).toBe(
      "compatible",
    );
    expect(verdict(diffSchemas(closed, { ...closed, patternProperties: { "^a": { type: "number" } } }))).toBe(
      "breaking",
    );
  });

  it("a key pattern replaced by one named property: the pattern's other keys are lost, even when its shortest key is that name", () => {
    for (const name of ["x", "a-b/c.d"]) {
      const old = {
        type: "object",
        patternProperties: { [`^${name.replace(/[./]/g, "\\$&")}`]: {} },
        additionalProperties: false,
      };
      const changes = diffSchemas(old, { type: "object", properties: { [name]: {} }, additionalProperties: false });
      const lost = changes.find((c) => c.kind === "breaking");
      expect(lost, name).toMatchObject({ rule: "close-additional-properties", keyword: "patternProperties" });
      const key = (probeOf(lost!) as { extraKey: string }).extraKey;
      expect(key.startsWith(name) && key !== name, key).toBe(true);
    }
  });
});

describe("other families, both directions", () => {
  it("type arrays and nullable", () => {
    expect(verdict(diffSchemas(obj({ type: "string" }), obj({ type: ["string", "null"] })))).toBe("compatible");
    expect(verdict(diffSchemas(obj({ type: ["string", "null"] }), obj({ type: "string" })))).toBe("breaking");
  });

  it("enum / const", () => {
    expect(verdict(diffSchemas(obj({ enum: ["a"] }), obj({ enum: ["a", "b"] })))).toBe("compatible");
    expect(probeValue({ enum: ["a", "b"] }, { enum: ["a"] })).toBe("b");
    expect(probeValue({ const: "a" }, { const: "b" })).toBe("a");
  });

  it("format", () => {
    expect(verdict(diffSchemas(obj({ type: "string", format: "date-time" }), obj({ type: "string" })))).toBe(
      "compatible",
    );
    expect(verdict(diffSchemas(obj({ type: "string" }), obj({ type: "string", format: "date-time" })))).toBe(
      "breaking",
    );
    // A format every enum value satisfies is implied.
    expect(
      verdict(
        diffSchemas(
          obj({ type: "string", enum: ["2024-01-01T00:00:00Z"] }),
          obj({ type: "string", enum: ["2024-01-01T00:00:00Z"], format: "date-time" }),
        ),
      ),
    ).toBe("compatible");
  });

  it("string lengths", () => {
    expect(verdict(diffSchemas(obj({ type: "string", maxLength: 3 }), obj({ type: "string", maxLength: 5 })))).toBe(
      "compatible",
    );
    expect(probeValue({ type: "string", maxLength: 5 }, { type: "string", maxLength: 3 })).toBe("aaaa");
  });

  it("allOf, anyOf and $ref renames", () => {
    const a = { properties: { a: { type: "string" } } };
    expect(verdict(diffSchemas({ allOf: [a, { required: ["a"] }] }, { allOf: [a] }))).toBe("compatible");
    expect(
      verdict(diffSchemas({ anyOf: [{ type: "string" }] }, { anyOf: [{ type: "string" }, { type: "null" }] })),
    ).toBe("compatible");
    const old = { properties: { a: { $ref: "#/definitions/A" } }, definitions: { A: { type: "string" } } };
    expect(
      diffSchemas(old, {
        properties: { a: { $ref: "#/definitions/Renamed" } },
        definitions: { Renamed: { type: "string" } },
      }),
    ).toEqual([]);
  });

  it("additionalProperties: boolean and schema", () => {
    const open = { type: "object", additionalProperties: { type: "integer" } };
    expect(verdict(diffSchemas(open, { type: "object", additionalProperties: { type: "number" } }))).toBe("compatible");
    expect(verdict(diffSchemas(open, { type: "object", additionalProperties: false }))).toBe("breaking");
  });

  it("required-ness at any depth", () => {
    const deep = (required: string[]) =>
      obj({ type: "array", items: obj({ type: "object", properties: { y: { type: "string" } }, required }) });
    expect(diffSchemas(deep([]), deep(["y"]))).toMatchObject([
      { pointer: "/x/*/x/y", rule: "make-required", kind: "breaking" },
    ]);
    expect(diffSchemas(deep(["y"]), deep([]))).toMatchObject([
      { pointer: "/x/*/x/y", rule: "make-optional", kind: "compatible" },
    ]);
  });
});

describe("oneOf: nested unions inside one branch", () => {
  it("a branch that is itself an anyOf (or a type array) is one branch: its alternatives may overlap each other", () => {
    const nested = { anyOf: [{ type: "number" }, { type: "integer" }] };
    expect(
      verdict(diffSchemas(obj({ oneOf: [{ type: "string" }] }), obj({ oneOf: [{ type: "string" }, nested] }))),
    ).toBe("compatible");
    expect(
      verdict(
        diffSchemas(
          obj({ oneOf: [{ type: "string" }] }),
          obj({ oneOf: [{ type: "string" }, { type: ["number", "integer"] }] }),
        ),
      ),
    ).toBe("compatible");
    // ...but one overlapping another branch is caught.
    expect(
      verdict(diffSchemas(obj({ oneOf: [{ type: "integer" }] }), obj({ oneOf: [{ type: "integer" }, nested] }))),
    ).toBe("breaking");
  });
});

describe("a named property folded into patternProperties / an index signature", () => {
  it("is no removal when the new pattern or additionalProperties schema accepts its values", () => {
    const old = { type: "object", properties: { ab: { type: "string" } }, additionalProperties: false };
    expect(
      verdict(
        diffSchemas(old, {
          type: "object",
          patternProperties: { "^a": { type: "string" } },
          additionalProperties: false,
        }),
      ),
    ).toBe("compatible");
    expect(verdict(diffSchemas(old, { type: "object", additionalProperties: { type: "string" } }))).toBe("compatible");
    expect(diffSchemas(old, { type: "object", additionalProperties: { type: "number" } })).toMatchObject([
      { pointer: "/ab", rule: "narrow-type", kind: "breaking" },
      { rule: "open-additional-properties" },
    ]);
    expect(diffSchemas(old, { type: "object", additionalProperties: false })).toMatchObject([
      { pointer: "/ab", rule: "remove-property", kind: "breaking" },
    ]);
  });
});
