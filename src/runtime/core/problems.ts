/**
 * Validation problems: what a problem says, the bounded list a validation collects, and how
 * problems read as text. A document can hold millions of problems; what is kept is bounded (the
 * first `maxProblems`, plus the total count), so reporting stays linear in the input and an error
 * never holds the whole input again.
 */
import { boundedPointer, quoted, shortPointer, shownText } from "./json.js";

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
  | "too-deep"
  /** A value a quarantine load set aside (`session.quarantine`) that validates now: still not in place. */
  | "quarantined";

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
  /**
   * The sentence without its place (`message` is where, then this): for displays that show
   * `pointer` on its own, above or beside it. Absent when the sentence names its place inside
   * (then show `message`).
   */
  reason?: string;
  /** How to fix it. */
  hint?: string;
  /**
   * The same finding as data, for code that reacts to problems without reading sentences. A union
   * on `kind` (narrow with `switch (p.details?.kind)`); `"schema"` details narrow further on
   * `keyword`. Which kind goes with which `code`:
   *
   * - `"schema"` (code `schema`): the failing JSON Schema `keyword` and its data: the missing
   *   `property` (`required`), the unknown `property` and the declared ones (`additionalProperties`),
   *   the allowed `types` (`type`), `values` (`enum`), `value` (`const`), the `format`, the `pattern`,
   *   `limit` and `actual` (numeric bounds, lengths, item and property counts).
   * - `"limit"` (codes `json`, `too-deep`): the `option` to raise, its `limit` and the `actual` size.
   * - `"version"` (codes `newer-version`, `old-version`, `migration-failed`): the value's `$version`
   *   and the registry's `expectedVersion` (when the type is registered).
   * - `"family"` (codes `not-tagged`, `missing-type`, `invalid-version`, `unknown-type`,
   *   `wrong-family`): the `family` the position expects (and the value's `actualFamily`).
   * - `"session"` (code `session`): the session `property` and what is wrong with it.
   * - `"syntax"`, `"duplicate-key"` (code `json`): where in the text (`line`, `column`, `position`).
   *
   * JSON errors carry their details as `JsonParseError.problemDetails` (`limit`, `syntax`,
   * `duplicate-key`), for the `json` problem made from them.
   *
   * Strings taken from the input (property names, keys) are cut to 256 characters like `$type`.
   * Absent on problems made elsewhere (envelope problems, other producers).
   */
  details?: ProblemDetails;
}

/** The machine-readable side of a problem (see `ValidationProblem.details`). */
export type ProblemDetails =
  | SchemaProblemDetails
  | LimitProblemDetails
  | VersionProblemDetails
  | FamilyProblemDetails
  | SessionProblemDetails
  | SyntaxProblemDetails
  | DuplicateKeyProblemDetails;

/** A JSON type name as JSON Schema's `type` spells it (`"integer"` appears in schemas only). */
export type JsonTypeName = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object";

/** Details of a `schema` problem: the JSON Schema keyword that failed, with its data. */
export type SchemaProblemDetails =
  /** A required property is missing (`property` names it). */
  | { kind: "schema"; keyword: "required"; property: string }
  /** A closed model holds `property`; `allowed` are the properties the schema declares there. */
  | { kind: "schema"; keyword: "additionalProperties"; property: string; allowed: string[] }
  /** The value is none of `types`; `actualType` is what it is (`"number"` for any number). */
  | { kind: "schema"; keyword: "type"; types: JsonTypeName[]; actualType: JsonTypeName | "undefined" }
  /** The value is none of `values`. */
  | { kind: "schema"; keyword: "enum"; values: unknown[] }
  /** The value is not `value`. */
  | { kind: "schema"; keyword: "const"; value: unknown }
  /** A string not in `format` (`"date-time"`, `"uri"`, ...). */
  | { kind: "schema"; keyword: "format"; format: string }
  /** A string not matching `pattern` (the regular expression's source). */
  | { kind: "schema"; keyword: "pattern"; pattern: string }
  /** A number out of bounds: `actual` must be `comparison` `limit`. */
  | {
      kind: "schema";
      keyword: "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum";
      comparison: ">=" | "<=" | ">" | "<";
      limit: number;
      actual: number;
    }
  /**
   * A length or count out of bounds: `actual` is the string's length (in code points, as JSON
   * Schema counts), the array's items or the object's properties.
   */
  | {
      kind: "schema";
      keyword: "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties";
      limit: number;
      actual: number;
    }
  /**
   * None of the alternatives matched. When every alternative is a plain type or value check at
   * the same position, `types` and `values` are what they accept together.
   */
  | { kind: "schema"; keyword: "anyOf" | "oneOf"; types?: JsonTypeName[]; values?: unknown[] }
  /**
   * Any other keyword, with ajv's `params` (strings cut like property names). `"unknown"`: the
   * validator said no without saying why (or used a keyword this list does not name: `params.keyword`).
   */
  | { kind: "schema"; keyword: OtherSchemaKeyword; params: Record<string, unknown> };

