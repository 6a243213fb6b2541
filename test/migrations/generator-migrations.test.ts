/**
 * The generator finds `defineMigration(...)` calls declared next to tagged types (syntax only), emits
 * them as `generatedMigrations`, derives `formerNames` from renames, and reports a migration it
 * cannot import or read as an error with file:line.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatError } from "../../generator/errors.js";
import { generate } from "../../generator/index.js";
import type { GenerateResult } from "../../generator/report.js";
import type { Migration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import type { TypeDefinition } from "../../src/runtime/registry/registry-types.js";
import { readFile, removeTempProjects, runtimeSources, tempProject } from "../generator/helpers.js";

afterAll(removeTempProjects);

const RUNTIME = [
  "core/tagged.ts",
  "registry/registry-types.ts",
  "registry/migrations.ts",
  "core/errors.ts",
  "registry/formats.ts",
];
const runtimeFiles = runtimeSources(RUNTIME);

const NOTES = `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/registry/migrations.js";

export interface NotesState extends ProviderState<"acme.Notes", 3> {
  items: string[];
  count: number;
}

/** v1 { text } -> v2 { items } -> v3 { items, count } */
export const notesMigrations = [
  defineMigration({ type: "acme.Notes", from: 1, to: 2, up: (v: { text: string }) => ({ items: v.text.split(";") }) }),
  defineMigration({ type: "acme.Notes", from: 2, to: 3, up: (v: { items: string[] }) => ({ ...v, count: v.items.length }) }),
] as const;
`;

const PREFS = `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration as migration } from "./runtime/registry/migrations.js";

/** Formerly "acme.Settings" (v1). */
export interface PrefsState extends ProviderState<"acme.Prefs", 2> {
  theme: string;
}

export const settingsToPrefs = migration({
  type: "acme.Settings",
  from: 1,
  to: { type: "acme.Prefs", version: 2 },
  up: (v: { colour?: string }) => ({ theme: v.colour ?? "light" }),
});
`;

const COUNTER = `import type { ProviderState } from "./runtime/core/tagged.js";
import * as sb from "./runtime/registry/migrations.js";

export interface CounterState extends ProviderState<"acme.Counter", 2> {
  value: number;
}

const counterV1toV2 = sb.defineMigration({ type: "acme.Counter", from: 1, to: 2, up: (v: { n: number }) => ({ value: v.n }) });
export { counterV1toV2 as counterMigration };

