/**
 * `statebag diff old.schema.json new.schema.json`: the report and the exit code.
 */
import fs from "node:fs";
import path from "node:path";
import { type Change, diffSchemas } from "./diff.js";
import { type JsonSchema, type SchemaDoc, displayPointer, isObject } from "./schema.js";

export interface DiffReportOptions {
  /** Also list compatible changes (default true). */
  compatible?: boolean;
}

/**
 * One line per change, breaking ones first:
 * `BREAKING    /summary  required property added (rule: add-required)`, then a summary line.
 */
export function formatDiffReport(changes: readonly Change[], options: DiffReportOptions = {}): string {
  const shown = options.compatible === false ? changes.filter((c) => c.kind === "breaking") : [...changes];
  const breaking = changes.filter((c) => c.kind === "breaking").length;
  const compatible = changes.length - breaking;
  if (changes.length === 0) return "No changes: every value the old schema accepts, the new one accepts.";
  const order = (c: Change): number => (c.kind === "breaking" ? 0 : 1);
  const sorted = shown.sort((a, b) => order(a) - order(b) || (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0));
  const width = Math.min(48, Math.max(...sorted.map((c) => displayPointer(c.pointer).length), 0));
  const lines = sorted.map(
    (c) =>
      `${(c.kind === "breaking" ? "BREAKING" : "compatible").padEnd(10)}  ${displayPointer(c.pointer).padEnd(width)}  ${c.message} (rule: ${c.rule})`,
  );
  const summary =
    breaking > 0
      ? `${breaking} breaking, ${compatible} compatible change${changes.length === 1 ? "" : "s"}: values stored with the old schema may be rejected; bump the type's version and add a migration.`
      : `${compatible} compatible change${compatible === 1 ? "" : "s"}: every value the old schema accepts, the new one accepts.`;
  return [...lines, "", summary].join("\n");
}

export interface RunDiffResult {
  changes: Change[];
  /** 0: compatible (or no change); 1: some change is breaking; 2: a file could not be read. */
  exitCode: 0 | 1 | 2;
  /** The text to print (the report, or what went wrong reading the files). */
  report: string;
}

/** Loads two schema files and diffs them; `$ref`s to other files resolve relative to the referring file. */
export function runDiff(oldPath: string, newPath: string): RunDiffResult {
  let oldSchema: JsonSchema;
  let newSchema: JsonSchema;
  try {
    oldSchema = readSchemaFile(oldPath);
    newSchema = readSchemaFile(newPath);
  } catch (error) {
    return { changes: [], exitCode: 2, report: `statebag diff: ${(error as Error).message}` };
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
  const changes = diffSchemas(oldSchema, newSchema, {
    resolveExternalRef,
    oldBase: path.resolve(oldPath),
    newBase: path.resolve(newPath),
  });
  return { changes, exitCode: changes.some((c) => c.kind === "breaking") ? 1 : 0, report: formatDiffReport(changes) };
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
  if (typeof parsed !== "boolean" && !isObject(parsed)) throw new Error(`${file} is not a JSON Schema (an object or a boolean)`);
  return parsed as JsonSchema;
}
