/**
 * Family slots: the positions inside a tagged type that hold another family's values (message
 * contents, annotations, ...).
 *
 * Each tagged type gets two schemas from the definition graph:
 * - the RUNTIME schema (registry + validators): plain types inlined, every slot an opaque tagged
 *   object, plus the list of slot paths. The walker validates each slot value with its own
 *   `$type`'s validator, so families stay open (a user's content type validates anywhere an
 *   AIContent may sit) and unknown types can be preserved instead of rejected;
 * - the DOCUMENT schema (schemas/<Family>/<$type>.schema.json): the same, except that slots
 *   reference the member/family schema files (`oneOf` + `discriminator` over `$type`).
 */
import type { GenError } from "./errors.js";
import type { TagInfo } from "./markers.js";
import { ANNOTATIONS, isJsonAnyShape, REF_PREFIX, refName, type Schema, type SchemaGraph } from "./schemas.js";

export interface FamilySlot {
  path: readonly string[];
  family: string;
}

export interface TypeSchemas {
  runtime: Schema;
  document: Schema;
  slots: FamilySlot[];
  /** Families whose file the document schema references. */
  families: string[];
  errors: Omit<GenError, "file" | "line" | "column">[];
}

/** What a property typed as a family accepts at runtime: any tagged object (checked separately). */
export const OPAQUE_TAGGED: Schema = Object.freeze({
  type: "object",
  required: ["$type"],
  properties: { $type: { type: "string" } },
}) as Schema;

export const SUPPORTED_FORMATS = new Set(["date-time"]);

/** Which member schema files exist in this run, to point document schemas at them. */
export interface DocumentLinks {
  /** `$type` -> family, for every type generated in this run. */
  members: ReadonlyMap<string, string>;
}

export function memberFile(family: string, $type: string): string {
  return `${family}/${$type}.schema.json`;
}

export function familyFile(family: string): string {
  return `${family}.family.schema.json`;
}

const SUBSCHEMA_MAPS = ["properties", "patternProperties"] as const;

function safeDefinitionName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, "_");
}

/**
 * Builds the runtime and document schemas of the tagged definition `rootName`.
 */
