/**
 * `statebag diff <old.schema.json> <new.schema.json>`: is the new schema able to read everything
 * the old one accepted? Exit 1 when some change is breaking.
 */
import type { Command } from "commander";
import { action, inputPath, jsonOption, type CommandContext } from "../context.js";
import { CliError, EXIT, type ExitCode, echo } from "../io.js";
import { loadCompat } from "../toolchain.js";

/** Characters of a witness printed in text output. */
const WITNESS_CHARS = 500;

interface DiffOptions {
  breakingOnly?: boolean;
  json?: boolean;
  seed?: string;
}

export function registerDiff(program: Command, context: CommandContext): void {
  program
    .command("diff")
    .summary("compare two JSON Schemas: which changes break stored data")
    .description(
      "Compares two versions of a type's JSON Schema by meaning and classifies every change: compatible (every value the old schema accepts, the new one accepts too), breaking (stored values may be rejected: bump the version and add a migration) or undecided (the check can not tell).\n\n" +
        "Every breaking change comes with a witness: a small document the old schema accepts and the new one rejects, checked against both. A change judged compatible is also tested on documents sampled from the old schema (seeded: --seed reproduces a run).\n\n" +
        "Exit 1 when any change is breaking or undecided. $refs to other files resolve relative to the referring file.",
    )
    .argument("<old>", "the old schema (e.g. schemas/history/ProviderState/acme.Notes/v1.schema.json)")
    .argument("<new>", "the new schema (e.g. schemas/ProviderState/acme.Notes.schema.json)")
    .option("--breaking-only", "list only breaking and undecided changes")
    .option("--seed <n>", "seed of the sampled documents (default 1)")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Example:
  $ statebag diff schemas/history/ProviderState/RollingSummaryState/v1.schema.json schemas/ProviderState/RollingSummaryState.schema.json`,
    )
    .action(
      action(context, (oldFile: string, newFile: string, options: DiffOptions) =>
        diff(context, oldFile, newFile, options),
      ),
    );
}

async function diff(
  context: CommandContext,
  oldFile: string,
  newFile: string,
  options: DiffOptions,
): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const { runDiff, formatDiffReport, canonicalJson } = await loadCompat(context.environment.cwd);
  const oldPath = inputPath(oldFile, context.environment);
  const newPath = inputPath(newFile, context.environment);
  const seedText = options.seed;
  const seed = seedText === undefined ? undefined : Number(seedText);
  if (seedText !== undefined && !Number.isSafeInteger(seed)) {
    throw new CliError(EXIT.usage, `--seed must be an integer, got ${JSON.stringify(seedText.slice(0, 40))}`, {
      fix: "pass --seed 1 (or the seed a report printed)",
    });
  }
  const result = runDiff(oldPath, newPath, { seed });
  if (result.exitCode === 2) {
    throw new CliError(EXIT.usage, result.report.replace(/^statebag diff: /, ""), {
      fix: "pass two JSON Schema files: the old version first, then the new one",
    });
  }
  const breaking = result.changes.filter((ch) => ch.kind === "breaking").length;
  const undecided = result.changes.filter((ch) => ch.kind === "undecided").length;
  out.result({
    ok: result.verdict === "compatible",
    verdict: result.verdict,
    breaking,
    undecided,
    compatible: result.changes.length - breaking - undecided,
    changes: result.changes,
    ...(result.sampling ? { sampling: result.sampling } : {}),
    warnings: result.warnings,
  });
  // Witnesses in full up to WITNESS_CHARS, escaped and cut (with the total length) like any echoed input.
  const formatWitness = (document: unknown): string => echo(canonicalJson(document), WITNESS_CHARS);
  const report = formatDiffReport(result.changes, {
    compatible: !options.breakingOnly,
    sampling: result.sampling,
    formatWitness,
  });
  for (const line of report.split("\n")) {
    if (line.startsWith("BREAKING")) out.line(colors.red(line));
    else if (line.startsWith("UNDECIDED")) out.line(colors.yellow(line));
    else if (line.startsWith("compatible")) out.line(colors.green(line));
    else if (line.trimStart().startsWith("witness") || line.trimStart().startsWith("budget ran out"))
      out.line(colors.dim(line));
    else if (line.startsWith("warning:")) out.line(`${colors.yellow("warning:")}${line.slice("warning:".length)}`);
    else out.line(result.verdict !== "compatible" && line !== "" ? colors.bold(line) : line);
  }
  return result.exitCode === 0 ? EXIT.ok : EXIT.failed;
}
