import { describe, expect, it } from "vitest";
import { diffSchemas } from "../../generator/compat/diff.js";
import { CHANGE_RULES, type Change } from "../../generator/compat/rule-catalogue.js";
import { kinds, rules } from "./helpers.js";

/** A closed object with one property `x` (required unless told), so pointers read `/x`. */
function obj(x: unknown, required = true, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "object", properties: { x }, required: required ? ["x"] : [], additionalProperties: false, ...extra };
}

function only(changes: Change[]): Change {
  expect(changes, JSON.stringify(changes, null, 2)).toHaveLength(1);
  return changes[0];
}

describe("diffSchemas: basics", () => {
  it("reports nothing for identical schemas, and ignores the order of required / enum / type arrays", () => {
    const a = {
      type: "object",
      properties: { a: { type: ["string", "null"] }, b: { enum: [1, 2] } },
      required: ["a", "b"],
    };
    const b = {
      type: "object",
      properties: { b: { enum: [2, 1] }, a: { type: ["null", "string"] } },
      required: ["b", "a"],
    };
    expect(diffSchemas(a, a)).toEqual([]);
    expect(diffSchemas(a, b)).toEqual([]);
  });

  it("gives every change a kind that matches its rule", () => {
    const changes = diffSchemas(
      obj({ type: "string" }),
      obj({ type: "number" }, false, { properties: { y: { type: "string" } } }),
    );
    for (const c of changes) expect(c.kind).toBe(CHANGE_RULES[c.rule]);
  });

  it("escapes pointer segments (RFC 6901) and uses * for items and map values", () => {
    const old = {
      type: "object",
      properties: {
        "a/b~c": { type: "string" },
        list: { type: "array", items: { type: "object", properties: { role: { type: "string" } } } },
        map: { type: "object", additionalProperties: { type: "string" } },
      },
    };
    const next = {
      type: "object",
      properties: {
        "a/b~c": { type: "integer" },
        list: { type: "array", items: { type: "object", properties: { role: { type: "integer" } } } },
        map: { type: "object", additionalProperties: { type: "integer" } },
      },
    };
    expect(rules(diffSchemas(old, next))).toEqual([
      "narrow-type@/a~1b~0c",
      "narrow-type@/list/*/role",
      "narrow-type@/map/*",
    ]);
  });
});

describe("properties and required", () => {
  it("add-optional-property is compatible", () => {
    const c = only(
      diffSchemas(obj({ type: "string" }), {
        ...obj({ type: "string" }),
        properties: { x: { type: "string" }, y: { type: "number" } },
      }),
    );
    expect(c).toMatchObject({ pointer: "/y", rule: "add-optional-property", kind: "compatible" });
  });

  it("add-required is breaking", () => {
    const next = {
      ...obj({ type: "string" }),
      properties: { x: { type: "string" }, y: { type: "number" } },
      required: ["x", "y"],
    };
    const c = only(diffSchemas(obj({ type: "string" }), next));
    expect(c).toMatchObject({
      pointer: "/y",
      rule: "add-required",
      kind: "breaking",
      message: "required property added",
    });
  });

  it("remove-property is breaking (even when optional)", () => {
    const old = {
      type: "object",
      properties: { x: { type: "string" }, y: { type: "number" } },
      required: ["x"],
      additionalProperties: false,
    };
    const c = only(diffSchemas(old, obj({ type: "string" })));
    expect(c).toMatchObject({ pointer: "/y", rule: "remove-property", kind: "breaking" });
  });

  it("a rename is reported as a removal that names the likely new name", () => {
    const closed = { type: "object", additionalProperties: false };
    const old = { ...closed, properties: { callId: { type: "string" } }, required: ["callId"] };
    const next = { ...closed, properties: { id: { type: "string" } }, required: ["id"] };
    const changes = diffSchemas(old, next);
    expect(rules(changes)).toEqual(["add-required@/id", "remove-property@/callId"]);
    const removal = changes.find((c) => c.rule === "remove-property")!;
    expect(removal.kind).toBe("breaking");
    expect(removal.message).toContain('possibly renamed to "id"');
  });

  it("make-required is breaking", () => {
    const c = only(diffSchemas(obj({ type: "string" }, false), obj({ type: "string" }, true)));
    expect(c).toMatchObject({ pointer: "/x", rule: "make-required", kind: "breaking" });
  });

  it("make-optional (removing from required) is compatible", () => {
    const c = only(diffSchemas(obj({ type: "string" }, true), obj({ type: "string" }, false)));
    expect(c).toMatchObject({ pointer: "/x", rule: "make-optional", kind: "compatible" });
  });

  it("recurses into nested objects", () => {
    const old = obj(obj({ type: "string" }));
    const next = obj(obj({ type: "string" }, false));
    expect(rules(diffSchemas(old, next))).toEqual(["make-optional@/x/x"]);
  });

  it("a property added where an index signature held values must still accept them", () => {
    const old = { type: "object", additionalProperties: { type: "string" } };
    const ok = { type: "object", properties: { name: { type: "string" } }, additionalProperties: { type: "string" } };
    const bad = { type: "object", properties: { name: { type: "integer" } }, additionalProperties: { type: "string" } };
    expect(rules(diffSchemas(old, ok))).toEqual(["add-optional-property@/name"]);
    expect(rules(diffSchemas(old, bad))).toEqual(["add-optional-property@/name", "narrow-type@/name"]);
  });
});

