/**
 * `@format` tags end to end (issue #34, item 10): a format statebag asserts (ajv-formats' set) is
 * checked by the generated ajv validator, by the generated fused check and by the registry's
 * reporting path, with the same answer as ajv-formats itself; a format the runtime does not know is
 * a `gen` warning (never silence) and is left out of the validators, kept in the schema file.
 * (None of the values below tells statebag's stricter `date-time` from ajv-formats' apart.)
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Ajv } from "ajv";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generate } from "../../generator/index.js";
import { formatResult, type GenerateResult } from "../../generator/report.js";
import { FORMATS } from "../../src/runtime/registry/formats.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { fusedContext, type FusedContext } from "../../src/runtime/checks/fused-runtime.js";
import { readFile, removeTempProjects, tempProject } from "./helpers.js";

afterAll(removeTempProjects);

const STATE = `import type { ProviderState } from "./core/tagged.js";
export interface Contact extends ProviderState<"test.Contact", 1> {
  /** @format email */
  email: string;
  /** @format uri */
  homepage?: string;
  /** @format uuid */
  id?: string;
  /** @format date */
  born?: string;
  /** @format ipv4 */
  ip?: string;
  /** @format duration */
  ttl?: string;
  /** @format int32 */
  count?: number;
  /** @format acme-color */
  color?: string;
  /** @format password */
  secret?: string;
}
`;

interface Fused {
  checkTagged(context: FusedContext, value: unknown, family: string, depth: number, nesting: number): boolean;
}

describe("formats in generated code", () => {
  let root: string;
  let result: GenerateResult;
  let contact: TypeDefinition;
  let fused: Fused;
  const limits = { maxDepth: 64, maxKeys: 1000, maxNesting: 16, saving: false };

  beforeAll(async () => {
    root = tempProject({ "src/runtime/contact.ts": STATE });
    result = await generate({ cwd: root, cache: false });
    expect(result.errors).toEqual([]);
    const registry = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: readonly TypeDefinition[];
    };
    contact = registry.generatedTypes.find((t) => t.$type === "test.Contact")!;
    fused = (await import(pathToFileURL(path.join(root, "src/generated/fused-check.ts")).href)) as Fused;
  }, 60_000);

  it("an unknown format is a warning naming it; the run succeeds and the schema file keeps it", () => {
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.code)).toEqual(["unknown-format"]);
    expect(result.warnings[0]!.message).toContain('"acme-color"');
    const printed = formatResult(result, false);
    expect(printed[0]).toMatch(/^src\/runtime\/contact\.ts:\d+:\d+ warning unknown-format: .*"acme-color".* hint: /);
    const file = JSON.parse(readFile(root, "schemas/ProviderState/test.Contact.schema.json"));
    expect(file.properties.color.format).toBe("acme-color");
    expect(JSON.stringify(contact.schema)).not.toContain("acme-color");
  });

  it("a cached run says the warning again (the cache keeps it), and --check does too", async () => {
    const first = await generate({ cwd: root });
    const cached = await generate({ cwd: root });
    expect(cached.cacheHit).toBe(true);
    expect(cached.warnings).toEqual(first.warnings);
    expect(cached.warnings.map((w) => w.code)).toEqual(["unknown-format"]);
    const check = await generate({ cwd: root, check: true });
    expect(check.exitCode).toBe(0);
    expect(formatResult(check, true)[0]).toContain("warning unknown-format");
  }, 60_000);

  // The reference: ajv with ajv-formats' own definitions (the full set), on the schema as generated.
  const reference = new Ajv({ strict: false, formats: { ...fullFormats, "acme-color": true } });

  const base = { $type: "test.Contact", email: "a@example.com" };
  const cases: [string, Record<string, unknown>][] = [
    ["valid", {}],
    ["bad email", { email: "not an email" }],
    ["email without a domain dot", { email: "a@b" }],
    ["relative uri", { homepage: "/a/b" }],
    ["absolute uri", { homepage: "https://example.com/x?y=1#z" }],
    ["uuid", { id: "3f1c2a4e-1111-4222-8333-944455556666" }],
    ["short uuid", { id: "3f1c2a4e-1111-4222-8333-94445555666" }],
    ["date", { born: "2024-02-29" }],
    ["impossible date", { born: "2023-02-29" }],
    ["ipv4", { ip: "10.0.0.1" }],
    ["ipv4 out of range", { ip: "256.1.1.1" }],
    ["duration", { ttl: "PT5M" }],
    ["empty duration", { ttl: "P" }],
    ["int32", { count: 2147483647 }],
    ["past int32", { count: 2147483648 }],
    ["unknown format: anything", { color: "not a color" }],
    ["password: anything", { secret: "" }],
  ];

  it.each(cases)("%s: validator, fused check and reporting path agree with ajv-formats", (_name, extra) => {
    const value = { ...base, ...extra };
    const expected = reference.validate(
      { ...JSON.parse(readFile(root, "schemas/ProviderState/test.Contact.schema.json")), $id: undefined },
      value,
    );
    expect(contact.validate(value)).toBe(expected);
    // The fused check may say no where the long path says yes (it only costs time), never yes where it says no.
    const quick = fused.checkTagged(fusedContext(limits)!, value, "ProviderState", 1, 0);
    if (!expected) expect(quick).toBe(false);
    else expect(quick).toBe(true);
    // The reporting path (registry ajv, every error) uses the same table.
    const report = new Ajv({ strict: false, allErrors: true, formats: FORMATS });
    expect(report.validate(contact.schema, value)).toBe(expected);
  });
});
