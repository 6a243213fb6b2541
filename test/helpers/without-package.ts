/**
 * Runs a TypeScript script in a child Node process where one package is absent: a module resolve
 * hook answers "not found" for it (and its subpaths), exactly as Node does when it is not
 * installed. The optional-peer tests use it to prove an entry point loads without its package and
 * fails with a typed error only where the package is needed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../cli/helpers.js";

export interface ScriptRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout, one JSON value per line. */
  lines: unknown[];
}

/** Runs `source` (TypeScript, through tsx) with `packageName` hidden; returns its output. */
export async function runWithoutPackage(packageName: string, source: string): Promise<ScriptRun> {
  const dir = mkdtempSync(join(tmpdir(), "statebag-without-"));
  try {
    const hooks = join(dir, "hooks.mjs");
    writeFileSync(
      hooks,
      `const name = ${JSON.stringify(packageName)};
export async function resolve(specifier, context, next) {
  if (specifier === name || specifier.startsWith(name + "/")) {
    const error = new Error("Cannot find package '" + specifier + "'");
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}\n`,
    );
    const register = join(dir, "register.mjs");
    writeFileSync(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const script = join(dir, "app.mts");
    writeFileSync(script, source);
    // tsx first, the hook after it: the hook registered last is asked first.
    const tsx = pathToFileURL(join(REPO, "node_modules/tsx/dist/esm/index.mjs")).href;
    const run = await new Promise<Omit<ScriptRun, "lines">>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", tsx, "--import", pathToFileURL(register).href, script], {
        cwd: dir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      child.on("error", reject);
      child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
    const lines =
      run.code === 0
        ? run.stdout
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line) as unknown)
        : [];
    return { ...run, lines };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An absolute import specifier for a source file of this repository, for a script's text. */
export const repoModule = (path: string): string => JSON.stringify(join(REPO, path));
