/**
 * Stored versions as TypeScript (src/generated/versions.ts): the schema keywords the generator
 * writes translate faithfully, and nothing is ever narrower than the schema.
 */
import { describe, expect, it } from "vitest";
import { versionTypeDeclaration } from "../../generator/version-types.js";
import { checkStoredDocuments } from "../../generator/compat/stored-data.js";
import { defineMigration } from "../../src/runtime/registry/migrations.js";
import { REPO } from "./helpers.js";
import path from "node:path";

const declare = (schema: unknown) => versionTypeDeclaration({ name: "T_v1", summary: '"acme.T" version 1.', schema });

describe("versionTypeDeclaration", () => {
  it("objects: required and optional properties, descriptions as doc comments, odd keys quoted", () => {
    const out = declare({
      type: "object",
      additionalProperties: false,
      required: ["$type", "a"],
      properties: {
        $type: { type: "string", const: "acme.T" },
        a: { type: "string", description: "The a.\nSecond line." },
        "b-c": { type: "integer" },
      },
    });
    expect(out).toEqual({
      code: [
        '/** "acme.T" version 1. */',
        "export interface T_v1 {",
        '  $type: "acme.T";',
        "  /**",
        "   * The a.",
        "   * Second line.",
        "   */",
        "  a: string;",
        '  "b-c"?: number;',
        "}",
      ].join("\n"),
      usesTaggedValue: false,
    });
  });

  it("unions, enums, tuples, nullable items and maps; family slots become TaggedValue", () => {
    const { code, usesTaggedValue } = declare({
      type: "object",
      additionalProperties: false,
      required: ["mode", "pair", "list", "map", "slot"],
      properties: {
        mode: { enum: ["append", "replace"] },
        pair: { type: "array", items: [{ type: "string" }, { type: "number" }], additionalItems: false, minItems: 2 },
        list: { type: "array", items: { type: ["string", "null"] } },
        map: { type: "object", additionalProperties: { type: "number" } },
        slot: { type: "array", items: { $ref: "../AIContent.family.schema.json" } },
        any: {},
      },
    });
    expect(usesTaggedValue).toBe(true);
    expect(code).toContain('  mode: "append" | "replace";');
    expect(code).toContain("  pair: [string, number];");
    expect(code).toContain("  list: (string | null)[];");
    expect(code).toContain("  map: {\n    [key: string]: number;\n  };");
    expect(code).toContain("  slot: TaggedValue[];");
    expect(code).toContain("  any?: unknown;");
  });

  it("an open object keeps its named properties and an index signature wide enough for them", () => {
    const { code } = declare({
      type: "object",
      required: ["a"],
      properties: { a: { type: "string" } },
      additionalProperties: { type: "number" },
    });
    expect(code).toContain("  a: string;\n  [key: string]: unknown;");
  });

  it("recursive local definitions become named types", () => {
    const { code } = declare({
      type: "object",
      additionalProperties: false,
      required: ["tree"],
      properties: { tree: { $ref: "#/definitions/Node" } },
      definitions: {
        Node: {
          type: "object",
          additionalProperties: false,
          required: ["children"],
          properties: { children: { type: "array", items: { $ref: "#/definitions/Node" } } },
        },
      },
    });
    expect(code).toContain("  tree: T_v1_Node;");
    expect(code).toContain("export interface T_v1_Node {\n  children: T_v1_Node[];\n}");
  });
});

describe("checkStoredDocuments (any documents, e.g. sampled ones)", () => {
  const schemasDir = path.join(REPO, "schemas");
  const migrations = [
    defineMigration({
      type: "RollingSummaryState",
      from: 1,
      to: 2,
      up: ({ turns, ...rest }: { turns: number }) => ({ ...rest, turnCount: turns }),
    }),
  ];

  it("loads documents through the migrations and names a failing one by its label", () => {
    const good = { $type: "RollingSummaryState", summary: "", recentMessages: [], turns: 3 };
    const bad = { $type: "RollingSummaryState", summary: "", recentMessages: [], turns: -1 };
    const failures = checkStoredDocuments(
      [
        { label: "sample #1 of RollingSummaryState v1", document: good, fromVersion: 1 },
        { label: "sample #2 of RollingSummaryState v1", document: bad, fromVersion: 1 },
      ],
      { schemasDir, migrations },
    );
    expect(failures).toHaveLength(1);
    // turns: -1 was never a valid v1: the stored data is at fault, not the migration that carried it on.
    expect(failures[0]).toMatchObject({ type: "RollingSummaryState", rule: "stored-data", pointer: "/turns" });
    expect(failures[0]!.step).toBeUndefined();
    expect(failures[0]!.message).toBe(
      `sample #2 of RollingSummaryState v1 is invalid stored data, not a migration bug: it does not match "RollingSummaryState" v1 (${path.join(schemasDir, "history/ProviderState/RollingSummaryState/v1.schema.json")}) at /turns: must be >= 0`,
    );
    expect(good.turns).toBe(3); // documents are never modified
  });

  it("a valid stored value the migration turns invalid is the migration's fault", () => {
    const losing = [
      defineMigration({
        type: "RollingSummaryState",
        from: 1,
        to: 2,
        up: ({ turns, ...rest }: { turns: number }) => ({ ...rest, turnCount: -turns }),
      }),
    ];
    const failures = checkStoredDocuments(
      [
        {
          label: "fixture y",
          document: { $type: "RollingSummaryState", summary: "", recentMessages: [], turns: 3 },
          fromVersion: 1,
        },
      ],
      { schemasDir, migrations: losing },
    );
    expect(failures.map((f) => [f.pointer, f.step?.from, f.message])).toEqual([
      [
        "/turnCount",
        1,
        'fixture y (stored at version 1) migrated through "RollingSummaryState" v1 -> v2 does not match "RollingSummaryState" v2 at /turnCount: must be >= 0',
      ],
    ]);
    expect(failures[0]!.fix).toContain("defineMigration<RollingSummaryState_v1, RollingSummaryState_v2>");
  });

  it("a document filed under another version than it says is reported, not migrated", () => {
    const failures = checkStoredDocuments(
      [
        {
          label: "fixture x",
          document: { $type: "RollingSummaryState", $version: 2, summary: "", recentMessages: [], turnCount: 1 },
          fromVersion: 1,
        },
      ],
      { schemasDir, migrations },
    );
    expect(failures.map((f) => [f.pointer, f.message])).toEqual([
      ["/$version", "fixture x says $version 2 but is filed as version 1"],
    ]);
  });
});
