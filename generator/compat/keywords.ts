/**
 * Rules for the applicator keywords that used to be compared as text: `not`, `if`/`then`/`else`,
 * `dependencies` (property lists and schemas), `propertyNames` and `contains`, and the verdict for
 * keywords the differ does not know. Each is decided by meaning, reusing the differ for the
 * sub-questions ("does every value of this schema satisfy that one?"), asked on trial change lists:
 * a trial with only compatible changes is a proof of inclusion; anything else is not.
 *
 * Keywords draft-07 ajv (the validators' dialect) ignores, like `dependentRequired`,
 * `dependentSchemas`, `minContains`, `maxContains`, constrain no stored value: any change to them is
 * an annotation change.
 */
import { Ajv } from "ajv";
import { FORMAT_EXAMPLES, NEAR_MISSES } from "./formats.js";
import { conjoin } from "./normalise.js";
import { type StringConstraints, stringIncludes } from "./regex.js";
import { type Change, type Emit, type Site, childSite, describeSchema, emitAt, showValue } from "./rule-catalogue.js";
import { covers, effectiveTypes, satisfiesScalar, typesIntersect, valueSet } from "./scalars.js";
import {
  EMPTY_SCHEMA,
  type JsonSchema,
  type SchemaNode,
  type SchemaObject,
  isObject,
  isOpaque,
  jsonEqual,
  jsonTypeOf,
} from "./schema.js";
import { setOwn } from "../runtime.js";
import type { BranchDiffer } from "./unions.js";
import { Instances } from "./witness.js";

type Inclusion = "yes" | "no" | "unknown";

let keywordAjv: Ajv | undefined;
/** Whether the validators (draft-07 ajv) give `keyword` a meaning; an unknown keyword is ignored by them. */
export function validatorsKnow(keyword: string): boolean {
  keywordAjv ??= new Ajv({ strict: false, logger: false, validateSchema: false });
  return keywordAjv.getKeyword(keyword) !== false;
}

export class KeywordRules {
  constructor(private readonly differ: BranchDiffer) {}

  /** The changes of comparing a with b on a trial list, and what they prove. */
  private trial(a: SchemaNode, b: SchemaNode, site: Site, branch = ""): { changes: Change[]; included: Inclusion } {
    const changes: Change[] = [];
    this.differ.diff(a, b, {
      ...site,
      branch: branch ? (site.branch ? `${site.branch} > ${branch}` : branch) : site.branch,
      out: changes,
    });
    const included: Inclusion = changes.some((c) => c.kind === "undecided")
      ? "unknown"
      : changes.some((c) => c.kind === "breaking")
        ? "no"
        : "yes";
    return { changes, included };
  }

  private node(schema: unknown, doc: SchemaNode["doc"]): SchemaNode {
    return { schema: schema === undefined ? true : (schema as JsonSchema), doc };
  }

  /** The schema as a plain object (refs followed), or undefined when it can not be read here. */
  private plain(schema: unknown, doc: SchemaNode["doc"]): SchemaObject | undefined {
    const resolved = this.differ.resolve(this.node(schema, doc));
    if (isOpaque(resolved)) return undefined;
    if (resolved.schema === true) return EMPTY_SCHEMA;
    if (resolved.schema === false) return { not: {} };
    return resolved.schema;
  }

  // -------------------------------------------------------------------------------------------
  // not

  /**
   * `not: A` -> `not: B`: the new schema rejects B; the old one already rejected A. Compatible when
   * B ⊆ A (nothing newly excluded) or no old value can match B; breaking with a value of B \ A the
   * old schema accepts.
   */
  diffNot(o: SchemaNode, n: SchemaNode, oldRest: SchemaObject, site: Site, emit: Emit): void {
    const oldNot = (o.schema as SchemaObject).not;
    const newNot = (n.schema as SchemaObject).not;
    if (newNot === undefined) {
      if (oldNot !== undefined) emit("loosen-constraint", `not ${describeSchema(oldNot)} removed`, "not");
      return;
    }
    if (oldNot !== undefined && this.differ.same(this.node(oldNot, o.doc), this.node(newNot, n.doc))) return;
    const what =
      oldNot === undefined
        ? `not ${describeSchema(newNot)} added`
        : `not changed from ${describeSchema(oldNot)} to ${describeSchema(newNot)}`;
    const bs = this.plain(newNot, n.doc);
    if (bs && !typesIntersect(effectiveTypes(oldRest), effectiveTypes(bs))) {
      emit("implied-constraint", `${what}: no allowed value has a type it excludes`, "not");
      return;
    }
    const values = bs ? valueSet(bs) : null;
    if (values) {
      const excluded = values.filter(
        (v) => couldAccept(oldRest, v) && !(oldNot !== undefined && this.matchesValue(oldNot, v, o.doc)),
      );
      if (excluded.length === 0)
        emit("implied-constraint", `${what}: no allowed value is among those it excludes`, "not");
      else
        emit("tighten-constraint", `${what}: the allowed value ${showValue(excluded[0])} is rejected now`, "not", {
          value: excluded[0],
        });
      return;
    }
    if (
      oldNot !== undefined &&
      this.trial(this.node(newNot, n.doc), this.node(oldNot, o.doc), site).included === "yes"
    ) {
      emit("loosen-constraint", `${what}: it excludes no value the old one did not`, "not");
      return;
    }
    if (bs && this.trial({ schema: oldRest, doc: o.doc }, { schema: bs, doc: n.doc }, site).included === "yes") {
      emit("tighten-constraint", `${what}: every allowed value matches it, none is accepted now`, "not");
      return;
    }
    if (!bs) {
      emit("cannot-decide", `${what}: whether an allowed value matches it was not decided`, "not");
      return;
    }
    // Values of the negated schema (alone, and within the old one), each a candidate the old schema
    // may accept: a break is reported only with one the validators confirm, else it stays undecided.
    const both = conjoin(stripApplicators(oldRest), bs);
    const candidates = [
      ...(both ? new Instances(n.doc.root as JsonSchema).variants(both) : []),
      ...new Instances(n.doc.root as JsonSchema).variants(bs),
      ...new Instances(o.doc.root as JsonSchema).variants(oldRest).slice(0, 6),
    ];
    emit("tighten-constraint", `${what}: an allowed value it matches is rejected now`, "not", { candidates });
  }

