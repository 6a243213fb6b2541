/**
 * Union rules: `anyOf` / `oneOf` (and a type array facing a union) compared branch by branch, and
 * the disjointness proofs `oneOf` needs (a value matching two branches of a oneOf is rejected).
 * Branches are matched by `$type` tag, then by equality, then by the fewest breaking changes; the
 * comparison of a matched pair goes back to the differ, which this module reaches only through
 * `BranchDiffer` (so the import runs one way).
 */
import { type Change, CONTAINERS, type Site, describeSchema, emitAt, isAnnotationKeyword } from "./rule-catalogue.js";
import { conjoin } from "./normalise.js";
import { effectiveTypes, typesIntersect, valueSet } from "./scalars.js";
import { Instances } from "./witness.js";
import {
  EMPTY_SCHEMA,
  type ExternalRefResolver,
  type JsonSchema,
  type OpaqueRef,
  type SchemaNode,
  type SchemaObject,
  isObject,
  isOpaque,
  jsonEqual,
  typeTagOf,
} from "./schema.js";

/** A schema node after `$ref`s are followed, or the reference that could not be. */
export type Resolved = SchemaNode | OpaqueRef;

/** What union comparison needs from the differ: reference resolution and the comparison of one matched pair. */
export interface BranchDiffer {
  readonly resolveExternal: ExternalRefResolver | undefined;
  resolve(node: SchemaNode): Resolved;
  same(a: SchemaNode, b: SchemaNode): boolean;
  diff(oldNode: SchemaNode, newNode: SchemaNode, site: Site): void;
}

/** One per `diffSchemas` run: the merged / split / stripped branch schemas are cached by identity for the run. */
export class UnionDiffer {
  private readonly mergedCache = new WeakMap<object, WeakMap<object, SchemaObject>>();
  private readonly splitCache = new WeakMap<object, SchemaObject[]>();
  private readonly strippedCache = new WeakMap<object, SchemaObject>();

  constructor(private readonly differ: BranchDiffer) {}

