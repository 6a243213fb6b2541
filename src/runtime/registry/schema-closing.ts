/**
 * Preparing a runtime registration's schema: copied into plain JSON (TypeBox's symbol keys
 * dropped, `__proto__` keys kept as own data), object schemas closed (`additionalProperties:
 * false`) unless the registration is open, and slot positions made opaque (the walker validates
 * what sits there, each value by its own `$type`).
 */
import { setOwn } from "../core/json.js";
import { RegistryError } from "./registry-error.js";

const OBJECT_KEYWORDS_THAT_OPEN = ["additionalProperties", "patternProperties", "unevaluatedProperties"] as const;
const COMBINATORS_AT_LEVEL = ["allOf", "anyOf", "oneOf", "if", "then", "else", "not", "$ref"] as const;
const MAX_SCHEMA_DEPTH = 128;

/**
 * Copies a schema into plain JSON: own enumerable string keys only (TypeBox's symbol keys are
 * dropped), `__proto__` keys stay own data, and, unless `open`, object schemas are closed.
 */
export function plainSchema(node: unknown, open: boolean, closeHere: boolean, depth: number): unknown {
  if (depth > MAX_SCHEMA_DEPTH)
    throw new RegistryError(`schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels (a cycle?)`);
  if (Array.isArray(node)) return node.map((item) => plainSchema(item, open, true, depth + 1));
  if (typeof node !== "object" || node === null) {
    if (typeof node === "function" || typeof node === "symbol" || typeof node === "bigint")
      throw new RegistryError(`schema contains a ${typeof node}, which is not JSON`);
    return node;
  }
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(src)) {
    const value = src[key];
    if (value === undefined) continue;
    let copied: unknown;
    switch (key) {
      // Schema maps: each value is a schema.
      case "properties":
      case "patternProperties":
      case "definitions":
      case "$defs":
      case "dependentSchemas": {
        const map: Record<string, unknown> = {};
        for (const name of Object.keys(value as object))
          setOwn(map, name, plainSchema((value as Record<string, unknown>)[name], open, true, depth + 1));
        copied = map;
        break;
      }
      // Members of an intersection are not closed at their own level (that would reject the other
      // members' properties), nor are partial schemas of conditionals and negations.
      case "allOf":
        copied = (value as unknown[]).map((item) => plainSchema(item, open, false, depth + 1));
        break;
      case "not":
      case "if":
      case "then":
      case "else":
        copied = plainSchema(value, open, false, depth + 1);
        break;
      // Plain data, never schemas.
      case "const":
      case "enum":
      case "default":
      case "examples":
      case "required":
        copied = structuredClone(value);
        break;
      default:
        copied = plainSchema(value, open, true, depth + 1);
    }
    setOwn(out, key, copied);
  }
  if (!open && closeHere && isClosableObjectSchema(out)) out.additionalProperties = false;
  return out;
}

/** An object schema that lists its properties (`{ type: "object" }` alone means "any object" and stays open). */
function isClosableObjectSchema(s: Record<string, unknown>): boolean {
  const schemaType = s.type;
  if (
    (schemaType !== "object" && schemaType !== undefined) ||
    typeof s.properties !== "object" ||
    s.properties === null
  )
    return false;
  for (const keyword of OBJECT_KEYWORDS_THAT_OPEN) if (keyword in s) return false;
  for (const keyword of COMBINATORS_AT_LEVEL) if (keyword in s) return false;
  return true;
}

/** Replaces the subschema at a slot path with `{}` (opaque: the walker validates what sits there). */
export function opaqueSlot(schema: Record<string, unknown>, path: readonly string[]): void {
  let node: Record<string, unknown> | undefined = schema;
  for (let i = 0; i < path.length && node; i++) {
    const seg = path[i];
    const last = i === path.length - 1;
    let holder: Record<string, unknown> | undefined;
    let key: string | undefined;
    if (seg === "*") {
      if (
        node.type === "array" ||
        (node.items !== undefined && typeof node.items === "object" && !Array.isArray(node.items))
      ) {
        holder = node;
        key = "items";
      } else if (typeof node.additionalProperties === "object" && node.additionalProperties !== null) {
        holder = node;
        key = "additionalProperties";
      } else if (typeof node.patternProperties === "object" && node.patternProperties !== null) {
        const pats = node.patternProperties as Record<string, unknown>;
        const keys = Object.keys(pats);
        if (keys.length === 1) {
          holder = pats;
          key = keys[0];
        }
      }
    } else {
      const props = node.properties as Record<string, unknown> | undefined;
      if (props && Object.hasOwn(props, seg)) {
        holder = props;
        key = seg;
      }
    }
    if (holder === undefined || key === undefined) return; // shape not navigable: leave the schema as written
    if (last) setOwn(holder, key, {});
    else node = holder[key] as Record<string, unknown> | undefined;
  }
}