/** Built at run time, registered by hand: not the generator's business. */
export function runtimeMigration() {
  return sb.defineMigration({ type: "acme.Other", from: 1, to: 2, up: (v: unknown) => v });
}
`;

describe("declared migrations in a project", () => {
  let root: string;
  let result: GenerateResult;

  beforeAll(async () => {
    root = tempProject(
      { ...runtimeFiles, "src/notes.ts": NOTES, "src/prefs.ts": PREFS, "src/counter.ts": COUNTER },
      { runtime: false },
    );
    result = await generate({ cwd: root, cache: false });
    expect(result.errors.map(formatError)).toEqual([]);
  });

  it("finds exported consts, exported arrays, aliased and namespace imports, export clauses", () => {
    expect(result.migrations).toEqual([
      {
        type: "acme.Counter",
        from: 1,
        toType: "acme.Counter",
        to: 2,
        exportName: "counterMigration",
        source: "src/counter.ts:8",
      },
      {
        type: "acme.Notes",
        from: 1,
        toType: "acme.Notes",
        to: 2,
        exportName: "notesMigrations",
        source: "src/notes.ts:11",
      },
      {
        type: "acme.Notes",
        from: 2,
        toType: "acme.Notes",
        to: 3,
        exportName: "notesMigrations",
        source: "src/notes.ts:12",
      },
      {
        type: "acme.Settings",
        from: 1,
        toType: "acme.Prefs",
        to: 2,
        exportName: "settingsToPrefs",
        source: "src/prefs.ts:9",
      },
    ]);
  });

  it("emits generatedMigrations: readable imports, one comment per step, deterministic", async () => {
    const registry = readFile(root, "src/generated/registry.ts");
    expect(registry).toContain('import { counterMigration } from "../counter.js";');
    expect(registry).toContain('import { notesMigrations } from "../notes.js";');
    expect(registry).toContain('import { settingsToPrefs } from "../prefs.js";');
    expect(registry).toContain(
      [
        "export const generatedMigrations: readonly Migration[] = [",
        '  // "acme.Counter" v1 -> v2 (src/counter.ts:8)',
        "  counterMigration,",
        '  // "acme.Notes" v1 -> v2 (src/notes.ts:11)',
        '  // "acme.Notes" v2 -> v3 (src/notes.ts:12)',
        "  ...notesMigrations,",
        '  // "acme.Settings" v1 -> "acme.Prefs" v2 (src/prefs.ts:9)',
        "  settingsToPrefs,",
        "];",
      ].join("\n"),
    );
    const again = await generate({ cwd: root, cache: false });
    expect(again.written).toEqual([]);
  });

  it("a rename gives the new type its former name, in the registry and in x-statebag", async () => {
    expect(result.types.find((t) => t.$type === "acme.Prefs")!.formerNames).toEqual(["acme.Settings"]);
    const schema = JSON.parse(readFile(root, "schemas/ProviderState/acme.Prefs.schema.json"));
    expect(schema["x-statebag"].formerNames).toEqual(["acme.Settings"]);
    const mod = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: TypeDefinition[];
      generatedMigrations: Migration[];
    };
    expect(mod.generatedTypes.find((t) => t.$type === "acme.Prefs")!.formerNames).toEqual(["acme.Settings"]);
    const registry = new TypeRegistry({ types: mod.generatedTypes, migrations: mod.generatedMigrations });
    expect(registry.upgrade({ $type: "acme.Notes", text: "a;b" } as { $type: string })).toEqual({
      $type: "acme.Notes",
      $version: 3,
      items: ["a", "b"],
      count: 2,
    });
    expect(registry.upgrade({ $type: "acme.Settings", colour: "dark" } as { $type: string })).toEqual({
      $type: "acme.Prefs",
      $version: 2,
      theme: "dark",
    });
    expect(registry.upgrade({ $type: "acme.Counter", n: 4 } as { $type: string })).toEqual({
      $type: "acme.Counter",
      $version: 2,
      value: 4,
    });
    // The former name is reserved.
    expect(() => registry.register({ $type: "acme.Settings", schema: { type: "object", properties: {} } })).toThrow(
      /former name of "acme.Prefs"/,
    );
  });

  it("the compatibility check reserves the old name too (retired.json, reused-type-name)", async () => {
    // Settings had history of its own: simulate the frozen v1 the project had before the rename.
    const frozen = path.join(root, "schemas/history/ProviderState/acme.Settings/v1.schema.json");
    fs.mkdirSync(path.dirname(frozen), { recursive: true });
    fs.writeFileSync(
      frozen,
      JSON.stringify({
        type: "object",
        properties: { $type: { const: "acme.Settings" }, colour: { type: "string" } },
        "x-statebag": { family: "ProviderState", $type: "acme.Settings", version: 1 },
      }),
    );
    for (const type of ["acme.Notes", "acme.Prefs", "acme.Counter", "acme.Settings"])
      fs.mkdirSync(path.join(root, "test/fixtures", type), { recursive: true });
    fs.writeFileSync(
      path.join(root, "test/fixtures/acme.Notes/v3.json"),
      JSON.stringify({ $type: "acme.Notes", $version: 3, items: ["x"], count: 1 }),
    );
    fs.writeFileSync(
      path.join(root, "test/fixtures/acme.Prefs/v2.json"),
      JSON.stringify({ $type: "acme.Prefs", $version: 2, theme: "dark" }),
    );
    fs.writeFileSync(
      path.join(root, "test/fixtures/acme.Counter/v2.json"),
      JSON.stringify({ $type: "acme.Counter", $version: 2, value: 3 }),
    );
    fs.writeFileSync(
      path.join(root, "test/fixtures/acme.Settings/v1.json"),
      JSON.stringify({ $type: "acme.Settings", colour: "dark" }),
    );
    const first = await generate({ cwd: root, cache: false, compat: true });
    expect(first.compat!.retired).toEqual(["acme.Settings"]);
    expect(JSON.parse(readFile(root, "schemas/history/retired.json")).retired).toEqual([
      { $type: "acme.Settings", family: "ProviderState", lastVersion: 1, renamedTo: "acme.Prefs" },
    ]);
    // (acme.Notes v1/v2 and acme.Counter v1 were never frozen in this project: no fixtures needed for them.)
    expect(first.compat!.failures.map((f) => `${f.type} ${f.rule}`)).toEqual([]);
    // A new type that takes the old name back is refused.
    fs.writeFileSync(
      path.join(root, "src/settings.ts"),
      `import type { ProviderState } from "./runtime/core/tagged.js";\nexport interface Settings extends ProviderState<"acme.Settings", 1> { other: number }\n`,
    );
    const reused = await generate({ cwd: root, cache: false, compat: true });
    expect(reused.errors.map(formatError)).toEqual([
      'src/prefs.ts:9:32 error migration-conflict: migration "acme.Settings" v1 -> "acme.Prefs" v2 renames "acme.Settings", but "acme.Settings" is still declared (src/settings.ts:2). hint: a renamed type\'s old $type must no longer be declared: change the marker at src/settings.ts:2 to ProviderState<"acme.Prefs", 2> (or the Tagged<...> equivalent)',
    ]);
    fs.rmSync(path.join(root, "src/settings.ts"));
  });
});

describe("a former name that evolved before it was renamed", () => {
  it("accepts steps of the old name that lead into the rename, and chains them", async () => {
    const root = tempProject(
      {
        ...runtimeFiles,
        "src/journal.ts": `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/registry/migrations.js";