  /** Whether a value matches `schema` when it is a const / enum (undefined schema shapes: false). */
  private matchesValue(schema: unknown, value: unknown, doc: SchemaNode["doc"]): boolean {
    const plain = this.plain(schema, doc);
    const vs = plain ? valueSet(plain) : null;
    return (vs?.some((v) => jsonEqual(v, value)) ?? false) && couldAccept(plain!, value);
  }

  // -------------------------------------------------------------------------------------------
  // if / then / else

  /**
   * `if I then T else E` is `(I ∧ T) ∨ (¬I ∧ E)`. Removed: loosened. Same `if`: each branch compared
   * (with the value's type) as the branch's constraint added to the old schema. Added: the old values
   * matching each branch must satisfy it. `if ¬I then E else T` is the same conditional.
   */
  diffConditional(o: SchemaNode, n: SchemaNode, oldRest: SchemaObject, site: Site, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const ns = n.schema as SchemaObject;
    if (ns.if === undefined) {
      if (os.if !== undefined) emit("loosen-constraint", "if/then/else removed", "if");
      return;
    }
    let [oi, ot, oe] = [os.if, os.then, os.else];
    const [ni, nt, ne] = [ns.if, ns.then, ns.else];
    if (
      oi !== undefined &&
      isObject(ni) &&
      Object.keys(ni).length === 1 &&
      ni.not !== undefined &&
      this.differ.same(this.node(ni.not, n.doc), this.node(oi, o.doc))
    ) {
      [oi, ot, oe] = [ni, oe, ot]; // if ¬I then E else T
    } else if (
      isObject(oi) &&
      Object.keys(oi).length === 1 &&
      oi.not !== undefined &&
      this.differ.same(this.node(oi.not, o.doc), this.node(ni, n.doc))
    ) {
      [oi, ot, oe] = [ni, oe, ot];
    }
    const sameIf = oi !== undefined && this.differ.same(this.node(oi, o.doc), this.node(ni, n.doc));
    if (oi !== undefined && !sameIf) {
      this.diffChangedCondition(o, n, oldRest, { oi, ot, oe, ni, nt, ne }, site, emit);
      return;
    }
    for (const [name, oldBranch, newBranch] of [
      ["then", sameIf ? ot : undefined, nt],
      ["else", sameIf ? oe : undefined, ne],
    ] as const) {
      if (newBranch === undefined) {
        if (oldBranch !== undefined) emit("loosen-constraint", `${name} removed`, name);
        continue;
      }
      if (oldBranch !== undefined && this.differ.same(this.node(oldBranch, o.doc), this.node(newBranch, n.doc)))
        continue;
      // Values that take this branch: the old ones that match (or not) the condition.
      const cond = name === "then" ? ni : { not: ni };
      const region = this.region(oldRest, ni, name === "then", n.doc);
      if (region === "empty") {
        emit("implied-constraint", `${name} ${describeSchema(newBranch)}: no allowed value takes this branch`, name);
        continue;
      }
      const trial = this.branchTrial(
        oldRest,
        oldBranch,
        newBranch,
        o.doc,
        n.doc,
        site,
        `${name} of if ${describeSchema(ni)}`,
        region,
      );
      if (trial.included === "yes") {
        if (trial.changes.length === 0 && oldBranch === undefined)
          emit(
            "implied-constraint",
            `${name} ${describeSchema(newBranch)} added: every allowed value already satisfies it`,
            name,
          );
        else if (oldBranch !== undefined)
          emit("loosen-constraint", `${name} changed: every value the old ${name} allowed still satisfies it`, name);
        else emit("implied-constraint", `${name} added: every allowed value already satisfies it`, name);
        continue;
      }
      const condS = this.plain(cond, n.doc);
      if (
        condS &&
        name === "then" &&
        !typesIntersect(effectiveTypes(oldRest), effectiveTypes(this.plain(ni, n.doc) ?? EMPTY_SCHEMA))
      )
        continue; // no old value takes it
      site.out.push(...trial.changes.filter((c) => c.kind !== "compatible"));
      // The trial's own probes build values without the condition: values built inside the branch's
      // region (the condition met, or not), each breaking the new branch one way, go with them.
      if (trial.included === "no" || trial.included === "unknown")
        emit(
          "tighten-constraint",
          `${name} ${describeSchema(newBranch)} ${oldBranch === undefined ? "added" : "changed"}: an allowed value that takes it may fail it`,
          name,
          {
            candidates: this.candidates(
              o,
              oldRest,
              [{ schema: this.plain(ni, n.doc), inside: name === "then" }],
              [this.plain(newBranch, n.doc)],
              [oldBranch === undefined ? undefined : this.plain(oldBranch, o.doc)],
            ),
          },
        );
    }
  }

