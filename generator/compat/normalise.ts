/**
 * A small normalisation step run on both schemas before they are compared, so that equivalent
 * spellings compare equal and constraints one keyword implies for another are seen:
 * - `nullable: true` (ajv's OpenAPI keyword) is `"null"` added to `type`;
 * - `type: "number"` with `multipleOf: 1` is `type: "integer"`;
 * - `not` of one count or type keyword is its complement: `not: {maxLength: 0}` is `type: "string",
 *   minLength: 1` (a value of another type satisfies `maxLength`, so `not` rejects it);
 * - `type` and `required` inside `allOf` members apply to the parent and are moved there (a member
 *   left without keywords is dropped);
 * - `then` / `else` without `if`, and `if` without `then` / `else`, are no constraint (ajv ignores them).
 * Every rewrite accepts exactly the same values. The result is cached; an unchanged schema is
 * returned as itself (the differ compares schemas by identity).
 */
import { isAnnotationKeyword } from "./rule-catalogue.js";
import { type JsonSchema, type SchemaObject, isObject, jsonEqual } from "./schema.js";

const ALL_TYPES = ["null", "boolean", "object", "array", "number", "string"] as const;
const cache = new WeakMap<SchemaObject, SchemaObject>();

export function normalise(s: SchemaObject): SchemaObject {
  let out = cache.get(s);
  if (!out) cache.set(s, (out = rewrite(s)));
  return out;
}

function rewrite(s: SchemaObject): SchemaObject {
  let result: SchemaObject | undefined;
  const edit = (): SchemaObject => (result ??= { ...s });
  const cur = (): SchemaObject => result ?? s;

  if (typeof cur().nullable === "boolean" && (typeof cur().type === "string" || Array.isArray(cur().type))) {
    if (cur().nullable === true) edit().type = intersectOrUnion(typesOf(cur()), ["null"], "union");
    delete edit().nullable;
  }

  // allOf members: their type and required apply to the parent.
  if (Array.isArray(cur().allOf)) {
    const members: JsonSchema[] = [];
    let changed = false;
    for (const member of cur().allOf as JsonSchema[]) {
      if (!isObject(member) || "$ref" in member || (member.type === undefined && member.required === undefined)) {
        members.push(member);
        continue;
      }
      if (member.type !== undefined) {
        const intersected = intersectOrUnion(
          typesOf(cur()),
          typesOf(member as SchemaObject) ?? [...ALL_TYPES],
          "intersect",
        );
        if (intersected === undefined) {
          members.push(member);
          continue;
        }
        edit().type = intersected;
      }
      if (Array.isArray(member.required))
        edit().required = [
          ...new Set([
            ...(Array.isArray(cur().required) ? (cur().required as string[]) : []),
            ...(member.required as string[]),
          ]),
        ];
      const rest = Object.fromEntries(Object.entries(member).filter(([k]) => k !== "type" && k !== "required"));
      changed = true;
      if (Object.keys(rest).some((k) => !isAnnotationKeyword(k))) members.push(rest as SchemaObject);
    }
    if (changed) {
      if (members.length > 0) edit().allOf = members;
      else delete edit().allOf;
    }
  }

  // allOf members merged into the parent where the conjunction is exact (`conjoin`): an allOf
  // folded into its parent, or split out of it, compares as the same schema.
  if (Array.isArray(cur().allOf)) {
    const members = cur().allOf as JsonSchema[];
    let merged: SchemaObject = { ...cur() };
    delete merged.allOf;
    const left: JsonSchema[] = [];
    for (const member of members) {
      if (member === true || (isObject(member) && Object.keys(member).every(isAnnotationKeyword))) continue;
      const conjoined =
        isObject(member) && !("$ref" in member) ? conjoin(merged, normalise(member as SchemaObject)) : undefined;
      if (conjoined) merged = conjoined;
      else left.push(member);
    }
    if (left.length < members.length) {
      if (left.length > 0) merged.allOf = left;
      result = merged;
    }
  }

  // propertyNames of a key language (a pattern, or string consts) on an object without
  // patternProperties: the same as those keys as a pattern holding additionalProperties, with
  // every other key refused, when no named property would read the pattern's schema differently.
  const names = cur().propertyNames;
  const keyPattern = isObject(names) ? keyLanguage(names) : undefined;
  if (keyPattern !== undefined && cur().patternProperties === undefined) {
    const named = isObject(cur().properties) ? Object.keys(cur().properties as object) : [];
    const allNamedMatch = named.every((p) => new RegExp(keyPattern, "u").test(p));
    const additional = cur().additionalProperties;
    const anyValue =
      additional === undefined || additional === true || (isObject(additional) && Object.keys(additional).length === 0);
    if (allNamedMatch && additional === false)
      delete edit().propertyNames; // only named keys, all allowed: implied
    else if (allNamedMatch && (named.length === 0 || anyValue)) {
      const next = edit();
      delete next.propertyNames;
      next.patternProperties = { [keyPattern]: additional === undefined ? {} : (additional as JsonSchema) };
      next.additionalProperties = false;
    }
  }

  // not of one keyword: its complement.
  const not = cur().not;
  if (isObject(not)) {
    const keys = Object.keys(not).filter((k) => !isAnnotationKeyword(k));
    const onlyKey = keys[0];
    const negated = onlyKey === undefined ? undefined : not[onlyKey];
    const complement = keys.length === 1 && onlyKey !== undefined ? complementOf(onlyKey, negated, cur()) : undefined;
    if (complement) {
      const next = edit();
      delete next.not;
      Object.assign(next, complement);
    }
  }

  // number + an integer multipleOf: integers.
  const multipleOf = cur().multipleOf;
  const types = typesOf(cur());
  if (multipleOf === 1 && types !== null && types.includes("number")) {
    edit().type = collapse(types.map((t) => (t === "number" ? "integer" : t)));
    delete edit().multipleOf;
  } else if (multipleOf === 1 && types !== null && types.includes("integer") && !types.includes("number")) {
    delete edit().multipleOf;
  }

  // Conditionals ajv ignores.
  if (cur().if === undefined && (cur().then !== undefined || cur().else !== undefined)) {
    delete edit().then;
    delete edit().else;
  }
  if (cur().if !== undefined && cur().then === undefined && cur().else === undefined) delete edit().if;
  return result ?? s;
}

