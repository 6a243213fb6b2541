/**
 * Safe JSON input: `JSON.parse` plus limits, with errors that say where and why; and the same
 * limits checked on a value about to be written, so nothing is written that could not be read.
 *
 * - Size: the UTF-8 byte length of the text is checked before parsing (default 64 MiB).
 * - Depth and keys: checked after `JSON.parse` by a walk whose recursion stops one level past
 *   `maxDepth` (an explicit stack instead when `maxDepth` is set above 1024), so a 100,000-deep
 *   array is a clear `json-too-deep` error, never a stack overflow.
 *   V8's `JSON.parse` is itself iterative; what overflows on deep data is everything after it
 *   (`JSON.stringify`, recursive validators), which is why the depth is bounded at the door.
 * - Malformed JSON: the error carries line, column and a snippet with a caret (`json-syntax.ts`).
 * - Numbers: a number no double holds (`1e400`, which `JSON.parse` reads as Infinity) is refused
 *   with its pointer (`json-value`), found by the same walk; no writer could give it back, and
 *   `JSON.stringify` would write null. The writing side refuses NaN and Infinity alike.
 * - Duplicate keys: `JSON.parse` keeps the last of two equal keys silently; readers disagree on
 *   which wins, so a repeated key is refused (`json-duplicate-key`, naming the object, the key and
 *   the line). The check counts the colons that may follow a key (a native `indexOf` hop per
 *   colon) against the keys the walk counted; only when they differ does a full scan look.
 *
 * Prototype keys (decision): `JSON.parse` makes `"__proto__"` an own data property, harmless by
 * itself; only a later `Object.assign`/deep-merge/`obj[k] = v` copy would set a prototype from it.
 * `parseJson` on its own rejects such a key anywhere (`json-proto-key`, naming its pointer), the
 * safe default for arbitrary input; `protoKeys: "keep"` keeps it as plain own data. Session and
 * chat documents are read with "keep": a tool's output is legitimate data, and statebag never
 * copies values with `[[Set]]` semantics; the session layer rejects the key only where statebag
 * itself looks things up by key (see `serialization.ts`). `"constructor"` and `"prototype"` are
 * ordinary data keys everywhere.
 */
import { StatebagError, type StatebagErrorCode } from "../core/errors.js";
import { boundedPointer, jsonPointer, quoted, shortPointer } from "../core/json.js";
import { describeSyntaxError, locateDuplicateKey, type DuplicateKey } from "./json-syntax.js";
import { detailText, type ProblemDetails } from "../core/problems.js";

export interface JsonLimits {
  /** Maximum size of the text in UTF-8 bytes. Default 64 MiB. */
  maxBytes?: number;
  /** Maximum nesting of arrays/objects (`[]` is depth 1). Default 256. */
  maxDepth?: number;
  /** Maximum number of keys in any one object. Default 100,000. */
  maxKeys?: number;
  /** What to do with a `"__proto__"` key: `"reject"` (default) or `"keep"` as plain own data. */
  protoKeys?: "reject" | "keep";
}

export const DEFAULT_JSON_LIMITS: Readonly<Required<JsonLimits>> = Object.freeze({
  maxBytes: 64 * 1024 * 1024,
  maxDepth: 256,
  maxKeys: 100_000,
  protoKeys: "reject",
});

/**
 * The JSON family of `StatebagErrorCode`. `json-value`: a value to be written is not plain JSON data
 * (NaN, a Date, a function, ...), so it would not read back equal; or a number read is not finite
 * (`1e400`). `json-duplicate-key`: an object of the text holds a key twice.
 */
export type JsonErrorCode = Extract<StatebagErrorCode, `json-${string}`>;

/** The input is not acceptable JSON. `code` says which rule it broke. */
export class JsonParseError extends StatebagError {
  /** 1-based line and column of a syntax error (UTF-16 code units), when known. */
  readonly line?: number;
  readonly column?: number;
  /** 0-based offset of a syntax error in the text, when known. */
  readonly position?: number;
  /** JSON pointer of the offending value, for limit errors found after parsing. */
  readonly pointer?: string;
  /**
   * The finding as data, for the validation problem made from this error: `limit` (the option,
   * its value and the size found) for size, depth and key-count limits; `syntax` and
   * `duplicate-key` with the position in the text.
   */
  readonly problemDetails?: ProblemDetails;
  constructor(
    code: JsonErrorCode,
    message: string,
    details: {
      hint?: string;
      line?: number;
      column?: number;
      position?: number;
      pointer?: string;
      cause?: unknown;
      problemDetails?: ProblemDetails;
    } = {},
  ) {
    super(code, message, { hint: details.hint, cause: details.cause });
    this.line = details.line;
    this.column = details.column;
    this.position = details.position;
    this.pointer = details.pointer;
    if (details.problemDetails !== undefined) this.problemDetails = details.problemDetails;
  }
}