  /**
   * A changed condition. Four groups of old values: in both conditions (old then, new then), in the
   * old one only (old then, new else), in the new one only (old else, new then), in neither (old
   * else, new else). Compatible when, for every group that can hold a value (a condition included in
   * the other empties one), the old branch with the group's condition implies the new branch.
   * Otherwise values built in each group, each breaking a new branch one way, are the candidate
   * witnesses: a break is reported only with one the validators confirm.
   */
  private diffChangedCondition(
    o: SchemaNode,
    n: SchemaNode,
    oldRest: SchemaObject,
    c: { oi: unknown; ot: unknown; oe: unknown; ni: unknown; nt: unknown; ne: unknown },
    site: Site,
    emit: Emit,
  ): void {
    const what = `if changed from ${describeSchema(c.oi)} to ${describeSchema(c.ni)}`;
    const oldInNew = this.trial(this.node(c.oi, o.doc), this.node(c.ni, n.doc), site).included === "yes";
    const newInOld = this.trial(this.node(c.ni, n.doc), this.node(c.oi, o.doc), site).included === "yes";
    const groups: [unknown, unknown, unknown, boolean][] = [
      [c.ot, c.nt, c.ni, false],
      [c.ot, c.ne, c.oi, oldInNew],
      [c.oe, c.nt, c.ni, newInOld],
      [c.oe, c.ne, undefined, false],
    ];
    let holds = true;
    for (const [oldBranch, newBranch, cond, empty] of groups) {
      if (empty || newBranch === undefined) continue;
      const region = cond === undefined ? undefined : this.plain(cond, cond === c.oi ? o.doc : n.doc);
      const trial = this.branchTrial(oldRest, oldBranch, newBranch, o.doc, n.doc, site, "", region);
      if (trial.included !== "yes") holds = false;
    }
    if (holds) {
      emit("loosen-constraint", `${what}: every old value satisfies the branch it takes now`, "if");
      return;
    }
    const oldIf = this.plain(c.oi, o.doc);
    const newIf = this.plain(c.ni, n.doc);
    emit("tighten-constraint", `${what}: an old value that takes another branch now may fail it`, "if", {
      candidates: this.candidates(
        o,
        oldRest,
        [
          { schema: newIf, inside: true },
          { schema: oldIf, inside: false },
          { schema: oldIf, inside: true },
          { schema: newIf, inside: false },
        ],
        [this.plain(c.nt, n.doc), this.plain(c.ne, n.doc)],
        [this.plain(c.ot, o.doc), this.plain(c.oe, o.doc)],
      ),
    });
  }