  diffUnion(o: SchemaNode, n: SchemaNode, site: Site): void {
    const emit = emitAt(site);
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    const oldBranches = this.branchesOf(o, 0);
    const newBranches = this.branchesOf(n, 0);
    const matched = new Set<number>();

    for (const ob of oldBranches) {
      if (isOpaque(ob)) {
        const match = newBranches.findIndex((nb) => isOpaque(nb) && nb.identity === ob.identity);
        if (match >= 0) matched.add(match);
        else emit("remove-union-branch", `union branch ${ob.ref} removed`, unionKeyword(os));
        continue;
      }
      const tag = typeTagOf(ob, this.differ.resolveExternal);
      if (tag !== undefined) {
        const match = newBranches.findIndex(
          (nb) => !isOpaque(nb) && typeTagOf(nb, this.differ.resolveExternal) === tag,
        );
        if (match >= 0) {
          matched.add(match);
          this.differ.diff(ob, newBranches[match] as SchemaNode, {
            ...site,
            branch: joinBranch(site.branch, `$type "${tag}"`),
          });
        } else {
          emit("remove-union-branch", `union branch $type "${tag}" removed`, unionKeyword(os));
        }
        continue;
      }
      const candidates = newBranches
        .map((nb, i) => ({ nb, i }))
        .filter(
          (c): c is { nb: SchemaNode; i: number } =>
            !isOpaque(c.nb) && typeTagOf(c.nb, this.differ.resolveExternal) === undefined,
        );
      const exact = candidates.find((c) => this.differ.same(ob, c.nb));
      if (exact) {
        matched.add(exact.i);
        continue;
      }
      // A branch pinned by a required const property (a discriminator by another name than $type)
      // is matched with the new branches pinned to the same value, when there are any.
      const pins = pinnedValues(ob.schema);
      const samePin = candidates.filter((c) => {
        const theirs = pinnedValues(c.nb.schema);
        return [...pins].some(([k, v]) => theirs.has(k) && jsonEqual(theirs.get(k), v));
      });
      let best: { i: number; changes: Change[]; breaking: number } | undefined;
      for (const candidate of samePin.length > 0 ? samePin : candidates) {
        const trial: Change[] = [];
        this.differ.diff(ob, candidate.nb, { ...site, out: trial });
        const breaking = trial.filter((t) => t.kind === "breaking").length;
        if (!best || breaking < best.breaking || (breaking === best.breaking && trial.length < best.changes.length)) {
          best = { i: candidate.i, changes: trial, breaking };
        }
      }
      const obTypes = effectiveTypes(ob.schema as SchemaObject);
      const bestNode = best ? (newBranches[best.i] as SchemaNode) : undefined;
      if (best && (best.breaking === 0 || typesIntersect(obTypes, effectiveTypes(bestNode!.schema as SchemaObject)))) {
        matched.add(best.i);
        site.out.push(...best.changes);
      } else {
        emit("remove-union-branch", `union branch ${describeSchema(ob.schema)} removed`, unionKeyword(os));
      }
    }

    newBranches.forEach((nb, i) => {
      if (matched.has(i)) return;
      const what = isOpaque(nb)
        ? nb.ref
        : typeTagOf(nb, this.differ.resolveExternal) !== undefined
          ? `$type "${typeTagOf(nb, this.differ.resolveExternal)}"`
          : describeSchema(nb.schema);
      emit("add-union-branch", `union branch ${what} added`, unionKeyword(ns));
    });

    // oneOf demands exactly one matching branch: a value matching two is rejected. Pairs of
    // branches that were both in the old oneOf never matched the same old value.
    const oldExclusive = Array.isArray(os.oneOf) && !Array.isArray(os.anyOf);
    const newExclusive = Array.isArray(ns.oneOf) && !Array.isArray(ns.anyOf);
    if (newExclusive) {
      // The oneOf's own branches (a nested anyOf or type array inside one branch is not exclusive).
      const exclusiveNew = this.mergedBranches(n, "oneOf");
      const exclusiveOld = oldExclusive ? this.mergedBranches(o, "oneOf") : [];
      const wasExclusive = (nb: Resolved): boolean =>
        exclusiveOld.some((ob) =>
          isOpaque(ob) || isOpaque(nb)
            ? isOpaque(ob) && isOpaque(nb) && ob.identity === nb.identity
            : this.differ.same(ob, nb),
        );
      const pair = this.overlappingPair(exclusiveNew, wasExclusive);
      if (pair) {
        const [firstName, secondName] = pair.map((i) => branchName(exclusiveNew[i], this.differ.resolveExternal));
        emit(
          "tighten-constraint",
          oldExclusive
            ? `oneOf branches ${firstName} and ${secondName} can both match a value: such a value is rejected now (oneOf allows exactly one match)`
            : "union became oneOf and its branches can overlap: a value matching two is rejected now",
          "oneOf",
          overlapCandidates(exclusiveNew[pair[0]]!, exclusiveNew[pair[1]]!),
        );
      }
    } else if (oldExclusive && isUnion(ns)) {
      emit("loosen-constraint", "oneOf became anyOf", "anyOf");
    }
  }

  /** The first pair of branches no rule proves disjoint (skipping pairs where both were already exclusive). */
  private overlappingPair(branches: Resolved[], wasExclusive: (b: Resolved) => boolean): [number, number] | undefined {
    const old = branches.map(wasExclusive);
    for (let i = 0; i < branches.length; i++) {
      for (let j = i + 1; j < branches.length; j++) {
        if (old[i] && old[j]) continue;
        if (!this.provablyDisjoint(branches[i], branches[j])) return [i, j];
      }
    }
    return undefined;
  }

  /** The alternatives a schema stands for: union branches (with the parent's other keywords merged in), or itself. */
  private branchesOf(node: SchemaNode, depth: number): Resolved[] {
    const schema = node.schema as SchemaObject;
    const keyword = Array.isArray(schema.anyOf) ? "anyOf" : Array.isArray(schema.oneOf) ? "oneOf" : undefined;
    if (!keyword || depth > 8) return this.splitTypes({ schema: this.stripped(schema), doc: node.doc });
    return this.mergedBranches(node, keyword).flatMap((b) => (isOpaque(b) ? [b] : this.branchesOf(b, depth + 1)));
  }

