/**
 * No import cycles among the generator's modules or the runtime's: a cycle makes load order decide
 * which bindings are initialized, and hides which module a concept belongs to. Every relative
 * import counts, type-only ones and re-exports too (`ts.preProcessFile` lists them all).
 */
import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { REPO } from "./helpers.js";

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(full));
    else if (/\.ts$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

/** Module -> the modules under the same root it imports. */
function importGraph(root: string): Map<string, string[]> {
  const files = new Set(tsFiles(root));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
    const targets = importedFiles
      .map((i) => i.fileName)
      .filter((s) => s.startsWith("."))
      .map((s) => path.resolve(path.dirname(file), s.replace(/\.js$/, ".ts")))
      .filter((t) => files.has(t));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** Each cycle once, as the repo-relative paths around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found = new Map<string, string[]>();
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") {
        const cycle = stack.slice(stack.indexOf(next)).map((f) => path.relative(REPO, f).split(path.sep).join("/"));
        const key = [...cycle].sort().join(" ");
        if (!found.has(key)) found.set(key, [...cycle, cycle[0]!]);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return [...found.values()];
}

describe("import cycles", () => {
  for (const dir of ["generator", "src/runtime"]) {
    it(`none among ${dir}/**/*.ts`, () => {
      expect(cycles(importGraph(path.join(REPO, dir))).map((c) => c.join(" -> "))).toEqual([]);
    });
  }
});
