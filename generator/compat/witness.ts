/**
 * Witnesses: for a breaking change, a small document the old schema accepts and the new one
 * rejects. Candidates are built from the old schema (a minimal valid document with the change's
 * probe value placed at the change's pointer, and a few variants); each is validated against both
 * schemas with ajv, and the shortest that passes old and fails new is kept. A change for which no
 * candidate does is not reported as breaking (see `assess.ts`).
 */
import type { ValidateFunction } from "ajv";
import type { NFA } from "refa";
import { type Change, type Probe, probeOf } from "./rule-catalogue.js";
import { setOwn } from "../runtime.js";
import { ASSERTED_FORMATS, FORMAT_EXAMPLES } from "./formats.js";
import { patternAutomaton } from "./regex.js";
import { type JsonSchema, type SchemaObject, canonicalJson, getByPointer, isObject } from "./schema.js";

/** Candidates tried per change: keeps a wide schema from stalling the check. */
const MAX_CANDIDATES = 400;
/** Variants kept per schema node near the change (fewer further down: one, the smallest, deep inside). */
const MAX_VARIANTS = 6;
/** Units of work (schema nodes instantiated, candidates validated) one witness search may spend. */
export const DEFAULT_WITNESS_WORK = 200_000;
/** What a validated candidate costs, in work units. */
const VALIDATION_COST = 20;

export interface WitnessContext {
  /** The old schema, bundled (self-contained). */
  oldSchema: JsonSchema;
  validOld: ValidateFunction;
  validNew: ValidateFunction;
  /** Work the search may spend (default `DEFAULT_WITNESS_WORK`). */
  workBudget?: number;
}

export interface WitnessSearch {
  /** The smallest document found that the old schema accepts and the new one rejects. */
  document?: unknown;
  /** True when the search stopped because its work budget ran out (not because it tried everything). */
  exhausted: boolean;
  /** Work spent, and the budget it had. */
  work: number;
  budget: number;
  /** Candidates validated. */
  tried: number;
}

/** Work left for one search; once spent, builders return what they have. */
export class WorkBudget {
  spent = 0;
  exhausted = false;
  constructor(readonly limit: number) {}
  spend(units = 1): boolean {
    if (this.spent + units > this.limit) {
      this.exhausted = true;
      return false;
    }
    this.spent += units;
    return true;
  }
}

/** The shortest candidate document the old schema accepts and the new one rejects, or undefined. */
export function findWitness(change: Change, ctx: WitnessContext): unknown {
  return searchWitness(change, ctx).document;
}

/** `findWitness`, saying whether the work budget ran out (an `undecided` verdict names that budget). */
export function searchWitness(change: Change, ctx: WitnessContext): WitnessSearch {
  const budget = new WorkBudget(ctx.workBudget ?? DEFAULT_WITNESS_WORK);
  let best: { doc: unknown; size: number } | undefined;
  let tried = 0;
  let exhausted = false;
  for (const doc of candidates(change, ctx.oldSchema, budget)) {
    if (++tried > MAX_CANDIDATES) break;
    if (!budget.spend(VALIDATION_COST)) {
      exhausted = true;
      break;
    }
    if (!ctx.validOld(doc) || ctx.validNew(doc)) continue;
    const size = canonicalJson(doc).length;
    if (!best || size < best.size) best = { doc, size };
  }
  exhausted ||= budget.exhausted;
  const out: WitnessSearch = {
    exhausted: best === undefined && exhausted,
    work: budget.spent,
    budget: budget.limit,
    tried,
  };
  if (best) out.document = best.doc;
  return out;
}

/** True when the document is accepted by the old schema and rejected by the new one. */
export function isWitness(doc: unknown, ctx: Pick<WitnessContext, "validOld" | "validNew">): boolean {
  return ctx.validOld(doc) === true && ctx.validNew(doc) === false;
}