  /**
   * The old values that take a branch, as a schema to add to the old one: the condition itself
   * (`then`), or (`else`) its complement where it is exact: a condition on one property's value
   * (const / enum / type) whose old values are a finite set. "empty" when no old value takes it;
   * undefined when it can not be written (the comparison then runs without it, which only asks more).
   */
  private region(
    oldRest: SchemaObject,
    cond: unknown,
    inside: boolean,
    doc: SchemaNode["doc"],
  ): SchemaObject | "empty" | undefined {
    const plain = this.plain(cond, doc);
    if (!plain) return undefined;
    if (inside) return plain;
    const keys = Object.keys(plain).filter((k) => !isAnnotationKey(k));
    const props = isObject(plain.properties) ? (plain.properties as Record<string, unknown>) : {};
    const names = Object.keys(props);
    if (names.length !== 1 || keys.some((k) => k !== "properties" && k !== "required" && k !== "type"))
      return undefined;
    const [onlyName] = names as [string];
    const required = Array.isArray(plain.required) ? plain.required : [];
    if (required.some((r) => r !== onlyName)) return undefined;
    // `type: object` in the condition sends every other kind of value to else: only exact when there is none.
    if (plain.type !== undefined && (plain.type !== "object" || oldRest.type !== "object")) return undefined;
    const condValue = this.plain(props[onlyName], doc);
    const oldProps = isObject(oldRest.properties) ? (oldRest.properties as Record<string, unknown>) : {};
    const oldValue = this.plain(oldProps[onlyName], doc);
    const values = oldValue ? valueSet(oldValue) : null;
    if (!condValue || !values || !isValueCondition(condValue)) return undefined;
    const oldRequired = Array.isArray(oldRest.required) && oldRest.required.includes(onlyName);
    // An absent key satisfies a condition that does not require it; one that does is failed by it.
    if (!oldRequired && required.includes(onlyName)) return undefined;
    const outside = values.filter((v) => !couldAccept(condValue, v));
    if (outside.length === 0) return "empty";
    return { properties: { [onlyName]: { enum: outside } }, required: [onlyName] };
  }

  /**
   * Candidate witnesses at the site: a few old objects, each moved into a region (a condition met or
   * not) and then changed to break one of `breaks` one way (a property set to a value of another
   * kind, or a required one removed). Not checked here: the validators decide which are witnesses.
   */
  private candidates(
    o: SchemaNode,
    oldRest: SchemaObject,
    regions: { schema: SchemaObject | undefined; inside: boolean }[],
    breaks: (SchemaObject | undefined)[],
    satisfy: (SchemaObject | undefined)[] = [],
  ): unknown[] {
    const inst = new Instances(o.doc.root as JsonSchema);
    const bases = (inst.objectVariants(stripApplicators(oldRest)) as Record<string, unknown>[])
      .filter(isObject)
      .slice(0, 3);
    const oldProps = isObject(oldRest.properties) ? (oldRest.properties as Record<string, unknown>) : {};
    const valuesFor = (key: string, schema: unknown): unknown[] => [
      ...(schema === undefined ? [] : inst.variants(schema).slice(0, 4)),
      ...(Object.hasOwn(oldProps, key) ? inst.variants(oldProps[key]).slice(0, 4) : []),
      ...GENERIC_VALUES,
    ];
    // Regions a condition puts values in first (a few values each), then the ones it keeps them out of.
    const insideEdits: Edit[][] = [];
    const outsideEdits: Edit[][] = [];
    for (const { schema, inside } of regions) {
      if (!schema) continue;
      const props = isObject(schema.properties) ? (schema.properties as Record<string, unknown>) : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      if (inside) {
        // Every property of the condition at once, its first few values in turn.
        for (let i = 0; i < 4; i++) {
          const edits: Edit[] = [];
          for (const [key, propertySchema] of Object.entries(props)) {
            const vs = inst.variants(propertySchema);
            if (vs.length > 0) edits.push({ key, value: vs[Math.min(i, vs.length - 1)] });
          }
          for (const key of required)
            if (!Object.hasOwn(props, key)) edits.push({ key, value: valuesFor(key, undefined)[0] });
          if (edits.length > 0) insideEdits.push(edits);
        }
      } else {
        for (const [key, propertySchema] of Object.entries(props))
          for (const value of valuesFor(key, undefined)
            .filter((v) => !this.matches(propertySchema, v, o.doc))
            .slice(0, 6))
            outsideEdits.push([{ key, value }]);
        for (const key of required) outsideEdits.push([{ key, absent: true }]);
      }
    }
    const regionEdits: Edit[][] = [[], ...insideEdits, ...outsideEdits];
    // Meeting an old branch (its required properties present, its properties at a value it allows), so
    // the candidate is an old value wherever the region puts it.
    const satisfyEdits: Edit[][] = [[]];
    for (const branch of satisfy) {
      if (!branch) continue;
      const props = isObject(branch.properties) ? (branch.properties as Record<string, unknown>) : {};
      const edits: Edit[] = [];
      for (const [key, propertySchema] of Object.entries(props)) {
        const variant = inst.variants(propertySchema)[0];
        if (variant !== undefined) edits.push({ key, value: variant });
      }
      for (const key of Array.isArray(branch.required) ? (branch.required as string[]) : [])
        if (!edits.some((e) => e.key === key)) edits.push({ key, value: valuesFor(key, undefined)[0] });
      if (edits.length > 0) satisfyEdits.push(edits);
    }
    const breakEdits: Edit[][] = [[]];
    for (const broken of breaks) {
      if (!broken) continue;
      const props = isObject(broken.properties) ? (broken.properties as Record<string, unknown>) : {};
      for (const [key, propertySchema] of Object.entries(props))
        for (const value of valuesFor(key, undefined))
          if (!this.matches(propertySchema, value, o.doc)) breakEdits.push([{ key, value }]);
      for (const key of Array.isArray(broken.required) ? (broken.required as string[]) : [])
        breakEdits.push([{ key, absent: true }]);
      if (broken.additionalProperties === false) breakEdits.push([{ key: "extra", value: 0 }]);
    }
    // Values of other kinds too: a condition with a `type` sends them to the other branch.
    const out: unknown[] = GENERIC_VALUES.filter((v) => !isObject(v));
    for (const regionEdit of regionEdits)
      for (const satisfyEdit of satisfyEdits)
        for (const breakEdit of breakEdits)
          for (const base of bases.slice(0, 2)) {
            if (out.length >= MAX_CANDIDATES) return out;
            const obj: Record<string, unknown> = { ...base };
            for (const edit of [...satisfyEdit, ...regionEdit, ...breakEdit]) {
              if ("absent" in edit) delete obj[edit.key];
              else setOwn(obj, edit.key, edit.value);
            }
            out.push(obj);
          }
    return out;
  }

