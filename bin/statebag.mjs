#!/usr/bin/env node
// The `statebag` command. Runs the compiled CLI (dist/) when there is one, as in an installed
// package; otherwise runs the TypeScript sources through tsx, so `npx statebag` works in a fresh
// checkout without a build. STATEBAG_FROM_SOURCE=1 forces the sources even when dist/ exists.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = new URL("../", import.meta.url);
const compiled = new URL("dist/src/cli/main.js", root);

let cli;
if (existsSync(fileURLToPath(compiled)) && process.env.STATEBAG_FROM_SOURCE !== "1") {
  cli = await import(compiled.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import(new URL("src/cli/main.ts", root).href);
}

process.exitCode = await cli.runCli(process.argv.slice(2));
