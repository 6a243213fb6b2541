/**
 * Witnesses: for a breaking change, a small document the old schema accepts and the new one
 * rejects. Candidates are built from the old schema (a minimal valid document with the change's
 * probe value placed at the change's pointer, and a few variants); each is validated against both
 * schemas with ajv, and the shortest that passes old and fails new is kept. A change for which no
 * candidate does is not reported as breaking (see `assess.ts`).
 */
import type { ValidateFunction } from "ajv";
import { NFA } from "refa";
import { type Change, type Probe, probeOf } from "./rule-catalogue.js";
import { setOwn } from "../runtime.js";
import { patternAutomaton } from "./regex.js";
import { type JsonSchema, type SchemaObject, canonicalJson, getByPointer, isObject } from "./schema.js";

/** Candidates tried per change: keeps a wide schema from stalling the check. */
const MAX_CANDIDATES = 400;
/** Variants kept per schema node. */
const MAX_VARIANTS = 6;
const MAX_DEPTH = 8;

export interface WitnessContext {
  /** The old schema, bundled (self-contained). */
  oldSchema: JsonSchema;
  validOld: ValidateFunction;
  validNew: ValidateFunction;
}

/** The shortest candidate document the old schema accepts and the new one rejects, or undefined. */
export function findWitness(change: Change, ctx: WitnessContext): unknown {
  let best: { doc: unknown; size: number } | undefined;
  let tried = 0;
  for (const doc of candidates(change, ctx.oldSchema)) {
    if (++tried > MAX_CANDIDATES) break;
    if (!ctx.validOld(doc) || ctx.validNew(doc)) continue;
    const size = canonicalJson(doc).length;
    if (!best || size < best.size) best = { doc, size };
  }
  return best?.doc;
}

/** True when the document is accepted by the old schema and rejected by the new one. */
export function isWitness(doc: unknown, ctx: Pick<WitnessContext, "validOld" | "validNew">): boolean {
  return ctx.validOld(doc) === true && ctx.validNew(doc) === false;
}

function* candidates(change: Change, root: JsonSchema): Generator<unknown> {
  const segments = parsePointer(change.pointer);
  const probe = probeOf(change);
  const builder = new Instances(root);
  if (probe && ("absent" in probe || "present" in probe) && segments.length > 0) {
    const key = segments[segments.length - 1]!;
    const parent = segments.slice(0, -1);
    yield* builder.at(root, parent, (s) => builder.objectVariants(s, "present" in probe ? key : undefined), 0);
    return;
  }
  yield* builder.at(root, segments, (s) => builder.leaf(s, probe), 0);
}

