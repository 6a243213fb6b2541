/**
 * Evolving a provider state type in a project, as a user would: v1 with a provider, then v2 with a
 * migration. Each mistake the README's walkthrough could leave behind must fail `tsc` (run here
 * in-process with the TypeScript compiler API) or `gen --check`, with the documented message; the
 * correct evolution loads stored v1 state and works on its second turn.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cacheDir } from "../../generator/cache.js";
import type { CompatFailure } from "../../generator/compat-run.js";
import { generate } from "../../generator/index.js";
import { formatResult } from "../../generator/report.js";
import { ProviderSessionState, StateVersionError, type StateDescriptor } from "../../src/runtime/core/state-bag.js";
import type { Migration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { REPO, readTree, removeTempProjects, runtimeSources, tempProject, typeErrors, writeFile } from "./helpers.js";

afterAll(removeTempProjects);

const RUNTIME = runtimeSources([
  "core/tagged.ts",
  "core/state-bag.ts",
  "registry/migrations.ts",
  "registry/registry-types.ts",
  "registry/formats.ts",
  "checks/fused-runtime.ts",
]);

const NOTES_V1 = `import type { ProviderState } from "./runtime/core/tagged.js";

export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  notes: string[];
}
`;

const NOTES_V2 = (migration: string) => `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/registry/migrations.js";
import type { NotesState_v1, NotesState_v2 } from "./generated/versions.js";

export interface NotesState extends ProviderState<"acme.NotesState", 2> {
  notes: { text: string; pinned: boolean }[];
}

${migration}
`;

const TYPED_MIGRATION = `export const notesV1toV2 = defineMigration<NotesState_v1, NotesState_v2>({
  type: "acme.NotesState",
  from: 1,
  to: 2,
  up: (v) => ({ notes: v.notes.map((text) => ({ text, pinned: false })) }),
});`;

/** The provider as the README writes it: the descriptor carries the version. */
const PROVIDER = (initial: string) => `import { ProviderSessionState } from "./runtime/core/state-bag.js";
import { NotesStateType } from "./generated/descriptors.js";

export const notesState = new ProviderSessionState("acme.notes", NotesStateType, { initial: () => (${initial}) });
`;

function project(files: Record<string, string>): string {
  return tempProject({ ...RUNTIME, ...files }, { runtime: false });
}

async function gen(root: string, options: { check?: boolean } = {}) {
  return generate({ cwd: root, cache: false, compat: true, ...options });
}

function v1Project(): string {
  const root = project({
    "src/notes.ts": NOTES_V1,
    "src/provider.ts": PROVIDER(`{ $type: "acme.NotesState", notes: [] }`),
    "test/fixtures/acme.NotesState/v1.json": JSON.stringify(
      { $type: "acme.NotesState", notes: ["buy oat milk", "call Ada about Lisbon"] },
      null,
      2,
    ),
  });
  return root;
}

function rules(failures: readonly CompatFailure[] | undefined): string[] {
  return (failures ?? []).map((f) => `${f.type} ${f.rule}`);
}

