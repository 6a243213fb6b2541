/**
 * Golden fixture scaffolding: an example value for a schema, to be edited into a realistic
 * stored value and committed as `test/fixtures/<$type>/v<N>.json`.
 *
 * Fills required properties (and, with `optional`, all of them) with placeholders of the right
 * type: `const`/`examples[0]`/`default`/first enum value when given, else a placeholder that
 * respects formats, lengths, bounds and `multipleOf`. Patterns are not solved.
 */
import fs from "node:fs";
import path from "node:path";
import { fixtureFiles } from "./check.js";
import { HISTORY_DIR, readCurrentSchemas, readFrozenSchemas } from "./history.js";
import {
  type ExternalRefResolver,
  type JsonSchema,
  type SchemaDoc,
  type SchemaObject,
  isObject,
  isOpaque,
  resolveNode,
} from "./schema.js";

export interface ScaffoldOptions {
  /** Fill optional properties too (default false). */
  optional?: boolean;
  /** Put one example item in arrays and maps that may be empty (default false). */
  nonEmpty?: boolean;
  /** Deepest nesting filled; deeper values become `null` (default 24). */
  maxDepth?: number;
  /**
   * Follows `$ref`s to other files (family slots point at their members' schemas), so a slot gets
   * a real member value. Without it such refs scaffold to `{}`.
   */
  resolveExternalRef?: ExternalRefResolver;
  /** Location of the schema (base of relative refs). */
  base?: string;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export function scaffoldFixture(schema: JsonSchema, options: ScaffoldOptions = {}): JsonValue {
  const doc: SchemaDoc = { root: schema, base: options.base };
  return new Scaffolder(options).value(schema, doc, "value", 0, new Set());
}

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": "2025-01-01T00:00:00.000Z",
  date: "2025-01-01",
  time: "00:00:00Z",
  email: "user@example.com",
  "idn-email": "user@example.com",
  hostname: "example.com",
  "idn-hostname": "example.com",
  ipv4: "127.0.0.1",
  ipv6: "::1",
  uri: "https://example.com/",
  "uri-reference": "https://example.com/",
  iri: "https://example.com/",
  "iri-reference": "https://example.com/",
  "uri-template": "https://example.com/{id}",
  uuid: "00000000-0000-4000-8000-000000000000",
  "json-pointer": "/a",
  "relative-json-pointer": "0",
  regex: ".*",
};

class Scaffolder {
  /** Set when the last value was cut short (recursion / depth): arrays and optional keys then leave it out. */
  private cut = false;

  constructor(private readonly options: ScaffoldOptions) {}

  /** A value where leaving it out is valid: `undefined` when it would recurse forever. */
  private optionalValue(
    schema: JsonSchema,
    doc: SchemaDoc,
    name: string,
    depth: number,
    active: Set<unknown>,
  ): JsonValue | undefined {
    const outer = this.cut; // a cut elsewhere in the enclosing value must survive this one
    this.cut = false;
    const value = this.value(schema, doc, name, depth, active);
    const wasCut = this.cut;
    this.cut = outer;
    return wasCut ? undefined : value;
  }

  value(schema: JsonSchema, doc: SchemaDoc, name: string, depth: number, active: Set<unknown>): JsonValue {
    const resolved = resolveNode({ schema, doc }, this.options.resolveExternalRef);
    if (isOpaque(resolved)) return {};
    if (resolved.schema === true || resolved.schema === false) return null;
    const resolvedSchema = resolved.schema;
    if (depth > (this.options.maxDepth ?? 24) || active.has(resolvedSchema)) {
      this.cut = true;
      return null;
    }
    active.add(resolvedSchema);
    try {
      return this.fill(resolvedSchema, resolved.doc, name, depth, active);
    } finally {
      active.delete(resolvedSchema);
    }
  }