/** Keywords about an object's or array's size: the boundary sizes are the candidates that tell old and new apart. */
const SIZE_KEYWORDS = new Set(["minProperties", "maxProperties", "minItems", "maxItems"]);

function* candidates(change: Change, root: JsonSchema, budget: WorkBudget): Generator<unknown> {
  const segments = parsePointer(change.pointer);
  const probe = probeOf(change);
  const builder = new Instances(root, budget);
  if (probe && ("absent" in probe || "present" in probe) && segments.length > 0) {
    const key = segments[segments.length - 1]!;
    const parent = segments.slice(0, -1);
    yield* builder.at(root, parent, (s) => builder.objectVariants(s, "present" in probe ? key : undefined), 0);
    return;
  }
  const sized = change.keyword !== undefined && SIZE_KEYWORDS.has(change.keyword);
  const extra = probe && "size" in probe ? [probe.size] : [];
  yield* builder.at(
    root,
    segments,
    (s) => [...(sized ? builder.boundarySizes(s, extra) : []), ...builder.leaf(s, probe)],
    0,
  );
}

/** Value-shape pointer segments (`*` kept as the wildcard). */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Nothing can be built (a `false` schema, a recursion with no way out, or the budget spent). */
const NONE: unique symbol = Symbol("none");
type Built = unknown | typeof NONE;

/** How many variants a node `depth` levels below the change gets: a few near it, the smallest one deep inside. */
function width(depth: number): number {
  return depth <= 1 ? MAX_VARIANTS : depth <= 3 ? 2 : 1;
}

/**
 * Builds small instances of schema nodes inside one (bundled) document. Depth is not capped: every
 * node built spends from the work budget, and recursion through a schema already being built is
 * cut (another alternative is taken), so a break 30 levels down is reached when the budget allows.
 */
export class Instances {
  private readonly smallest = new Map<unknown, unknown>();
  private readonly building = new Set<unknown>();

  constructor(
    private readonly root: JsonSchema,
    private readonly budget: WorkBudget = new WorkBudget(DEFAULT_WITNESS_WORK),
  ) {}

  private resolve(schema: unknown): SchemaObject | boolean {
    let current = schema;
    for (let i = 0; i < 32 && isObject(current) && typeof current.$ref === "string"; i++) {
      const ref = current.$ref;
      current = ref.startsWith("#") ? getByPointer(this.root, ref) : {};
    }
    if (typeof current === "boolean") return current;
    return isObject(current) ? current : true;
  }

  /** The alternatives a schema stands for: union branches merged with their parent, allOf merged. */
  alternatives(schema: unknown, depth = 0): SchemaObject[] {
    this.budget.spend();
    const resolved = this.resolve(schema);
    if (resolved === false) return [];
    if (resolved === true) return [{}];
    let merged: SchemaObject = resolved;
    if (Array.isArray(resolved.allOf)) {
      merged = { ...resolved };
      delete merged.allOf;
      for (const member of resolved.allOf) {
        const alts = this.alternatives(member, depth + 1);
        if (alts.length === 0) return [];
        merged = mergeSchemas(merged, alts[0]!);
      }
    }
    const keyword = Array.isArray(merged.anyOf) ? "anyOf" : Array.isArray(merged.oneOf) ? "oneOf" : undefined;
    if (!keyword || depth > 8) return [merged];
    const base = { ...merged };
    delete base[keyword];
    delete base.discriminator;
    const out: SchemaObject[] = [];
    for (const branch of merged[keyword] as unknown[]) {
      const resolvedBranch = this.resolve(branch);
      if (resolvedBranch === false) continue;
      out.push(...this.alternatives(mergeSchemas(base, resolvedBranch === true ? {} : resolvedBranch), depth + 1));
    }
    return out;
  }

