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

/**
 * How each keyword family is decided, and where it stays `undecided` with why no decision is sound
 * there. One entry per family; docs/walkthroughs.md ("What the compatibility check calls
 * compatible") says the same for users.
 */
export const DECISIONS: Readonly<Record<string, { decided: string; undecided?: string }>> = {
  "open objects": {
    decided:
      "an object with additionalProperties absent or true accepts any value under a name it does not declare: a " +
      "declaration added for such a name (a new optional property, a property set to false, one reached through " +
      "dependencies, if/then/else or allOf) is compared with any value, or with the patternProperties / " +
      "additionalProperties schema that held the name before, and breaks with a witness carrying the name; a " +
      "declaration removed from an open object is a loosening (the name accepts anything again)",
  },
  format: {
    decided:
      "by what the runtime asserts (formatCheck: ajv-formats' set, date-time by isDateTime): an asserted format added " +
      "breaks with a witness (a near miss, or a valid value of the old format the new one rejects); removed is " +
      "compatible; int32/int64 on numbers likewise; a pattern replacing a format is read against the format's shape",
    undecided:
      "an asserted format added to strings whose constraints every probe value passes; a format the runtime does " +
      "not know (a gen warning), and password, binary, float and double (they accept every value), are not asserted, " +
      "so adding, changing or removing one changes nothing: an annotation",
  },
  "if/then/else": {
    decided:
      "a changed condition splits old values in four groups (in both conditions, the old only, the new only, " +
      "neither); compatible when the old branch implies the new one in each group that can hold a value; else values " +
      "built in each group, each breaking a new branch one way, are tried as witnesses. A branch added or changed " +
      "under the same condition is compared within the values that take it (the condition, or its exact complement " +
      "for a condition on one property's const/enum/type)",
    undecided:
      "when no built value is a witness and no inclusion is proved: whether a value exists in a region such as " +
      "'matches the new condition but not the old' is a question about arbitrary schema intersection and negation, " +
      "which JSON Schema inclusion does not decide in general; reporting either answer there would be a guess",
  },
  dependencies: {
    decided:
      "per key: the old object holding the key and meeting the old dependency must meet the new one; breaking with " +
      "an object holding the key (and the old dependency's properties) that lacks a newly required property or holds " +
      "a value of another kind",
    undecided: "a dependency schema that can not be merged exactly with the object's schema, with no witness found",
  },
  propertyNames: {
    decided:
      "propertyNames of a key language (a pattern, or string consts) is read as patternProperties holding " +
      "additionalProperties with the object closed, when no named property reads it differently: the two spellings " +
      "compare equal, and a narrower language or value schema breaks with a key or value witness",
    undecided: "propertyNames with keywords other than string keywords, const and enum",
  },
  allOf: {
    decided:
      "members merged into the parent where the conjunction is exact (normalise + conjoin): an allOf folded into " +
      "its parent compares as the same schema; what is left is compared member by member",
    undecided: "members that can not be merged exactly (a $ref, a closed object against another's names) and differ",
  },
  not: {
    decided:
      "removed, or excluding nothing new (B inside A, or no old value of its type or values): compatible; " +
      "otherwise values of the negated schema (within the old one where they merge) are witness candidates",
    undecided:
      "when none of them is an old value and no inclusion is proved: whether the old schema and the negated one " +
      "share a value is schema intersection, not decided in general",
  },
  "oneOf / anyOf": {
    decided:
      "branches matched by $type, then by a required const property (a discriminator by another name), then by " +
      "content; a new oneOf branch that may overlap another breaks with a value matching both (instances merged)",
    undecided: "an overlap no candidate shows and no disjointness rule excludes",
  },
  "enum / const": {
    decided:
      "listed values are known exactly: each old value is checked against the new keywords (objects under a newly " +
      "declared name included); an enum replacing a string pattern is decided as languages",
  },
  patternProperties: {
    decided:
      "key languages compared as automata: keys an old pattern or additionalProperties accepted that the new schema " +
      "sends to a stricter schema, or refuses (additionalProperties false added: witness, a key no pattern matches)",
    undecided: "patterns past the automaton budget, or with back-references",
  },
};

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
  | { itemsBeyond: number }
  /** An object of this many properties (a changed minProperties / maxProperties). */
  | { size: number }
  /** Values for the change's position built by the rule itself (objects in the region a branch or dependency covers). */
  | { candidates: readonly unknown[] };

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

/** The budget an undecided change ran out of, hidden on the change like its probe. */
const BUDGET = Symbol("budget");

/** The budget the analysis ran out of for an undecided change (the automaton size limit), if any. */
export function budgetOf(change: Change): "automaton-size" | undefined {
  return (change as Change & { [BUDGET]?: "automaton-size" })[BUDGET];
}

// ---------------------------------------------------------------------------------------------
// Recording a change

/** Records one change at the current site: the rule's kind is looked up here, never chosen by the caller. */
export type Emit = (
  rule: ChangeRule,
  message: string,
  keyword?: string,
  probe?: Probe,
  budget?: "automaton-size",
) => void;

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
  return (rule, message, keyword, probe, budget) => {
    const change: Change = {
      pointer: site.pointer,
      rule,
      kind: CHANGE_RULES[rule],
      message: site.branch ? `${message} (in ${site.branch})` : message,
    };
    if (keyword !== undefined) change.keyword = keyword;
    if (probe !== undefined) Object.defineProperty(change, PROBE, { value: probe, enumerable: false });
    if (budget !== undefined) Object.defineProperty(change, BUDGET, { value: budget, enumerable: false });
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
