/** The README and docs/ stay true: the quick start, their imports, the 30-second example, the bench markers, the install lines. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { docs } from "../readme/blocks.js";
import { REPO, tempDir } from "./helpers.js";

const readme = readFileSync(join(REPO, "README.md"), "utf8");
const pages = docs();
const tsBlocksOf = (text: string) => [...text.matchAll(/```ts(?: [^\n]*)?\n([\s\S]*?)```/g)].map((m) => m[1]);
const tsBlocks = tsBlocksOf(readme);
const tmp = tempDir("statebag-readme-");
afterAll(() => tmp.cleanup());

/** The source entry module of `statebag` or a subpath (`statebag/agent` -> src/agent.ts; the root until a subpath has one). */
function entryModule(specifier: string): string {
  const sub = specifier.slice("statebag/".length);
  return join(REPO, "src", sub && existsSync(join(REPO, "src", `${sub}.ts`)) ? `${sub}.ts` : "index.ts");
}

describe("README.md and docs/", () => {
  it("the README has the two quick-start commands, and stays a first page", () => {
    const quick = readme.slice(readme.indexOf("## Quick start"));
    expect(quick).toContain("```sh\nnpm ci && npm run demo\nnpm test\n```");
    expect(readme.split("\n").length).toBeLessThanOrEqual(260);
  });

  it("import from statebag and its subpaths only what their entry modules export", async () => {
    const names = new Map<string, Set<string>>();
    for (const page of pages) {
      for (const block of tsBlocksOf(page.text)) {
        for (const m of block.matchAll(/import \{([^}]*)\} from "(statebag(?:\/[\w-]+)?)"/g)) {
          const set = names.get(m[2]) ?? new Set<string>();
          names.set(m[2], set);
          for (const part of m[1]
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean))
            if (!part.startsWith("type ")) set.add(part);
        }
      }
    }
    expect([...names.values()].reduce((n, set) => n + set.size, 0)).toBeGreaterThan(5);
    expect([...names.keys()]).toEqual(expect.arrayContaining(["statebag/openai", "statebag/ai-sdk"]));
    for (const [specifier, wanted] of names) {
      const module = (await import(entryModule(specifier))) as Record<string, unknown>;
      const missing = [...wanted].filter((n) => !(n in module));
      expect(
        missing,
        `the docs import these from "${specifier}", but ${entryModule(specifier)} does not export them`,
      ).toEqual([]);
    }
  });

  it("the 30-second example runs and prints what it says", async () => {
    const example = tsBlocks.find((b) => b.includes('withSession(store, "user-42"'));
    expect(example).toBeDefined();
    const code = example!
      .replace(
        /from "(statebag(?:\/[\w-]+)?)"/g,
        (_, specifier: string) => `from ${JSON.stringify(entryModule(specifier))}`,
      )
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

  it("the stored JSON the README shows is what the 30-second example stores (ids aside)", async () => {
    const shown = /```json\n(\{"format":"statebag\.session"[^\n]*)\n```/.exec(readme)?.[1];
    expect(shown).toBeDefined();
    const example = tsBlocks.find((b) => b.includes('withSession(store, "user-42"'))!;
    const code =
      `import { serializeSession } from ${JSON.stringify(entryModule("statebag"))};\n` +
      example
        .replace(
          /from "(statebag(?:\/[\w-]+)?)"/g,
          (_, specifier: string) => `from ${JSON.stringify(entryModule(specifier))}`,
        )
        .replace("openStore()", 'openStore("memory:")')
        .replace(/^console\.log\(value\.text\);.*$/m, "") +
      '\nexport const stored = serializeSession((await store.get("user-42"))!.session);\nawait store.close();\n';
    const { stored } = (await import(tmp.file("stored.ts", code))) as { stored: string };
    // The scripted client's message ids carry a random tag per instance: msg_<hex>_<n>.
    // Messages without an id get msg-<uuid> when the history records them.
    const ids = (text: string) =>
      text
        .replace(/"messageId":"msg_[0-9a-f]+_(\d+)"/g, '"messageId":"msg_<tag>_$1"')
        .replace(/"messageId":"msg-[0-9a-f-]{36}"/g, '"messageId":"msg-<uuid>"');
    expect(ids(shown!)).toBe(ids(stored));
  });

  it("docs/performance.md has the markers the bench writes its table between", () => {
    const performance = readFileSync(join(REPO, "docs/performance.md"), "utf8");
    expect(performance.indexOf("<!-- bench:start -->")).toBeGreaterThan(0);
    expect(performance.indexOf("<!-- bench:end -->")).toBeGreaterThan(performance.indexOf("<!-- bench:start -->"));
  });

  it("every page installs the generator toolchain the same way: statebag-kit, never its compilers one by one", () => {
    const installs = pages.flatMap((page) =>
      page.text
        .split("\n")
        .filter((l) => /^(npm|pnpm|bun|yarn) (i|install|add)\b/.test(l))
        .map((l) => ({ page: page.path, line: l.replace(/\s+#.*$/, "").trim() })),
    );
    const kit = installs.filter((i) => i.line.includes("statebag-kit"));
    expect(kit.map((i) => i.page)).toEqual(expect.arrayContaining(["README.md", "docs/walkthroughs.md"]));
    // Always a dev dependency (it is a build tool), by name or as the packed tarball, never at another version.
    for (const i of kit) {
      expect(i.line, i.page).toMatch(/ (--save-dev|-D) /);
      expect(i.line, i.page).toMatch(/ (statebag-kit|\S*statebag-kit-0\.1\.0\.tgz)( |$)/);
    }
    // The compilers are the kit's own dependencies: installing them beside it would pin the app's typescript.
    expect(installs.filter((i) => /\b(ts-morph|typescript-json-schema|json-schema-faker|refa)\b/.test(i.line))).toEqual(
      [],
    );
  });
});