  /** Whether `value` is certainly accepted by `schema` (false when not sure: the value stays a candidate). */
  private matches(schema: unknown, value: unknown, doc: SchemaNode["doc"]): boolean {
    const plain = this.plain(schema, doc);
    if (!plain) return false;
    if (Object.keys(plain).length === 0) return true;
    return isValueCondition(plain) && couldAccept(plain, value);
  }

  /**
   * Old schema ∧ old branch compared with old schema ∧ new branch (the branch's constraints added),
   * within `region` (the values that take the branch) when it merges exactly with the old schema.
   */
  private branchTrial(
    oldRest: SchemaObject,
    oldBranch: unknown,
    newBranch: unknown,
    oldDoc: SchemaNode["doc"],
    newDoc: SchemaNode["doc"],
    site: Site,
    label: string,
    region?: SchemaObject,
  ): { changes: Change[]; included: Inclusion } {
    const stripped = stripApplicators(oldRest);
    const base = (region && conjoin(stripped, region)) || stripped;
    const ob = oldBranch === undefined ? EMPTY_SCHEMA : this.plain(oldBranch, oldDoc);
    const nb = this.plain(newBranch, newDoc);
    const left = ob ? conjoin(base, ob) : undefined;
    const right = nb && left ? conjoin(left, nb) : undefined;
    if (!left || !right) {
      const changes: Change[] = [];
      emitAt({ ...site, out: changes })(
        "cannot-decide",
        `${label || "branch"}: the branch can not be merged with the schema to compare it`,
        "if",
      );
      return { changes, included: "unknown" };
    }
    return this.trial({ schema: left, doc: oldDoc }, { schema: right, doc: newDoc }, site, label);
  }

  // -------------------------------------------------------------------------------------------
  // dependencies

  /**
   * `dependencies: {a: [b]}` (b required when a is present) and `{a: schema}` (the object matches it
   * when a is present). Per key: the new dependency added to the old schema with `a` present must
   * accept what the old dependency accepted. A key the old object can not hold needs nothing.
   */
  diffDependencies(o: SchemaNode, n: SchemaNode, oldRest: SchemaObject, site: Site, emit: Emit): void {
    const od = isObject((o.schema as SchemaObject).dependencies)
      ? ((o.schema as SchemaObject).dependencies as Record<string, unknown>)
      : {};
    const nd = isObject((n.schema as SchemaObject).dependencies)
      ? ((n.schema as SchemaObject).dependencies as Record<string, unknown>)
      : {};
    const asSchema = (d: unknown): unknown => (Array.isArray(d) ? { required: d } : d);
    for (const key of new Set([...Object.keys(od), ...Object.keys(nd)])) {
      const oldDependent = od[key];
      const newDependent = nd[key];
      if (jsonEqual(oldDependent, newDependent)) continue;
      if (
        newDependent === undefined ||
        (Array.isArray(newDependent) && newDependent.length === 0) ||
        newDependent === true
      ) {
        emit("loosen-constraint", `dependencies ${showValue(key)} removed`, "dependencies");
        continue;
      }
      if (!canHold(oldRest, key)) {
        emit(
          "implied-constraint",
          `dependencies ${showValue(key)} changed: the object can not hold ${showValue(key)}`,
          "dependencies",
        );
        continue;
      }
      const present = {
        ...stripApplicators(oldRest),
        required: [...new Set([...(Array.isArray(oldRest.required) ? (oldRest.required as string[]) : []), key])],
      };
      const trial = this.branchTrial(
        present,
        asSchema(oldDependent),
        asSchema(newDependent),
        o.doc,
        n.doc,
        site,
        `dependencies ${showValue(key)}`,
      );
      if (trial.included === "yes") {
        emit(
          oldDependent === undefined ? "implied-constraint" : "loosen-constraint",
          `dependencies ${showValue(key)} ${oldDependent === undefined ? "added" : "changed"}: every allowed object with ${showValue(key)} already satisfies it`,
          "dependencies",
        );
        continue;
      }
      // The witness: an old object holding `key` (and what the old dependency asked for with it) that
      // breaks the new dependency one way (a newly required property left out, a value of another kind).
      const oldDependency = this.plain(asSchema(oldDependent) ?? {}, o.doc);
      const newDependency = this.plain(asSchema(newDependent), n.doc);
      const holding = oldDependency && conjoin({ required: [key] }, oldDependency);
      const candidates = this.candidates(
        o,
        oldRest,
        [{ schema: holding ?? { required: [key] }, inside: true }],
        [newDependency],
      );
      if (Array.isArray(newDependent)) {
        const missing = (newDependent as string[]).filter(
          (p) =>
            !(Array.isArray(oldDependent) && oldDependent.includes(p)) &&
            !(Array.isArray(oldRest.required) && oldRest.required.includes(p)),
        );
        if (missing.length > 0 && trial.included === "no") {
          emit(
            "tighten-constraint",
            `dependencies: ${showValue(key)} now requires ${missing.map(showValue).join(", ")}`,
            "dependencies",
            {
              candidates,
            },
          );
          continue;
        }
      }
      site.out.push(...trial.changes.filter((c) => c.kind !== "compatible"));
      emit(
        "tighten-constraint",
        `dependencies ${showValue(key)} ${oldDependent === undefined ? "added" : "changed"}: an allowed object with ${showValue(key)} may fail it`,
        "dependencies",
        {
          candidates,
        },
      );
    }
  }

