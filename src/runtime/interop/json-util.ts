/**
 * Small JSON helpers shared by the interop and group-chat code: plain-object checks, deep copies,
 * structural equality, and `$type`-first key order (what System.Text.Json expects by default).
 */
import { jsonEqual as structurallyEqual, setOwn } from "../core/json.js";

export type JsonRecord = { [key: string]: unknown };

/** A plain JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A deep copy of JSON data (own enumerable properties only; `undefined` members are left out). */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  if (isPlainObject(value)) {
    const out: JsonRecord = {};
    for (const key of Object.keys(value)) {
      const child = value[key];
      if (child !== undefined) defineOwn(out, key, cloneJson(child));
    }
    return out as T;
  }
  return value;
}

/** Sets an own data property (never a prototype, even for a `"__proto__"` key): the shared `setOwn`. */
export const defineOwn: (target: JsonRecord, key: string, value: unknown) => void = setOwn;

const EXTRA_KEYS = new Set(["additionalProperties", "additional_properties"]);

function isEmptyObject(value: unknown): boolean {
  return isPlainObject(value) && Object.keys(value).length === 0;
}

/** An empty `additionalProperties` / `additional_properties` object means "no extra properties": the same as none. */
const ignoreEmptyExtras = (key: string, value: unknown) => EXTRA_KEYS.has(key) && isEmptyObject(value);

/**
 * Structural equality of JSON data (the shared `jsonEqual`), where an empty `additionalProperties`
 * / `additional_properties` object counts as absent (both forms mean "no extra properties").
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return structurallyEqual(a, b, { ignore: ignoreEmptyExtras });
}

/**
 * A deep copy in which every object carrying a `$type` lists `$type` first (then `$version`).
 * System.Text.Json's polymorphic reader requires the discriminator to be the first property by
 * default, and stores such as PostgreSQL `jsonb` reorder keys: writing for .NET puts it back.
 */
export function typeFirst<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => typeFirst(item)) as T;
  if (!isPlainObject(value)) return value;
  const out: JsonRecord = {};
  if (typeof value.$type === "string") {
    defineOwn(out, "$type", value.$type);
    if (value.$version !== undefined) defineOwn(out, "$version", value.$version);
  }
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(out, key) || value[key] === undefined) continue;
    defineOwn(out, key, typeFirst(value[key]));
  }
  return out as T;
}
