/**
 * Without `@openai/agents-core` installed, statebag/openai-agents still loads and a
 * `StatebagSession` keeps items and run states (it never needs the SDK for that); only
 * `loadRunState` needs it, and rejects with `MissingDependencyError` naming the install command.
 * The package's absence is simulated in a child process by a module resolve hook that answers
 * "not found" for it, exactly as Node does when it is not installed.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, it } from "vitest";
import { REPO } from "../cli/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-oa-missing-"));
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

it("without @openai/agents-core the session works, and loadRunState rejects with MissingDependencyError (npm i @openai/agents-core)", async () => {
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier === "@openai/agents-core" || specifier.startsWith("@openai/agents-core/")) {
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
    `import { StatebagSession, MissingDependencyError } from ${JSON.stringify(join(REPO, "src/openai-agents.ts"))};
import { openStore } from ${JSON.stringify(join(REPO, "src/stores.ts"))};
const store = await openStore("memory:");
const session = new StatebagSession({ store, sessionId: "s" });
await session.addItems([{ role: "user", content: "hi" }]);
await session.saveRunState('{"$schemaVersion":"1.22"}');
console.log(JSON.stringify({ items: await session.getItems(), kept: await session.getRunStateString() }));
try {
  await session.loadRunState({ name: "agent" });
  console.log(JSON.stringify({ loaded: true }));
} catch (error) {
  const e = error as MissingDependencyError;
  console.log(JSON.stringify({ typed: e instanceof MissingDependencyError, code: e.code, hint: e.hint, packageName: e.packageName }));
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
  expect(lines).toEqual([
    { items: [{ role: "user", content: "hi" }], kept: '{"$schemaVersion":"1.22"}' },
    { typed: true, code: "missing-dependency", hint: "npm i @openai/agents-core", packageName: "@openai/agents-core" },
  ]);
});
