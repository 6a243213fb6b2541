/**
 * One self-contained schema per document, for validating and sampling whole documents: `$ref`s
 * to other files are inlined under `definitions` (their own refs rewritten to match), and refs
 * that cannot be resolved become `{}` (what a type's own validator leaves to the nested value's
 * type, as at a family slot). Then an ajv validator with the runtime's formats.
 *
 * Every shape ajv compiles keeps its meaning: a root `{"$ref": "#/definitions/X", "definitions":
 * {...}}` (what typescript-json-schema emits) keeps its `definitions`/`$defs` next to the `$ref`
 * (other siblings of a `$ref` are dropped: draft-07 ignores them, as the analysis does); nested
 * `$id`s (and draft-07 `#name` anchors, `$anchor`) are resolved while rewriting, every `$ref`
 * becoming a pointer from the bundle's root, so the ids themselves can go; recursive refs stay
 * refs.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { FORMATS } from "../runtime.js";
import { type ExternalRefResolver, type JsonSchema, type SchemaDoc, isObject } from "./schema.js";

const BUNDLE_KEY = "__statebag_bundled";
/** Keywords whose values are data, not schemas: never rewritten. */
const DATA_KEYWORDS = new Set([
  "const",
  "enum",
  "default",
  "examples",
  "x-statebag",
  "required",
  "type",
  "$comment",
  "description",
  "title",
]);
/** Keywords holding a map of name -> schema (the names are data: a property may be called `$id`). */
const SCHEMA_MAPS = new Set([
  "properties",
  "patternProperties",
  "definitions",
  "$defs",
  "dependentSchemas",
  "dependencies",
]);
/** Siblings of a `$ref` kept in the bundle: they assert nothing, and refs point into them. */
const REF_CONTAINERS = ["definitions", "$defs"] as const;
/** Base URI of a document without an `$id` (and what relative ids resolve against). */
const PSEUDO_BASE = "https://statebag.invalid/";
/** The id a bundle is compiled under. */
const BUNDLE_ID = `${PSEUDO_BASE}bundle.json`;

/** Where each `$id` / anchor of one document sits, as a pointer from that document's root. */
interface DocIndex {
  /** Absolute resource URI (no fragment) -> pointer. */
  resources: Map<string, string>;
  /** Absolute URI with a plain-name fragment (`...#name`) -> pointer. */
  anchors: Map<string, string>;
}

function resolveUri(ref: string, base: string): string | undefined {
  try {
    return new URL(ref, base).href;
  } catch {
    return undefined;
  }
}

function stripFragment(uri: string): string {
  const hash = uri.indexOf("#");
  return hash < 0 ? uri : uri.slice(0, hash);
}

/** A JSON pointer segment as it is written in a URI fragment. */
function fragmentSegment(segment: string): string {
  return segment
    .replace(/~/g, "~0")
    .replace(/\//g, "~1")
    .replace(/[%#"<>\\^`{|}\s]|[^\u0000-\u007f]/gu, (ch) => encodeURIComponent(ch));
}

/** Walks a schema's sub-schemas the way a validator does: `(schema, pointer)` for every schema position. */
function forEachSubschema(
  schema: Record<string, unknown>,
  pointer: string,
  visit: (child: unknown, pointer: string) => void,
): void {
  const isRef = typeof schema.$ref === "string";
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key) || key === "$ref" || key === "$id" || key === "$schema" || key === "$anchor") continue;
    if (isRef && !(REF_CONTAINERS as readonly string[]).includes(key)) continue;
    const at = `${pointer}/${fragmentSegment(key)}`;
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      for (const [name, child] of Object.entries(value)) visit(child, `${at}/${fragmentSegment(name)}`);
    } else if (Array.isArray(value)) {
      value.forEach((child, i) => visit(child, `${at}/${i}`));
    } else visit(value, at);
  }
}