/** @internal The limits with every default filled in. */
export function resolveLimits(limits: JsonLimits | undefined): Required<JsonLimits> {
  if (limits === undefined) return DEFAULT_JSON_LIMITS;
  // Already complete (a frozen preset): used as it is, no copy per call.
  if (
    limits.maxBytes !== undefined &&
    limits.maxDepth !== undefined &&
    limits.maxKeys !== undefined &&
    limits.protoKeys !== undefined
  )
    return limits as Required<JsonLimits>;
  return {
    maxBytes: limits.maxBytes ?? DEFAULT_JSON_LIMITS.maxBytes,
    maxDepth: limits.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth,
    maxKeys: limits.maxKeys ?? DEFAULT_JSON_LIMITS.maxKeys,
    protoKeys: limits.protoKeys ?? DEFAULT_JSON_LIMITS.protoKeys,
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(n % 1024 === 0 ? 0 : 1)} KiB`;
  return `${n} bytes`;
}

function tooLarge(bytes: number, max: number): JsonParseError {
  return new JsonParseError(
    "json-too-large",
    `JSON input is ${formatBytes(bytes)}, over the limit of ${formatBytes(max)}`,
    {
      hint: "raise limits.maxBytes if documents this large are expected",
      problemDetails: { kind: "limit", option: "maxBytes", limit: max, actual: bytes },
    },
  );
}

/** Throws `json-too-large` when `text` is over `maxBytes` in UTF-8. */
function checkTextSize(text: string, maxBytes: number): void {
  // UTF-8 length is between length and 3 * length: only count when it matters.
  const length = text.length;
  if (length > maxBytes) throw tooLarge(Buffer.byteLength(text, "utf8"), maxBytes);
  if (length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > maxBytes) throw tooLarge(bytes, maxBytes);
  }
}

/**
 * Checks JSON text about to be written against the size limit `parseJson` applies when reading
 * it back. Throws `JsonParseError` (`json-too-large`).
 */
export function checkJsonSize(text: string, limits?: JsonLimits): void {
  checkTextSize(text, resolveLimits(limits).maxBytes);
}

/**
 * Parses JSON text (a string, or UTF-8 bytes) within `limits`. Throws `JsonParseError`.
 * A leading byte-order mark is ignored.
 */
export function parseJson(input: string | Uint8Array, limits?: JsonLimits): unknown {
  const lim = resolveLimits(limits);
  const { text, value } = parseJsonText(input, lim);
  checkDuplicateKeys(text, checkedKeys(value, lim));
  return value;
}

/**
 * @internal The first half of `parseJson`: the size limit, UTF-8 decoding, a leading byte-order
 * mark and `JSON.parse` with its syntax errors. The parsed value still needs the depth/keys/number
 * checks (`checkedKeyCount`, or a fused check that folds them in) and then `checkDuplicateKeys`.
 */
export function parseJsonText(input: string | Uint8Array, lim: Required<JsonLimits>): { text: string; value: unknown } {
  let text: string;
  if (typeof input === "string") {
    checkTextSize(input, lim.maxBytes);
    text = input;
  } else if (input instanceof Uint8Array) {
    if (input.byteLength > lim.maxBytes) throw tooLarge(input.byteLength, lim.maxBytes);
    try {
      text = utf8.decode(input);
    } catch (cause) {
      throw new JsonParseError("json-input", "JSON input is not valid UTF-8", {
        cause,
        hint: "JSON text must be UTF-8 encoded",
      });
    }
  } else {
    throw new JsonParseError(
      "json-input",
      `JSON input must be a string or UTF-8 bytes, found ${input === null ? "null" : typeof input}`,
    );
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);

  try {
    return { text, value: JSON.parse(text) };
  } catch (cause) {
    const report = describeSyntaxError(text, cause);
    throw new JsonParseError("json-syntax", report.message, {
      line: report.line,
      column: report.column,
      position: report.position,
      cause,
      problemDetails: { kind: "syntax", line: report.line, column: report.column, position: report.position },
    });
  }
}

/**
 * @internal Throws `json-duplicate-key` when `text` holds a key twice in one object, given `keys`,
 * the number of object keys `JSON.parse(text)` produced (every object, at every depth), and when
 * known (else -1) `chars`, a lower bound of the value's compact text (see `withinCharBound`).
 *
 * JSON.parse keeps the last of two equal keys without a word. A structural colon follows every
 * key, so counting the colons that can be structural bounds the text's keys from above: when the
 * bound equals the keys parsed, no key was dropped. Only when it does not (a colon right after a
 * string that opens a value, or a duplicate) does the exact scan look.
 */
export function checkDuplicateKeys(
  text: string,
  keys: number,
  chars = -1,
  plainExtra = 0,
  numberKeys?: readonly string[],
): void {
  if (keys === 0) return;
  if (chars >= 0) {
    if (plainExtra > 0 && numberKeys !== undefined) {
      if (withinPlainBound(text, chars, plainExtra, numberKeys)) return;
    } else if (withinCharBound(text, chars)) return;
  }
  if (keyColonBound(text) !== keys) {
    const dup = locateDuplicateKey(text);
    if (dup !== null) throw duplicateKeyError(dup);
  }
}

/**
 * True when `text` is too short to hold a member `JSON.parse` dropped, given `chars`, a lower bound
 * of the length of the compact text of the value parsed (the fused check counts it: every string
 * and key at its length plus quotes, numbers at their shortest, structure, literals).
 *
 * The text is that value's tokens (each string longer by its escapes' extra characters), whitespace,
 * and the members of any duplicate key: each at least `"":0` plus a comma, five characters. So when
 * the text's length less its escapes' extra is under `chars + 5`, no member was dropped. No scan at
 * all for compact text without escapes (what `JSON.stringify` writes for most documents); else one
 * hop per backslash, stopping as soon as the bound holds. Whitespace (indented text) fails it: the
 * colon count decides then.
 */
function withinCharBound(text: string, chars: number): boolean {
  let slack = text.length - chars;
  // Never negative for a true lower bound; if it were, the bound says nothing.
  if (slack < 0) return false;
  if (slack < 5) return true;
  let backslash = text.indexOf("\\");
  while (backslash !== -1) {
    // Every backslash of valid JSON text opens an escape: "\\uXXXX" is 5 longer than its character, the others 1.
    const unicodeEscape = text.charCodeAt(backslash + 1) === 117;
    slack -= unicodeEscape ? 5 : 1;
    if (slack < 5) return true;
    backslash = text.indexOf("\\", backslash + (unicodeEscape ? 6 : 2));
  }
  return false;
}

/**
 * `withinCharBound`, and else the same bound with `plainExtra` more: the round integers that are
 * the values of members keyed `numberKeys`, counted in `chars` at their shortest (`1e3` for `1000`),
 * at all their digits (`FusedContext.plainExtra`). Sound once every number written as such a
 * member's value is written without an exponent, which `plainNumbersUnder` finds out: then each of
 * those integers takes all its digits in the text, and the rest of the bound is `withinCharBound`'s.
 *
 * That search finds every member with one of those keys only when every key is written as it is
 * (`"inputTokenCount"`, never `"input\u0054okenCount"`): the hop per backslash that takes the
 * escapes' extra characters off the slack makes sure of that too (`endsKey`).
 */
function withinPlainBound(text: string, chars: number, plainExtra: number, numberKeys: readonly string[]): boolean {
  let slack = text.length - chars;
  // Never negative for a true lower bound; if it were, the bound says nothing.
  if (slack < 0) return false;
  if (slack < 5) return true;
  let keyEscaped = false;
  let end = -1;
  let backslash = text.indexOf("\\");
  while (backslash !== -1) {
    // Every backslash of valid JSON text opens an escape: "\\uXXXX" is 5 longer than its character, the others 1.
    const unicodeEscape = text.charCodeAt(backslash + 1) === 117;
    slack -= unicodeEscape ? 5 : 1;
    if (slack < 5) return true;
    const after = backslash + (unicodeEscape ? 6 : 2);
    backslash = text.indexOf("\\", after);
    if (!keyEscaped) {
      if (end < after) end = text.indexOf('"', after);
      keyEscaped = end === -1 || ((backslash === -1 || backslash > end) && endsKey(text, end));
    }
  }
  slack -= plainExtra;
  return !keyEscaped && slack >= 0 && slack < 5 && plainNumbersUnder(text, numberKeys);
}

/**
 * Whether the string ending at the quote `end` is a key: a colon follows it, past any whitespace.
 *
 * Used on the strings that hold escapes: every backslash of valid JSON text opens an escape inside a
 * string, and once a string's last escape is read, the next quote ends it (the escape of a quote
 * inside it is read first). So `withinPlainBound` looks for the first quote past each escape, and
 * when the next backslash comes after it, that quote ends the string. Linear: a search for a
 * string's end starts past the previous one's, and the whitespace read after it is its own.
 */
function endsKey(text: string, end: number): boolean {
  let pos = end + 1;
  let code = text.charCodeAt(pos);
  while (code === 32 || code === 10 || code === 13 || code === 9) code = text.charCodeAt(++pos);
  return code === 58;
}

/**
 * True when no member keyed one of `keys` in `text` (valid JSON text, every key of it written
 * without escapes) has a number written with an exponent (`1e3`, `1E+3`) for its value.
 *
 * A key is found by a native search for the tail of `"key"` from its rarest-looking character on
 * (`Count"` of `"inputTokenCount"`: a search stops at every occurrence of its first character, and a
 * quote is everywhere), one search for all the keys that share a tail; a hit where one of them reads
 * in full, then a colon (after any whitespace), is such a member. Its value is read up to the end of
 * its number.
 *
 * Why a hit is a member: the hit's last quote follows a key character, not a backslash, so it ends a
 * string; its first quote cannot end one (key characters would follow outside a string), so the
 * string holds exactly the key, unless that first quote is an escaped one inside a longer string,
 * whose end is then the hit's last quote: a colon after it would make it a key written with an escape,
 * which the caller has ruled out. A key that needs escapes itself (a quote, a backslash, a control
 * character) cannot be written without them: false. Linear: a tail ends with the only quote in it,
 * so two hits never overlap; a full compare that runs long reads a quote and key characters, where
 * no hit lies; and a member's value is read up to its end, a character no number holds.
 */
