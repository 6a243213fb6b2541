/** The README stays true: its quick start, its imports, its 30-second example, its bench markers. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { REPO, tempDir } from "./helpers.js";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const tsBlocks = [...readme.matchAll(/```ts(?: [^\n]*)?\n([\s\S]*?)```/g)].map((m) => m[1]);
const tmp = tempDir("statebag-readme-");
afterAll(() => tmp.cleanup());

/** The source entry module of `statebag` or a subpath (`statebag/agent` -> src/agent.ts; the root until a subpath has one). */
function entryModule(specifier: string): string {
  const sub = specifier.slice("statebag/".length);
  return join(REPO, "src", sub && existsSync(join(REPO, "src", `${sub}.ts`)) ? `${sub}.ts` : "index.ts");
}

describe("README.md", () => {
  it("has the two quick-start commands", () => {
    const quick = readme.slice(readme.indexOf("## Quick start"));
    expect(quick).toContain("```sh\nnpm ci && npm run demo\nnpm test\n```");
  });

  it("imports from statebag and its subpaths only what their entry modules export", async () => {
    const names = new Map<string, Set<string>>();
    for (const block of tsBlocks) {
      for (const m of block.matchAll(/import \{([^}]*)\} from "(statebag(?:\/[\w-]+)?)"/g)) {
        const set = names.get(m[2]) ?? new Set<string>();
        names.set(m[2], set);
        for (const part of m[1].split(",").map((s) => s.trim()).filter(Boolean)) if (!part.startsWith("type ")) set.add(part);
      }
    }
    expect([...names.values()].reduce((n, set) => n + set.size, 0)).toBeGreaterThan(5);
    for (const [specifier, wanted] of names) {
      const module = (await import(entryModule(specifier))) as Record<string, unknown>;
      const missing = [...wanted].filter((n) => !(n in module));
      expect(missing, `README imports these from "${specifier}", but ${entryModule(specifier)} does not export them`).toEqual([]);
    }
  });

  it("the 30-second example runs and prints what it says", async () => {
    const example = tsBlocks.find((b) => b.includes("withSession(store, \"user-42\""));
    expect(example).toBeDefined();
    const code = example!
      .replace(/from "(statebag(?:\/[\w-]+)?)"/g, (_, specifier: string) => `from ${JSON.stringify(entryModule(specifier))}`)
      .replace("openStore()", 'openStore("memory:")');
    const file = tmp.file("example.ts", code + "\nawait store.close();\n");
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      await import(file);
      expect(log).toHaveBeenCalledWith("Your name is Ada.");
    } finally {
      log.mockRestore();
    }
  });

  it("has the markers the bench writes the performance table between", () => {
    expect(readme.indexOf("<!-- bench:start -->")).toBeGreaterThan(0);
    expect(readme.indexOf("<!-- bench:end -->")).toBeGreaterThan(readme.indexOf("<!-- bench:start -->"));
  });
});