function indexDocument(root: unknown, base: string): DocIndex {
  const index: DocIndex = { resources: new Map(), anchors: new Map() };
  const seen = new Set<unknown>();
  const walk = (node: unknown, pointer: string, scope: string): void => {
    if (!isObject(node) || seen.has(node)) return;
    seen.add(node);
    let here = scope;
    if (typeof node.$id === "string" && typeof node.$ref !== "string") {
      const id = resolveUri(node.$id, scope);
      if (id !== undefined) {
        if (node.$id.startsWith("#")) index.anchors.set(id, pointer);
        else {
          here = stripFragment(id);
          if (!index.resources.has(here)) index.resources.set(here, pointer);
        }
      }
    }
    if (typeof node.$anchor === "string") index.anchors.set(`${here}#${node.$anchor}`, pointer);
    forEachSubschema(node, pointer, (child, at) => walk(child, at, here));
  };
  index.resources.set(stripFragment(base), "");
  walk(root, "", base);
  return index;
}

/**
 * The schema with refs that go through nested `$id`s or anchors rewritten as pointers from the
 * root (and the nested ids dropped), everything else as it was: refs to other files stay as
 * written, `$ref` siblings stay. What the analysis reads, so it follows the refs ajv follows.
 * A schema with no nested id or anchor is returned as is.
 */
export function normalizeIds(root: JsonSchema): JsonSchema {
  if (!isObject(root) || !hasNestedIds(root, true)) return root;
  const out = rewriteDocument(root, undefined, "", PSEUDO_BASE, { keepExternal: true, nameOf: () => "" });
  if (isObject(out) && typeof root.$id === "string") return { $id: root.$id, ...out };
  return out as JsonSchema;
}

function hasNestedIds(node: unknown, isRoot: boolean): boolean {
  if (Array.isArray(node)) return node.some((n) => hasNestedIds(n, false));
  if (!isObject(node)) return false;
  if (!isRoot && (typeof node.$id === "string" || typeof node.$anchor === "string")) return true;
  return Object.entries(node).some(([k, v]) => !DATA_KEYWORDS.has(k) && hasNestedIds(v, false));
}

interface RewriteOptions {
  /** Leave refs to other documents as written (`normalizeIds`) instead of inlining them. */
  keepExternal?: boolean;
  resolveExternal?: ExternalRefResolver;
  nameOf: (doc: SchemaDoc) => string;
}