  /** A few instances of a schema (not guaranteed valid: callers validate), the smallest first. */
  variants(schema: unknown, depth = 0): unknown[] {
    if (width(depth) === 1) {
      const one = this.minimal(schema);
      return one === NONE ? [] : [one];
    }
    const key = this.resolve(schema);
    if (this.building.has(key) || !this.budget.spend()) return [];
    this.building.add(key);
    try {
      const out: unknown[] = [];
      for (const alt of this.alternatives(schema)) {
        for (const variant of this.variantsOfPlain(alt, depth)) {
          if (out.length >= width(depth) * 2) return out;
          out.push(variant);
        }
      }
      return out;
    } finally {
      this.building.delete(key);
    }
  }

  /** The smallest instance this builder finds (remembered per schema node), or NONE. */
  minimal(schema: unknown): Built {
    const key = this.resolve(schema);
    if (this.smallest.has(key)) return this.smallest.get(key);
    if (this.building.has(key) || !this.budget.spend()) return NONE;
    this.building.add(key);
    try {
      for (const alt of this.alternatives(schema)) {
        const built = this.variantsOfPlain(alt, Infinity);
        if (built.length > 0) {
          this.smallest.set(key, built[0]);
          return built[0];
        }
      }
      return NONE;
    } finally {
      this.building.delete(key);
    }
  }

  private variantsOfPlain(s: SchemaObject, depth: number): unknown[] {
    if ("const" in s) return [s.const];
    if (Array.isArray(s.enum)) return s.enum.slice(0, MAX_VARIANTS);
    const types = typeof s.type === "string" ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : inferTypes(s);
    const out: unknown[] = [];
    for (const type of types) {
      switch (type) {
        case "null":
          out.push(null);
          break;
        case "boolean":
          out.push(false, true);
          break;
        case "integer":
          out.push(...numbers(s, true));
          break;
        case "number":
          out.push(...numbers(s, false));
          break;
        case "string":
          out.push(...strings(s));
          break;
        case "array":
          out.push(...this.arrayVariants(s, depth));
          break;
        case "object":
          out.push(...this.objectsOf(s, undefined, depth));
          break;
      }
      if (depth === Infinity && out.length > 0) return out;
    }
    return out;
  }

  /** Objects: required properties only (filled up to `minProperties`), then with each optional property (or `withKey`) added. */
  objectVariants(schema: unknown, withKey?: string, depth = 0): unknown[] {
    const out: unknown[] = [];
    for (const alternative of this.alternatives(schema)) {
      // An enum / const lists its objects: they are the only ones it accepts.
      const listed = listedValues(alternative);
      if (listed)
        out.push(...listed.filter((v) => isObject(v) && (withKey === undefined || Object.hasOwn(v, withKey))));
      else if (couldBe(alternative, "object")) out.push(...this.objectsOf(alternative, withKey, depth));
    }
    return out;
  }

  /** The schema a property `key` of an object of `s` is validated by. */
  private propertySchema(s: SchemaObject, key: string): unknown {
    const props = isObject(s.properties) ? s.properties : {};
    if (Object.hasOwn(props, key)) return props[key];
    return patternSchema(s, key) ?? additionalOf(s);
  }

  /** The smallest object of `s`: its required properties, then more (declared, then fresh keys) up to `minProperties`. */
  private baseObject(s: SchemaObject, atLeast = 0): Record<string, unknown> | undefined {
    const props = isObject(s.properties) ? s.properties : {};
    const required = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : [];
    const base: Record<string, unknown> = {};
    for (const key of required) {
      const minimal = this.minimal(this.propertySchema(s, key));
      if (minimal === NONE) return undefined;
      setOwn(base, key, minimal);
    }
    const min = Math.max(atLeast, typeof s.minProperties === "number" ? s.minProperties : 0);
    if (Object.keys(base).length < min) {
      for (const key of Object.keys(props)) {
        if (Object.keys(base).length >= min) break;
        if (Object.hasOwn(base, key) || !keyAllowed(s, key)) continue;
        const minimal = this.minimal(props[key]);
        if (minimal !== NONE) setOwn(base, key, minimal);
      }
      for (const key of freshKeys(s, base, min - Object.keys(base).length)) {
        const minimal = this.minimal(this.propertySchema(s, key));
        if (minimal !== NONE) setOwn(base, key, minimal);
      }
    }
    return base;
  }

