/**
 * The TypeScript of README.md and of every Markdown file under docs/ compiles as written: every ```ts block is
 * type-checked with the TypeScript compiler API, in-process, with `statebag` (and its subpaths)
 * mapped to the source entry modules.
 *
 * - A plain ```ts block is a module of its own (imports included): it must compile alone.
 * - Blocks marked ```ts file=<path> (only in docs/walkthroughs.md) are a project the walkthroughs
 *   build up; a later block with the same path replaces the file (the evolve walkthrough rewrites
 *   src/notes.ts). The project is checked at the end of each walkthrough, with `src/generated/`
 *   written by the real generator, exactly as `statebag gen` would write it there.
 * - ```ts no-check marks a block that is deliberately partial; they must stay rare.
 * - Packages the docs import that this repository does not install (an AI SDK provider) are
 *   declared in test/readme/stubs/, with the signature of the real package.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { generate } from "../../generator/index.js";
import { docs, projectFiles, tsBlocks, WALKTHROUGHS, type Block } from "./blocks.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const pages = docs();
const walkthroughs = pages.find((p) => p.path === WALKTHROUGHS)!.text;

/** Every block of every page, with the page it is on. */
const allBlocks = pages.flatMap((page) => tsBlocks(page.text).map((block) => ({ ...block, page: page.path })));
/** The walkthroughs' blocks (the project's files among them). */
const blocks = tsBlocks(walkthroughs);
const evolveAt = walkthroughs.split("\n").findIndex((l) => l.startsWith("## Walkthrough: evolve a type")) + 1;

/**
 * `statebag` and every subpath package.json exports, mapped to the source module its types come
 * from (`./dist/src/x.d.ts` -> `src/x.ts`). A subpath the package does not export (yet) falls back
 * to the root module, so a README import of it still type-checks against what the root offers.
 */
function statebagPaths(): Record<string, string[]> {
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
    exports?: Record<string, string | { types?: string }>;
  };
  const paths: Record<string, string[]> = {
    "statebag/*": [join(REPO, "src/index.ts")],
    // Not installed here: the docs' AI SDK example uses it (its real signature, in a stub).
    "@ai-sdk/openai": [join(REPO, "test/readme/stubs/ai-sdk-openai.d.ts")],
  };
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const types = typeof target === "string" ? target : target.types;
    if (!types?.endsWith(".d.ts")) continue; // ./package.json and the like
    const source = types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts");
    paths[subpath === "." ? "statebag" : `statebag/${subpath.replace(/^\.\//, "")}`] = [join(REPO, source)];
  }
  return paths;
}

/** This repository's compiler settings (the ones a user's strict project has too), plus the mapping. */
const compilerOptions = {
  target: "ES2022",
  module: "NodeNext",
  moduleResolution: "NodeNext",
  lib: ["ES2023"],
  types: ["node"],
  typeRoots: [join(REPO, "node_modules/@types")],
  strict: true,
  noImplicitOverride: true,
  esModuleInterop: true,
  skipLibCheck: true,
  resolveJsonModule: true,
  isolatedModules: true,
  noEmit: true,
  paths: statebagPaths(),
};

const work = mkdtempSync(join(tmpdir(), "statebag-readme-ts-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function write(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** Type-checks `files` (with whatever they import); each diagnostic as "<where>: TS<code> <text>". */
function typeCheck(root: string, files: string[], where: (file: string, line: number) => string): string[] {
  const { options, errors } = ts.convertCompilerOptionsFromJson(compilerOptions, root);
  expect(errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))).toEqual([]);
  const program = ts.createProgram(files, options);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = `TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n  ")}`;
    if (!d.file) return text;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    return `${where(d.file.fileName, line)}: ${text}`;
  });
}

/**
 * A fresh project folder: an ES module package whose tsconfig maps statebag to the sources. Its
 * node_modules links to this repository's, so the packages the docs tell users to install
 * (`openai`, `ai`, ...) resolve as in a user's app.
 */
function project(name: string): string {
  const root = join(work, name);
  write(join(root, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  write(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions, include: ["src"] }, null, 2));
  symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"), "dir");
  return root;
}

