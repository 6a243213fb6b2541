/**
 * What the generated fused checks (src/generated/fused-check.ts, emitted by
 * generator/fused-check.ts) import: the context a check runs in, the generic parts of every
 * check (opaque JSON within the limits, the character count) and the session object's check.
 * Only what depends on the types is generated; everything here is typed and written once.
 *
 * A fused check answers one question: would the long path (the limits walk, then the validation
 * walker dispatching every `$type` to its validator) accept this value exactly as it is, with
 * nothing to migrate and nothing to preserve? True or false, never a reason: on false the caller
 * takes the long path, which decides and reports. So every rule here may be stricter than the long
 * path (a false only costs time), never looser. The session object's rules are the walker's own
 * (./session-rules.ts).
 *
 * No module state: the limits and the counts of a call live in its `FusedContext`, made by
 * `fusedContext` and passed to every function of the check.
 */
import { formatCheck, isDateTime } from "../registry/formats.js";
import {
  isConversationIdPart,
  isJsonObject,
  isLookupKey,
  isSessionId,
  isSessionKind,
  localWithConversationId,
} from "./session-rules.js";

export { isDateTime };

/** The limits a check runs under (resolved: every field set). */
export interface FusedLimits {
  maxDepth: number;
  maxKeys: number;
  maxNesting: number;
  /** The value comes from the application (save): plain objects only, no `undefined`. */
  saving: boolean;
  /** Count numbers into `chars` too (a load; else they count 0 there). */
  count?: boolean;
}

/** The limits of one call and what it counted. */
export interface FusedContext {
  readonly maxDepth: number;
  readonly maxKeys: number;
  readonly maxNesting: number;
  readonly saving: boolean;
  /** Whether numbers go into `chars` (a load: the duplicate-key check reads it); else they count 0, still a lower bound. */
  readonly counting: boolean;
  /** The object keys of everything accepted so far (opaque subtrees included): for the duplicate-key check of the text. */
  keys: number;
  /**
   * A lower bound of the length of the compact JSON text of everything accepted so far (strings
   * counted without escapes, numbers at their shortest): text with more characters than this,
   * less its escapes' extra characters, by fewer than five (`"":0,`) cannot hold a member
   * `JSON.parse` dropped. Undercounting only costs time (the text check falls back to the colon
   * scan); counting more than the text must hold would be unsound.
   */
  chars: number;
  /**
   * What the integers counted short in `chars` (a round `1000` at 3, as `1e3` could be written)
   * take more when written without an exponent, summed over those that are a member's value, and
   * the keys of those members (`numberKeys`, at most `MAX_NUMBER_KEYS`; undefined while none).
   * `checkDuplicateKeys` may add it to `chars` once it has found every such member's number in the
   * text written without an exponent. Never more than that: an integer counted here, and its key.
   */
  plainExtra: number;
  numberKeys: string[] | undefined;
}

/** The most distinct member keys of round integers `plainExtra` tracks; past them, it stops growing. */
export const MAX_NUMBER_KEYS = 4;

/** One generated check of a tagged value: `value` at depth `depth`, `nesting` tagged values deep. */
export type TaggedCheck = (context: FusedContext, value: unknown, depth: number, nesting: number) => boolean;

/**
 * A context for one call, or undefined when the call cannot be fused: a save while
 * Object.prototype carries a `toJSON` (JSON.stringify would write something else).
 */
export function fusedContext(limits: FusedLimits): FusedContext | undefined {
  if (limits.saving && typeof (Object.prototype as { toJSON?: unknown }).toJSON === "function") return undefined;
  return {
    maxDepth: limits.maxDepth,
    maxKeys: limits.maxKeys,
    maxNesting: limits.maxNesting,
    saving: limits.saving,
    counting: limits.count === true,
    keys: 0,
    chars: 0,
    plainExtra: 0,
    numberKeys: undefined,
  };
}

/** The test of a format the generator asserts (it emits only formats `formatCheck` knows). */
export function formatTest(name: string): (value: never) => boolean {
  const check = formatCheck(name);
  if (check === undefined) throw new Error(`the fused check asserts format ${JSON.stringify(name)}, which is unknown`);
  return check.test;
}

/**
 * A value about to be written must be a plain object (what JSON.stringify writes as it is). An own
 * `toJSON` needs no test here: its value is a function, which no position accepts; an inherited one
 * (a polluted Object.prototype) makes `fusedContext` decline.
 */
export function plainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Any JSON value inside an opaque subtree, within the limits: containers at most `maxDepth` deep
 * (`depth` is the depth of `value`), at most `maxKeys` keys per object, no "__proto__" key, finite numbers.
 */
