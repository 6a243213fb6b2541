/** The README stays true: its quick start, its imports, its 30-second example, its bench markers. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { REPO, tempDir } from "./helpers.js";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const tsBlocks = [...readme.matchAll(/```ts(?: [^\n]*)?\n([\s\S]*?)```/g)].map((m) => m[1]);
const tmp = tempDir("statebag-readme-");
const root = await import("../../src/index.js");
afterAll(() => tmp.cleanup());

describe("README.md", () => {
  it("has the two quick-start commands", () => {
    const quick = readme.slice(readme.indexOf("## Quick start"));
    expect(quick).toContain("```sh\nnpm ci && npm run demo\nnpm test\n```");
  });

  it("imports from \"statebag\" only what the package root exports", () => {
    const names = new Set<string>();
    for (const block of tsBlocks) {
      for (const m of block.matchAll(/import \{([^}]*)\} from "statebag"/g)) {
        for (const part of m[1].split(",").map((s) => s.trim()).filter(Boolean)) if (!part.startsWith("type ")) names.add(part);
      }
    }
    expect(names.size).toBeGreaterThan(5);
    const missing = [...names].filter((n) => !(n in root));
    expect(missing, `README imports these from "statebag", but src/index.ts does not export them`).toEqual([]);
  });

  it("the 30-second example runs and prints what it says", async () => {
    const example = tsBlocks.find((b) => b.includes("withSession(store, \"user-42\""));
    expect(example).toBeDefined();
    const code = example!
      .replace('from "statebag"', `from ${JSON.stringify(join(REPO, "src/index.ts"))}`)
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

