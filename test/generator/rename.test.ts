/**
 * Renaming a `$type` the documented way (generator/README.md, "Renaming a type"), and adding a
 * type next to it: the generated version types (`NotesState_v1`, ...) keep their names, so the
 * migrations already written against them keep compiling, and `gen` / `gen --check` pass.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generate, type CompatFailure } from "../../generator/index.js";
import { readLock } from "../../generator/compat/history.js";
import { removeTempProjects, runtimeSources, tempProject, typeErrors, writeFile } from "./helpers.js";

afterAll(removeTempProjects);

const RUNTIME = runtimeSources(["core/tagged.ts", "core/state-bag.ts", "persistence/migrations.ts", "persistence/registry-types.ts", "persistence/formats.ts"]);

const HEAD = `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/persistence/migrations.js";
`;

const V1_TO_V2 = `export const notesV1toV2 = defineMigration<NotesState_v1, NotesState_v2>({
  type: "acme.NotesState",
  from: 1,
  to: 2,
  up: (v) => ({ notes: v.notes.map((text) => ({ text, pinned: false })) }),
});
`;

const NOTES_V2 = `${HEAD}import type { NotesState_v1, NotesState_v2 } from "./generated/versions.js";

export interface NotesState extends ProviderState<"acme.NotesState", 2> {
  notes: { text: string; pinned: boolean }[];
}

${V1_TO_V2}`;

/** The rename recipe: the marker gets the new $type and the next version; one step renames, typed like any other. */
const NOTES_RENAMED = `${HEAD}import type { NotesState_v1, NotesState_v2, NotesState_v3 } from "./generated/versions.js";

export interface NotesState extends ProviderState<"acme.Notes", 3> {
  notes: { text: string; pinned: boolean }[];
}

${V1_TO_V2}
export const renameNotes = defineMigration<NotesState_v2, NotesState_v3>({
  type: "acme.NotesState",
  from: 2,
  to: { type: "acme.Notes", version: 3 },
  up: (v) => v,
});
`;

const fixture = (root: string, type: string, version: number, value: object) => writeFile(root, `test/fixtures/${type}/v${version}.json`, JSON.stringify(value, null, 2));
const rules = (failures: readonly CompatFailure[] | undefined) => (failures ?? []).map((f) => `${f.type} ${f.rule}: ${f.message}`);
const gen = (root: string, check = false) => generate({ cwd: root, cache: false, compat: true, check });
const versionNames = (root: string) => [...fs.readFileSync(path.join(root, "src/generated/versions.ts"), "utf8").matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]);

describe("version type names are stable", () => {
  it("a rename done as generator/README.md says keeps every name; existing migrations compile; gen and gen --check pass", async () => {
    const root = tempProject({ ...RUNTIME, "src/notes.ts": `${HEAD}\nexport interface NotesState extends ProviderState<"acme.NotesState", 1> {\n  notes: string[];\n}\n` }, { runtime: false });
    fixture(root, "acme.NotesState", 1, { $type: "acme.NotesState", notes: ["buy oat milk"] });
    expect(rules((await gen(root)).compat?.failures)).toEqual([]);
    fixture(root, "acme.NotesState", 2, { $type: "acme.NotesState", $version: 2, notes: [{ text: "buy oat milk", pinned: true }] });
    // The new version's type exists once gen ran on the bump: then the typed migration compiles.
    writeFile(root, "src/notes.ts", NOTES_V2.replace(/^export const[\s\S]*$/m, ""));
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V2);
    expect(rules((await gen(root)).compat?.failures)).toEqual([]);
    expect(versionNames(root)).toEqual(["NotesState_v1", "NotesState_v2"]);
    expect(await typeErrors(root)).toEqual([]);

    writeFile(root, "src/notes.ts", NOTES_RENAMED.replace(/^export const renameNotes[\s\S]*$/m, "").replace(", NotesState_v3", ""));
    await gen(root); // the new version's type is generated first, as with any bump
    writeFile(root, "src/notes.ts", NOTES_RENAMED);
    fixture(root, "acme.Notes", 3, { $type: "acme.Notes", $version: 3, notes: [{ text: "call Ada", pinned: false }] });
    const renamed = await gen(root);
    expect(rules(renamed.compat?.failures)).toEqual([]);
    expect(renamed.exitCode).toBe(0);
    expect(versionNames(root)).toEqual(["NotesState_v3", "NotesState_v1", "NotesState_v2"]);
    const versions = fs.readFileSync(path.join(root, "src/generated/versions.ts"), "utf8");
    expect(versions).toContain('export interface NotesState_v1 {\n  $type: "acme.NotesState";');
    expect(versions).toContain('export interface NotesState_v3 {\n  $type: "acme.Notes";');
    expect(await typeErrors(root)).toEqual([]);
    const check = await gen(root, true);
    expect(rules(check.compat?.failures)).toEqual([]);
    expect(check.exitCode).toBe(0);
    expect(readLock(path.join(root, "schemas")).names).toEqual({
      "ProviderState/acme.Notes/v3.schema.json": "NotesState_v3",
      "ProviderState/acme.NotesState/v1.schema.json": "NotesState_v1",
      "ProviderState/acme.NotesState/v2.schema.json": "NotesState_v2",
    });

    // A new type whose name sorts first and whose interface is called like the old one's: no name moves.
    writeFile(root, "src/other.ts", `import type { ProviderState } from "./runtime/core/tagged.js";\n\nexport interface NotesState extends ProviderState<"acme.A", 1> {\n  text: string;\n}\n`);
    fixture(root, "acme.A", 1, { $type: "acme.A", text: "hello" });
    const added = await gen(root);
    expect(added.errors).toEqual([]);
    expect(versionNames(root)).toEqual(["NotesState_2_v1", "NotesState_v3", "NotesState_v1", "NotesState_v2"]);
    expect(await typeErrors(root)).toEqual([]);
    expect((await gen(root, true)).exitCode).toBe(0);
  }, 180_000);
});