export function opaqueJson(context: FusedContext, value: unknown, depth: number): boolean {
  if (typeof value !== "object") {
    if (typeof value === "string") {
      context.chars += value.length + 2;
      return true;
    }
    if (typeof value === "boolean") {
      context.chars += value ? 4 : 5;
      return true;
    }
    if (typeof value !== "number" || !Number.isFinite(value)) return false;
    if (context.counting) context.chars += numberChars(value);
    return true;
  }
  if (value === null) {
    context.chars += 4;
    return true;
  }
  return container(context, value, depth);
}

/**
 * `opaqueJson` for an array or object (not null): strings and numbers inside are checked and counted
 * here (in a local, added once), anything else by `opaqueJson` (a call per scalar cost more than its check).
 */
function container(context: FusedContext, value: object, depth: number): boolean {
  if (depth > context.maxDepth) return false;
  let count = 0;
  if (Array.isArray(value)) {
    const length = value.length;
    for (let index = 0; index < length; index++) {
      const item: unknown = value[index];
      if (typeof item === "string") count += item.length + 2;
      else if (typeof item === "number") {
        if (!Number.isFinite(item)) return false;
        if (context.counting) count += numberChars(item);
      } else if (!opaqueJson(context, item, depth + 1)) return false;
    }
    context.chars += count + (length === 0 ? 2 : length + 1);
    return true;
  }
  if (context.saving && !plainObject(value)) return false;
  const members = value as Record<string, unknown>;
  let keys = 0;
  for (const key in members) {
    if (key === "__proto__") return false;
    keys++;
    const member = members[key];
    count += key.length + 3;
    if (typeof member === "string") count += member.length + 2;
    else if (typeof member === "number") {
      if (!Number.isFinite(member)) return false;
      if (context.counting) count += numberChars(member, context, key);
    } else if (!opaqueJson(context, member, depth + 1)) return false;
  }
  if (keys > context.maxKeys) return false;
  context.keys += keys;
  context.chars += count + (keys === 0 ? 2 : keys + 1);
  return true;
}

/**
 * The fewest characters any JSON number token for the finite number `x` can take (a lower bound:
 * `1e6` is shorter than `1000000`). Exact for the integers below 2^53 and the numbers with one
 * decimal; otherwise from the shortest round-trip digits `String` gives: no token for `x` has fewer.
 * `context` and `key`: `x` is the value of a member with that key; an integer whose exponent
 * spelling is the shorter one adds what its digits take more to `context.plainExtra`.
 */
export function numberChars(x: number, context?: FusedContext, key?: string): number {
  // Small enough to inline: a non-negative int32 with fewer than three trailing zeros, whose
  // decimal digits are its shortest token ("| 0": an int32 remainder, never a float one).
  if (x > 0 && x < 1e9 && (x | 0) === x && (x | 0) % 1000 !== 0)
    return x < 10
      ? 1
      : x < 100
        ? 2
        : x < 1e3
          ? 3
          : x < 1e4
            ? 4
            : x < 1e5
              ? 5
              : x < 1e6
                ? 6
                : x < 1e7
                  ? 7
                  : x < 1e8
                    ? 8
                    : 9;
  return otherNumberChars(x, context, key);
}

/** `numberChars` for every other finite number. */
function otherNumberChars(value: number, context: FusedContext | undefined, key: string | undefined): number {
  let magnitude = value;
  let sign = 0;
  if (magnitude < 0) {
    magnitude = -magnitude;
    sign = 1;
  }
  if (magnitude < 10 && Math.floor(magnitude) === magnitude) return sign + 1;
  if (magnitude < 9007199254740992 && Math.floor(magnitude) === magnitude) {
    // An integer below 2^53: each has its own double, so a token needs all its significant digits;
    // with trailing zeros "<digits>e<zeros>" may be shorter than writing them all.
    let zeros = 0;
    while (magnitude % 10 === 0) {
      magnitude /= 10;
      zeros++;
    }
    const digits = decimalDigits(magnitude);
    if (zeros === 0) return sign + digits;
    // Without an exponent a token of an integer below 2^53 takes all its digits (no leading zeros;
    // a fraction adds at least two characters to one digit less): that is `plain`.
    const plain = digits + zeros;
    const shortest = Math.min(plain, digits + 1 + (zeros < 10 ? 1 : 2));
    if (shortest < plain && context !== undefined && key !== undefined) plainSpelling(context, key, plain - shortest);
    return sign + shortest;
  }
  const tenfold = magnitude * 10;
  if (magnitude < 1e15 && tenfold === Math.floor(tenfold)) {
    // Not an integer: a token needs "." or "e", and below 1 a leading "0." (or "e-"): at least the
    // integer digits, one more digit and the point.
    return sign + (magnitude < 1 ? 3 : decimalDigits(Math.floor(magnitude)) + 2);
  }
  return sign + shortestChars(magnitude);
}

