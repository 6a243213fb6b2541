/**
 * The vocabulary of `diffSchemas`: every rule it can report (with the kind each always has), the
 * `Change` record and the probe a breaking change carries for its witness, the keyword tables the
 * differ dispatches on, and how schemas and values are shown in messages. Kept apart from the
 * decision rules so a reader (or the CLI, or a test) can see what may be reported without reading
 * how it is decided.
 */
import { canonicalJson, childPointer, isObject } from "./schema.js";

/**
 * `compatible`: every value the old schema accepts, the new one accepts. `breaking`: some value the
 * old schema accepts is rejected now. `undecided`: the meaning could not be compared (a keyword or
 * regex the analysis does not cover); never reported as either of the other two.
 */
export type ChangeKind = "compatible" | "breaking" | "undecided";

/** Every rule `diffSchemas` reports, with the kind it always has. */
export const CHANGE_RULES = {
  "add-optional-property": "compatible",
  "add-required": "breaking",
  "remove-property": "breaking",
  "make-required": "breaking",
  "make-optional": "compatible",
  "widen-type": "compatible",
  "narrow-type": "breaking",
  "add-enum-value": "compatible",
  "remove-enum-value": "breaking",
  "add-enum": "breaking",
  "remove-enum": "compatible",
  "add-const": "breaking",
  "change-const": "breaking",
  "remove-const": "compatible",
  "add-union-branch": "compatible",
  "remove-union-branch": "breaking",
  "tighten-constraint": "breaking",
  "loosen-constraint": "compatible",
  "close-additional-properties": "breaking",
  "open-additional-properties": "compatible",
  "annotation-change": "compatible",
  "ref-change": "breaking",
  "change-slot-family": "breaking",
  /** A keyword the differ does not know that changed and the validators read (kept for the discriminator's propertyName). */
  "unknown-keyword-change": "breaking",
  "implied-constraint": "compatible",
  "sampled-counterexample": "breaking",
  "cannot-decide": "undecided",
} as const satisfies Record<string, ChangeKind>;

export type ChangeRule = keyof typeof CHANGE_RULES;

export interface Change {
  /** JSON pointer into the value shape (`""` is the value itself, `*` any item / map value). */
  pointer: string;
  rule: ChangeRule;
  kind: ChangeKind;
  /** Short and specific: `required property added`, `minimum raised from 0 to 1`. */
  message: string;
  /** The schema keyword concerned, for constraint / unknown-keyword changes (`"minimum"`, `"pattern"`...). */
  keyword?: string;
  /** For a breaking change (after `assessCompatibility`): a document the old schema accepts and the new one rejects. */
  witness?: Witness;
}

/** A document the old schema accepts and the new one rejects, checked by validating it against both. */
export interface Witness {
  document: unknown;
  /** How it was found: built from the change, or drawn by sampling (with the seed that reproduces it). */
  source: "constructed" | "sampled";
  seed?: number;
}

/**
 * What the analysis knows about a breaking change, for building its witness: a value at the
 * change's pointer that the old schema accepts there and the new one rejects, or the shape of the
 * enclosing object (a property present / absent, an extra key).
 */
export type Probe =
  | { value: unknown }
  | { absent: true }
  | { present: true }
  | { extraKey: string }
  | { type: string }
  | { notIn: readonly unknown[] }
  | { uniqueItems: true }
  | { overlapping: true }
  | { itemsBeyond: number };

/**
 * The probe rides on its change as a hidden (non-enumerable) member: it is set once where the change
 * is recorded, is dropped by a copy (`{ ...change }`) like any derived change should, and never shows
 * in JSON output or in equality checks.
 */
const PROBE = Symbol("probe");

/** The probe the analysis left for a change (none for compatible changes). */
export function probeOf(change: Change): Probe | undefined {
  return (change as Change & { [PROBE]?: Probe })[PROBE];
}

// ---------------------------------------------------------------------------------------------
// Recording a change

/** Records one change at the current site: the rule's kind is looked up here, never chosen by the caller. */
export type Emit = (rule: ChangeRule, message: string, keyword?: string, probe?: Probe) => void;

