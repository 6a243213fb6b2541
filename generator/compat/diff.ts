/**
 * `diffSchemas(old, new)`: every difference between two draft-07 schemas that matters to values
 * already stored, classified by one question: does the new schema still accept every value the old
 * one accepted? If yes the change is `compatible`; if some stored value could now be rejected (or
 * mean something else) it is `breaking`.
 *
 * Pointers are into the VALUE shape (`/messages/*\/role`), not into the schema: `properties/x` is
 * `/x`, array items and map values (`additionalProperties`) are `/*`, tuple items are `/0`, `/1`...
 * Union branches keep their parent's pointer; the branch is named in the message.
 */
import { isDateTime } from "../runtime.js";
import { OPAQUE_TAGGED } from "../slots.js";
import { type StringConstraints, lengthIncludes, patternIncludes, patternMinus, patternOverlap } from "./regex.js";
import {
  type ExternalRefResolver,
  type JsonSchema,
  type OpaqueRef,
  type SchemaNode,
  type SchemaObject,
  canonicalJson,
  childPointer,
  isObject,
  isOpaque,
  jsonEqual,
  jsonTypeOf,
  refIdentity,
  resolveNode,
  sameSchema,
  typeTagOf,
} from "./schema.js";

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

const probes = new WeakMap<Change, Probe>();

/** The probe the analysis left for a change (none for compatible changes). */
export function probeOf(change: Change): Probe | undefined {
  return probes.get(change);
}

export interface DiffOptions {
  /** Follows `$ref`s to other files; without it (or when it returns undefined) such refs are compared by target. */
  resolveExternalRef?: ExternalRefResolver;
  /** Location of the old / new documents (passed to `resolveExternalRef` as the base). */
  oldBase?: string;
  newBase?: string;
  /**
   * Family slots of the old / new schema (value paths holding nested polymorphic values). Default:
   * read from each schema's `x-statebag.slots`. A slot's content is validated by its members' own
   * schemas (with their own history), so a slot is compared by family only.
   */
  oldSlots?: readonly SlotInfo[];
  newSlots?: readonly SlotInfo[];
}

/** Same shape as the runtime's `FamilySlot`. */
export interface SlotInfo {
  path: readonly string[];
  family: string;
}

/** What the type's own validator sees at a family slot: the generator's own opaque schema, so the two cannot drift. */
export const OPAQUE_SLOT_SCHEMA: SchemaObject = OPAQUE_TAGGED as SchemaObject;

/** `x-statebag.slots` of a generated schema ([] when absent). */
export function slotsOf(schema: JsonSchema): SlotInfo[] {
  if (!isObject(schema) || !isObject(schema["x-statebag"])) return [];
  const slots = schema["x-statebag"].slots;
  if (!Array.isArray(slots)) return [];
  return slots.filter(
    (s): s is SlotInfo =>
      isObject(s) && typeof s.family === "string" && Array.isArray(s.path) && s.path.every((seg: unknown) => typeof seg === "string"),
  );
}

function slotMap(slots: readonly SlotInfo[]): Map<string, string> {
  return new Map(slots.map((s) => [s.path.reduce<string>((ptr, seg) => childPointer(ptr, seg), ""), s.family]));
}

export function diffSchemas(oldSchema: JsonSchema, newSchema: JsonSchema, options: DiffOptions = {}): Change[] {
  const differ = new Differ(
    options.resolveExternalRef,
    slotMap(options.oldSlots ?? slotsOf(oldSchema)),
    slotMap(options.newSlots ?? slotsOf(newSchema)),
  );
  const out: Change[] = [];
  differ.diff(
    { schema: oldSchema, doc: { root: oldSchema, base: options.oldBase } },
    { schema: newSchema, doc: { root: newSchema, base: options.newBase } },
    "",
    "",
    out,
  );
  return dedupe(out);
}

export function hasBreaking(changes: readonly Change[]): boolean {
  return changes.some((c) => c.kind === "breaking");
}

