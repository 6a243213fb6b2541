/**
 * Issue #22: validation problems carry their finding as typed data (`details`), next to the
 * sentences: limits with `limit`/`actual`, schema problems with the JSON Schema keyword and what it
 * expected, versions, families, session properties, JSON syntax positions.
 */
import { describe, expect, it } from "vitest";
import type { ProblemDetails, ValidationProblem } from "../../src/index.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { JsonParseError, checkWritableJson, parseJson } from "../../src/runtime/json/safe-json.js";
import { validateSession, validateValue } from "../../src/runtime/validation/validate.js";

function registry(): TypeRegistry {
  const r = new TypeRegistry();
  r.register({
    $type: "acme.Profile",
    version: 2,
    schema: {
      type: "object",
      properties: {
        name: { type: "string", minLength: 2, maxLength: 5 },
        age: { type: "integer", minimum: 0, maximum: 150 },
        score: { type: "number", exclusiveMaximum: 10 },
        mode: { enum: ["fast", "slow"] },
        kind: { const: "person" },
        email: { type: "string", format: "date-time" },
        code: { type: "string", pattern: "^[A-Z]+$" },
        tags: { type: "array", items: { type: "string" }, maxItems: 2, uniqueItems: true },
        extra: { type: "object", maxProperties: 1 },
        either: { anyOf: [{ type: "string" }, { type: "number" }, { const: null }] },
        step: { type: "number", multipleOf: 5 },
      },
      required: ["name"],
    },
  });
  r.register({
    $type: "acme.Note",
    family: "AIContent",
    schema: { type: "object", properties: { text: { type: "string" } } },
  });
  r.register({
    $type: "acme.Box",
    schema: { type: "object", properties: { inner: { type: "object" } } },
    slots: [{ path: ["inner"], family: "ProviderState" }],
  });
  return r;
}

const reg = registry();

function problemsOf(
  value: Record<string, unknown>,
  options: { strict?: boolean; maxNesting?: number } = {},
): ValidationProblem[] {
  return validateValue({ $type: "acme.Profile", $version: 2, name: "Ann", ...value }, { registry: reg, ...options })
    .problems;
}

/** The details of the one problem at `pointer`. */
function detailsAt(problems: readonly ValidationProblem[], pointer: string): ProblemDetails | undefined {
  const at = problems.filter((p) => p.pointer === pointer);
  expect(at, `one problem at ${pointer}: ${JSON.stringify(problems)}`).toHaveLength(1);
  return at[0].details;
}

