/**
 * The examples are what users copy into their own app, so they import only what an app can:
 * `statebag` and the public subpaths package.json exports, `node:` builtins, their own files, and
 * the packages declared (dependencies, peer or optional dependencies) in the nearest package.json
 * above the file: statebag's own for examples/*.ts, examples/chat-app/package.json for the chat
 * app (an app of its own: its page imports react and @ai-sdk/react, which statebag does not
 * depend on). Never `../src/...`, never `statebag/runtime/...`, never a dev-only package.
 *
 * Inside this repository the package name resolves to the sources through tsconfig.json `paths`
 * (tsc and tsx both read them), and a nested app's packages from the root node_modules; the last
 * tests keep that mapping in step with package.json and check the chat app's page types.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { typeCheckProject } from "../helpers/type-check.js";

const REPO = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const EXAMPLES = join(REPO, "examples");
const CHAT_APP = join(EXAMPLES, "chat-app");

interface PackageJson {
  name?: string;
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const readPackage = (dir: string) => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
const pkg = readPackage(REPO);

/** `statebag`, and `statebag/<subpath>` for every subpath package.json exports. */
const statebagSpecifiers = new Set(
  Object.keys(pkg.exports!).map((k) => (k === "." ? "statebag" : `statebag/${k.slice(2)}`)),
);

/** The folder of the nearest package.json above `file` (up to the repository root), and what it declares. */
function nearestPackage(file: string): { dir: string; declared: Set<string> } {
  let dir = dirname(file);
  while (dir.startsWith(REPO + sep) && !existsSync(join(dir, "package.json"))) dir = dirname(dir);
  if (!dir.startsWith(REPO + sep)) dir = REPO;
  const json = readPackage(dir);
  return {
    dir,
    declared: new Set([
      ...Object.keys(json.dependencies ?? {}),
      ...Object.keys(json.peerDependencies ?? {}),
      ...Object.keys(json.optionalDependencies ?? {}),
    ]),
  };
}

/** The package a bare specifier names: `ai/test` -> `ai`, `@ai-sdk/provider/x` -> `@ai-sdk/provider`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Why `specifier`, imported by `file`, is not something a user's app could import; undefined when it is. */
function refusal(file: string, specifier: string): string | undefined {
  if (specifier.startsWith("node:")) return undefined;
  const owner = nearestPackage(file);
  const app = owner.dir === REPO ? "statebag" : relative(REPO, join(owner.dir, "package.json"));
  if (specifier.startsWith(".") || specifier.startsWith("/")) {
    // Its own files: inside examples/, and inside its own app when it has a package.json.
    const root = owner.dir === REPO ? EXAMPLES : owner.dir;
    const target = resolve(dirname(file), specifier);
    return target === root || target.startsWith(root + sep)
      ? undefined
      : `reaches outside ${relative(REPO, root)}/ (${relative(REPO, target)}): import it from "statebag" or a subpath instead`;
  }
  if (specifier === "statebag" || specifier.startsWith("statebag/")) {
    if (specifier.startsWith("statebag/internal/"))
      return `"${specifier}" is internal (for statebag-kit), not a public API`;
    if (!statebagSpecifiers.has(specifier))
      return `"${specifier}" is not in package.json exports (${[...statebagSpecifiers].join(", ")})`;
    return owner.dir === REPO || owner.declared.has("statebag") ? undefined : `"statebag" is not declared in ${app}`;
  }
  if (owner.declared.has(packageOf(specifier))) return undefined;
  const what =
    owner.dir === REPO
      ? "a dependency nor a peer dependency of statebag"
      : `declared in ${app} (dependencies, peer or optional dependencies)`;
  return `"${packageOf(specifier)}" is neither ${what}${/^[a-z_]+$/.test(specifier) ? ` (a builtin? write "node:${specifier}")` : ""}`;
}

