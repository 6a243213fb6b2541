#!/usr/bin/env node
// The `statebag` command.
//
// An installed package runs the compiled CLI (dist/). A checkout runs the TypeScript sources
// through tsx, so `npx statebag` works without a build; it still uses dist/ when dist/ is at least
// as new as every source file (a stale build would silently run old code).
// STATEBAG_FROM_SOURCE=1 forces the sources.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = new URL("../", import.meta.url);
const compiled = fileURLToPath(new URL("dist/src/cli/main.js", root));

/** Newest modification time (ms) of the .ts files under `dirs`, or 0 when there are none. */
function newestSource(dirs) {
  let newest = 0;
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of dirs) walk(fileURLToPath(new URL(dir, root)));
  return newest;
}

function compiledIsCurrent() {
  if (process.env.STATEBAG_FROM_SOURCE === "1" || !existsSync(compiled)) return false;
  return statSync(compiled).mtimeMs >= newestSource(["src", "generator"]);
}

// `statebag ... | head` closes the pipe early: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

let cli;
if (compiledIsCurrent()) {
  cli = await import(new URL("dist/src/cli/main.js", root).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import(new URL("src/cli/main.ts", root).href);
}

process.exitCode = await cli.runCli(process.argv.slice(2));
