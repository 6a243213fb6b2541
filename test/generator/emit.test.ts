import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { sortKeys, stableJson } from "../../generator/emit.js";
import { generate } from "../../generator/index.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { readFile, removeTempProjects, tempProject } from "./helpers.js";

describe("stableJson", () => {
  it("sorts keys at every depth and keeps a property named __proto__ as data", () => {
    const schema = JSON.parse(
      '{"required":["__proto__"],"properties":{"z":{"type":"number"},"__proto__":{"type":"string"}}}',
    );
    const sorted = sortKeys(schema) as { properties: object };
    expect(Object.getPrototypeOf(sorted.properties)).toBe(Object.prototype);
    expect(Object.keys(sorted.properties)).toEqual(["__proto__", "z"]);
    expect(JSON.parse(stableJson(schema))).toEqual(schema);
    expect(stableJson(schema)).toBe(JSON.stringify(JSON.parse(stableJson(schema)), null, 2) + "\n");
  });
});

describe("registry module: a property named __proto__", () => {
  afterAll(removeTempProjects);

  it("stays an own property of the emitted schema, not its prototype", async () => {
    const root = tempProject({
      "src/runtime/odd.ts": `import type { ProviderState } from "./core/tagged.js";

/** A state with a property JavaScript treats specially in object literals. */
export interface OddState extends ProviderState<"test.Odd", 1> {
  "__proto__": { deep: string };
  plain: number;
}
`,
    });
    const result = await generate({ cwd: root, cache: false });
    expect(result.errors.map((e) => e.message)).toEqual([]);
    const registry = readFile(root, "src/generated/registry.ts");
    expect(registry).toContain('["__proto__"]: {');
    expect(registry).not.toMatch(/^\s*"__proto__": /m);
    const { generatedTypes } = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: readonly TypeDefinition[];
    };
    const properties = generatedTypes.find((t) => t.$type === "test.Odd")!.schema.properties as Record<string, unknown>;
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    expect(Object.hasOwn(properties, "__proto__")).toBe(true);
    expect(Object.keys(properties)).toEqual(["$type", "$version", "__proto__", "plain"]);
    expect(Object.getOwnPropertyDescriptor(properties, "__proto__")!.value).toMatchObject({
      type: "object",
      properties: { deep: { type: "string" } },
    });
  });
});
