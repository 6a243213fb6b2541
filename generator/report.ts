/**
 * What a run reports: the result `generate()` returns, and the lines `npm run gen` prints for it
 * (per-type records are `TypeSummary`, in summary.ts, since the cache stores them too).
 */
import type { CompatResult } from "./compat-run.js";
import { displayPointer } from "./compat/schema.js";
import { formatError, formatWarning, type GenError } from "./errors.js";
import type { MigrationSummary } from "./migrations.js";
import { isCurrent, type GeneratedFile } from "./output.js";
import type { TypeSummary } from "./summary.js";

export interface GenerateResult {
  ok: boolean;
  /** 0 success, 1 generator errors or (check) stale output, 2 usage error: what the CLI exits with. */
  exitCode: 0 | 1 | 2;
  errors: GenError[];
  /** Findings that do not fail the run: a `format` the runtime does not know (`unknown-format`), left unchecked. */
  warnings: GenError[];
  /** Every file the generator produces (empty when there are errors). */
  files: GeneratedFile[];
  types: TypeSummary[];
  /** Files whose content differs from what is generated (relative to cwd). */
  stale: string[];
  /** Files that do not exist yet. */
  missing: string[];
  /** Generated files on disk that would no longer be generated. */
  extra: string[];
  /** Files written / deleted by this run (always empty with `check`). */
  written: string[];
  deleted: string[];
  /** Frozen schemas newly recorded in `schemas/history/frozen.lock.json` (lock keys). */
  recorded: string[];
  cacheHit: boolean;
  /** Declared migration steps (`export const ... = defineMigration(...)`), in file and line order. */
  migrations: MigrationSummary[];
  /** The compatibility check's findings, when it ran. */
  compat?: CompatResult;
  /** Golden fixtures scaffolded by this run (`scaffoldFixtures`), relative to cwd. */
  scaffolded: string[];
}

/** The result of a run that stopped before producing anything. */
export function emptyResult(exitCode: 0 | 1 | 2, errors: GenError[]): GenerateResult {
  return {
    ok: exitCode === 0,
    exitCode,
    errors,
    warnings: [],
    files: [],
    types: [],
    stale: [],
    missing: [],
    extra: [],
    written: [],
    deleted: [],
    recorded: [],
    cacheHit: false,
    migrations: [],
    scaffolded: [],
  };
}

/** The report the CLI prints (also handy in tests). */
export function formatResult(result: GenerateResult, check: boolean): string[] {
  if (result.errors.length > 0)
    return [...result.errors.map(formatError), `${result.errors.length} error(s); nothing was written.`];
  return [...result.warnings.map(formatWarning), ...resultLines(result, check)];
}

function resultLines(result: GenerateResult, check: boolean): string[] {
  const compat = formatCompat(result);
  if (result.compat?.blocked)
    return [...compat, "nothing was written: stored sessions would not survive this change (see the fixes above)."];
  if (check) {
    if (isCurrent(result))
      return [`generated files are current (${result.files.length} files, ${result.types.length} types).`, ...compat];
    return [
      ...result.stale.map((f) => `stale: ${f}`),
      ...result.missing.map((f) => `missing: ${f}`),
      ...result.extra.map((f) => `extra: ${f}`),
      // Running gen would refuse while a finding stored data would not survive stands: say that, not "run the generator".
      result.compat?.wouldBlock
        ? "generated files are out of date, and gen writes nothing until the problems below are fixed (see each fix)."
        : "generated files are out of date; run the generator.",
      ...compat,
    ];
  }
  const changes = [
    ...result.written.map((f) => `wrote ${f}`),
    ...result.deleted.map((f) => `deleted ${f}`),
    ...result.scaffolded.map((f) => `scaffolded ${f} (edit it into a realistic stored value)`),
    ...(result.recorded.length > 0 ? [`recorded ${result.recorded.length} frozen schema(s) in the history lock`] : []),
    ...(result.compat?.retired.length
      ? [`reserved renamed type(s) in retired.json: ${result.compat.retired.join(", ")}`]
      : []),
  ];
  return [
    ...changes,
    `${result.types.length} types, ${result.files.length} files${changes.length === 0 ? ", all current" : ""}${result.cacheHit ? " (cached)" : ""}.`,
    ...compat,
  ];
}

/** The compatibility check's lines: one per failure (type, pointer, rule, fix), or a summary. */
function formatCompat(result: GenerateResult): string[] {
  const compat = result.compat;
  if (!compat) return [];
  if (compat.failures.length === 0) {
    const loaded = compat.loaded.length;
    return [
      `schemas compatible: ${result.types.length} types, ${result.migrations.length} migration(s), every version has a golden fixture` +
        (loaded > 0 ? `; ${loaded} fixture(s) load through the migrations and validate at the latest version.` : "."),
    ];
  }
  const failureCount = compat.failures.length;
  return [
    `compatibility check: ${failureCount} problem${failureCount === 1 ? "" : "s"}`,
    ...compat.failures.flatMap((f) => [
      `  ${f.type}: ${displayPointer(f.pointer)}: ${f.message} (rule: ${f.rule}). Fix: ${f.fix}`,
      ...(f.details ?? []).map((d) => `    ${d}`),
    ]),
  ];
}
