/**
 * Without `@openai/agents-core` installed, statebag/openai-agents still loads and a
 * `StatebagSession` keeps items and run states (it never needs the SDK for that); only
 * `loadRunState` needs it, and rejects with `MissingDependencyError` naming the install command.
 * The package's absence is simulated in a child process (test/helpers/without-package.ts).
 */
import { expect, it } from "vitest";
import { repoModule, runWithoutPackage } from "../helpers/without-package.js";

it("without @openai/agents-core the session works, and loadRunState rejects with MissingDependencyError (npm i @openai/agents-core)", async () => {
  const r = await runWithoutPackage(
    "@openai/agents-core",
    `import { StatebagSession, MissingDependencyError } from ${repoModule("src/openai-agents.ts")};
import { openStore } from ${repoModule("src/stores.ts")};
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
  expect(r.code, r.stderr).toBe(0);
  expect(r.lines).toEqual([
    { items: [{ role: "user", content: "hi" }], kept: '{"$schemaVersion":"1.22"}' },
    { typed: true, code: "missing-dependency", hint: "npm i @openai/agents-core", packageName: "@openai/agents-core" },
  ]);
});
