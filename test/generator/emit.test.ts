import { describe, expect, it } from "vitest";
import { sortKeys, stableJson } from "../../generator/emit.js";

describe("stableJson", () => {
  it("sorts keys at every depth and keeps a property named __proto__ as data", () => {
    const schema = JSON.parse('{"required":["__proto__"],"properties":{"z":{"type":"number"},"__proto__":{"type":"string"}}}');
    const sorted = sortKeys(schema) as { properties: object };
    expect(Object.getPrototypeOf(sorted.properties)).toBe(Object.prototype);
    expect(Object.keys(sorted.properties)).toEqual(["__proto__", "z"]);
    expect(JSON.parse(stableJson(schema))).toEqual(schema);
    expect(stableJson(schema)).toBe(JSON.stringify(JSON.parse(stableJson(schema)), null, 2) + "\n");
  });
});
