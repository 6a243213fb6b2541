/**
 * `diffSchemas(old, new)`: every difference between two draft-07 schemas that matters to values
 * already stored, classified by one question: does the new schema still accept every value the old
 * one accepted? If yes the change is `compatible`; if some stored value could now be rejected (or
 * mean something else) it is `breaking`.
 *
 * Pointers are into the VALUE shape (`/messages/*\/role`), not into the schema: `properties/x` is
 * `/x`, array items and map values (`additionalProperties`) are `/*`, tuple items are `/0`, `/1`...
 * Union branches keep their parent's pointer; the branch is named in the message.
 *
 * This module is the walk and the top-level decision (slots, refs, `false`, union or plain) with
 * the structural rules (arrays, objects, `patternProperties`, `allOf`, other keywords). What can be
 * reported is in `rule-catalogue.ts`, the scalar rules in `scalars.ts`, the union rules and
 * disjointness proofs in `unions.ts`.
 */
import { OPAQUE_TAGGED } from "../slots.js";
import { patternMinus, patternOverlap } from "./regex.js";
import {
  type Change,
  CONTAINERS,
  type Emit,
  HANDLED,
  KEYWORD_GROUP,
  type Site,
  childSite,
  describeSchema,
  emitAt,
  isAnnotationKeyword,
  showValue,
} from "./rule-catalogue.js";
import { KeywordRules, stripApplicators } from "./keywords.js";
import { normalise } from "./normalise.js";
import {
  covers,
  diffNumberFormats,
  diffNumbers,
  diffScalarValues,
  diffStrings,
  diffTypes,
  diffValues,
  effectiveTypes,
  typesIntersect,
  valueSet,
} from "./scalars.js";
import {
  EMPTY_SCHEMA,
  type ExternalRefResolver,
  type JsonSchema,
  type OpaqueRef,
  type SchemaNode,
  type SchemaObject,
  childPointer,
  isObject,
  isOpaque,
  jsonEqual,
  refIdentity,
  resolveNode,
  sameSchema,
} from "./schema.js";
import { type BranchDiffer, type Resolved, UnionDiffer, isUnion } from "./unions.js";

// The result vocabulary lives in the catalogue; callers of the entry get it from here.

export interface DiffOptions {
  /** Follows `$ref`s to other files; without it (or when it returns undefined) such refs are compared by target. */
  resolveExternalRef?: ExternalRefResolver;
  /** Location of the old / new documents (passed to `resolveExternalRef` as the base). */
  oldBase?: string;
  newBase?: string;
  /**
   * Family slots of the old / new schema (value paths holding nested polymorphic values). Default:
   * read from each schema's `x-statebag.slots`. A slot's content is validated by its members' own
   * schemas (with their own history), so a slot is compared by family only.
   */
  oldSlots?: readonly SlotInfo[];
  newSlots?: readonly SlotInfo[];
}

/** Same shape as the runtime's `FamilySlot`. */
export interface SlotInfo {
  path: readonly string[];
  family: string;
}

/** What the type's own validator sees at a family slot: the generator's own opaque schema, so the two cannot drift. */
export const OPAQUE_SLOT_SCHEMA: SchemaObject = OPAQUE_TAGGED as SchemaObject;

/** `x-statebag.slots` of a generated schema ([] when absent). */
export function slotsOf(schema: JsonSchema): SlotInfo[] {
  if (!isObject(schema) || !isObject(schema["x-statebag"])) return [];
  const slots = schema["x-statebag"].slots;
  if (!Array.isArray(slots)) return [];
  return slots.filter(
    (s): s is SlotInfo =>
      isObject(s) &&
      typeof s.family === "string" &&
      Array.isArray(s.path) &&
      s.path.every((seg: unknown) => typeof seg === "string"),
  );
}

function slotMap(slots: readonly SlotInfo[]): Map<string, string> {
  return new Map(slots.map((s) => [s.path.reduce<string>((ptr, seg) => childPointer(ptr, seg), ""), s.family]));
}

export function diffSchemas(oldSchema: JsonSchema, newSchema: JsonSchema, options: DiffOptions = {}): Change[] {
  const differ = new Differ(
    options.resolveExternalRef,
    slotMap(options.oldSlots ?? slotsOf(oldSchema)),
    slotMap(options.newSlots ?? slotsOf(newSchema)),
  );
  const out: Change[] = [];
  differ.diff(
    { schema: oldSchema, doc: { root: oldSchema, base: options.oldBase } },
    { schema: newSchema, doc: { root: newSchema, base: options.newBase } },
    { pointer: "", branch: "", out },
  );
  return dedupe(out);
}