/** Records `extra` characters of a round integer that is the value of a member `key` (see `FusedContext.plainExtra`). */
function plainSpelling(context: FusedContext, key: string, extra: number): void {
  let keys = context.numberKeys;
  if (keys === undefined) keys = context.numberKeys = [];
  if (!keys.includes(key)) {
    if (keys.length >= MAX_NUMBER_KEYS) return;
    keys.push(key);
  }
  context.plainExtra += extra;
}

/** The decimal digits of the integer `x`, 1 <= x < 2^53. */
function decimalDigits(x: number): number {
  if (x < 1e5) return x < 10 ? 1 : x < 100 ? 2 : x < 1e3 ? 3 : x < 1e4 ? 4 : 5;
  let digits = 5;
  for (let power = 1e5; x >= power && digits < 16; power *= 10) digits++;
  return digits;
}

/** `numberChars` from the shortest round-trip digits of the positive `x` (`String` gives them). */
function shortestChars(x: number): number {
  const text = String(x);
  let end = text.indexOf("e");
  if (end === -1) end = text.length;
  let first = -1;
  let last = -1;
  for (let index = 0; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code >= 49 && code <= 57) {
      if (first === -1) first = index;
      last = index;
    }
  }
  let digits = 0;
  for (let index = first; index <= last && index !== -1; index++) if (text.charCodeAt(index) !== 46) digits++;
  if (Math.floor(x) === x) return digits;
  return digits + (x < 1 ? 2 : 1);
}

/** A string, number, boolean or null in the character count. */
export function scalarChars(value: string | number | boolean | null): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value === "number") return numberChars(value);
  return value === false ? 5 : 4;
}

/**
 * A session object at depth `depth` (./session-rules.ts), its state-bag values checked by
 * `providerState` (the generated ProviderState dispatch). A `quarantine` section, a "__proto__"
 * key or any other key: "no" (the walker decides those).
 */
export function checkSessionObject(
  context: FusedContext,
  session: unknown,
  depth: number,
  providerState: TaggedCheck,
): boolean {
  if (!isJsonObject(session) || depth + 1 > context.maxDepth || context.maxKeys < 4) return false;
  if (context.saving && !plainObject(session)) return false;
  let members = 0;
  let count = 0;
  let hasId = false;
  let kind: unknown;
  let conversationId: unknown;
  let bag: unknown;
  for (const key in session) {
    const value = session[key];
    if (value === undefined) continue; // written as nothing; the walker skips it too
    members++;
    switch (key) {
      case "id":
        if (!isSessionId(value)) return false;
        hasId = true;
        count += 5 + value.length + 2;
        break;
      case "kind":
        if (!isSessionKind(value)) return false;
        kind = value;
        count += 7 + value.length + 2;
        break;
      case "conversationId": {
        const chars = conversationIdChars(context, value);
        if (chars < 0) return false;
        conversationId = value;
        count += 17 + chars;
        break;
      }
      case "stateBag":
        bag = value;
        count += 11;
        break;
      default:
        return false;
    }
  }
  if (!hasId || bag === undefined || localWithConversationId(kind, conversationId)) return false;
  if (!isJsonObject(bag) || (context.saving && !plainObject(bag))) return false;
  let entries = 0;
  for (const key in bag) {
    entries++;
    count += key.length + 3;
    if (!isLookupKey(key) || !providerState(context, bag[key], depth + 2, 0)) return false;
  }
  if (entries > context.maxKeys) return false;
  context.keys += members + entries;
  // The braces and commas of the session and of its state bag.
  context.chars += count + (members === 0 ? 2 : members + 1) + (entries === 0 ? 2 : entries + 1);
  return true;
}

/** The characters of a valid `conversationId` value (its keys counted), or -1. */
function conversationIdChars(context: FusedContext, value: unknown): number {
  if (typeof value === "string") return value.length + 2;
  if (!isJsonObject(value) || (context.saving && !plainObject(value))) return -1;
  let names = 0;
  let count = 0;
  for (const name in value) {
    names++;
    const id = value[name];
    if (!isLookupKey(name) || !isConversationIdPart(id)) return -1;
    count += name.length + 3 + id.length + 2;
  }
  if (names > context.maxKeys) return -1;
  context.keys += names;
  return count + (names === 0 ? 2 : names + 1);
}