  // -------------------------------------------------------------------------------------------
  // propertyNames

  /** Every key an old object can hold must satisfy the new `propertyNames`. */
  diffPropertyNames(o: SchemaNode, n: SchemaNode, oldRest: SchemaObject, site: Site, emit: Emit): void {
    const oldNames = (o.schema as SchemaObject).propertyNames;
    const newNames = (n.schema as SchemaObject).propertyNames;
    if (newNames === undefined || newNames === true) {
      if (oldNames !== undefined && oldNames !== true)
        emit("loosen-constraint", "propertyNames removed", "propertyNames");
      return;
    }
    const what =
      oldNames === undefined
        ? `propertyNames ${describeSchema(newNames)} added`
        : `propertyNames changed from ${describeSchema(oldNames)} to ${describeSchema(newNames)}`;
    const as = oldNames === undefined ? EMPTY_SCHEMA : this.plain(oldNames, o.doc);
    const bs = this.plain(newNames, n.doc);
    if (!as || !bs) {
      emit("cannot-decide", `${what}: a reference that can not be read`, "propertyNames");
      return;
    }
    const named = isObject(oldRest.properties) ? Object.keys(oldRest.properties) : [];
    const closed = oldRest.additionalProperties === false && oldRest.patternProperties === undefined;
    // Named keys (all keys of a closed object).
    for (const property of named) {
      if (acceptsString(as, property) === false) continue; // the old object never holds it
      const ok = acceptsString(bs, property);
      if (ok === false) {
        emitAt(childSite(site, property))(
          "tighten-constraint",
          `${what}: the key ${showValue(property)} is rejected now`,
          "propertyNames",
          { present: true },
        );
        return;
      }
      if (ok === undefined) {
        emit(
          "cannot-decide",
          `${what}: whether the key ${showValue(property)} satisfies it was not decided`,
          "propertyNames",
        );
        return;
      }
    }
    if (closed) {
      emit("implied-constraint", `${what}: every key the object can hold satisfies it`, "propertyNames");
      return;
    }
    // Open object: any key the old propertyNames allows.
    const oldKeys = stringSchema(as);
    const newKeys = stringSchema(bs);
    if (!oldKeys || !newKeys) {
      emit("cannot-decide", `${what}: the key schemas are not plain string constraints`, "propertyNames");
      return;
    }
    if (newKeys.values) {
      const candidates = oldKeys.values ?? ["extra", "key", "a", "x", "extra1", "z0"];
      const bad = candidates.find(
        (k) => typeof k === "string" && acceptsString(as, k) === true && acceptsString(bs, k) === false,
      );
      if (bad !== undefined)
        emit("tighten-constraint", `${what}: the key ${showValue(bad)} is rejected now`, "propertyNames", {
          extraKey: bad as string,
        });
      else if (oldKeys.values)
        emit("implied-constraint", `${what}: every key the old propertyNames allows satisfies it`, "propertyNames");
      else emit("cannot-decide", `${what}: keys outside its enum were not searched`, "propertyNames");
      return;
    }
    if (oldKeys.values) {
      const bad = oldKeys.values.find((k) => typeof k === "string" && acceptsString(bs, k) === false);
      if (bad === undefined && oldKeys.values.every((k) => typeof k !== "string" || acceptsString(bs, k) === true))
        emit("implied-constraint", `${what}: every key the old propertyNames allows satisfies it`, "propertyNames");
      else if (bad !== undefined)
        emit("tighten-constraint", `${what}: the key ${showValue(bad)} is rejected now`, "propertyNames", {
          extraKey: bad as string,
        });
      else emit("cannot-decide", `${what}: not decided`, "propertyNames");
      return;
    }
    const outcome = stringIncludes(oldKeys.constraints, newKeys.constraints);
    if (outcome.kind === "included")
      emit(
        oldNames === undefined ? "implied-constraint" : "loosen-constraint",
        `${what}: every key the old schema allows satisfies it`,
        "propertyNames",
      );
    else if (outcome.kind === "excluded") {
      const key = outcome.witness;
      if (named.includes(key))
        emitAt(childSite(site, key))(
          "tighten-constraint",
          `${what}: the key ${showValue(key)} is rejected now`,
          "propertyNames",
          { present: true },
        );
      else
        emit("tighten-constraint", `${what}: the key ${showValue(key)} is rejected now`, "propertyNames", {
          extraKey: key,
        });
    } else {
      // Not decided as languages (a format without a regular shape, say): plain keys and the formats'
      // own spellings, one the old propertyNames allows and the new one refuses.
      const pool = [
        "extra",
        "key",
        "a",
        "x",
        "A",
        "0",
        "",
        ...(typeof bs.format === "string" ? (NEAR_MISSES[bs.format] ?? []) : []),
        ...(typeof as.format === "string" ? (FORMAT_EXAMPLES[as.format] ?? []) : []),
      ];
      const bad = pool.find(
        (k): k is string =>
          typeof k === "string" &&
          !named.includes(k) &&
          acceptsString(as, k) === true &&
          acceptsString(bs, k) === false,
      );
      if (bad !== undefined)
        emit("tighten-constraint", `${what}: the key ${showValue(bad)} is rejected now`, "propertyNames", {
          extraKey: bad,
        });
      else emit("cannot-decide", `${what}: ${outcome.reason}`, "propertyNames", undefined, outcome.budget);
    }
  }

