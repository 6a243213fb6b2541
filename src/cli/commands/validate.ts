/**
 * `statebag validate <file...|->`: checks stored session documents (files, or stdin with `-`)
 * exactly as loading them would: parse limits, envelope, migrations, every tagged value against
 * its type's schema. Prints ok, or every problem with its JSON pointer.
 */
import type { Command } from "commander";
import { quoted } from "../../runtime/core/json.js";
import { MAX_ID_LENGTH } from "../../runtime/stores/errors.js";
import { action, inputPath, jsonOption, type CommandContext } from "../context.js";
import { CliError, echo, EXIT, type ExitCode } from "../io.js";
import {
  DEFAULT_MAX_BYTES,
  DocumentTooLargeError,
  maxBytesOption,
  readDocumentFile,
  readStdinBytes,
} from "../read-document.js";
import { resolveRegistry, unknownTypesFix, unknownTypesSummary } from "../registry.js";
import {
  checkDocument,
  listedLines,
  migrationSummary,
  plural,
  preservedLine,
  problemLines,
  stateLine,
  type DocumentReport,
} from "../session-report.js";

interface ValidateOptions {
  strict?: boolean;
  allowUnknown?: boolean;
  registry?: string;
  quiet?: boolean;
  maxBytes?: number;
  json?: boolean;
}

export function registerValidate(program: Command, context: CommandContext): void {
  program
    .command("validate")
    .summary("validate stored session JSON files (or stdin)")
    .description(
      "Loads each document the way the runtime does (safe JSON parse, envelope, migrations, one validator per $type) and reports ok, or every problem with its JSON pointer, what was expected and how to fix it.\n\n" +
        "A value whose $type the CLI does not know (or whose version is newer than it knows) cannot be checked: the file is then reported as not checked and the exit code is 1, unless --allow-unknown. The project's types come from the registry module named in statebag.config.json, or --registry.\n\n" +
        'Accepts the stored form ({"format": "statebag.session", ...}), a document of several sessions ({"format": "statebag.sessions", ...}) and a bare session (JSON.stringify(session)).',
    )
    .argument("<files...>", 'session JSON files; "-" reads one document from stdin')
    .option("--strict", "unknown $types and versions newer than this code are problems: the document does not load")
    .option(
      "--allow-unknown",
      "values of unknown $types or newer versions are kept and reported, and do not fail the run",
    )
    .option(
      "--registry <module>",
      'your project\'s registry module, so your own types are checked too (default: "registry" in the project config)',
    )
    .option("-q, --quiet", "print only failures")
    .addOption(maxBytesOption())
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag validate session.json
  $ statebag validate exports/*.json --strict      # your types from statebag.config.json's "registry"
  $ cat session.json | statebag validate - --json`,
    )
    .action(action(context, (files: string[], options: ValidateOptions) => validate(context, files, options)));
}

interface FileReport extends Omit<DocumentReport, "loaded"> {
  file: string;
  /** Loaded, but some values could not be checked (unknown type, newer version). */
  unchecked: number;
  /** Set when the file could not be read at all. */
  error?: string;
}

