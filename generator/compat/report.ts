/**
 * `statebag diff old.schema.json new.schema.json`: the verdict, the report and the exit code.
 */
import fs from "node:fs";
import path from "node:path";
import {
  type AssessedChange,
  type Assessment,
  type Budget,
  type SamplingReport,
  type Verdict,
  assessCompatibility,
} from "./assess.js";
import type { Change } from "./rule-catalogue.js";
import { type JsonSchema, type SchemaDoc, displayPointer, isObject } from "./schema.js";
import { witnessText } from "./witness.js";

export interface DiffReportOptions {
  /** Also list compatible changes (default true). */
  compatible?: boolean;
  /** How sampling went, for the summary (the seed reproduces a counterexample). */
  sampling?: SamplingReport;
  /** How a witness is printed (default `witnessText`: canonical JSON, escaped, cut at ~500 characters with the total length). */
  formatWitness?: (document: unknown) => string;
}

/** How budgets are named in text output. */
export const BUDGET_NAMES: Record<Budget, string> = {
  "witness-work": "witness work",
  "automaton-size": "automaton size",
  sampling: "sampling time",
};

/** The warnings of an assessment, for text and JSON output: sampling that drew nothing, budgets that ran out. */
export function assessmentWarnings(changes: readonly AssessedChange[], sampling: SamplingReport | undefined): string[] {
  const out: string[] = [];
  if (sampling?.warning) out.push(sampling.warning);
  else if (sampling?.budget)
    out.push(`sampling stopped at its time budget after ${sampling.drawn} document${sampling.drawn === 1 ? "" : "s"}`);
  const budgets = [...new Set(changes.flatMap((c) => (c.kind === "undecided" && c.budget ? [c.budget] : [])))];
  for (const budget of budgets)
    out.push(
      `the ${BUDGET_NAMES[budget]} budget ran out: some changes are undecided because of it, not because of what they mean`,
    );
  return out;
}

const LABEL: Record<Change["kind"], string> = {
  breaking: "BREAKING",
  undecided: "UNDECIDED",
  compatible: "compatible",
};
const ORDER: Record<Change["kind"], number> = { breaking: 0, undecided: 1, compatible: 2 };

/**
 * One line per change, breaking ones first, each breaking one followed by its witness:
 * `BREAKING    /summary  required property added (rule: add-required)`, then a summary line.
 */
export function formatDiffReport(changes: readonly AssessedChange[], options: DiffReportOptions = {}): string {
  const show = options.formatWitness ?? ((document: unknown) => witnessText(document));
  const shown = options.compatible === false ? changes.filter((c) => c.kind !== "compatible") : [...changes];
  const breaking = changes.filter((c) => c.kind === "breaking").length;
  const undecided = changes.filter((c) => c.kind === "undecided").length;
  const compatible = changes.length - breaking - undecided;
  if (changes.length === 0) return "No changes: every value the old schema accepts, the new one accepts.";
  const sorted = shown.sort(
    (a, b) => ORDER[a.kind] - ORDER[b.kind] || (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0),
  );
  const width = Math.min(48, Math.max(...sorted.map((c) => displayPointer(c.pointer).length), 0));
  const lines = sorted.flatMap((c) => {
    const line = `${LABEL[c.kind].padEnd(10)}  ${displayPointer(c.pointer).padEnd(width)}  ${c.message} (rule: ${c.rule})`;
    const budget =
      c.kind === "undecided" && c.budget ? [`${" ".repeat(12)}budget ran out: ${BUDGET_NAMES[c.budget]}`] : [];
    if (!c.witness) return [line, ...budget];
    const how = c.witness.source === "sampled" ? `sampled, seed ${c.witness.seed}` : "old accepts, new rejects";
    return [line, `${" ".repeat(12)}witness (${how}): ${show(c.witness.document)}`];
  });
  const plural = changes.length === 1 ? "" : "s";
  const summary =
    breaking > 0
      ? `${breaking} breaking, ${undecided > 0 ? `${undecided} undecided, ` : ""}${compatible} compatible change${plural}: values stored with the old schema may be rejected; bump the type's version and add a migration.`
      : undecided > 0
        ? `${undecided} undecided, ${compatible} compatible change${plural}: the check can not tell whether every value the old schema accepts is still accepted; treat it as breaking (bump the version and add a migration) unless you are sure.`
        : `${compatible} compatible change${compatible === 1 ? "" : "s"}: every value the old schema accepts, the new one accepts.`;
  const sp = options.sampling;
  const sampled = sp
    ? [
        sp.drawn === 0
          ? `Sampling: no document drawn from the old schema (seed ${sp.seed}).`
          : `Sampling: ${sp.drawn} document${sp.drawn === 1 ? "" : "s"} drawn from the old schema (seed ${sp.seed}), ${sp.accepted === sp.drawn ? "all" : sp.accepted} accepted by the new one${sp.timedOut ? "; stopped by the time budget" : ""}${sp.error ? `; ${sp.error}` : ""}.`,
      ]
    : [];
  const warnings = assessmentWarnings(changes, sp).map((w) => `warning: ${w}`);
  return [...lines, "", summary, ...sampled, ...warnings].join("\n");
}

