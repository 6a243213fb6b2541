/**
 * `SessionValidationError`, the one error a session save or load throws for what it finds, and
 * the problem a JSON-level error (syntax, limits, data JSON cannot hold) becomes: the same on save
 * and on load.
 */
import { StatebagError } from "../core/errors.js";
import { MAX_POINTER_CHARS, boundedPointer } from "../core/json.js";
import { DEFAULT_MAX_PROBLEMS, formatProblems, type PreservedValue, type ValidationProblem } from "../core/problems.js";
import type { JsonParseError } from "../json/safe-json.js";

/**
 * A session (or a document of sessions) that cannot be loaded or saved. `problems` lists the
 * problems found (at most 100 by default, `maxProblems`; `problemCount` says how many there are in
 * all), each with a JSON pointer from the document root, what was expected, what was found and a
 * hint; the message shows the first ones, one per line. It never holds the input itself: values
 * are described, long strings cut with their length.
 */
export class SessionValidationError extends StatebagError {
  readonly problems: readonly ValidationProblem[];
  /** How many problems there are in all (`problems` holds the first of them). */
  readonly problemCount: number;
  readonly preserved: readonly PreservedValue[];
  constructor(
    summary: string,
    problems: readonly ValidationProblem[],
    options: { preserved?: readonly PreservedValue[]; cause?: unknown; problemCount?: number } = {},
  ) {
    const kept = (problems.length > MAX_HELD ? problems.slice(0, MAX_HELD) : problems).map((p) =>
      p.pointer.length > MAX_POINTER_CHARS ? { ...p, pointer: boundedPointer(p.pointer) } : p,
    );
    const shown = Math.max(options.problemCount ?? problems.length, problems.length);
    super(
      "session-invalid",
      `${summary}: ${shown} problem${shown === 1 ? "" : "s"}\n${formatProblems(kept, 20, shown)}`,
      {
        cause: options.cause,
      },
    );
    this.problems = kept;
    this.problemCount = shown;
    const preserved = options.preserved ?? [];
    this.preserved = preserved.length > MAX_HELD ? preserved.slice(0, MAX_HELD) : preserved;
  }
}

/** At most this many problems (and preserved values) are held by an error, whatever a caller passes. */
const MAX_HELD = 10 * DEFAULT_MAX_PROBLEMS;

/** A JSON-level error (syntax, limits, data JSON cannot hold) as a validation problem: the same on save and on load. */
export function jsonProblem(err: JsonParseError): ValidationProblem {
  const lines = err.message.split("\n"); // a syntax error's excerpt of the text is on its own lines
  const problem: ValidationProblem = {
    code: err.code === "json-value" ? "not-json" : "json",
    pointer: err.pointer ?? "",
    expected: JSON_EXPECTED[err.code] ?? "JSON text",
    found:
      err.code === "json-syntax"
        ? `a syntax error at line ${err.line}, column ${err.column}`
        : (JSON_FOUND[err.code] ?? err.code),
    message: lines.join("\n     "),
  };
  if (err.hint !== undefined) problem.hint = err.hint;
  if (err.problemDetails !== undefined) problem.details = err.problemDetails;
  return problem;
}

const JSON_EXPECTED: Record<string, string> = {
  "json-syntax": "well-formed JSON",
  "json-too-large": "a document within limits.maxBytes",
  "json-too-deep": "nesting within limits.maxDepth",
  "json-too-many-keys": "objects within limits.maxKeys",
  "json-proto-key": 'no "__proto__" keys',
  "json-input": "JSON text (a string or UTF-8 bytes)",
  "json-value": "plain JSON data",
  "json-duplicate-key": "each key once in an object",
};

const JSON_FOUND: Record<string, string> = {
  "json-too-large": "a larger document",
  "json-too-deep": "deeper nesting",
  "json-too-many-keys": "an object with more keys",
  "json-proto-key": 'a "__proto__" key',
  "json-input": "something else",
  "json-value": "a value JSON cannot hold as it is",
  "json-duplicate-key": "a key given twice",
};

export function sessionLabel(session: unknown): string {
  const id = typeof session === "object" && session !== null ? (session as { id?: unknown }).id : undefined;
  return typeof id === "string" ? JSON.stringify(id) : "(no id)";
}
