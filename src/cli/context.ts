/**
 * What command modules share: the context they are registered with, the common options, and the
 * one way errors are reported (what, where, how to fix; a stack trace only with STATEBAG_DEBUG=1).
 */
import { isAbsolute, resolve } from "node:path";
import { Option } from "commander";
import { createColors } from "picocolors";
import { ConfigurationError, StatebagError } from "../runtime/core/errors.js";
// url.ts, not the stores' index: the CLI loads store drivers only in commands that open a store.
import { parseSqliteUrl } from "../runtime/stores/sqlite/url.js";
import { DEFAULT_STORE_URL } from "../runtime/stores/url.js";
import { CliError, colorEnabled, EXIT, Output, safeOutput, type CliEnvironment, type ExitCode } from "./io.js";
import type { ProjectConfig } from "./project-config.js";

/** What each command module receives. */
export interface CommandContext {
  environment: CliEnvironment;
  /** Output helpers for one command invocation (`--json` decides the mode). */
  output(options: { json?: boolean }): Output;
  /** Records the exit code of the command that ran. */
  exit(code: ExitCode): void;
  /**
   * The project config (`--config`, else the nearest statebag.config.json or package.json "statebag"
   * key from the working directory upward); undefined when there is none. Read on first use.
   */
  project(): ProjectConfig | undefined;
}

/** The `--json` option, shared by every command that reports. */
export function jsonOption(): Option {
  return new Option("--json", "print one JSON document on stdout instead of text (for scripts and CI)");
}

/** The `--store <url>` option. */
export function storeOption(): Option {
  return new Option(
    "--store <url>",
    `session store URL: sqlite:./path.db, postgres://user@host/db, redis://host:6379/0 (default: $STATEBAG_STORE, else the config's "store", else ${DEFAULT_STORE_URL})`,
  );
}

/**
 * The store URL a command uses: `--store`, else `$STATEBAG_STORE`, else the project config's
 * `store`, else the default SQLite file.
 */
export function storeUrl(option: string | undefined, environment: CliEnvironment, configured?: string): string {
  const url = option ?? environment.env.STATEBAG_STORE ?? configured ?? DEFAULT_STORE_URL;
  if (url.trim() === "") {
    throw new CliError(EXIT.usage, "the store URL is empty", {
      fix: "pass --store sqlite:./sessions.db (or postgres://..., redis://...)",
    });
  }
  // A relative SQLite path is relative to the working directory the CLI was given (a file: URI is
  // left whole: made "relative", its "//user:pass@host" part would pass the store's check as a path).
  const sqlite = /^sqlite:(?!\/\/)(?!:memory:)(?!file:)(.*)$/i.exec(url);
  // Checked as written first: once made absolute, "user:pass@host/x.db" would pass as a path.
  if (sqlite && sqlite[1] !== "" && !isAbsolute(sqlite[1]))
    return (parseSqliteUrl(url), `sqlite:${resolve(environment.cwd, sqlite[1])}`);
  return url;
}

/** A path given on the command line, resolved against the CLI's working directory. */
export function inputPath(file: string, environment: CliEnvironment): string {
  return resolve(environment.cwd, file);
}

function isDebug(environment: CliEnvironment): boolean {
  const debug = environment.env.STATEBAG_DEBUG;
  return debug === "1" || debug === "true";
}

/** Prints an error and returns the exit code it maps to. */
export function reportError(error: unknown, environment: CliEnvironment, json: boolean): ExitCode {
  const colors = createColors(colorEnabled(environment.stderr, environment.env));
  const debug = isDebug(environment);
  let code: ExitCode = EXIT.runtime;
  let message: string;
  let where: string | undefined;
  let fix: string | undefined;
  let errorCode: string | undefined;
  if (error instanceof CliError) {
    code = error.exitCode;
    message = error.message;
    where = error.details.where;
    fix = error.details.fix;
    const cause = error.details.cause;
    if (cause instanceof StatebagError) errorCode = cause.code;
  } else if (error instanceof StatebagError) {
    // The hint is printed once, as the fix line.
    message = messageOf(error);
    fix = error.hint;
    errorCode = error.code;
    // Misuse (a bad URL, id or option) is a usage error, whatever its specific code.
    if (error instanceof ConfigurationError) code = EXIT.usage;
  } else {
    message = `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
    if (!debug)
      fix = "rerun with STATEBAG_DEBUG=1 for the stack trace, and report it if it looks like a bug in statebag";
  }
  const lines = [`${colors.red(colors.bold("error:"))} ${message}`];
  if (where) lines.push(`  ${colors.dim("where:")} ${where}`);
  if (fix) lines.push(`  ${colors.dim("fix:")}   ${fix}`);
  if (debug && error instanceof Error && error.stack) {
    lines.push(colors.dim(error.stack));
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error && cause.stack) lines.push(colors.dim(`caused by: ${cause.stack}`));
  }
  environment.stderr.write(safeOutput(lines.join("\n"), colorEnabled(environment.stderr, environment.env)) + "\n");
  if (json) {
    const body: { message: string; where?: string; fix?: string; code?: string } = { message };
    if (where) body.where = where;
    if (fix) body.fix = fix;
    if (errorCode) body.code = errorCode;
    environment.stdout.write(JSON.stringify({ ok: false, error: body }, null, 2) + "\n");
  }
  return code;
}

/**
 * Wraps a command's action: its result is the exit code; any error is reported and mapped to one.
 * The last argument commander passes is the Command; its options tell whether `--json` was set.
 */
export function action<A extends unknown[]>(
  context: CommandContext,
  run: (...args: A) => Promise<ExitCode>,
): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const command = args[args.length - 1] as { opts?: () => { json?: boolean } } | undefined;
    const json = command?.opts?.().json === true;
    try {
      context.exit(await run(...args));
    } catch (error) {
      context.exit(reportError(error, context.environment, json));
    }
  };
}

/** The message of any thrown value (a StatebagError's hint is its own field, printed as the fix). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export { Output };