function plainNumbersUnder(text: string, keys: readonly string[]): boolean {
  // The keys (quoted) grouped by their search tail.
  const groups = new Map<string, string[]>();
  for (const key of keys) {
    for (let index = 0; index < key.length; index++) {
      const code = key.charCodeAt(index);
      if (code < 32 || code === 34 || code === 92) return false;
    }
    const quoted = `"${key}"`;
    const tail = quoted.slice(rarestFrom(quoted));
    const group = groups.get(tail);
    if (group === undefined) groups.set(tail, [quoted]);
    else group.push(quoted);
  }
  for (const [tail, group] of groups) if (!plainNumbersAt(text, tail, group)) return false;
  return true;
}

/**
 * `plainNumbersUnder` for the keys `group` (quoted), which all end with `tail`. The value after a
 * hit is read first: only a number with an exponent needs the key compared (most hits of a shared
 * tail are other keys, and most values have none).
 */
function plainNumbersAt(text: string, tail: string, group: readonly string[]): boolean {
  const length = text.length;
  let hit = text.indexOf(tail);
  while (hit !== -1) {
    let pos = hit + tail.length;
    let code = text.charCodeAt(pos);
    while (code === 32 || code === 10 || code === 13 || code === 9) code = text.charCodeAt(++pos);
    if (code === 58) {
      code = text.charCodeAt(++pos);
      while (code === 32 || code === 10 || code === 13 || code === 9) code = text.charCodeAt(++pos);
      // A number: "-", digits, ".", then "e"/"E" for an exponent; anything else ends it (no quote inside).
      while (pos < length) {
        if ((code - 48) >>> 0 > 9 && code !== 45 && code !== 43 && code !== 46) {
          if ((code | 0x20) === 101 && keyAt(text, hit, tail, group)) return false;
          break;
        }
        code = text.charCodeAt(++pos);
      }
    }
    hit = text.indexOf(tail, hit + tail.length);
  }
  return true;
}