describe("schema problems: the keyword and its data", () => {
  it("required: the missing property", () => {
    const problems = validateValue({ $type: "acme.Profile", $version: 2 }, { registry: reg }).problems;
    expect(detailsAt(problems, "/name")).toEqual({ kind: "schema", keyword: "required", property: "name" });
  });

  it("additionalProperties: the unknown property and the declared ones", () => {
    const d = detailsAt(problemsOf({ nickname: "A" }), "/nickname");
    expect(d).toMatchObject({ kind: "schema", keyword: "additionalProperties", property: "nickname" });
    if (d?.kind === "schema" && d.keyword === "additionalProperties")
      expect(d.allowed).toEqual(expect.arrayContaining(["name", "age", "mode"]));
    else expect.unreachable();
  });

  it("type: the allowed type names and what was found", () => {
    expect(detailsAt(problemsOf({ name: 5 }), "/name")).toEqual({
      kind: "schema",
      keyword: "type",
      types: ["string"],
      actualType: "number",
    });
    expect(detailsAt(problemsOf({ tags: {} }), "/tags")).toEqual({
      kind: "schema",
      keyword: "type",
      types: ["array"],
      actualType: "object",
    });
  });

  it("enum and const: the allowed values", () => {
    expect(detailsAt(problemsOf({ mode: "medium" }), "/mode")).toEqual({
      kind: "schema",
      keyword: "enum",
      values: ["fast", "slow"],
    });
    expect(detailsAt(problemsOf({ kind: "robot" }), "/kind")).toEqual({
      kind: "schema",
      keyword: "const",
      value: "person",
    });
  });

  it("format and pattern", () => {
    expect(detailsAt(problemsOf({ email: "nope" }), "/email")).toEqual({
      kind: "schema",
      keyword: "format",
      format: "date-time",
    });
    expect(detailsAt(problemsOf({ code: "abc" }), "/code")).toEqual({
      kind: "schema",
      keyword: "pattern",
      pattern: "^[A-Z]+$",
    });
  });

  it("numeric bounds: comparison, limit, actual", () => {
    expect(detailsAt(problemsOf({ age: -1 }), "/age")).toEqual({
      kind: "schema",
      keyword: "minimum",
      comparison: ">=",
      limit: 0,
      actual: -1,
    });
    expect(detailsAt(problemsOf({ age: 200 }), "/age")).toEqual({
      kind: "schema",
      keyword: "maximum",
      comparison: "<=",
      limit: 150,
      actual: 200,
    });
    expect(detailsAt(problemsOf({ score: 10 }), "/score")).toEqual({
      kind: "schema",
      keyword: "exclusiveMaximum",
      comparison: "<",
      limit: 10,
      actual: 10,
    });
  });

  it("lengths, items and properties: limit and actual", () => {
    expect(detailsAt(problemsOf({ name: "A" }), "/name")).toEqual({
      kind: "schema",
      keyword: "minLength",
      limit: 2,
      actual: 1,
    });
    // Code points, as JSON Schema counts: six emoji are 6, not 12.
    expect(detailsAt(problemsOf({ name: "😀😀😀😀😀😀" }), "/name")).toEqual({
      kind: "schema",
      keyword: "maxLength",
      limit: 5,
      actual: 6,
    });
    expect(detailsAt(problemsOf({ tags: ["a", "b", "c"] }), "/tags")).toEqual({
      kind: "schema",
      keyword: "maxItems",
      limit: 2,
      actual: 3,
    });
    expect(detailsAt(problemsOf({ extra: { a: 1, b: 2 } }), "/extra")).toEqual({
      kind: "schema",
      keyword: "maxProperties",
      limit: 1,
      actual: 2,
    });
  });

  it("anyOf of plain alternatives: the types and values accepted together", () => {
    expect(detailsAt(problemsOf({ either: true }), "/either")).toEqual({
      kind: "schema",
      keyword: "anyOf",
      types: ["string", "number"],
      values: [null],
    });
  });

  it("other keywords: ajv's params", () => {
    expect(detailsAt(problemsOf({ step: 7 }), "/step")).toEqual({
      kind: "schema",
      keyword: "multipleOf",
      params: { multipleOf: 5 },
    });
    expect(detailsAt(problemsOf({ tags: ["a", "a"] }), "/tags")).toEqual({
      kind: "schema",
      keyword: "uniqueItems",
      params: { i: expect.any(Number), j: expect.any(Number) },
    });
  });

  it("messages stay as they were", () => {
    const [p] = problemsOf({ mode: "medium" });
    expect(p.message).toBe('/mode must be one of "fast", "slow", found string "medium"');
    expect(p.expected).toBe('one of "fast", "slow"');
  });

  it("a switch on kind and keyword narrows the type", () => {
    const describe = (d: ProblemDetails | undefined): string => {
      switch (d?.kind) {
        case "schema":
          switch (d.keyword) {
            case "required":
              return `missing ${d.property}`;
            case "minLength":
            case "maxLength":
              return `${d.actual} vs ${d.limit}`;
            default:
              return d.keyword;
          }
        case "limit":
          return `${d.option} ${d.actual} > ${d.limit}`;
        default:
          return "other";
      }
    };
    expect(problemsOf({ name: "A" }).map((p) => describe(p.details))).toEqual(["1 vs 2"]);
  });

  it("input strings in details are bounded", () => {
    const huge = "k".repeat(100_000);
    const problems = problemsOf({ [huge]: 1 });
    const d = detailsAt(problems, problems[0].pointer);
    if (d?.kind !== "schema" || d.keyword !== "additionalProperties") return expect.unreachable();
    expect(d.property.length).toBeLessThanOrEqual(256);
  });
});

describe("walker problems", () => {
  it("unknown type (strict): the family expected", () => {
    const problems = validateSession(
      { id: "s", stateBag: { p: { $type: "acme.Nope" } } },
      { registry: reg, strict: true },
    ).problems;
    expect(problems[0].code).toBe("unknown-type");
    expect(problems[0].details).toEqual({ kind: "family", family: "ProviderState" });
  });

  it("newer version (strict): $version and expectedVersion", () => {
    const problems = problemsOf({ $version: 7 }, { strict: true });
    expect(problems[0].code).toBe("newer-version");
    expect(problems[0].details).toEqual({ kind: "version", $version: 7, expectedVersion: 2 });
  });

  it("older version without a migration: $version and expectedVersion", () => {
    const problems = problemsOf({ $version: 1 });
    expect(problems[0].code).toBe("old-version");
    expect(problems[0].details).toEqual({ kind: "version", $version: 1, expectedVersion: 2 });
  });

  it("wrong family: the expected family and the value's", () => {
    const problems = validateSession({ id: "s", stateBag: { p: { $type: "acme.Note" } } }, { registry: reg }).problems;
    expect(problems[0].code).toBe("wrong-family");
    expect(problems[0].details).toEqual({ kind: "family", family: "ProviderState", actualFamily: "AIContent" });
  });

  it("not tagged, missing $type, invalid $version: the family expected", () => {
    const problems = validateSession(
      { id: "s", stateBag: { a: 5, b: {}, c: { $type: "acme.Profile", $version: 0 } } },
      { registry: reg },
    ).problems;
    expect(problems.map((p) => [p.code, p.details])).toEqual([
      ["not-tagged", { kind: "family", family: "ProviderState" }],
      ["missing-type", { kind: "family", family: "ProviderState" }],
      ["invalid-version", { kind: "family", family: "ProviderState" }],
    ]);
  });

  it("tagged values nested too deep: a maxNesting limit", () => {
    let v: Record<string, unknown> = { $type: "acme.Box" };
    for (let i = 0; i < 5; i++) v = { $type: "acme.Box", inner: v };
    const problems = validateValue(v, { registry: reg, maxNesting: 3 }).problems;
    expect(problems[0].code).toBe("too-deep");
    expect(problems[0].details).toEqual({ kind: "limit", option: "maxNesting", limit: 3, actual: 4 });
  });

  it("session properties", () => {
    const problems = validateSession(
      { id: "", kind: "local", conversationId: "c", extra: 1, stateBag: [] },
      { registry: reg },
    ).problems;
    expect(problems.map((p) => p.details)).toEqual([
      { kind: "session", property: "id", reason: "invalid" },
      { kind: "session", property: "extra", reason: "unknown-property" },
      { kind: "session", property: "conversationId", reason: "conflict" },
      { kind: "session", property: "stateBag", reason: "invalid" },
    ]);
    expect(validateSession({}, { registry: reg }).problems.map((p) => p.details)).toEqual([
      { kind: "session", property: "id", reason: "missing" },
      { kind: "session", property: "stateBag", reason: "missing" },
    ]);
    expect(validateSession(null, { registry: reg }).problems[0].details).toEqual({
      kind: "session",
      reason: "not-an-object",
    });
  });
});

