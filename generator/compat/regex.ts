/**
 * Regular-expression inclusion for the compatibility check: does every string the old schema
 * accepts also match the new `pattern`? Decided on finite automata (refa), not on pattern text,
 * so `^[a-z]+$` -> `^[a-z0-9]+$` is a widening and `^a` -> `a` is no change at all.
 *
 * JSON Schema patterns are ECMAScript regexes (ajv compiles them with the `u` flag) that match
 * anywhere in the string, so a pattern `P` stands for the language `[^]*(?:P)[^]*`. A string
 * constraint set (patterns, length bounds, a known format's shape, an enum) becomes the
 * intersection of such languages. Anything refa cannot turn into an automaton (backreferences,
 * lookarounds it can not eliminate) or an automaton that grows past a node budget gives
 * `undecided`, never a guess.
 */
import { CharBase, type CharSet, DFA, JS, NFA, Transformers, getIntersectionWordSets, transform } from "refa";
import { ASSERTED_FORMATS } from "./formats.js";

/** Nodes one automaton may have: keeps a pathological pattern from stalling `gen --check`. */
const MAX_NODES = 20_000;
/**
 * Product states the on-the-fly inclusion search may visit before it gives up (and the whole-DFA
 * construction is tried). Each state is a pair of subsets reached by one word; a pattern like
 * `(a|b)*a(a|b){12}` needs about 2^13 of them, far below its 20,000-node complete DFA's cost.
 */
const MAX_PRODUCT_STATES = 60_000;
const MAX_CHARACTER = 0x10ffff;

export type LanguageOutcome =
  | { kind: "included" }
  /** `witness`: a string in the old language that the new constraint rejects. */
  | { kind: "excluded"; witness: string }
  /** `budget`: the automaton size limit stopped the analysis (a larger budget might decide it). */
  | { kind: "undecided"; reason: string; budget?: "automaton-size" };

/** The constraints on a string, as the inclusion check reads them. */
export interface StringConstraints {
  patterns?: readonly string[];
  minLength?: number;
  maxLength?: number;
  /**
   * A format: when the runtime asserts it (`ASSERTED_FORMATS`) its shape (`FORMAT_SHAPES`) bounds the
   * old language; any other format is an annotation and bounds nothing.
   */
  format?: string;
}

/**
 * Regular over-approximations of formats: every value the runtime's format check accepts matches
 * the shape (the shape may accept more, e.g. `2025-02-30`). Sound for "the old format implies the
 * new pattern"; never used to prove a value valid under a new format.
 */
export const FORMAT_SHAPES: Readonly<Record<string, string>> = {
  "date-time": "^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:[Zz]|[+-]\\d{2}:\\d{2})$",
  date: "^\\d{4}-\\d{2}-\\d{2}$",
  time: "^\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?(?:[Zz]|[+-]\\d{2}(?::?\\d{2})?)$",
  uuid: "^(?:[Uu][Rr][Nn]:[Uu][Uu][Ii][Dd]:)?[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}$",
  ipv4: "^(?:\\d{1,3}\\.){3}\\d{1,3}$",
  ipv6: "^[0-9A-Fa-f:.]+$",
  // ajv-formats' own expressions, their `i` flag written out as both cases (ASCII only, as `i` without `u` reads them).
  email:
    "^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-zA-Z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?\\.)+[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?$",
  hostname: "^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*)$",
  duration: "^P(?:(?:\\d+Y)?(?:\\d+M)?(?:\\d+D)?(?:T(?:\\d+H)?(?:\\d+M)?(?:\\d+S)?)?|(?:\\d+W)?)$",
  uri: "^[A-Za-z][A-Za-z0-9+.-]*:\\S*$",
  url: "^(?:[Hh][Tt][Tt][Pp][Ss]?|[Ff][Tt][Pp]):\\/\\/\\S+$",
  "json-pointer": "^(?:\\/(?:[^~/]|~0|~1)*)*$",
  "relative-json-pointer": "^(?:0|[1-9][0-9]*)(?:#|(?:\\/(?:[^~/]|~0|~1)*)*)$",
};

/** Why a constraint was not analysed; `budget` when it was the automaton size limit (not the pattern itself). */
export class RegexUndecidable extends Error {
  constructor(
    message: string,
    readonly budget?: "automaton-size",
  ) {
    super(message);
  }
}

const cache = new Map<string, NFA>();