describe("evolving a provider state type", () => {
  it("v1: gen emits a descriptor typed from the state type; the project compiles and gen --check passes", async () => {
    const root = v1Project();
    const first = await gen(root);
    expect(first.errors).toEqual([]);
    expect(rules(first.compat?.failures)).toEqual([]);
    expect(first.exitCode).toBe(0);
    const descriptors = fs.readFileSync(path.join(root, "src/generated/descriptors.ts"), "utf8");
    expect(descriptors).toContain('import type { NotesState } from "../notes.js";');
    expect(descriptors).toContain(
      'export const NotesStateType: StateDescriptor<NotesState> = { $type: "acme.NotesState", version: 1 };',
    );
    expect(await typeErrors(root)).toEqual([]);
    expect((await gen(root, { check: true })).exitCode).toBe(0);
  }, 60_000);

  it("v2 done as the walkthrough says: compiles, gen --check loads the v1 fixture, and the provider reads migrated state on its second turn", async () => {
    const root = v1Project();
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V2(TYPED_MIGRATION));
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", $version: 2, notes: [] }`));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify(
        { $type: "acme.NotesState", $version: 2, notes: [{ text: "buy oat milk", pinned: true }] },
        null,
        2,
      ),
    );
    const evolved = await gen(root);
    expect(rules(evolved.compat?.failures)).toEqual([]);
    expect(evolved.compat?.loaded).toEqual([
      "test/fixtures/acme.NotesState/v1.json",
      "test/fixtures/acme.NotesState/v2.json",
    ]);
    expect(evolved.exitCode).toBe(0);
    const versions = fs.readFileSync(path.join(root, "src/generated/versions.ts"), "utf8");
    expect(versions).toContain(
      'export interface NotesState_v1 {\n  $type: "acme.NotesState";\n  $version?: 1;\n  notes: string[];\n}',
    );
    expect(versions).toContain(
      'export interface NotesState_v2 {\n  $type: "acme.NotesState";\n  $version: 2;\n  notes: {\n    pinned: boolean;\n    text: string;\n  }[];\n}',
    );
    expect(await typeErrors(root)).toEqual([]);
    expect((await gen(root, { check: true })).exitCode).toBe(0);

    // The generated registry and descriptor, used by the runtime: a stored v1 session migrates on
    // load, and the provider reads and writes it (the second turn) without a version error.
    const registryModule = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: TypeDefinition[];
      generatedMigrations: Migration[];
    };
    const { NotesStateType } = (await import(pathToFileURL(path.join(root, "src/generated/descriptors.ts")).href)) as {
      NotesStateType: StateDescriptor;
    };
    expect(NotesStateType).toEqual({ $type: "acme.NotesState", version: 2 });
    const registry = TypeRegistry.compose(defaultRegistry(), {
      source: "temp",
      types: registryModule.generatedTypes,
      migrations: registryModule.generatedMigrations,
    });
    const loaded = registry.upgrade<Record<string, unknown>>(
      { $type: "acme.NotesState", notes: ["stored by v1"] } as Record<string, unknown> as never,
      "/stateBag/acme.notes",
    );
    const session = { id: "s1", stateBag: { "acme.notes": loaded } } as never;
    type Notes = { $type: "acme.NotesState"; $version: 2; notes: { text: string; pinned: boolean }[] };
    const state = new ProviderSessionState("acme.notes", NotesStateType as StateDescriptor<Notes>, {
      initial: () => ({ $type: "acme.NotesState", $version: 2, notes: [] }),
    });
    const read = state.read(session)!;
    expect(read.notes).toEqual([{ text: "stored by v1", pinned: false }]);
    state.write(session, { ...read, notes: [...read.notes, { text: "turn 2", pinned: true }] });
    expect(state.read(session)!.notes).toHaveLength(2);
  }, 90_000);

  it("a provider left at the old version fails tsc: the hand-typed version, and a descriptor not regenerated", async () => {
    const root = v1Project();
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V2(TYPED_MIGRATION));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "a", pinned: false }] }),
    );
    // The generator not run yet: the descriptor still says version 1, and the type says 2.
    const stale = (await typeErrors(root)).join("\n");
    expect(stale).toMatch(/src\/generated\/descriptors\.ts:\d+ Type '1' is not assignable to type '2'\./);
    await gen(root);
    // The long form with the version typed by hand beside the type.
    writeFile(
      root,
      "src/provider.ts",
      `import { ProviderSessionState } from "./runtime/core/state-bag.js";
import type { NotesState } from "./notes.js";

export const notesState = new ProviderSessionState<NotesState>("acme.notes", { stateType: "acme.NotesState", version: 1, initial: () => ({ $type: "acme.NotesState", $version: 2, notes: [] }) });
`,
    );
    expect((await typeErrors(root)).join("\n")).toMatch(/src\/provider\.ts:4 Type '1' is not assignable to type '2'\./);
    // The descriptor form with a v1-shaped initial value.
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", notes: [] }`));
    expect((await typeErrors(root)).join("\n")).toMatch(/src\/provider\.ts:4 .*Property '\$version' is missing/);
  }, 90_000);

  it("a typed migration that forgets a required field fails tsc", async () => {
    const root = v1Project();
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V2(TYPED_MIGRATION.replace("({ text, pinned: false })", "({ text })")));
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", $version: 2, notes: [] }`));
    await gen(root);
    expect((await typeErrors(root)).join("\n")).toMatch(
      /src\/notes\.ts:\d+ [\s\S]*Property 'pinned' is missing in type '\{ text: string; \}' but required in type '\{ pinned: boolean; text: string; \}'/,
    );
    // The step's versions are checked too.
    writeFile(root, "src/notes.ts", NOTES_V2(TYPED_MIGRATION.replace("to: 2,", "to: 3,")));
    expect((await typeErrors(root)).join("\n")).toMatch(
      /src\/notes\.ts:\d+ Type '3' is not assignable to type '2 \| \{ type: "acme\.NotesState"; version: 2; \}'/,
    );
  }, 90_000);

  it("an untyped migration that forgets a field fails gen --check: the fixture, the step, the pointer and the fix", async () => {
    const root = v1Project();
    await gen(root);
    const untyped = `export const notesV1toV2 = defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: { notes: string[] }) => ({ notes: v.notes.map((text) => ({ text })) }) });`;
    writeFile(root, "src/notes.ts", NOTES_V2(untyped));
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", $version: 2, notes: [] }`));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "a", pinned: false }] }),
    );
    const written = await gen(root);
    expect(written.exitCode).toBe(1);
    const check = await gen(root, { check: true });
    expect(check.exitCode).toBe(1);
    const failures = check.compat!.failures;
    expect(
      failures.map((f) => ({
        type: f.type,
        rule: f.rule,
        pointer: f.pointer,
        file: f.file,
        step: f.step && { ...f.step, source: undefined },
      })),
    ).toEqual([
      {
        type: "acme.NotesState",
        rule: "stored-data",
        pointer: "/notes/0/pinned",
        file: "test/fixtures/acme.NotesState/v1.json",
        step: { type: "acme.NotesState", from: 1, toType: "acme.NotesState", to: 2, source: undefined },
      },
    ]);
    const lines = formatResult(check, true).join("\n");
    expect(lines).toContain(
      'acme.NotesState: /notes/0/pinned: golden fixture test/fixtures/acme.NotesState/v1.json (stored at version 1) migrated through "acme.NotesState" v1 -> v2 does not match "acme.NotesState" v2 at /notes/0/pinned: missing required property "pinned" (rule: stored-data). ' +
        'Fix: make the migration "acme.NotesState" v1 -> v2 (',
    );
    expect(lines).toContain(
      '(src/notes.ts:9) return a valid "acme.NotesState" v2 for this value (set /notes/0/pinned); declare it as defineMigration<NotesState_v1, NotesState_v2>({ ... })',
    );
  }, 90_000);

  it("a migration that throws on a stored value names the fixture, the step and the error", async () => {
    const root = v1Project();
    await gen(root);
    const throwing = `export const notesV1toV2 = defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: { notes: string[] }) => ({ notes: v.notes.map((text) => { if (text.includes("Lisbon")) throw new Error("no city names"); return { text, pinned: false }; }) }) });`;
    writeFile(root, "src/notes.ts", NOTES_V2(throwing));
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", $version: 2, notes: [] }`));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "a", pinned: false }] }),
    );
    await gen(root);
    const check = await gen(root, { check: true });
    const [failure] = check.compat!.failures;
    expect(failure).toMatchObject({
      rule: "stored-data",
      file: "test/fixtures/acme.NotesState/v1.json",
      step: { type: "acme.NotesState", from: 1, to: 2 },
    });
    expect(failure!.message).toBe(
      'golden fixture test/fixtures/acme.NotesState/v1.json (stored at version 1) does not load: migration "acme.NotesState" v1 -> v2 failed: no city names',
    );
    expect(failure!.fix).toMatch(
      /^fix the migration "acme\.NotesState" v1 -> v2 \(src\/notes\.ts:9\) so it handles this stored value/,
    );
  }, 90_000);

  it("documents drawn from the v1 schema catch a migration the fixture does not: one failure per step, named with its seed", async () => {
    const root = v1Project();
    await gen(root);
    // Fine on the fixture (it has notes), broken on a stored value with none.
    const partial = `export const notesV1toV2 = defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: { notes: string[] }) => { if (v.notes.length === 0) throw new Error("no notes to move"); return { notes: v.notes.map((text) => ({ text, pinned: false })) }; } });`;
    writeFile(root, "src/notes.ts", NOTES_V2(partial));
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", $version: 2, notes: [] }`));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "a", pinned: false }] }),
    );
    await gen(root);
    const check = await gen(root, { check: true });
    expect(check.exitCode).toBe(1);
    const failures = check.compat!.failures.filter((f) => f.rule === "stored-data");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      type: "acme.NotesState",
      file: "schemas/history/ProviderState/acme.NotesState/v1.schema.json",
      step: { type: "acme.NotesState", from: 1, to: 2 },
    });
    expect(failures[0]!.message).toMatch(
      /^document #\d+ drawn from schemas\/history\/ProviderState\/acme\.NotesState\/v1\.schema\.json \(sampling seed 1\) \(stored at version 1\) does not load: migration "acme\.NotesState" v1 -> v2 failed: no notes to move$/,
    );
  }, 90_000);

  it("a module with migrations that can not be loaded is named, with how to see why", async () => {
    const root = v1Project();
    await gen(root);
    writeFile(
      root,
      "src/notes.ts",
      NOTES_V2(
        `${TYPED_MIGRATION}\nif (!process.env.ACME_API_KEY) throw new Error("ACME_API_KEY is not set");`,
      ).replace("import {", "declare const process: { env: Record<string, string | undefined> };\nimport {"),
    );
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "a", pinned: false }] }),
    );
    const result = await gen(root);
    const failure = result.compat!.failures.find((f) => f.rule === "migrations-unloadable");
    expect(failure?.message).toBe(
      "src/notes.ts declares migrations but can not be loaded to run them on the golden fixtures: ACME_API_KEY is not set",
    );
    expect(failure?.fix).toContain("npx tsx src/notes.ts");
  }, 90_000);

  it("a scaffolded fixture fails until it is edited; then the check passes", async () => {
    const root = project({ "src/notes.ts": NOTES_V1 });
    const scaffolded = await generate({ cwd: root, cache: false, compat: true, scaffoldFixtures: true });
    expect(scaffolded.scaffolded).toEqual(["test/fixtures/acme.NotesState/v1.json"]);
    expect(scaffolded.compat!.failures.map((f) => [f.rule, f.file, f.message, f.fix])).toEqual([
      [
        "unedited-fixture",
        "test/fixtures/acme.NotesState/v1.json",
        "golden fixture test/fixtures/acme.NotesState/v1.json is still the placeholder --scaffold-fixtures wrote, so it proves nothing about stored data",
        'replace it with a realistic value of "acme.NotesState" exactly as your code stored it at version 1 (real text, non-empty lists, the optional fields you set), and delete its "$unedited" key',
      ],
    ]);
    expect((await gen(root, { check: true })).compat!.failures.map((f) => f.rule)).toEqual(["unedited-fixture"]);
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v1.json",
      JSON.stringify({ $type: "acme.NotesState", notes: ["call the plumber"] }),
    );
    expect((await gen(root, { check: true })).exitCode).toBe(0);
  }, 60_000);

  it("a breaking change makes gen write nothing, print no success line and exit 1", async () => {
    const root = v1Project();
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V1.replace("notes: string[];", "notes: string[];\n  owner: string;"));
    const before = readTree(root);
    const result = await gen(root);
    expect(result.exitCode).toBe(1);
    expect(result.compat?.blocked).toBe(true);
    expect(result.written).toEqual([]);
    // The stored v1 fixture no longer matches version 1 either: the same problem, seen from the data.
    expect(rules(result.compat?.failures)).toEqual(["acme.NotesState add-required", "acme.NotesState invalid-fixture"]);
    expect(readTree(root)).toEqual(before);
    const lines = formatResult(result, false);
    expect(lines.at(-1)).toBe(
      "nothing was written: stored sessions would not survive this change (see the fixes above).",
    );
    expect(lines.join("\n")).not.toMatch(/^wrote |types, \d+ files/m);
  }, 60_000);

  it("a no-op run reuses a clean compatibility verdict only while nothing the check reads changed", async () => {
    const root = v1Project();
    const run = (check = false) => generate({ cwd: root, compat: true, check });
    expect((await run()).exitCode).toBe(0);
    writeFile(
      root,
      "src/notes.ts",
      NOTES_V2(`import { pin } from "../lib/pin.js";
export const notesV1toV2 = defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: { notes: string[] }) => ({ notes: v.notes.map(pin) }) });`),
    );
    writeFile(root, "lib/pin.ts", `export const pin = (text: string) => ({ text, pinned: false });\n`);
    writeFile(root, "src/provider.ts", PROVIDER(`{ $type: "acme.NotesState", $version: 2, notes: [] }`));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "a", pinned: false }] }),
    );
    expect(rules((await run()).compat?.failures)).toEqual([]);
    const v1Schema = "schemas/history/ProviderState/acme.NotesState/v1.schema.json";
    await run(); // the compiler read the previous versions.ts: one more miss
    const clean = await run();
    expect(clean).toMatchObject({ exitCode: 0, cacheHit: true, compat: { failures: [], recorded: [] } });
    expect(fs.existsSync(path.join(cacheDir(root), "compat.json"))).toBe(true);
    const again = await run(true);
    expect(again).toMatchObject({ exitCode: 0, cacheHit: true });
    expect(again.compat).toEqual(clean.compat);

    const fixture = "test/fixtures/acme.NotesState/v1.json";
    writeFile(root, fixture, JSON.stringify({ $type: "acme.NotesState", notes: [1] }));
    expect(rules((await run(true)).compat?.failures)).toEqual(["acme.NotesState invalid-fixture"]);
    writeFile(root, fixture, JSON.stringify({ $type: "acme.NotesState", notes: ["buy oat milk"] }));
    expect((await run(true)).exitCode).toBe(0);

    const frozen = fs.readFileSync(path.join(root, v1Schema), "utf8");
    writeFile(root, v1Schema, frozen.replace('"notes"', '"notez"'));
    expect(rules((await run(true)).compat?.failures)).toContain("acme.NotesState frozen-edited");
    writeFile(root, v1Schema, frozen);
    expect((await run(true)).exitCode).toBe(0);

    // A module the migration imports from outside the scanned sources (a fresh process, as the
    // CLI runs: this one keeps the module it imported).
    writeFile(root, "lib/pin.ts", `export const pin = (text: string) => ({ text });\n`);
    const cli = spawnSync(
      process.execPath,
      [path.join(REPO, "node_modules/tsx/dist/cli.mjs"), path.join(REPO, "generator/cli.ts"), "--check"],
      { cwd: root, encoding: "utf8" },
    );
    expect(cli.status).toBe(1);
    expect(cli.stdout + cli.stderr).toContain("(rule: stored-data)");
  }, 120_000);

  it("fix texts name the command given for where the generator runs", async () => {
    const root = project({ "src/notes.ts": NOTES_V1 });
    const here = await generate({ cwd: root, cache: false, compat: true });
    expect(here.compat!.failures[0]!.fix).toContain("(statebag gen --scaffold-fixtures writes a starting point)");
    const user = await generate({ cwd: root, cache: false, compat: true, check: true, command: "npx statebag gen" });
    expect(user.compat!.failures[0]!.fix).toContain("(npx statebag gen --scaffold-fixtures writes a starting point)");
    expect(fs.readFileSync(path.join(root, "src/generated/registry.ts"), "utf8")).toContain(
      "// Regenerate with `npm run gen`",
    );
    writeFile(root, "src/notes.ts", NOTES_V1.replace("notes: string[];", "notes: string[];\n  tags?: string[];"));
    await generate({ cwd: root, cache: false, command: "npx statebag gen" });
    expect(fs.readFileSync(path.join(root, "src/generated/registry.ts"), "utf8")).toContain(
      "// Regenerate with `npx statebag gen`",
    );
  }, 60_000);
});

