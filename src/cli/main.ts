/**
 * The `statebag` command line: builds the commander program and runs it.
 *
 * `runCli(argv, environment)` is the whole CLI as a function: output streams, stdin, environment
 * variables and the working directory are injected and the exit code is returned, so tests run
 * every command in-process. `bin/statebag.mjs` calls it with the real process.
 *
 * Exit codes (every command): 0 ok; 1 validation/compatibility failure; 2 usage error;
 * 3 the work could not be done (store unreachable, unexpected error).
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { createColors } from "picocolors";
import { registerChatsUpgrade } from "./commands/chats-upgrade.js";
import { registerDiff } from "./commands/diff.js";
import { registerExport } from "./commands/export.js";
import { registerGen } from "./commands/gen.js";
import { registerImport } from "./commands/import.js";
import { registerInit } from "./commands/init.js";
import { registerInspect } from "./commands/inspect.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerStoreSetup } from "./commands/store-setup.js";
import { registerStoreErase } from "./commands/store-erase.js";
import { registerStorePurge } from "./commands/store-purge.js";
import { registerStudio } from "./commands/studio.js";
import { registerValidate } from "./commands/validate.js";
import { reportError, type CommandContext } from "./context.js";
import { colorEnabled, EXIT, Output, processEnvironment, type CliEnvironment, type ExitCode } from "./io.js";
import { findProjectConfig, type ProjectConfig } from "./project-config.js";

export type { CommandContext } from "./context.js";

function packageVersion(): string {
  // src/cli/main.ts -> ../../package.json; dist/src/cli/main.js -> ../../../package.json
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "statebag" && pkg.version) return pkg.version;
    } catch {
      // try the next candidate
    }
  }
  return "0.0.0";
}

/** Builds the program. Commands report through `context.exit`; parse errors throw `CommanderError`. */
export function buildProgram(context: CommandContext): Command {
  const { environment } = context;
  const errColors = createColors(colorEnabled(environment.stderr, environment.env));
  const program = new Command("statebag")
    .description("Store, validate, evolve and restore AI-agent sessions safely.")
    .version(packageVersion(), "-V, --version", "print the statebag version")
    .helpOption("-h, --help", "show help for a command")
    .option(
      "-c, --config <file>",
      'the project config (default: statebag.config.json or package.json "statebag", from the working directory upward)',
    )
    .showHelpAfterError(errColors.dim("(add --help for usage)"))
    .configureOutput({
      writeOut: (s) => void environment.stdout.write(s),
      writeErr: (s) => void environment.stderr.write(s),
      outputError: (s, write) => write(errColors.red(s)),
    })
    .exitOverride();
  program.addHelpText(
    "after",
    `
Exit codes: 0 ok, 1 validation/compatibility failure, 2 usage error, 3 could not run or finish (store down, interrupted, unexpected error).
Project config: statebag.config.json (or a "statebag" key in package.json), found from the working directory upward; \`statebag init\` writes one.
Environment: STATEBAG_STORE (store URL, over the config's), STATEBAG_KEYRING (keyring file of an encrypted store, over the config's), NO_COLOR, STATEBAG_DEBUG=1 (stack traces).
Docs: docs/cli.md.`,
  );

  registerInit(program, context);
  registerGen(program, context);
  registerValidate(program, context);
  registerInspect(program, context);
  registerMigrate(program, context);
  registerStoreSetup(program, context);
  registerStorePurge(program, context);
  registerStoreErase(program, context);
  registerChatsUpgrade(program, context);
  registerDiff(program, context);
  registerImport(program, context);
  registerExport(program, context);
  registerStudio(program, context);
  return program;
}

/** Runs the CLI with `argv` (the arguments after the program name). Resolves to the exit code. */
export async function runCli(
  argv: readonly string[],
  environment: CliEnvironment = processEnvironment(),
): Promise<number> {
  let exitCode: ExitCode = EXIT.ok;
  let project: { config: ProjectConfig | undefined } | undefined;
  const context: CommandContext = {
    environment,
    output: (options) => new Output(environment, options.json === true),
    exit: (code) => {
      exitCode = code;
    },
    project: () =>
      (project ??= { config: findProjectConfig(environment.cwd, program.opts<{ config?: string }>().config) }).config,
  };
  const program = buildProgram(context);
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT.ok;
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version exit 0; everything commander rejects is a usage error.
      return error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version"
        ? EXIT.ok
        : EXIT.usage;
    }
    return reportError(error, environment, argv.includes("--json"));
  }
  return exitCode;
}

/** True when this module is the program being run (`tsx src/cli/main.ts ...`). */
function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return (
      new URL(import.meta.url).pathname.replace(/\.[cm]?[jt]s$/, "") ===
      new URL(`file://${entry}`).pathname.replace(/\.[cm]?[jt]s$/, "")
    );
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  runCli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.exitCode = reportError(error, processEnvironment(), false);
    },
  );
}