/** The automaton of the strings a JSON Schema `pattern` matches (anywhere in the string). */
export function patternAutomaton(pattern: string): NFA {
  const cached = cache.get(pattern);
  if (cached) return cached;
  let nfa: NFA;
  try {
    new RegExp(pattern, "u");
    const { expression, maxCharacter } = JS.Parser.fromLiteral({ source: `[^]*(?:${pattern})[^]*`, flags: "u" }).parse({
      backreferences: "throw",
    });
    let simplified = transform(Transformers.simplify({ ignoreAmbiguity: true, ignoreOrder: true }), expression);
    simplified = transform(Transformers.patternEdgeAssertions({ remove: true }), simplified);
    nfa = NFA.fromRegex(simplified, { maxCharacter }, { assertions: "throw" }, new NFA.LimitedNodeFactory(MAX_NODES));
  } catch (error) {
    throw new RegexUndecidable(`pattern ${JSON.stringify(pattern)} can not be analysed (${(error as Error).message})`);
  }
  if (cache.size > 500) cache.clear();
  cache.set(pattern, nfa);
  return nfa;
}

function lengthAutomaton(min: number, max: number | undefined): NFA {
  const any = `[^]`;
  const hi = max === undefined ? "" : String(max);
  if (min > 1000 || (max !== undefined && max > 1000))
    throw new RegexUndecidable("length bounds above 1000 are not analysed as automata");
  const { expression, maxCharacter } = JS.Parser.fromLiteral({ source: `^${any}{${min},${hi}}$`, flags: "u" }).parse();
  const unanchored = transform(Transformers.patternEdgeAssertions({ remove: true }), expression);
  return NFA.fromRegex(unanchored, { maxCharacter }, { assertions: "throw" }, new NFA.LimitedNodeFactory(MAX_NODES));
}

/** The old side: the intersection of every constraint (as one NFA). */
function constraintAutomaton(c: StringConstraints): NFA {
  let result: NFA | undefined;
  const add = (nfa: NFA): void => {
    result = result ? NFA.fromIntersection(result, nfa, new NFA.LimitedNodeFactory(MAX_NODES)) : nfa.copy();
  };
  try {
    for (const pattern of c.patterns ?? []) add(patternAutomaton(pattern));
    if (c.format !== undefined && ASSERTED_FORMATS.has(c.format)) {
      const shape = FORMAT_SHAPES[c.format];
      if (shape !== undefined) add(patternAutomaton(shape));
    }
    if ((c.minLength ?? 0) > 0 || c.maxLength !== undefined) add(lengthAutomaton(c.minLength ?? 0, c.maxLength));
    return result ?? NFA.all({ maxCharacter: MAX_CHARACTER });
  } catch (error) {
    if (error instanceof RegexUndecidable) throw error;
    throw new RegexUndecidable(
      `string constraints too large to analyse (${(error as Error).message})`,
      "automaton-size",
    );
  }
}

/** Is every string satisfying `old` also accepted by `accepts` (an automaton of the new constraint)? */
function includedIn(old: StringConstraints, accepts: () => NFA): LanguageOutcome {
  try {
    const oldNfa = constraintAutomaton(old);
    const newNfa = accepts();
    const lazy = lazyInclusion(oldNfa, newNfa, MAX_PRODUCT_STATES);
    if (lazy !== undefined) return lazy;
    const rejected = DFA.fromFA(newNfa, new DFA.LimitedNodeFactory(MAX_NODES));
    rejected.complement();
    for (const wordSet of getIntersectionWordSets(oldNfa, rejected, MAX_NODES))
      return { kind: "excluded", witness: readable(wordSet) };
    return { kind: "included" };
  } catch (error) {
    if (!(error instanceof RegexUndecidable))
      return { kind: "undecided", reason: `regular-expression analysis failed (${(error as Error).message})` };
    return error.budget === undefined
      ? { kind: "undecided", reason: error.message }
      : { kind: "undecided", reason: error.message, budget: error.budget };
  }
}

/**
 * On-the-fly inclusion: a breadth-first search of the product of the two subset constructions,
 * built only as far as words reach, for a word the old automaton accepts and the new one rejects.
 * The first such word found is a shortest counterexample (the witness string). A search that runs
 * out of states proves inclusion; one that exceeds `budget` states returns undefined (the caller
 * falls back to whole automata). Neither DFA is ever built completely.
 */
