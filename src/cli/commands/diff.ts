/**
 * `statebag diff <old.schema.json> <new.schema.json>`: is the new schema able to read everything
 * the old one accepted? Exit 1 when some change is breaking.
 */
import type { Command } from "commander";
import { action, inputPath, jsonOption, type CommandContext } from "../context.js";
import { CliError, EXIT, type ExitCode } from "../io.js";

interface DiffOptions {
  breakingOnly?: boolean;
  json?: boolean;
}

export function registerDiff(program: Command, context: CommandContext): void {
  program
    .command("diff")
    .summary("compare two JSON Schemas: which changes break stored data")
    .description(
      "Compares two versions of a type's JSON Schema and classifies every change: compatible (every value the old schema accepts, the new one accepts too) or breaking (stored values may be rejected: bump the version and add a migration).\n\n" +
        "Exit 1 when any change is breaking. $refs to other files resolve relative to the referring file.",
    )
    .argument("<old>", "the old schema (e.g. schemas/history/ProviderState/acme.Notes/v1.schema.json)")
    .argument("<new>", "the new schema (e.g. schemas/ProviderState/acme.Notes.schema.json)")
    .option("--breaking-only", "list only breaking changes")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Example:
  $ statebag diff schemas/history/ProviderState/RollingSummaryState/v1.schema.json schemas/ProviderState/RollingSummaryState.schema.json`,
    )
    .action(action(context, (oldFile: string, newFile: string, options: DiffOptions) => diff(context, oldFile, newFile, options)));
}

async function diff(context: CommandContext, oldFile: string, newFile: string, options: DiffOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c } = out;
  const { runDiff, formatDiffReport } = await import("../../../generator/compat/index.js");
  const oldPath = inputPath(oldFile, context.environment);
  const newPath = inputPath(newFile, context.environment);
  const result = runDiff(oldPath, newPath);
  if (result.exitCode === 2) {
    throw new CliError(EXIT.usage, result.report.replace(/^statebag diff: /, ""), { fix: "pass two JSON Schema files: the old version first, then the new one" });
  }
  const breaking = result.changes.filter((ch) => ch.kind === "breaking").length;
  out.result({ ok: breaking === 0, breaking, compatible: result.changes.length - breaking, changes: result.changes });
  const report = formatDiffReport(result.changes, { compatible: !options.breakingOnly });
  for (const line of report.split("\n")) {
    if (line.startsWith("BREAKING")) out.line(c.red(line));
    else if (line.startsWith("compatible")) out.line(c.green(line));
    else out.line(breaking > 0 && line !== "" ? c.bold(line) : line);
  }
  return breaking > 0 ? EXIT.failed : EXIT.ok;
}
