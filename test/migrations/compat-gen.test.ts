/**
 * The compatibility check wired into `npm run gen` / `npm run gen -- --check`, end to end on a
 * throw-away project: a new type needs a golden fixture (`--scaffold-fixtures` writes one); a
 * breaking change without a version bump fails `--check` with the fix; bump + migration + fixture
 * passes; an edited frozen schema fails.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Migration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { validateValue } from "../../src/runtime/validation/validate.js";
import { readTree, removeTempProjects, runtimeSources, tempProject, writeFile } from "../generator/helpers.js";
import { REPO } from "./helpers.js";

afterAll(removeTempProjects);

/** The runtime files a project needs to declare types and migrations (no built-in message types). */
const RUNTIME = [
  "core/tagged.ts",
  "registry/registry-types.ts",
  "registry/migrations.ts",
  "core/errors.ts",
  "registry/formats.ts",
];
const runtimeFiles = runtimeSources(RUNTIME);

const gen = (root: string, ...args: string[]) => {
  const r = spawnSync(path.join(REPO, "node_modules/.bin/tsx"), [path.join(REPO, "generator/cli.ts"), ...args], {
    cwd: root,
    encoding: "utf8",
  });
  return { code: r.status, out: r.stdout + r.stderr };
};

const state = (body: string, version = 1, extra = "") => `import type { ProviderState } from "./runtime/core/tagged.js";
${extra}
/** A model-written summary of a conversation. */
export interface SummaryState extends ProviderState<"acme.Summary", ${version}> {
${body}
}
`;

describe("npm run gen runs the compatibility check", () => {
  it("new type -> fixture needed; breaking change without bump -> --check fails with the fix; bump + migration + fixture -> passes", async () => {
    const root = tempProject({ ...runtimeFiles, "src/state.ts": state("  summary: string;") }, { runtime: false });

    // 1. A new type has no golden fixture yet.
    const first = gen(root);
    expect(first.code).toBe(1);
    expect(first.out).toContain(
      "acme.Summary: (root): version 1 has no golden fixture (test/fixtures/acme.Summary/v1*.json) (rule: missing-fixture)",
    );
    expect(first.out).toContain("--scaffold-fixtures");
    const scaffolded = gen(root, "--scaffold-fixtures");
    expect(scaffolded.out).toContain("scaffolded test/fixtures/acme.Summary/v1.json");
    // A placeholder is no evidence: marked as unedited, it fails until a person replaces it.
    expect(JSON.parse(fs.readFileSync(path.join(root, "test/fixtures/acme.Summary/v1.json"), "utf8"))).toEqual({
      $unedited:
        'placeholder written by --scaffold-fixtures: replace this value with one your code really stored as "acme.Summary" version 1, then delete this key',
      $type: "acme.Summary",
      summary: "summary",
    });
    expect(scaffolded.code).toBe(1);
    expect(scaffolded.out).toContain(
      'acme.Summary: (root): golden fixture test/fixtures/acme.Summary/v1.json is still the placeholder --scaffold-fixtures wrote, so it proves nothing about stored data (rule: unedited-fixture). Fix: replace it with a realistic value of "acme.Summary" exactly as your code stored it at version 1',
    );
    expect(scaffolded.out).not.toContain("invalid-fixture"); // one message about it, not also "unexpected property"
    expect(gen(root, "--check").code).toBe(1);
    writeFile(
      root,
      "test/fixtures/acme.Summary/v1.json",
      JSON.stringify({ $type: "acme.Summary", summary: "Ada asked about the weather in Lisbon." }, null, 2),
    );
    expect(gen(root, "--check")).toMatchObject({ code: 0 });

    // 2. A breaking change (a new required property) without a version bump.
    writeFile(root, "src/state.ts", state("  summary: string;\n  lines: string[];"));
    const before = readTree(root);
    const check = gen(root, "--check");
    expect(check.code).toBe(1);
    expect(check.out).toContain("stale: schemas/ProviderState/acme.Summary.schema.json");
    expect(check.out).toMatch(
      /acme\.Summary: \/lines: .*\(rule: add-required\)\. Fix: bump acme\.Summary to version 2 and add a migration 1 -> 2 \(defineMigration\(\{ type: "acme\.Summary", from: 1, to: 2, up \}\)\)/,
    );
    expect(readTree(root)).toEqual(before); // --check writes nothing
    // `gen` reports the same problem and writes nothing: no file of a breaking change lands.
    const written = gen(root);
    expect(written.code).toBe(1);
    expect(written.out).toContain("(rule: add-required). Fix: bump acme.Summary to version 2");
    expect(written.out).not.toMatch(/^wrote /m);
    expect(readTree(root)).toEqual(before);

    // 3. Bumped, but no migration and no v2 fixture yet.
    writeFile(root, "src/state.ts", state("  summary: string;\n  lines: string[];", 2));
    const bumped = gen(root);
    expect(bumped.code).toBe(1);
    expect(bumped.out).toContain(
      "current version 2 has no migration from version 1: sessions stored at version 1 can not be read (rule: missing-migration). Fix: add a migration 1 -> 2",
    );
    expect(bumped.out).toContain("version 2 has no golden fixture");

    // 4. The migration next to the type, and a v2 fixture: passes.
    writeFile(
      root,
      "src/state.ts",
      state(
        "  summary: string;\n  lines: string[];",
        2,
        `import { defineMigration } from "./runtime/registry/migrations.js";
/** v2 keeps the summary as lines too. */
export const summaryMigrations = [defineMigration({ type: "acme.Summary", from: 1, to: 2, up: (v: { summary: string }) => ({ ...v, lines: [v.summary] }) })];`,
      ),
    );
    writeFile(
      root,
      "test/fixtures/acme.Summary/v2.json",
      JSON.stringify({ $type: "acme.Summary", $version: 2, summary: "Lisbon: rain.", lines: ["Lisbon: rain."] }),
    );
    const fixed = gen(root);
    expect(fixed.out).toContain(
      "schemas compatible: 1 types, 1 migration(s), every version has a golden fixture; 2 fixture(s) load through the migrations and validate at the latest version.",
    );
    expect(fixed.code).toBe(0);
    expect(gen(root, "--check").code).toBe(0);

    // The generated registry carries the migration: the v1 fixture loads as a valid v2.
    const mod = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: TypeDefinition[];
      generatedMigrations: Migration[];
    };
    const registry = new TypeRegistry({ types: mod.generatedTypes, migrations: mod.generatedMigrations });
    const v1 = JSON.parse(fs.readFileSync(path.join(root, "test/fixtures/acme.Summary/v1.json"), "utf8"));
    const upgraded = registry.upgrade(v1);
    expect(upgraded).toEqual({
      $type: "acme.Summary",
      $version: 2,
      summary: "Ada asked about the weather in Lisbon.",
      lines: ["Ada asked about the weather in Lisbon."],
    });
    expect(validateValue(upgraded, { registry }).ok).toBe(true);

    // 5. Editing a frozen schema is caught by its hash.
    const v1File = path.join(root, "schemas/history/ProviderState/acme.Summary/v1.schema.json");
    fs.writeFileSync(v1File, fs.readFileSync(v1File, "utf8").replace('"summary"', '"summary2"'));
    const edited = gen(root, "--check");
    expect(edited.code).toBe(1);
    expect(edited.out).toContain(
      "(rule: frozen-edited). Fix: restore it (git checkout -- schemas/history/ProviderState/acme.Summary/v1.schema.json)",
    );
  }, 120_000);
});