describe("types", () => {
  it.each([
    ["integer -> number", { type: "integer" }, { type: "number" }],
    ["T -> T | null (type array)", { type: "string" }, { type: ["string", "null"] }],
    ["adding a type to a type array", { type: ["string", "null"] }, { type: ["string", "null", "boolean"] }],
    ["removing the type keyword", { type: "string" }, {}],
  ])("widen-type is compatible: %s", (_name, a, b) => {
    const c = only(diffSchemas(obj(a), obj(b)));
    expect(c).toMatchObject({ pointer: "/x", rule: "widen-type", kind: "compatible" });
  });

  it.each([
    ["number -> integer", { type: "number" }, { type: "integer" }, "type narrowed from number to integer"],
    ["string -> number", { type: "string" }, { type: "number" }, "type narrowed from string to number"],
    [
      "T | null -> T (removing a type)",
      { type: ["string", "null"] },
      { type: "string" },
      "type narrowed from string | null to string",
    ],
    ["adding a type keyword", {}, { type: "string" }, "type narrowed from any type to string"],
  ])("narrow-type is breaking: %s", (_name, a, b, message) => {
    const c = only(diffSchemas(obj(a), obj(b)));
    expect(c).toMatchObject({ pointer: "/x", rule: "narrow-type", kind: "breaking", message });
  });

  it("T -> T | null as an anyOf is a compatible added branch", () => {
    const c = only(diffSchemas(obj({ type: "string" }), obj({ anyOf: [{ type: "string" }, { type: "null" }] })));
    expect(c).toMatchObject({ pointer: "/x", rule: "add-union-branch", kind: "compatible" });
  });

  it("a type array and the equivalent anyOf compare equal", () => {
    expect(
      diffSchemas(obj({ type: ["string", "null"] }), obj({ anyOf: [{ type: "null" }, { type: "string" }] })),
    ).toEqual([]);
    expect(
      diffSchemas(obj({ anyOf: [{ type: "null" }, { type: "string" }] }), obj({ type: ["string", "null"] })),
    ).toEqual([]);
  });

  it("a schema that became false rejects everything", () => {
    expect(only(diffSchemas(obj({ type: "string" }), obj(false)))).toMatchObject({
      rule: "narrow-type",
      kind: "breaking",
    });
    expect(diffSchemas(obj(false), obj({ type: "string" }))).toEqual([]);
  });

  it("keywords of types the old schema never accepted are irrelevant", () => {
    // minimum only applies to numbers; a string was never subject to it.
    expect(diffSchemas(obj({ type: "string" }), obj({ type: "string", minimum: 3 }))).toEqual([]);
  });
});

