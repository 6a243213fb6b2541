/**
 * JSON helpers every layer shares: pointers (RFC 6901), own-property writes that never reach a
 * prototype, structural equality, and short, safe descriptions of values and strings for messages
 * (cut to a bounded length, control characters escaped, so a message never echoes input raw).
 */

/** Escapes one segment of a JSON pointer (RFC 6901). */
export function pointerSegment(segment: string | number): string {
  return String(segment).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** The JSON pointer of a path (`""` for the root). */
export function jsonPointer(path: readonly (string | number)[]): string {
  if (path.length === 0) return "";
  let out = "";
  for (let i = 0; i < path.length; i++) out += "/" + pointerSegment(path[i]);
  return out;
}

/** Reverses `pointerSegment`. */
export function unescapeSegment(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

/** Sets an own data property without ever invoking a `__proto__` setter. */
export function setOwn(target: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key as string] = value;
}

const hasOwn = Object.prototype.hasOwnProperty;

export interface JsonEqualOptions {
  /** Members for which this returns true count as absent (as `undefined` members always do). */
  ignore?: (key: string, value: unknown) => boolean;
}

/**
 * Structural equality of JSON data: key order does not matter, `undefined` members count as absent,
 * own properties only (an own `"__proto__"` key is compared like any other). Iterative, so any
 * depth is safe.
 */
export function jsonEqual(a: unknown, b: unknown, options: JsonEqualOptions = {}): boolean {
  const ignore = options.ignore;
  const left: unknown[] = [a];
  const right: unknown[] = [b];
  while (left.length > 0) {
    const leftItem = left.pop();
    const rightItem = right.pop();
    if (leftItem === rightItem) continue;
    if (typeof leftItem === "number" && typeof rightItem === "number") {
      if (Number.isNaN(leftItem) && Number.isNaN(rightItem)) continue;
      return false;
    }
    if (typeof leftItem !== "object" || typeof rightItem !== "object" || leftItem === null || rightItem === null)
      return false;
    if (Array.isArray(leftItem)) {
      if (!Array.isArray(rightItem) || leftItem.length !== rightItem.length) return false;
      for (let i = 0; i < leftItem.length; i++) {
        left.push(leftItem[i]);
        right.push(rightItem[i]);
      }
      continue;
    }
    if (Array.isArray(rightItem)) return false;
    const xo = leftItem as Record<string, unknown>;
    const yo = rightItem as Record<string, unknown>;
    let countX = 0;
    for (const key of Object.keys(xo)) {
      const leftValue = xo[key];
      if (leftValue === undefined || ignore?.(key, leftValue)) continue;
      countX++;
      if (!hasOwn.call(yo, key)) return false;
      left.push(leftValue);
      right.push(yo[key]);
    }
    let countY = 0;
    for (const key of Object.keys(yo)) {
      const rightValue = yo[key];
      if (rightValue === undefined || ignore?.(key, rightValue)) continue;
      countY++;
    }
    if (countX !== countY) return false;
  }
  return true;
}

// -------------------------------------------------------------------------------------------------
// Bounded, escaped text for messages.

/** Strings longer than this are cut in messages (their length is said instead). */
export const MAX_SHOWN_CHARS = 80;

/**
 * Escapes control characters (C0, DEL, C1), lone surrogates and the line/paragraph separators as
 * `\uXXXX` (and `\n`, `\t`, ... as their usual escapes), so a message stays on its lines and can
 * never carry a terminal escape sequence.
 */
export function escapeControl(text: string): string {
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ud800-\udfff]/.test(text)) return text;
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]/g,
    (ch) => {
      if (ch.length === 2) return ch; // a well-formed surrogate pair
      switch (ch) {
        case "\n":
          return "\\n";
        case "\r":
          return "\\r";
        case "\t":
          return "\\t";
        default:
          return "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0");
      }
    },
  );
}

/**
 * Text for a message: control characters escaped, and cut in the middle when longer than `max`
 * (saying how long it is), so a 50 MB key gives a line, not 50 MB.
 */