  private objectsOf(s: SchemaObject, withKey: string | undefined, depth: number): unknown[] {
    if (!this.budget.spend()) return [];
    const base = this.baseObject(s);
    if (!base) return [];
    const out: unknown[] = [];
    if (withKey === undefined) out.push(base);
    if (depth === Infinity) return out;
    const props = isObject(s.properties) ? s.properties : {};
    const max = typeof s.maxProperties === "number" ? s.maxProperties : Infinity;
    const optional = withKey !== undefined ? [withKey] : Object.keys(props).filter((k) => !Object.hasOwn(base, k));
    if (withKey === undefined && Object.keys(base).length + 1 > max) return out;
    for (const key of optional.slice(0, width(depth))) {
      for (const value of this.variants(this.propertySchema(s, key), depth + 1).slice(0, 3)) {
        const obj = { ...base };
        setOwn(obj, key, value);
        out.push(obj);
      }
    }
    return out;
  }

  /** Objects and arrays of the sizes `s` allows at its bounds (its minimum, its maximum), for a changed size limit. */
  boundarySizes(schema: unknown, sizes: readonly number[] = []): unknown[] {
    const out: unknown[] = [];
    for (const alternative of this.alternatives(schema)) {
      if (couldBe(alternative, "object")) {
        const max = typeof alternative.maxProperties === "number" ? alternative.maxProperties : undefined;
        const min = typeof alternative.minProperties === "number" ? alternative.minProperties : 0;
        for (const size of [...sizes, max, min, max !== undefined ? undefined : min + 1]) {
          if (size === undefined || size > 1000) continue;
          const obj = this.baseObject(alternative, size);
          if (obj) out.push(obj);
        }
      }
      if (couldBe(alternative, "array")) {
        const max = typeof alternative.maxItems === "number" ? alternative.maxItems : undefined;
        const min = typeof alternative.minItems === "number" ? alternative.minItems : 0;
        for (const size of [max, min])
          if (size !== undefined && size <= 1000) out.push(...this.arraysOf(alternative, size));
      }
    }
    return out;
  }

  private arrayVariants(s: SchemaObject, depth: number): unknown[] {
    const prefix = Array.isArray(s.items) ? (s.items as unknown[]) : [];
    const rest = Array.isArray(s.items) ? (s.additionalItems ?? true) : (s.items ?? true);
    const min = typeof s.minItems === "number" ? s.minItems : 0;
    const max = typeof s.maxItems === "number" ? s.maxItems : Infinity;
    const base = this.filledArray(s, min);
    if (!base) return [];
    const out: unknown[] = [base];
    if (depth === Infinity || base.length + 1 > max) return out;
    const next = prefix[base.length] ?? rest;
    for (const variant of this.variants(next, depth + 1).slice(0, 3)) out.push([...base, variant]);
    return out;
  }

  /** `n` items of `s` (distinct ones under `uniqueItems`), or undefined. */
  private filledArray(s: SchemaObject, n: number): unknown[] | undefined {
    const prefix = Array.isArray(s.items) ? (s.items as unknown[]) : [];
    const rest = Array.isArray(s.items) ? (s.additionalItems ?? true) : (s.items ?? true);
    const items: unknown[] = [];
    const seen = new Set<string>();
    for (let i = 0; i < Math.min(n, 1000); i++) {
      const item = prefix[i] ?? rest;
      let value: Built = this.minimal(item);
      if (s.uniqueItems === true && value !== NONE && seen.has(canonicalJson(value))) {
        value = this.variants(item, 0).find((v) => !seen.has(canonicalJson(v))) ?? NONE;
      }
      if (value === NONE) return undefined;
      seen.add(canonicalJson(value));
      items.push(value);
    }
    return items;
  }