/** A `propertyNames` schema made of a pattern or string consts only, as one pattern (undefined: anything else). */
function keyLanguage(names: SchemaObject): string | undefined {
  const keys = Object.keys(names).filter((k) => !isAnnotationKeyword(k));
  if (names.type !== undefined && names.type !== "string") return undefined;
  const rest = keys.filter((k) => k !== "type");
  // Length bounds alone: the keys of those lengths (counted in code points, as ajv counts them).
  if (rest.length > 0 && rest.every((k) => k === "minLength" || k === "maxLength")) {
    const min = names.minLength ?? 0;
    const max = names.maxLength;
    if (!Number.isInteger(min) || (max !== undefined && !Number.isInteger(max))) return undefined;
    if ((min as number) > 1000 || ((max as number | undefined) ?? 0) > 1000) return undefined;
    return `^[^]{${min},${max ?? ""}}$`;
  }
  if (rest.length !== 1) return undefined;
  const [onlyKey] = rest;
  let pattern: string | undefined;
  if (onlyKey === "pattern" && typeof names.pattern === "string") pattern = names.pattern;
  const values =
    onlyKey === "const" ? [names.const] : onlyKey === "enum" && Array.isArray(names.enum) ? names.enum : undefined;
  if (values !== undefined) {
    if (values.length === 0 || !values.every((v): v is string => typeof v === "string")) return undefined;
    pattern = `^(?:${values.map((v) => v.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")).join("|")})$`;
  }
  if (pattern === undefined) return undefined;
  try {
    new RegExp(pattern, "u");
    return pattern;
  } catch {
    return undefined;
  }
}

/** `not: {k: v}` as positive keywords (with the type the negated keyword applies to), or undefined. */
function complementOf(k: string, v: unknown, s: SchemaObject): SchemaObject | undefined {
  const counts: Record<string, [string, string, string, "min" | "max"]> = {
    maxLength: ["string", "minLength", "maxLength", "max"],
    minLength: ["string", "maxLength", "minLength", "min"],
    maxItems: ["array", "minItems", "maxItems", "max"],
    minItems: ["array", "maxItems", "minItems", "min"],
    maxProperties: ["object", "minProperties", "maxProperties", "max"],
    minProperties: ["object", "maxProperties", "minProperties", "min"],
  };
  if (k in counts) {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0) return undefined;
    const [type, target, , side] = counts[k]!;
    if (side === "min" && v === 0) return undefined; // not {minLength: 0} accepts no value of that type
    const types = intersectOrUnion(typesOf(s), [type], "intersect");
    if (types === undefined) return undefined;
    const bound = side === "max" ? v + 1 : v - 1;
    const existing = s[target];
    const value =
      typeof existing === "number" ? (side === "max" ? Math.max(existing, bound) : Math.min(existing, bound)) : bound;
    return { type: types, [target]: value };
  }
  if (k === "type") {
    const negated = typeof v === "string" ? [v] : Array.isArray(v) ? (v as string[]) : undefined;
    if (!negated || (negated.includes("integer") && !negated.includes("number"))) return undefined;
    const left = (typesOf(s) ?? [...ALL_TYPES]).filter(
      (t) => !negated.includes(t) && !(t === "integer" && negated.includes("number")),
    );
    if (left.length === 0) return undefined;
    return { type: collapse(left) };
  }
  return undefined;
}