export function lazyInclusion(old: NFA, next: NFA, budget: number): LanguageOutcome | undefined {
  const ids = new Map<NFA.Node, number>();
  const idOf = (n: NFA.Node): number => {
    let id = ids.get(n);
    if (id === undefined) ids.set(n, (id = ids.size));
    return id;
  };
  const keyOf = (a: readonly NFA.Node[], b: readonly NFA.Node[]): string =>
    `${a
      .map(idOf)
      .sort((x, y) => x - y)
      .join(",")}|${b
      .map(idOf)
      .sort((x, y) => x - y)
      .join(",")}`;
  interface State {
    old: NFA.Node[];
    next: NFA.Node[];
    parent: State | undefined;
    via: CharSet | undefined;
  }
  const start: State = { old: [old.initial], next: [next.initial], parent: undefined, via: undefined };
  const seen = new Set<string>([keyOf(start.old, start.next)]);
  const queue: State[] = [start];
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    if (state.old.some((n) => old.finals.has(n)) && !state.next.some((n) => next.finals.has(n))) {
      const word: CharSet[] = [];
      for (let s: State | undefined = state; s?.via !== undefined; s = s.parent) word.push(s.via);
      return { kind: "excluded", witness: readable(word.reverse()) };
    }
    const sets: CharSet[] = [];
    for (const node of state.old) for (const cs of node.out.values()) sets.push(cs);
    if (sets.length === 0) continue;
    for (const node of state.next) for (const cs of node.out.values()) sets.push(cs);
    for (const base of new CharBase(sets).sets) {
      const step = (nodes: readonly NFA.Node[]): NFA.Node[] => {
        const out = new Set<NFA.Node>();
        for (const node of nodes) for (const [to, cs] of node.out) if (!cs.isDisjointWith(base)) out.add(to);
        return [...out];
      };
      const oldNext = step(state.old);
      if (oldNext.length === 0) continue; // no old word goes on this way
      const newNext = step(state.next);
      const key = keyOf(oldNext, newNext);
      if (seen.has(key)) continue;
      if (seen.size >= budget) return undefined;
      seen.add(key);
      queue.push({ old: oldNext, next: newNext, parent: state, via: base });
    }
  }
  return { kind: "included" };
}

/**
 * Does every string under `old` satisfy `next` (patterns and lengths; an asserted format by its
 * shape)? A string outside the new shape is a sure witness; inclusion in the shape of a format the
 * old strings do not have is not a proof (the shape accepts more than the format).
 */
export function stringIncludes(old: StringConstraints, next: StringConstraints): LanguageOutcome {
  const formatGap = next.format !== undefined && ASSERTED_FORMATS.has(next.format) && next.format !== old.format;
  const outcome = includedIn(old, () => constraintAutomaton(next));
  if (outcome.kind === "included" && formatGap)
    return { kind: "undecided", reason: `whether every string is a valid ${next.format} was not decided` };
  return outcome;
}

/** Does every string under `old` match `pattern`? */
export function patternIncludes(old: StringConstraints, pattern: string): LanguageOutcome {
  return includedIn(old, () => patternAutomaton(pattern));
}

/** Does every string under `old` have a length in `[min, max]`? (A pattern can imply a length.) */
export function lengthIncludes(old: StringConstraints, min: number, max: number | undefined): LanguageOutcome {
  if (
    (old.patterns ?? []).length === 0 &&
    (old.format === undefined || !ASSERTED_FORMATS.has(old.format) || FORMAT_SHAPES[old.format] === undefined)
  ) {
    // Plain length bounds: no automaton needed.
    const omin = old.minLength ?? 0;
    const omax = old.maxLength;
    if (omin >= min && (max === undefined || (omax !== undefined && omax <= max))) return { kind: "included" };
    // The shortest old length the new bounds reject (at least the old minimum, or it is no old string).
    const length = omin < min ? omin : Math.max(omin, (max as number) + 1);
    if (omax !== undefined && length > omax) return { kind: "included" }; // empty old language
    return { kind: "excluded", witness: "a".repeat(length) };
  }
  return includedIn(old, () => lengthAutomaton(min, max));
}

/** Is there a string both patterns match? Returns one, or undefined when none exists. */
export function patternOverlap(
  a: string,
  b: string,
): { overlap: true; witness: string } | { overlap: false } | { undecided: string } {
  try {
    for (const wordSet of getIntersectionWordSets(patternAutomaton(a), patternAutomaton(b), MAX_NODES)) {
      return { overlap: true, witness: readable(wordSet) };
    }
    return { overlap: false };
  } catch (error) {
    return { undecided: (error as Error).message };
  }
}

/** Keys matched by `pattern` that none of `others` match (for a pattern whose keys leave a group), or undefined. */
export function patternMinus(pattern: string, others: readonly string[]): LanguageOutcome {
  return includedIn({ patterns: [pattern] }, () => {
    let union: NFA | undefined;
    for (const other of others) {
      const nfa = patternAutomaton(other);
      if (union) union.union(nfa);
      else union = nfa.copy();
    }
    return union ?? NFA.empty({ maxCharacter: MAX_CHARACTER });
  });
}

/** A readable word from a word set: letters and digits where the set allows them. */
function readable(wordSet: readonly CharSet[]): string {
  const preferred = ["a", "0", "A", " ", "-", "_", ".", ":", "T", "Z"].map((ch) => ch.codePointAt(0)!);
  return wordSet
    .map((set) => {
      for (const codePoint of preferred) if (set.has(codePoint)) return String.fromCodePoint(codePoint);
      // The first printable ASCII character of any range.
      for (const range of set.ranges) {
        const printable = Math.max(range.min, 0x21);
        if (printable <= Math.min(range.max, 0x7e)) return String.fromCodePoint(printable);
      }
      const first = set.ranges[0]!.min;
      return String.fromCodePoint(first >= 0xd800 && first <= 0xdfff && set.has(0xe000) ? 0xe000 : first);
    })
    .join("");
}