  /** Arrays of exactly `n` items, and arrays with two equal items. */
  arraysOf(schema: unknown, n: number | "duplicate"): unknown[] {
    const out: unknown[] = [];
    for (const alternative of this.alternatives(schema)) {
      if (!couldBe(alternative, "array")) continue;
      const prefix = Array.isArray(alternative.items) ? (alternative.items as unknown[]) : [];
      const rest = Array.isArray(alternative.items)
        ? (alternative.additionalItems ?? true)
        : (alternative.items ?? true);
      if (n === "duplicate") {
        for (const variant of this.variants(prefix[0] ?? rest).slice(0, 3)) out.push([variant, variant]);
        continue;
      }
      const open = {
        ...alternative,
        additionalItems: alternative.additionalItems === false ? true : alternative.additionalItems,
      };
      const filled = this.filledArray(open, n);
      if (filled) out.push(filled);
    }
    return out;
  }

  private first(schema: unknown): unknown {
    const minimal = this.minimal(schema);
    return minimal === NONE ? null : minimal;
  }

  /** Values at the change's pointer: the probe's value first, then variants of the old schema there. */
  leaf(schema: unknown, probe: Probe | undefined): unknown[] {
    const out: unknown[] = [];
    if (probe && "value" in probe) out.push(probe.value);
    if (probe && "candidates" in probe) out.push(...probe.candidates);
    if (probe && "extraKey" in probe) {
      for (const alternative of this.alternatives(schema)) {
        const extra = this.variants(additionalOf(alternative)).slice(0, 3);
        for (const obj of this.objectVariants(alternative).slice(0, 3)) {
          for (const extraValue of extra.length > 0 ? extra : ["a"]) {
            const copy = { ...(obj as object) } as Record<string, unknown>;
            setOwn(copy, probe.extraKey, extraValue);
            out.push(copy);
          }
        }
      }
    }
    if (probe && "itemsBeyond" in probe) out.push(...this.arraysOf(schema, probe.itemsBeyond));
    if (probe && "uniqueItems" in probe) out.push(...this.arraysOf(schema, "duplicate"));
    const variants = this.variants(schema);
    if (probe && "notIn" in probe) {
      out.push(...variants.filter((v) => !probe.notIn.some((w) => canonicalJson(w) === canonicalJson(v))));
      out.push("", 0, "a", false, null);
    } else if (probe && "type" in probe) {
      out.push(...variants.filter((v) => jsonTypeMatches(v, probe.type)));
    }
    out.push(...variants);
    return out;
  }

  /** Documents of `schema` holding a leaf value at the value path `segments` (any depth: the work budget bounds it). */
  *at(
    schema: unknown,
    segments: readonly string[],
    leaf: (s: unknown) => unknown[],
    depth: number,
  ): Generator<unknown> {
    if (segments.length === 0) {
      yield* leaf(schema);
      return;
    }
    if (!this.budget.spend()) return;
    const [seg, ...rest] = segments as [string, ...string[]];
    const bases = depth < 2 ? 2 : 1;
    for (const alternative of this.alternatives(schema)) {
      // An enum / const of containers: its own values are the documents (the value at the path is theirs).
      const listed = listedValues(alternative);
      if (listed) {
        yield* listed.filter((v) => typeof v === "object" && v !== null);
        continue;
      }
      if (couldBe(alternative, "object")) {
        const props = isObject(alternative.properties) ? alternative.properties : {};
        const key = seg === "*" ? (freshKeys(alternative, props, 1)[0] ?? freshKey(props)) : seg;
        const child = this.propertySchema(alternative, key);
        if (child !== false) {
          const base = this.baseObject(alternative);
          const others = (
            this.objectsOf(alternative, undefined, depth).slice(1, bases) as Record<string, unknown>[]
          ).filter((o) => !Object.hasOwn(o, key));
          const shapes = base ? [base, ...others] : others;
          for (const value of this.at(child, rest, leaf, depth + 1)) {
            for (const shape of shapes) {
              const obj = { ...shape };
              setOwn(obj, key, value);
              yield obj;
            }
          }
        }
      }
      if (couldBe(alternative, "array") && (seg === "*" || /^\d+$/.test(seg))) {
        const index = seg === "*" ? 0 : Number(seg);
        const prefix = Array.isArray(alternative.items) ? (alternative.items as unknown[]) : [];
        const restItems = Array.isArray(alternative.items)
          ? (alternative.additionalItems ?? true)
          : (alternative.items ?? true);
        const before: unknown[] = [];
        for (let i = 0; i < index; i++) before.push(this.first(prefix[i] ?? restItems));
        const min = typeof alternative.minItems === "number" ? alternative.minItems : 0;
        for (const value of this.at(prefix[index] ?? restItems, rest, leaf, depth + 1)) {
          const items = [...before, value];
          for (let i = items.length; i < min && i < 1000; i++) items.push(this.first(prefix[i] ?? restItems));
          yield items;
        }
      }
    }
  }
}