function typesOf(s: SchemaObject): string[] | null {
  if (typeof s.type === "string") return [s.type];
  if (Array.isArray(s.type)) return s.type.filter((t): t is string => typeof t === "string");
  return null;
}

function collapse(types: string[]): string | string[] {
  const unique = [...new Set(types)];
  return unique.length === 1 ? unique[0]! : unique;
}

/** Type sets combined (`null` = every type); undefined when an intersection is empty. */
function intersectOrUnion(a: string[] | null, b: string[], how: "intersect" | "union"): string | string[] | undefined {
  if (how === "union") return a === null ? undefined : collapse([...a, ...b]);
  const left = a ?? [...ALL_TYPES];
  const out: string[] = [];
  for (const leftType of left) {
    for (const rightType of b) {
      if (leftType === rightType) out.push(leftType);
      else if ((leftType === "number" && rightType === "integer") || (leftType === "integer" && rightType === "number"))
        out.push("integer");
    }
  }
  return out.length === 0 ? undefined : collapse(out);
}

// ---------------------------------------------------------------------------------------------
// Conjunction

/** Keywords read together: a conjunction that has one group on both sides is not merged. */
const GROUPS: readonly (readonly string[])[] = [
  ["properties", "patternProperties", "additionalProperties"],
  ["items", "additionalItems"],
  ["if", "then", "else"],
  ["contains"],
  ["$ref"],
];
const MERGE_MAX = new Set(["minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"]);
const MERGE_MIN = new Set(["maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"]);

/**
 * One schema accepting exactly the values both accept (`allOf: [a, b]` written out), or undefined
 * when the two can not be merged keyword by keyword (then the caller does not decide).
 */
export function conjoin(a: SchemaObject, b: SchemaObject): SchemaObject | undefined {
  if ("$ref" in a || "$ref" in b)
    return Object.keys(b).every(isAnnotationKeyword) ? a : Object.keys(a).every(isAnnotationKeyword) ? b : undefined;
  const out: SchemaObject = { ...a };
  for (const group of GROUPS) {
    const inA = group.some((k) => a[k] !== undefined);
    const inB = group.some((k) => b[k] !== undefined);
    if (!inB) continue;
    if (!inA) {
      for (const keyword of group) if (b[keyword] !== undefined) out[keyword] = b[keyword];
      continue;
    }
    if (group[0] !== "properties") return undefined;
    // Both have properties: merged by name, only when neither side closes the other's names off.
    const pa = isObject(a.properties) ? a.properties : {};
    const pb = isObject(b.properties) ? b.properties : {};
    const openA =
      (a.additionalProperties === undefined || a.additionalProperties === true) && a.patternProperties === undefined;
    const openB =
      (b.additionalProperties === undefined || b.additionalProperties === true) && b.patternProperties === undefined;
    if (!openA && Object.keys(pb).some((p) => !(p in pa))) return undefined;
    if (!openB && Object.keys(pa).some((p) => !(p in pb))) return undefined;
    if (!openA && !openB) return undefined;
    const merged: Record<string, JsonSchema> = { ...(pa as Record<string, JsonSchema>) };
    for (const [property, sb] of Object.entries(pb as Record<string, JsonSchema>)) {
      const sa = merged[property];
      if (sa === undefined || sa === true || jsonEqual(sa, sb)) merged[property] = sb;
      else if (sb === true) continue;
      else if (isObject(sa) && isObject(sb)) {
        const conjoinedProperty = conjoin(sa as SchemaObject, sb as SchemaObject);
        if (!conjoinedProperty) return undefined;
        merged[property] = conjoinedProperty;
      } else return undefined;
    }
    out.properties = merged;
    for (const keyword of ["patternProperties", "additionalProperties"])
      if (b[keyword] !== undefined) out[keyword] = b[keyword];
  }
  const grouped = new Set(GROUPS.flat());
  for (const [keyword, vb] of Object.entries(b)) {
    if (grouped.has(keyword) || isAnnotationKeyword(keyword)) continue;
    const va = a[keyword];
    if (va === undefined || jsonEqual(va, vb)) out[keyword] = vb;
    else if (keyword === "type") {
      const types = intersectOrUnion(typesOf(a), typesOf(b) ?? [...ALL_TYPES], "intersect");
      if (types === undefined) return undefined;
      out.type = types;
    } else if (keyword === "required" && Array.isArray(va) && Array.isArray(vb))
      out.required = [...new Set([...va, ...vb])];
    else if (MERGE_MAX.has(keyword) && typeof va === "number" && typeof vb === "number")
      out[keyword] = Math.max(va, vb);
    else if (MERGE_MIN.has(keyword) && typeof va === "number" && typeof vb === "number")
      out[keyword] = Math.min(va, vb);
    else if (keyword === "allOf" && Array.isArray(va) && Array.isArray(vb)) out.allOf = [...va, ...vb];
    else return undefined;
  }
  return out;
}