export interface JournalState extends ProviderState<"acme.Journal", 3> { entries: string[] }
export const journalMigrations = [
  defineMigration({ type: "acme.Diary", from: 1, to: 2, up: (v: { text: string }) => ({ lines: [v.text] }) }),
  defineMigration({ type: "acme.Diary", from: 2, to: { type: "acme.Journal", version: 3 }, up: (v: { lines: string[] }) => ({ entries: v.lines }) }),
];
`,
      },
      { runtime: false },
    );
    const result = await generate({ cwd: root, cache: false });
    expect(result.errors.map(formatError)).toEqual([]);
    expect(result.types.find((t) => t.$type === "acme.Journal")!.formerNames).toEqual(["acme.Diary"]);
    const mod = (await import(pathToFileURL(path.join(root, "src/generated/registry.ts")).href)) as {
      generatedTypes: TypeDefinition[];
      generatedMigrations: Migration[];
    };
    const registry = new TypeRegistry({ types: mod.generatedTypes, migrations: mod.generatedMigrations });
    expect(registry.upgrade({ $type: "acme.Diary", text: "dear diary" } as { $type: string })).toEqual({
      $type: "acme.Journal",
      $version: 3,
      entries: ["dear diary"],
    });
  });
});

describe("migrations the generator cannot use are errors with file:line", () => {
  it("reports every problem at once", async () => {
    const root = tempProject(
      {
        ...runtimeFiles,
        "src/bad.ts": `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration, type Migration } from "./runtime/registry/migrations.js";
