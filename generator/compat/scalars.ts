/**
 * Scalar rules: type sets, enums and consts, numeric bounds and `multipleOf`, string lengths,
 * `pattern` and `format`. None of them recurses into child schemas, so they are plain functions of
 * the two schema objects that report through an `Emit`; the differ decides when each applies.
 */
import { ASSERTED_FORMATS, FORMAT_EXAMPLES, NEAR_MISSES, formatAccepts, formatType } from "./formats.js";
import {
  FORMAT_SHAPES,
  type LanguageOutcome,
  type StringConstraints,
  lengthIncludes,
  patternIncludes,
} from "./regex.js";
import { type Emit, showValue } from "./rule-catalogue.js";
import { type SchemaObject, jsonEqual, jsonTypeOf } from "./schema.js";

// ---------------------------------------------------------------------------------------------
// Type sets and value sets

/** A set of JSON types; `"number"` includes integers. `null` means every type. */
export type TypeSet = Set<string> | null;

function declaredTypes(s: SchemaObject): TypeSet {
  if (typeof s.type === "string") return new Set([s.type]);
  if (Array.isArray(s.type)) return new Set(s.type.filter((t): t is string => typeof t === "string"));
  return null;
}

export function covers(types: TypeSet, t: string): boolean {
  return types === null || types.has(t) || (t === "integer" && types.has("number"));
}

export function valueSet(s: SchemaObject): unknown[] | null {
  if ("const" in s) return [s.const];
  if (Array.isArray(s.enum)) return s.enum;
  return null;
}

/** The types of the values a schema can accept: its declared types, narrowed by enum/const. */
export function effectiveTypes(s: SchemaObject): TypeSet {
  const declared = declaredTypes(s);
  const values = valueSet(s);
  if (!values) return declared;
  return new Set(values.map(jsonTypeOf).filter((t) => covers(declared, t)));
}

export function typesIntersect(a: TypeSet, b: TypeSet): boolean {
  if (a === null || b === null) return true;
  for (const type of a) if (covers(b, type)) return true;
  for (const type of b) if (covers(a, type)) return true;
  return false;
}

function showTypes(types: TypeSet): string {
  return types === null ? "any type" : [...types].join(" | ") || "nothing";
}

// ---------------------------------------------------------------------------------------------
// Rules

export function diffTypes(os: SchemaObject, ns: SchemaObject, oldTypes: TypeSet, emit: Emit): void {
  const oldDeclared = declaredTypes(os);
  const newDeclared = declaredTypes(ns);
  const lost =
    oldTypes === null
      ? newDeclared === null
        ? []
        : ["any other type"]
      : [...oldTypes].filter((t) => !covers(newDeclared, t));
  if (lost.length > 0) {
    const narrowedInteger = lost.length === 1 && lost[0] === "number" && newDeclared?.has("integer");
    emit(
      "narrow-type",
      narrowedInteger
        ? "type narrowed from number to integer"
        : `type narrowed from ${showTypes(oldTypes)} to ${showTypes(newDeclared)}`,
      "type",
      lost[0] === "any other type" ? undefined : { type: lost[0] },
    );
    return;
  }
  const gained =
    oldDeclared === null ? false : newDeclared === null || [...newDeclared].some((t) => !covers(oldDeclared, t));
  if (gained) emit("widen-type", `type widened from ${showTypes(oldDeclared)} to ${showTypes(newDeclared)}`, "type");
}