/** Every module specifier of a file: static imports, `export ... from`, `import()` and `import type`. */
function specifiers(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

function exampleFiles(): string[] {
  return readdirSync(EXAMPLES, { recursive: true, withFileTypes: true })
    .filter(
      (e) =>
        e.isFile() && !e.parentPath.split(sep).includes("node_modules") && /\.(?:[cm]?ts|[cm]?js|[jt]sx)$/.test(e.name),
    )
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

describe("examples/", () => {
  it("import only statebag and its exported subpaths, node: builtins, their own files and declared dependencies", () => {
    const files = exampleFiles();
    expect(files.map((f) => relative(REPO, f))).toEqual(
      expect.arrayContaining([
        "examples/demo.ts",
        "examples/approval.ts",
        "examples/chat-app/server.ts",
        "examples/chat-app/client/app.tsx",
      ]),
    );
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
    for (const ok of [
      "statebag",
      "statebag/agent",
      "node:fs",
      "./providers/register.js",
      "picocolors",
      "openai",
      "@sinclair/typebox",
    ])
      expect(refusal(demo, ok), ok).toBeUndefined();
    // statebag's examples may not import the chat app's packages...
    expect(refusal(demo, "react")).toMatch(/neither a dependency/);
    expect(refusal(demo, "@ai-sdk/react")).toMatch(/neither a dependency/);
    // ...and the chat app imports what its own package.json declares, not what statebag happens to depend on.
    const page = join(CHAT_APP, "client", "app.tsx");
    for (const ok of ["react", "react-dom/client", "@ai-sdk/react", "ai", "statebag/http", "./app.css", "../server.js"])
      expect(refusal(page, ok), ok).toBeUndefined();
    expect(refusal(page, "picocolors")).toMatch(/not declared|neither .*examples\/chat-app\/package\.json/);
    expect(refusal(page, "esbuild")).toMatch(/examples\/chat-app\/package\.json/); // a devDependency: a build tool, not an import
    expect(refusal(page, "vitest")).toMatch(/examples\/chat-app\/package\.json/);
    expect(refusal(page, "../../demo.js")).toMatch(/outside examples\/chat-app/);
  });

  it("examples/chat-app is an app of its own: its package.json declares statebag and the page's packages, and each resolves from the app's folder", () => {
    const app = readPackage(CHAT_APP);
    expect(Object.keys(app.dependencies ?? {})).toEqual(
      expect.arrayContaining(["statebag", "react", "react-dom", "@ai-sdk/react", "ai"]),
    );
    expect(Object.keys(app.devDependencies ?? {})).toContain("esbuild");
    // `npm run chat` from the root: whatever the app declares resolves from its folder (falling back to the root node_modules).
    // (Node's lookup: node_modules/<name> in the folder, then in each folder above it.)
    const installed = (name: string) => {
      for (let dir = CHAT_APP; ; dir = dirname(dir)) {
        if (existsSync(join(dir, "node_modules", name, "package.json"))) return true;
        if (dir === REPO) return false;
      }
    };
    for (const name of [...Object.keys(app.dependencies ?? {}), ...Object.keys(app.devDependencies ?? {})]) {
      if (name === "statebag") continue; // tsconfig.json paths: the sources
      expect(installed(name), name).toBe(true);
    }
  });

  it("the chat app's page type-checks with its own tsconfig (DOM, react-jsx)", () => {
    const { files, errors } = typeCheckProject(join(CHAT_APP, "tsconfig.json"));
    expect(files).toContain(join("client", "app.tsx"));
    expect(errors).toEqual([]);
  }, 60_000);

  it("tsconfig.json maps statebag and every exported subpath to its source entry (what the examples run against here)", () => {
    const tsconfig = JSON.parse(readFileSync(join(REPO, "tsconfig.json"), "utf8")) as {
      compilerOptions: { paths?: Record<string, string[]> };
      include: string[];
    };
    expect(tsconfig.include).toContain("examples");
    const expected: Record<string, string[]> = {};
    for (const [subpath, target] of Object.entries(pkg.exports!)) {
      const types = typeof target === "object" && target !== null ? (target as { types?: string }).types : undefined;
      if (!types) continue; // ./package.json
      expected[subpath === "." ? "statebag" : `statebag/${subpath.slice(2)}`] = [
        types.replace(/^\.\/dist\//, "./").replace(/\.d\.ts$/, ".ts"),
      ];
    }
    expect(tsconfig.compilerOptions.paths).toEqual(expected);
  });
});
