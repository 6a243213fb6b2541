/**
 * Generator errors: every problem in one run, each as `file:line:col error <code>: what. hint: fix`,
 * and nothing written when there is any. Also the CLI's exit codes.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatError } from "../../generator/errors.js";
import { generate } from "../../generator/index.js";
import type { GenerateResult } from "../../generator/report.js";
import { REPO, removeTempProjects, tempProject } from "./helpers.js";

afterAll(removeTempProjects);

const BAD = `import type { ProviderState, Tagged } from "./core/tagged.js";
import type { AIContent } from "./core/messages.js";
const T = "x";
export interface DupA extends ProviderState<"dup", 1> { a: string }
export interface DupB extends ProviderState<"dup", 1> { b: string }
export interface NotLit extends ProviderState<typeof T, 1> { a: string }
interface Hidden extends ProviderState<"hidden", 1> { a: string }
export interface NoVersion extends ProviderState<"nover"> { a: string }
export interface FracVersion extends ProviderState<"frac", 1.5> { a: string }
export interface ZeroVersion extends ProviderState<"zero", 0> { a: string }
export interface Fam extends Tagged<string, "fam", 1> { a: string }
export type BadId = ProviderState<"has space", 1> & { a: string };
class Klass { x = 1 }
export interface NotJson extends ProviderState<"notjson", 1> {
  when: Date;
  fn: () => void;
  k: Klass;
  m: Map<string, number>;
  s: Set<string>;
  sym: symbol;
  big: bigint;
  u: undefined;
  method(): void;
  nested: { deep: Date[] };
  ok?: string;
}
export interface Rec { content: AIContent; next?: Rec }
export interface RecState extends ProviderState<"recstate", 1> { head: Rec }
export interface Mixed extends ProviderState<"mixed", 1> {
  c: AIContent | null;
}
export interface Fmt extends ProviderState<"fmt", 1> {
  /** @format email */
  e: string;
}
export interface Fine extends ProviderState<"fine", 1> { a: string }
`;

describe("generator errors", () => {
  let root: string;
  let result: GenerateResult;
  let lines: string[];

  beforeAll(async () => {
    root = tempProject({ "src/runtime/bad.ts": BAD });
    result = await generate({ cwd: root, cache: false });
    lines = result.errors.map(formatError);
  });

  const line = (code: string, fragment: string) =>
    lines.find((l) => l.includes(` error ${code}: `) && l.includes(fragment));

  it("collects every error, fails, and writes nothing", () => {
    expect(result.ok).toBe(false);
    expect(result.exitCode).toBe(1);
    expect(result.files).toEqual([]);
    expect(fs.existsSync(path.join(root, "src/generated"))).toBe(false);
    expect(fs.existsSync(path.join(root, "schemas"))).toBe(false);
    expect(new Set(result.errors.map((e) => e.code))).toEqual(
      new Set([
        "duplicate-type",
        "type-not-literal",
        "not-exported",
        "bad-version",
        "family-not-literal",
        "bad-type-id",
        "not-json",
        "recursive-slot",
        "mixed-slot",
      ]),
    );
    // Every line has the documented shape.
    for (const l of lines) expect(l).toMatch(/^src\/runtime\/bad\.ts:\d+:\d+ error [a-z-]+: .+\. hint: .+/);
  });

  it("duplicate $type names both places", () => {
    expect(line("duplicate-type", '"dup"')).toBe(
      'src/runtime/bad.ts:5:18 error duplicate-type: $type "dup" is declared twice: DupA (src/runtime/bad.ts:4) and DupB (src/runtime/bad.ts:5). hint: every $type is unique across the registry; prefix yours with a namespace ("acme.Summary")',
    );
  });

  it("$type, family and version must be literals; version an integer >= 1", () => {
    expect(line("type-not-literal", "NotLit")).toMatch(/^src\/runtime\/bad\.ts:6:47 /);
    expect(line("bad-version", "NoVersion has no version")).toMatch(/^src\/runtime\/bad\.ts:8:/);
    expect(line("bad-version", "got 1.5")).toMatch(/^src\/runtime\/bad\.ts:9:60 /);
    expect(line("bad-version", "got 0")).toMatch(/^src\/runtime\/bad\.ts:10:60 /);
    expect(line("family-not-literal", "Fam")).toMatch(/^src\/runtime\/bad\.ts:11:37 /);
    expect(line("bad-type-id", '"has space"')).toMatch(/^src\/runtime\/bad\.ts:12:/);
  });

  it("a marked type must be exported", () => {
    expect(line("not-exported", "Hidden")).toMatch(/^src\/runtime\/bad\.ts:7:11 .*hint: add `export`/);
  });

  it("rejects what JSON cannot hold, at the offending property", () => {
    const notJson = lines.filter((l) => l.includes("error not-json"));
    const at = (prop: string) => notJson.find((l) => l.includes(`NotJson.${prop} is`));
    expect(at("when")).toMatch(/^src\/runtime\/bad\.ts:15:3 .*is a Date.*@format date-time/);
    expect(at("fn")).toMatch(/:16:3 .*is a function/);
    expect(at("k")).toMatch(/:17:3 .*an instance of class Klass/);
    expect(at("m")).toMatch(/:18:3 .*is a Map/);
    expect(at("s")).toMatch(/:19:3 .*is a Set/);
    expect(at("sym")).toMatch(/:20:3 .*is a symbol/);
    expect(at("big")).toMatch(/:21:3 .*is a bigint/);
    expect(at("u")).toMatch(/:22:3 .*is only undefined/);
    expect(at("method")).toMatch(/:23:3 .*is a method/);
    expect(at("nested.deep[]")).toMatch(/:24:13 .*is a Date/);
    expect(notJson).toHaveLength(10); // `ok?: string` is fine
  });

  it("recursive types holding slots and mixed slots are errors; a format statebag asserts is not", () => {
    expect(line("recursive-slot", "recursive type Rec")).toMatch(/^src\/runtime\/bad\.ts:28:18 /);
    expect(lines.filter((l) => l.includes("recursive-slot"))).toHaveLength(1);
    expect(line("mixed-slot", "Mixed: c mixes")).toMatch(/^src\/runtime\/bad\.ts:29:18 /);
    // `@format email` is asserted (ajv-formats' set, issue #34): no finding about it.
    expect(lines.filter((l) => l.includes('"email"'))).toEqual([]);
  });
});

describe("CLI", () => {
  const cli = (args: string[], cwd: string) =>
    spawnSync(path.join(REPO, "node_modules/.bin/tsx"), [path.join(REPO, "generator/cli.ts"), ...args], {
      cwd,
      encoding: "utf8",
    });

  it("exits 1 and prints the errors; exits 2 on usage errors", () => {
    const root = tempProject({
      "src/runtime/bad.ts": `import type { ProviderState } from "./core/tagged.js";\ninterface Hidden extends ProviderState<"h", 1> { a: string }\n`,
    });
    const bad = cli(["--no-cache"], root);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("src/runtime/bad.ts:2:11 error not-exported: tagged type Hidden is not exported.");

    const unknown = cli(["--bogus"], root);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--bogus'");

    const missing = cli(["--project", "nope/tsconfig.json"], root);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("error usage: --project nope/tsconfig.json: no such file");
  });

  it("--check exits 1 naming stale files, 0 when current", async () => {
    const root = tempProject({
      "src/runtime/s.ts": `import type { ProviderState } from "./core/tagged.js";\nexport interface S extends ProviderState<"s", 1> { a: string }\n`,
    });
    expect((await generate({ cwd: root })).ok).toBe(true);
    // (The compatibility check, on by default in the CLI, has its own tests: test/migrations/compat-gen.test.ts.)
    const current = cli(["--check", "--no-compat"], root);
    expect(current.status).toBe(0);
    expect(current.stdout).toContain("generated files are current");
    fs.appendFileSync(path.join(root, "src/generated/registry.ts"), "// edited\n");
    const stale = cli(["--check", "--no-compat"], root);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain("stale: src/generated/registry.ts");
  });
});