export function buildTypeSchemas(graph: SchemaGraph, rootName: string, links: DocumentLinks): TypeSchemas {
  const errors: TypeSchemas["errors"] = [];
  const slots: FamilySlot[] = [];
  const referencedFamilies = new Set<string>();
  const slotKeys = new Set<string>();
  const recursive = new Set<string>();
  const slotStacks: { path: string; stack: readonly string[] }[] = [];
  const definitions = { runtime: {} as Schema, document: {} as Schema };

  /**
   * The tagged members a schema stands for, if it is a family position: a tagged ref, a named
   * union of tagged types (`family: true`, e.g. AIContent), or an inline union of those.
   */
  const taggedMembers = (s: Schema, seen: ReadonlySet<string> = new Set()): { members: TagInfo[]; family: boolean } | "mixed" | undefined => {
    if (typeof s.$ref === "string") {
      const name = refName(s.$ref);
      const tag = graph.tagged.get(name);
      if (tag) return { members: [tag], family: false };
      const def = graph.definitions.get(name);
      if (!def || seen.has(name) || graph.jsonAny.has(name)) return undefined;
      const inner = taggedMembers(def, new Set([...seen, name]));
      return inner && inner !== "mixed" ? { members: inner.members, family: true } : inner;
    }
    const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
    if (!Array.isArray(branches) || Object.keys(s).some((k) => k !== "anyOf" && k !== "oneOf" && !ANNOTATIONS.has(k))) return undefined;
    const found = branches.map((b) => taggedMembers(b, seen));
    if (found.every((f) => f === undefined)) return undefined;
    if (found.some((f) => f === undefined || f === "mixed")) return "mixed";
    const list = found as { members: TagInfo[]; family: boolean }[];
    return { members: list.flatMap((f) => f.members), family: list.some((f) => f.family) };
  };

  const annotations = (s: Schema): Schema => {
    const out: Schema = {};
    for (const k of ANNOTATIONS) if (s[k] !== undefined) out[k] = s[k];
    return out;
  };

  /**
   * A slot in a document schema. Written the way the property is typed, so it does not change
   * when unrelated types are added: a named family -> the family file; a tagged member -> its
   * file; an inline union of members -> `oneOf` + `discriminator` over their files. Members
   * declared outside this project have no file here: the family file stands for them.
   */
  const documentSlot = (family: string, found: { members: TagInfo[]; family: boolean }): Schema => {
    const types = [...new Set(found.members.map((m) => m.$type))].sort();
    referencedFamilies.add(family);
    if (found.family || !types.every((t) => links.members.has(t))) return { $ref: `../${familyFile(family)}` };
    const refs = types.map((t) => ({ $ref: `../${memberFile(family, t)}` }));
    return refs.length === 1 ? refs[0]! : { type: "object", oneOf: refs, discriminator: { propertyName: "$type" } };
  };

  // Descriptions that belong to the JSON alias itself, not to a property using it.
  const jsonAnyDescriptions = new Set([...graph.jsonAny].map((n) => graph.definitions.get(n)?.description));
  const isAnyRef = (ref: string) => graph.jsonAny.has(refName(ref));

  /** Returns [runtime, document] for schema `s` found at `path`. */
  const visit = (s: Schema, path: readonly string[], stack: readonly string[]): [Schema, Schema] => {
    if (isJsonAnyShape(s, isAnyRef)) {
      const ann = annotations(s);
      if (jsonAnyDescriptions.has(ann.description)) delete ann.description;
      return [{ ...ann }, { ...ann }];
    }
    const members = taggedMembers(s);
    const where = path.length ? path.join("/") : "(root)";
    if (members === "mixed") {
      errors.push({
        code: "mixed-slot",
        message: `${where} mixes tagged types with other types (or with null)`,
        hint: "make the property a family or tagged member only (optional `?` is fine), or wrap the alternatives in a plain object",
      });
      return [{}, {}];
    }
    if (members) {
      const families = [...new Set(members.members.map((m) => m.family))].sort();
      if (families.length > 1) {
        errors.push({
          code: "mixed-slot",
          message: `${where} mixes tagged types of different families (${families.join(", ")})`,
          hint: "a position holds one family; declare the types in one family or split the property",
        });
        return [{}, {}];
      }
      const family = families[0]!;
      const key = `${path.join("/")}\u0000${family}`;
      if (!slotKeys.has(key)) {
        slotKeys.add(key);
        slots.push({ path: [...path], family });
      }
      slotStacks.push({ path: where, stack });
      const ann = annotations(s);
      // Runtime: no check at all here. The walker visits every slot item anyway and reports a
      // non-object or untagged one itself; checking it here too cost ~6% of validation.
      return [{ ...ann }, { ...ann, ...documentSlot(family, members) }];
    }

    if (typeof s.$ref === "string") {
      const name = refName(s.$ref);
      const ann = annotations(s);
      if (graph.jsonAny.has(name)) {
        if (jsonAnyDescriptions.has(ann.description)) delete ann.description;
        return [{ ...ann }, { ...ann }];
      }
      const def = graph.definitions.get(name);
      if (!def) {
        errors.push({ code: "schema-failed", message: `${where} references missing definition ${name}` });
        return [{}, {}];
      }
      if (stack.includes(name)) {
        recursive.add(name);
        const ref = { $ref: REF_PREFIX + safeDefinitionName(name) };
        return [{ ...ann, ...ref }, { ...ann, ...ref }];
      }
      const [r, d] = visit(def, path, [...stack, name]);
      return [{ ...r, ...ann }, { ...d, ...ann }];
    }

    if (typeof s.format === "string" && !SUPPORTED_FORMATS.has(s.format))
      errors.push({
        code: "unsupported-format",
        message: `${where} uses format "${s.format}"; generated validators check only ${[...SUPPORTED_FORMATS].join(", ")}`,
        hint: "drop the @format tag or use a @pattern",
      });

    const runtime: Schema = {};
    const document: Schema = {};
    for (const [key, value] of Object.entries(s)) {
      if (SUBSCHEMA_MAPS.includes(key as (typeof SUBSCHEMA_MAPS)[number])) {
        const r: Schema = {};
        const d: Schema = {};
        for (const [prop, sub] of Object.entries(value as Schema)) {
          [r[prop], d[prop]] = typeof sub === "object" && sub !== null ? visit(sub as Schema, [...path, key === "properties" ? prop : "*"], stack) : [sub, sub];
        }
        runtime[key] = r;
        document[key] = d;
      } else if ((key === "items" || key === "additionalProperties" || key === "additionalItems") && typeof value === "object" && value !== null) {
        if (Array.isArray(value)) {
          const pairs = value.map((v, i) => visit(v as Schema, [...path, String(i)], stack));
          runtime[key] = pairs.map((p) => p[0]);
          document[key] = pairs.map((p) => p[1]);
        } else {
          [runtime[key], document[key]] = visit(value as Schema, [...path, "*"], stack);
        }
      } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
        // A plain union: each alternative is walked at the same path.
        const pairs = value.map((v) => visit(v as Schema, path, stack));
        runtime[key] = pairs.map((p) => p[0]);
        document[key] = pairs.map((p) => p[1]);
      } else if (key === "not" && typeof value === "object" && value !== null) {
        [runtime[key], document[key]] = visit(value as Schema, path, stack);
      } else if (key !== "definitions") {
        runtime[key] = value;
        document[key] = value;
      }
    }
    return [runtime, document];
  };

  const rootDef = graph.definitions.get(rootName);
  if (!rootDef) return { runtime: {}, document: {}, slots, families: [], errors: [{ code: "schema-failed", message: `no definition for ${rootName}` }] };
  const [runtime, document] = visit(rootDef, [], [rootName]);

  // Recursive plain types become local definitions; they must not hold slots (a slot path would be infinite).
  const done = new Set<string>();
  for (let pending = [...recursive]; pending.length > 0; pending = [...recursive].filter((n) => !done.has(n))) {
    for (const name of pending.sort()) {
      done.add(name);
      const [r, d] = visit(graph.definitions.get(name)!, [`(${name})`], [name]);
      definitions.runtime[safeDefinitionName(name)] = r;
      definitions.document[safeDefinitionName(name)] = d;
    }
  }
  const reported = new Set<string>();
  for (const { path, stack } of slotStacks) {
    const cycle = stack.find((n) => recursive.has(n));
    if (cycle && !reported.has(cycle) && reported.add(cycle))
      errors.push({
        code: "recursive-slot",
        message: `recursive type ${cycle} holds a family slot at ${path}; slot paths must be finite`,
        hint: `make ${cycle} non-recursive (for example a flat array with parent ids), or store the nested values as JsonValue`,
      });
  }
  if (done.size > 0) {
    runtime.definitions = definitions.runtime;
    document.definitions = definitions.document;
  }
  return { runtime, document, slots: slots.sort(compareSlots), families: [...referencedFamilies].sort(), errors };
}

function compareSlots(a: FamilySlot, b: FamilySlot): number {
  const pa = a.path.join("\u0000");
  const pb = b.path.join("\u0000");
  return pa < pb ? -1 : pa > pb ? 1 : a.family < b.family ? -1 : a.family > b.family ? 1 : 0;
}