export function hasBreaking(changes: readonly Change[]): boolean {
  return changes.some((c) => c.kind === "breaking");
}

function dedupe(changes: Change[]): Change[] {
  const seen = new Set<string>();
  return changes.filter((c) => {
    const key = `${c.pointer}\u0000${c.rule}\u0000${c.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// The differ

/**
 * One per `diffSchemas` run: walks both schemas together, value position by value position. The
 * `Site` (pointer, branch, change list) is passed down explicitly; union pairs go to `UnionDiffer`,
 * which hands each matched pair of branches back to `diff`.
 */
class Differ implements BranchDiffer {
  /** Pairs being compared right now (cycle guard: a pair met again is assumed unchanged). */
  private readonly inProgress = new Map<object, Set<object>>();
  private readonly unions = new UnionDiffer(this);
  private readonly keywords = new KeywordRules(this);

  constructor(
    readonly resolveExternal: ExternalRefResolver | undefined,
    private readonly oldSlots: Map<string, string> = new Map(),
    private readonly newSlots: Map<string, string> = new Map(),
  ) {}

  resolve(node: SchemaNode): Resolved {
    return resolveNode(node, this.resolveExternal);
  }

  same(a: SchemaNode, b: SchemaNode): boolean {
    return sameSchema(a, b, this.resolveExternal);
  }

  diff(oldNode: SchemaNode, newNode: SchemaNode, site: Site): void {
    const emit = emitAt(site);

    // Family slots: compared by family; a side without a slot here faces what a slot accepts.
    const oldSlot = this.oldSlots.get(site.pointer);
    const newSlot = this.newSlots.get(site.pointer);
    if (oldSlot !== undefined && newSlot !== undefined) {
      if (oldSlot !== newSlot) emit("change-slot-family", `family slot changed from ${oldSlot} to ${newSlot}`);
      return;
    }
    if (oldSlot !== undefined) oldNode = { schema: OPAQUE_SLOT_SCHEMA, doc: oldNode.doc };
    if (newSlot !== undefined) newNode = { schema: OPAQUE_SLOT_SCHEMA, doc: newNode.doc };

    const ro = this.resolve(oldNode);
    const rn = this.resolve(newNode);
    if (isOpaque(ro) !== isOpaque(rn) && sameExternalTarget(oldNode.schema, newNode.schema)) return; // one side unreadable

    if (isOpaque(ro) || isOpaque(rn)) {
      if (isOpaque(ro) && isOpaque(rn)) {
        if (ro.identity !== rn.identity) emit("ref-change", `reference changed from ${ro.ref} to ${rn.ref}`, "$ref");
      } else if (isOpaque(ro)) {
        emit("ref-change", `reference ${ro.ref} (not resolvable) replaced by an inline schema`, "$ref");
      } else if (isOpaque(rn)) {
        emit("ref-change", `schema replaced by a reference ${(rn as OpaqueRef).ref} that can not be resolved`, "$ref");
      }
      return;
    }

    if (ro.schema === false) return; // the old schema accepted nothing: nothing stored can break
    if (rn.schema === false) {
      emit("narrow-type", "no value is accepted any more (schema is false)", "type");
      return;
    }
    const os = ro.schema === true ? EMPTY_SCHEMA : ro.schema;
    const ns = rn.schema === true ? EMPTY_SCHEMA : rn.schema;
    if (os === ns && (os === EMPTY_SCHEMA || ro.doc.root === rn.doc.root)) return; // the very same schema
    // Compared in normal form: equivalent spellings alike, constraints one keyword implies for another written out.
    const oldSchema: SchemaNode = { schema: normalise(os), doc: ro.doc };
    const newSchema: SchemaNode = { schema: normalise(ns), doc: rn.doc };

    const pending = this.inProgress.get(os);
    if (pending?.has(ns)) return;
    if (pending) pending.add(ns);
    else this.inProgress.set(os, new Set([ns]));
    try {
      this.diffAnnotations(os, ns, emit);
      if (isUnion(oldSchema.schema as SchemaObject) || isUnion(newSchema.schema as SchemaObject))
        this.unions.diffUnion(oldSchema, newSchema, site);
      else this.diffPlain(oldSchema, newSchema, site, emit);
    } finally {
      this.inProgress.get(os)?.delete(ns);
    }
  }

  private diffAnnotations(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    const changed: string[] = [];
    for (const key of new Set([...Object.keys(os), ...Object.keys(ns)])) {
      if (isAnnotationKeyword(key) && !jsonEqual(os[key], ns[key])) changed.push(key);
    }
    if (changed.length > 0) emit("annotation-change", `annotation changed: ${changed.sort().join(", ")}`);
    if (!jsonEqual(os.discriminator, ns.discriminator)) {
      const op = isObject(os.discriminator) ? os.discriminator.propertyName : undefined;
      const np = isObject(ns.discriminator) ? ns.discriminator.propertyName : undefined;
      if (op !== undefined && np !== undefined && op !== np) {
        emit(
          "unknown-keyword-change",
          `discriminator changed from "${String(op)}" to "${String(np)}"`,
          "discriminator",
        );
      } else {
        emit("annotation-change", "annotation changed: discriminator");
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // A schema without anyOf/oneOf

  private diffPlain(o: SchemaNode, n: SchemaNode, site: Site, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldTypes = effectiveTypes(os);
    const relevant = (keyword: string): boolean => {
      const group = KEYWORD_GROUP[keyword];
      return !group || group.some((t) => covers(oldTypes, t) || (t === "number" && covers(oldTypes, "integer")));
    };

    diffTypes(os, ns, oldTypes, emit);
    diffValues(os, ns, emit);
    const oldValues = valueSet(os);
    if (oldValues && (relevant("minimum") || relevant("minLength"))) {
      // A finite set of old values: each is checked against the new scalar keywords (an enum implies its lengths and bounds).
      diffScalarValues(oldValues, os, ns, emit);
    } else {
      if (relevant("minimum")) {
        diffNumbers(os, ns, oldTypes, emit);
        diffNumberFormats(os, ns, oldTypes, emit);
      }
      if (relevant("minLength")) diffStrings(os, ns, emit);
    }
    if (relevant("minItems")) this.diffItems(o, n, site, emit);
    if (relevant("properties")) {
      this.diffPropertyCounts(os, ns, emit);
      this.diffObject(o, n, site, emit);
    }
    this.diffAllOf(o, n, site, emit);
    const oldRest = stripApplicators(os);
    if (relevant("contains")) this.keywords.diffContains(o, n, os, site, emit);
    if (relevant("dependencies")) this.keywords.diffDependencies(o, n, os, site, emit);
    if (relevant("propertyNames")) this.keywords.diffPropertyNames(o, n, os, site, emit);
    this.keywords.diffNot(o, n, oldRest, site, emit);
    this.keywords.diffConditional(o, n, os, site, emit);
    this.diffOtherKeywords(o, n, relevant, emit);
  }

  /**
   * Object sizes: the old object's own bounds are the stated ones tightened by what its keys imply
   * (at least as many keys as required names; a closed object without patterns at most its named ones).
   */
  private diffPropertyCounts(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    const required = new Set(
      Array.isArray(os.required) ? os.required.filter((r): r is string => typeof r === "string") : [],
    );
    const named = isObject(os.properties) ? Object.keys(os.properties).length : Infinity;
    const closed = os.additionalProperties === false && os.patternProperties === undefined;
    const impliedMin = required.size;
    const impliedMax = closed ? named : Infinity;
    const omin = typeof os.minProperties === "number" ? os.minProperties : 0;
    const nmin = typeof ns.minProperties === "number" ? ns.minProperties : 0;
    const omax = typeof os.maxProperties === "number" ? os.maxProperties : Infinity;
    const nmax = typeof ns.maxProperties === "number" ? ns.maxProperties : Infinity;
    const show = (v: number): string => (v === Infinity ? "none" : String(v));
    if (nmin > omin) {
      if (nmin <= Math.max(omin, impliedMin))
        emit(
          "implied-constraint",
          `minProperties raised from ${omin} to ${nmin}: every allowed object has ${impliedMin} required properties`,
          "minProperties",
        );
      else
        emit("tighten-constraint", `minProperties raised from ${omin} to ${nmin}`, "minProperties", {
          size: Math.max(omin, impliedMin, nmin - 1),
        });
    } else if (nmin < omin) emit("loosen-constraint", `minProperties lowered from ${omin} to ${nmin}`, "minProperties");
    if (nmax < omax) {
      if (nmax >= Math.min(omax, impliedMax))
        emit(
          "implied-constraint",
          `maxProperties lowered from ${show(omax)} to ${show(nmax)}: the closed object has at most ${impliedMax} properties`,
          "maxProperties",
        );
      else
        emit("tighten-constraint", `maxProperties lowered from ${show(omax)} to ${show(nmax)}`, "maxProperties", {
          size: nmax + 1,
        });
    } else if (nmax > omax)
      emit("loosen-constraint", `maxProperties raised from ${show(omax)} to ${show(nmax)}`, "maxProperties");
  }

  /**
   * Arrays: positions the old schema can hold (a closed tuple holds no more than its items, and
   * `maxItems` caps the rest) are compared one by one; counts and uniqueness implied by them are no change.
   */
  private diffItems(o: SchemaNode, n: SchemaNode, site: Site, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oi = itemsOf(os);
    const ni = itemsOf(ns);
    const oldMax = Math.min(
      typeof os.maxItems === "number" ? os.maxItems : Infinity,
      oi.rest === false ? oi.prefix.length : Infinity,
    );
    const oldMin = typeof os.minItems === "number" ? os.minItems : 0;
    // `contains` holds only for an array with an item: at least one, whatever minItems says.
    const impliedMin = os.contains !== undefined ? Math.max(oldMin, 1) : oldMin;
    const newMin = typeof ns.minItems === "number" ? ns.minItems : 0;
    const newMax = typeof ns.maxItems === "number" ? ns.maxItems : Infinity;
    const show = (v: number): string => (v === Infinity ? "none" : String(v));
    if (newMin > oldMin && newMin <= impliedMin)
      emit(
        "implied-constraint",
        `minItems raised from ${oldMin} to ${newMin}: contains already asks for an item`,
        "minItems",
      );
    else if (newMin > oldMin)
      emit("tighten-constraint", `minItems raised from ${oldMin} to ${newMin}`, "minItems", {
        itemsBeyond: Math.max(impliedMin, newMin - 1),
      });
    else if (newMin < oldMin) emit("loosen-constraint", `minItems lowered from ${oldMin} to ${newMin}`, "minItems");
    const oldMaxKw = typeof os.maxItems === "number" ? os.maxItems : Infinity;
    if (newMax < oldMax)
      emit("tighten-constraint", `maxItems lowered from ${show(oldMaxKw)} to ${show(newMax)}`, "maxItems", {
        itemsBeyond: newMax + 1,
      });
    else if (newMax > oldMaxKw)
      emit("loosen-constraint", `maxItems raised from ${show(oldMaxKw)} to ${show(newMax)}`, "maxItems");
    else if (newMax < oldMaxKw)
      emit(
        "implied-constraint",
        `maxItems lowered to ${newMax}: the old items already allow at most ${oldMax}`,
        "maxItems",
      );
    if (!os.uniqueItems && ns.uniqueItems === true) {
      if (oldMax <= 1)
        emit("implied-constraint", "items must now be unique: the old schema allows at most one item", "uniqueItems");
      else if (oldMax <= oi.prefix.length && this.distinctPositions(oi.prefix.slice(0, oldMax), o)) {
        emit(
          "implied-constraint",
          "items must now be unique: the closed tuple's positions never hold equal values",
          "uniqueItems",
        );
      } else emit("tighten-constraint", "items must now be unique", "uniqueItems", { uniqueItems: true });
    }
    if (os.uniqueItems === true && !ns.uniqueItems)
      emit("loosen-constraint", "items no longer need to be unique", "uniqueItems");

    const length = Math.min(Math.max(oi.prefix.length, ni.prefix.length), oldMax);
    for (let i = 0; i < length; i++) {
      const newItem = ni.prefix[i] ?? ni.rest;
      if (i >= ni.prefix.length && newItem === false) {
        emit(
          "tighten-constraint",
          `an item at position ${i} is no longer accepted (the tuple ends at ${ni.prefix.length}: additionalItems is false)`,
          "additionalItems",
          {
            itemsBeyond: i + 1,
          },
        );
        return;
      }
      this.diff({ schema: oi.prefix[i] ?? oi.rest, doc: o.doc }, { schema: newItem, doc: n.doc }, childSite(site, i));
    }
    if (oldMax <= length) return; // no position past the tuples can hold a value
    if (ni.rest === false && oi.rest !== false) {
      emit(
        "tighten-constraint",
        `items after position ${length - 1 < 0 ? 0 : length} are no longer accepted (additionalItems is false)`,
        "additionalItems",
        {
          itemsBeyond: length + 1,
        },
      );
      return;
    }
    this.diff({ schema: oi.rest, doc: o.doc }, { schema: ni.rest, doc: n.doc }, childSite(site, "*"));
  }

  /** True when no two tuple positions can hold equal values (disjoint consts / enums, or disjoint types). */
  private distinctPositions(positions: JsonSchema[], o: SchemaNode): boolean {
    const read = positions.map((p) => {
      const resolved = this.resolve({ schema: p, doc: o.doc });
      return isOpaque(resolved) || !isObject(resolved.schema) ? undefined : (resolved.schema as SchemaObject);
    });
    if (read.some((r) => r === undefined)) return false;
    const schemas = read as SchemaObject[];
    for (let i = 0; i < schemas.length; i++) {
      for (let j = i + 1; j < schemas.length; j++) {
        const first = schemas[i]!;
        const second = schemas[j]!;
        const va = valueSet(first);
        const vb = valueSet(second);
        if (va && vb && !va.some((v) => vb.some((w) => jsonEqual(v, w)))) continue;
        if (!typesIntersect(effectiveTypes(first), effectiveTypes(second))) continue;
        return false;
      }
    }
    return true;
  }

  private diffObject(o: SchemaNode, n: SchemaNode, site: Site, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldProps = isObject(os.properties) ? (os.properties as Record<string, JsonSchema>) : {};
    const newProps = isObject(ns.properties) ? (ns.properties as Record<string, JsonSchema>) : {};
    const oldReq = new Set(
      Array.isArray(os.required) ? os.required.filter((r): r is string => typeof r === "string") : [],
    );
    const newReq = new Set(
      Array.isArray(ns.required) ? ns.required.filter((r): r is string => typeof r === "string") : [],
    );
    const removed = Object.keys(oldProps).filter((p) => !(p in newProps));
    const added = Object.keys(newProps).filter((p) => !(p in oldProps));
    const oldAdditional = normalizeAdditional(os.additionalProperties);
    const newAdditional = normalizeAdditional(ns.additionalProperties);
    const at = (p: string): Emit => emitAt(childSite(site, p));

    const newPatterns = isObject(ns.patternProperties) ? (ns.patternProperties as Record<string, JsonSchema>) : {};
    for (const property of removed) {
      // A key the new schema still accepts through patternProperties or an additionalProperties schema is not removed:
      // its values must match what now applies to it.
      const covering = Object.keys(newPatterns).filter((q) => {
        try {
          return new RegExp(q, "u").test(property);
        } catch {
          return false;
        }
      });
      if (covering.length > 0 || (covering.length === 0 && isObject(newAdditional))) {
        const targets = covering.length > 0 ? covering.map((q) => newPatterns[q]) : [newAdditional as SchemaObject];
        for (const target of targets)
          this.diff(
            { schema: oldProps[property], doc: o.doc },
            { schema: target, doc: n.doc },
            childSite(site, property),
          );
        continue;
      }
      if (newAdditional === true) {
        // An open object: the name is undeclared now, and an undeclared name accepts any value.
        at(property)(
          "loosen-constraint",
          "property declaration removed: the open object (additionalProperties absent or true) accepts any value under this name",
          "properties",
        );
        continue;
      }
      const renamedTo = added.filter((q) =>
        this.same({ schema: oldProps[property], doc: o.doc }, { schema: newProps[q], doc: n.doc }),
      );
      const hint =
        renamedTo.length > 0
          ? ` (possibly renamed to ${renamedTo.map((q) => `"${q}"`).join(" or ")}: a rename is a removal for stored values)`
          : "";
      at(property)("remove-property", `property removed${hint}`, "properties", { present: true });
    }
    const oldPatterns = isObject(os.patternProperties) ? (os.patternProperties as Record<string, JsonSchema>) : {};
    // Old objects listed by enum / const: what they hold under a name is known exactly.
    const oldObjects = valueSet(os)?.filter(isObject);
    for (const property of added) {
      // What the old schema accepted under this undeclared name: the patterns it matches, else
      // additionalProperties (absent or true: any value). Values stored under it must still be accepted.
      let before = undeclaredValues(oldPatterns, oldAdditional, property);
      if (oldObjects !== undefined) {
        const held = oldObjects.filter((v) => Object.hasOwn(v, property)).map((v) => v[property]);
        before = held.length === 0 ? false : { enum: held };
      }
      const heldByAll = oldObjects?.every((v) => Object.hasOwn(v, property)) === true;
      if (heldByAll && newReq.has(property))
        at(property)(
          "implied-constraint",
          "required property added: every allowed object (enum / const) has it",
          "required",
        );
      else if (newReq.has(property) && !oldReq.has(property))
        at(property)("add-required", "required property added", "required", { absent: true });
      else if (before === false || oldReq.has(property))
        at(property)("add-optional-property", "optional property added", "properties");
      else
        at(property)(
          "add-optional-property",
          before === true
            ? "optional property added (the open object accepted any value under this name before: checked below)"
            : "optional property added (its values used to match the schema for undeclared names: checked below)",
          "properties",
        );
      if (before !== false)
        this.diff(
          { schema: before, doc: o.doc },
          { schema: newProps[property], doc: n.doc },
          childSite(site, property),
        );
    }
    for (const property of Object.keys(oldProps)) {
      if (!(property in newProps)) continue;
      this.diff(
        { schema: oldProps[property], doc: o.doc },
        { schema: newProps[property], doc: n.doc },
        childSite(site, property),
      );
    }
    for (const property of newReq) {
      if (!oldReq.has(property) && !added.includes(property))
        at(property)("make-required", "optional property made required", "required", { absent: true });
    }
    for (const property of oldReq) {
      if (!newReq.has(property) && !removed.includes(property))
        at(property)("make-optional", "required property made optional", "required");
    }

    if (isObject(os.patternProperties) || isObject(ns.patternProperties)) {
      this.diffPatternProperties(o, n, oldAdditional, newAdditional, site, emit);
      return;
    }
    // additionalProperties: `true` (absent) / `false` / a schema (an index signature).
    const extraKey = freshKey(oldProps, newProps);
    if (oldAdditional === false) {
      if (newAdditional !== false) {
        emit(
          "open-additional-properties",
          "additionalProperties opened: extra properties are accepted now",
          "additionalProperties",
        );
      }
    } else if (oldAdditional === true) {
      if (newAdditional === false) {
        emit(
          "close-additional-properties",
          "additionalProperties closed: extra properties are rejected now",
          "additionalProperties",
          { extraKey },
        );
      } else if (newAdditional !== true) {
        emit(
          "close-additional-properties",
          "additionalProperties closed to a schema: extra properties must match it now",
          "additionalProperties",
          { extraKey },
        );
      }
    } else if (newAdditional === false) {
      emit(
        "close-additional-properties",
        "additionalProperties closed: extra properties are rejected now",
        "additionalProperties",
        { extraKey },
      );
    } else if (newAdditional === true) {
      emit(
        "open-additional-properties",
        "additionalProperties opened: extra properties may hold any value now",
        "additionalProperties",
      );
    } else {
      this.diff({ schema: oldAdditional, doc: o.doc }, { schema: newAdditional, doc: n.doc }, childSite(site, "*"));
    }
  }

  /**
   * `patternProperties` read as key languages: a stored key lands in a named property, in every
   * pattern it matches, or in `additionalProperties`. For each old group of keys, the new groups
   * the same keys fall into (found by automata intersection) must accept its values.
   */
  private diffPatternProperties(
    o: SchemaNode,
    n: SchemaNode,
    oldAdditional: boolean | SchemaObject,
    newAdditional: boolean | SchemaObject,
    site: Site,
    emit: Emit,
  ): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldPP = isObject(os.patternProperties) ? (os.patternProperties as Record<string, JsonSchema>) : {};
    const newPP = isObject(ns.patternProperties) ? (ns.patternProperties as Record<string, JsonSchema>) : {};
    const oldNamed = isObject(os.properties) ? (os.properties as Record<string, JsonSchema>) : {};
    const newNamed = isObject(ns.properties) ? (ns.properties as Record<string, JsonSchema>) : {};
    const oldPatterns = Object.keys(oldPP);
    const newPatterns = Object.keys(newPP);
    const undecided = (outcome: { reason: string; budget?: "automaton-size" }): void =>
      emit("cannot-decide", `patternProperties: ${outcome.reason}`, "patternProperties", undefined, outcome.budget);
    const compare = (a: JsonSchema, b: JsonSchema, key: string): void =>
      this.diff({ schema: a, doc: o.doc }, { schema: b, doc: n.doc }, childSite(site, key));
    const matches = (pattern: string, key: string): boolean => {
      try {
        return new RegExp(pattern, "u").test(key);
      } catch {
        return false;
      }
    };

    // Named properties kept: a new pattern matching the name applies to its values too.
    for (const property of Object.keys(oldNamed)) {
      if (!(property in newNamed)) continue;
      for (const newPattern of newPatterns)
        if (matches(newPattern, property) && !oldPatterns.some((op) => op === newPattern && matches(op, property)))
          compare(oldNamed[property], newPP[newPattern], property);
    }
    // Keys of each old pattern: the new patterns they match, else the new additionalProperties.
    for (const oldPattern of oldPatterns) {
      for (const newPattern of newPatterns) {
        const overlap = patternOverlap(oldPattern, newPattern);
        if ("undecided" in overlap) undecided({ reason: overlap.undecided });
        else if (overlap.overlap) compare(oldPP[oldPattern], newPP[newPattern], overlap.witness);
      }
      // A key the new schema names is judged by that property; any other key is left to additionalProperties.
      const leftOver = patternMinus(oldPattern, [...newPatterns, ...Object.keys(newNamed).map(exactKeyPattern)]);
      if (leftOver.kind === "undecided") undecided(leftOver);
      else if (leftOver.kind === "excluded") {
        const key = leftOver.witness;
        if (newAdditional === false) {
          emit(
            "close-additional-properties",
            `keys matching ${showValue(oldPattern)} (like ${showValue(key)}) are no longer accepted`,
            "patternProperties",
            { extraKey: key },
          );
        } else if (newAdditional !== true) compare(oldPP[oldPattern], newAdditional, key);
      }
    }
    // Keys the old schema left to additionalProperties.
    if (oldAdditional === false) {
      if (newAdditional !== false)
        emit(
          "open-additional-properties",
          "additionalProperties opened: extra properties are accepted now",
          "additionalProperties",
        );
      return;
    }
    for (const newPattern of newPatterns) {
      const fresh = patternMinus(newPattern, [...oldPatterns, ...Object.keys(oldNamed).map(exactKeyPattern)]);
      if (fresh.kind === "undecided") undecided(fresh);
      else if (fresh.kind === "excluded") compare(oldAdditional, newPP[newPattern], fresh.witness);
    }
    const rest = patternMinus("", [...oldPatterns, ...newPatterns]);
    if (rest.kind === "undecided") undecided(rest);
    else if (rest.kind === "excluded") {
      // A key no pattern matches and neither schema names (the automaton's shortest may be a named one).
      const key = ["extra", "key", "extra1", "x-extra", "_extra", "Extra", rest.witness].find(
        (k) =>
          !Object.hasOwn(oldNamed, k) &&
          !Object.hasOwn(newNamed, k) &&
          ![...oldPatterns, ...newPatterns].some((q) => matches(q, k)),
      );
      if (newAdditional === false) {
        emit(
          "close-additional-properties",
          "additionalProperties closed: extra properties are rejected now",
          "additionalProperties",
          key !== undefined ? { extraKey: key } : undefined,
        );
      } else if (newAdditional !== true) {
        if (oldAdditional === true) {
          emit(
            "close-additional-properties",
            "additionalProperties closed to a schema: extra properties must match it now",
            "additionalProperties",
            key !== undefined ? { extraKey: key } : undefined,
          );
        } else compare(oldAdditional, newAdditional, "*");
      } else if (oldAdditional !== true) {
        emit(
          "open-additional-properties",
          "additionalProperties opened: extra properties may hold any value now",
          "additionalProperties",
        );
      }
    }
  }

  private diffAllOf(o: SchemaNode, n: SchemaNode, site: Site, emit: Emit): void {
    const oldAll = Array.isArray((o.schema as SchemaObject).allOf)
      ? ((o.schema as SchemaObject).allOf as JsonSchema[])
      : [];
    const newAll = Array.isArray((n.schema as SchemaObject).allOf)
      ? ((n.schema as SchemaObject).allOf as JsonSchema[])
      : [];
    if (oldAll.length === 0 && newAll.length === 0) return;
    const unmatchedNew = [...newAll];
    const unmatchedOld: JsonSchema[] = [];
    for (const oldMember of oldAll) {
      const matched = unmatchedNew.findIndex((b) =>
        this.same({ schema: oldMember, doc: o.doc }, { schema: b, doc: n.doc }),
      );
      if (matched >= 0) unmatchedNew.splice(matched, 1);
      else unmatchedOld.push(oldMember);
    }
    if (unmatchedOld.length > 0 && unmatchedOld.length === unmatchedNew.length) {
      unmatchedOld.forEach((a, i) =>
        this.diff({ schema: a, doc: o.doc }, { schema: unmatchedNew[i], doc: n.doc }, site),
      );
      return;
    }
    for (const member of unmatchedNew)
      emit("tighten-constraint", `allOf member added: ${describeSchema(member)}`, "allOf");
    for (const member of unmatchedOld)
      emit("loosen-constraint", `allOf member removed: ${describeSchema(member)}`, "allOf");
  }

  private diffOtherKeywords(o: SchemaNode, n: SchemaNode, relevant: (k: string) => boolean, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    for (const key of new Set([...Object.keys(os), ...Object.keys(ns)])) {
      if (HANDLED.has(key) || CONTAINERS.has(key) || isAnnotationKeyword(key) || !relevant(key)) continue;
      const same = this.same({ schema: { [key]: os[key] }, doc: o.doc }, { schema: { [key]: ns[key] }, doc: n.doc });
      if (same) continue;
      this.keywords.diffUnknown(key, os, ns, emit);
    }
  }
}

function sameExternalTarget(a: JsonSchema, b: JsonSchema): boolean {
  return (
    isObject(a) &&
    isObject(b) &&
    typeof a.$ref === "string" &&
    typeof b.$ref === "string" &&
    !a.$ref.startsWith("#") &&
    refIdentity(a.$ref) === refIdentity(b.$ref)
  );
}

/**
 * The schema an object's undeclared name `key` was validated by: the patterns it matches (the first:
 * each one holds for every stored value, so one is an over-approximation a comparison may use, and a
 * break found with it is confirmed by a witness), else `additionalProperties` (`true` when absent or
 * true: any value; `false`: the object could not hold the name).
 */
function undeclaredValues(
  patterns: Record<string, JsonSchema>,
  additional: boolean | SchemaObject,
  key: string,
): JsonSchema | false {
  const matching = Object.keys(patterns).filter((q) => {
    try {
      return new RegExp(q, "u").test(key);
    } catch {
      return false;
    }
  });
  if (matching.length > 0) return patterns[matching[0]!]!;
  return additional;
}

/** A pattern matching exactly one property name (a `u`-mode regex: only syntax characters escaped). */
function exactKeyPattern(name: string): string {
  return `^${name.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")}$`;
}

/** A property name neither schema declares, for an "extra property" witness. */
function freshKey(...named: Record<string, unknown>[]): string {
  for (let i = 0; ; i++) {
    const key = i === 0 ? "extra" : `extra${i}`;
    if (!named.some((n) => key in n)) return key;
  }
}

function normalizeAdditional(value: unknown): boolean | SchemaObject {
  if (value === undefined || value === true) return true;
  if (value === false) return false;
  if (isObject(value)) return Object.keys(value).length === 0 ? true : value;
  return true;
}

function itemsOf(s: SchemaObject): { prefix: JsonSchema[]; rest: JsonSchema } {
  if (Array.isArray(s.items)) {
    const rest = s.additionalItems;
    return {
      prefix: s.items as JsonSchema[],
      rest: typeof rest === "boolean" || isObject(rest) ? (rest as JsonSchema) : true,
    };
  }
  if (typeof s.items === "boolean" || isObject(s.items)) return { prefix: [], rest: s.items as JsonSchema };
  return { prefix: [], rest: true };
}
