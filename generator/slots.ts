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
 *
 * `buildTypeSchemas` runs the steps: `TypeWalker` turns the definition graph into both schemas
 * (finding slots with `taggedMembers`, writing them with `documentSlot`), `localDefinitions` adds
 * the recursive plain types, `recursiveSlotErrors` rejects slots inside them.
 */
import type { GenError } from "./errors.js";
import type { TagInfo } from "./markers.js";
import { familyFile, memberFile } from "./schema-files.js";
import { ANNOTATIONS, isJsonAnyShape, REF_PREFIX, refName, type Schema, type SchemaGraph } from "./schemas.js";
import { isKnownFormat, setOwn } from "./runtime.js";

export interface FamilySlot {
  path: readonly string[];
  family: string;
}

type SchemaError = Omit<GenError, "file" | "line" | "column">;

export interface TypeSchemas {
  runtime: Schema;
  document: Schema;
  slots: FamilySlot[];
  /** Families whose file the document schema references. */
  families: string[];
  errors: SchemaError[];
  /** Findings that do not stop the run (a format the runtime does not know). */
  warnings: SchemaError[];
}

/** What a property typed as a family accepts at runtime: any tagged object (checked separately). */
export const OPAQUE_TAGGED: Schema = Object.freeze({
  type: "object",
  required: ["$type"],
  properties: { $type: { type: "string" } },
}) as Schema;

/** Which member schema files exist in this run, to point document schemas at them. */
export interface DocumentLinks {
  /** `$type` -> family, for every type generated in this run. */
  members: ReadonlyMap<string, string>;
}

const SUBSCHEMA_MAPS = ["properties", "patternProperties"] as const;

function safeDefinitionName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, "_");
}

/** Builds the runtime and document schemas of the tagged definition `rootName`. */
export function buildTypeSchemas(graph: SchemaGraph, rootName: string, links: DocumentLinks): TypeSchemas {
  const rootDef = graph.definitions.get(rootName);
  if (!rootDef)
    return {
      runtime: {},
      document: {},
      slots: [],
      families: [],
      errors: [{ code: "schema-failed", message: `no definition for ${rootName}` }],
      warnings: [],
    };
  const walker = new TypeWalker(graph, links);
  const [runtime, document] = walker.visit(rootDef, [], [rootName]);
  const definitions = localDefinitions(walker);
  const errors = [...walker.errors, ...recursiveSlotErrors(walker)];
  if (definitions) {
    runtime.definitions = definitions.runtime;
    document.definitions = definitions.document;
  }
  return {
    runtime,
    document,
    slots: walker.slots.sort(compareSlots),
    families: [...walker.families].sort(),
    errors,
    warnings: walker.warnings,
  };
}

/** A family position's members: which tagged types it accepts, and whether it names a family. */
export interface SlotMembers {
  members: TagInfo[];
  family: boolean;
}

/**
 * The tagged members a schema stands for, if it is a family position: a tagged ref, a named
 * union of tagged types (`family: true`, e.g. AIContent), or an inline union of those.
 * `"mixed"` when tagged and other alternatives meet.
 */
export function taggedMembers(
  graph: SchemaGraph,
  s: Schema,
  seen: ReadonlySet<string> = new Set(),
): SlotMembers | "mixed" | undefined {
  if (typeof s.$ref === "string") {
    const name = refName(s.$ref);
    const tag = graph.tagged.get(name);
    if (tag) return { members: [tag], family: false };
    const def = graph.definitions.get(name);
    if (!def || seen.has(name) || graph.jsonAny.has(name)) return undefined;
    const inner = taggedMembers(graph, def, new Set([...seen, name]));
    return inner && inner !== "mixed" ? { members: inner.members, family: true } : inner;
  }
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (!Array.isArray(branches) || Object.keys(s).some((k) => k !== "anyOf" && k !== "oneOf" && !ANNOTATIONS.has(k)))
    return undefined;
  const found = branches.map((b) => taggedMembers(graph, b, seen));
  if (found.every((f) => f === undefined)) return undefined;
  if (found.some((f) => f === undefined || f === "mixed")) return "mixed";
  const list = found as SlotMembers[];
  return { members: list.flatMap((f) => f.members), family: list.some((f) => f.family) };
}

/**
 * A slot in a document schema. Written the way the property is typed, so it does not change
 * when unrelated types are added: a named family -> the family file; a tagged member -> its
 * file; an inline union of members -> `oneOf` + `discriminator` over their files. Members
 * declared outside this project have no file here: the family file stands for them.
 */
export function documentSlot(links: DocumentLinks, family: string, found: SlotMembers): Schema {
  const types = [...new Set(found.members.map((m) => m.$type))].sort();
  if (found.family || !types.every((t) => links.members.has(t))) return { $ref: `../${familyFile(family)}` };
  const refs = types.map((t) => ({ $ref: `../${memberFile(family, t)}` }));
  return refs.length === 1 ? refs[0]! : { type: "object", oneOf: refs, discriminator: { propertyName: "$type" } };
}

