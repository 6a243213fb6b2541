/**
 * One self-contained schema per document, for validating and sampling whole documents: `$ref`s
 * to other files are inlined under `definitions` (their own local refs rewritten to match), and
 * refs that cannot be resolved become `{}` (what a type's own validator leaves to the nested
 * value's type, as at a family slot). Then an ajv validator with the runtime's formats.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { isDateTime } from "../runtime.js";
import { type ExternalRefResolver, type JsonSchema, type SchemaDoc, isObject } from "./schema.js";

const BUNDLE_KEY = "__statebag_bundled";
/** Keywords whose values are data, not schemas: never rewritten. */
const DATA_KEYWORDS = new Set(["const", "enum", "default", "examples", "x-statebag"]);

export function bundleSchema(root: JsonSchema, base: string | undefined, resolveExternal?: ExternalRefResolver): JsonSchema {
  const docs: { doc: SchemaDoc; name: string }[] = [];
  const names = new Map<unknown, string>();
  const nameOf = (doc: SchemaDoc): string => {
    let name = names.get(doc.root);
    if (name === undefined) {
      name = `d${docs.length}`;
      names.set(doc.root, name);
      docs.push({ doc, name });
    }
    return name;
  };
  const rewrite = (value: unknown, docBase: string | undefined, prefix: string): unknown => {
    if (Array.isArray(value)) return value.map((v) => rewrite(v, docBase, prefix));
    if (!isObject(value)) return value;
    if (typeof value.$ref === "string") {
      const ref = value.$ref;
      if (ref.startsWith("#")) return { $ref: prefix === "" ? ref : `#${prefix}${ref.slice(1)}` };
      const hash = ref.indexOf("#");
      const doc = resolveExternal?.(hash < 0 ? ref : ref.slice(0, hash), docBase);
      if (!doc) return {};
      const fragment = hash < 0 ? "" : ref.slice(hash + 1);
      return { $ref: `#/definitions/${BUNDLE_KEY}/${nameOf(doc)}${fragment}` };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "$id" || k === "$schema") continue;
      out[k] = DATA_KEYWORDS.has(k) ? v : rewrite(v, docBase, prefix);
    }
    return out;
  };
  const top = rewrite(root, base, "");
  if (docs.length === 0) return top as JsonSchema;
  const bundled: Record<string, unknown> = {};
  for (let i = 0; i < docs.length; i++) {
    const { doc, name } = docs[i]!; // docs grows while rewriting: each new doc is visited in turn
    bundled[name] = rewrite(doc.root, doc.base, `/definitions/${BUNDLE_KEY}/${name}`);
  }
  const wrapper = isObject(top) ? top : top === false ? { not: {} } : {};
  const definitions = isObject(wrapper.definitions) ? wrapper.definitions : {};
  return { ...wrapper, definitions: { ...definitions, [BUNDLE_KEY]: bundled } };
}

let shared: Ajv | undefined;

/** An ajv instance configured like the runtime's validators (formats checked exactly, unknown keywords ignored). */
export function compatAjv(): Ajv {
  if (!shared) {
    shared = new Ajv({ strict: false, allErrors: false, logger: false, validateSchema: false, addUsedSchema: false });
    shared.addFormat("date-time", isDateTime);
    shared.addFormat("date", /^\d{4}-\d{2}-\d{2}$/);
  }
  return shared;
}

/** A validator for a bundled schema, or the reason it can not be compiled. */
export function compileBundled(schema: JsonSchema): { validate: ValidateFunction } | { error: string } {
  try {
    return { validate: compatAjv().compile(typeof schema === "boolean" ? schema : (schema as object)) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