export function diffValues(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
  const oldValues = valueSet(os);
  const newValues = valueSet(ns);
  if (!oldValues && !newValues) return;
  if (!oldValues && newValues) {
    // Old strings only, whose language (pattern, lengths, format) is finite: the enum may list every one of them.
    const strings = stringsOnlyIn(os, newValues);
    if (strings !== undefined) {
      if (strings.kind === "included") {
        emit(
          "implied-constraint",
          `value restricted to ${showValue(newValues)}: every allowed string is among them`,
          "enum",
        );
        return;
      }
      if (strings.kind === "excluded") {
        emit("add-enum", `value restricted to enum ${showValue(newValues)}`, "enum", { value: strings.witness });
        return;
      }
    }
    if ("const" in ns) emit("add-const", `value pinned to const ${showValue(ns.const)}`, "const", { notIn: newValues });
    else emit("add-enum", `value restricted to enum ${showValue(newValues)}`, "enum", { notIn: newValues });
    return;
  }
  if (oldValues && !newValues) {
    if ("const" in os) emit("remove-const", `const ${showValue(os.const)} removed`, "const");
    else emit("remove-enum", "enum restriction removed", "enum");
    return;
  }
  const oldList = oldValues as unknown[];
  const newList = newValues as unknown[];
  const removed = oldList.filter((v) => !newList.some((w) => jsonEqual(v, w)));
  const added = newList.filter((v) => !oldList.some((w) => jsonEqual(v, w)));
  if ("const" in os && "const" in ns && removed.length > 0) {
    emit("change-const", `const changed from ${showValue(os.const)} to ${showValue(ns.const)}`, "const", {
      value: os.const,
    });
    return;
  }
  if (removed.length > 0) {
    emit(
      "remove-enum-value",
      `enum value${removed.length > 1 ? "s" : ""} ${removed.map(showValue).join(", ")} removed`,
      "enum",
      {
        value: removed[0],
      },
    );
  }
  if (added.length > 0) {
    emit("add-enum-value", `enum value${added.length > 1 ? "s" : ""} ${added.map(showValue).join(", ")} added`, "enum");
  }
}

/**
 * When the old schema holds strings only (its type, with a pattern or length bound) and the new
 * values are strings: whether every old string is one of them, as languages (the values as one
 * anchored alternation). Undefined when that is not the question.
 */
function stringsOnlyIn(os: SchemaObject, values: readonly unknown[]): LanguageOutcome | undefined {
  const types = declaredTypes(os);
  if (types === null || types.size !== 1 || !types.has("string")) return undefined;
  if (!values.every((v): v is string => typeof v === "string")) return undefined;
  const constraints = stringConstraints(os);
  if (constraints.patterns === undefined && constraints.maxLength === undefined) return undefined; // any string: certainly not all listed
  const alternation = `^(?:${(values as string[]).map((v) => v.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")).join("|")})$`;
  const outcome = patternIncludes(constraints, alternation);
  return outcome.kind === "undecided" ? undefined : outcome;
}

/** Old values are a finite set: a new scalar keyword breaks exactly when some old value fails it. */
export function diffScalarValues(values: readonly unknown[], os: SchemaObject, ns: SchemaObject, emit: Emit): void {
  for (const keyword of SCALAR_KEYWORDS) {
    if (jsonEqual(os[keyword], ns[keyword]) || ns[keyword] === undefined) continue;
    if (keyword === "exclusiveMinimum" || keyword === "exclusiveMaximum") {
      if (typeof ns[keyword] === "boolean") continue; // draft-04 modifier: judged with minimum / maximum
    }
    const failing = values.find((v) => !satisfiesScalar(v, keyword, ns));
    if (failing === undefined) {
      if (os[keyword] === undefined)
        emit(
          "implied-constraint",
          `${keyword} ${showValue(ns[keyword])} added: every allowed value already satisfies it`,
          keyword,
        );
      else
        emit(
          "loosen-constraint",
          `${keyword} changed from ${showValue(os[keyword])} to ${showValue(ns[keyword])}: every allowed value still satisfies it`,
          keyword,
        );
    } else {
      const what =
        os[keyword] === undefined
          ? `${keyword} ${showValue(ns[keyword])} added`
          : `${keyword} changed from ${showValue(os[keyword])} to ${showValue(ns[keyword])}`;
      emit("tighten-constraint", `${what}: the allowed value ${showValue(failing)} fails it`, keyword, {
        value: failing,
      });
    }
  }
}