/** Whether one of `group` (quoted keys ending with `tail`) is written where `tail` is found at `hit`. */
function keyAt(text: string, hit: number, tail: string, group: readonly string[]): boolean {
  for (const quoted of group) {
    const start = hit - (quoted.length - tail.length);
    if (start >= 0 && text.startsWith(quoted, start)) return true;
  }
  return false;
}

/** Lower-case letters by how often English text uses them, the most first. */
const LETTER_FREQUENCY = "etaoinsrhldcumfpgwybvkxjqz";

/**
 * Where in `quoted` (`"key"`) the search tail starts: at the character text is least likely to be
 * full of (anything but a lower-case letter, a digit, a space or punctuation JSON writes everywhere
 * first, then the rarer letters), the last such one; never at the closing quote. Speed only.
 */
function rarestFrom(quoted: string): number {
  let best = 0;
  let bestRank = 100;
  for (let index = 1; index < quoted.length - 1; index++) {
    const code = quoted.charCodeAt(index);
    const letter = LETTER_FREQUENCY.indexOf(String.fromCharCode(code));
    const rank =
      letter !== -1 ? 26 - letter : code >= 48 && code <= 57 ? 30 : code === 32 || code === 58 || code === 44 ? 40 : 0;
    if (rank <= bestRank) {
      best = index;
      bestRank = rank;
    }
  }
  return best;
}