async function validate(context: CommandContext, files: string[], options: ValidateOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { environment } = context;
  const { c: colors } = out;
  if (files.filter((f) => f === "-").length > 1) throw new CliError(EXIT.usage, 'stdin ("-") can be given only once');
  const source = await resolveRegistry(options.registry, context);
  const { registry } = source;
  const reports: FileReport[] = [];
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const progress = await out.progress();
  if (files.length > 20) progress.start(files.length, "validating");
  let code: ExitCode = EXIT.ok;
  for (const file of files) {
    const name = file === "-" ? "(stdin)" : file;
    // Bytes, not text: the loader decodes them strictly (invalid UTF-8 is its error, not U+FFFD).
    let bytes: Buffer;
    try {
      bytes =
        file === "-"
          ? await readStdinBytes(environment.stdin, maxBytes)
          : await readDocumentFile(inputPath(file, environment), file, maxBytes);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      if (error instanceof DocumentTooLargeError) {
        // Refused from its size, as the loader would refuse it: a failed document (exit 1), never read.
        const problem = {
          code: "json" as const,
          pointer: "",
          expected: `at most ${error.maxBytes} bytes`,
          found: `${error.bytes} bytes`,
          message: error.message,
          ...(error.details.fix ? { hint: error.details.fix } : {}),
        };
        reports.push({
          file: name,
          ok: false,
          unchecked: 0,
          sessions: [],
          problems: [problem],
          preserved: [],
          migrated: false,
          migrations: [],
        });
        out.line(`${colors.red("✖")} ${colors.bold(echo(name))}: ${error.reason}`);
        if (error.details.fix) out.line(`    ${colors.cyan("fix:")} ${error.details.fix}`);
        if (code === EXIT.ok) code = EXIT.failed;
        progress.increment();
        continue;
      }
      reports.push({
        file: name,
        ok: false,
        unchecked: 0,
        error: error.message,
        sessions: [],
        problems: [],
        preserved: [],
        migrated: false,
        migrations: [],
      });
      out.note(
        `${out.ce.red("error:")} ${error.message}\n  ${out.ce.dim("where:")} ${echo(error.details.where ?? name)}\n  ${out.ce.dim("fix:")}   ${error.details.fix}`,
      );
      code = EXIT.usage;
      progress.increment();
      continue;
    }
    const { loaded: _loaded, ...report } = checkDocument(bytes, {
      registry,
      strict: options.strict === true,
      maxBytes,
    });
    const unchecked = report.ok ? report.preserved.length : 0;
    reports.push({ file: name, ...report, unchecked });
    // A value the CLI could not check is not "valid": it fails the run unless --allow-unknown.
    if ((!report.ok || (unchecked > 0 && !options.allowUnknown)) && code === EXIT.ok) code = EXIT.failed;
    progress.increment();
    if (report.ok && unchecked > 0) {
      const what =
        report.sessions.length === 1
          ? `session ${quoted(report.sessions[0].id, MAX_ID_LENGTH)}`
          : plural(report.sessions.length, "session");
      out.line(
        `${colors.yellow("?")} ${colors.bold(name)}: ${what} not fully checked: ${unknownTypesSummary(report.preserved)}`,
      );
      for (const line of listedLines(report.preserved, (p) => preservedLine(p, colors), "    ")) out.line(line);
      out.line(
        `    ${colors.cyan("fix:")} ${unknownTypesFix(source)}${options.allowUnknown ? "" : colors.dim(" (or pass --allow-unknown to accept them unchecked)")}`,
      );
      continue;
    }
    if (report.ok) {
      if (options.quiet) continue;
      const what =
        report.sessions.length === 1
          ? `session ${quoted(report.sessions[0].id, MAX_ID_LENGTH)}`
          : plural(report.sessions.length, "session");
      out.line(
        `${colors.green("✔")} ${colors.bold(name)}: ${what} valid${report.migrated ? colors.yellow(` (older versions, migrated on load: ${migrationSummary(report.migrations)})`) : ""}`,
      );
      const states = report.sessions.flatMap((s) =>
        s.state.map((st) => (report.sessions.length > 1 ? `${echo(s.id)}: ` : "") + stateLine(st)),
      );
      for (const line of listedLines(states, (l) => colors.dim(l), "    ")) out.line(line);
    } else {
      out.line(`${colors.red("✖")} ${colors.bold(name)}: ${plural(report.problems.length, "problem")}`);
      for (const line of problemLines(report.problems, colors, "    ")) out.line(line);
    }
    for (const line of listedLines(report.preserved, (p) => preservedLine(p, colors), "    ")) out.line(line);
  }
  progress.stop();
  const valid = reports.filter((r) => r.ok && r.unchecked === 0).length;
  const partly = reports.filter((r) => r.ok && r.unchecked > 0).length;
  if (files.length > 1) {
    const summary = `${valid} of ${files.length} valid${partly ? `, ${partly} not fully checked` : ""}`;
    out.line(valid === files.length ? colors.green(summary) : colors.red(summary));
  }
  out.result({ ok: code === EXIT.ok, valid, unchecked: partly, total: files.length, files: reports });
  return code;
}