function annotations(s: Schema): Schema {
  const out: Schema = {};
  for (const annotation of ANNOTATIONS) if (s[annotation] !== undefined) out[annotation] = s[annotation];
  return out;
}

/**
 * Walks one type's definition graph into its [runtime, document] schema pair, collecting on the
 * way its slots, the families they reference, the recursive plain types met, and errors.
 */
class TypeWalker {
  readonly errors: SchemaError[] = [];
  readonly warnings: SchemaError[] = [];
  readonly slots: FamilySlot[] = [];
  readonly families = new Set<string>();
  /** Plain types met again inside themselves: they become local definitions. */
  readonly recursive = new Set<string>();
  /** Where each slot sits and the definitions around it, to reject slots in recursive types. */
  readonly slotStacks: { path: string; stack: readonly string[] }[] = [];
  private readonly slotKeys = new Set<string>();
  /** Descriptions that belong to the JSON alias itself, not to a property using it. */
  private readonly jsonAnyDescriptions: Set<unknown>;
  private readonly isAnyRef = (ref: string): boolean => this.graph.jsonAny.has(refName(ref));

  constructor(
    readonly graph: SchemaGraph,
    private readonly links: DocumentLinks,
  ) {
    this.jsonAnyDescriptions = new Set([...graph.jsonAny].map((n) => graph.definitions.get(n)?.description));
  }

  /** Returns [runtime, document] for schema `s` found at `path`. */
  visit(s: Schema, path: readonly string[], stack: readonly string[]): [Schema, Schema] {
    if (isJsonAnyShape(s, this.isAnyRef)) return this.jsonAny(s);
    const members = taggedMembers(this.graph, s);
    const where = path.length ? path.join("/") : "(root)";
    if (members === "mixed") {
      this.errors.push({
        code: "mixed-slot",
        message: `${where} mixes tagged types with other types (or with null)`,
        hint: "make the property a family or tagged member only (optional `?` is fine), or wrap the alternatives in a plain object",
      });
      return [{}, {}];
    }
    if (members) return this.slot(s, members, path, stack);
    if (typeof s.$ref === "string") return this.reference(s, s.$ref, path, stack);
    return this.plain(s, path, stack);
  }

  /** Any JSON value: only the annotations remain. */
  private jsonAny(s: Schema): [Schema, Schema] {
    const ann = annotations(s);
    if (this.jsonAnyDescriptions.has(ann.description)) delete ann.description;
    return [{ ...ann }, { ...ann }];
  }

  /** A family position: recorded as a slot; the document schema points at the member files. */
  private slot(s: Schema, members: SlotMembers, path: readonly string[], stack: readonly string[]): [Schema, Schema] {
    const where = path.length ? path.join("/") : "(root)";
    const families = [...new Set(members.members.map((m) => m.family))].sort();
    if (families.length > 1) {
      this.errors.push({
        code: "mixed-slot",
        message: `${where} mixes tagged types of different families (${families.join(", ")})`,
        hint: "a position holds one family; declare the types in one family or split the property",
      });
      return [{}, {}];
    }
    const family = families[0]!;
    const key = `${path.join("/")}\u0000${family}`;
    if (!this.slotKeys.has(key)) {
      this.slotKeys.add(key);
      this.slots.push({ path: [...path], family });
    }
    this.slotStacks.push({ path: where, stack });
    const ann = annotations(s);
    // Runtime: no check here. The walker visits every slot item anyway and reports a non-object
    // or untagged one itself, so checking it here too would only slow validation down.
    this.families.add(family);
    return [{ ...ann }, { ...ann, ...documentSlot(this.links, family, members) }];
  }

  /** A named plain type: inlined, or a local `$ref` when met again inside itself. */
  private reference(s: Schema, ref: string, path: readonly string[], stack: readonly string[]): [Schema, Schema] {
    const where = path.length ? path.join("/") : "(root)";
    const name = refName(ref);
    const ann = annotations(s);
    if (this.graph.jsonAny.has(name)) {
      if (this.jsonAnyDescriptions.has(ann.description)) delete ann.description;
      return [{ ...ann }, { ...ann }];
    }
    const def = this.graph.definitions.get(name);
    if (!def) {
      this.errors.push({ code: "schema-failed", message: `${where} references missing definition ${name}` });
      return [{}, {}];
    }
    if (stack.includes(name)) {
      this.recursive.add(name);
      const local = { $ref: REF_PREFIX + safeDefinitionName(name) };
      return [
        { ...ann, ...local },
        { ...ann, ...local },
      ];
    }
    const [resolved, defs] = this.visit(def, path, [...stack, name]);
    return [
      { ...resolved, ...ann },
      { ...defs, ...ann },
    ];
  }