/** @internal `checkJsonLimits` on resolved limits, returning the number of object keys in the value. */
export function checkedKeyCount(value: unknown, lim: Required<JsonLimits>): number {
  return checkedKeys(value, lim);
}

/**
 * Counts the colons of `text` that may follow a key: those after a quote (then whitespace) that is
 * not escaped. Every key has one, so the count is at least the number of keys. Linear: each colon
 * looks back over the whitespace and backslashes directly before it, which no other colon does.
 */
function keyColonBound(text: string): number {
  let keys = 0;
  let colon = text.indexOf(":");
  while (colon !== -1) {
    let before = colon - 1;
    let code = text.charCodeAt(before);
    while (code === 32 || code === 10 || code === 13 || code === 9) code = text.charCodeAt(--before);
    if (code === 34) {
      let backslash = before - 1;
      while (text.charCodeAt(backslash) === 92) backslash--;
      if (((before - 1 - backslash) & 1) === 0) keys++;
    }
    colon = text.indexOf(":", colon + 1);
  }
  return keys;
}

function duplicateKeyError(dup: DuplicateKey): JsonParseError {
  const member = [...dup.path, dup.key];
  return new JsonParseError(
    "json-duplicate-key",
    `the object at ${shortPointer(dup.path)} has the key ${quoted(dup.key)} twice (again at line ${dup.line}, column ${dup.column}); JSON.parse would keep only the last value`,
    {
      pointer: boundedPointer(jsonPointer(member)),
      line: dup.line,
      column: dup.column,
      position: dup.position,
      hint: "remove or rename one of the two members: readers disagree on which value wins, so statebag reads neither",
      problemDetails: {
        kind: "duplicate-key",
        key: detailText(dup.key),
        line: dup.line,
        column: dup.column,
        position: dup.position,
      },
    },
  );
}

/**
 * Checks an already-parsed value against the depth, key and `__proto__` limits (the size limit
 * applies to text only), and that every number is finite (`1e400` parses as Infinity, which no
 * JSON writer gives back). Safe on any depth (recursion is bounded by `maxDepth`); a cycle is
 * reported as too deep.
 */
export function checkJsonLimits(value: unknown, limits?: JsonLimits): void {
  checkedKeys(value, resolveLimits(limits));
}

/** What the limit walks return for a violation (a count of keys is never negative). */
const TOO_DEEP = -1;
const TOO_MANY_KEYS = -2;
const PROTO_KEY = -3;
const NOT_FINITE = -4;
type Violation = "depth" | "keys" | "proto" | "number";
const VIOLATIONS: Record<number, Violation> = {
  [TOO_DEEP]: "depth",
  [TOO_MANY_KEYS]: "keys",
  [PROTO_KEY]: "proto",
  [NOT_FINITE]: "number",
};

/** `checkJsonLimits`, returning the number of object keys in the value (for the duplicate-key check). */
function checkedKeys(value: unknown, lim: Required<JsonLimits>): number {
  if (typeof value !== "object" || value === null) {
    if (typeof value === "number" && value - value !== 0) throw locateLimit(value, lim, "number");
    return 0;
  }
  if (lim.maxDepth <= MAX_RECURSIVE_DEPTH) {
    // Recursion bounded by maxDepth (it stops one level past it): a little faster than an explicit stack.
    const keys = walkBounded(value as Record<string, unknown>, 1, lim.maxDepth, lim.maxKeys, lim.protoKeys !== "keep");
    if (keys < 0) throw locateLimit(value, lim, VIOLATIONS[keys]);
    return keys;
  }
  const maxDepth = lim.maxDepth;
  const maxKeys = lim.maxKeys;
  const rejectProto = lim.protoKeys !== "keep";
  const stack: object[] = [value];
  const depths: number[] = [1];
  let top = 1;
  let total = 0;
  while (top > 0) {
    top--;
    const node = stack[top] as Record<string, unknown>;
    const depth = depths[top];
    if (depth > maxDepth) throw locateLimit(value, lim, "depth");
    const next = depth + 1;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child = node[i];
        if (typeof child === "object") {
          if (child !== null) {
            stack[top] = child;
            depths[top++] = next;
          }
        } else if (typeof child === "number" && child - child !== 0) throw locateLimit(value, lim, "number");
      }
    } else {
      let keys = 0;
      for (const key in node) {
        keys++;
        if (key === "__proto__" && rejectProto) throw locateLimit(value, lim, "proto");
        const child = node[key];
        if (typeof child === "object") {
          if (child !== null) {
            stack[top] = child;
            depths[top++] = next;
          }
        } else if (typeof child === "number" && child - child !== 0) throw locateLimit(value, lim, "number");
      }
      if (keys > maxKeys) throw locateLimit(value, lim, "keys");
      total += keys;
    }
  }
  return total;
}