describe("enum and const", () => {
  it("add-enum-value is compatible", () => {
    const c = only(
      diffSchemas(obj({ type: "string", enum: ["a", "b"] }), obj({ type: "string", enum: ["a", "b", "c"] })),
    );
    expect(c).toMatchObject({ rule: "add-enum-value", kind: "compatible", message: 'enum value "c" added' });
  });

  it("remove-enum-value is breaking", () => {
    const c = only(diffSchemas(obj({ type: "string", enum: ["a", "b"] }), obj({ type: "string", enum: ["a"] })));
    expect(c).toMatchObject({ rule: "remove-enum-value", kind: "breaking", message: 'enum value "b" removed' });
  });

  it("add-enum (restricting a free value) is breaking; remove-enum is compatible", () => {
    expect(only(diffSchemas(obj({ type: "string" }), obj({ type: "string", enum: ["user"] })))).toMatchObject({
      rule: "add-enum",
      kind: "breaking",
    });
    expect(only(diffSchemas(obj({ type: "string", enum: ["user"] }), obj({ type: "string" })))).toMatchObject({
      rule: "remove-enum",
      kind: "compatible",
    });
  });

  it("add-const is breaking; remove-const is compatible", () => {
    expect(only(diffSchemas(obj({ type: "string" }), obj({ type: "string", const: "a" })))).toMatchObject({
      rule: "add-const",
      kind: "breaking",
    });
    expect(only(diffSchemas(obj({ type: "string", const: "a" }), obj({ type: "string" })))).toMatchObject({
      rule: "remove-const",
      kind: "compatible",
    });
  });

  it("change-const is breaking (a changed $type is a rename)", () => {
    const c = only(
      diffSchemas(
        { properties: { $type: { type: "string", const: "a" } } },
        { properties: { $type: { type: "string", const: "b" } } },
      ),
    );
    expect(c).toMatchObject({
      pointer: "/$type",
      rule: "change-const",
      kind: "breaking",
      message: 'const changed from "a" to "b"',
    });
  });

  it("a const widened to an enum containing it is a compatible added value", () => {
    const c = only(diffSchemas(obj({ const: "a" }), obj({ enum: ["a", "b"] })));
    expect(c).toMatchObject({ rule: "add-enum-value", kind: "compatible" });
  });
});