  /** Any other schema: its keywords copied, its subschemas walked. */
  private plain(s: Schema, path: readonly string[], stack: readonly string[]): [Schema, Schema] {
    const where = path.length ? path.join("/") : "(root)";
    // A format the runtime does not know is not asserted: said, never silent. The schema file keeps it
    // (an annotation there); the runtime schema drops it, so the validators compile without it.
    const unknownFormat = typeof s.format === "string" && !isKnownFormat(s.format);
    if (unknownFormat)
      this.warnings.push({
        code: "unknown-format",
        message: `${where} uses format ${JSON.stringify(s.format)}, which statebag does not know: stored values are not checked against it`,
        hint: "use a format statebag asserts (ajv-formats' set: date, time, date-time, duration, uri, uri-reference, uri-template, url, email, hostname, ipv4, ipv6, regex, uuid, json-pointer, relative-json-pointer, byte, int32, int64, ...) or a @pattern",
      });

    const runtime: Schema = {};
    const document: Schema = {};
    for (const [key, value] of Object.entries(s)) {
      if (SUBSCHEMA_MAPS.includes(key as (typeof SUBSCHEMA_MAPS)[number])) {
        const resolved: Schema = {};
        const defs: Schema = {};
        for (const [prop, sub] of Object.entries(value as Schema)) {
          const [rs, ds] =
            typeof sub === "object" && sub !== null
              ? this.visit(sub as Schema, [...path, key === "properties" ? prop : "*"], stack)
              : [sub, sub];
          setOwn(resolved, prop, rs); // a property named `__proto__` stays a property
          setOwn(defs, prop, ds);
        }
        runtime[key] = resolved;
        document[key] = defs;
      } else if (
        (key === "items" || key === "additionalProperties" || key === "additionalItems") &&
        typeof value === "object" &&
        value !== null
      ) {
        if (Array.isArray(value)) {
          const pairs = value.map((v, i) => this.visit(v as Schema, [...path, String(i)], stack));
          runtime[key] = pairs.map((p) => p[0]);
          document[key] = pairs.map((p) => p[1]);
        } else {
          [runtime[key], document[key]] = this.visit(value as Schema, [...path, "*"], stack);
        }
      } else if ((key === "anyOf" || key === "oneOf" || key === "allOf") && Array.isArray(value)) {
        // A plain union: each alternative is walked at the same path.
        const pairs = value.map((v) => this.visit(v as Schema, path, stack));
        runtime[key] = pairs.map((p) => p[0]);
        document[key] = pairs.map((p) => p[1]);
      } else if (key === "not" && typeof value === "object" && value !== null) {
        [runtime[key], document[key]] = this.visit(value as Schema, path, stack);
      } else if (key === "format" && unknownFormat) {
        document[key] = value;
      } else if (key !== "definitions") {
        runtime[key] = value;
        document[key] = value;
      }
    }
    return [runtime, document];
  }
}

/**
 * Recursive plain types as local definitions (walking one may meet more), or undefined when the
 * type has none. They must not hold slots: `recursiveSlotErrors` reports those.
 */
function localDefinitions(walker: TypeWalker): { runtime: Schema; document: Schema } | undefined {
  const definitions = { runtime: {} as Schema, document: {} as Schema };
  const done = new Set<string>();
  for (
    let pending = [...walker.recursive];
    pending.length > 0;
    pending = [...walker.recursive].filter((n) => !done.has(n))
  ) {
    for (const name of pending.sort()) {
      done.add(name);
      const [resolved, defs] = walker.visit(walker.graph.definitions.get(name)!, [`(${name})`], [name]);
      definitions.runtime[safeDefinitionName(name)] = resolved;
      definitions.document[safeDefinitionName(name)] = defs;
    }
  }
  return done.size > 0 ? definitions : undefined;
}

/** A slot inside a recursive type would have an infinite path: one error per such type. */
function recursiveSlotErrors(walker: TypeWalker): SchemaError[] {
  const errors: SchemaError[] = [];
  const reported = new Set<string>();
  for (const { path, stack } of walker.slotStacks) {
    const cycle = stack.find((n) => walker.recursive.has(n));
    if (cycle && !reported.has(cycle) && reported.add(cycle))
      errors.push({
        code: "recursive-slot",
        message: `recursive type ${cycle} holds a family slot at ${path}; slot paths must be finite`,
        hint: `make ${cycle} non-recursive (for example a flat array with parent ids), or store the nested values as JsonValue`,
      });
  }
  return errors;
}

function compareSlots(a: FamilySlot, b: FamilySlot): number {
  const pa = a.path.join("\u0000");
  const pb = b.path.join("\u0000");
  return pa < pb ? -1 : pa > pb ? 1 : a.family < b.family ? -1 : a.family > b.family ? 1 : 0;
}