/** Up to this `maxDepth`, the limit walk may recurse (each level is one small stack frame). */
const MAX_RECURSIVE_DEPTH = 1024;

/**
 * The number of object keys in `node`, or the (negative) first violation found. Recursion depth
 * <= maxDepth + 1. `x - x !== 0` is true for NaN and the infinities only.
 */
function walkBounded(
  node: Record<string, unknown> | unknown[],
  depth: number,
  maxDepth: number,
  maxKeys: number,
  rejectProto: boolean,
): number {
  if (depth > maxDepth) return TOO_DEEP;
  const next = depth + 1;
  let total = 0;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child = node[i];
      if (typeof child === "object") {
        if (child !== null) {
          const keys = walkBounded(child as Record<string, unknown>, next, maxDepth, maxKeys, rejectProto);
          if (keys < 0) return keys;
          total += keys;
        }
      } else if (typeof child === "number" && child - child !== 0) return NOT_FINITE;
    }
    return total;
  }
  let own = 0;
  for (const key in node) {
    own++;
    if (key === "__proto__" && rejectProto) return PROTO_KEY;
    const child = node[key];
    if (typeof child === "object") {
      if (child !== null) {
        const keys = walkBounded(child as Record<string, unknown>, next, maxDepth, maxKeys, rejectProto);
        if (keys < 0) return keys;
        total += keys;
      }
    } else if (typeof child === "number" && child - child !== 0) return NOT_FINITE;
  }
  return own > maxKeys ? TOO_MANY_KEYS : total + own;
}

/**
 * Slow path, on a limit violation only: finds the first offending position again with a
 * path-tracking iterative depth-first search bounded at `maxDepth + 1` levels.
 */
function locateLimit(root: unknown, lim: Required<JsonLimits>, kind: Violation, saving = false): JsonParseError {
  const numberError = (path: readonly (string | number)[], value: number) =>
    saving ? notJson(path, writableKind(value)!) : notFinite(path, value);
  if (typeof root !== "object" || root === null) return numberError([], root as number);
  type Frame = { node: Record<string, unknown> | unknown[]; keys: string[] | null; i: number };
  const frames: Frame[] = [];
  const path: (string | number)[] = [];
  const push = (node: object) => {
    frames.push({ node: node as Frame["node"], keys: Array.isArray(node) ? null : keysOf(node), i: 0 });
  };
  push(root as object);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    if (frame.i === 0) {
      const depth = frames.length;
      // Any kind: the search stays within maxDepth + 1 levels (a cycle ends here too).
      if (depth > lim.maxDepth) return tooDeep(path, lim.maxDepth);
      if (frame.keys !== null) {
        if (kind === "keys" && frame.keys.length > lim.maxKeys)
          return tooManyKeys(path, frame.keys.length, lim.maxKeys);
        if (kind === "proto" && frame.keys.includes("__proto__")) {
          path.push("__proto__");
          return protoKeyError(path, 'pass limits.protoKeys: "keep" to accept it as plain data');
        }
      }
    }
    const childCount = frame.keys === null ? (frame.node as unknown[]).length : frame.keys.length;
    let descended = false;
    while (frame.i < childCount) {
      const idx = frame.i++;
      const key = frame.keys === null ? idx : frame.keys[idx];
      const child =
        frame.keys === null ? (frame.node as unknown[])[idx] : (frame.node as Record<string, unknown>)[key as string];
      if (kind === "number" && typeof child === "number" && child - child !== 0) {
        path.push(key);
        return numberError(path, child);
      }
      if (typeof child === "object" && child !== null) {
        path.push(key);
        push(child);
        descended = true;
        break;
      }
    }
    if (!descended) {
      frames.pop();
      path.pop();
    }
  }
  // Not found again (cannot happen for JSON data): report without a position.
  return new JsonParseError(
    kind === "depth"
      ? "json-too-deep"
      : kind === "keys"
        ? "json-too-many-keys"
        : kind === "proto"
          ? "json-proto-key"
          : "json-value",
    `JSON input breaks the ${kind} limit`,
  );
}

function keysOf(node: object): string[] {
  const keys: string[] = [];
  for (const key in node) keys.push(key);
  return keys;
}

