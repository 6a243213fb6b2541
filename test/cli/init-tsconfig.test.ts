/**
 * The tsconfig.json `statebag init` writes compiles an app on TypeScript 5.9 and on TypeScript 7
 * (the `latest` one: it requires `rootDir` with `outDir`, TS5011, and loads no `@types` package
 * that `types` does not name, so Node's `process` was TS2591).
 */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { cli, REPO, tempDir } from "./helpers.js";

const tmp = tempDir("statebag-init-");
afterAll(() => tmp.cleanup());

const compilers = [
  { name: "TypeScript 5.9", tsc: join(REPO, "node_modules/typescript/bin/tsc"), version: /^Version 5\.9\./ },
  { name: "TypeScript 7", tsc: join(REPO, "node_modules/typescript7/bin/tsc"), version: /^Version 7\./ },
];

/** A fresh app folder with @types/node installed (linked from this repository), and `statebag init` run in it. */
async function initApp(name: string): Promise<string> {
  const dir = join(tmp.dir, name);
  mkdirSync(join(dir, "node_modules/@types"), { recursive: true });
  symlinkSync(join(REPO, "node_modules/@types/node"), join(dir, "node_modules/@types/node"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  const r = await cli(["init"], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).not.toContain("npm i -D @types/node"); // installed: no advice
  // An app module that uses what a Node app does: process, import.meta, top-level await, a sibling import.
  writeFileSync(
    join(dir, "src/config.ts"),
    "export const storeUrl: string | undefined = process.env.STATEBAG_STORE;\n",
  );
  writeFileSync(
    join(dir, "src/app.ts"),
    'import { storeUrl } from "./config.js";\nawait Promise.resolve();\nconsole.log(storeUrl ?? "sqlite", import.meta.url, process.argv.length);\n',
  );
  return dir;
}

describe("statebag init's tsconfig.json", () => {
  it("names rootDir and Node's types", async () => {
    const dir = await initApp("options");
    const { compilerOptions } = JSON.parse(readFileSync(join(dir, "tsconfig.json"), "utf8")) as {
      compilerOptions: Record<string, unknown>;
    };
    expect(compilerOptions).toMatchObject({ rootDir: "src", outDir: "dist", types: ["node"], module: "NodeNext" });
  });

  for (const { name, tsc, version } of compilers) {
    it(`builds the app with ${name}: no error, src/ lands in dist/`, async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [tsc, "--version"]);
      expect(stdout).toMatch(version);
      const dir = await initApp(`app-${name.replace(/\W+/g, "")}`);
      const build = await promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).then(
        () => ({ code: 0, stdout: "" }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );
      expect(build.stdout).toBe("");
      expect(build.code).toBe(0);
      expect(existsSync(join(dir, "dist/app.js"))).toBe(true);
    }, 60_000);
  }

  it("without @types/node installed, init says to install it", async () => {
    const dir = join(tmp.dir, "bare");
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bare", private: true, type: "module" }));
    const r = await cli(["init"], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("npm i -D @types/node");
  });
});