/** Value-shape pointer segments (`*` kept as the wildcard). */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Builds small instances of schema nodes inside one (bundled) document. */
export class Instances {
  constructor(private readonly root: JsonSchema) {}

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
    const s = this.resolve(schema);
    if (s === false) return [];
    if (s === true) return [{}];
    let merged: SchemaObject = s;
    if (Array.isArray(s.allOf)) {
      merged = { ...s };
      delete merged.allOf;
      for (const member of s.allOf) {
        const m = this.resolve(member);
        if (m === false) return [];
        if (m !== true) merged = mergeSchemas(merged, m);
      }
    }
    const keyword = Array.isArray(merged.anyOf) ? "anyOf" : Array.isArray(merged.oneOf) ? "oneOf" : undefined;
    if (!keyword || depth > 4) return [merged];
    const base = { ...merged };
    delete base[keyword];
    delete base.discriminator;
    const out: SchemaObject[] = [];
    for (const branch of merged[keyword] as unknown[]) {
      const b = this.resolve(branch);
      if (b === false) continue;
      out.push(...this.alternatives(mergeSchemas(base, b === true ? {} : b), depth + 1));
    }
    return out;
  }

  /** A few instances of a schema (not guaranteed valid: callers validate). */
  variants(schema: unknown, depth = 0): unknown[] {
    if (depth > MAX_DEPTH) return [];
    const out: unknown[] = [];
    for (const alt of this.alternatives(schema)) {
      for (const v of this.variantsOfPlain(alt, depth)) {
        if (out.length >= MAX_VARIANTS * 2) return out;
        out.push(v);
      }
    }
    return out;
  }

  private variantsOfPlain(s: SchemaObject, depth: number): unknown[] {
    if ("const" in s) return [s.const];
    if (Array.isArray(s.enum)) return s.enum.slice(0, MAX_VARIANTS);
    const types = typeof s.type === "string" ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : inferTypes(s);
    const out: unknown[] = [];
    for (const t of types) {
      switch (t) {
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
          out.push(...this.objectVariants(s, undefined, depth));
          break;
      }
    }
    return out;
  }

  /** Objects: required properties only, then with each optional property (or `withKey`) added. */
  objectVariants(schema: unknown, withKey?: string, depth = 0): unknown[] {
    const out: unknown[] = [];
    for (const s of this.alternatives(schema)) {
      if (!couldBe(s, "object")) continue;
      const props = isObject(s.properties) ? s.properties : {};
      const required = Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : [];
      const base: Record<string, unknown> = {};
      for (const key of required) setOwn(base, key, this.first((Object.hasOwn(props, key) ? props[key] : undefined) ?? additionalOf(s), depth + 1));
      if (withKey === undefined) out.push(base);
      const optional = withKey !== undefined ? [withKey] : Object.keys(props).filter((k) => !required.includes(k));
      for (const key of optional.slice(0, MAX_VARIANTS)) {
        for (const value of this.variants(props[key] ?? additionalOf(s), depth + 1).slice(0, 3)) out.push({ ...base, [key]: value });
      }
    }
    return out;
  }

  private arrayVariants(s: SchemaObject, depth: number): unknown[] {
    const prefix = Array.isArray(s.items) ? (s.items as unknown[]) : [];
    const rest = Array.isArray(s.items) ? (s.additionalItems ?? true) : (s.items ?? true);
    const min = typeof s.minItems === "number" ? s.minItems : 0;
    const base: unknown[] = [];
    for (let i = 0; i < Math.max(min, prefix.length === 0 ? 0 : Math.min(prefix.length, min)); i++) base.push(this.first(prefix[i] ?? rest, depth + 1));
    const out: unknown[] = [base];
    const next = prefix[base.length] ?? rest;
    for (const v of this.variants(next, depth + 1).slice(0, 3)) out.push([...base, v]);
    return out;
  }

  /** Arrays of exactly `n` items, and arrays with two equal items. */
  arraysOf(schema: unknown, n: number | "duplicate"): unknown[] {
    const out: unknown[] = [];
    for (const s of this.alternatives(schema)) {
      if (!couldBe(s, "array")) continue;
      const prefix = Array.isArray(s.items) ? (s.items as unknown[]) : [];
      const rest = Array.isArray(s.items) ? (s.additionalItems ?? true) : (s.items ?? true);
      if (n === "duplicate") {
        for (const v of this.variants(prefix[0] ?? rest).slice(0, 3)) out.push([v, v]);
        continue;
      }
      const items: unknown[] = [];
      for (let i = 0; i < Math.min(n, 1000); i++) items.push(this.first(prefix[i] ?? (rest === false ? true : rest), 1));
      out.push(items);
    }
    return out;
  }

  private first(schema: unknown, depth: number): unknown {
    const v = this.variants(schema, depth);
    return v.length > 0 ? v[0] : null;
  }

  /** Values at the change's pointer: the probe's value first, then variants of the old schema there. */
  leaf(schema: unknown, probe: Probe | undefined): unknown[] {
    const out: unknown[] = [];
    if (probe && "value" in probe) out.push(probe.value);
    if (probe && "extraKey" in probe) {
      for (const s of this.alternatives(schema)) {
        const extra = this.variants(additionalOf(s)).slice(0, 3);
        for (const obj of this.objectVariants(s).slice(0, 3)) for (const v of extra.length > 0 ? extra : ["a"]) out.push({ ...(obj as object), [probe.extraKey]: v });
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

  /** Documents of `schema` holding a leaf value at the value path `segments`. */
  *at(schema: unknown, segments: readonly string[], leaf: (s: unknown) => unknown[], depth: number): Generator<unknown> {
    if (segments.length === 0) {
      yield* leaf(schema);
      return;
    }
    if (depth > 32) return;
    const [seg, ...rest] = segments as [string, ...string[]];
    for (const s of this.alternatives(schema)) {
      if (couldBe(s, "object")) {
        const props = isObject(s.properties) ? s.properties : {};
        const key = seg === "*" ? freshKey(props) : seg;
        const child = seg !== "*" && Object.hasOwn(props, key) ? props[key] : (patternSchema(s, key) ?? additionalOf(s));
        if (child !== false) {
          const bases = this.objectVariants(s).slice(0, 2) as Record<string, unknown>[];
          for (const value of this.at(child, rest, leaf, depth + 1)) for (const base of bases) yield { ...base, [key]: value };
        }
      }
      if (couldBe(s, "array") && (seg === "*" || /^\d+$/.test(seg))) {
        const index = seg === "*" ? 0 : Number(seg);
        const prefix = Array.isArray(s.items) ? (s.items as unknown[]) : [];
        const restItems = Array.isArray(s.items) ? (s.additionalItems ?? true) : (s.items ?? true);
        const before: unknown[] = [];
        for (let i = 0; i < index; i++) before.push(this.first(prefix[i] ?? restItems, depth + 1));
        const min = typeof s.minItems === "number" ? s.minItems : 0;
        for (const value of this.at(prefix[index] ?? restItems, rest, leaf, depth + 1)) {
          const items = [...before, value];
          for (let i = items.length; i < min && i < 1000; i++) items.push(this.first(prefix[i] ?? restItems, depth + 1));
          yield items;
        }
      }
    }
  }
}

function mergeSchemas(a: SchemaObject, b: SchemaObject): SchemaObject {
  const out: SchemaObject = { ...a, ...b };
  if (isObject(a.properties) && isObject(b.properties)) out.properties = { ...a.properties, ...b.properties };
  if (Array.isArray(a.required) && Array.isArray(b.required)) out.required = [...new Set([...a.required, ...b.required])];
  return out;
}

function inferTypes(s: SchemaObject): string[] {
  if (isObject(s.properties) || Array.isArray(s.required) || s.additionalProperties !== undefined) return ["object"];
  if (s.items !== undefined) return ["array"];
  if (typeof s.pattern === "string" || typeof s.minLength === "number" || typeof s.format === "string") return ["string"];
  if (typeof s.minimum === "number" || typeof s.maximum === "number" || typeof s.multipleOf === "number") return ["number"];
  return ["string", "integer", "boolean", "null", "object", "array"];
}

function couldBe(s: SchemaObject, type: string): boolean {
  const t = s.type;
  if (typeof t === "string") return t === type;
  if (Array.isArray(t)) return t.includes(type);
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
  const m = typeof s.multipleOf === "number" && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined;
  let lo = typeof s.minimum === "number" ? s.minimum : -Infinity;
  if (typeof s.exclusiveMinimum === "number") lo = Math.max(lo, s.exclusiveMinimum + (m ?? 0.5));
  let hi = typeof s.maximum === "number" ? s.maximum : Infinity;
  if (typeof s.exclusiveMaximum === "number") hi = Math.min(hi, s.exclusiveMaximum - (m ?? 0.5));
  const snap = (x: number): number => (m ? Math.ceil(x / m) * m : x);
  const out = new Set<number>();
  const start = lo === -Infinity ? (hi === Infinity ? 0 : Math.min(0, hi)) : lo;
  out.add(snap(start));
  if (hi !== Infinity) out.add(m ? Math.floor(hi / m) * m : hi);
  if (!integer) out.add(snap(start) + 0.5);
  out.add(snap(start + 1));
  return [...out].filter((x) => Number.isFinite(x) && x >= lo && x <= hi && (!integer || Number.isInteger(x)));
}

function strings(s: SchemaObject): string[] {
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const max = typeof s.maxLength === "number" ? s.maxLength : Infinity;
  // Several spellings a format allows: a new pattern may reject some of them.
  if (s.format === "date-time") return ["2000-01-01T00:00:00Z", "2000-01-01T00:00:00+00:00", "2000-01-01T00:00:00.5Z", "2000-01-01t00:00:00z"];
  if (s.format === "date") return ["2000-01-01", "2000-12-31"];
  if (typeof s.pattern === "string") {
    try {
      const words: string[] = [];
      const nfa: NFA = patternAutomaton(s.pattern);
      let seen = 0;
      for (const set of nfa.wordSets()) {
        // Word sets come shortest first and may never fit the length bounds: stop after a few.
        if (++seen > 64) break;
        const word = set.map((cs) => String.fromCodePoint(cs.ranges.find((r) => r.max >= 0x61 && r.min <= 0x7a) ? Math.max(0x61, cs.ranges.find((r) => r.max >= 0x61)!.min) : cs.ranges[0]!.min)).join("");
        const length = [...word].length;
        if (length >= min && length <= max) words.push(word);
        if (words.length >= 2) break;
      }
      if (words.length > 0) return words;
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

const MAX_STRING = 40;
const MAX_ITEMS = 10;
const MAX_KEYS = 20;
const MAX_TEXT = 240;

/**
 * A witness as one line of JSON for people: long strings cut, at most a few items and keys per
 * level, control and invisible characters escaped (`\u0000`, `\u202e`), the whole line bounded.
 */
export function formatWitness(document: unknown): string {
  const text = canonicalJson(shorten(document, 0)).replace(/[\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g, (ch) =>
    `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 3)}...` : text;
}

function shorten(value: unknown, depth: number): unknown {
  if (typeof value === "string") return value.length > MAX_STRING ? `${value.slice(0, MAX_STRING - 3)}...` : value;
  if (depth > MAX_DEPTH) return "...";
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => shorten(v, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `... ${value.length - MAX_ITEMS} more`] : items;
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value);
    for (const key of keys.slice(0, MAX_KEYS)) setOwn(out, shorten(key, depth) as string, shorten(value[key], depth + 1));
    if (keys.length > MAX_KEYS) out["..."] = `${keys.length - MAX_KEYS} more`;
    return out;
  }
  return value;
}
