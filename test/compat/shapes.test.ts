/**
 * Issue #26: every schema shape ajv compiles keeps its witnesses and its sampling (root `$ref` with
 * `definitions` / `$defs`, nested `$id`s and anchors, recursive refs); the witness search is bounded
 * by work, not depth, and builds objects of a given size; sampling and budgets are always reported.
 */
import { Ajv } from "ajv";
import { afterAll, describe, expect, it } from "vitest";
import { assessCompatibility } from "../../generator/compat/assess.js";
import { bundleSchema, compileBundled, normalizeIds } from "../../generator/compat/bundle.js";
import { formatDiffReport } from "../../generator/compat/report.js";
import type { JsonSchema } from "../../generator/compat/schema.js";
import { witnessText } from "../../generator/compat/witness.js";
import { cli, tempDir } from "../cli/helpers.js";

/** ajv on the schema as written (its own id handling, no bundling): the independent check of a witness. */
function plainAjv(schema: unknown): (doc: unknown) => boolean {
  const validate = new Ajv({ strict: false, validateSchema: false, logger: false }).compile(schema as object);
  return (doc) => validate(doc) === true;
}

const T = (max: number) => ({
  type: "object",
  properties: { n: { type: "integer", maximum: max }, s: { type: "string" } },
  required: ["n"],
  additionalProperties: false,
});

/** Each shape at `maximum: m` somewhere inside. */
const SHAPES: Record<string, (m: number) => Record<string, unknown>> = {
  "root $ref with definitions (typescript-json-schema)": (m) => ({
    $schema: "http://json-schema.org/draft-07/schema#",
    $ref: "#/definitions/T",
    definitions: { T: T(m) },
  }),
  "root $ref with $defs": (m) => ({ $ref: "#/$defs/T", $defs: { T: T(m) } }),
  "nested $id (refs relative to it)": (m) => ({
    $id: "http://example.test/root.json",
    type: "object",
    properties: { a: { $ref: "item.json" } },
    required: ["a"],
    definitions: {
      I: {
        $id: "item.json",
        type: "object",
        properties: { v: { $ref: "#/definitions/N" } },
        required: ["v"],
        definitions: { N: { type: "integer", maximum: m } },
      },
    },
  }),
  "draft-07 plain-name anchor ($id: #name)": (m) => ({
    type: "object",
    properties: { a: { $ref: "#num" } },
    required: ["a"],
    definitions: { N: { $id: "#num", type: "integer", maximum: m } },
  }),
  "recursive $ref through definitions": (m) => ({
    $ref: "#/definitions/Node",
    definitions: {
      Node: {
        type: "object",
        properties: { v: { type: "integer", maximum: m }, next: { $ref: "#/definitions/Node" } },
        required: ["v"],
      },
    },
  }),
  "recursive $ref to the root (#)": (m) => ({
    type: "object",
    properties: { v: { type: "integer", maximum: m }, next: { $ref: "#" } },
    required: ["v"],
  }),
};

describe("schema shapes: witnesses and sampling (issue #26)", () => {
  for (const [name, shape] of Object.entries(SHAPES)) {
    it(`${name}: a breaking pair has a witness ajv confirms; a compatible pair is sampled`, () => {
      const [old, next] = [shape(10), shape(5)];
      const breaking = assessCompatibility(old, next, { samples: 30 });
      expect(breaking.verdict).toBe("breaking");
      const witnessed = breaking.changes.filter((c) => c.witness);
      expect(witnessed.length).toBeGreaterThan(0);
      for (const c of witnessed) {
        expect(plainAjv(old)(c.witness!.document)).toBe(true);
        expect(plainAjv(next)(c.witness!.document)).toBe(false);
      }
      const compatible = assessCompatibility(next, old, { samples: 30, seed: 2 });
      expect(compatible.verdict).toBe("compatible");
      expect(compatible.sampling).toMatchObject({ drawn: 30, accepted: 30 });
      expect(compatible.sampling!.warning).toBeUndefined();
    });
  }

  it("the bundle keeps definitions next to a $ref and drops nested ids once refs are pointers", () => {
    const bundled = bundleSchema(SHAPES["nested $id (refs relative to it)"]!(3), undefined) as Record<string, unknown>;
    expect(JSON.stringify(bundled)).not.toContain('"$id"');
    expect(JSON.stringify(bundled)).toContain('"$ref":"#/definitions/I"');
    expect(JSON.stringify(bundled)).toContain('"$ref":"#/definitions/I/definitions/N"');
    expect(
      bundleSchema({ $ref: "#/definitions/A", type: "string", definitions: { A: { type: "integer" } } }, undefined),
    ).toEqual({
      $ref: "#/definitions/A",
      definitions: { A: { type: "integer" } },
    });
    const compiled = compileBundled(bundled);
    expect("validate" in compiled && compiled.validate({ a: { v: 3 } })).toBe(true);
    expect("validate" in compiled && compiled.validate({ a: { v: 4 } })).toBe(false);
  });

  it("property names that look like keywords ($id, $ref) are data, not ids", () => {
    const schema = {
      type: "object",
      properties: { $id: { type: "string" }, $ref: { type: "integer" } },
      required: ["$id", "$ref"],
    };
    const bundled = bundleSchema(schema, undefined);
    expect(bundled).toEqual(schema);
    expect(normalizeIds(schema)).toBe(schema);
  });
});