/** A number no double holds (`1e400` reads as Infinity), or NaN/Infinity in a value handed over already parsed. */
function notFinite(path: readonly (string | number)[], value: number): JsonParseError {
  const what = Number.isNaN(value) ? "is NaN" : `is too large for a double: it reads as ${value}`;
  return new JsonParseError(
    "json-value",
    `the number at ${shortPointer(path)} ${what}, which JSON cannot write back (JSON.stringify writes null)`,
    {
      pointer: boundedPointer(jsonPointer(path)),
      hint: "numbers must be finite, of magnitude below 1.8e308: write a value outside that range as a string",
    },
  );
}

/** @internal The error for a `"__proto__"` key at `path` (the path ends with the key). */
export function protoKeyError(path: readonly (string | number)[], fix: string): JsonParseError {
  return new JsonParseError("json-proto-key", `a "__proto__" key at ${shortPointer(path)} is not accepted`, {
    pointer: boundedPointer(jsonPointer(path)),
    hint: `remove or rename the key: code that copies it with obj[key] = value would set a prototype; ${fix}`,
  });
}

// -----------------------------------------------------------------------------------------------
// Writing: the same limits, checked before anything is written.

/**
 * Checks a value about to be written as JSON against the limits `parseJson` and
 * `checkJsonLimits` apply when it is read back (depth, keys per object, `__proto__` keys unless
 * `protoKeys: "keep"`), and that it is plain JSON data that reads back equal: finite numbers,
 * strings, booleans, null, arrays without holes or `undefined` items, and plain objects (members
 * that are `undefined` are left out, as `JSON.stringify` does). Throws `JsonParseError` with the
 * same code and message a reader would give, or `json-value` for data JSON cannot hold. A cycle is
 * reported as too deep. Iterative: safe on any depth.
 */
export function checkWritableJson(value: unknown, limits?: JsonLimits): void {
  const lim = resolveLimits(limits);
  const rejectProto = lim.protoKeys !== "keep";
  const bad = writableKind(value);
  if (bad !== null) throw notJson([], bad);
  if (typeof value !== "object" || value === null) return;
  // Fast path: a recursive pass that only says "all fine"; on anything doubtful the walk below
  // runs and finds (or clears) the first violation in reading order, with its pointer.
  if (
    lim.maxDepth <= MAX_RECURSIVE_DEPTH &&
    writableBounded(value as Record<string, unknown>, 1, lim.maxDepth, lim.maxKeys, rejectProto)
  )
    return;
  // Violations are found in the order the reading side finds them: depth on entering a container,
  // `__proto__` at the key, the key count when leaving the object.
  type Frame = { node: Record<string, unknown> | unknown[]; keys: string[] | null; i: number; written: number };
  const frames: Frame[] = [];
  const path: (string | number)[] = [];
  const enter = (node: object): JsonParseError | null => {
    if (frames.length + 1 > lim.maxDepth) return tooDeep(path, lim.maxDepth);
    frames.push({
      node: node as Frame["node"],
      keys: Array.isArray(node) ? null : Object.keys(node),
      i: 0,
      written: 0,
    });
    return null;
  };
  const first = enter(value);
  if (first !== null) throw first;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1];
    const keys = frame.keys;
    const childCount = keys === null ? (frame.node as unknown[]).length : keys.length;
    let descended = false;
    while (frame.i < childCount) {
      const idx = frame.i++;
      let child: unknown;
      let key: string | number;
      if (keys === null) {
        key = idx;
        child = (frame.node as unknown[])[idx];
        if (child === undefined) {
          path.push(key);
          throw notJson(path, "an empty slot or undefined array item (it would be written as null)");
        }
      } else {
        key = keys[idx];
        child = (frame.node as Record<string, unknown>)[key];
        if (child === undefined) continue;
        frame.written++;
        if (rejectProto && key === "__proto__") {
          path.push(key);
          throw protoKeyError(path, 'or pass limits.protoKeys: "keep" on both sides to keep it as plain data');
        }
      }
      const kind = writableKind(child);
      if (kind !== null) {
        path.push(key);
        throw notJson(path, kind);
      }
      if (typeof child === "object" && child !== null) {
        path.push(key);
        const err = enter(child);
        if (err !== null) throw err;
        descended = true;
        break;
      }
    }
    if (!descended) {
      if (keys !== null && frame.written > lim.maxKeys) throw tooManyKeys(path, frame.written, lim.maxKeys);
      frames.pop();
      path.pop();
    }
  }
}

/**
 * Throws `json-value`, with its pointer, for the first NaN or Infinity in `value`: `JSON.stringify`
 * writes them as null, and nothing may change on the way to the store. For a value that
 * `JSON.stringify` just wrote (so no cycle); iterative, so any depth.
 */