describe("unions (anyOf / oneOf)", () => {
  const text = {
    type: "object",
    properties: { $type: { type: "string", const: "text" }, text: { type: "string" } },
    required: ["$type", "text"],
  };
  const data = {
    type: "object",
    properties: { $type: { type: "string", const: "data" }, uri: { type: "string" } },
    required: ["$type", "uri"],
  };
  const uri = {
    type: "object",
    properties: { $type: { type: "string", const: "uri" }, uri: { type: "string" } },
    required: ["$type", "uri"],
  };

  it("add-union-branch is compatible", () => {
    const c = only(diffSchemas(obj({ anyOf: [text, data] }), obj({ anyOf: [text, data, uri] })));
    expect(c).toMatchObject({
      pointer: "/x",
      rule: "add-union-branch",
      kind: "compatible",
      message: 'union branch $type "uri" added',
    });
  });

  it("remove-union-branch is breaking", () => {
    const c = only(diffSchemas(obj({ anyOf: [text, data] }), obj({ anyOf: [text] })));
    expect(c).toMatchObject({
      pointer: "/x",
      rule: "remove-union-branch",
      kind: "breaking",
      message: 'union branch $type "data" removed',
    });
  });

  it("matches branches by $type whatever their order, and reports changes inside a branch", () => {
    const text2 = { ...text, properties: { ...text.properties, text: { type: "string", maxLength: 10 } } };
    const changes = diffSchemas(obj({ oneOf: [text, data] }), obj({ oneOf: [data, text2] }));
    const c = only(changes);
    expect(c).toMatchObject({ pointer: "/x/text", rule: "tighten-constraint", keyword: "maxLength", kind: "breaking" });
    expect(c.message).toContain('in $type "text"');
  });

  it("matches untagged branches structurally", () => {
    const old = obj({ anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] });
    const widened = obj({ anyOf: [{ type: "array", items: { type: ["string", "number"] } }, { type: "string" }] });
    expect(rules(diffSchemas(old, widened))).toEqual(["widen-type@/x/*"]);
    const narrowed = obj({ anyOf: [{ type: "array", items: { type: "number" } }, { type: "string" }] });
    expect(only(diffSchemas(old, narrowed))).toMatchObject({ pointer: "/x/*", rule: "narrow-type", kind: "breaking" });
  });

  it("a union collapsing to one of its branches loses the others", () => {
    const c = only(diffSchemas(obj({ anyOf: [{ type: "string" }, { type: "null" }] }), obj({ type: "string" })));
    expect(c).toMatchObject({ rule: "remove-union-branch", kind: "breaking" });
  });

  it("anyOf -> oneOf with overlapping branches tightens; with distinct $types it does not", () => {
    const overlap = only(
      diffSchemas(
        obj({ anyOf: [{ type: "number" }, { type: "integer" }] }),
        obj({ oneOf: [{ type: "number" }, { type: "integer" }] }),
      ),
    );
    expect(overlap).toMatchObject({ rule: "tighten-constraint", keyword: "oneOf", kind: "breaking" });
    expect(diffSchemas(obj({ anyOf: [text, data] }), obj({ oneOf: [text, data] }))).toEqual([]);
    expect(
      only(
        diffSchemas(
          obj({ oneOf: [{ type: "number" }, { type: "integer" }] }),
          obj({ anyOf: [{ type: "number" }, { type: "integer" }] }),
        ),
      ),
    ).toMatchObject({
      rule: "loosen-constraint",
      kind: "compatible",
    });
  });

  it("a discriminator added to a union of tagged branches is an annotation", () => {
    const c = only(
      diffSchemas(obj({ oneOf: [text, data] }), obj({ oneOf: [text, data], discriminator: { propertyName: "$type" } })),
    );
    expect(c).toMatchObject({ rule: "annotation-change", kind: "compatible" });
  });
});