export interface RunDiffResult {
  changes: AssessedChange[];
  /** `compatible`, `breaking` (with witnesses) or `undecided`. */
  verdict: Verdict;
  sampling?: SamplingReport;
  /** Sampling that drew nothing, budgets that ran out (also in the report's text). */
  warnings: string[];
  /** 0: compatible (or no change); 1: breaking or undecided; 2: a file could not be read. */
  exitCode: 0 | 1 | 2;
  /** The text to print (the report, or what went wrong reading the files). */
  report: string;
}

export interface RunDiffOptions {
  /** Seed of sampling and of witnesses found by sampling (default 1). */
  seed?: number;
  /** Documents sampled from the old schema when the analysis finds the change compatible (default 300). */
  samples?: number;
}

/** Loads two schema files and assesses the change; `$ref`s to other files resolve relative to the referring file. */
export function runDiff(oldPath: string, newPath: string, options: RunDiffOptions = {}): RunDiffResult {
  let oldSchema: JsonSchema;
  let newSchema: JsonSchema;
  try {
    oldSchema = readSchemaFile(oldPath);
    newSchema = readSchemaFile(newPath);
  } catch (error) {
    return {
      changes: [],
      verdict: "undecided",
      exitCode: 2,
      warnings: [],
      report: `statebag diff: ${(error as Error).message}`,
    };
  }
  const cache = new Map<string, SchemaDoc | undefined>();
  const resolveExternalRef = (ref: string, base: string | undefined): SchemaDoc | undefined => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(ref)) return undefined; // URLs: not fetched
    const file = path.resolve(base ? path.dirname(base) : process.cwd(), decodeURIComponent(ref));
    if (!cache.has(file)) {
      try {
        cache.set(file, { root: readSchemaFile(file), base: file });
      } catch {
        cache.set(file, undefined);
      }
    }
    return cache.get(file);
  };
  const assessment: Assessment = assessCompatibility(oldSchema, newSchema, {
    resolveExternalRef,
    oldBase: path.resolve(oldPath),
    newBase: path.resolve(newPath),
    seed: options.seed,
    samples: options.samples,
  });
  const { changes, verdict, sampling } = assessment;
  const result: RunDiffResult = {
    changes,
    verdict,
    exitCode: verdict === "compatible" ? 0 : 1,
    warnings: assessmentWarnings(changes, sampling),
    report: formatDiffReport(changes, { sampling }),
  };
  if (sampling) result.sampling = sampling;
  return result;
}

function readSchemaFile(file: string): JsonSchema {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "boolean" && !isObject(parsed))
    throw new Error(`${file} is not a JSON Schema (an object or a boolean)`);
  return parsed as JsonSchema;
}
