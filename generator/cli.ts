/**
 * `npm run gen` (tsx generator/cli.ts): thin wrapper over generate(), with the compatibility check
 * (generator/compat) on. Exit codes: 0 done/current and compatible, 1 generator errors, (--check)
 * stale output, or compatibility failures, 2 usage error.
 */
import { Command, CommanderError } from "commander";
import { generate } from "./index.js";
import { formatResult } from "./report.js";

const program = new Command("gen")
  .description("Generate JSON Schemas, the polymorphic registry and precompiled validators from $type-tagged types.")
  .option("--project <tsconfig>", "a user project's tsconfig.json (default: this repo's src/)")
  .option("--out <dir>", "generated modules directory (default: <project>/src/generated)")
  .option("--schemas <dir>", "JSON Schema directory (default: <project>/schemas)")
  .option(
    "--runtime-import <module>",
    'module generated code imports runtime types from (default: "statebag" with --project)',
  )
  .option(
    "--check",
    "write nothing; exit 1 when generated files are stale, missing or extra, or the compatibility check fails",
  )
  .option("--fixtures <dir>", "golden fixtures directory, <dir>/<$type>/v<N>.json (default: <project>/test/fixtures)")
  .option(
    "--scaffold-fixtures",
    "write a starting-point fixture for every type and version that has none (never overwrites)",
  )
  .option("--no-compat", "skip the compatibility check (frozen history, version bumps, migrations, fixtures)")
  .option("--no-cache", "ignore and do not update the no-op cache")
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

async function main(): Promise<number> {
  try {
    program.parse(process.argv);
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    throw e;
  }
  if (program.args.length > 0) {
    process.stderr.write(`error usage: unexpected argument ${program.args[0]}\n`);
    return 2;
  }
  const opts = program.opts<{
    project?: string;
    out?: string;
    schemas?: string;
    runtimeImport?: string;
    check?: boolean;
    cache: boolean;
    compat: boolean;
    fixtures?: string;
    scaffoldFixtures?: boolean;
  }>();
  const result = await generate({
    ...opts,
    check: opts.check ?? false,
    scaffoldFixtures: opts.scaffoldFixtures ?? false,
  });
  const lines = formatResult(result, opts.check ?? false);
  (result.exitCode === 0 ? process.stdout : process.stderr).write(lines.join("\n") + "\n");
  return result.exitCode;
}

// Exit when the event loop drains, not at once: tsx writes its compiled-module cache
// asynchronously, and an immediate exit loses it (every run would compile the generator again).
// A handle left open (a pool, a watcher) must not keep the process alive: exit a second later.
main().then(
  (code) => {
    process.exitCode = code;
    setTimeout(() => process.exit(code), 1000).unref();
  },
  (e: unknown) => {
    process.stderr.write(`statebag gen crashed: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
