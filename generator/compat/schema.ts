/**
 * Small JSON / JSON Schema helpers shared by the compatibility check: canonical JSON, deep
 * equality, value-shape pointers, `$ref` resolution within a document (and optionally across
 * documents), cycle-safe.
 */
import path from "node:path";
import { jsonEqual, pointerSegment } from "../runtime.js";

/** A draft-07 schema: an object or a boolean. */
export type JsonSchema = boolean | SchemaObject;
export interface SchemaObject {
  [keyword: string]: unknown;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isSchemaObject(value: unknown): value is SchemaObject {
  return isObject(value);
}

/** The schema `true` read as an object: one frozen instance, so the differ can tell it by identity. */
export const EMPTY_SCHEMA: SchemaObject = Object.freeze({}) as SchemaObject;

/** JSON text with object keys sorted at every level: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
  if (isObject(value)) {
    const keys = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort();
    return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(value[k])).join(",") + "}";
  }
  return JSON.stringify(value) ?? "null";
}

/** Structural equality of JSON values (the runtime's, shared: key order and `undefined` members ignored). */
export { jsonEqual };

/** Appends one segment to a value-shape pointer. `"*"` stands for every array item / map value. */
export function childPointer(pointer: string, segment: string | number): string {
  return segment === "*" ? `${pointer}/*` : `${pointer}/${pointerSegment(segment)}`;
}

/** The pointer as shown to people: the root is `(root)`. */
export function displayPointer(pointer: string): string {
  return pointer === "" ? "(root)" : pointer;
}

/** The JSON type name of a value, with integral numbers as `"integer"`. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "object") return "object";
  return typeof value; // string, boolean
}

// ---------------------------------------------------------------------------------------------
// Documents and `$ref`

/** Where a schema node lives: its document root (for `#...` refs) and the document's location. */
export interface SchemaDoc {
  root: JsonSchema;
  /** File path (or any id) of the document; relative external refs resolve against it. */
  base?: string;
}

/** A schema node together with its document. */
export interface SchemaNode {
  schema: JsonSchema;
  doc: SchemaDoc;
}

/** A `$ref` that could not be followed: compared by identity only. */
export interface OpaqueRef {
  opaque: true;
  ref: string;
  /** What two refs are compared by: the target file's base name plus the fragment. */
  identity: string;
}

/**
 * Resolves a `$ref` that points outside the current document (`"../AIContent/x.schema.json#/..."`).
 * Return the target document (its root schema and base) or `undefined` to leave the ref opaque.
 */
export type ExternalRefResolver = (ref: string, base: string | undefined) => SchemaDoc | undefined;

/** Reads a JSON pointer (`#/definitions/X`, RFC 6901) inside a document. */
export function getByPointer(root: unknown, fragment: string): unknown {
  const pointer = fragment.startsWith("#") ? fragment.slice(1) : fragment;
  if (pointer === "") return root;
  if (!pointer.startsWith("/")) return undefined; // `#anchor` ids: unsupported
  let current: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const seg = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(current)) current = current[Number(seg)];
    else if (isObject(current)) current = current[seg];
    else return undefined;
    if (current === undefined) return undefined;
  }
  return current;
}

export function refIdentity(ref: string): string {
  const hash = ref.indexOf("#");
  const file = hash < 0 ? ref : ref.slice(0, hash);
  const fragment = hash < 0 ? "" : ref.slice(hash);
  return path.posix.basename(file.replace(/\\/g, "/")) + (fragment === "#" ? "" : fragment);
}

/**
 * Follows `$ref`s until a schema that is not a reference (draft-07: a `$ref` node's siblings are
 * ignored). Local refs resolve inside the node's document; others through `resolveExternal`, else
 * they stay opaque. A ref cycle with no schema in between resolves to `true`.
 */
