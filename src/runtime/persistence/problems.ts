/**
 * Validation problems: what a problem says, the bounded list a validation collects, and how
 * problems read as text. A document can hold millions of problems; what is kept is bounded (the
 * first `maxProblems`, plus the total count), so reporting stays linear in the input and an error
 * never holds the whole input again.
 */
import { boundedPointer, quoted, shortPointer, shownText } from "../core/json.js";

export type ProblemCode =
  /** The text is not acceptable JSON (syntax, size, depth, keys, `__proto__`). */
  | "json"
  /** The stored envelope (`format`, `formatVersion`, `session`/`sessions`). */
  | "envelope"
  /** A value cannot be written as JSON (a cycle, a BigInt, NaN, nesting too deep). */
  | "not-json"
  /** The session object itself (id, stateBag, kind, conversationId, unknown keys). */
  | "session"
  /** A tagged position holds something that is not an object. */
  | "not-tagged"
  /** An object in a tagged position has no `$type`, or a non-string one. */
  | "missing-type"
  /** `$version` is not an integer >= 1. */
  | "invalid-version"
  /** Unknown `$type` (strict mode only; otherwise preserved). */
  | "unknown-type"
  /** Version newer than the registry knows (strict mode only; otherwise preserved). */
  | "newer-version"
  /** Older version with no migration path. */
  | "old-version"
  /** A migration step failed. */
  | "migration-failed"
  /** The `$type` belongs to another family than the position expects. */
  | "wrong-family"
  /** The type's schema rejected the value. */
  | "schema"
  /** Tagged values nested deeper than the walker allows (or a cycle). */
  | "too-deep";

export interface ValidationProblem {
  code: ProblemCode;
  /** JSON pointer (RFC 6901) from the document root (cut in the middle only if a key in it is huge). */
  pointer: string;
  /** The `$type` of the innermost tagged value the problem is in, when there is one. */
  $type?: string;
  /** What should be there. */
  expected: string;
  /** What is there. */
  found: string;
  /** One readable sentence. */
  message: string;
  /** How to fix it. */
  hint?: string;
}

/** A value kept verbatim because this registry cannot read it (not an error unless strict). */
export interface PreservedValue {
  pointer: string;
  $type: string;
  version: number;
  reason: "unknown-type" | "newer-version";
  message: string;
}

/** How many problems a validation keeps by default (the rest are counted). */
export const DEFAULT_MAX_PROBLEMS = 100;

/**
 * @internal The problems of one validation: the first `limit` kept, every one counted. Schema
 * problems that the walker's own report at the same spot supersedes can be withdrawn (`withdraw`).
 */
export class ProblemList {
  readonly kept: ValidationProblem[] = [];
  /** Every problem reported, kept or not (minus withdrawn ones). */
  total = 0;
  constructor(readonly limit: number) {}

  add(problem: ValidationProblem): void {
    this.total++;
    if (this.kept.length < this.limit) {
      problem.pointer = boundedPointer(problem.pointer); // idempotent
      // An unknown `$type` is input: keep it only as long as a type id can sensibly be.
      if (problem.$type !== undefined && problem.$type.length > MAX_TYPE_CHARS) problem.$type = shownText(problem.$type, MAX_TYPE_CHARS);
      this.kept.push(problem);
    }
  }

  /** Withdraws `count` schema problems at `pointer` (all of them, kept or only counted). */
  withdraw(pointer: string, count: number): void {
    this.total -= count;
    const kept = this.kept;
    let j = 0;
    for (let i = 0; i < kept.length; i++) {
      const p = kept[i];
      if (p.code === "schema" && p.pointer === pointer) continue;
      kept[j++] = p;
    }
    kept.length = j;
  }
}

const MAX_TYPE_CHARS = 256;


/** A pointer for a message (long ones, from deep nesting, cut in the middle as in parse errors). */
export function pointerLabel(pointer: string): string {
  return pointer === "" ? "the document root" : shortPointer(pointer);
}

/**
 * Formats problems as readable lines: what, where, hint. At most `limit` are listed; `total`
 * (default: the list's length) is how many there are in all, for the "... and N more" line.
 */
export function formatProblems(problems: readonly ValidationProblem[], limit = 20, total = problems.length): string {
  const lines: string[] = [];
  const shown = Math.min(limit, problems.length);
  for (let i = 0; i < shown; i++) {
    const p = problems[i];
    lines.push(`  ${i + 1}. ${p.message}${p.$type !== undefined && !p.message.includes(`"${p.$type}"`) ? ` (in ${quoted(p.$type)})` : ""}`);
    if (!(p.message.includes(p.expected) && p.message.includes(p.found))) lines.push(`     expected ${p.expected}; found ${p.found}`);
    if (p.hint) lines.push(`     hint: ${p.hint}`);
  }
  const rest = Math.max(total, problems.length) - shown;
  if (rest > 0) lines.push(`  ... and ${rest} more (see error.problems${total > problems.length ? " and error.problemCount" : ""})`);
  return lines.join("\n");
}