describe("constraints", () => {
  // [keyword, old schema of x, new schema of x, expected rule]
  const cases: [
    string,
    Record<string, unknown>,
    Record<string, unknown>,
    "tighten-constraint" | "loosen-constraint",
  ][] = [
    ["pattern", { type: "string" }, { type: "string", pattern: "^a" }, "tighten-constraint"],
    ["pattern", { type: "string", pattern: "^a" }, { type: "string" }, "loosen-constraint"],
    ["pattern", { type: "string", pattern: "^a" }, { type: "string", pattern: "^b" }, "tighten-constraint"],
    ["format", { type: "string" }, { type: "string", format: "date-time" }, "tighten-constraint"],
    ["format", { type: "string", format: "date-time" }, { type: "string" }, "loosen-constraint"],
    ["minimum", { type: "number", minimum: 0 }, { type: "number", minimum: 1 }, "tighten-constraint"],
    ["minimum", { type: "number", minimum: 1 }, { type: "number", minimum: 0 }, "loosen-constraint"],
    ["minimum", { type: "number" }, { type: "number", minimum: 0 }, "tighten-constraint"],
    ["exclusiveMinimum", { type: "number", minimum: 0 }, { type: "number", exclusiveMinimum: 0 }, "tighten-constraint"],
    ["minimum", { type: "number", exclusiveMinimum: 0 }, { type: "number", minimum: 0 }, "loosen-constraint"],
    ["maximum", { type: "number", maximum: 10 }, { type: "number", maximum: 5 }, "tighten-constraint"],
    ["maximum", { type: "number", maximum: 5 }, { type: "number", maximum: 10 }, "loosen-constraint"],
    ["exclusiveMaximum", { type: "number", maximum: 5 }, { type: "number", exclusiveMaximum: 5 }, "tighten-constraint"],
    ["maximum", { type: "number", maximum: 5 }, { type: "number" }, "loosen-constraint"],
    ["minLength", { type: "string" }, { type: "string", minLength: 1 }, "tighten-constraint"],
    ["minLength", { type: "string", minLength: 2 }, { type: "string", minLength: 1 }, "loosen-constraint"],
    ["maxLength", { type: "string", maxLength: 10 }, { type: "string", maxLength: 5 }, "tighten-constraint"],
    ["maxLength", { type: "string", maxLength: 5 }, { type: "string", maxLength: 10 }, "loosen-constraint"],
    ["minItems", { type: "array" }, { type: "array", minItems: 1 }, "tighten-constraint"],
    ["minItems", { type: "array", minItems: 1 }, { type: "array" }, "loosen-constraint"],
    ["maxItems", { type: "array", maxItems: 3 }, { type: "array", maxItems: 2 }, "tighten-constraint"],
    ["maxItems", { type: "array", maxItems: 3 }, { type: "array" }, "loosen-constraint"],
    ["uniqueItems", { type: "array" }, { type: "array", uniqueItems: true }, "tighten-constraint"],
    ["uniqueItems", { type: "array", uniqueItems: true }, { type: "array" }, "loosen-constraint"],
    ["minProperties", { type: "object" }, { type: "object", minProperties: 1 }, "tighten-constraint"],
    ["minProperties", { type: "object", minProperties: 1 }, { type: "object" }, "loosen-constraint"],
    ["maxProperties", { type: "object", maxProperties: 3 }, { type: "object", maxProperties: 1 }, "tighten-constraint"],
    ["maxProperties", { type: "object", maxProperties: 1 }, { type: "object", maxProperties: 3 }, "loosen-constraint"],
    ["multipleOf", { type: "number" }, { type: "number", multipleOf: 2 }, "tighten-constraint"],
    ["multipleOf", { type: "number", multipleOf: 2 }, { type: "number" }, "loosen-constraint"],
    ["multipleOf", { type: "number", multipleOf: 2 }, { type: "number", multipleOf: 4 }, "tighten-constraint"],
    ["multipleOf", { type: "number", multipleOf: 4 }, { type: "number", multipleOf: 2 }, "loosen-constraint"],
  ];

  it.each(cases)("%s: %j -> %j is %s", (keyword, a, b, rule) => {
    const c = only(diffSchemas(obj(a), obj(b)));
    expect(c).toMatchObject({
      pointer: "/x",
      rule,
      keyword,
      kind: rule === "tighten-constraint" ? "breaking" : "compatible",
    });
  });

  it("messages say what moved", () => {
    expect(only(diffSchemas(obj({ type: "number", minimum: 0 }), obj({ type: "number", minimum: 1 }))).message).toBe(
      "minimum raised from 0 to 1",
    );
    expect(
      only(diffSchemas(obj({ type: "string", maxLength: 10 }), obj({ type: "string", maxLength: 5 }))).message,
    ).toBe("maxLength lowered from 10 to 5");
  });
});

describe("additionalProperties", () => {
  const props = { x: { type: "string" } };
  it.each([
    ["absent -> false", undefined, false],
    ["true -> false", true, false],
    ["true -> a schema", true, { type: "string" }],
    ["a schema -> false", { type: "string" }, false],
  ])("close-additional-properties is breaking: %s", (_name, a, b) => {
    const old: Record<string, unknown> = { type: "object", properties: props };
    if (a !== undefined) old.additionalProperties = a;
    const c = only(diffSchemas(old, { type: "object", properties: props, additionalProperties: b }));
    expect(c).toMatchObject({ pointer: "", rule: "close-additional-properties", kind: "breaking" });
  });

  it.each([
    ["false -> absent", false, undefined],
    ["false -> a schema", false, { type: "string" }],
    ["a schema -> true", { type: "string" }, true],
  ])("open-additional-properties is compatible: %s", (_name, a, b) => {
    const next: Record<string, unknown> = { type: "object", properties: props };
    if (b !== undefined) next.additionalProperties = b;
    const c = only(diffSchemas({ type: "object", properties: props, additionalProperties: a }, next));
    expect(c).toMatchObject({ rule: "open-additional-properties", kind: "compatible" });
  });

  it("index signature value schemas are compared at /*", () => {
    const map = (v: unknown): Record<string, unknown> => ({ type: "object", additionalProperties: v });
    expect(only(diffSchemas(obj(map({ type: "integer" })), obj(map({ type: "number" }))))).toMatchObject({
      pointer: "/x/*",
      rule: "widen-type",
      kind: "compatible",
    });
    expect(only(diffSchemas(obj(map({ type: "number" })), obj(map({ type: "integer" }))))).toMatchObject({
      pointer: "/x/*",
      rule: "narrow-type",
      kind: "breaking",
    });
  });
});

