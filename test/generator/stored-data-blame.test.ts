/**
 * `gen --check` tells invalid stored data from a migration bug: a value is checked against its own
 * version's frozen schema before the migrations run on it, and a step that returns an invalid
 * value is blamed when the next step fails on it (not the step that failed).
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkStoredDocuments } from "../../generator/compat/stored-data.js";
import { generate } from "../../generator/index.js";
import { defineMigration } from "../../src/runtime/registry/migrations.js";
import { removeTempProjects, runtimeSources, tempProject, writeFile } from "./helpers.js";

afterAll(removeTempProjects);

const RUNTIME = runtimeSources([
  "core/tagged.ts",
  "core/state-bag.ts",
  "registry/migrations.ts",
  "registry/registry-types.ts",
  "registry/formats.ts",
]);

const notes = (
  version: number,
  shape: string,
  migrations = "",
) => `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/registry/migrations.js";

export interface NotesState extends ProviderState<"acme.NotesState", ${version}> {
  notes: ${shape};
}
${migrations}`;

// v1 -> v2 forgets to wrap the notes; v2 -> v3 then fails on what it returned.
const STEPS = `
export const notesV1toV2 = defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: { notes: string[] }) => ({ notes: v.notes }) });
export const notesV2toV3 = defineMigration({ type: "acme.NotesState", from: 2, to: 3, up: (v: { notes: { text: string }[] }) => ({ notes: v.notes.map((n) => ({ text: n.text.trim(), pinned: false })) }) });
`;

const gen = (root: string, check = false) => generate({ cwd: root, cache: false, compat: true, check });

describe("gen --check: invalid stored data vs a migration bug", () => {
  it("blames the step whose result is invalid, and calls a value its own version rejects invalid data", async () => {
    const root = tempProject({ ...RUNTIME, "src/notes.ts": notes(1, "string[]") }, { runtime: false });
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v1.json",
      JSON.stringify({ $type: "acme.NotesState", notes: ["buy oat milk"] }),
    );
    await gen(root);
    writeFile(root, "src/notes.ts", notes(2, "{ text: string }[]", STEPS.split("\n").slice(0, 2).join("\n")));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "call Ada" }] }),
    );
    await gen(root);
    writeFile(root, "src/notes.ts", notes(3, "{ text: string; pinned: boolean }[]", STEPS));
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v3.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 3, notes: [{ text: "call Ada", pinned: true }] }),
    );
    await gen(root);

    const check = await gen(root, true);
    const fixture = check.compat!.failures.find((f) => f.file === "test/fixtures/acme.NotesState/v1.json")!;
    expect(fixture).toMatchObject({
      rule: "stored-data",
      pointer: "/notes/0",
      step: { type: "acme.NotesState", from: 1, to: 2, source: "src/notes.ts:8" },
    });
    expect(fixture.message).toMatch(
      /^golden fixture test\/fixtures\/acme\.NotesState\/v1\.json \(stored at version 1\) does not load: migration of "acme\.NotesState" v1 -> v2 at \/ returned a value that does not match version 2's schema \(schemas\/history\/ProviderState\/acme\.NotesState\/v2\.schema\.json\) at \/notes\/0: must be object; the next migration of "acme\.NotesState" v2 -> v3 then failed on it: /,
    );
    expect(fixture.fix).toMatch(/^fix the migration "acme\.NotesState" v1 -> v2 \(src\/notes\.ts:8\)/);

    // A value filed as v1 that v1's schema rejects (what a store could hold after a bad write): the data is named, not the steps.
    const schemasDir = path.join(root, "schemas");
    const steps = [
      defineMigration({
        type: "acme.NotesState",
        from: 1,
        to: 2,
        up: (v: { notes: string[] }) => ({ notes: v.notes.map((text) => ({ text })) }),
      }),
      defineMigration({
        type: "acme.NotesState",
        from: 2,
        to: 3,
        up: (v: { notes: { text: string }[] }) => ({ notes: v.notes.map((n) => ({ ...n, pinned: false })) }),
      }),
    ];
    const [invalid] = checkStoredDocuments(
      [{ label: "stored session s1", document: { $type: "acme.NotesState", notes: 42 }, fromVersion: 1 }],
      { schemasDir, migrations: steps, relative: (f) => path.relative(root, f) },
    );
    expect(invalid).toMatchObject({ rule: "stored-data", pointer: "/notes" });
    expect(invalid!.step).toBeUndefined();
    expect(invalid!.message).toBe(
      'stored session s1 is invalid stored data, not a migration bug: it does not match "acme.NotesState" v1 (schemas/history/ProviderState/acme.NotesState/v1.schema.json) at /notes: must be array',
    );
  }, 120_000);
});
