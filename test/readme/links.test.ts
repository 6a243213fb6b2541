/**
 * Every relative link of the README, docs/ and CONTRIBUTING.md leads somewhere: the file exists,
 * and a `#anchor` names a heading of the target page (GitHub's heading ids). Moving text between
 * pages is how links break; this is the net.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { docs } from "./blocks.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

/** Text outside fenced code blocks (links in code are not links). */
function prose(text: string): string {
  return text.replace(/^ *```[\s\S]*?^ *```\s*$/gm, "");
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, ... */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

const pages = [...docs(), { path: "CONTRIBUTING.md", text: readFileSync(join(REPO, "CONTRIBUTING.md"), "utf8") }];

describe("links in README.md, docs/ and CONTRIBUTING.md", () => {
  it("the heading ids are GitHub's", () => {
    expect([
      ...anchors(
        "## Walkthrough: add a provider type\n### OpenAI and compatible servers: `OpenAIChatClient`\n## TypeScript 5.9 to 7\n## A\n## A",
      ),
    ]).toEqual([
      "walkthrough-add-a-provider-type",
      "openai-and-compatible-servers-openaichatclient",
      "typescript-59-to-7",
      "a",
      "a-1",
    ]);
  });

  it("every relative link names an existing file, and every #anchor a heading of its page", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const m of prose(page.text).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:, ...
        checked++;
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const file = path === "" ? join(REPO, page.path) : join(REPO, dirname(page.path), path);
        if (!existsSync(file)) {
          broken.push(`${page.path}: ${target}: no file ${relative(REPO, file)}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (statSync(file).isDirectory() || !file.endsWith(".md")) {
          broken.push(`${page.path}: ${target}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!anchors(readFileSync(file, "utf8")).has(anchor))
          broken.push(`${page.path}: ${target}: ${relative(REPO, file)} has no heading #${anchor}`);
      }
    }
    expect(checked).toBeGreaterThan(40);
    expect(broken).toEqual([]);
  });
});