describe("items", () => {
  it("compares array items at /*", () => {
    const list = (items: unknown): Record<string, unknown> => ({ type: "array", items });
    expect(
      only(diffSchemas(obj(list(obj({ type: "string" }))), obj(list(obj({ type: "string" }, false))))),
    ).toMatchObject({
      pointer: "/x/*/x",
      rule: "make-optional",
    });
  });

  it("compares tuple items by position", () => {
    const old = { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false };
    const next = { type: "array", items: [{ type: "string" }, { type: "integer" }], additionalItems: false };
    expect(rules(diffSchemas(old, next))).toEqual(["narrow-type@/1"]);
  });
});

describe("annotations", () => {
  it.each(["title", "description", "examples", "$comment", "default"])("a changed %s is compatible", (keyword) => {
    const value = keyword === "examples" ? ["a"] : "a";
    const other = keyword === "examples" ? ["b"] : "b";
    const c = only(diffSchemas(obj({ type: "string", [keyword]: value }), obj({ type: "string", [keyword]: other })));
    expect(c).toMatchObject({ pointer: "/x", rule: "annotation-change", kind: "compatible" });
  });

  it("x- extension keywords (like x-statebag) are annotations", () => {
    const c = only(
      diffSchemas({ type: "object", "x-statebag": { version: 1 } }, { type: "object", "x-statebag": { version: 2 } }),
    );
    expect(c).toMatchObject({ pointer: "", rule: "annotation-change", kind: "compatible" });
  });
});

describe("unknown keywords", () => {
  it("a change of an unknown keyword is breaking (unknown-keyword-change)", () => {
    const c = only(diffSchemas(obj({ type: "string", foo: 1 }), obj({ type: "string", foo: 2 })));
    expect(c).toMatchObject({ pointer: "/x", rule: "unknown-keyword-change", keyword: "foo", kind: "breaking" });
  });

  it("an unknown keyword that stays the same is no change", () => {
    expect(diffSchemas(obj({ type: "string", foo: { a: 1 } }), obj({ type: "string", foo: { a: 1 } }))).toEqual([]);
  });

  it("not, by meaning: adding one that excludes an allowed value is breaking, removing one loosens", () => {
    expect(only(diffSchemas(obj({ type: "string" }), obj({ type: "string", not: { const: "" } })))).toMatchObject({
      rule: "tighten-constraint",
      keyword: "not",
      kind: "breaking",
    });
    expect(only(diffSchemas(obj({ type: "string", not: { const: "" } }), obj({ type: "string" })))).toMatchObject({
      rule: "loosen-constraint",
      keyword: "not",
      kind: "compatible",
    });
    // patternProperties is analysed now (see compat/inclusion.test.ts): keys matching ^a that held any value must be strings.
    expect(
      only(
        diffSchemas(obj({ type: "object" }), obj({ type: "object", patternProperties: { "^a": { type: "string" } } })),
      ),
    ).toMatchObject({
      pointer: "/x/a",
      rule: "narrow-type",
      kind: "breaking",
    });
  });

  it("allOf: type/required in members apply to the parent; a changed member is diffed", () => {
    const a = { properties: { a: { type: "string" } } };
    const b = { required: ["a"] };
    expect(only(diffSchemas({ allOf: [a] }, { allOf: [a, b] }))).toMatchObject({
      pointer: "/a",
      rule: "make-required",
      kind: "breaking",
    });
    expect(only(diffSchemas({ allOf: [a, b] }, { allOf: [a] }))).toMatchObject({
      pointer: "/a",
      rule: "make-optional",
      kind: "compatible",
    });
    expect(rules(diffSchemas({ allOf: [a] }, { allOf: [{ properties: { a: { type: "integer" } } }] }))).toEqual([
      "narrow-type@/a",
    ]);
  });
});