function dedupe(changes: Change[]): Change[] {
  const seen = new Set<string>();
  return changes.filter((c) => {
    const key = `${c.pointer}\u0000${c.rule}\u0000${c.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
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
const CONTAINERS = new Set(["definitions", "$defs"]);
const HANDLED = new Set([
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
]);
/** Known keywords not analysed in depth: removing one only loosens; any other change is breaking. */
const LOOSENED_WHEN_REMOVED = new Set(["contains", "propertyNames", "dependencies", "not", "if", "then", "else"]);

/** Which value types a keyword applies to (others are ignored by validators). */
const KEYWORD_GROUP: Record<string, readonly string[]> = {
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

const EMPTY: SchemaObject = Object.freeze({}) as SchemaObject;

// ---------------------------------------------------------------------------------------------
// Types

/** A set of JSON types; `"number"` includes integers. `null` means every type. */
type TypeSet = Set<string> | null;

function declaredTypes(s: SchemaObject): TypeSet {
  if (typeof s.type === "string") return new Set([s.type]);
  if (Array.isArray(s.type)) return new Set(s.type.filter((t): t is string => typeof t === "string"));
  return null;
}

function covers(types: TypeSet, t: string): boolean {
  return types === null || types.has(t) || (t === "integer" && types.has("number"));
}

function valueSet(s: SchemaObject): unknown[] | null {
  if ("const" in s) return [s.const];
  if (Array.isArray(s.enum)) return s.enum;
  return null;
}

/** The types of the values a schema can accept: its declared types, narrowed by enum/const. */
function effectiveTypes(s: SchemaObject): TypeSet {
  const declared = declaredTypes(s);
  const values = valueSet(s);
  if (!values) return declared;
  return new Set(values.map(jsonTypeOf).filter((t) => covers(declared, t)));
}

function typesIntersect(a: TypeSet, b: TypeSet): boolean {
  if (a === null || b === null) return true;
  for (const t of a) if (covers(b, t)) return true;
  for (const t of b) if (covers(a, t)) return true;
  return false;
}

function showTypes(types: TypeSet): string {
  return types === null ? "any type" : [...types].join(" | ") || "nothing";
}

function showValue(value: unknown): string {
  const text = canonicalJson(value);
  return text.length > 60 ? text.slice(0, 57) + "..." : text;
}

// ---------------------------------------------------------------------------------------------
// The differ

type Resolved = SchemaNode | OpaqueRef;

class Differ {
  /** Pairs being compared right now (cycle guard: a pair met again is assumed unchanged). */
  private readonly inProgress = new Map<object, Set<object>>();
  private readonly mergedCache = new WeakMap<object, WeakMap<object, SchemaObject>>();
  private readonly splitCache = new WeakMap<object, SchemaObject[]>();
  private readonly strippedCache = new WeakMap<object, SchemaObject>();

  constructor(
    private readonly resolveExternal: ExternalRefResolver | undefined,
    private readonly oldSlots: Map<string, string> = new Map(),
    private readonly newSlots: Map<string, string> = new Map(),
  ) {}

  private resolve(node: SchemaNode): Resolved {
    return resolveNode(node, this.resolveExternal);
  }

  private same(a: SchemaNode, b: SchemaNode): boolean {
    return sameSchema(a, b, this.resolveExternal);
  }

  diff(oldNode: SchemaNode, newNode: SchemaNode, pointer: string, branch: string, out: Change[]): void {
    const emit: Emit = (rule, message, keyword, probe) => {
      const change: Change = { pointer, rule, kind: CHANGE_RULES[rule], message: branch ? `${message} (in ${branch})` : message };
      if (keyword !== undefined) change.keyword = keyword;
      if (probe !== undefined) probes.set(change, probe);
      out.push(change);
    };

    // Family slots: compared by family; a side without a slot here faces what a slot accepts.
    const oldSlot = this.oldSlots.get(pointer);
    const newSlot = this.newSlots.get(pointer);
    if (oldSlot !== undefined && newSlot !== undefined) {
      if (oldSlot !== newSlot) emit("change-slot-family", `family slot changed from ${oldSlot} to ${newSlot}`);
      return;
    }
    if (oldSlot !== undefined) oldNode = { schema: OPAQUE_SLOT_SCHEMA, doc: oldNode.doc };
    if (newSlot !== undefined) newNode = { schema: OPAQUE_SLOT_SCHEMA, doc: newNode.doc };

    const ro = this.resolve(oldNode);
    const rn = this.resolve(newNode);
    if (isOpaque(ro) !== isOpaque(rn) && sameExternalTarget(oldNode.schema, newNode.schema)) return; // one side unreadable

    if (isOpaque(ro) || isOpaque(rn)) {
      if (isOpaque(ro) && isOpaque(rn)) {
        if (ro.identity !== rn.identity) emit("ref-change", `reference changed from ${ro.ref} to ${rn.ref}`, "$ref");
      } else if (isOpaque(ro)) {
        emit("ref-change", `reference ${ro.ref} (not resolvable) replaced by an inline schema`, "$ref");
      } else if (isOpaque(rn)) {
        emit("ref-change", `schema replaced by a reference ${(rn as OpaqueRef).ref} that can not be resolved`, "$ref");
      }
      return;
    }

    if (ro.schema === false) return; // the old schema accepted nothing: nothing stored can break
    if (rn.schema === false) {
      emit("narrow-type", "no value is accepted any more (schema is false)", "type");
      return;
    }
    const os = ro.schema === true ? EMPTY : ro.schema;
    const ns = rn.schema === true ? EMPTY : rn.schema;
    if (os === ns && (os === EMPTY || ro.doc.root === rn.doc.root)) return; // the very same schema
    const o: SchemaNode = { schema: os, doc: ro.doc };
    const n: SchemaNode = { schema: ns, doc: rn.doc };

    const pending = this.inProgress.get(os);
    if (pending?.has(ns)) return;
    if (pending) pending.add(ns);
    else this.inProgress.set(os, new Set([ns]));
    try {
      this.diffAnnotations(os, ns, emit);
      if (isUnion(os) || isUnion(ns)) this.diffUnion(o, n, pointer, branch, out, emit);
      else this.diffPlain(o, n, pointer, branch, out, emit);
    } finally {
      this.inProgress.get(os)?.delete(ns);
    }
  }

  private diffAnnotations(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    const changed: string[] = [];
    for (const key of new Set([...Object.keys(os), ...Object.keys(ns)])) {
      if (isAnnotationKeyword(key) && !jsonEqual(os[key], ns[key])) changed.push(key);
    }
    if (changed.length > 0) emit("annotation-change", `annotation changed: ${changed.sort().join(", ")}`);
    if (!jsonEqual(os.discriminator, ns.discriminator)) {
      const op = isObject(os.discriminator) ? os.discriminator.propertyName : undefined;
      const np = isObject(ns.discriminator) ? ns.discriminator.propertyName : undefined;
      if (op !== undefined && np !== undefined && op !== np) {
        emit("unknown-keyword-change", `discriminator changed from "${String(op)}" to "${String(np)}"`, "discriminator");
      } else {
        emit("annotation-change", "annotation changed: discriminator");
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // A schema without anyOf/oneOf

  private diffPlain(o: SchemaNode, n: SchemaNode, pointer: string, branch: string, out: Change[], emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldTypes = effectiveTypes(os);
    const relevant = (keyword: string): boolean => {
      const group = KEYWORD_GROUP[keyword];
      return !group || group.some((t) => covers(oldTypes, t) || (t === "number" && covers(oldTypes, "integer")));
    };

    this.diffTypes(os, ns, oldTypes, emit);
    this.diffValues(os, ns, emit);
    const oldValues = valueSet(os);
    if (oldValues && (relevant("minimum") || relevant("minLength"))) {
      // A finite set of old values: each is checked against the new scalar keywords (an enum implies its lengths and bounds).
      this.diffScalarValues(oldValues, os, ns, emit);
    } else {
      if (relevant("minimum")) this.diffNumbers(os, ns, oldTypes, emit);
      if (relevant("minLength")) this.diffStrings(os, ns, emit);
    }
    if (relevant("minItems")) this.diffItems(o, n, pointer, branch, out, emit);
    if (relevant("properties")) {
      this.diffCounts(os, ns, "minProperties", "maxProperties", emit);
      this.diffObject(o, n, pointer, branch, out, emit);
    }
    this.diffAllOf(o, n, pointer, branch, out, emit);
    this.diffOtherKeywords(o, n, relevant, emit);
  }

  private diffTypes(os: SchemaObject, ns: SchemaObject, oldTypes: TypeSet, emit: Emit): void {
    const oldDeclared = declaredTypes(os);
    const newDeclared = declaredTypes(ns);
    const lost =
      oldTypes === null
        ? newDeclared === null
          ? []
          : ["any other type"]
        : [...oldTypes].filter((t) => !covers(newDeclared, t));
    if (lost.length > 0) {
      const narrowedInteger = lost.length === 1 && lost[0] === "number" && newDeclared?.has("integer");
      emit(
        "narrow-type",
        narrowedInteger
          ? "type narrowed from number to integer"
          : `type narrowed from ${showTypes(oldTypes)} to ${showTypes(newDeclared)}`,
        "type",
        lost[0] === "any other type" ? undefined : { type: lost[0] },
      );
      return;
    }
    const gained =
      oldDeclared === null ? false : newDeclared === null || [...newDeclared].some((t) => !covers(oldDeclared, t));
    if (gained) emit("widen-type", `type widened from ${showTypes(oldDeclared)} to ${showTypes(newDeclared)}`, "type");
  }

  private diffValues(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    const oldValues = valueSet(os);
    const newValues = valueSet(ns);
    if (!oldValues && !newValues) return;
    if (!oldValues && newValues) {
      if ("const" in ns) emit("add-const", `value pinned to const ${showValue(ns.const)}`, "const", { notIn: newValues });
      else emit("add-enum", `value restricted to enum ${showValue(newValues)}`, "enum", { notIn: newValues });
      return;
    }
    if (oldValues && !newValues) {
      if ("const" in os) emit("remove-const", `const ${showValue(os.const)} removed`, "const");
      else emit("remove-enum", "enum restriction removed", "enum");
      return;
    }
    const oldList = oldValues as unknown[];
    const newList = newValues as unknown[];
    const removed = oldList.filter((v) => !newList.some((w) => jsonEqual(v, w)));
    const added = newList.filter((v) => !oldList.some((w) => jsonEqual(v, w)));
    if ("const" in os && "const" in ns && removed.length > 0) {
      emit("change-const", `const changed from ${showValue(os.const)} to ${showValue(ns.const)}`, "const", { value: os.const });
      return;
    }
    if (removed.length > 0) {
      emit("remove-enum-value", `enum value${removed.length > 1 ? "s" : ""} ${removed.map(showValue).join(", ")} removed`, "enum", {
        value: removed[0],
      });
    }
    if (added.length > 0) {
      emit("add-enum-value", `enum value${added.length > 1 ? "s" : ""} ${added.map(showValue).join(", ")} added`, "enum");
    }
  }

  /** Old values are a finite set: a new scalar keyword breaks exactly when some old value fails it. */
  private diffScalarValues(values: readonly unknown[], os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    for (const keyword of SCALAR_KEYWORDS) {
      if (jsonEqual(os[keyword], ns[keyword]) || ns[keyword] === undefined) continue;
      if (keyword === "exclusiveMinimum" || keyword === "exclusiveMaximum") {
        if (typeof ns[keyword] === "boolean") continue; // draft-04 modifier: judged with minimum / maximum
      }
      const failing = values.find((v) => !satisfiesScalar(v, keyword, ns));
      if (failing === undefined) {
        if (os[keyword] === undefined) emit("implied-constraint", `${keyword} ${showValue(ns[keyword])} added: every allowed value already satisfies it`, keyword);
        else emit("loosen-constraint", `${keyword} changed from ${showValue(os[keyword])} to ${showValue(ns[keyword])}: every allowed value still satisfies it`, keyword);
      } else {
        const what = os[keyword] === undefined ? `${keyword} ${showValue(ns[keyword])} added` : `${keyword} changed from ${showValue(os[keyword])} to ${showValue(ns[keyword])}`;
        emit("tighten-constraint", `${what}: the allowed value ${showValue(failing)} fails it`, keyword, { value: failing });
      }
    }
  }

  /** Bounds compared as sets of numbers; when the old schema holds only integers, as sets of integers. */
  private diffNumbers(os: SchemaObject, ns: SchemaObject, oldTypes: TypeSet, emit: Emit): void {
    const integers = oldTypes !== null && oldTypes.has("integer") && !oldTypes.has("number");
    for (const side of ["lower", "upper"] as const) {
      const ob = bound(os, side);
      const nb = bound(ns, side);
      if (!ob && !nb) continue;
      const name = side === "lower" ? "minimum" : "maximum";
      if (!ob && nb) {
        const probe = side === "lower" ? (nb.exclusive ? nb.value : nb.value - 1) : nb.exclusive ? nb.value : nb.value + 1;
        emit("tighten-constraint", `${nb.keyword} ${nb.value} added`, nb.keyword, { value: integers ? Math.round(probe) : probe });
        continue;
      }
      if (ob && !nb) {
        emit("loosen-constraint", `${ob.keyword} ${ob.value} removed`, ob.keyword);
        continue;
      }
      const a = ob as Bound;
      const b = nb as Bound;
      if (a.value === b.value && a.exclusive === b.exclusive) continue;
      if (integers) {
        // Integer semantics: exclusiveMinimum 0 and minimum 1 admit the same integers.
        const ai = integerBound(a, side);
        const bi = integerBound(b, side);
        if (ai === bi) continue;
        const tighter = side === "lower" ? bi > ai : bi < ai;
        const verb = side === "lower" ? (tighter ? "raised" : "lowered") : tighter ? "lowered" : "raised";
        emit(
          tighter ? "tighten-constraint" : "loosen-constraint",
          `${name} ${verb} from ${showBound(a)} to ${showBound(b)} (integers ${side === "lower" ? "from" : "up to"} ${ai} -> ${bi})`,
          b.keyword,
          tighter ? { value: side === "lower" ? ai : ai } : undefined,
        );
        continue;
      }
      const tighter =
        side === "lower"
          ? b.value > a.value || (b.value === a.value && b.exclusive && !a.exclusive)
          : b.value < a.value || (b.value === a.value && b.exclusive && !a.exclusive);
      const verb = side === "lower" ? (tighter ? "raised" : "lowered") : tighter ? "lowered" : "raised";
      const probe = a.exclusive ? (a.value + b.value) / 2 : a.value;
      emit(
        tighter ? "tighten-constraint" : "loosen-constraint",
        `${name} ${verb} from ${showBound(a)} to ${showBound(b)}`,
        b.keyword,
        tighter ? { value: probe } : undefined,
      );
    }
    const om = typeof os.multipleOf === "number" ? os.multipleOf : integers ? 1 : undefined;
    const nm = typeof ns.multipleOf === "number" ? ns.multipleOf : undefined;
    if (om !== nm && !(nm === undefined && os.multipleOf === undefined)) {
      const shown = typeof os.multipleOf === "number" ? os.multipleOf : undefined;
      if (nm === undefined) emit("loosen-constraint", `multipleOf ${shown} removed`, "multipleOf");
      else if (om === undefined) emit("tighten-constraint", `multipleOf ${nm} added`, "multipleOf", { value: nm / 2 });
      else if (isMultiple(om, nm)) {
        if (shown === undefined) emit("implied-constraint", `multipleOf ${nm} added: every integer is a multiple of it`, "multipleOf");
        else emit("loosen-constraint", `multipleOf changed from ${shown} to ${nm}`, "multipleOf");
      } else if (shown === undefined) emit("tighten-constraint", `multipleOf ${nm} added`, "multipleOf", { value: 1 });
      else emit("tighten-constraint", `multipleOf changed from ${shown} to ${nm}`, "multipleOf", { value: om });
    }
  }

  /** Lengths, `pattern` and `format` compared as languages: a constraint already implied by the old ones is no change. */
  private diffStrings(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    const old = stringConstraints(os);
    const omin = old.minLength ?? 0;
    const nmin = typeof ns.minLength === "number" ? ns.minLength : 0;
    const omax = old.maxLength ?? Infinity;
    const nmax = typeof ns.maxLength === "number" ? ns.maxLength : Infinity;
    const show = (v: number): string => (v === Infinity ? "none" : String(v));
    if (nmin < omin) emit("loosen-constraint", `minLength lowered from ${omin} to ${nmin}`, "minLength");
    if (nmax > omax) emit("loosen-constraint", `maxLength raised from ${show(omax)} to ${show(nmax)}`, "maxLength");
    for (const [kw, tighter, from, to] of [
      ["minLength", nmin > omin, omin, nmin],
      ["maxLength", nmax < omax, omax, nmax],
    ] as const) {
      if (!tighter) continue;
      const verb = kw === "minLength" ? "raised" : "lowered";
      const outcome = lengthIncludes(old, kw === "minLength" ? nmin : 0, kw === "maxLength" ? nmax : undefined);
      if (outcome.kind === "included") emit("implied-constraint", `${kw} ${verb} from ${show(from)} to ${show(to)}: every allowed string already has such a length`, kw);
      else if (outcome.kind === "excluded") emit("tighten-constraint", `${kw} ${verb} from ${show(from)} to ${show(to)}`, kw, { value: outcome.witness });
      else emit("cannot-decide", `${kw} ${verb} from ${show(from)} to ${show(to)}: ${outcome.reason}`, kw);
    }

    const op = typeof os.pattern === "string" ? os.pattern : undefined;
    const np = typeof ns.pattern === "string" ? ns.pattern : undefined;
    if (op !== np) {
      if (np === undefined) emit("loosen-constraint", `pattern ${showValue(op)} removed`, "pattern");
      else {
        const what = op === undefined ? `pattern ${showValue(np)} added` : `pattern changed from ${showValue(op)} to ${showValue(np)}`;
        const outcome = patternIncludes(old, np);
        if (outcome.kind === "included") {
          if (op === undefined) emit("implied-constraint", `${what}: every allowed string already matches it`, "pattern");
          else emit("loosen-constraint", `${what}: every string the old pattern allowed still matches`, "pattern");
        } else if (outcome.kind === "excluded") emit("tighten-constraint", what, "pattern", { value: outcome.witness });
        else emit("cannot-decide", `${what}: ${outcome.reason}`, "pattern");
      }
    }

    const of = typeof os.format === "string" ? os.format : undefined;
    const nf = typeof ns.format === "string" ? ns.format : undefined;
    if (of !== nf) {
      if (nf === undefined) emit("loosen-constraint", `format ${showValue(of)} removed`, "format");
      else if (of === undefined) emit("tighten-constraint", `format ${showValue(nf)} added`, "format", { value: "" });
      else emit("tighten-constraint", `format changed from ${showValue(of)} to ${showValue(nf)}`, "format");
    }
  }

  private diffCounts(os: SchemaObject, ns: SchemaObject, minKw: string, maxKw: string, emit: Emit): void {
    const omin = typeof os[minKw] === "number" ? (os[minKw] as number) : 0;
    const nmin = typeof ns[minKw] === "number" ? (ns[minKw] as number) : 0;
    if (nmin > omin) emit("tighten-constraint", `${minKw} raised from ${omin} to ${nmin}`, minKw);
    else if (nmin < omin) emit("loosen-constraint", `${minKw} lowered from ${omin} to ${nmin}`, minKw);
    const omax = typeof os[maxKw] === "number" ? (os[maxKw] as number) : Infinity;
    const nmax = typeof ns[maxKw] === "number" ? (ns[maxKw] as number) : Infinity;
    const show = (v: number): string => (v === Infinity ? "none" : String(v));
    if (nmax < omax) emit("tighten-constraint", `${maxKw} lowered from ${show(omax)} to ${show(nmax)}`, maxKw);
    else if (nmax > omax) emit("loosen-constraint", `${maxKw} raised from ${show(omax)} to ${show(nmax)}`, maxKw);
  }

  /**
   * Arrays: positions the old schema can hold (a closed tuple holds no more than its items, and
   * `maxItems` caps the rest) are compared one by one; counts and uniqueness implied by them are no change.
   */
  private diffItems(o: SchemaNode, n: SchemaNode, pointer: string, branch: string, out: Change[], emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oi = itemsOf(os);
    const ni = itemsOf(ns);
    const oldMax = Math.min(typeof os.maxItems === "number" ? os.maxItems : Infinity, oi.rest === false ? oi.prefix.length : Infinity);
    const oldMin = typeof os.minItems === "number" ? os.minItems : 0;
    const newMin = typeof ns.minItems === "number" ? ns.minItems : 0;
    const newMax = typeof ns.maxItems === "number" ? ns.maxItems : Infinity;
    const show = (v: number): string => (v === Infinity ? "none" : String(v));
    if (newMin > oldMin) emit("tighten-constraint", `minItems raised from ${oldMin} to ${newMin}`, "minItems", { itemsBeyond: oldMin });
    else if (newMin < oldMin) emit("loosen-constraint", `minItems lowered from ${oldMin} to ${newMin}`, "minItems");
    const oldMaxKw = typeof os.maxItems === "number" ? os.maxItems : Infinity;
    if (newMax < oldMax) emit("tighten-constraint", `maxItems lowered from ${show(oldMaxKw)} to ${show(newMax)}`, "maxItems", { itemsBeyond: newMax + 1 });
    else if (newMax > oldMaxKw) emit("loosen-constraint", `maxItems raised from ${show(oldMaxKw)} to ${show(newMax)}`, "maxItems");
    else if (newMax < oldMaxKw) emit("implied-constraint", `maxItems lowered to ${newMax}: the old items already allow at most ${oldMax}`, "maxItems");
    if (!os.uniqueItems && ns.uniqueItems === true) {
      if (oldMax <= 1) emit("implied-constraint", "items must now be unique: the old schema allows at most one item", "uniqueItems");
      else emit("tighten-constraint", "items must now be unique", "uniqueItems", { uniqueItems: true });
    }
    if (os.uniqueItems === true && !ns.uniqueItems) emit("loosen-constraint", "items no longer need to be unique", "uniqueItems");

    const length = Math.min(Math.max(oi.prefix.length, ni.prefix.length), oldMax);
    for (let i = 0; i < length; i++) {
      const newItem = ni.prefix[i] ?? ni.rest;
      if (i >= ni.prefix.length && newItem === false) {
        emit("tighten-constraint", `an item at position ${i} is no longer accepted (the tuple ends at ${ni.prefix.length}: additionalItems is false)`, "additionalItems", {
          itemsBeyond: i + 1,
        });
        return;
      }
      this.diff({ schema: oi.prefix[i] ?? oi.rest, doc: o.doc }, { schema: newItem, doc: n.doc }, childPointer(pointer, i), branch, out);
    }
    if (oldMax <= length) return; // no position past the tuples can hold a value
    if (ni.rest === false && oi.rest !== false) {
      emit("tighten-constraint", `items after position ${length - 1 < 0 ? 0 : length} are no longer accepted (additionalItems is false)`, "additionalItems", {
        itemsBeyond: length + 1,
      });
      return;
    }
    this.diff({ schema: oi.rest, doc: o.doc }, { schema: ni.rest, doc: n.doc }, childPointer(pointer, "*"), branch, out);
  }

  private diffObject(o: SchemaNode, n: SchemaNode, pointer: string, branch: string, out: Change[], emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldProps = isObject(os.properties) ? (os.properties as Record<string, JsonSchema>) : {};
    const newProps = isObject(ns.properties) ? (ns.properties as Record<string, JsonSchema>) : {};
    const oldReq = new Set(Array.isArray(os.required) ? os.required.filter((r): r is string => typeof r === "string") : []);
    const newReq = new Set(Array.isArray(ns.required) ? ns.required.filter((r): r is string => typeof r === "string") : []);
    const removed = Object.keys(oldProps).filter((p) => !(p in newProps));
    const added = Object.keys(newProps).filter((p) => !(p in oldProps));
    const oldAdditional = normalizeAdditional(os.additionalProperties);
    const newAdditional = normalizeAdditional(ns.additionalProperties);
    const at = (p: string): Emit => (rule, message, keyword, probe) => {
      const change: Change = {
        pointer: childPointer(pointer, p),
        rule,
        kind: CHANGE_RULES[rule],
        message: branch ? `${message} (in ${branch})` : message,
      };
      if (keyword !== undefined) change.keyword = keyword;
      if (probe !== undefined) probes.set(change, probe);
      out.push(change);
    };

    const newPatterns = isObject(ns.patternProperties) ? (ns.patternProperties as Record<string, JsonSchema>) : {};
    for (const p of removed) {
      // A key the new schema still accepts through patternProperties or an additionalProperties schema is not removed:
      // its values must match what now applies to it.
      const covering = Object.keys(newPatterns).filter((q) => {
        try {
          return new RegExp(q, "u").test(p);
        } catch {
          return false;
        }
      });
      if (covering.length > 0 || (covering.length === 0 && isObject(newAdditional))) {
        const targets = covering.length > 0 ? covering.map((q) => newPatterns[q]) : [newAdditional as SchemaObject];
        for (const target of targets) this.diff({ schema: oldProps[p], doc: o.doc }, { schema: target, doc: n.doc }, childPointer(pointer, p), branch, out);
        continue;
      }
      const renamedTo = added.filter((q) => this.same({ schema: oldProps[p], doc: o.doc }, { schema: newProps[q], doc: n.doc }));
      const hint =
        renamedTo.length > 0
          ? ` (possibly renamed to ${renamedTo.map((q) => `"${q}"`).join(" or ")}: a rename is a removal for stored values)`
          : "";
      at(p)("remove-property", `property removed${hint}`, "properties", { present: true });
    }
    for (const p of added) {
      if (newReq.has(p)) at(p)("add-required", "required property added", "required", { absent: true });
      else at(p)("add-optional-property", "optional property added", "properties");
      // Values stored under this key used to match the index signature: they must still match.
      if (isObject(oldAdditional)) {
        this.diff({ schema: oldAdditional, doc: o.doc }, { schema: newProps[p], doc: n.doc }, childPointer(pointer, p), branch, out);
      }
    }
    for (const p of Object.keys(oldProps)) {
      if (!(p in newProps)) continue;
      this.diff({ schema: oldProps[p], doc: o.doc }, { schema: newProps[p], doc: n.doc }, childPointer(pointer, p), branch, out);
    }
    for (const p of newReq) {
      if (!oldReq.has(p) && !added.includes(p)) at(p)("make-required", "optional property made required", "required", { absent: true });
    }
    for (const p of oldReq) {
      if (!newReq.has(p) && !removed.includes(p)) at(p)("make-optional", "required property made optional", "required");
    }

    if (isObject(os.patternProperties) || isObject(ns.patternProperties)) {
      this.diffPatternProperties(o, n, oldAdditional, newAdditional, pointer, branch, out, emit);
      return;
    }
    // additionalProperties: `true` (absent) / `false` / a schema (an index signature).
    const extraKey = freshKey(oldProps, newProps);
    if (oldAdditional === false) {
      if (newAdditional !== false) {
        emit("open-additional-properties", "additionalProperties opened: extra properties are accepted now", "additionalProperties");
      }
    } else if (oldAdditional === true) {
      if (newAdditional === false) {
        emit("close-additional-properties", "additionalProperties closed: extra properties are rejected now", "additionalProperties", { extraKey });
      } else if (newAdditional !== true) {
        emit(
          "close-additional-properties",
          "additionalProperties closed to a schema: extra properties must match it now",
          "additionalProperties",
          { extraKey },
        );
      }
    } else if (newAdditional === false) {
      emit("close-additional-properties", "additionalProperties closed: extra properties are rejected now", "additionalProperties", { extraKey });
    } else if (newAdditional === true) {
      emit("open-additional-properties", "additionalProperties opened: extra properties may hold any value now", "additionalProperties");
    } else {
      this.diff({ schema: oldAdditional, doc: o.doc }, { schema: newAdditional, doc: n.doc }, childPointer(pointer, "*"), branch, out);
    }
  }

  /**
   * `patternProperties` read as key languages: a stored key lands in a named property, in every
   * pattern it matches, or in `additionalProperties`. For each old group of keys, the new groups
   * the same keys fall into (found by automata intersection) must accept its values.
   */
  private diffPatternProperties(
    o: SchemaNode,
    n: SchemaNode,
    oldAdditional: boolean | SchemaObject,
    newAdditional: boolean | SchemaObject,
    pointer: string,
    branch: string,
    out: Change[],
    emit: Emit,
  ): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldPP = isObject(os.patternProperties) ? (os.patternProperties as Record<string, JsonSchema>) : {};
    const newPP = isObject(ns.patternProperties) ? (ns.patternProperties as Record<string, JsonSchema>) : {};
    const oldNamed = isObject(os.properties) ? (os.properties as Record<string, JsonSchema>) : {};
    const newNamed = isObject(ns.properties) ? (ns.properties as Record<string, JsonSchema>) : {};
    const oldPatterns = Object.keys(oldPP);
    const newPatterns = Object.keys(newPP);
    const undecided = (reason: string): void => emit("cannot-decide", `patternProperties: ${reason}`, "patternProperties");
    const compare = (a: JsonSchema, b: JsonSchema, key: string): void =>
      this.diff({ schema: a, doc: o.doc }, { schema: b, doc: n.doc }, childPointer(pointer, key), branch, out);
    const matches = (pattern: string, key: string): boolean => {
      try {
        return new RegExp(pattern, "u").test(key);
      } catch {
        return false;
      }
    };

    // Named properties kept: a new pattern matching the name applies to its values too.
    for (const p of Object.keys(oldNamed)) {
      if (!(p in newNamed)) continue;
      for (const q of newPatterns) if (matches(q, p) && !oldPatterns.some((op) => op === q && matches(op, p))) compare(oldNamed[p], newPP[q], p);
    }
    // Keys of each old pattern: the new patterns they match, else the new additionalProperties.
    for (const p of oldPatterns) {
      for (const q of newPatterns) {
        const overlap = patternOverlap(p, q);
        if ("undecided" in overlap) undecided(overlap.undecided);
        else if (overlap.overlap) compare(oldPP[p], newPP[q], overlap.witness);
      }
      // A key the new schema names is judged by that property; any other key is left to additionalProperties.
      const leftOver = patternMinus(p, [...newPatterns, ...Object.keys(newNamed).map(exactKeyPattern)]);
      if (leftOver.kind === "undecided") undecided(leftOver.reason);
      else if (leftOver.kind === "excluded") {
        const key = leftOver.witness;
        if (newAdditional === false) {
          emit("close-additional-properties", `keys matching ${showValue(p)} (like ${showValue(key)}) are no longer accepted`, "patternProperties", { extraKey: key });
        } else if (newAdditional !== true) compare(oldPP[p], newAdditional, key);
      }
    }
    // Keys the old schema left to additionalProperties.
    if (oldAdditional === false) {
      if (newAdditional !== false) emit("open-additional-properties", "additionalProperties opened: extra properties are accepted now", "additionalProperties");
      return;
    }
    for (const q of newPatterns) {
      const fresh = patternMinus(q, [...oldPatterns, ...Object.keys(oldNamed).map(exactKeyPattern)]);
      if (fresh.kind === "undecided") undecided(fresh.reason);
      else if (fresh.kind === "excluded") compare(oldAdditional, newPP[q], fresh.witness);
    }
    const rest = patternMinus("", [...oldPatterns, ...newPatterns]);
    if (rest.kind === "undecided") undecided(rest.reason);
    else if (rest.kind === "excluded") {
      const key = Object.hasOwn(oldNamed, rest.witness) || Object.hasOwn(newNamed, rest.witness) ? undefined : rest.witness;
      if (newAdditional === false) {
        emit("close-additional-properties", "additionalProperties closed: extra properties are rejected now", "additionalProperties", key ? { extraKey: key } : undefined);
      } else if (newAdditional !== true) {
        if (oldAdditional === true) {
          emit("close-additional-properties", "additionalProperties closed to a schema: extra properties must match it now", "additionalProperties", key ? { extraKey: key } : undefined);
        } else compare(oldAdditional, newAdditional, "*");
      } else if (oldAdditional !== true) {
        emit("open-additional-properties", "additionalProperties opened: extra properties may hold any value now", "additionalProperties");
      }
    }
  }

  private diffAllOf(o: SchemaNode, n: SchemaNode, pointer: string, branch: string, out: Change[], emit: Emit): void {
    const oldAll = Array.isArray((o.schema as SchemaObject).allOf) ? ((o.schema as SchemaObject).allOf as JsonSchema[]) : [];
    const newAll = Array.isArray((n.schema as SchemaObject).allOf) ? ((n.schema as SchemaObject).allOf as JsonSchema[]) : [];
    if (oldAll.length === 0 && newAll.length === 0) return;
    const unmatchedNew = [...newAll];
    const unmatchedOld: JsonSchema[] = [];
    for (const a of oldAll) {
      const i = unmatchedNew.findIndex((b) => this.same({ schema: a, doc: o.doc }, { schema: b, doc: n.doc }));
      if (i >= 0) unmatchedNew.splice(i, 1);
      else unmatchedOld.push(a);
    }
    if (unmatchedOld.length > 0 && unmatchedOld.length === unmatchedNew.length) {
      unmatchedOld.forEach((a, i) => this.diff({ schema: a, doc: o.doc }, { schema: unmatchedNew[i], doc: n.doc }, pointer, branch, out));
      return;
    }
    for (const b of unmatchedNew) emit("tighten-constraint", `allOf member added: ${describeSchema(b)}`, "allOf");
    for (const a of unmatchedOld) emit("loosen-constraint", `allOf member removed: ${describeSchema(a)}`, "allOf");
  }

  private diffOtherKeywords(o: SchemaNode, n: SchemaNode, relevant: (k: string) => boolean, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    for (const key of new Set([...Object.keys(os), ...Object.keys(ns)])) {
      if (HANDLED.has(key) || CONTAINERS.has(key) || isAnnotationKeyword(key) || !relevant(key)) continue;
      const same = this.same({ schema: { [key]: os[key] }, doc: o.doc }, { schema: { [key]: ns[key] }, doc: n.doc });
      if (same) continue;
      if (LOOSENED_WHEN_REMOVED.has(key) && ns[key] === undefined) {
        emit("loosen-constraint", `${key} removed`, key);
        continue;
      }
      const known = LOOSENED_WHEN_REMOVED.has(key);
      const what = os[key] === undefined ? "added" : ns[key] === undefined ? "removed" : "changed";
      emit(
        "unknown-keyword-change",
        known
          ? `keyword "${key}" ${what} (not analysed: treated as breaking)`
          : `unknown keyword "${key}" ${what} (treated as breaking)`,
        key,
      );
    }
  }

  // -------------------------------------------------------------------------------------------
  // Unions (anyOf / oneOf, and type arrays facing a union)

  private diffUnion(o: SchemaNode, n: SchemaNode, pointer: string, branch: string, out: Change[], emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldBranches = this.branchesOf(o, 0);
    const newBranches = this.branchesOf(n, 0);
    const matched = new Set<number>();

    for (const ob of oldBranches) {
      if (isOpaque(ob)) {
        const i = newBranches.findIndex((nb) => isOpaque(nb) && nb.identity === ob.identity);
        if (i >= 0) matched.add(i);
        else emit("remove-union-branch", `union branch ${ob.ref} removed`, unionKeyword(os));
        continue;
      }
      const tag = typeTagOf(ob, this.resolveExternal);
      if (tag !== undefined) {
        const i = newBranches.findIndex((nb) => !isOpaque(nb) && typeTagOf(nb, this.resolveExternal) === tag);
        if (i >= 0) {
          matched.add(i);
          this.diff(ob, newBranches[i] as SchemaNode, pointer, joinBranch(branch, `$type "${tag}"`), out);
        } else {
          emit("remove-union-branch", `union branch $type "${tag}" removed`, unionKeyword(os));
        }
        continue;
      }
      const candidates = newBranches
        .map((nb, i) => ({ nb, i }))
        .filter((c): c is { nb: SchemaNode; i: number } => !isOpaque(c.nb) && typeTagOf(c.nb, this.resolveExternal) === undefined);
      const exact = candidates.find((c) => this.same(ob, c.nb));
      if (exact) {
        matched.add(exact.i);
        continue;
      }
      let best: { i: number; changes: Change[]; breaking: number } | undefined;
      for (const c of candidates) {
        const trial: Change[] = [];
        this.diff(ob, c.nb, pointer, branch, trial);
        const breaking = trial.filter((t) => t.kind === "breaking").length;
        if (!best || breaking < best.breaking || (breaking === best.breaking && trial.length < best.changes.length)) {
          best = { i: c.i, changes: trial, breaking };
        }
      }
      const obTypes = effectiveTypes(ob.schema as SchemaObject);
      const bestNode = best ? (newBranches[best.i] as SchemaNode) : undefined;
      if (best && (best.breaking === 0 || typesIntersect(obTypes, effectiveTypes(bestNode!.schema as SchemaObject)))) {
        matched.add(best.i);
        out.push(...best.changes);
      } else {
        emit("remove-union-branch", `union branch ${describeSchema(ob.schema)} removed`, unionKeyword(os));
      }
    }

    newBranches.forEach((nb, i) => {
      if (matched.has(i)) return;
      const what = isOpaque(nb)
        ? nb.ref
        : typeTagOf(nb, this.resolveExternal) !== undefined
          ? `$type "${typeTagOf(nb, this.resolveExternal)}"`
          : describeSchema(nb.schema);
      emit("add-union-branch", `union branch ${what} added`, unionKeyword(ns));
    });

    // oneOf demands exactly one matching branch: a value matching two is rejected. Pairs of
    // branches that were both in the old oneOf never matched the same old value.
    const oldExclusive = Array.isArray(os.oneOf) && !Array.isArray(os.anyOf);
    const newExclusive = Array.isArray(ns.oneOf) && !Array.isArray(ns.anyOf);
    if (newExclusive) {
      // The oneOf's own branches (a nested anyOf or type array inside one branch is not exclusive).
      const exclusiveNew = this.oneOfBranches(n);
      const exclusiveOld = oldExclusive ? this.oneOfBranches(o) : [];
      const wasExclusive = (nb: Resolved): boolean =>
        exclusiveOld.some((ob) => (isOpaque(ob) || isOpaque(nb) ? isOpaque(ob) && isOpaque(nb) && ob.identity === nb.identity : this.same(ob, nb)));
      const pair = this.overlappingPair(exclusiveNew, wasExclusive);
      if (pair) {
        const [a, b] = pair.map((i) => branchName(exclusiveNew[i], this.resolveExternal));
        emit(
          "tighten-constraint",
          oldExclusive
            ? `oneOf branches ${a} and ${b} can both match a value: such a value is rejected now (oneOf allows exactly one match)`
            : "union became oneOf and its branches can overlap: a value matching two is rejected now",
          "oneOf",
          { overlapping: true },
        );
      }
    } else if (oldExclusive && isUnion(ns)) {
      emit("loosen-constraint", "oneOf became anyOf", "anyOf");
    }
  }

  /** The branches of a `oneOf`, each with the parent's other keywords merged in. */
  private oneOfBranches(node: SchemaNode): Resolved[] {
    const s = node.schema as SchemaObject;
    const base: SchemaObject = {};
    for (const [k, v] of Object.entries(s)) {
      if (k === "oneOf" || k === "discriminator" || isAnnotationKeyword(k) || CONTAINERS.has(k)) continue;
      base[k] = v;
    }
    const result: Resolved[] = [];
    for (const raw of s.oneOf as JsonSchema[]) {
      const rb = this.resolve({ schema: raw, doc: node.doc });
      if (isOpaque(rb)) {
        result.push(rb);
        continue;
      }
      if (rb.schema === false) continue;
      const bs = rb.schema === true ? EMPTY : rb.schema;
      result.push({ schema: Object.keys(base).length === 0 ? bs : this.merge(s, bs, base), doc: rb.doc });
    }
    return result;
  }

  /** The first pair of branches no rule proves disjoint (skipping pairs where both were already exclusive). */
  private overlappingPair(branches: Resolved[], wasExclusive: (b: Resolved) => boolean): [number, number] | undefined {
    const old = branches.map(wasExclusive);
    for (let i = 0; i < branches.length; i++) {
      for (let j = i + 1; j < branches.length; j++) {
        if (old[i] && old[j]) continue;
        if (!this.provablyDisjoint(branches[i], branches[j])) return [i, j];
      }
    }
    return undefined;
  }

  /** The alternatives a schema stands for: union branches (with the parent's other keywords merged in), or itself. */
  private branchesOf(node: SchemaNode, depth: number): Resolved[] {
    const s = node.schema as SchemaObject;
    const keyword = Array.isArray(s.anyOf) ? "anyOf" : Array.isArray(s.oneOf) ? "oneOf" : undefined;
    if (!keyword || depth > 8) return this.splitTypes({ schema: this.stripped(s), doc: node.doc });
    const base: SchemaObject = {};
    for (const [k, v] of Object.entries(s)) {
      if (k === keyword || k === "discriminator" || isAnnotationKeyword(k) || CONTAINERS.has(k)) continue;
      base[k] = v;
    }
    const result: Resolved[] = [];
    for (const raw of s[keyword] as JsonSchema[]) {
      const rb = this.resolve({ schema: raw, doc: node.doc });
      if (isOpaque(rb)) {
        result.push(rb);
        continue;
      }
      if (rb.schema === false) continue;
      const bs = rb.schema === true ? EMPTY : rb.schema;
      const merged = Object.keys(base).length === 0 ? bs : this.merge(s, bs, base);
      result.push(...this.branchesOf({ schema: merged, doc: rb.doc }, depth + 1));
    }
    return result;
  }

  private merge(parent: SchemaObject, branch: SchemaObject, base: SchemaObject): SchemaObject {
    let byBranch = this.mergedCache.get(parent);
    if (!byBranch) this.mergedCache.set(parent, (byBranch = new WeakMap()));
    let merged = byBranch.get(branch);
    if (!merged) byBranch.set(branch, (merged = { ...base, ...branch }));
    return merged;
  }

  private stripped(s: SchemaObject): SchemaObject {
    if (!Object.keys(s).some(isAnnotationKeyword)) return s;
    let result = this.strippedCache.get(s);
    if (!result) {
      result = Object.fromEntries(Object.entries(s).filter(([k]) => !isAnnotationKeyword(k)));
      this.strippedCache.set(s, result);
    }
    return result;
  }

  /** `{type: [a, b], ...}` stands for two alternatives when compared with a union. */
  private splitTypes(node: SchemaNode): SchemaNode[] {
    const s = node.schema as SchemaObject;
    if (!Array.isArray(s.type) || s.type.length < 2) return [node];
    let parts = this.splitCache.get(s);
    if (!parts) {
      parts = (s.type as unknown[]).map((t) => ({ ...s, type: t }));
      this.splitCache.set(s, parts);
    }
    return parts.map((p) => ({ schema: p, doc: node.doc }));
  }

  /**
   * True when no value can match both branches: distinct `$type`s (the discriminator), disjoint
   * consts / enums or types, a required property pinned to different consts, or a property one
   * requires and the other (closed) does not allow.
   */
  private provablyDisjoint(x: Resolved, y: Resolved): boolean {
    if (isOpaque(x) || isOpaque(y)) return false;
    // A branch that is itself a union (or a type array): every alternative must be disjoint.
    const xs = this.branchesOf(x, 0);
    const ys = this.branchesOf(y, 0);
    if (xs.length === 0 || ys.length === 0) return true; // a branch that accepts nothing
    return xs.every((a) => ys.every((b) => this.disjointPlain(a, b)));
  }

  private disjointPlain(x: Resolved, y: Resolved): boolean {
    if (isOpaque(x) || isOpaque(y)) return false;
    const a = x.schema as SchemaObject;
    const b = y.schema as SchemaObject;
    const ta = typeTagOf(x, this.resolveExternal);
    const tb = typeTagOf(y, this.resolveExternal);
    if (ta !== undefined && tb !== undefined && ta !== tb) return true;
    const va = valueSet(a);
    const vb = valueSet(b);
    if (va && vb && !va.some((v) => vb.some((w) => jsonEqual(v, w)))) return true;
    if (!typesIntersect(effectiveTypes(a), effectiveTypes(b))) return true;
    const objectOnly = (s: SchemaObject): boolean => {
      const t = effectiveTypes(s);
      return t !== null && t.size === 1 && t.has("object");
    };
    if (!objectOnly(a) && !objectOnly(b)) return false;
    const pinned = (node: SchemaNode, prop: string): unknown[] | null => {
      const props = (node.schema as SchemaObject).properties;
      if (!isObject(props) || props[prop] === undefined) return null;
      const r = this.resolve({ schema: props[prop] as JsonSchema, doc: node.doc });
      return isOpaque(r) || !isObject(r.schema) ? null : valueSet(r.schema);
    };
    const requiredOf = (s: SchemaObject): string[] => (Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : []);
    const forbids = (s: SchemaObject, prop: string): boolean =>
      objectOnly(s) && s.additionalProperties === false && !(isObject(s.properties) && prop in s.properties) && !isObject(s.patternProperties);
    for (const prop of requiredOf(a)) {
      if (requiredOf(b).includes(prop)) {
        const pa = pinned(x, prop);
        const pb = pinned(y, prop);
        if (pa && pb && !pa.some((v) => pb.some((w) => jsonEqual(v, w)))) return true;
      }
      if (objectOnly(a) && forbids(b, prop)) return true;
    }
    for (const prop of requiredOf(b)) if (objectOnly(b) && forbids(a, prop)) return true;
    return false;
  }
}

type Emit = (rule: ChangeRule, message: string, keyword?: string, probe?: Probe) => void;

function sameExternalTarget(a: JsonSchema, b: JsonSchema): boolean {
  return (
    isObject(a) &&
    isObject(b) &&
    typeof a.$ref === "string" &&
    typeof b.$ref === "string" &&
    !a.$ref.startsWith("#") &&
    refIdentity(a.$ref) === refIdentity(b.$ref)
  );
}

function isUnion(s: SchemaObject): boolean {
  return Array.isArray(s.anyOf) || Array.isArray(s.oneOf);
}

function unionKeyword(s: SchemaObject): string {
  return Array.isArray(s.oneOf) && !Array.isArray(s.anyOf) ? "oneOf" : "anyOf";
}

/** A pattern matching exactly one property name (a `u`-mode regex: only syntax characters escaped). */
function exactKeyPattern(name: string): string {
  return `^${name.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")}$`;
}

/** A property name neither schema declares, for an "extra property" witness. */
function freshKey(...named: Record<string, unknown>[]): string {
  for (let i = 0; ; i++) {
    const key = i === 0 ? "extra" : `extra${i}`;
    if (!named.some((n) => key in n)) return key;
  }
}

function branchName(b: Resolved, resolveExternal: ExternalRefResolver | undefined): string {
  if (isOpaque(b)) return b.ref;
  const tag = typeTagOf(b, resolveExternal);
  return tag !== undefined ? `$type "${tag}"` : describeSchema(b.schema);
}

function joinBranch(outer: string, inner: string): string {
  return outer ? `${outer} > ${inner}` : inner;
}

function normalizeAdditional(value: unknown): boolean | SchemaObject {
  if (value === undefined || value === true) return true;
  if (value === false) return false;
  if (isObject(value)) return Object.keys(value).length === 0 ? true : value;
  return true;
}

function itemsOf(s: SchemaObject): { prefix: JsonSchema[]; rest: JsonSchema } {
  if (Array.isArray(s.items)) {
    const rest = s.additionalItems;
    return { prefix: s.items as JsonSchema[], rest: typeof rest === "boolean" || isObject(rest) ? (rest as JsonSchema) : true };
  }
  if (typeof s.items === "boolean" || isObject(s.items)) return { prefix: [], rest: s.items as JsonSchema };
  return { prefix: [], rest: true };
}

interface Bound {
  value: number;
  exclusive: boolean;
  keyword: string;
}

function bound(s: SchemaObject, side: "lower" | "upper"): Bound | undefined {
  const inclusiveKw = side === "lower" ? "minimum" : "maximum";
  const exclusiveKw = side === "lower" ? "exclusiveMinimum" : "exclusiveMaximum";
  const candidates: Bound[] = [];
  const inclusive = s[inclusiveKw];
  const exclusive = s[exclusiveKw];
  if (typeof inclusive === "number") {
    // draft-04 style `exclusiveMinimum: true` modifies `minimum`.
    candidates.push({ value: inclusive, exclusive: exclusive === true, keyword: exclusive === true ? exclusiveKw : inclusiveKw });
  }
  if (typeof exclusive === "number") candidates.push({ value: exclusive, exclusive: true, keyword: exclusiveKw });
  if (candidates.length === 0) return undefined;
  return candidates.reduce((a, b) => {
    const bTighter = side === "lower" ? b.value > a.value : b.value < a.value;
    return bTighter || (b.value === a.value && b.exclusive) ? b : a;
  });
}

function showBound(b: Bound): string {
  return b.exclusive ? `${b.value} (exclusive)` : String(b.value);
}

/** The smallest (lower) or largest (upper) integer a bound admits. */
function integerBound(b: Bound, side: "lower" | "upper"): number {
  if (side === "lower") return b.exclusive ? Math.floor(b.value) + 1 : Math.ceil(b.value);
  return b.exclusive ? Math.ceil(b.value) - 1 : Math.floor(b.value);
}

/** Keywords on numbers and strings that a finite set of old values is checked against. */
const SCALAR_KEYWORDS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "format"] as const;

/** Whether one value satisfies one scalar keyword of a schema (values of other types pass, as in validators). */
export function satisfiesScalar(value: unknown, keyword: (typeof SCALAR_KEYWORDS)[number], s: SchemaObject): boolean {
  if (typeof value === "number") {
    const lower = bound(s, "lower");
    const upper = bound(s, "upper");
    switch (keyword) {
      case "minimum":
      case "exclusiveMinimum":
        return !lower || (lower.exclusive ? value > lower.value : value >= lower.value);
      case "maximum":
      case "exclusiveMaximum":
        return !upper || (upper.exclusive ? value < upper.value : value <= upper.value);
      case "multipleOf":
        return typeof s.multipleOf !== "number" || isMultiple(value, s.multipleOf);
      default:
        return true;
    }
  }
  if (typeof value === "string") {
    const length = [...value].length;
    switch (keyword) {
      case "minLength":
        return typeof s.minLength !== "number" || length >= s.minLength;
      case "maxLength":
        return typeof s.maxLength !== "number" || length <= s.maxLength;
      case "pattern":
        try {
          return typeof s.pattern !== "string" || new RegExp(s.pattern, "u").test(value);
        } catch {
          return false;
        }
      case "format":
        return typeof s.format !== "string" || formatAccepts(s.format, value);
      default:
        return true;
    }
  }
  return true;
}

/** Formats the runtime checks; an unknown format is not checked by validators (ajv with strict off). */
export function formatAccepts(format: string, value: string): boolean {
  if (format === "date-time") return isDateTime(value);
  if (format === "date") return /^\d{4}-\d{2}-\d{2}$/.test(value);
  return true;
}

function stringConstraints(s: SchemaObject): StringConstraints {
  const c: StringConstraints = {};
  if (typeof s.pattern === "string") c.patterns = [s.pattern];
  if (typeof s.minLength === "number") c.minLength = s.minLength;
  if (typeof s.maxLength === "number") c.maxLength = s.maxLength;
  if (typeof s.format === "string") c.format = s.format;
  return c;
}

function isMultiple(value: number, divisor: number): boolean {
  const q = value / divisor;
  return Math.abs(q - Math.round(q)) < 1e-9;
}

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

export type { JsonSchema, SchemaDoc, SchemaObject } from "./schema.js";
