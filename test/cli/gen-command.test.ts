/**
 * `statebag gen` names the command for where it runs: `npx statebag gen` in a project with a config
 * (in every fix text and generated header), never this repository's `npm run gen`, a script a
 * user's project does not have.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cli, REPO, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-gen-command-");
afterAll(() => tmp.cleanup());

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
    paths: { statebag: [join(REPO, "src/index.ts")] },
  },
  include: ["src"],
});
mkdirSync(join(tmp.dir, "src"), { recursive: true });
const notes = (field: string) => `import type { ProviderState } from "statebag";

export interface NotesState extends ProviderState<"acme.NotesState", 1> {
  ${field}
}
`;
writeFileSync(join(tmp.dir, "src/notes.ts"), notes("notes: string[];"));

describe("statebag gen in a project with a config", () => {
  it("fix texts and generated headers say npx statebag gen, never npm run gen", async () => {
    // No golden fixture yet: the check fails, and its fix names this project's command.
    const first = await cli(["gen"], { cwd: join(tmp.dir, "src") });
    expect(first.code).toBe(1);
    expect(first.stderr).toContain("npx statebag gen --scaffold-fixtures");
    expect(first.stderr + first.stdout).not.toContain("npm run gen");
    expect(first.stderr, "the config names the project: no --project to repeat").not.toContain("--project");
    for (const file of ["registry.ts", "descriptors.ts", "versions.ts"]) {
      const header = readFileSync(join(tmp.dir, "src/generated", file), "utf8")
        .split("\n")
        .slice(0, 3)
        .join("\n");
      expect(header, file).toContain("npx statebag gen");
      expect(header, file).not.toContain("npm run gen");
    }

    // A type changed and not regenerated: --check fails and says which command regenerates.
    writeFileSync(join(tmp.dir, "src/notes.ts"), notes("notes: string[];\n  pinned?: string[];"));
    const check = await cli(["gen", "--check", "--no-compat"], { cwd: tmp.dir });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("stale");
    expect(check.stderr).toContain("fix:   run npx statebag gen and commit the result");
    expect(check.stderr).not.toContain("npm run gen");
  }, 120_000);

  it("a breaking change without a version bump: nothing written, no success mark, exit 1", async () => {
    const generated = join(tmp.dir, "src/generated/registry.ts");
    const before = readFileSync(generated, "utf8");
    writeFileSync(join(tmp.dir, "src/notes.ts"), notes("notes: number[];"));
    const r = await cli(["gen"], { cwd: tmp.dir });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("✔");
    expect(r.stdout).not.toContain("wrote");
    expect(r.stderr).toContain("acme.NotesState");
    expect(r.stderr).toContain("nothing was written");
    expect(readFileSync(generated, "utf8")).toBe(before);
  }, 120_000);

  it("in statebag's own repository the generated files name npm run gen", () => {
    const header = readFileSync(join(REPO, "src/generated/registry.ts"), "utf8").split("\n").slice(0, 3).join("\n");
    expect(header).toContain("npm run gen");
  });
});