describe("gen outside statebag's own repository", () => {
  it("refuses to write statebag's internal imports into another package, naming `npx statebag init`", async () => {
    const root = tempProject(
      {
        "package.json": JSON.stringify({ name: "acme-app", type: "module" }),
        "src/notes.ts": NOTES_V1.replace("./runtime/core/tagged.js", "statebag"),
      },
      { runtime: false },
    );
    const before = readTree(root);
    const result = await generate({ cwd: root, cache: false, compat: true });
    expect(result.exitCode).toBe(2);
    expect(result.errors[0]!.message).toBe(
      `"acme-app" (${path.relative(process.cwd(), path.join(root, "package.json")).split(path.sep).join("/")}) is not statebag's own repository, and no project was given: generating here would write statebag's internal imports into src/generated/`,
    );
    expect(result.errors[0]!.hint).toBe(
      "run `npx statebag init` once (it writes statebag.config.json, which every command then finds), or pass --project tsconfig.json",
    );
    expect(readTree(root)).toEqual(before);
  });

  it("also refuses a folder without statebag's runtime sources", async () => {
    const root = tempProject({ "src/notes.ts": NOTES_V1 }, { runtime: false });
    const result = await generate({ cwd: root, cache: false });
    expect(result.exitCode).toBe(2);
    expect(result.errors[0]!.message).toContain("this is not statebag's own repository");
  });
});