export function checkFiniteNumbers(value: unknown): void {
  if (typeof value === "number") {
    if (value - value !== 0) throw notJson([], writableKind(value)!);
    return;
  }
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop() as Record<string, unknown> | unknown[];
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child = node[i];
        if (typeof child === "object") {
          if (child !== null) stack.push(child);
        } else if (typeof child === "number" && child - child !== 0) throw locateNonFinite(value);
      }
    } else {
      for (const key in node) {
        const child = node[key];
        if (typeof child === "object") {
          if (child !== null) stack.push(child);
        } else if (typeof child === "number" && child - child !== 0) throw locateNonFinite(value);
      }
    }
  }
}

function locateNonFinite(root: unknown): JsonParseError {
  return locateLimit(
    root,
    {
      maxBytes: Number.MAX_SAFE_INTEGER,
      maxDepth: Number.MAX_SAFE_INTEGER,
      maxKeys: Number.MAX_SAFE_INTEGER,
      protoKeys: "keep",
    },
    "number",
    true,
  );
}

/**
 * True when `node` and everything in it can be written (the same rules as `checkWritableJson`);
 * false when the exact walk must look. Recursion depth <= maxDepth + 1 (a cycle ends there).
 */
function writableBounded(
  node: Record<string, unknown> | unknown[],
  depth: number,
  maxDepth: number,
  maxKeys: number,
  rejectProto: boolean,
): boolean {
  if (depth > maxDepth) return false;
  const next = depth + 1;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child = node[i];
      if (typeof child === "object") {
        if (child === null) continue;
        if (
          !writableContainer(child) ||
          !writableBounded(child as Record<string, unknown>, next, maxDepth, maxKeys, rejectProto)
        )
          return false;
      } else if (!writableScalar(child)) return false;
    }
    return true;
  }
  let written = 0;
  // for-in sees at least the own enumerable keys the exact walk checks; anything extra only sends it there.
  for (const key in node) {
    const child = node[key];
    if (child === undefined) continue;
    written++;
    if (rejectProto && key === "__proto__") return false;
    if (typeof child === "object") {
      if (child === null) continue;
      if (
        !writableContainer(child) ||
        !writableBounded(child as Record<string, unknown>, next, maxDepth, maxKeys, rejectProto)
      )
        return false;
    } else if (!writableScalar(child)) return false;
  }
  return written <= maxKeys;
}

function writableScalar(value: unknown): boolean {
  const kind = typeof value;
  return kind === "string" || kind === "boolean" || (kind === "number" && Number.isFinite(value));
}

function writableContainer(value: object): boolean {
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== "function";
}

/** Why a value cannot be written as JSON that reads back equal, or null when it can (containers are checked item by item). */
function writableKind(value: unknown): string | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : `the number ${value} (JSON has no ${value}; it would be written as null)`;
    case "object": {
      if (value === null || Array.isArray(value)) return null;
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        const name =
          typeof proto?.constructor?.name === "string" && proto.constructor.name !== ""
            ? proto.constructor.name
            : "a class";
        return `an instance of ${name.length > 40 ? "a class" : name} (only plain objects read back as they were)`;
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === "function")
        return "an object with a toJSON method (it would be written as something else)";
      return null;
    }
    case "undefined":
      return "undefined";
    default:
      return `a ${typeof value}`;
  }
}

function notJson(path: readonly (string | number)[], what: string): JsonParseError {
  return new JsonParseError("json-value", `the value at ${shortPointer(path)} cannot be written as JSON: ${what}`, {
    pointer: boundedPointer(jsonPointer(path)),
    hint: "session data must be plain JSON: strings, finite numbers, booleans, null, arrays and plain objects",
  });
}

function tooDeep(path: readonly (string | number)[], maxDepth: number): JsonParseError {
  return new JsonParseError(
    "json-too-deep",
    `JSON nesting is deeper than the limit of ${maxDepth} levels at ${shortPointer(path)}`,
    {
      pointer: boundedPointer(jsonPointer(path)),
      hint: "session data is never nested this deep; if it legitimately is, raise limits.maxDepth",
      // The walks stop one level past the limit: the value is at least that deep.
      problemDetails: { kind: "limit", option: "maxDepth", limit: maxDepth, actual: maxDepth + 1 },
    },
  );
}

function tooManyKeys(path: readonly (string | number)[], keys: number, maxKeys: number): JsonParseError {
  return new JsonParseError(
    "json-too-many-keys",
    `an object at ${shortPointer(path)} has ${keys} keys, over the limit of ${maxKeys}`,
    {
      pointer: boundedPointer(jsonPointer(path)),
      hint: "raise limits.maxKeys if objects this large are expected",
      problemDetails: { kind: "limit", option: "maxKeys", limit: maxKeys, actual: keys },
    },
  );
}