/** Bounds compared as sets of numbers; when the old schema holds only integers, as sets of integers. */
export function diffNumbers(os: SchemaObject, ns: SchemaObject, oldTypes: TypeSet, emit: Emit): void {
  const integers = oldTypes?.has("integer") && !oldTypes.has("number");
  for (const side of ["lower", "upper"] as const) {
    const ob = bound(os, side);
    const nb = bound(ns, side);
    if (!ob && !nb) continue;
    const name = side === "lower" ? "minimum" : "maximum";
    if (!ob && nb) {
      const probe =
        side === "lower" ? (nb.exclusive ? nb.value : nb.value - 1) : nb.exclusive ? nb.value : nb.value + 1;
      emit("tighten-constraint", `${nb.keyword} ${nb.value} added`, nb.keyword, {
        value: integers ? Math.round(probe) : probe,
      });
      continue;
    }
    if (ob && !nb) {
      emit("loosen-constraint", `${ob.keyword} ${ob.value} removed`, ob.keyword);
      continue;
    }
    const oldBound = ob as Bound;
    const newBound = nb as Bound;
    if (oldBound.value === newBound.value && oldBound.exclusive === newBound.exclusive) continue;
    if (integers) {
      // Integer semantics: exclusiveMinimum 0 and minimum 1 admit the same integers.
      const ai = integerBound(oldBound, side);
      const bi = integerBound(newBound, side);
      if (ai === bi) continue;
      const tighter = side === "lower" ? bi > ai : bi < ai;
      const verb = side === "lower" ? (tighter ? "raised" : "lowered") : tighter ? "lowered" : "raised";
      emit(
        tighter ? "tighten-constraint" : "loosen-constraint",
        `${name} ${verb} from ${showBound(oldBound)} to ${showBound(newBound)} (integers ${side === "lower" ? "from" : "up to"} ${ai} -> ${bi})`,
        newBound.keyword,
        tighter ? { value: side === "lower" ? ai : ai } : undefined,
      );
      continue;
    }
    const tighter =
      side === "lower"
        ? newBound.value > oldBound.value ||
          (newBound.value === oldBound.value && newBound.exclusive && !oldBound.exclusive)
        : newBound.value < oldBound.value ||
          (newBound.value === oldBound.value && newBound.exclusive && !oldBound.exclusive);
    const verb = side === "lower" ? (tighter ? "raised" : "lowered") : tighter ? "lowered" : "raised";
    const probe = oldBound.exclusive ? (oldBound.value + newBound.value) / 2 : oldBound.value;
    emit(
      tighter ? "tighten-constraint" : "loosen-constraint",
      `${name} ${verb} from ${showBound(oldBound)} to ${showBound(newBound)}`,
      newBound.keyword,
      tighter ? { value: probe } : undefined,
    );
  }
  const om = typeof os.multipleOf === "number" ? os.multipleOf : integers ? 1 : undefined;
  const nm = typeof ns.multipleOf === "number" ? ns.multipleOf : undefined;
  if (om !== nm && !(nm === undefined && os.multipleOf === undefined)) {
    const shown = typeof os.multipleOf === "number" ? os.multipleOf : undefined;
    if (nm === undefined) emit("loosen-constraint", `multipleOf ${shown} removed`, "multipleOf");
    else if (om === undefined) emit("tighten-constraint", `multipleOf ${nm} added`, "multipleOf", { value: nm / 2 });
    else if (isMultiple(om, nm)) {
      if (shown === undefined)
        emit("implied-constraint", `multipleOf ${nm} added: every integer is a multiple of it`, "multipleOf");
      else emit("loosen-constraint", `multipleOf changed from ${shown} to ${nm}`, "multipleOf");
    } else if (shown === undefined) emit("tighten-constraint", `multipleOf ${nm} added`, "multipleOf", { value: 1 });
    else emit("tighten-constraint", `multipleOf changed from ${shown} to ${nm}`, "multipleOf", { value: om });
  }
}