describe("JSON limits: the error carries the details its problem gets", () => {
  const caught = (f: () => unknown): JsonParseError => {
    try {
      f();
    } catch (err) {
      if (err instanceof JsonParseError) return err;
      throw err;
    }
    throw new Error("no error");
  };

  it("size, depth and keys: option, limit, actual", () => {
    expect(caught(() => parseJson('"' + "x".repeat(100) + '"', { maxBytes: 50 })).problemDetails).toEqual({
      kind: "limit",
      option: "maxBytes",
      limit: 50,
      actual: 102,
    });
    expect(caught(() => parseJson("[[[[1]]]]", { maxDepth: 3 })).problemDetails).toEqual({
      kind: "limit",
      option: "maxDepth",
      limit: 3,
      actual: 4,
    });
    expect(caught(() => parseJson('{"a":1,"b":2,"c":3}', { maxKeys: 2 })).problemDetails).toEqual({
      kind: "limit",
      option: "maxKeys",
      limit: 2,
      actual: 3,
    });
    expect(caught(() => checkWritableJson({ a: { b: { c: {} } } }, { maxDepth: 2 })).problemDetails).toEqual({
      kind: "limit",
      option: "maxDepth",
      limit: 2,
      actual: 3,
    });
  });

  it("syntax errors and duplicate keys: where in the text", () => {
    expect(caught(() => parseJson('{"a": 1,\n "b": }')).problemDetails).toEqual({
      kind: "syntax",
      line: 2,
      column: 7,
      position: 15,
    });
    expect(caught(() => parseJson('{"a": 1, "a": 2}')).problemDetails).toMatchObject({
      kind: "duplicate-key",
      key: "a",
      line: 1,
    });
  });
});

describe("JSON problems of a load carry the same details", () => {
  it("a document over the key limit fails to load with a problem holding the limit's details", async () => {
    const { deserializeSession } = await import("../../src/runtime/persistence/serialization.js");
    const text = '{"format":"statebag.session","formatVersion":1,"session":{"id":"s","stateBag":{},"a":1,"b":2}}';
    let error: unknown;
    try {
      deserializeSession(text, { limits: { maxKeys: 3 } });
    } catch (e) {
      error = e;
    }
    const problems = (error as { problems?: { details?: unknown }[] }).problems;
    expect(problems?.[0]?.details).toMatchObject({ kind: "limit", option: "maxKeys", limit: 3 });
  });
});

describe("the sentence without its place", () => {
  it("schema and session problems carry `reason`, the message is their place and it", () => {
    const reg = registry();
    const problems = [
      ...validateValue({ $type: "acme.Profile", $version: 2, age: "old", zzz: 1 }, { registry: reg }).problems,
      ...validateSession({ id: "s", kind: "local", stateBag: {}, messages: "none" }, {
        registry: reg,
        format: false,
      } as never).problems,
    ];
    const placed = problems.filter((problem) => problem.reason !== undefined);
    expect(placed.map((problem) => problem.reason)).toEqual(
      expect.arrayContaining([
        'must be integer, found string "old"',
        'unknown property "zzz" in "acme.Profile" v2',
        'required property "name" is missing',
      ]),
    );
    for (const problem of placed) expect(problem.message.endsWith(problem.reason as string)).toBe(true);
    for (const problem of placed) expect(problem.reason?.startsWith(problem.pointer)).toBe(false);
  });
});
