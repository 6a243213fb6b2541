import { describe, expect, it } from "vitest";
import { bundleSchema, compileBundled } from "../../generator/compat/bundle.js";
import type { JsonSchema } from "../../generator/compat/schema.js";
import { sampleDocuments } from "../../generator/compat/sampling.js";

const schema = {
  type: "object",
  properties: {
    role: { enum: ["user", "assistant"] },
    turns: { type: "integer", minimum: 0, maximum: 9 },
    at: { type: "string", format: "date-time" },
    tags: { type: "array", items: { $ref: "#/definitions/Tag" }, maxItems: 3 },
  },
  required: ["role", "turns"],
  additionalProperties: false,
  definitions: { Tag: { type: "string", pattern: "^[a-z]{1,8}$" } },
};

function validator(s: unknown) {
  const compiled = compileBundled(s as JsonSchema);
  if (!("validate" in compiled)) throw new Error(compiled.error);
  return compiled.validate;
}

describe("sampleDocuments", () => {
  it("draws documents valid under the schema, reproducibly from the seed", () => {
    const a = sampleDocuments(schema, { seed: 7, count: 40, timeBudgetMs: 60_000 });
    expect(a.documents).toHaveLength(40);
    expect(a).toMatchObject({ seed: 7, timedOut: false });
    const validate = validator(schema);
    for (const doc of a.documents) expect(validate(doc), JSON.stringify(doc)).toBe(true);
    expect(sampleDocuments(schema, { seed: 7, count: 40, timeBudgetMs: 60_000 }).documents).toEqual(a.documents);
    expect(sampleDocuments(schema, { seed: 8, count: 40, timeBudgetMs: 60_000 }).documents).not.toEqual(a.documents);
  });

  it("stops at the time budget and says so", () => {
    const r = sampleDocuments(schema, { seed: 1, count: 50, timeBudgetMs: -1 });
    expect(r).toMatchObject({ timedOut: true, documents: [], drawn: 0 });
  });

  it("follows refs to other documents through the resolver; unresolvable refs accept any value", () => {
    const docs: Record<string, JsonSchema> = { "tag.json": { type: "string", const: "fixed" } };
    const withRef = {
      type: "object",
      properties: { tag: { $ref: "tag.json" }, slot: { $ref: "missing.json" } },
      required: ["tag"],
    };
    const r = sampleDocuments(withRef, {
      seed: 3,
      count: 10,
      timeBudgetMs: 60_000,
      resolveExternalRef: (ref) => (docs[ref] ? { root: docs[ref]!, base: ref } : undefined),
    });
    expect(r.documents.length).toBe(10);
    for (const doc of r.documents) expect((doc as { tag: string }).tag).toBe("fixed");
  });

  it("reports a schema that can not be compiled instead of throwing", () => {
    const r = sampleDocuments({ type: "string", pattern: "(" }, { seed: 1, count: 5, timeBudgetMs: 1000 });
    expect(r.documents).toEqual([]);
    expect(r.error).toContain("can not be compiled");
  });
});

describe("bundleSchema", () => {
  it("inlines other documents under definitions, rewriting their own local refs", () => {
    const other = {
      $id: "Other.schema.json",
      definitions: { Name: { type: "string", minLength: 2 } },
      type: "object",
      properties: { name: { $ref: "#/definitions/Name" } },
    };
    const root = {
      type: "object",
      properties: { other: { $ref: "Other.schema.json" }, name: { $ref: "Other.schema.json#/definitions/Name" } },
    };
    const bundled = bundleSchema(root, "root.json", (ref) =>
      ref === "Other.schema.json" ? { root: other, base: ref } : undefined,
    );
    const validate = validator(bundled);
    expect(validate({ other: { name: "ab" }, name: "cd" })).toBe(true);
    expect(validate({ other: { name: "a" } })).toBe(false);
    expect(validate({ name: "a" })).toBe(false);
    expect(JSON.stringify(bundled)).not.toContain("Other.schema.json");
  });

  it("leaves data keywords alone and turns unresolvable refs into an open schema", () => {
    const bundled = bundleSchema(
      { properties: { a: { const: { $ref: "x.json" } }, b: { $ref: "nowhere.json" } } },
      undefined,
    );
    expect(bundled).toEqual({ properties: { a: { const: { $ref: "x.json" } }, b: {} } });
  });
});