describe("ProviderSessionState at run time", () => {
  type Notes = { $type: "acme.NotesState"; $version: 2; notes: string[] };
  const NotesType: StateDescriptor<Notes> = { $type: "acme.NotesState", version: 2 };
  const state = new ProviderSessionState("acme.notes", NotesType, {
    initial: () => ({ $type: "acme.NotesState", $version: 2, notes: [] }),
  });

  it("refuses to write a value tagged with another version than it reads", () => {
    const session = { id: "s", stateBag: {} } as never;
    expect(() => state.write(session, { $type: "acme.NotesState", notes: [] } as unknown as Notes)).toThrow(
      'provider state "acme.notes" ("acme.NotesState") was written with $version 1, but this code writes version 2',
    );
  });

  it("a newer stored version is an error whose hint also names the stale-provider cause", () => {
    const session = {
      id: "s",
      stateBag: { "acme.notes": { $type: "acme.NotesState", $version: 3, notes: [] } },
    } as never;
    let error: unknown;
    try {
      state.read(session);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StateVersionError);
    expect((error as StateVersionError).hint).toContain("or this provider's version is behind its type");
    expect((error as StateVersionError).hint).toContain("new ProviderSessionState(key, NotesStateType, { initial })");
  });

  it("rejects a descriptor that is not one (plain JavaScript callers)", () => {
    expect(
      () =>
        new ProviderSessionState("k", { $type: "x", version: 0 } as never, {
          initial: (() => ({ $type: "x" })) as never,
        }),
    ).toThrow('ProviderSessionState for key "k" ("x"): version must be an integer >= 1, found 0');
  });
});
