/**
 * Issue #20: Node 20 (end of life, still many machines' system Node) installs statebag with only
 * an engine warning. The default SQLite store must then say what is wrong (node:sqlite needs Node
 * 22.13+, or use ?driver=better-sqlite3) as a typed error, instead of a TypeError from inside the
 * driver, and create nothing. Runs on a real Node 20 when the machine has one.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const REPO = new URL("../../", import.meta.url);
const TSX = new URL("node_modules/tsx/dist/loader.mjs", REPO);

/** A Node 20 binary: $STATEBAG_TEST_NODE20, else the system one when it is Node 20. */
function findNode20(): string | undefined {
  for (const candidate of [process.env.STATEBAG_TEST_NODE20, "/usr/bin/node", "/usr/local/bin/node"]) {
    if (!candidate || !existsSync(candidate)) continue;
    const r = spawnSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" });
    if (r.status === 0 && r.stdout.trim().startsWith("20.")) return candidate;
  }
  return undefined;
}

const node20 = findNode20();
if (!node20) console.warn("[statebag tests] skipping the Node 20 test: no Node 20 binary (set STATEBAG_TEST_NODE20)");
const work = mkdtempSync(join(tmpdir(), "statebag-node20-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.skipIf(!node20)("the default SQLite store on Node 20", () => {
  it("is a typed driver-missing error naming Node 22.13+ and ?driver=better-sqlite3, creating nothing", () => {
    const script = join(work, "open-default.mts");
    writeFileSync(
      script,
      `import { openStore } from ${JSON.stringify(new URL("src/stores.ts", REPO).href)};\n` +
        "try {\n  await openStore();\n  console.log(JSON.stringify({ opened: true }));\n} catch (e) {\n" +
        "  console.log(JSON.stringify({ name: e.constructor.name, code: e.code, message: e.message, hint: e.hint, stack: e.stack }));\n}\n",
    );
    const cwd = join(work, "app");
    rmSync(cwd, { recursive: true, force: true });
    mkdirSync(cwd);
    const r = spawnSync(node20!, ["--import", TSX.href, script], {
      cwd,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split("\n").pop()!);
    expect(result.name).toBe("NodeSqliteMissingError");
    expect(result.code).toBe("driver-missing");
    expect(result.message).toMatch(/node:sqlite, is not built into Node 20\.\d+\.\d+: it needs Node 22\.13 or newer/);
    expect(result.hint).toContain("?driver=better-sqlite3");
    expect(result.stack).not.toMatch(/Cannot destructure/);
    // The default store's folder (./.statebag) is not made when the driver is not there.
    expect(readdirSync(cwd)).toEqual([]);
  });
});
