/**
 * Without `@langchain/langgraph-checkpoint` installed, statebag/langgraph still loads, and
 * `createStatebagSaver` rejects with `MissingDependencyError` naming the install command. The
 * package's absence is simulated in a child process by a module resolve hook that answers "not
 * found" for it, exactly as Node does when it is not installed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { REPO } from "../cli/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-lg-missing-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

it("createStatebagSaver rejects with MissingDependencyError (npm i @langchain/langgraph-checkpoint) when the package is absent", async () => {
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier === "@langchain/langgraph-checkpoint" || specifier.startsWith("@langchain/langgraph-checkpoint/")) {
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
  writeFileSync(
    script,
    `import { createStatebagSaver, MissingDependencyError } from ${JSON.stringify(join(REPO, "src/langgraph.ts"))};
import { openStore } from ${JSON.stringify(join(REPO, "src/stores.ts"))};
const store = await openStore("memory:");
for (const attempt of [1, 2]) {
  try {
    await createStatebagSaver(store);
    console.log(JSON.stringify({ attempt, created: true }));
  } catch (error) {
    const e = error as MissingDependencyError;
    console.log(JSON.stringify({ attempt, typed: e instanceof MissingDependencyError, code: e.code, hint: e.hint, packageName: e.packageName }));
  }
}
await store.close();
`,
  );
  // tsx first, the hook after it: the hook registered last is asked first.
  const tsx = pathToFileURL(join(REPO, "node_modules/tsx/dist/esm/index.mjs")).href;
  const r = await run(["--import", tsx, "--import", pathToFileURL(register).href, script]);
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const expected = {
    typed: true,
    code: "missing-dependency",
    hint: "npm i @langchain/langgraph-checkpoint",
    packageName: "@langchain/langgraph-checkpoint",
  };
  // A second call tries again (a package installed meanwhile would be picked up) and fails the same way.
  expect(lines).toEqual([
    { attempt: 1, ...expected },
    { attempt: 2, ...expected },
  ]);
});