/** Writes the files, runs the real generator on the project, type-checks it; walkthrough lines in the output. */
async function checkProject(root: string, files: Map<string, Block>): Promise<string[]> {
  for (const [file, block] of files) write(join(root, file), block.code);
  const result = await generate({ cwd: root, project: join(root, "tsconfig.json"), compat: false, cache: false });
  expect(result.errors, "the generator refused the walkthroughs' types").toEqual([]);
  const byPath = new Map([...files].map(([file, block]) => [join(root, file), block]));
  const sources = ts.sys.readDirectory(join(root, "src"), [".ts"]);
  return typeCheck(root, sources, (file, line) => {
    const block = byPath.get(file);
    return block ? `${WALKTHROUGHS}:${block.line + line} (${relative(root, file)})` : relative(root, file);
  });
}

describe("README and docs/ TypeScript blocks", () => {
  it("are all checked here, except the few marked no-check", () => {
    expect(pages.map((p) => p.path)).toEqual(
      expect.arrayContaining(["README.md", "docs/README.md", WALKTHROUGHS, "docs/models-and-approvals.md"]),
    );
    expect(allBlocks.length).toBeGreaterThanOrEqual(15);
    expect(allBlocks.filter((b) => b.noCheck).length).toBeLessThanOrEqual(2);
    // The walkthroughs' project lives on one page: a file= block anywhere else would be checked nowhere.
    expect(allBlocks.filter((b) => b.file && b.page !== WALKTHROUGHS)).toEqual([]);
    expect(evolveAt).toBeGreaterThan(0);
    // Both walkthroughs are projects, and the evolve one rewrites the state type and the provider.
    expect(new Set(blocks.filter((b) => b.file).map((b) => b.file))).toEqual(
      new Set(["src/notes.ts", "src/notes-provider.ts", "src/app.ts"]),
    );
    expect(
      blocks
        .filter((b) => b.file && b.line > evolveAt)
        .map((b) => b.file)
        .sort(),
    ).toEqual(["src/notes-provider.ts", "src/notes.ts"]);
  });

  it("standalone blocks compile alone, as written", () => {
    const root = project("snippets");
    const standalone = allBlocks.filter((b) => !b.file && !b.noCheck);
    const byPath = new Map<string, Block & { page: string }>();
    for (const b of standalone) {
      // `export {}` keeps a block without imports a module (top-level await), as it is in a user's file.
      const path = join(root, "src", `${b.page.replace(/[/.]/g, "-")}-line-${b.line}.ts`);
      write(path, b.code + "export {};\n");
      byPath.set(path, b);
    }
    const problems = typeCheck(root, [...byPath.keys()], (file, line) => {
      const block = byPath.get(file);
      return block ? `${block.page}:${block.line + line}` : relative(root, file);
    });
    expect(problems).toEqual([]);
  }, 60_000);

  it("the add-a-type walkthrough compiles as a project, with the generated descriptor and registry", async () => {
    const files = projectFiles(blocks, evolveAt);
    expect([...files.keys()].sort()).toEqual(["src/app.ts", "src/notes-provider.ts", "src/notes.ts"]);
    const root = project("add-a-type");
    expect(await checkProject(root, files)).toEqual([]);
    expect(readFileSync(join(root, "src/generated/descriptors.ts"), "utf8")).toContain(
      'NotesStateType: StateDescriptor<NotesState> = { $type: "acme.NotesState", version: 1 }',
    );
  }, 120_000);

  it("the evolve walkthrough compiles after gen (v2 types, the typed migration, the updated provider); the v1 provider does not", async () => {
    const root = project("evolve");
    // First the project as the add walkthrough left it, generated, so v1 is frozen in schemas/history/.
    expect(await checkProject(root, projectFiles(blocks, evolveAt))).toEqual([]);
    const evolved = projectFiles(blocks, Infinity);
    expect(await checkProject(root, evolved)).toEqual([]);
    expect(readFileSync(join(root, "src/generated/versions.ts"), "utf8")).toMatch(
      /interface NotesState_v1[\s\S]*interface NotesState_v2/,
    );
    expect(readFileSync(join(root, "src/generated/registry.ts"), "utf8")).toContain("notesV1toV2");

    // Step 4's point: the provider from the add walkthrough no longer compiles against v2.
    const stale = new Map(evolved).set(
      "src/notes-provider.ts",
      projectFiles(blocks, evolveAt).get("src/notes-provider.ts")!,
    );
    const problems = await checkProject(root, stale);
    expect(problems.some((p) => p.includes("(src/notes-provider.ts)") && p.includes("$version"))).toBe(true);
  }, 180_000);
});
