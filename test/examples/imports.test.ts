/**
 * The examples are what users copy into their own app, so they import only what an app can:
 * `statebag` and the public subpaths package.json exports, `node:` builtins, their own files (inside
 * examples/), and packages statebag declares (dependencies and peer dependencies). Never
 * `../src/...`, never `statebag/runtime/...`, never a dev-only package.
 *
 * Inside this repository the package name resolves to the sources through tsconfig.json `paths`
 * (tsc and tsx both read them); the second test keeps that mapping in step with package.json.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLES = join(REPO, "examples");

interface PackageJson {
  exports: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as PackageJson;

/** `statebag`, and `statebag/<subpath>` for every subpath package.json exports. */
const statebagSpecifiers = new Set(Object.keys(pkg.exports).map((k) => (k === "." ? "statebag" : `statebag/${k.slice(2)}`)));
const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);

/** The package a bare specifier names: `ai/test` -> `ai`, `@ai-sdk/provider/x` -> `@ai-sdk/provider`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Why `specifier`, imported by `file`, is not something a user's app could import; undefined when it is. */
function refusal(file: string, specifier: string): string | undefined {
  if (specifier.startsWith("node:")) return undefined;
  if (specifier.startsWith(".") || specifier.startsWith("/")) {
    const target = resolve(dirname(file), specifier);
    return target === EXAMPLES || target.startsWith(EXAMPLES + sep) ? undefined : `reaches outside examples/ (${relative(REPO, target)}): import it from "statebag" or a subpath instead`;
  }
  if (specifier === "statebag" || specifier.startsWith("statebag/")) {
    if (specifier.startsWith("statebag/internal/")) return `"${specifier}" is internal (for statebag-kit), not a public API`;
    return statebagSpecifiers.has(specifier) ? undefined : `"${specifier}" is not in package.json exports (${[...statebagSpecifiers].join(", ")})`;
  }
  if (declared.has(packageOf(specifier))) return undefined;
  return `"${packageOf(specifier)}" is neither a dependency nor a peer dependency of statebag${/^[a-z_]+$/.test(specifier) ? ` (a builtin? write "node:${specifier}")` : ""}`;
}

/** Every module specifier of a file: static imports, `export ... from`, `import()` and `import type`. */
function specifiers(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

function exampleFiles(): string[] {
  return readdirSync(EXAMPLES, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(?:[cm]?ts|tsx|[cm]?js)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

describe("examples/", () => {
  it("import only statebag and its exported subpaths, node: builtins, their own files and declared dependencies", () => {
    const files = exampleFiles();
    expect(files.map((f) => relative(REPO, f))).toEqual(expect.arrayContaining(["examples/demo.ts", "examples/approval.ts"]));
    const problems: string[] = [];
    let statebagImports = 0;
    for (const file of files) {
      for (const specifier of specifiers(file)) {
        if (specifier === "statebag" || specifier.startsWith("statebag/")) statebagImports++;
        const why = refusal(file, specifier);
        if (why) problems.push(`${relative(REPO, file)}: import "${specifier}": ${why}`);
      }
    }
    expect(problems).toEqual([]);
    expect(statebagImports).toBeGreaterThan(5);
  });

  it("the check refuses what a user could not import", () => {
    const demo = join(EXAMPLES, "demo.ts");
    expect(refusal(demo, "../src/runtime/agent/agent.js")).toMatch(/outside examples/);
    expect(refusal(demo, "statebag/runtime/agent/agent.js")).toMatch(/not in package.json exports/);
    expect(refusal(demo, "statebag/internal/toolchain")).toMatch(/internal/);
    expect(refusal(demo, "vitest")).toMatch(/neither a dependency/);
    expect(refusal(demo, "fs")).toMatch(/node:fs/);
    for (const ok of ["statebag", "statebag/agent", "node:fs", "./providers/register.js", "picocolors", "openai", "@sinclair/typebox"]) expect(refusal(demo, ok), ok).toBeUndefined();
  });

  it("tsconfig.json maps statebag and every exported subpath to its source entry (what the examples run against here)", () => {
    const tsconfig = JSON.parse(readFileSync(join(REPO, "tsconfig.json"), "utf8")) as { compilerOptions: { paths?: Record<string, string[]> }; include: string[] };
    expect(tsconfig.include).toContain("examples");
    const expected: Record<string, string[]> = {};
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      const types = typeof target === "object" && target !== null ? (target as { types?: string }).types : undefined;
      if (!types) continue; // ./package.json
      expected[subpath === "." ? "statebag" : `statebag/${subpath.slice(2)}`] = [types.replace(/^\.\/dist\//, "./").replace(/\.d\.ts$/, ".ts")];
    }
    expect(tsconfig.compilerOptions.paths).toEqual(expected);
  });
});
