import { afterAll, describe, expect, it } from "vitest";
import { cli, tempDir } from "./helpers.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const v1 = {
  $schema: "http://json-schema.org/draft-07/schema#",
  type: "object",
  properties: { $type: { const: "acme.Notes" }, text: { type: "string" } },
  required: ["$type", "text"],
  additionalProperties: false,
};

describe("statebag diff", () => {
  it("exits 0 for compatible changes", async () => {
    const v2 = { ...v1, properties: { ...v1.properties, tags: { type: "array", items: { type: "string" } } } };
    const r = await cli(["diff", tmp.file("v1.json", v1), tmp.file("v2.json", v2)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/compatible\s+\/tags/);
  });

  it("exits 1 for breaking changes and lists them (also as JSON)", async () => {
    const v2 = {
      ...v1,
      properties: { ...v1.properties, lines: { type: "array" } },
      required: ["$type", "text", "lines"],
    };
    const old = tmp.file("a.json", v1);
    const next = tmp.file("b.json", v2);
    const r = await cli(["diff", old, next]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/BREAKING\s+\/lines\s+required property added/);
    expect(r.stdout).toContain("bump the type's version and add a migration");
    const json = (await cli(["diff", old, next, "--json"])).json();
    expect(json.ok).toBe(false);
    expect(json.breaking).toBe(1);
    expect(json.changes[0]).toMatchObject({ kind: "breaking", pointer: "/lines" });
    // The witness: a document v1 accepts and v2 rejects (it lacks the new required property).
    expect(json.verdict).toBe("breaking");
    expect(json.changes[0].witness).toEqual({ document: { $type: "acme.Notes", text: "" }, source: "constructed" });
    expect(r.stdout).toContain('witness (old accepts, new rejects): {"$type":"acme.Notes","text":""}');
  });

  it("takes --seed for the sampled documents and rejects one that is not an integer", async () => {
    const v2 = { ...v1, properties: { ...v1.properties, tags: { type: "array", items: { type: "string" } } } };
    const old = tmp.file("s1.json", v1);
    const next = tmp.file("s2.json", v2);
    const json = (await cli(["diff", old, next, "--seed", "9", "--json"])).json();
    expect(json).toMatchObject({ ok: true, verdict: "compatible", sampling: { seed: 9 } });
    const bad = await cli(["diff", old, next, "--seed", "x\u0007"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--seed must be an integer");
    expect(bad.stderr).not.toContain("\u0007");
  });

  it("compares the repository's frozen history with the current schemas", async () => {
    // RollingSummaryState v2 is the current version: its frozen schema and the current one agree.
    const r = await cli([
      "diff",
      "schemas/history/ProviderState/RollingSummaryState/v2.schema.json",
      "schemas/ProviderState/RollingSummaryState.schema.json",
    ]);
    expect(r.code).toBe(0);
    // v1 -> current adds the required droppedMessageCount: breaking (hence version 2 and its migration).
    const v1 = await cli([
      "diff",
      "schemas/history/ProviderState/InMemoryChatHistoryState/v1.schema.json",
      "schemas/ProviderState/InMemoryChatHistoryState.schema.json",
    ]);
    expect(v1.code).toBe(1);
    expect(v1.stdout).toContain("/droppedMessageCount");
  });

  it("exits 2 when a file is missing or not a schema", async () => {
    const missing = await cli(["diff", "/nonexistent.json", tmp.file("x.json", v1)]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("/nonexistent.json");
    const notSchema = await cli(["diff", tmp.file("arr.json", "[1]"), tmp.file("y.json", v1)]);
    expect(notSchema.code).toBe(2);
  });
});