/** Does `propertyNames` (and, on a closed object, `properties` / `patternProperties`) allow this key? */
function keyAllowed(s: SchemaObject, key: string): boolean {
  const names = s.propertyNames;
  if (names === false) return false;
  if (isObject(names) && !stringAllowed(names, key)) return false;
  return true;
}

/** A string check for key names: const, enum, length, pattern (refs and other keywords are not read: the validators decide). */
function stringAllowed(s: SchemaObject, value: string): boolean {
  if ("const" in s && s.const !== value) return false;
  if (Array.isArray(s.enum) && !s.enum.includes(value)) return false;
  const length = [...value].length;
  if (typeof s.minLength === "number" && length < s.minLength) return false;
  if (typeof s.maxLength === "number" && length > s.maxLength) return false;
  if (typeof s.pattern === "string") {
    try {
      if (!new RegExp(s.pattern, "u").test(value)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * `n` new keys for an object of `s` (not in `taken`): names `propertyNames` allows that a closed
 * object accepts (matching a `patternProperties` pattern) or, when it is open, plain ones.
 */
function freshKeys(s: SchemaObject, taken: Record<string, unknown>, n: number): string[] {
  if (n <= 0) return [];
  const props = isObject(s.properties) ? s.properties : {};
  const out: string[] = [];
  const closed = s.additionalProperties === false;
  const names = isObject(s.propertyNames) ? s.propertyNames : undefined;
  const pool: string[] = [];
  if (names) {
    if ("const" in names && typeof names.const === "string") pool.push(names.const);
    if (Array.isArray(names.enum)) pool.push(...names.enum.filter((v): v is string => typeof v === "string"));
    if (typeof names.pattern === "string") pool.push(...strings(names, n + 8));
  }
  if (isObject(s.patternProperties))
    for (const pattern of Object.keys(s.patternProperties)) pool.push(...strings({ pattern }, n + 8));
  if (!closed) for (let i = 0; i < n + 8; i++) pool.push(i === 0 ? "key" : `key${i}`);
  if (names && typeof names.pattern !== "string" && !closed)
    for (let i = 0; i < n + 8; i++)
      pool.push(
        "k".repeat(Math.max(1, typeof names.minLength === "number" ? names.minLength : 1)) + (i === 0 ? "" : String(i)),
      );
  for (const key of pool) {
    if (out.length >= n) break;
    if (Object.hasOwn(taken, key) || Object.hasOwn(props, key) || out.includes(key)) continue;
    if (!keyAllowed(s, key)) continue;
    if (closed && patternSchema(s, key) === undefined) continue;
    out.push(key);
  }
  return out;
}

/** The values an enum / const lists (undefined when the schema lists none). */
function listedValues(s: SchemaObject): readonly unknown[] | undefined {
  if ("const" in s) return [s.const];
  return Array.isArray(s.enum) ? s.enum : undefined;
}

function mergeSchemas(a: SchemaObject, b: SchemaObject): SchemaObject {
  const out: SchemaObject = { ...a, ...b };
  if (isObject(a.properties) && isObject(b.properties)) out.properties = { ...a.properties, ...b.properties };
  if (Array.isArray(a.required) && Array.isArray(b.required))
    out.required = [...new Set([...a.required, ...b.required])];
  return out;
}

function inferTypes(s: SchemaObject): string[] {
  if (isObject(s.properties) || Array.isArray(s.required) || s.additionalProperties !== undefined) return ["object"];
  if (s.items !== undefined) return ["array"];
  if (typeof s.pattern === "string" || typeof s.minLength === "number" || typeof s.format === "string")
    return ["string"];
  if (typeof s.minimum === "number" || typeof s.maximum === "number" || typeof s.multipleOf === "number")
    return ["number"];
  return ["string", "integer", "boolean", "null", "object", "array"];
}

function couldBe(s: SchemaObject, type: string): boolean {
  const typeKeyword = s.type;
  if (typeof typeKeyword === "string") return typeKeyword === type;
  if (Array.isArray(typeKeyword)) return typeKeyword.includes(type);
  return inferTypes(s).includes(type);
}

function additionalOf(s: SchemaObject): unknown {
  return s.additionalProperties === undefined ? true : s.additionalProperties;
}

function patternSchema(s: SchemaObject, key: string): unknown {
  if (!isObject(s.patternProperties)) return undefined;
  for (const [pattern, schema] of Object.entries(s.patternProperties)) {
    try {
      if (new RegExp(pattern, "u").test(key)) return schema;
    } catch {
      // an invalid pattern: validators reject the schema, nothing to build
    }
  }
  return undefined;
}

function freshKey(props: Record<string, unknown>): string {
  for (let i = 0; ; i++) {
    const key = i === 0 ? "key" : `key${i}`;
    if (!(key in props)) return key;
  }
}

function jsonTypeMatches(v: unknown, type: string): boolean {
  if (type === "integer") return Number.isInteger(v);
  if (type === "number") return typeof v === "number";
  if (type === "null") return v === null;
  if (type === "array") return Array.isArray(v);
  if (type === "object") return isObject(v);
  return typeof v === type;
}

function numbers(s: SchemaObject, integer: boolean): number[] {
  const multipleOf = typeof s.multipleOf === "number" && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined;
  let lo = typeof s.minimum === "number" ? s.minimum : -Infinity;
  if (typeof s.exclusiveMinimum === "number") lo = Math.max(lo, s.exclusiveMinimum + (multipleOf ?? 0.5));
  let hi = typeof s.maximum === "number" ? s.maximum : Infinity;
  if (typeof s.exclusiveMaximum === "number") hi = Math.min(hi, s.exclusiveMaximum - (multipleOf ?? 0.5));
  const snap = (x: number): number => (multipleOf ? Math.ceil(x / multipleOf) * multipleOf : x);
  const out = new Set<number>();
  const start = lo === -Infinity ? (hi === Infinity ? 0 : Math.min(0, hi)) : lo;
  out.add(snap(start));
  if (hi !== Infinity) out.add(multipleOf ? Math.floor(hi / multipleOf) * multipleOf : hi);
  if (!integer) out.add(snap(start) + 0.5);
  out.add(snap(start + 1));
  return [...out].filter((x) => Number.isFinite(x) && x >= lo && x <= hi && (!integer || Number.isInteger(x)));
}

function strings(s: SchemaObject, count = 2): string[] {
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const max = typeof s.maxLength === "number" ? s.maxLength : Infinity;
  // Several spellings an asserted format allows: a new pattern may reject some of them.
  if (typeof s.format === "string" && ASSERTED_FORMATS.has(s.format)) {
    const valid = (FORMAT_EXAMPLES[s.format] ?? []).filter((v): v is string => typeof v === "string");
    if (valid.length > 0) return valid;
  }
  if (typeof s.pattern === "string") {
    try {
      const words: string[] = [];
      const nfa: NFA = patternAutomaton(s.pattern);
      let seen = 0;
      for (const set of nfa.wordSets()) {
        // Word sets come shortest first and may never fit the length bounds: stop after a few.
        if (++seen > 64) break;
        const pick = (cs: (typeof set)[number]): number =>
          cs.ranges.find((r) => r.max >= 0x61 && r.min <= 0x7a)
            ? Math.max(0x61, cs.ranges.find((r) => r.max >= 0x61)!.min)
            : cs.ranges[0]!.min;
        const word = set.map((cs) => String.fromCodePoint(pick(cs))).join("");
        const length = [...word].length;
        if (length < min || length > max) continue;
        words.push(word);
        // More words of the same shape: vary the last position over its characters.
        const last = set[set.length - 1];
        if (last && words.length < count) {
          const first = pick(last);
          for (const range of last.ranges) {
            for (let c = Math.max(range.min, first + 1); c <= range.max && words.length < count; c++) {
              if (c >= 0xd800 && c <= 0xdfff) continue;
              words.push(word.slice(0, word.length - String.fromCodePoint(first).length) + String.fromCodePoint(c));
            }
            if (words.length >= count) break;
          }
        }
        if (words.length >= count) break;
      }
      if (words.length > 0) return [...new Set(words)].slice(0, count);
    } catch {
      // fall through to plain strings
    }
  }
  const length = Math.min(min, 10_000);
  const out = ["a".repeat(length)];
  if (max > length) out.push("a".repeat(length + 1));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Display

/** Characters of a witness printed in text output; the rest is cut and the total length said. */
export const WITNESS_TEXT_CHARS = 500;

/** What a terminal acts on or hides (the CLI output layer's set, `src/cli/io.ts`), plus lone surrogates. */
const UNSAFE_TEXT =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeUnsafe(text: string): string {
  return text.replace(UNSAFE_TEXT, (ch) =>
    ch === "\n"
      ? "\\n"
      : ch === "\r"
        ? "\\r"
        : ch === "\t"
          ? "\\t"
          : `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * A witness as printed in text output (`statebag diff`, `gen --check`): the whole document as
 * canonical JSON on one line, control and invisible characters escaped, cut after `max` characters
 * with its full length (`... (12034 characters)`) -- the same form as the CLI's `echo`.
 */
export function witnessText(document: unknown, max = WITNESS_TEXT_CHARS): string {
  const text = canonicalJson(document);
  if (text.length <= max) return escapeUnsafe(text);
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return `${escapeUnsafe(text.slice(0, end))}... (${text.length} characters)`;
}

const MAX_STRING = 40;
const MAX_SHOWN_DEPTH = 8;
const MAX_ITEMS = 10;
const MAX_KEYS = 20;
const MAX_TEXT = 240;

/**
 * A witness as one line of JSON for people: long strings cut, at most a few items and keys per
 * level, control and invisible characters escaped (`\u0000`, `\u202e`), the whole line bounded.
 */
export function formatWitness(document: unknown): string {
  const text = canonicalJson(shorten(document, 0)).replace(
    /[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 3)}...` : text;
}

function shorten(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING - 3)}...` : value;
  if (depth > MAX_SHOWN_DEPTH) return "...";
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => shorten(v, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `... ${value.length - MAX_ITEMS} more`] : items;
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value);
    for (const key of keys.slice(0, MAX_KEYS))
      setOwn(out, shorten(key, depth) as string, shorten(value[key], depth + 1));
    if (keys.length > MAX_KEYS) out["..."] = `${keys.length - MAX_KEYS} more`;
    return out;
  }
  return value;
}