function rewriteDocument(
  docRoot: unknown,
  docBase: string | undefined,
  prefix: string,
  pseudo: string,
  options: RewriteOptions,
): unknown {
  const index = indexDocument(docRoot, pseudo);
  /** The bundle pointer a ref stands for, or an external document it names. */
  const target = (ref: string, scope: string): { $ref: string } | { external: string } => {
    const uri = resolveUri(ref, scope);
    if (uri !== undefined) {
      const hash = uri.indexOf("#");
      const resource = stripFragment(uri);
      const fragment = hash < 0 ? "" : uri.slice(hash + 1);
      const at = index.resources.get(resource);
      if (fragment !== "" && !fragment.startsWith("/")) {
        const anchored = index.anchors.get(uri);
        if (anchored !== undefined) return { $ref: `#${prefix}${anchored}` };
      } else if (at !== undefined) return { $ref: `#${prefix}${at}${fragment}` };
    }
    return { external: ref };
  };
  const seen = new Set<unknown>();
  const rewrite = (value: unknown, scope: string): unknown => {
    if (!isObject(value)) return value;
    if (seen.has(value)) return {}; // a schema object shared in a cycle: JSON has none
    seen.add(value);
    try {
      let here = scope;
      if (typeof value.$id === "string" && typeof value.$ref !== "string" && !value.$id.startsWith("#")) {
        const id = resolveUri(value.$id, scope);
        if (id !== undefined) here = stripFragment(id);
      }
      const out: Record<string, unknown> = {};
      if (typeof value.$ref === "string") {
        const resolved = target(value.$ref, here);
        if ("$ref" in resolved) out.$ref = resolved.$ref;
        else if (options.keepExternal) out.$ref = resolved.external;
        else {
          const ref = resolved.external;
          const hash = ref.indexOf("#");
          const doc = options.resolveExternal?.(hash < 0 ? ref : ref.slice(0, hash), docBase);
          if (doc)
            out.$ref = `#/definitions/${BUNDLE_KEY}/${options.nameOf(doc)}${hash < 0 ? "" : ref.slice(hash + 1)}`;
          // else: unresolvable, an open schema
        }
        for (const [keyword, keywordValue] of Object.entries(value)) {
          if (keyword === "$ref" || keyword === "$id" || keyword === "$schema" || keyword === "$anchor") continue;
          if ((REF_CONTAINERS as readonly string[]).includes(keyword) && isObject(keywordValue))
            out[keyword] = rewriteMap(keywordValue, here);
          else if (options.keepExternal) out[keyword] = keywordValue; // draft-07: ignored next to a $ref
        }
        return out;
      }
      for (const [keyword, keywordValue] of Object.entries(value)) {
        if (keyword === "$id" || keyword === "$schema" || keyword === "$anchor") continue;
        if (DATA_KEYWORDS.has(keyword)) out[keyword] = keywordValue;
        else if (SCHEMA_MAPS.has(keyword) && isObject(keywordValue)) out[keyword] = rewriteMap(keywordValue, here);
        else if (Array.isArray(keywordValue)) out[keyword] = keywordValue.map((child) => rewrite(child, here));
        else out[keyword] = rewrite(keywordValue, here);
      }
      return out;
    } finally {
      seen.delete(value);
    }
  };
  const rewriteMap = (map: Record<string, unknown>, scope: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(map)) {
      Object.defineProperty(out, name, {
        value: Array.isArray(child) ? child : rewrite(child, scope),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  return rewrite(docRoot, pseudo);
}

export function bundleSchema(
  root: JsonSchema,
  base: string | undefined,
  resolveExternal?: ExternalRefResolver,
): JsonSchema {
  const docs: { doc: SchemaDoc; name: string }[] = [];
  const names = new Map<unknown, string>();
  const nameOf = (doc: SchemaDoc): string => {
    // By location when known: a resolver that reads a file afresh on each call must not inline it forever.
    const key = doc.base ?? doc.root;
    let name = names.get(key);
    if (name === undefined) {
      name = `d${docs.length}`;
      names.set(key, name);
      docs.push({ doc, name });
    }
    return name;
  };
  const options: RewriteOptions = { resolveExternal, nameOf };
  const top = rewriteDocument(root, base, "", PSEUDO_BASE, options);
  if (docs.length === 0) return top as JsonSchema;
  const bundled: Record<string, unknown> = {};
  for (let i = 0; i < docs.length; i++) {
    const { doc, name } = docs[i]!; // docs grows while rewriting: each new doc is visited in turn
    bundled[name] = rewriteDocument(
      doc.root,
      doc.base,
      `/definitions/${BUNDLE_KEY}/${name}`,
      `${PSEUDO_BASE}${name}/`,
      options,
    );
  }
  const wrapper = isObject(top) ? top : top === false ? { not: {} } : {};
  const definitions = isObject(wrapper.definitions) ? wrapper.definitions : {};
  return { ...wrapper, definitions: { ...definitions, [BUNDLE_KEY]: bundled } };
}
let shared: Ajv | undefined;

/** An ajv instance configured like the runtime's validators (formats checked exactly, unknown keywords ignored). */
export function compatAjv(): Ajv {
  if (!shared) {
    // Unoptimised code: compiling is what costs here (a few hundred documents are validated per
    // schema), and ajv's optimiser triples the compile time of a wide schema.
    shared = new Ajv({
      strict: false,
      allErrors: false,
      logger: false,
      validateSchema: false,
      addUsedSchema: false,
      code: { optimize: false },
      formats: { ...FORMATS },
    });
  }
  return shared;
}

/** A validator for a bundled schema, or the reason it can not be compiled. */
export function compileBundled(schema: JsonSchema): { validate: ValidateFunction } | { error: string } {
  try {
    // An id of its own, so a `$ref` to the root itself ("#") resolves (ajv can not resolve it without one).
    const withId =
      typeof schema === "boolean" || typeof schema.$id === "string" ? schema : { $id: BUNDLE_ID, ...schema };
    return { validate: compatAjv().compile(withId as object) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
