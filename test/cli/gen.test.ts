/** `statebag gen` on a small project of its own (the "use statebag in your project" flow). */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, envelope, REPO, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-gen-");
afterAll(() => tmp.cleanup());

const index = join(REPO, "src/index.ts");
tmp.file("package.json", { type: "module" });
tmp.file("tsconfig.json", {
  compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, skipLibCheck: true, types: [], paths: { statebag: [index] } },
  include: ["src"],
});
const source = (extra = "") => `import type { ProviderState } from "statebag";

/** Notes a provider keeps per session. */
export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  notes: string[];${extra}
}
`;
const { mkdirSync } = await import("node:fs");
mkdirSync(join(tmp.dir, "src"), { recursive: true });
writeFileSync(join(tmp.dir, "src/notes.ts"), source());

// Generated code imports statebag's runtime from here (a published project uses "statebag").
const runtime = join(REPO, "src/index.js");
const project = join(tmp.dir, "tsconfig.json");
const base = ["gen", "--project", project, "--runtime-import", runtime];

describe("statebag gen", () => {
  it("generates schemas and a registry for a project, then --check passes", async () => {
    const r = await cli([...base, "--json"]);
    expect(r.code).toBe(0);
    const out = r.json();
    expect(out.types).toEqual([expect.objectContaining({ $type: "acme.NotesState", family: "ProviderState", version: 1 })]);
    expect(existsSync(join(tmp.dir, "schemas/ProviderState/acme.NotesState.schema.json"))).toBe(true);
    expect(existsSync(join(tmp.dir, "schemas/history/ProviderState/acme.NotesState/v1.schema.json"))).toBe(true);
    expect(readFileSync(join(tmp.dir, "src/generated/registry.ts"), "utf8")).toContain("acme.NotesState");

    const check = await cli([...base, "--check"]);
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("generated files are current");
  }, 60_000);

  it("the generated registry makes `validate --registry` check the project's own types", async () => {
    const file = tmp.file("session.json", envelope({ id: "n", stateBag: { notes: { $type: "acme.NotesState", notes: ["a"] } } }));
    const registry = join(tmp.dir, "src/generated/registry.ts");
    expect((await cli(["validate", file, "--strict", "--registry", registry])).code).toBe(0);
    const bad = tmp.file("bad.json", envelope({ id: "n", stateBag: { notes: { $type: "acme.NotesState", notes: [1] } } }));
    const r = await cli(["validate", bad, "--registry", registry]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("/session/stateBag/notes/notes/0");
  });

  it("--check exits 1 when a type changed and the output was not regenerated", async () => {
    writeFileSync(join(tmp.dir, "src/notes.ts"), source("\n  pinned?: boolean;"));
    const r = await cli([...base, "--check"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/stale\s+.*acme\.NotesState\.schema\.json/);
    expect(r.stderr).toContain(`fix:   run statebag gen --project ${project}`);
  }, 60_000);

  it("reports type errors with file:line and exits 1, writing nothing", async () => {
    writeFileSync(join(tmp.dir, "src/bad.ts"), `import type { ProviderState } from "statebag";\nexport interface Bad extends ProviderState<string, 1> { x: string }\n`);
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