import { TypeRegistry } from "./runtime/registry/registry-types.js";
export interface S extends ProviderState<"acme.S", 2> { a: string }
const hidden = defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v });
const FROM = 1;
export const computed = defineMigration({ type: "acme.S", from: FROM, to: 2, up: (v) => v });
export const spread = defineMigration({ ...hidden, type: "acme.S", from: 1, to: 2, up: (v) => v });
export let mutable = defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v });
export const mixed = [defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v }), hidden];
declare const registry: { addMigration(m: Migration): void };
registry.addMigration(defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v }));
export const beyond = defineMigration({ type: "acme.S", from: 2, to: 3, up: (v) => v });
export const first = defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v });
export const twice = defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v });
export const nobody = defineMigration({ type: "acme.Gone", from: 1, to: 2, up: (v) => v });
export const noUp = defineMigration({ type: "acme.S", from: 1, to: 2 } as never);
`,
      },
      { runtime: false },
    );
    const result = await generate({ cwd: root, cache: false });
    expect(result.exitCode).toBe(1);
    expect(result.files).toEqual([]);
    expect(result.errors.map(formatError)).toEqual([
      "src/bad.ts:5:7 error migration-not-exported: migration hidden is not exported. hint: declare it as `export const hidden = ...`: the generated registry imports every migration, so defaultRegistry() and the compatibility check see it",
      'src/bad.ts:7:65 error migration-not-literal: the migration\'s "from" must be an integer literal >= 1, found FROM. hint: write the step\'s type and versions as literals: defineMigration({ type: "my.Type", from: 1, to: 2, up }) or, for a rename, to: { type: "my.NewType", version: 2 }',
      'src/bad.ts:8:41 error migration-not-literal: defineMigration({ ...spread }) cannot be read without running code. hint: write the step\'s type and versions as literals: defineMigration({ type: "my.Type", from: 1, to: 2, up }) or, for a rename, to: { type: "my.NewType", version: 2 }',
      "src/bad.ts:9:12 error migration-not-exported: migration mutable is not a const. hint: declare it as `export const mutable = ...`: the generated registry imports every migration, so defaultRegistry() and the compatibility check see it",
      "src/bad.ts:10:90 error migration-not-literal: the migration array mixed holds hidden, not a defineMigration(...) call. hint: a migration array holds defineMigration(...) calls only; export other migrations under their own names",
      "src/bad.ts:12:23 error migration-not-exported: this defineMigration(...) call is not assigned to an exported const. hint: write `export const myMigration = defineMigration({...})` (or an exported array of calls); migrations built inside functions are runtime registrations the generator does not see",
      'src/bad.ts:13:23 error migration-conflict: migration "acme.S" v2 -> v3 writes v3, but "acme.S" is at version 2 (src/bad.ts:4). hint: bump the type to version 3, or fix the step\'s "to"',
      'src/bad.ts:14:22 error migration-conflict: two migrations read "acme.S" v1: "acme.S" v1 -> v2 (src/bad.ts:10) and "acme.S" v1 -> v2 (src/bad.ts:14). hint: each (type, from) has exactly one step; remove one of them',
      'src/bad.ts:15:22 error migration-conflict: two migrations read "acme.S" v1: "acme.S" v1 -> v2 (src/bad.ts:10) and "acme.S" v1 -> v2 (src/bad.ts:15). hint: each (type, from) has exactly one step; remove one of them',
      'src/bad.ts:16:23 error migration-conflict: migration "acme.Gone" v1 -> v2: no tagged type declares "acme.Gone". hint: declare the type, or, if it was renamed: change the type\'s marker to the new $type at the next version (ProviderState<"<new $type>", 3>) and add the rename step next to it: defineMigration({ type: "acme.Gone", from: 2, to: { type: "<new $type>", version: 3 }, up: (v) => v }); keep the old name\'s migrations and fixtures as they are',
      'src/bad.ts:17:37 error migration-not-literal: the migration has no "up" function. hint: write the step\'s type and versions as literals: defineMigration({ type: "my.Type", from: 1, to: 2, up }) or, for a rename, to: { type: "my.NewType", version: 2 }',
    ]);

    // With the syntax fixed, the same checks across files, and a rename to nowhere.
    fs.writeFileSync(
      path.join(root, "src/bad.ts"),
      `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/registry/migrations.js";
export interface S extends ProviderState<"acme.S", 2> { a: string }
export const beyond = defineMigration({ type: "acme.S", from: 2, to: 3, up: (v) => v });
export const first = defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v });
export const twice = defineMigration({ type: "acme.S", from: 1, to: 2, up: (v) => v });
export const nobody = defineMigration({ type: "acme.Gone", from: 1, to: 2, up: (v) => v });
export const nowhere = defineMigration({ type: "acme.Old", from: 1, to: { type: "acme.Missing", version: 1 }, up: (v) => v });
`,
    );
    const second = await generate({ cwd: root, cache: false });
    expect(second.errors.map((e) => `${e.file}:${e.line} ${e.code}: ${e.message}`)).toEqual([
      'src/bad.ts:4 migration-conflict: migration "acme.S" v2 -> v3 writes v3, but "acme.S" is at version 2 (src/bad.ts:3)',
      'src/bad.ts:6 migration-conflict: two migrations read "acme.S" v1: "acme.S" v1 -> v2 (src/bad.ts:5) and "acme.S" v1 -> v2 (src/bad.ts:6)',
      'src/bad.ts:7 migration-conflict: migration "acme.Gone" v1 -> v2: no tagged type declares "acme.Gone"',
      'src/bad.ts:8 migration-conflict: migration "acme.Old" v1 -> "acme.Missing" v1: no tagged type declares "acme.Missing" (nor does a rename chain from it end at one)',
    ]);
  });
});
