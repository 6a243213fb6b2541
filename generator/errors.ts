/**
 * Generator diagnostics. Every phase collects them instead of throwing, so one run reports every
 * problem at once, each as `path/file.ts:12:3 error <code>: what. hint: how to fix`.
 */

export type GenErrorCode =
  | "duplicate-type"
  | "type-not-literal"
  | "bad-type-id"
  | "family-not-literal"
  | "bad-version"
  | "not-exported"
  | "generic-tagged"
  | "multiple-markers"
  | "not-json"
  | "unresolved-type"
  | "recursive-slot"
  | "mixed-slot"
  | "unknown-format"
  | "schema-failed"
  | "migration-not-exported"
  | "migration-not-literal"
  | "migration-conflict"
  | "usage";

export interface GenError {
  code: GenErrorCode;
  /** Path relative to the project root (forward slashes), absent for errors about the run itself. */
  file?: string;
  line?: number;
  column?: number;
  message: string;
  hint?: string;
}

export function formatError(e: GenError): string {
  return formatFinding(e, "error");
}

/** A finding that does not stop the run, printed like an error: `path/file.ts:12:3 warning <code>: ...`. */
export function formatWarning(e: GenError): string {
  return formatFinding(e, "warning");
}

function formatFinding(e: GenError, severity: "error" | "warning"): string {
  const where = e.file ? `${e.file}:${e.line ?? 1}:${e.column ?? 1} ` : "";
  const hint = e.hint ? ` hint: ${e.hint}` : "";
  const msg = /[.!?]$/.test(e.message) ? e.message : `${e.message}.`;
  return `${where}${severity} ${e.code}: ${msg}${hint}`;
}

/** Code-unit string order: unlike localeCompare, the same on every machine. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Stable order for reports: by file, position, then code; exact duplicates dropped. */
export function sortErrors(errors: readonly GenError[]): GenError[] {
  const seen = new Set<string>();
  return [...errors]
    .sort(
      (a, b) =>
        compareStrings(a.file ?? "", b.file ?? "") ||
        (a.line ?? 0) - (b.line ?? 0) ||
        (a.column ?? 0) - (b.column ?? 0) ||
        compareStrings(a.code, b.code) ||
        compareStrings(a.message, b.message),
    )
    .filter((e) => {
      const key = formatError(e);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}
