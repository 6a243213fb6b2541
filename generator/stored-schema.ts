/**
 * An older version's schema as the runtime checks a stored value against it before migrating:
 * the frozen document schema with every family slot made opaque (a nested value is checked by its
 * own type, at its own version), self-contained (no `$ref` to another file) and without the
 * generator's metadata.
 */
import { isObject } from "./compat/schema.js";

/** What a family slot holds, as the runtime schemas write it: any tagged object. */
const OPAQUE_SLOT = { type: "object", required: ["$type"], properties: { $type: { type: "string" } } };

const external = (node: unknown): boolean =>
  isObject(node) && typeof node.$ref === "string" && !node.$ref.startsWith("#");

export function storedSchema(schema: unknown): Record<string, unknown> {
  const open = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(open);
    if (!isObject(node)) return node;
    if (external(node)) return OPAQUE_SLOT;
    for (const key of ["oneOf", "anyOf"] as const) {
      const branches = node[key];
      if (Array.isArray(branches) && branches.length > 0 && branches.every(external)) return OPAQUE_SLOT;
    }
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      if (key === "discriminator") continue;
      Object.defineProperty(out, key, { value: open(value), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };
  const { $id: _id, $schema: _schema, "x-statebag": _meta, ...rest } = isObject(schema) ? schema : {};
  return open(rest) as Record<string, unknown>;
}