  // -------------------------------------------------------------------------------------------
  // contains

  /**
   * `contains: C`: some item matches C (an empty array fails). Compatible when the old `contains`
   * is included in C, or the old `items` are and `minItems` is at least 1 (or a tuple position below
   * `minItems` is); breaking with an empty array when the old schema allows one.
   */
  diffContains(o: SchemaNode, n: SchemaNode, oldRest: SchemaObject, site: Site, emit: Emit): void {
    const os = o.schema as SchemaObject;
    const oldContains = os.contains;
    const newContains = (n.schema as SchemaObject).contains;
    if (newContains === undefined) {
      if (oldContains !== undefined) emit("loosen-constraint", "contains removed", "contains");
      return;
    }
    if (oldContains !== undefined && this.differ.same(this.node(oldContains, o.doc), this.node(newContains, n.doc)))
      return;
    const what =
      oldContains === undefined
        ? `contains ${describeSchema(newContains)} added`
        : `contains changed from ${describeSchema(oldContains)} to ${describeSchema(newContains)}`;
    const into = (x: unknown): Inclusion =>
      this.trial(this.node(x, o.doc), this.node(newContains, n.doc), childSite(site, "*")).included;
    const minItems = typeof oldRest.minItems === "number" ? oldRest.minItems : 0;
    if (oldContains !== undefined && into(oldContains) === "yes") {
      emit("loosen-constraint", `${what}: an item matching the old one matches the new one`, "contains");
      return;
    }
    if (minItems >= 1) {
      const positions = Array.isArray(os.items) ? (os.items as unknown[]).slice(0, minItems) : [os.items ?? true];
      if (
        positions.some((p) => into(p) === "yes") ||
        (Array.isArray(os.items) && minItems > os.items.length && into(os.additionalItems ?? true) === "yes")
      ) {
        emit("implied-constraint", `${what}: every allowed array has an item of the kind it asks for`, "contains");
        return;
      }
    }
    if (oldContains === undefined && minItems === 0) {
      emit("tighten-constraint", `${what}: an empty array is rejected now`, "contains", { value: [] });
      return;
    }
    if (oldContains !== undefined) {
      // An array whose one matching item is of the old kind but not the new one.
      const containsTrial = this.trial(
        this.node(oldContains, o.doc),
        this.node(newContains, n.doc),
        childSite(site, 0),
        "contains",
      );
      if (containsTrial.included === "no") {
        site.out.push(...containsTrial.changes.filter((c) => c.kind === "breaking"));
        return;
      }
    }
    emit("cannot-decide", `${what}: whether every allowed array has such an item was not decided`, "contains");
  }

