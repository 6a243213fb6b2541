/**
 * TypeScript declarations for stored versions of a type, written from their JSON Schemas (the
 * frozen `schemas/history/.../v<N>.schema.json` files, and the current schema for the latest
 * version). They are what a migration reads and writes, so `defineMigration<NotesState_v1,
 * NotesState_v2>(...)` lets the compiler check `up` against both shapes.
 *
 * The schemas come from typescript-json-schema, so only the keywords it writes need a faithful
 * translation; anything else becomes `unknown` (never narrower than the schema). Family slots
 * (`$ref` to another schema file) become `TaggedValue`: each nested value has its own type and
 * migrations.
 */
import { isObject } from "./compat/schema.js";

export interface VersionTypeInput {
  /** Exported name, e.g. `NotesState_v1`. */
  name: string;
  /** The doc comment's first line. */
  summary: string;
  schema: unknown;
}

export interface VersionTypeOutput {
  /** Declarations (interface or type alias, plus one alias per referenced local definition). */
  code: string;
  /** True when a family slot made it refer to `TaggedValue`. */
  usesTaggedValue: boolean;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function comment(text: string, pad: string): string[] {
  const lines = text.replace(/\*\//g, "*\\/").split("\n");
  if (lines.length === 1) return [`${pad}/** ${lines[0]} */`];
  return [`${pad}/**`, ...lines.map((l) => (l === "" ? `${pad} *` : `${pad} * ${l}`)), `${pad} */`];
}

function propertyKey(key: string): string {
  return IDENTIFIER.test(key) ? key : JSON.stringify(key);
}

function literal(value: unknown): string {
  if (value === null || typeof value === "boolean" || typeof value === "number") return JSON.stringify(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(literal).join(", ")}]`;
  if (isObject(value)) {
    const entries = Object.keys(value).map((k) => `${propertyKey(k)}: ${literal(value[k])}`);
    return entries.length === 0 ? "{}" : `{ ${entries.join("; ")} }`;
  }
  return "unknown";
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  if (unique.includes("unknown")) return "unknown";
  const kept = unique.filter((p) => p !== "never");
  if (kept.length === 0) return "never";
  return kept.length === 1 ? kept[0]! : kept.map(operand).join(" | ");
}

/** Writes the declarations for one stored version. */
export function versionTypeDeclaration(input: VersionTypeInput): VersionTypeOutput {
  const root = input.schema;
  const definitions = isObject(root) && isObject(root.definitions) ? root.definitions : {};
  const definitionNames = new Map<string, string>();
  const pendingDefinitions: string[] = [];
  let usesTaggedValue = false;

  const definitionName = (key: string): string => {
    let name = definitionNames.get(key);
    if (name === undefined) {
      name = `${input.name}_${key.replace(/[^A-Za-z0-9_$]/g, "_")}`;
      definitionNames.set(key, name);
      pendingDefinitions.push(key);
    }
    return name;
  };

  const typeOf = (schema: unknown, pad: string): string => {
    if (schema === true || schema === undefined) return "unknown";
    if (schema === false) return "never";
    if (!isObject(schema)) return "unknown";
    if (typeof schema.$ref === "string") {
      const ref = schema.$ref;
      const local = /^#\/definitions\/([^/]+)$/.exec(ref);
      if (local && Object.hasOwn(definitions, decodeURIComponent(local[1]!)))
        return definitionName(decodeURIComponent(local[1]!));
      if (ref === "#") return input.name;
      if (!ref.startsWith("#")) {
        usesTaggedValue = true;
        return "TaggedValue";
      }
      return "unknown";
    }
    if ("const" in schema) return literal(schema.const);
    if (Array.isArray(schema.enum)) return union(schema.enum.map(literal));
    const parts: string[] = [];
    for (const key of ["anyOf", "oneOf"] as const) {
      const branches = schema[key];
      if (Array.isArray(branches)) parts.push(union(branches.map((b) => typeOf(b, pad))));
    }
    if (Array.isArray(schema.allOf)) parts.push(schema.allOf.map((b) => operand(typeOf(b, pad))).join(" & "));
    const types = Array.isArray(schema.type) ? schema.type : typeof schema.type === "string" ? [schema.type] : [];
    if (types.length > 0) parts.push(union(types.map((t) => primitive(String(t), schema, pad))));
    else if (isObject(schema.properties) || schema.additionalProperties !== undefined)
      parts.push(objectType(schema, pad));
    if (parts.length === 0) return "unknown";
    const kept = parts.filter((p) => p !== "unknown");
    return kept.length === 0 ? "unknown" : kept.length === 1 ? kept[0]! : kept.map(operand).join(" & ");
  };

  const primitive = (type: string, schema: Record<string, unknown>, pad: string): string => {
    switch (type) {
      case "string":
        return "string";
      case "number":
      case "integer":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array": {
        if (Array.isArray(schema.items)) {
          const items = schema.items.map((i) => typeOf(i, pad));
          const rest =
            schema.additionalItems === false ? [] : [`...${wrapArray(typeOf(schema.additionalItems, pad))}[]`];
          return `[${[...items, ...rest].join(", ")}]`;
        }
        return `${wrapArray(typeOf(schema.items, pad))}[]`;
      }
      case "object":
        return objectType(schema, pad);
      default:
        return "unknown";
    }
  };

  const objectType = (schema: Record<string, unknown>, pad: string): string => {
    const properties = isObject(schema.properties) ? schema.properties : {};
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === "string") : [],
    );
    const inner = `${pad}  `;
    const lines: string[] = [];
    for (const key of Object.keys(properties)) {
      const prop = properties[key];
      if (isObject(prop) && typeof prop.description === "string") lines.push(...comment(prop.description, inner));
      lines.push(`${inner}${propertyKey(key)}${required.has(key) ? "" : "?"}: ${typeOf(prop, inner)};`);
    }
    const extra = schema.additionalProperties;
    const hasPatterns = isObject(schema.patternProperties) && Object.keys(schema.patternProperties).length > 0;
    if (extra !== false || hasPatterns) {
      // Named properties must fit the index signature: with any, only `unknown` is safe.
      const value =
        Object.keys(properties).length > 0 || hasPatterns
          ? "unknown"
          : typeOf(extra === undefined ? true : extra, inner);
      lines.push(`${inner}[key: string]: ${value};`);
    }
    return lines.length === 0 ? "{}" : `{\n${lines.join("\n")}\n${pad}}`;
  };

  const out: string[] = [...comment(input.summary, "")];
  const body = typeOf(root, "");
  if (body.startsWith("{")) out.push(`export interface ${input.name} ${body}`);
  else out.push(`export type ${input.name} = ${body};`);
  for (let i = 0; i < pendingDefinitions.length; i++) {
    const key = pendingDefinitions[i]!;
    const def = definitions[key];
    const name = definitionNames.get(key)!;
    out.push("");
    if (isObject(def) && typeof def.description === "string") out.push(...comment(def.description, ""));
    const text = typeOf(def, "");
    out.push(text.startsWith("{") ? `export interface ${name} ${text}` : `export type ${name} = ${text};`);
  }
  return { code: out.join("\n"), usesTaggedValue };
}

/** True when `type` has a `|` or `&` outside brackets and string literals (it needs parentheses to be an operand). */
function compound(type: string): boolean {
  let depth = 0;
  let quote = false;
  for (let i = 0; i < type.length; i++) {
    const ch = type[i]!;
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === '"') quote = false;
    } else if (ch === '"') quote = true;
    else if (ch === "{" || ch === "[" || ch === "(") depth++;
    else if (ch === "}" || ch === "]" || ch === ")") depth--;
    else if (depth === 0 && (ch === "|" || ch === "&")) return true;
  }
  return false;
}

function operand(type: string): string {
  return compound(type) ? `(${type})` : type;
}

function wrapArray(type: string): string {
  return operand(type);
}