describe("$ref", () => {
  it("follows local refs into definitions and reports at the value pointer", () => {
    const old = {
      type: "object",
      properties: { messages: { type: "array", items: { $ref: "#/definitions/Msg" } } },
      definitions: { Msg: { type: "object", properties: { role: { type: "string" } }, required: ["role"] } },
    };
    const next = {
      type: "object",
      properties: { messages: { type: "array", items: { $ref: "#/definitions/ChatMessage" } } },
      definitions: {
        ChatMessage: {
          type: "object",
          properties: { role: { type: "string", enum: ["user", "assistant"] } },
          required: ["role"],
        },
      },
    };
    const c = only(diffSchemas(old, next));
    expect(c).toMatchObject({ pointer: "/messages/*/role", rule: "add-enum", kind: "breaking" });
  });

  it("a renamed definition with the same content is no change", () => {
    const old = { properties: { a: { $ref: "#/definitions/A" } }, definitions: { A: { type: "string" } } };
    const next = { properties: { a: { $ref: "#/definitions/B" } }, definitions: { B: { type: "string" } } };
    expect(diffSchemas(old, next)).toEqual([]);
    expect(diffSchemas(old, { properties: { a: { type: "string" } } })).toEqual([]);
  });

  it("is cycle-safe on recursive types and still reports changes in them", () => {
    const tree = (v: unknown): Record<string, unknown> => ({
      $ref: "#/definitions/Node",
      definitions: {
        Node: {
          type: "object",
          properties: { v, children: { type: "array", items: { $ref: "#/definitions/Node" } } },
          required: ["v", "children"],
        },
      },
    });
    expect(diffSchemas(tree({ type: "string" }), tree({ type: "string" }))).toEqual([]);
    expect(rules(diffSchemas(tree({ type: ["string", "number"] }), tree({ type: "string" })))).toEqual([
      "narrow-type@/v",
    ]);
  });

  it("is cycle-safe on a recursive JSON-value union", () => {
    const json = {
      $ref: "#/definitions/Json",
      definitions: {
        Json: {
          anyOf: [
            { type: ["string", "number", "boolean", "null"] },
            { type: "array", items: { $ref: "#/definitions/Json" } },
            { type: "object", additionalProperties: { $ref: "#/definitions/Json" } },
          ],
        },
      },
    };
    expect(diffSchemas(json, structuredClone(json))).toEqual([]);
  });

  it("refs to other files are compared by target unless a resolver is given", () => {
    const slot = (ref: string): Record<string, unknown> => obj({ type: "array", items: { $ref: ref } });
    expect(
      diffSchemas(slot("../AIContent/AIContent.schema.json"), slot("../../../AIContent/AIContent.schema.json")),
    ).toEqual([]);
    expect(only(diffSchemas(slot("AIContent.schema.json"), slot("Annotation.schema.json")))).toMatchObject({
      pointer: "/x/*",
      rule: "ref-change",
      kind: "breaking",
    });
    const docs: Record<string, Record<string, unknown>> = {
      "a.json": { type: "string" },
      "b.json": { type: "string", maxLength: 3 },
    };
    const resolveExternalRef = (ref: string) => (docs[ref] ? { root: docs[ref], base: ref } : undefined);
    expect(only(diffSchemas(slot("a.json"), slot("b.json"), { resolveExternalRef }))).toMatchObject({
      pointer: "/x/*",
      rule: "tighten-constraint",
      keyword: "maxLength",
    });
  });
});