/** The JSON Schema keywords `SchemaProblemDetails` reports with ajv's raw `params`. */
export type OtherSchemaKeyword =
  | "multipleOf"
  | "uniqueItems"
  | "dependentRequired"
  | "dependencies"
  | "propertyNames"
  | "additionalItems"
  | "items"
  | "prefixItems"
  | "contains"
  | "minContains"
  | "maxContains"
  | "not"
  | "false schema"
  | "unevaluatedProperties"
  | "unevaluatedItems"
  | "discriminator"
  | "unknown";

/**
 * A size limit was exceeded. `option` is the setting to raise (`limits.maxBytes`, `maxDepth`,
 * `maxKeys`, or the validator's `maxNesting`); `limit` its value; `actual` the size found (for
 * depth and nesting: the level at which checking stopped, so at least that deep).
 */
export interface LimitProblemDetails {
  kind: "limit";
  option: "maxBytes" | "maxDepth" | "maxKeys" | "maxNesting";
  limit: number;
  actual: number;
}

/** A version the registry cannot read: `$version` is the value's, `expectedVersion` the registry's latest (absent when only migrations know the type). */
export interface VersionProblemDetails {
  kind: "version";
  $version: number;
  expectedVersion?: number;
}

/** A position of `family` holds something else; `actualFamily` is the family of the value's `$type` (`wrong-family`). */
export interface FamilyProblemDetails {
  kind: "family";
  family: string;
  actualFamily?: string;
}

/**
 * The session object. `property` is the session property concerned: absent when the session is
 * not an object; the key itself for `"unknown-property"`; `stateBag` or `conversationId` for a
 * `"__proto__"` key inside them (`"proto-key"`); `conversationId` for `"conflict"` (a local
 * session holding one). `"invalid"`: the property holds the wrong kind of value.
 */
export interface SessionProblemDetails {
  kind: "session";
  property?: string;
  reason: "not-an-object" | "missing" | "invalid" | "unknown-property" | "proto-key" | "conflict";
}

/** Malformed JSON text: 1-based `line` and `column`, 0-based `position` (UTF-16 code units). */
export interface SyntaxProblemDetails {
  kind: "syntax";
  line: number;
  column: number;
  position: number;
}

/** An object of the text holds `key` twice; `line`/`column`/`position` are where it appears again. */
export interface DuplicateKeyProblemDetails {
  kind: "duplicate-key";
  key: string;
  line: number;
  column: number;
  position: number;
}

/** @internal Input strings kept in details: at most `MAX_TYPE_CHARS` characters (cut in the middle). */
export function detailText(text: string): string {
  return text.length > MAX_TYPE_CHARS ? shownText(text, MAX_TYPE_CHARS) : text;
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
      if (problem.$type !== undefined && problem.$type.length > MAX_TYPE_CHARS)
        problem.$type = shownText(problem.$type, MAX_TYPE_CHARS);
      this.kept.push(problem);
    }
  }

  /** Withdraws `count` schema problems at `pointer` (all of them, kept or only counted). */
  withdraw(pointer: string, count: number): void {
    this.total -= count;
    const kept = this.kept;
    let keptCount = 0;
    for (let i = 0; i < kept.length; i++) {
      const problem = kept[i];
      if (problem.code === "schema" && problem.pointer === pointer) continue;
      kept[keptCount++] = problem;
    }
    kept.length = keptCount;
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
    const problem = problems[i];
    lines.push(
      `  ${i + 1}. ${problem.message}${problem.$type !== undefined && !problem.message.includes(`"${problem.$type}"`) ? ` (in ${quoted(problem.$type)})` : ""}`,
    );
    if (!(problem.message.includes(problem.expected) && problem.message.includes(problem.found)))
      lines.push(`     expected ${problem.expected}; found ${problem.found}`);
    if (problem.hint) lines.push(`     hint: ${problem.hint}`);
  }
  const rest = Math.max(total, problems.length) - shown;
  if (rest > 0)
    lines.push(
      `  ... and ${rest} more (see error.problems${total > problems.length ? " and error.problemCount" : ""})`,
    );
  return lines.join("\n");
}