export function resolveNode(node: SchemaNode, resolveExternal?: ExternalRefResolver): SchemaNode | OpaqueRef {
  let current = node;
  const seen = new Set<unknown>();
  while (isObject(current.schema) && typeof current.schema.$ref === "string") {
    if (seen.has(current.schema)) return { schema: true, doc: current.doc };
    seen.add(current.schema);
    const ref = current.schema.$ref;
    if (ref.startsWith("#")) {
      const target = getByPointer(current.doc.root, ref);
      if (typeof target !== "boolean" && !isObject(target)) return { opaque: true, ref, identity: refIdentity(ref) };
      current = { schema: target, doc: current.doc };
      continue;
    }
    const hash = ref.indexOf("#");
    const doc = resolveExternal?.(hash < 0 ? ref : ref.slice(0, hash), current.doc.base);
    if (!doc) return { opaque: true, ref, identity: refIdentity(ref) };
    const target = hash < 0 ? doc.root : getByPointer(doc.root, ref.slice(hash));
    if (typeof target !== "boolean" && !isObject(target)) return { opaque: true, ref, identity: refIdentity(ref) };
    current = { schema: target, doc };
  }
  return current;
}

export function isOpaque(node: SchemaNode | OpaqueRef): node is OpaqueRef {
  return (node as OpaqueRef).opaque === true;
}

/**
 * Deep equality of two schemas with `$ref`s followed on both sides (so a renamed definition or a
 * moved `$ref` with the same target counts as equal). Cycle-safe: a pair met again while being
 * compared is assumed equal.
 */
export function sameSchema(
  a: SchemaNode,
  b: SchemaNode,
  resolveExternal?: ExternalRefResolver,
  inProgress: Map<unknown, Set<unknown>> = new Map(),
): boolean {
  const ra = resolveNode(a, resolveExternal);
  const rb = resolveNode(b, resolveExternal);
  if (isOpaque(ra) || isOpaque(rb)) return isOpaque(ra) && isOpaque(rb) && ra.identity === rb.identity;
  const sa = ra.schema === true ? {} : ra.schema;
  const sb = rb.schema === true ? {} : rb.schema;
  if (typeof sa === "boolean" || typeof sb === "boolean") return sa === sb;
  const pending = inProgress.get(sa);
  if (pending?.has(sb)) return true;
  if (pending) pending.add(sb);
  else inProgress.set(sa, new Set([sb]));
  try {
    const keys = new Set([...Object.keys(sa), ...Object.keys(sb)].filter((k) => k !== "definitions" && k !== "$defs"));
    for (const key of keys) {
      if (!equalSchemaValue(sa[key], sb[key], ra.doc, rb.doc, resolveExternal, inProgress)) return false;
    }
    return true;
  } finally {
    inProgress.get(sa)?.delete(sb);
  }
}

function equalSchemaValue(
  a: unknown,
  b: unknown,
  docA: SchemaDoc,
  docB: SchemaDoc,
  resolveExternal: ExternalRefResolver | undefined,
  inProgress: Map<unknown, Set<unknown>>,
): boolean {
  if (isObject(a) && isObject(b)) {
    // Sub-schemas (or maps of them, like `properties`): compare with refs followed.
    if (typeof a.$ref === "string" || typeof b.$ref === "string") {
      return sameSchema({ schema: a, doc: docA }, { schema: b, doc: docB }, resolveExternal, inProgress);
    }
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys)
      if (!equalSchemaValue(a[key], b[key], docA, docB, resolveExternal, inProgress)) return false;
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    return a.every((item, i) => equalSchemaValue(item, b[i], docA, docB, resolveExternal, inProgress));
  }
  return jsonEqual(a, b);
}

/** The `$type` a (resolved) object schema pins with `properties.$type.const` (or a one-value enum). */
export function typeTagOf(node: SchemaNode, resolveExternal?: ExternalRefResolver): string | undefined {
  const schema = node.schema;
  if (!isObject(schema) || !isObject(schema.properties)) return undefined;
  const tag = schema.properties.$type;
  if (tag === undefined) return undefined;
  const resolved = resolveNode({ schema: tag as JsonSchema, doc: node.doc }, resolveExternal);
  if (isOpaque(resolved) || !isObject(resolved.schema)) return undefined;
  const resolvedSchema = resolved.schema;
  if (typeof resolvedSchema.const === "string") return resolvedSchema.const;
  if (
    Array.isArray(resolvedSchema.enum) &&
    resolvedSchema.enum.length === 1 &&
    typeof resolvedSchema.enum[0] === "string"
  )
    return resolvedSchema.enum[0];
  return undefined;
}