describe("a realistic provider state evolving", () => {
  const v1 = {
    type: "object",
    properties: {
      $type: { type: "string", const: "acme.Summary" },
      summary: { type: "string" },
      messages: { type: "array", items: { $ref: "#/definitions/ChatMessage" } },
    },
    required: ["$type", "messages", "summary"],
    additionalProperties: false,
    definitions: {
      ChatMessage: {
        type: "object",
        properties: {
          role: { type: "string" },
          createdAt: { type: "string", format: "date-time" },
          contents: { type: "array", items: { type: "object" } },
        },
        required: ["role", "contents"],
        additionalProperties: false,
      },
    },
  };

  it("lists every breaking and compatible change", () => {
    const next = structuredClone(v1) as typeof v1 & { properties: Record<string, unknown> };
    next.properties.turns = { type: "integer", minimum: 0 };
    next.required.push("turns");
    next.properties.note = { type: "string" };
    const msg = next.definitions.ChatMessage as { properties: Record<string, unknown>; required: string[] };
    delete msg.properties.createdAt;
    msg.required = ["role"];
    expect(rules(diffSchemas(v1, next))).toEqual([
      "add-optional-property@/note",
      "add-required@/turns",
      "make-optional@/messages/*/contents",
      "remove-property@/messages/*/createdAt",
    ]);
  });
});

describe("family slots (x-statebag.slots)", () => {
  const withSlot = (contents: unknown, family = "AIContent", slots = true): Record<string, unknown> => ({
    type: "object",
    properties: {
      messages: {
        type: "array",
        items: { type: "object", properties: { contents: { type: "array", items: contents } } },
      },
    },
    "x-statebag": { slots: slots ? [{ family, path: ["messages", "*", "contents", "*"] }] : [] },
  });
  const opaque = { type: "object", properties: { $type: { type: "string" } }, required: ["$type"] };
  const members = (...names: string[]) => ({
    type: "object",
    discriminator: { propertyName: "$type" },
    oneOf: names.map((n) => ({ $ref: `../AIContent/${n}.schema.json` })),
  });

  it("a slot of the same family is unchanged whatever its representation or members", () => {
    expect(diffSchemas(withSlot(opaque), withSlot(members("text", "data")))).toEqual([]);
    expect(diffSchemas(withSlot(members("text", "data")), withSlot(members("text")))).toEqual([]);
    expect(diffSchemas(withSlot(members("text")), withSlot({ $ref: "../AIContent.family.schema.json" }))).toEqual([]);
  });

  it("change-slot-family is breaking", () => {
    const changes = diffSchemas(withSlot(opaque), withSlot(opaque, "AIAnnotation"));
    expect(rules(changes)).toEqual(["annotation-change@", "change-slot-family@/messages/*/contents/*"]); // x-statebag changed too
    const c = only(changes.filter((x) => x.kind === "breaking"));
    expect(c).toMatchObject({ pointer: "/messages/*/contents/*", rule: "change-slot-family", kind: "breaking" });
  });

  it("a position that becomes a slot is compared with what a slot accepts (a tagged object)", () => {
    const notAnnotation = (changes: Change[]) => changes.filter((x) => x.rule !== "annotation-change");
    const changes = notAnnotation(
      diffSchemas(withSlot({ type: "object" }, "AIContent", false), withSlot(members("text"))),
    );
    // Required now, and a string now: the open object accepted any value under "$type" before.
    expect(rules(changes)).toEqual([
      "add-required@/messages/*/contents/*/$type",
      "narrow-type@/messages/*/contents/*/$type",
    ]);
    expect(kinds(changes)).toEqual(["breaking"]);
    expect(notAnnotation(diffSchemas(withSlot(opaque, "AIContent", false), withSlot(members("text"))))).toEqual([]);
  });

  it("slots can be passed in instead of read from x-statebag", () => {
    const slots = [{ family: "AIContent", path: ["messages", "*", "contents", "*"] }];
    const a = withSlot(opaque, "AIContent", false);
    const b = withSlot(members("text"), "AIContent", false);
    expect(diffSchemas(a, b, { oldSlots: slots, newSlots: slots })).toEqual([]);
  });
});