  /**
   * The branches under `keyword`, each resolved and with the parent's other keywords merged in (a
   * union's siblings apply to every branch); branches that accept nothing are dropped.
   */
  private mergedBranches(node: SchemaNode, keyword: "anyOf" | "oneOf"): Resolved[] {
    const schema = node.schema as SchemaObject;
    const base: SchemaObject = {};
    for (const [key, child] of Object.entries(schema)) {
      if (key === keyword || key === "discriminator" || isAnnotationKeyword(key) || CONTAINERS.has(key)) continue;
      base[key] = child;
    }
    const result: Resolved[] = [];
    for (const raw of schema[keyword] as JsonSchema[]) {
      const rb = this.differ.resolve({ schema: raw, doc: node.doc });
      if (isOpaque(rb)) {
        result.push(rb);
        continue;
      }
      if (rb.schema === false) continue;
      const bs = rb.schema === true ? EMPTY_SCHEMA : rb.schema;
      result.push({ schema: Object.keys(base).length === 0 ? bs : this.merge(schema, bs, base), doc: rb.doc });
    }
    return result;
  }

  private merge(parent: SchemaObject, branch: SchemaObject, base: SchemaObject): SchemaObject {
    let byBranch = this.mergedCache.get(parent);
    if (!byBranch) this.mergedCache.set(parent, (byBranch = new WeakMap()));
    let merged = byBranch.get(branch);
    if (!merged) byBranch.set(branch, (merged = { ...base, ...branch }));
    return merged;
  }

  private stripped(s: SchemaObject): SchemaObject {
    if (!Object.keys(s).some(isAnnotationKeyword)) return s;
    let result = this.strippedCache.get(s);
    if (!result) {
      result = Object.fromEntries(Object.entries(s).filter(([k]) => !isAnnotationKeyword(k)));
      this.strippedCache.set(s, result);
    }
    return result;
  }

  /** `{type: [a, b], ...}` stands for two alternatives when compared with a union. */
  private splitTypes(node: SchemaNode): SchemaNode[] {
    const schema = node.schema as SchemaObject;
    if (!Array.isArray(schema.type) || schema.type.length < 2) return [node];
    let parts = this.splitCache.get(schema);
    if (!parts) {
      parts = (schema.type as unknown[]).map((t) => ({ ...schema, type: t }));
      this.splitCache.set(schema, parts);
    }
    return parts.map((p) => ({ schema: p, doc: node.doc }));
  }

  /**
   * True when no value can match both branches: distinct `$type`s (the discriminator), disjoint
   * consts / enums or types, a required property pinned to different consts, or a property one
   * requires and the other (closed) does not allow.
   */
  private provablyDisjoint(x: Resolved, y: Resolved): boolean {
    if (isOpaque(x) || isOpaque(y)) return false;
    // A branch that is itself a union (or a type array): every alternative must be disjoint.
    const xs = this.branchesOf(x, 0);
    const ys = this.branchesOf(y, 0);
    if (xs.length === 0 || ys.length === 0) return true; // a branch that accepts nothing
    return xs.every((a) => ys.every((b) => this.disjointPlain(a, b)));
  }