/**
 * Where the differ stands, threaded through every call: the value pointer, the union branch being
 * compared (named in messages), and the list the changes go to (a trial list when union branches
 * are tried against each other).
 */
export interface Site {
  readonly pointer: string;
  readonly branch: string;
  readonly out: Change[];
}

/** The site one value-shape segment below (`"*"` for every item / map value). */
export function childSite(site: Site, segment: string | number): Site {
  return { ...site, pointer: childPointer(site.pointer, segment) };
}

/** The one way a change is recorded: at the site's pointer, its branch named in the message. */
export function emitAt(site: Site): Emit {
  return (rule, message, keyword, probe) => {
    const change: Change = {
      pointer: site.pointer,
      rule,
      kind: CHANGE_RULES[rule],
      message: site.branch ? `${message} (in ${site.branch})` : message,
    };
    if (keyword !== undefined) change.keyword = keyword;
    if (probe !== undefined) Object.defineProperty(change, PROBE, { value: probe, enumerable: false });
    site.out.push(change);
  };
}

// ---------------------------------------------------------------------------------------------
// Keyword tables

/** Keywords with no effect on which values validate. */
const ANNOTATIONS = new Set([
  "title",
  "description",
  "examples",
  "$comment",
  "default",
  "readOnly",
  "writeOnly",
  "deprecated",
  "$id",
  "$schema",
  "contentMediaType",
  "contentEncoding",
]);
/** Keywords that hold schemas for `$ref`s to point at, not constraints on the value. */
export const CONTAINERS = new Set(["definitions", "$defs"]);
/** Keywords the differ compares by meaning; every other one goes through `LOOSENED_WHEN_REMOVED` or is unknown. */
export const HANDLED = new Set([
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "additionalItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "discriminator",
  "patternProperties",
  // Decided in keywords.ts.
  "not",
  "if",
  "then",
  "else",
  "dependencies",
  "propertyNames",
  "contains",
]);

/** Which value types a keyword applies to (others are ignored by validators). */
export const KEYWORD_GROUP: Record<string, readonly string[]> = {
  minLength: ["string"],
  maxLength: ["string"],
  pattern: ["string"],
  format: ["string"],
  minimum: ["number"],
  maximum: ["number"],
  exclusiveMinimum: ["number"],
  exclusiveMaximum: ["number"],
  multipleOf: ["number"],
  items: ["array"],
  additionalItems: ["array"],
  minItems: ["array"],
  maxItems: ["array"],
  uniqueItems: ["array"],
  contains: ["array"],
  properties: ["object"],
  required: ["object"],
  additionalProperties: ["object"],
  patternProperties: ["object"],
  propertyNames: ["object"],
  dependencies: ["object"],
  minProperties: ["object"],
  maxProperties: ["object"],
};

export function isAnnotationKeyword(keyword: string): boolean {
  return ANNOTATIONS.has(keyword) || keyword.startsWith("x-");
}

// ---------------------------------------------------------------------------------------------
// Wording

/** A value in a message: canonical JSON, cut at 60 characters. */
export function showValue(value: unknown): string {
  const text = canonicalJson(value);
  return text.length > 60 ? text.slice(0, 57) + "..." : text;
}

/** A schema in a message (`type string (minLength)`, `const "a"`, a `$ref`...). */
export function describeSchema(schema: unknown): string {
  if (schema === true) return "any value";
  if (schema === false) return "no value";
  if (!isObject(schema)) return showValue(schema);
  if (typeof schema.$ref === "string") return schema.$ref;
  if ("const" in schema) return `const ${showValue(schema.const)}`;
  if (typeof schema.type === "string" || Array.isArray(schema.type)) {
    const rest = Object.keys(schema).filter((k) => k !== "type" && !isAnnotationKeyword(k));
    const type = Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type;
    return rest.length === 0 ? `type ${type}` : `type ${type} (${rest.join(", ")})`;
  }
  return showValue(schema);
}
