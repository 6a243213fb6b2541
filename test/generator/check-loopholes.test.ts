/**
 * Ways around `gen --check` that must not work: a scaffolded fixture whose marker key was deleted
 * but whose placeholder value was never edited, and a frozen version deleted together with its
 * lock entry while fixtures and migrations still refer to it.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generate } from "../../generator/index.js";
import { formatResult } from "../../generator/report.js";
import { cli, tempDir } from "../cli/helpers.js";
import { REPO, removeTempProjects, runtimeSources, tempProject, writeFile } from "./helpers.js";

afterAll(removeTempProjects);

const RUNTIME = runtimeSources([
  "core/tagged.ts",
  "core/state-bag.ts",
  "registry/migrations.ts",
  "registry/registry-types.ts",
  "registry/formats.ts",
]);

const NOTES_V1 = `import type { ProviderState } from "./runtime/core/tagged.js";

export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  notes: string[];
}
`;

const NOTES_V2 = `import type { ProviderState } from "./runtime/core/tagged.js";
import { defineMigration } from "./runtime/registry/migrations.js";

export interface NotesState extends ProviderState<"acme.NotesState", 2> {
  notes: { text: string }[];
}

export const notesV1toV2 = defineMigration({ type: "acme.NotesState", from: 1, to: 2, up: (v: { notes: string[] }) => ({ notes: v.notes.map((text) => ({ text })) }) });
`;

const gen = (root: string, options: { check?: boolean; scaffoldFixtures?: boolean } = {}) =>
  generate({ cwd: root, cache: false, compat: true, ...options });

describe("gen --check loopholes", () => {
  it("a scaffolded fixture with only its $unedited key deleted is still the placeholder", async () => {
    const root = tempProject({ ...RUNTIME, "src/notes.ts": NOTES_V1 }, { runtime: false });
    await gen(root, { scaffoldFixtures: true });
    const file = path.join(root, "test/fixtures/acme.NotesState/v1.json");
    const { $unedited: _, ...placeholder } = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify(placeholder, null, 2) + "\n");
    const check = await gen(root, { check: true });
    expect(check.exitCode).toBe(1);
    expect(check.compat!.failures.map((f) => [f.rule, f.file, f.message])).toEqual([
      [
        "unedited-fixture",
        "test/fixtures/acme.NotesState/v1.json",
        'golden fixture test/fixtures/acme.NotesState/v1.json is still the placeholder --scaffold-fixtures wrote (its "$unedited" key is gone, its value unchanged), so it proves nothing about stored data',
      ],
    ]);
    // Formatting does not hide it; a real value passes.
    fs.writeFileSync(file, JSON.stringify(placeholder));
    expect((await gen(root, { check: true })).compat!.failures.map((f) => f.rule)).toEqual(["unedited-fixture"]);
    fs.writeFileSync(file, JSON.stringify({ $type: "acme.NotesState", notes: ["call the plumber"] }));
    expect((await gen(root, { check: true })).exitCode).toBe(0);
  }, 60_000);

  it("a frozen version deleted with its lock entry fails, naming the fixture, the migration and the version", async () => {
    const root = tempProject({ ...RUNTIME, "src/notes.ts": NOTES_V1 }, { runtime: false });
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v1.json",
      JSON.stringify({ $type: "acme.NotesState", notes: ["buy oat milk"] }),
    );
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V2);
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v2.json",
      JSON.stringify({ $type: "acme.NotesState", $version: 2, notes: [{ text: "buy oat milk" }] }),
    );
    expect((await gen(root)).exitCode).toBe(0);

    const lockFile = path.join(root, "schemas/history/frozen.lock.json");
    const lock = JSON.parse(fs.readFileSync(lockFile, "utf8")) as {
      files: Record<string, string>;
      names?: Record<string, string>;
    };
    delete lock.files["ProviderState/acme.NotesState/v1.schema.json"];
    delete lock.names?.["ProviderState/acme.NotesState/v1.schema.json"];
    fs.writeFileSync(lockFile, JSON.stringify(lock, null, 2));
    fs.rmSync(path.join(root, "schemas/history/ProviderState/acme.NotesState/v1.schema.json"));

    const check = await gen(root, { check: true });
    expect(check.exitCode).toBe(1);
    const gone = "schemas/history/ProviderState/acme.NotesState/v1.schema.json";
    expect(check.compat!.failures.map((f) => [f.rule, f.file, f.message])).toEqual([
      [
        "frozen-deleted",
        "test/fixtures/acme.NotesState/v1.json",
        `"acme.NotesState" version 1 is still referred to (golden fixture test/fixtures/acme.NotesState/v1.json, migration "acme.NotesState" v1 -> v2 (src/notes.ts:8)), but its frozen schema ${gone} is gone and schemas/history/frozen.lock.json does not list it: stored sessions of that version would no longer be checked`,
      ],
    ]);
    expect(check.compat!.failures[0]!.fix).toBe(
      `restore ${gone} and its entries in schemas/history/frozen.lock.json (git checkout -- ${gone} schemas/history/frozen.lock.json)`,
    );
    // gen refuses too: it can not bring the version back.
    const refused = await gen(root);
    expect(refused.exitCode).toBe(1);
    expect(refused.compat!.blocked).toBe(true);

    // The fixture deleted too: the lock's recorded version type name still shows v1 was frozen.
    fs.rmSync(path.join(root, "test/fixtures/acme.NotesState/v1.json"));
    // No trace of v1 left: as if it was never frozen (a project that adopted the generator at v2).
    expect((await gen(root, { check: true })).compat!.failures.map((f) => f.rule)).not.toContain("frozen-deleted");
    lock.names = { ...lock.names, "ProviderState/acme.NotesState/v1.schema.json": "NotesState_v1" };
    fs.writeFileSync(lockFile, JSON.stringify(lock, null, 2));
    expect((await gen(root, { check: true })).compat!.failures.map((f) => f.message)).toEqual([
      `"acme.NotesState" version 1 is still referred to (migration "acme.NotesState" v1 -> v2 (src/notes.ts:8)), but its frozen schema ${gone} is gone and schemas/history/frozen.lock.json does not list it: stored sessions of that version would no longer be checked`,
    ]);
  }, 90_000);
});

describe("gen --check never sends users to a gen that refuses", () => {
  it("stale output caused by a breaking change says to fix the change first, not to run the generator", async () => {
    const root = tempProject({ ...RUNTIME, "src/notes.ts": NOTES_V1 }, { runtime: false });
    writeFile(
      root,
      "test/fixtures/acme.NotesState/v1.json",
      JSON.stringify({ $type: "acme.NotesState", notes: ["buy oat milk"] }),
    );
    await gen(root);
    writeFile(root, "src/notes.ts", NOTES_V1.replace("notes: string[];", "notes: { text: string }[];"));
    const check = await gen(root, { check: true });
    const lines = formatResult(check, true);
    expect(lines).not.toContain("generated files are out of date; run the generator.");
    expect(lines).toContain(
      "generated files are out of date, and gen writes nothing until the problems below are fixed (see each fix).",
    );
    expect((await gen(root)).compat!.blocked).toBe(true); // what running gen would do
  }, 60_000);
});

describe("statebag gen --check (the CLI) on stale output gen would refuse to write", () => {
  it("names the compatibility fixes first, not only `run npx statebag gen`", async () => {
    const tmp = tempDir("statebag-gen-refuses-");
    try {
      tmp.file("package.json", { name: "acme-app", type: "module" });
      tmp.file("statebag.config.json", {});
      tmp.file("tsconfig.json", {
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          skipLibCheck: true,
          types: [],
          paths: { statebag: [path.join(REPO, "src/index.ts")] },
        },
        include: ["src"],
      });
      for (const dir of ["src", "test/fixtures/acme.NotesState"])
        fs.mkdirSync(path.join(tmp.dir, dir), { recursive: true });
      const notes = (field: string) =>
        `import type { ProviderState } from "statebag";\n\nexport interface NotesState extends ProviderState<"acme.NotesState", 1> {\n  ${field}\n}\n`;
      tmp.file("src/notes.ts", notes("notes: string[];"));
      tmp.file("test/fixtures/acme.NotesState/v1.json", { $type: "acme.NotesState", notes: ["buy oat milk"] });
      expect((await cli(["gen"], { cwd: tmp.dir })).code).toBe(0);
      tmp.file("src/notes.ts", notes("notes: number[];"));
      const check = await cli(["gen", "--check"], { cwd: tmp.dir });
      expect(check.code).toBe(1);
      expect(check.stderr).toContain(
        "fix:   fix the compatibility problems below first (until then npx statebag gen writes nothing), then run npx statebag gen",
      );
      expect(check.stderr).not.toContain("run npx statebag gen and commit the result");
    } finally {
      tmp.cleanup();
    }
  }, 120_000);
});