describe("the witness search: bounded by work, not depth (issue #26)", () => {
  /** 240 properties (or `width`), and a break 19 arrays deep. */
  const wide = (max: number, width = 240): JsonSchema => {
    let leaf: Record<string, unknown> = {
      type: "object",
      properties: { n: { type: "integer", maximum: max } },
      required: ["n"],
    };
    for (let i = 0; i < 19; i++) leaf = { type: "array", items: leaf, minItems: 1 };
    const properties: Record<string, unknown> = { deep: leaf };
    for (let i = 0; i < width; i++) {
      properties[`p${i}`] =
        i % 3 === 0
          ? { type: "string" }
          : i % 3 === 1
            ? {
                type: "object",
                properties: { x: { type: "integer" }, y: { type: "array", items: { type: "string" } } },
                required: ["x"],
              }
            : { type: "array", items: { type: "object", properties: { z: { type: "boolean" } } } };
    }
    return { type: "object", properties, required: ["p0", "p1", "p2", "deep"], additionalProperties: false };
  };

  it("finds a break 19 arrays deep in a 240-property schema", () => {
    const [old, next] = [wide(10), wide(5)];
    const a = assessCompatibility(old, next, { samples: 0 });
    expect(a.verdict).toBe("breaking");
    const doc = a.changes[0]!.witness!.document as Record<string, unknown>;
    expect(plainAjv(old)(doc)).toBe(true);
    expect(plainAjv(next)(doc)).toBe(false);
    let deep: unknown = doc.deep;
    for (let i = 0; i < 19; i++) deep = (deep as unknown[])[0];
    expect(deep).toEqual({ n: 10 });
  });

  it("a search that runs out of work is undecided and names the budget (text and JSON)", () => {
    const a = assessCompatibility(wide(10, 12), wide(5, 12), { samples: 0, witnessWork: 10 });
    expect(a.verdict).toBe("undecided");
    expect(a.changes[0]).toMatchObject({ kind: "undecided", budget: "witness-work" });
    expect(a.changes[0]!.message).toContain("work budget");
    const report = formatDiffReport(a.changes);
    expect(report).toContain("budget ran out: witness work");
    expect(report).toContain("warning: the witness work budget ran out");
    expect(JSON.parse(JSON.stringify(a.changes[0]))).toMatchObject({ budget: "witness-work" });
  });

  const map = (max: number, extra: Record<string, unknown> = {}) => ({
    type: "object",
    additionalProperties: { type: "integer" },
    maxProperties: max,
    ...extra,
  });
  const cases: [string, Record<string, unknown>][] = [
    ["an open map", {}],
    ["keys constrained by propertyNames", { propertyNames: { pattern: "^k[0-9]$" } }],
    [
      "a closed object with patternProperties and a required property",
      {
        additionalProperties: false,
        patternProperties: { "^x_[a-z]$": { type: "string" } },
        properties: { a: { type: "null" } },
        required: ["a"],
      },
    ],
  ];
  for (const [name, extra] of cases) {
    it(`maxProperties 10 -> 5: builds an object of 10 properties (${name})`, () => {
      const [old, next] = [map(10, extra), map(5, extra)];
      const a = assessCompatibility(old, next, { samples: 0 });
      expect(a.verdict).toBe("breaking");
      const doc = a.changes.find((c) => c.witness)!.witness!.document as Record<string, unknown>;
      expect(Object.keys(doc).length).toBeGreaterThan(5);
      expect(plainAjv(old)(doc)).toBe(true);
      expect(plainAjv(next)(doc)).toBe(false);
    });
  }

  it("minProperties raised: the old minimum, filled with fresh keys", () => {
    const a = assessCompatibility(
      { type: "object", minProperties: 3 },
      { type: "object", minProperties: 4 },
      { samples: 0 },
    );
    expect(a.verdict).toBe("breaking");
    expect(Object.keys(a.changes[0]!.witness!.document as object)).toHaveLength(3);
  });
});

