/**
 * The public API, entry point by entry point: the names each of statebag's `exports` subpaths
 * offers, values (what `import()` returns) and types (what TypeScript sees), compared with the
 * committed list in exports.snapshot.json. Adding, removing or moving a name fails here until the
 * list is updated on purpose:
 *
 *   UPDATE_API_SNAPSHOT=1 npx vitest run test/api
 *
 * and the snapshot's diff goes into the same commit as the change.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const REPO = join(import.meta.dirname, "../..");
const SNAPSHOT = join(import.meta.dirname, "exports.snapshot.json");
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as {
  exports: Record<string, string | { types: string; import: string }>;
};

interface Surface {
  values: string[];
  types: string[];
}

/** Every code subpath of `exports` and the source module its `dist/` file is built from. */
const entries = Object.entries(pkg.exports)
  .filter((entry): entry is [string, { types: string; import: string }] => typeof entry[1] === "object")
  .map(([subpath, target]) => {
    const match = /^\.\/dist\/(src\/[a-z-]+(?:\/[a-z-]+)?)\.js$/.exec(target.import);
    if (!match) throw new Error(`exports["${subpath}"].import is not a dist/src module: ${target.import}`);
    return {
      name: subpath === "." ? "statebag" : `statebag/${subpath.slice(2)}`,
      subpath,
      target,
      source: join(REPO, `${match[1]}.ts`),
    };
  });

/** The names each entry module exports, split into values and type-only names, as TypeScript sees them. */
function typeSurface(): Map<string, Surface> {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(REPO, "tsconfig.json"),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const program = ts.createProgram(
    entries.map((e) => e.source),
    { ...config.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const surfaces = new Map<string, Surface>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry.source)!;
    const surface: Surface = { values: [], types: [] };
    for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? surface.values : surface.types).push(symbol.name);
    }
    surfaces.set(entry.name, { values: surface.values.sort(), types: surface.types.sort() });
  }
  return surfaces;
}

describe("the public API", () => {
  it("every code entry point has types and import conditions pointing at the matching dist/ files", () => {
    expect(entries.map((e) => e.name)).toContain("statebag");
    for (const { subpath, target } of entries) {
      expect(Object.keys(target), subpath).toEqual(["types", "import"]);
      expect(target.types, subpath).toBe(target.import.replace(/\.js$/, ".d.ts"));
    }
  });

  it("entry modules name every export (no `export *`), so nothing internal leaks in", () => {
    for (const { source } of entries) expect(readFileSync(source, "utf8"), source).not.toMatch(/^export \*/m);
  });

  it("each entry point exports exactly the names in exports.snapshot.json", async () => {
    const surfaces = typeSurface();
    for (const entry of entries) {
      // What the module really exports at run time must be what TypeScript calls its values.
      const runtime = Object.keys(await import(pathToFileURL(entry.source).href)).sort();
      expect(runtime, `${entry.name}: run-time exports vs. TypeScript's value exports`).toEqual(
        surfaces.get(entry.name)!.values,
      );
    }
    const actual = Object.fromEntries(surfaces);
    if (process.env.UPDATE_API_SNAPSHOT) writeFileSync(SNAPSHOT, JSON.stringify(actual, null, 2) + "\n");
    const committed = JSON.parse(readFileSync(SNAPSHOT, "utf8")) as Record<string, Surface>;
    expect(
      actual,
      "the public API changed: if on purpose, run UPDATE_API_SNAPSHOT=1 npx vitest run test/api and commit the snapshot",
    ).toEqual(committed);
  }, 120_000);

  it("a name offered by two entry points (the model clients' errors) is the same object in both", async () => {
    const seen = new Map<string, { entry: string; value: unknown }>();
    const differ: string[] = [];
    for (const entry of entries) {
      for (const [name, value] of Object.entries(await import(pathToFileURL(entry.source).href))) {
        const first = seen.get(name);
        if (first && first.value !== value) differ.push(`${name} (${first.entry}, ${entry.name})`);
        if (!first) seen.set(name, { entry: entry.name, value });
      }
    }
    expect(differ).toEqual([]);
  });
});