/** Lengths, `pattern` and `format` compared as languages: a constraint already implied by the old ones is no change. */
export function diffStrings(os: SchemaObject, ns: SchemaObject, emit: Emit): void {
  const old = stringConstraints(os);
  const omin = old.minLength ?? 0;
  const nmin = typeof ns.minLength === "number" ? ns.minLength : 0;
  const omax = old.maxLength ?? Infinity;
  const nmax = typeof ns.maxLength === "number" ? ns.maxLength : Infinity;
  const show = (v: number): string => (v === Infinity ? "none" : String(v));
  if (nmin < omin) emit("loosen-constraint", `minLength lowered from ${omin} to ${nmin}`, "minLength");
  if (nmax > omax) emit("loosen-constraint", `maxLength raised from ${show(omax)} to ${show(nmax)}`, "maxLength");
  for (const [kw, tighter, from, to] of [
    ["minLength", nmin > omin, omin, nmin],
    ["maxLength", nmax < omax, omax, nmax],
  ] as const) {
    if (!tighter) continue;
    const verb = kw === "minLength" ? "raised" : "lowered";
    const outcome = lengthIncludes(old, kw === "minLength" ? nmin : 0, kw === "maxLength" ? nmax : undefined);
    if (outcome.kind === "included")
      emit(
        "implied-constraint",
        `${kw} ${verb} from ${show(from)} to ${show(to)}: every allowed string already has such a length`,
        kw,
      );
    else if (outcome.kind === "excluded")
      emit("tighten-constraint", `${kw} ${verb} from ${show(from)} to ${show(to)}`, kw, { value: outcome.witness });
    else emit("cannot-decide", `${kw} ${verb} from ${show(from)} to ${show(to)}: ${outcome.reason}`, kw);
  }

  const op = typeof os.pattern === "string" ? os.pattern : undefined;
  const np = typeof ns.pattern === "string" ? ns.pattern : undefined;
  if (op !== np) {
    if (np === undefined) emit("loosen-constraint", `pattern ${showValue(op)} removed`, "pattern");
    else {
      const what =
        op === undefined
          ? `pattern ${showValue(np)} added`
          : `pattern changed from ${showValue(op)} to ${showValue(np)}`;
      const outcome = patternIncludes(old, np);
      if (outcome.kind === "included") {
        if (op === undefined) emit("implied-constraint", `${what}: every allowed string already matches it`, "pattern");
        else emit("loosen-constraint", `${what}: every string the old pattern allowed still matches`, "pattern");
      } else if (outcome.kind === "excluded") {
        // The automaton reads an asserted format by its shape: a string of the shape the format
        // rejects (`0000-00-00`) is no stored value; a valid spelling the pattern refuses is.
        const witness = oldStringOutside(os, outcome.witness, (v) => !matches(np, v));
        emit("tighten-constraint", what, "pattern", { value: witness });
      } else emit("cannot-decide", `${what}: ${outcome.reason}`, "pattern");
    }
  }

  diffFormats(os, ns, old, emit);
}

/**
 * Formats, as the runtime asserts them (`ASSERTED_FORMATS`): a format the runtime does not assert
 * is an annotation (any change compatible). An asserted format removed loosens; one added breaks
 * with a string of the old language that its check rejects (outside its shape, or a near miss such
 * as `2025-02-30T00:00:00Z`), and is implied when the old format is the same.
 */
function diffFormats(os: SchemaObject, ns: SchemaObject, old: StringConstraints, emit: Emit): void {
  const of = typeof os.format === "string" ? os.format : undefined;
  const nf = typeof ns.format === "string" ? ns.format : undefined;
  if (of === nf) return;
  const oldAsserted = of !== undefined && ASSERTED_FORMATS.has(of);
  const newAsserted = nf !== undefined && ASSERTED_FORMATS.has(nf);
  const what =
    of === undefined
      ? `format ${showValue(nf)} added`
      : nf === undefined
        ? `format ${showValue(of)} removed`
        : `format changed from ${showValue(of)} to ${showValue(nf)}`;
  if (!newAsserted) {
    if (oldAsserted) emit("loosen-constraint", what, "format");
    else emit("annotation-change", `${what}: the validators do not assert it (an annotation)`, "format");
    return;
  }
  const shape = FORMAT_SHAPES[nf];
  const outcome = shape === undefined ? undefined : patternIncludes(old, shape);
  if (outcome?.kind === "excluded") {
    const witness = oldStringOutside(os, outcome.witness, (v) => !formatAccepts(nf, v));
    emit("tighten-constraint", `${what}: the allowed string ${showValue(witness)} is not a valid ${nf}`, "format", {
      value: witness,
    });
    return;
  }
  // Spellings the old constraints allow (its own format's valid values first) that the new format rejects.
  const near = [...(of !== undefined ? (FORMAT_EXAMPLES[of] ?? []) : []), ...(NEAR_MISSES[nf] ?? [])].find(
    (v) =>
      typeof v === "string" &&
      !formatAccepts(nf, v) &&
      (["minLength", "maxLength", "pattern", "format"] as const).every((k) => satisfiesScalar(v, k, os)),
  );
  if (near !== undefined)
    emit("tighten-constraint", `${what}: the allowed string ${showValue(near)} is not a valid ${nf}`, "format", {
      value: near,
    });
  else
    emit(
      "cannot-decide",
      `${what}: ${outcome?.kind === "undecided" ? outcome.reason : `whether every allowed string is a valid ${nf} was not decided`}`,
      "format",
    );
}