describe("sampling is always reported (issue #26)", () => {
  const old = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
  const next = {
    type: "object",
    properties: { a: { type: "string" }, b: { type: "integer" } },
    additionalProperties: false,
  };

  it("says how many documents were drawn and accepted", () => {
    const a = assessCompatibility(old, next, { samples: 25 });
    expect(a.sampling).toMatchObject({ drawn: 25, accepted: 25 });
    expect(formatDiffReport(a.changes, { sampling: a.sampling })).toContain(
      "25 documents drawn from the old schema (seed 1), all accepted by the new one.",
    );
  });

  it("0 drawn is a warning in text and JSON (time budget spent, schema that can not be sampled)", () => {
    const late = assessCompatibility(old, next, { samples: 25, timeBudgetMs: -1 });
    expect(late.sampling).toMatchObject({
      drawn: 0,
      accepted: 0,
      budget: "sampling",
      warning: expect.stringContaining("time budget"),
    });
    const text = formatDiffReport(late.changes, { sampling: late.sampling });
    expect(text).toContain("Sampling: no document drawn from the old schema");
    expect(text).toMatch(/^warning: no document was sampled: the sampling time budget/m);
  });
});

describe("witness text: bounded and escaped (issue #26)", () => {
  it("prints the whole document up to ~500 characters, then its total length", () => {
    expect(witnessText({ a: 1 })).toBe('{"a":1}');
    const long = witnessText({ s: "x".repeat(2000) });
    expect(long.length).toBeLessThan(540);
    expect(long.endsWith("... (2008 characters)")).toBe(true);
    expect(witnessText({ s: "\u202e\u001b" })).toBe('{"s":"\\u202e\\u001b"}');
  });
});

describe("statebag diff: the common shape end to end (issue #26)", () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());
  const shape = SHAPES["root $ref with definitions (typescript-json-schema)"]!;

  it("prints the witness in text, and drawn/accepted in JSON", async () => {
    const old = tmp.file("old.json", shape(10));
    const next = tmp.file("new.json", shape(5));
    const r = await cli(["diff", old, next]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/BREAKING\s+\/n\s+maximum lowered/);
    expect(r.stdout).toContain('witness (old accepts, new rejects): {"n":10}');
    const json = (await cli(["diff", next, old, "--json"])).json();
    expect(json).toMatchObject({ verdict: "compatible", sampling: { drawn: 300, accepted: 300 }, warnings: [] });
  });

  it("cuts a long witness at ~500 characters with its length, escaped", async () => {
    const old = tmp.file("long-old.json", {
      type: "object",
      properties: { s: { type: "string", minLength: 1000, pattern: "^\u001b" } },
      required: ["s"],
    });
    const next = tmp.file("long-new.json", {
      type: "object",
      properties: { s: { type: "string", minLength: 1000, maxLength: 1000, pattern: "^\u001b" } },
      required: ["s"],
    });
    const r = await cli(["diff", old, next]);
    const line = r.stdout.split("\n").find((l) => l.includes("witness ("));
    expect(line).toBeDefined();
    expect(line).toMatch(/\.\.\. \(\d{4} characters\)$/);
    expect(line!.length).toBeLessThan(600);
    expect(line).not.toContain("\u001b");
  });
});
