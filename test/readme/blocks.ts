/** The ```ts blocks of the README and docs/, for the tests that type-check and run them. */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

export interface Doc {
  /** Path from the repository root, e.g. `docs/walkthroughs.md`. */
  path: string;
  text: string;
}

/** The user documentation: README.md and every Markdown file under docs/, README first. */
export function docs(): Doc[] {
  const files = readdirSync(join(REPO, "docs"), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".md"))
    .map((e) => relative(REPO, join(e.parentPath, e.name)))
    .sort();
  return ["README.md", ...files].map((path) => ({ path, text: readFileSync(join(REPO, path), "utf8") }));
}

/** The page holding the walkthroughs' project (the ```ts file=... blocks). */
export const WALKTHROUGHS = "docs/walkthroughs.md";

export interface Block {
  /** Line of the first code line in its Markdown file (1-based). */
  line: number;
  /** `file=<path>`: a file of the walkthroughs' project. */
  file?: string;
  /** `no-check`: deliberately partial, not type-checked. */
  noCheck: boolean;
  code: string;
}

/** Every ```ts fence (also indented ones inside list items), with its info string and its code dedented. */
export function tsBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```ts(?:\s+(.*))?$/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const info = open[2] ?? "";
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^ *```\s*$/.test(lines[j]); j++)
      body.push(lines[j].slice(Math.min(indent, lines[j].length - lines[j].trimStart().length)));
    blocks.push({
      line: i + 2,
      file: /(?:^|\s)file=(\S+)/.exec(info)?.[1],
      noCheck: /(?:^|\s)no-check(?:\s|$)/.test(info),
      code: body.join("\n") + "\n",
    });
    i = j;
  }
  return blocks;
}

/** The walkthroughs' files as they stand after line `upTo` of their page: a later block of a path replaces the earlier one. */
export function projectFiles(blocks: readonly Block[], upTo: number): Map<string, Block> {
  const files = new Map<string, Block>();
  for (const b of blocks) if (b.file && !b.noCheck && b.line <= upTo) files.set(b.file, b);
  return files;
}