/** Whether `pattern` matches `value` (an invalid pattern matches nothing). */
function matches(pattern: string, value: string): boolean {
  try {
    return new RegExp(pattern, "u").test(value);
  } catch {
    return false;
  }
}

/**
 * A string the old schema allows that `rejected` holds for: `found` when the old format (if any)
 * accepts it, else a valid spelling of that format meeting the other old constraints, else `found`
 * (the witness check then decides).
 */
function oldStringOutside(os: SchemaObject, found: string, rejected: (v: string) => boolean): string {
  const of = typeof os.format === "string" ? os.format : undefined;
  if (of === undefined || formatAccepts(of, found)) return found;
  const valid = (FORMAT_EXAMPLES[of] ?? []).find(
    (v): v is string =>
      typeof v === "string" &&
      rejected(v) &&
      (["minLength", "maxLength", "pattern", "format"] as const).every((k) => satisfiesScalar(v, k, os)),
  );
  return valid ?? found;
}

/**
 * Number formats (`int32`, `int64`), as the runtime asserts them: removed loosens; added breaks with
 * a number the old constraints allow that the format rejects (`0.5`, `2147483648`), and is implied
 * when every allowed number already meets it (integers within the old bounds).
 */
export function diffNumberFormats(os: SchemaObject, ns: SchemaObject, oldTypes: TypeSet, emit: Emit): void {
  const of = typeof os.format === "string" ? os.format : undefined;
  const nf = typeof ns.format === "string" ? ns.format : undefined;
  if (of === nf) return;
  const oldAsserted = of !== undefined && formatType(of) === "number";
  const newAsserted = nf !== undefined && formatType(nf) === "number";
  if (!newAsserted) {
    if (oldAsserted) emit("loosen-constraint", `format ${showValue(of)} removed from numbers`, "format");
    return;
  }
  const what =
    of === undefined ? `format ${showValue(nf)} added` : `format changed from ${showValue(of)} to ${showValue(nf)}`;
  const integersOnly = oldTypes?.has("integer") === true && !oldTypes.has("number");
  const allowed = (v: number): boolean =>
    (!integersOnly || Number.isInteger(v)) &&
    (["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"] as const).every((k) =>
      satisfiesScalar(v, k, os),
    );
  const candidates = [...(NEAR_MISSES[nf] ?? []), ...(of !== undefined ? (FORMAT_EXAMPLES[of] ?? []) : [])];
  const bad = candidates.find((v): v is number => typeof v === "number" && allowed(v) && !formatAccepts(nf, v));
  if (bad !== undefined) {
    emit("tighten-constraint", `${what}: the allowed number ${showValue(bad)} is not a valid ${nf}`, "format", {
      value: bad,
    });
    return;
  }
  // No near miss is allowed: implied when every allowed number is an integer within the format's range.
  const lower = bound(os, "lower");
  const upper = bound(os, "upper");
  const integral = integersOnly || (typeof os.multipleOf === "number" && Number.isInteger(os.multipleOf));
  const inRange =
    nf === "int64" ||
    (lower !== undefined && upper !== undefined && lower.value >= -(2 ** 31) && upper.value <= 2 ** 31 - 1);
  if (integral && inRange) emit("implied-constraint", `${what}: every allowed number already meets it`, "format");
  else emit("cannot-decide", `${what}: whether every allowed number is a valid ${nf} was not decided`, "format");
}