  private disjointPlain(x: Resolved, y: Resolved): boolean {
    if (isOpaque(x) || isOpaque(y)) return false;
    const firstSchema = x.schema as SchemaObject;
    const secondSchema = y.schema as SchemaObject;
    const ta = typeTagOf(x, this.differ.resolveExternal);
    const tb = typeTagOf(y, this.differ.resolveExternal);
    if (ta !== undefined && tb !== undefined && ta !== tb) return true;
    const va = valueSet(firstSchema);
    const vb = valueSet(secondSchema);
    if (va && vb && !va.some((v) => vb.some((w) => jsonEqual(v, w)))) return true;
    if (!typesIntersect(effectiveTypes(firstSchema), effectiveTypes(secondSchema))) return true;
    const objectOnly = (s: SchemaObject): boolean => {
      const types = effectiveTypes(s);
      return types !== null && types.size === 1 && types.has("object");
    };
    if (!objectOnly(firstSchema) && !objectOnly(secondSchema)) return false;
    const pinned = (node: SchemaNode, prop: string): unknown[] | null => {
      const props = (node.schema as SchemaObject).properties;
      if (!isObject(props) || props[prop] === undefined) return null;
      const resolved = this.differ.resolve({ schema: props[prop] as JsonSchema, doc: node.doc });
      return isOpaque(resolved) || !isObject(resolved.schema) ? null : valueSet(resolved.schema);
    };
    const requiredOf = (s: SchemaObject): string[] =>
      Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : [];
    const forbids = (s: SchemaObject, prop: string): boolean =>
      objectOnly(s) &&
      s.additionalProperties === false &&
      !(isObject(s.properties) && prop in s.properties) &&
      !isObject(s.patternProperties);
    for (const prop of requiredOf(firstSchema)) {
      if (requiredOf(secondSchema).includes(prop)) {
        const pa = pinned(x, prop);
        const pb = pinned(y, prop);
        if (pa && pb && !pa.some((v) => pb.some((w) => jsonEqual(v, w)))) return true;
      }
      if (objectOnly(firstSchema) && forbids(secondSchema, prop)) return true;
    }
    for (const prop of requiredOf(secondSchema))
      if (objectOnly(secondSchema) && forbids(firstSchema, prop)) return true;
    return false;
  }
}

export function isUnion(s: SchemaObject): boolean {
  return Array.isArray(s.anyOf) || Array.isArray(s.oneOf);
}

function unionKeyword(s: SchemaObject): string {
  return Array.isArray(s.oneOf) && !Array.isArray(s.anyOf) ? "oneOf" : "anyOf";
}

function branchName(b: Resolved, resolveExternal: ExternalRefResolver | undefined): string {
  if (isOpaque(b)) return b.ref;
  const tag = typeTagOf(b, resolveExternal);
  return tag !== undefined ? `$type "${tag}"` : describeSchema(b.schema);
}

function joinBranch(outer: string, inner: string): string {
  return outer ? `${outer} > ${inner}` : inner;
}

/**
 * Values that may match both branches, for the witness search: each branch's small instances, their
 * objects merged pairwise (an open object of one branch holding the other's properties), and
 * instances of the two merged when they merge exactly. The validators decide which match both.
 */
function overlapCandidates(a: Resolved, b: Resolved): { candidates: unknown[] } | { overlapping: true } {
  if (isOpaque(a) || isOpaque(b)) return { overlapping: true };
  const inst = new Instances(a.doc.root as JsonSchema);
  const va = inst.variants(a.schema).slice(0, 6);
  const vb = new Instances(b.doc.root as JsonSchema).variants(b.schema).slice(0, 6);
  const out: unknown[] = [];
  const isPlainObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  for (const left of va)
    for (const right of vb)
      if (isPlainObject(left) && isPlainObject(right)) out.push({ ...left, ...right }, { ...right, ...left });
  if (isObject(a.schema) && isObject(b.schema)) {
    const both = conjoin(a.schema as SchemaObject, b.schema as SchemaObject);
    if (both) out.push(...inst.variants(both).slice(0, 6));
  }
  out.push(...va, ...vb);
  return out.length > 0 ? { candidates: out } : { overlapping: true };
}

/** A plain object branch's required properties pinned to one value (`const`, or a one-value `enum`). */
function pinnedValues(schema: JsonSchema): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!isObject(schema) || !isObject(schema.properties) || !Array.isArray(schema.required)) return out;
  for (const key of schema.required) {
    if (typeof key !== "string" || !Object.hasOwn(schema.properties, key)) continue;
    const property = (schema.properties as Record<string, unknown>)[key];
    if (!isObject(property)) continue;
    const values = valueSet(property as SchemaObject);
    if (values?.length === 1) out.set(key, values[0]);
  }
  return out;
}