export function shownText(text: string, max = MAX_SHOWN_CHARS): string {
  if (text.length <= max) {
    const escaped = escapeControl(text);
    if (escaped.length <= max) return escaped;
  }
  return cutMiddle(text, max, escapeControl);
}

/** A string in double quotes for a message: JSON-escaped and cut like `shownText`. */
export function quoted(text: string, max = MAX_SHOWN_CHARS): string {
  const inner = (s: string) => escapeControl(JSON.stringify(s).slice(1, -1));
  if (text.length <= max) {
    const escaped = inner(text);
    if (escaped.length <= max) return `"${escaped}"`;
  }
  return `"${cutMiddle(text, max, inner)}"`;
}

/** At most `max` characters: the start and the end of `text` (escaped), and its length between them. */
function cutMiddle(text: string, max: number, escapeText: (s: string) => string): string {
  const marker = `…(${text.length} chars)…`;
  const room = Math.max(2, max - marker.length);
  const head = Math.ceil(room * 0.7);
  const tail = room - head;
  // Escaping can lengthen a piece: cut again after escaping (never inside a surrogate pair).
  const cutTo = (s: string, n: number, fromEnd: boolean) => {
    if (s.length <= n) return s;
    let out = fromEnd ? s.slice(s.length - n) : s.slice(0, n);
    const edge = fromEnd ? out.charCodeAt(0) : out.charCodeAt(out.length - 1);
    if (edge >= 0xd800 && edge <= 0xdfff) out = fromEnd ? out.slice(1) : out.slice(0, -1);
    return out;
  };
  return (
    cutTo(escapeText(text.slice(0, head)), head, false) +
    marker +
    cutTo(escapeText(text.slice(text.length - tail)), tail, true)
  );
}

/** A short, safe description of a JSON value for messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return `string ${value.length > 40 ? quoted(value, 40) : quoted(value)}`;
    case "number":
      return `number ${value}`;
    case "boolean":
      return `boolean ${value}`;
    case "object": {
      if (Array.isArray(value))
        return value.length === 0
          ? "an empty array"
          : `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
      const tag = hasOwn.call(value, "$type") ? (value as { $type: unknown }).$type : undefined;
      if (typeof tag === "string") return `an object with "$type": ${quoted(tag)}`;
      const keys: string[] = [];
      let more = false;
      for (const key in value) {
        if (!hasOwn.call(value, key)) continue;
        if (keys.length === 5) {
          more = true;
          break;
        }
        keys.push(key);
      }
      if (keys.length === 0) return "an empty object";
      return `an object with keys ${keys.map((k) => quoted(k, 40)).join(", ")}${more ? ", ..." : ""}`;
    }
    default:
      return `a ${typeof value} (not JSON)`;
  }
}

/**
 * A pointer for a message: long pointers (deep nesting) are cut in the middle, long segments are
 * cut too, control characters are escaped. Takes a path or a JSON pointer; the exact pointer
 * belongs in a `pointer` field, this is for reading.
 */
export function shortPointer(at: readonly (string | number)[] | string): string {
  const raw = typeof at === "string" ? (at === "" ? [] : at.slice(1).split("/")) : at.map(pointerSegment);
  if (raw.length === 0) return "the root";
  const seg = (s: string) => shownText(s, 48);
  if (raw.length <= 12) return "/" + raw.map(seg).join("/");
  return `/${raw.slice(0, 6).map(seg).join("/")}/…(${raw.length - 9} more)…/${raw.slice(-3).map(seg).join("/")}`;
}

/** Longest pointer an error keeps in a `pointer` field; longer ones (huge keys) are cut like `shownText`. */
export const MAX_POINTER_CHARS = 2048;

/** A pointer bounded for storing in an error (exact unless a key in it is huge). */
export function boundedPointer(pointer: string): string {
  return pointer.length <= MAX_POINTER_CHARS ? pointer : shownText(pointer, MAX_POINTER_CHARS);
}