// ---------------------------------------------------------------------------------------------
// Bounds, lengths and formats

interface Bound {
  value: number;
  exclusive: boolean;
  keyword: string;
}

function bound(s: SchemaObject, side: "lower" | "upper"): Bound | undefined {
  const inclusiveKw = side === "lower" ? "minimum" : "maximum";
  const exclusiveKw = side === "lower" ? "exclusiveMinimum" : "exclusiveMaximum";
  const candidates: Bound[] = [];
  const inclusive = s[inclusiveKw];
  const exclusive = s[exclusiveKw];
  if (typeof inclusive === "number") {
    // draft-04 style `exclusiveMinimum: true` modifies `minimum`.
    candidates.push({
      value: inclusive,
      exclusive: exclusive === true,
      keyword: exclusive === true ? exclusiveKw : inclusiveKw,
    });
  }
  if (typeof exclusive === "number") candidates.push({ value: exclusive, exclusive: true, keyword: exclusiveKw });
  if (candidates.length === 0) return undefined;
  return candidates.reduce((a, b) => {
    const bTighter = side === "lower" ? b.value > a.value : b.value < a.value;
    return bTighter || (b.value === a.value && b.exclusive) ? b : a;
  });
}

function showBound(b: Bound): string {
  return b.exclusive ? `${b.value} (exclusive)` : String(b.value);
}

/** The smallest (lower) or largest (upper) integer a bound admits. */
function integerBound(b: Bound, side: "lower" | "upper"): number {
  if (side === "lower") return b.exclusive ? Math.floor(b.value) + 1 : Math.ceil(b.value);
  return b.exclusive ? Math.ceil(b.value) - 1 : Math.floor(b.value);
}

/** Keywords on numbers and strings that a finite set of old values is checked against. */
const SCALAR_KEYWORDS = [
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "format",
] as const;

/** Whether one value satisfies one scalar keyword of a schema (values of other types pass, as in validators). */
export function satisfiesScalar(value: unknown, keyword: (typeof SCALAR_KEYWORDS)[number], s: SchemaObject): boolean {
  if (typeof value === "number") {
    const lower = bound(s, "lower");
    const upper = bound(s, "upper");
    switch (keyword) {
      case "minimum":
      case "exclusiveMinimum":
        return !lower || (lower.exclusive ? value > lower.value : value >= lower.value);
      case "maximum":
      case "exclusiveMaximum":
        return !upper || (upper.exclusive ? value < upper.value : value <= upper.value);
      case "multipleOf":
        return typeof s.multipleOf !== "number" || isMultiple(value, s.multipleOf);
      case "format":
        return typeof s.format !== "string" || formatAccepts(s.format, value);
      default:
        return true;
    }
  }
  if (typeof value === "string") {
    const length = [...value].length;
    switch (keyword) {
      case "minLength":
        return typeof s.minLength !== "number" || length >= s.minLength;
      case "maxLength":
        return typeof s.maxLength !== "number" || length <= s.maxLength;
      case "pattern":
        try {
          return typeof s.pattern !== "string" || new RegExp(s.pattern, "u").test(value);
        } catch {
          return false;
        }
      case "format":
        return typeof s.format !== "string" || formatAccepts(s.format, value);
      default:
        return true;
    }
  }
  return true;
}

function stringConstraints(s: SchemaObject): StringConstraints {
  const constraints: StringConstraints = {};
  if (typeof s.pattern === "string") constraints.patterns = [s.pattern];
  if (typeof s.minLength === "number") constraints.minLength = s.minLength;
  if (typeof s.maxLength === "number") constraints.maxLength = s.maxLength;
  if (typeof s.format === "string") constraints.format = s.format;
  return constraints;
}

function isMultiple(value: number, divisor: number): boolean {
  const quotient = value / divisor;
  return Math.abs(quotient - Math.round(quotient)) < 1e-9;
}
