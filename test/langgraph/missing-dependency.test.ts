/**
 * Without `@langchain/langgraph-checkpoint` installed, statebag/langgraph still loads, and
 * `createStatebagSaver` rejects with `MissingDependencyError` naming the install command. The
 * package's absence is simulated in a child process (test/helpers/without-package.ts).
 */
import { expect, it } from "vitest";
import { repoModule, runWithoutPackage } from "../helpers/without-package.js";

it("createStatebagSaver rejects with MissingDependencyError (npm i @langchain/langgraph-checkpoint) when the package is absent", async () => {
  const r = await runWithoutPackage(
    "@langchain/langgraph-checkpoint",
    `import { createStatebagSaver, MissingDependencyError } from ${repoModule("src/langgraph.ts")};
import { openStore } from ${repoModule("src/stores.ts")};
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
  expect(r.code, r.stderr).toBe(0);
  const expected = {
    typed: true,
    code: "missing-dependency",
    hint: "npm i @langchain/langgraph-checkpoint",
    packageName: "@langchain/langgraph-checkpoint",
  };
  // A second call tries again (a package installed meanwhile would be picked up) and fails the same way.
  expect(r.lines).toEqual([
    { attempt: 1, ...expected },
    { attempt: 2, ...expected },
  ]);
});