  private fill(s: SchemaObject, doc: SchemaDoc, name: string, depth: number, active: Set<unknown>): JsonValue {
    if ("const" in s) return s.const as JsonValue;
    if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0] as JsonValue;
    if ("default" in s) return s.default as JsonValue;
    if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0] as JsonValue;

    const branches = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as
      | JsonSchema[]
      | undefined;
    if (branches && branches.length > 0) {
      // Prefer a branch that is not just `null`; merge the parent's own keywords in.
      const { anyOf: _a, oneOf: _o, ...rest } = s;
      const pick =
        branches.find((b) => {
          const resolvedBranch = resolveNode({ schema: b, doc }, this.options.resolveExternalRef);
          return (
            !isOpaque(resolvedBranch) && !(isObject(resolvedBranch.schema) && resolvedBranch.schema.type === "null")
          );
        }) ?? branches[0];
      const resolved = resolveNode({ schema: pick, doc }, this.options.resolveExternalRef);
      if (isOpaque(resolved)) return {};
      const merged: JsonSchema = isObject(resolved.schema) ? { ...rest, ...resolved.schema } : resolved.schema;
      return this.value(merged, resolved.doc, name, depth + 1, active);
    }
    if (Array.isArray(s.allOf) && s.allOf.length > 0) {
      const { allOf, ...rest } = s;
      let merged: SchemaObject = { ...rest };
      for (const part of allOf as JsonSchema[]) {
        const resolved = resolveNode({ schema: part, doc }, this.options.resolveExternalRef);
        if (!isOpaque(resolved) && isObject(resolved.schema)) merged = mergeAll(merged, resolved.schema);
      }
      return this.value(merged, doc, name, depth + 1, active);
    }

    const types = typeof s.type === "string" ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : [];
    const type =
      types.find((t) => t !== "null") ??
      types[0] ??
      (isObject(s.properties) || s.required ? "object" : s.items ? "array" : "object");
    switch (type) {
      case "null":
        return null;
      case "boolean":
        return false;
      case "integer":
      case "number":
        return this.number(s, type === "integer");
      case "string":
        return this.string(s, name);
      case "array":
        return this.array(s, doc, name, depth, active);
      default:
        return this.object(s, doc, depth, active);
    }
  }

  private number(s: SchemaObject, integer: boolean): number {
    const step = typeof s.multipleOf === "number" && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined;
    let low = -Infinity;
    let lowExclusive = false;
    if (typeof s.minimum === "number") low = s.minimum;
    if (typeof s.exclusiveMinimum === "number" && s.exclusiveMinimum >= low) {
      low = s.exclusiveMinimum;
      lowExclusive = true;
    }
    let high = Infinity;
    if (typeof s.maximum === "number") high = s.maximum;
    if (typeof s.exclusiveMaximum === "number" && s.exclusiveMaximum <= high) high = s.exclusiveMaximum;
    let value = low === -Infinity ? Math.min(high, 0) : low;
    if (step !== undefined) {
      value = Math.ceil(value / step) * step;
      if (lowExclusive && value <= low) value += step;
    } else if (lowExclusive) {
      value = high === Infinity ? low + 1 : (low + high) / 2;
    }
    if (value > high && step !== undefined) value = Math.floor(high / step) * step;
    return value;
  }

  private string(s: SchemaObject, name: string): string {
    if (typeof s.format === "string" && FORMAT_EXAMPLES[s.format]) return FORMAT_EXAMPLES[s.format];
    let text = typeof s.pattern === "string" ? matchPattern(s.pattern, name) : name;
    const min = typeof s.minLength === "number" ? s.minLength : 0;
    const max = typeof s.maxLength === "number" ? s.maxLength : Infinity;
    while (text.length < min) text += "x";
    if (text.length > max) text = text.slice(0, max);
    return text;
  }

  private array(s: SchemaObject, doc: SchemaDoc, name: string, depth: number, active: Set<unknown>): JsonValue[] {
    const min = typeof s.minItems === "number" ? s.minItems : 0;
    const result: JsonValue[] = [];
    for (let i = 0; i < Math.max(min, this.options.nonEmpty ? 1 : 0); i++) {
      const item = Array.isArray(s.items)
        ? ((s.items[i] ?? s.additionalItems ?? true) as JsonSchema)
        : ((s.items ?? true) as JsonSchema);
      if (i < min) {
        result.push(this.value(item, doc, name, depth + 1, active));
        continue;
      }
      const value = this.optionalValue(item, doc, name, depth + 1, active);
      if (value !== undefined) result.push(value);
    }
    if (Array.isArray(s.items)) {
      for (let i = result.length; i < s.items.length; i++)
        result.push(this.value(s.items[i] as JsonSchema, doc, name, depth + 1, active));
    }
    return result;
  }

  private object(s: SchemaObject, doc: SchemaDoc, depth: number, active: Set<unknown>): { [key: string]: JsonValue } {
    const props = isObject(s.properties) ? (s.properties as Record<string, JsonSchema>) : {};
    const required = Array.isArray(s.required) ? (s.required as string[]) : [];
    const keys = this.options.optional ? [...new Set([...Object.keys(props), ...required])] : required;
    const result: { [key: string]: JsonValue } = {};
    for (const key of keys) {
      if (required.includes(key)) {
        result[key] = this.value(props[key] ?? true, doc, key, depth + 1, active);
        continue;
      }
      const value = this.optionalValue(props[key] ?? true, doc, key, depth + 1, active);
      if (value !== undefined) result[key] = value;
    }
    if (this.options.nonEmpty && isObject(s.additionalProperties) && Object.keys(props).length === 0) {
      const value = this.optionalValue(s.additionalProperties as JsonSchema, doc, "key", depth + 1, active);
      if (value !== undefined) result.key = value;
    }
    return result;
  }
}

/** A cheap try at a pattern: its literal `^prefix` followed by the placeholder, when that matches. */
function matchPattern(pattern: string, name: string): string {
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, "u");
  } catch {
    return name;
  }
  const prefix = /^\^((?:[^\\^$.|?*+()[\]{}]|\\[^a-zA-Z0-9])*)/.exec(pattern)?.[1]?.replace(/\\(.)/g, "$1") ?? "";
  for (const candidate of [prefix + name, prefix, name]) if (regex.test(candidate)) return candidate;
  return name;
}