  // -------------------------------------------------------------------------------------------
  // Keywords the differ does not know

  diffUnknown(key: string, os: SchemaObject, ns: SchemaObject, emit: Emit): void {
    const what = os[key] === undefined ? "added" : ns[key] === undefined ? "removed" : "changed";
    if (IGNORED_BY_VALIDATORS.has(key) && !validatorsKnow(key))
      emit("annotation-change", `keyword "${key}" ${what}: the validators (draft-07 ajv) ignore it`, key);
    // No probe: no document tells the schemas apart for ajv, so the assessment reports it undecided, naming the keyword.
    else emit("unknown-keyword-change", `unknown keyword "${key}" ${what} (treated as breaking)`, key);
  }
}

/** A change to an object a candidate witness is built with. */
type Edit = { key: string; value: unknown } | { key: string; absent: true };

/** Values of every JSON kind: one of them breaks almost any constraint on a property. */
const GENERIC_VALUES: readonly unknown[] = [null, false, 0, 0.5, -1, "", "a", [], {}];

/** Candidate witnesses one rule builds (the witness search validates each). */
const MAX_CANDIDATES = 300;

function isAnnotationKey(k: string): boolean {
  return ["title", "description", "$comment", "examples", "default"].includes(k) || k.startsWith("x-");
}

/** A schema made of const / enum / type only: `couldAccept` decides it exactly. */
function isValueCondition(s: SchemaObject): boolean {
  return Object.keys(s).every((k) => k === "const" || k === "enum" || k === "type" || isAnnotationKey(k));
}

/**
 * Keywords of later drafts that draft-07 ajv (the validators' dialect) does not implement: they
 * constrain no stored value. Any other unknown keyword may be a custom ajv keyword: undecided.
 */
const IGNORED_BY_VALIDATORS = new Set([
  "dependentRequired",
  "dependentSchemas",
  "minContains",
  "maxContains",
  "unevaluatedProperties",
  "unevaluatedItems",
  "prefixItems",
  "$anchor",
  "$dynamicAnchor",
  "$dynamicRef",
  "$recursiveRef",
  "$recursiveAnchor",
  "$vocabulary",
]);

/** The schema without the applicators these rules decide (the rest of the old schema, as context). */
export function stripApplicators(s: SchemaObject): SchemaObject {
  const out: SchemaObject = {};
  for (const [key, child] of Object.entries(s)) if (!APPLICATORS.has(key)) out[key] = child;
  return out;
}
const APPLICATORS = new Set([
  "not",
  "if",
  "then",
  "else",
  "dependencies",
  "propertyNames",
  "contains",
  "anyOf",
  "oneOf",
  "allOf",
  "definitions",
  "$defs",
]);

/** Whether an object of `s` can hold the key (false only for a closed object that does not name it). */
function canHold(s: SchemaObject, key: string): boolean {
  if (s.additionalProperties !== false || s.patternProperties !== undefined) return true;
  return isObject(s.properties) && Object.hasOwn(s.properties, key);
}

/** False when `s`'s type, values or scalar keywords certainly reject `v` (a cheap over-approximation of acceptance). */
export function couldAccept(s: SchemaObject, v: unknown): boolean {
  const types = effectiveTypes(s);
  const jsonType = jsonTypeOf(v);
  if (!covers(types, jsonType) && !(jsonType === "integer" && covers(types, "number"))) return false;
  const values = valueSet(s);
  if (values && !values.some((w) => jsonEqual(v, w))) return false;
  for (const keyword of [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
  ] as const) {
    if (!satisfiesScalar(v, keyword, s)) return false;
  }
  return true;
}

const STRING_KEYWORDS = new Set(["type", "enum", "const", "pattern", "minLength", "maxLength", "format"]);

/** A schema made of string keywords only, read as a language (values: an enum / const). */
function stringSchema(s: SchemaObject): { constraints: StringConstraints; values?: unknown[] } | undefined {
  if (
    Object.keys(s).some(
      (k) => !STRING_KEYWORDS.has(k) && !k.startsWith("x-") && !["title", "description", "$comment"].includes(k),
    )
  )
    return undefined;
  const constraints: StringConstraints = {};
  if (typeof s.pattern === "string") constraints.patterns = [s.pattern];
  if (typeof s.minLength === "number") constraints.minLength = s.minLength;
  if (typeof s.maxLength === "number") constraints.maxLength = s.maxLength;
  if (typeof s.format === "string") constraints.format = s.format;
  const values = valueSet(s);
  return values ? { constraints: constraints, values } : { constraints: constraints };
}

/** Whether a string schema accepts `key` (undefined when the schema is not made of string keywords). */
function acceptsString(s: SchemaObject, key: string): boolean | undefined {
  if (s === EMPTY_SCHEMA || Object.keys(s).length === 0) return true;
  if (!stringSchema(s)) return undefined;
  return couldAccept(s, key);
}
