/**
 * `statebag gen` on a small project of its own: the README's "use statebag in your own project"
 * and "evolve a type" walkthroughs, end to end.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, envelope, REPO, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-gen-");
afterAll(() => tmp.cleanup());

const index = join(REPO, "src/index.ts");
tmp.file("package.json", { type: "module" });
tmp.file("tsconfig.json", {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: true,
    types: [],
    paths: { statebag: [index] },
  },
  include: ["src"],
});
mkdirSync(join(tmp.dir, "src"), { recursive: true });
const notes = join(tmp.dir, "src/notes.ts");

const v1 = `import type { ProviderState } from "statebag";

/** Notes a provider keeps per session. */
export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  notes: string[];
}
`;
// Version 2: notes become items; the migration sits next to the type. (defineMigration is imported
// by path here only because this throwaway project has no node_modules/statebag.)
const v2 = `import type { ProviderState } from "statebag";
import { defineMigration } from ${JSON.stringify(index)};

export interface NoteItem {
  text: string;
  pinned: boolean;
}

/** Notes a provider keeps per session. */
export interface NotesState extends ProviderState<"acme.NotesState", 2> {
  notes: NoteItem[];
}

export const notesV1toV2 = defineMigration({
  type: "acme.NotesState",
  from: 1,
  to: 2,
  up: (v: { notes: string[] }) => ({ ...v, notes: v.notes.map((text) => ({ text, pinned: false })) }),
});
`;
writeFileSync(notes, v1);

// Generated code imports statebag's runtime from here (a published project uses "statebag").
const project = join(tmp.dir, "tsconfig.json");
const base = ["gen", "--project", project, "--runtime-import", join(REPO, "src/index.js")];
const registry = join(tmp.dir, "src/generated/registry.ts");

/** What a person puts in place of the scaffolded placeholder: a value the code really stored. */
const realFixtures: Record<number, object> = {
  1: { $type: "acme.NotesState", notes: ["buy milk", "call Ada about the invoice"] },
  2: {
    $type: "acme.NotesState",
    $version: 2,
    notes: [
      { text: "buy milk", pinned: true },
      { text: "call Ada", pinned: false },
    ],
  },
};
function editFixture(dir: string, version: number): void {
  writeFileSync(
    join(dir, `test/fixtures/acme.NotesState/v${version}.json`),
    JSON.stringify(realFixtures[version], null, 2) + "\n",
  );
}

describe("statebag gen", () => {
  it("generates schemas, registry and a starting fixture for a project; the placeholder fails until edited; then --check passes", async () => {
    const r = await cli([...base, "--scaffold-fixtures", "--json"]);
    // Everything is written, but a scaffolded placeholder proves nothing about stored data.
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is still the placeholder --scaffold-fixtures wrote");
    const out = r.json();
    expect(out.types).toEqual([
      expect.objectContaining({ $type: "acme.NotesState", family: "ProviderState", version: 1 }),
    ]);
    expect(out.compat.failures).toEqual([expect.objectContaining({ rule: "unedited-fixture" })]);
    expect(existsSync(join(tmp.dir, "schemas/ProviderState/acme.NotesState.schema.json"))).toBe(true);
    expect(existsSync(join(tmp.dir, "schemas/history/ProviderState/acme.NotesState/v1.schema.json"))).toBe(true);
    expect(existsSync(join(tmp.dir, "test/fixtures/acme.NotesState/v1.json"))).toBe(true);
    expect(readFileSync(registry, "utf8")).toContain("acme.NotesState");
    editFixture(tmp.dir, 1);

    const check = await cli([...base, "--check"]);
    expect(check.stderr).toBe("");
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("generated files are current");
    expect(check.stdout).toContain("schemas compatible");
  }, 60_000);

  it("the generated registry makes `validate --registry` check the project's own types", async () => {
    const file = tmp.file(
      "session.json",
      envelope({ id: "n", stateBag: { notes: { $type: "acme.NotesState", notes: ["a"] } } }),
    );
    expect((await cli(["validate", file, "--strict", "--registry", registry])).code).toBe(0);
    const bad = tmp.file(
      "bad.json",
      envelope({ id: "n", stateBag: { notes: { $type: "acme.NotesState", notes: [1] } } }),
    );
    const r = await cli(["validate", bad, "--registry", registry]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("/session/stateBag/notes/notes/0");
  });

  it("--check exits 1 when a type changed and the output was not regenerated", async () => {
    writeFileSync(notes, v1.replace("notes: string[];", "notes: string[];\n  pinned?: boolean;"));
    const r = await cli([...base, "--check"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/stale\s+.*acme\.NotesState\.schema\.json/);
    expect(r.stderr).toContain(`fix:   run npx statebag gen --project ${project}`);
    writeFileSync(notes, v1);
  }, 60_000);

  it("a breaking change without a version bump fails the compatibility check", async () => {
    writeFileSync(notes, v1.replace("notes: string[];", "notes: number[];"));
    const r = await cli(base);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/acme\.NotesState/);
    expect(r.stderr).toContain("fix:");
    writeFileSync(notes, v1);
    expect((await cli(base)).code).toBe(0);
  }, 60_000);

  it("evolving a type: bump the version, add the migration, scaffold the new fixture; old sessions migrate on load", async () => {
    // The same project under a new path: this test process already imported the v1 modules.
    const next = join(tmp.dir, "../", `${tmp.dir.split("/").pop()}-v2`);
    cpSync(tmp.dir, next, { recursive: true });
    const nextBase = ["gen", "--project", join(next, "tsconfig.json"), "--runtime-import", join(REPO, "src/index.js")];
    try {
      writeFileSync(join(next, "src/notes.ts"), v2);
      const r = await cli([...nextBase, "--scaffold-fixtures", "--json"]);
      expect(r.stderr).toContain("acme.NotesState/v2.json is still the placeholder");
      expect(r.code).toBe(1);
      expect(r.json().migrations).toHaveLength(1);
      expect(existsSync(join(next, "test/fixtures/acme.NotesState/v2.json"))).toBe(true);
      editFixture(next, 2);
      expect(existsSync(join(next, "schemas/history/ProviderState/acme.NotesState/v1.schema.json"))).toBe(true);
      expect((await cli([...nextBase, "--check"])).code).toBe(0);

      // A session stored by version 1 loads through the generated registry, migrated.
      const old = tmp.file(
        "old.json",
        envelope({ id: "n", stateBag: { notes: { $type: "acme.NotesState", notes: ["buy milk"] } } }),
      );
      const loaded = await cli(["validate", old, "--strict", "--registry", join(next, "src/generated/registry.ts")]);
      expect(loaded.stderr).toBe("");
      expect(loaded.code).toBe(0);
      expect(loaded.stdout).toContain("migrated on load");
      expect(loaded.stdout).toContain("notes: acme.NotesState v2");
    } finally {
      rmSync(next, { recursive: true, force: true });
    }
  }, 60_000);

  it("reports type errors with file:line and exits 1, writing nothing", async () => {
    writeFileSync(
      join(tmp.dir, "src/bad.ts"),
      `import type { ProviderState } from "statebag";\nexport interface Bad extends ProviderState<string, 1> { x: string }\n`,
    );
    const r = await cli(base);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/where: .*bad\.ts:2:\d+/);
    expect(r.stderr).toContain("nothing was written");
  }, 60_000);

  it("exits 2 for a project that does not exist", async () => {
    const r = await cli(["gen", "--project", "nope/tsconfig.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no such file");
    expect(r.stderr).toContain("fix:");
  });
});