function mergeAll(a: SchemaObject, b: SchemaObject): SchemaObject {
  const merged: SchemaObject = { ...a, ...b };
  if (isObject(a.properties) && isObject(b.properties)) merged.properties = { ...a.properties, ...b.properties };
  if (Array.isArray(a.required) && Array.isArray(b.required))
    merged.required = [...new Set([...a.required, ...b.required])];
  return merged;
}

/**
 * Where a schema's relative refs resolve from. Slot refs (`../AIContent/text.schema.json`) are
 * written for `schemas/<Family>/`; a frozen copy under `schemas/history/<Family>/<$type>/` keeps
 * them unchanged, so it resolves as if it sat in `schemas/<Family>/`.
 */
function refBase(schemasDir: string, file: string): string {
  const rel = path.relative(path.join(schemasDir, HISTORY_DIR), file).split(path.sep);
  if (rel.length === 3 && rel[0] !== "..") return path.join(schemasDir, rel[0], `${rel[1]}.schema.json`);
  return file;
}

/** Resolves relative `$ref`s to JSON files next to the referring document. */
export function fileResolver(): ExternalRefResolver {
  const cache = new Map<string, SchemaDoc | undefined>();
  return (ref, base) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(ref) || base === undefined) return undefined;
    const file = path.resolve(path.dirname(base), decodeURIComponent(ref));
    if (!cache.has(file)) {
      try {
        cache.set(file, { root: JSON.parse(fs.readFileSync(file, "utf8")) as JsonSchema, base: file });
      } catch {
        cache.set(file, undefined);
      }
    }
    return cache.get(file);
  };
}

export interface ScaffoldFixturesOptions extends ScaffoldOptions {
  schemasDir: string;
  fixturesDir: string;
  /** Also scaffold missing fixtures of frozen (older) versions, from their frozen schema (default false). */
  history?: boolean;
}

/**
 * For `statebag gen --scaffold-fixtures`: writes `<fixturesDir>/<$type>/v<N>.json` for every
 * current type (and with `history`, every frozen version) that has no fixture for that version
 * yet. Never overwrites. Returns the files written.
 */
/**
 * The key `--scaffold-fixtures` puts into every fixture it writes: a placeholder is not evidence
 * that stored data loads, so the check fails until a person replaces the value (and the key).
 */
export const UNEDITED_KEY = "$unedited";

/** The text of a scaffolded fixture's marker: what to do with the file. */
export function uneditedNote(type: string, version: number): string {
  return `placeholder written by --scaffold-fixtures: replace this value with one your code really stored as "${type}" version ${version}, then delete this key`;
}

/**
 * The value `--scaffold-fixtures` writes for one version (without its marker key): the schema's
 * placeholder, with `$version` set from version 2 on. The check compares fixtures with it, so a
 * placeholder whose marker was deleted but whose value was never edited is still caught.
 */
export function scaffoldStoredValue(
  schemasDir: string,
  t: { version: number; schema: JsonSchema; file: string },
  options: ScaffoldOptions = {},
): JsonValue {
  const value = scaffoldFixture(t.schema, {
    ...options,
    base: refBase(schemasDir, t.file),
    resolveExternalRef: options.resolveExternalRef ?? fileResolver(),
  });
  if (isObject(value) && t.version > 1 && value.$version === undefined) value.$version = t.version;
  return value;
}

/** The options `statebag gen --scaffold-fixtures` scaffolds with (the check recognises what they write). */
export const GEN_SCAFFOLD_OPTIONS = { nonEmpty: true } as const;

export function writeScaffoldFixtures(options: ScaffoldFixturesOptions): string[] {
  const targets: { type: string; version: number; schema: JsonSchema; file: string }[] = [];
  for (const current of readCurrentSchemas(options.schemasDir).schemas)
    targets.push({ type: current.$type, version: current.version, schema: current.schema, file: current.file });
  if (options.history) {
    for (const frozen of readFrozenSchemas(options.schemasDir)) {
      if (
        frozen.schema !== undefined &&
        !targets.some((t) => t.type === frozen.$type && t.version === frozen.version)
      ) {
        targets.push({ type: frozen.$type, version: frozen.version, schema: frozen.schema, file: frozen.file });
      }
    }
  }
  const written: string[] = [];
  const resolver = fileResolver();
  for (const target of targets) {
    const dir = path.join(options.fixturesDir, target.type);
    if (fixtureFiles(dir, target.version).length > 0) continue;
    const value = scaffoldStoredValue(options.schemasDir, target, {
      ...options,
      resolveExternalRef: options.resolveExternalRef ?? resolver,
    });
    // Marked, so the check fails until a person replaces the placeholder with a real stored value.
    const marked = isObject(value) ? { [UNEDITED_KEY]: uneditedNote(target.type, target.version), ...value } : value;
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `v${target.version}.json`);
    fs.writeFileSync(file, JSON.stringify(marked, null, 2) + "\n");
    written.push(file);
  }
  return written;
}
