/**
 * Safe JSON input: `JSON.parse` plus limits, with errors that say where and why.
 *
 * - Size: the UTF-8 byte length of the text is checked before parsing (default 64 MiB).
 * - Depth and keys: checked after `JSON.parse` by a walk whose recursion stops one level past
 *   `maxDepth` (an explicit stack instead when `maxDepth` is set above 1024), so a 100,000-deep
 *   array is a clear `json-too-deep` error, never a stack overflow.
 *   V8's `JSON.parse` is itself iterative; what overflows on deep data is everything after it
 *   (`JSON.stringify`, recursive validators), which is why the depth is bounded at the door.
 * - Malformed JSON: the error carries line, column and a snippet with a caret.
 *
 * Prototype keys (decision): `JSON.parse` makes `"__proto__"` an own data property, harmless by
 * itself, but any later `Object.assign`/deep-merge/`obj[k] = v` copy in application code would set
 * the target's prototype from it. Such a key has no legitimate use in session data, so by default
 * a `"__proto__"` key anywhere in the document is rejected with a `json-proto-key` error naming its
 * pointer (`protoKeys: "keep"` keeps it as plain own data instead; statebag's own code never copies
 * values with `[[Set]]` semantics, so nothing reaches a prototype either way). `"constructor"` and
 * `"prototype"` are ordinary data keys (they occur in real tool results) and are kept: they cannot
 * reach a prototype through `JSON.parse` or through statebag, which reads own properties only.
 */
import { StatebagError, jsonPointer, pointerSegment } from "../core/errors.js";

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

export type JsonErrorCode =
  | "json-syntax"
  | "json-too-large"
  | "json-too-deep"
  | "json-too-many-keys"
  | "json-proto-key"
  | "json-input";

/** The input is not acceptable JSON. `code` says which rule it broke. */
export class JsonParseError extends StatebagError {
  /** 1-based line and column of a syntax error (UTF-16 code units), when known. */
  readonly line?: number;
  readonly column?: number;
  /** 0-based offset of a syntax error in the text, when known. */
  readonly position?: number;
  /** JSON pointer of the offending value, for limit errors found after parsing. */
  readonly pointer?: string;
  constructor(
    code: JsonErrorCode,
    message: string,
    details: { hint?: string; line?: number; column?: number; position?: number; pointer?: string; cause?: unknown } = {},
  ) {
    super(code, message, { hint: details.hint, cause: details.cause });
    this.line = details.line;
    this.column = details.column;
    this.position = details.position;
    this.pointer = details.pointer;
  }
}

function resolveLimits(limits: JsonLimits | undefined): Required<JsonLimits> {
  if (limits === undefined) return DEFAULT_JSON_LIMITS;
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
  return new JsonParseError("json-too-large", `JSON input is ${formatBytes(bytes)}, over the limit of ${formatBytes(max)}`, {
    hint: "raise limits.maxBytes if documents this large are expected",
  });
}

/**
 * Parses JSON text (a string, or UTF-8 bytes) within `limits`. Throws `JsonParseError`.
 * A leading byte-order mark is ignored.
 */
export function parseJson(input: string | Uint8Array, limits?: JsonLimits): unknown {
  const lim = resolveLimits(limits);
  let text: string;
  if (typeof input === "string") {
    // UTF-8 length is between length and 3 * length: only count when it matters.
    const n = input.length;
    if (n > lim.maxBytes) throw tooLarge(Buffer.byteLength(input, "utf8"), lim.maxBytes);
    if (n * 3 > lim.maxBytes) {
      const bytes = Buffer.byteLength(input, "utf8");
      if (bytes > lim.maxBytes) throw tooLarge(bytes, lim.maxBytes);
    }
    text = input;
  } else if (input instanceof Uint8Array) {
    if (input.byteLength > lim.maxBytes) throw tooLarge(input.byteLength, lim.maxBytes);
    try {
      text = utf8.decode(input);
    } catch (cause) {
      throw new JsonParseError("json-input", "JSON input is not valid UTF-8", { cause, hint: "JSON text must be UTF-8 encoded" });
    }
  } else {
    throw new JsonParseError("json-input", `JSON input must be a string or UTF-8 bytes, found ${input === null ? "null" : typeof input}`);
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);

  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw syntaxError(text, cause);
  }
  checkJsonLimits(value, lim);
  return value;
}

/**
 * Checks an already-parsed value against the depth, key and `__proto__` limits (the size limit
 * applies to text only). Safe on any depth (recursion is bounded by `maxDepth`); a cycle is
 * reported as too deep.
 */
export function checkJsonLimits(value: unknown, limits?: JsonLimits): void {
  if (typeof value !== "object" || value === null) return;
  const lim = resolveLimits(limits);
  if (lim.maxDepth <= MAX_RECURSIVE_DEPTH) {
    // Recursion bounded by maxDepth (it stops one level past it): a little faster than an explicit stack.
    const bad = walkBounded(value as Record<string, unknown>, 1, lim.maxDepth, lim.maxKeys, lim.protoKeys !== "keep");
    if (bad !== null) throw locateLimit(value, lim, bad);
    return;
  }
  const maxDepth = lim.maxDepth;
  const maxKeys = lim.maxKeys;
  const rejectProto = lim.protoKeys !== "keep";
  const stack: object[] = [value];
  const depths: number[] = [1];
  let top = 1;
  while (top > 0) {
    top--;
    const node = stack[top] as Record<string, unknown>;
    const depth = depths[top];
    if (depth > maxDepth) throw locateLimit(value, lim, "depth");
    const next = depth + 1;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child = node[i];
        if (typeof child === "object" && child !== null) {
          stack[top] = child;
          depths[top++] = next;
        }
      }
    } else {
      let keys = 0;
      for (const key in node) {
        keys++;
        if (key === "__proto__" && rejectProto) throw locateLimit(value, lim, "proto");
        const child = node[key];
        if (typeof child === "object" && child !== null) {
          stack[top] = child;
          depths[top++] = next;
        }
      }
      if (keys > maxKeys) throw locateLimit(value, lim, "keys");
    }
  }
}

/** Up to this `maxDepth`, the limit walk may recurse (each level is one small stack frame). */
const MAX_RECURSIVE_DEPTH = 1024;

/** Returns the kind of the first violation found, or null. Recursion depth <= maxDepth + 1. */
function walkBounded(node: Record<string, unknown> | unknown[], depth: number, maxDepth: number, maxKeys: number, rejectProto: boolean): "depth" | "keys" | "proto" | null {
  if (depth > maxDepth) return "depth";
  const next = depth + 1;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child = node[i];
      if (typeof child === "object" && child !== null) {
        const bad = walkBounded(child as Record<string, unknown>, next, maxDepth, maxKeys, rejectProto);
        if (bad !== null) return bad;
      }
    }
    return null;
  }
  let keys = 0;
  for (const key in node) {
    keys++;
    if (key === "__proto__" && rejectProto) return "proto";
    const child = node[key];
    if (typeof child === "object" && child !== null) {
      const bad = walkBounded(child as Record<string, unknown>, next, maxDepth, maxKeys, rejectProto);
      if (bad !== null) return bad;
    }
  }
  return keys > maxKeys ? "keys" : null;
}

/**
 * Slow path, on a limit violation only: finds the first offending position again with a
 * path-tracking iterative depth-first search bounded at `maxDepth + 1` levels.
 */
function locateLimit(root: unknown, lim: Required<JsonLimits>, kind: "depth" | "keys" | "proto"): JsonParseError {
  type Frame = { node: Record<string, unknown> | unknown[]; keys: string[] | null; i: number };
  const frames: Frame[] = [];
  const path: (string | number)[] = [];
  const push = (node: object) => {
    frames.push({ node: node as Frame["node"], keys: Array.isArray(node) ? null : keysOf(node), i: 0 });
  };
  push(root as object);
  while (frames.length > 0) {
    const f = frames[frames.length - 1];
    if (f.i === 0) {
      const depth = frames.length;
      if (kind === "depth" && depth > lim.maxDepth) {
        return new JsonParseError("json-too-deep", `JSON nesting is deeper than the limit of ${lim.maxDepth} levels at ${shortPointer(path)}`, {
          pointer: jsonPointer(path),
          hint: "session data is never nested this deep; if it legitimately is, raise limits.maxDepth",
        });
      }
      if (f.keys !== null) {
        if (kind === "keys" && f.keys.length > lim.maxKeys) {
          return new JsonParseError("json-too-many-keys", `an object at ${shortPointer(path)} has ${f.keys.length} keys, over the limit of ${lim.maxKeys}`, {
            pointer: jsonPointer(path),
            hint: "raise limits.maxKeys if objects this large are expected",
          });
        }
        if (kind === "proto" && f.keys.includes("__proto__")) {
          const at = [...path, "__proto__"];
          return new JsonParseError("json-proto-key", `a "__proto__" key at ${shortPointer(at)} is not accepted`, {
            pointer: jsonPointer(at),
            hint: 'remove the key; "__proto__" has no place in session data and becomes a prototype-pollution hazard in any code that copies the value (pass limits.protoKeys: "keep" to accept it as plain data)',
          });
        }
      }
    }
    const n = f.keys === null ? (f.node as unknown[]).length : f.keys.length;
    let descended = false;
    while (f.i < n) {
      const idx = f.i++;
      const key = f.keys === null ? idx : f.keys[idx];
      const child = f.keys === null ? (f.node as unknown[])[idx] : (f.node as Record<string, unknown>)[key as string];
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
  return new JsonParseError(kind === "depth" ? "json-too-deep" : kind === "keys" ? "json-too-many-keys" : "json-proto-key", `JSON input breaks the ${kind} limit`);
}

function keysOf(node: object): string[] {
  const keys: string[] = [];
  for (const k in node) keys.push(k);
  return keys;
}

/**
 * A pointer for a message: long pointers (deep nesting) are cut in the middle. Takes a path, or
 * a JSON pointer (RFC 6901) already built from one (`pointer` fields stay exact; only messages
 * are shortened). @internal
 */
export function shortPointer(at: readonly (string | number)[] | string): string {
  // Escaped segments: joined with "/" they give the pointer back.
  const segments = typeof at === "string" ? (at === "" ? [] : at.slice(1).split("/")) : at.map(pointerSegment);
  if (segments.length === 0) return "the root";
  if (segments.length <= 12) return "/" + segments.join("/");
  return `/${segments.slice(0, 6).join("/")}/…(${segments.length - 9} more)…/${segments.slice(-3).join("/")}`;
}

// -----------------------------------------------------------------------------------------------
// Syntax errors: locate with a small iterative JSON scanner (error path only), then show a snippet.

/** Builds the error for text that `JSON.parse` rejected. */
function syntaxError(text: string, cause: unknown): JsonParseError {
  const found = locateSyntaxError(text);
  let position: number;
  let reason: string;
  if (found !== null) {
    position = found.position;
    reason = found.reason;
  } else {
    // Our scanner accepted what V8 rejected (should not happen): fall back to V8's own words.
    const msg = cause instanceof Error ? cause.message : String(cause);
    const m = /position (\d+)/.exec(msg);
    position = m ? Number(m[1]) : 0;
    reason = msg;
  }
  const { line, column } = lineColumn(text, position);
  const snippet = snippetAt(text, position, line, column);
  return new JsonParseError("json-syntax", `malformed JSON at line ${line}, column ${column}: ${reason}\n${snippet}`, {
    line,
    column,
    position,
    cause,
  });
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(position, text.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      lineStart = i + 1;
    } else if (c === 13) {
      if (text.charCodeAt(i + 1) !== 10) {
        line++;
        lineStart = i + 1;
      }
    }
  }
  return { line, column: end - lineStart + 1 };
}

function snippetAt(text: string, position: number, line: number, column: number): string {
  const start = position - (column - 1);
  let end = start;
  while (end < text.length && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
  const width = 72;
  let from = start;
  let to = end;
  let prefix = "";
  let suffix = "";
  if (end - start > width) {
    from = Math.max(start, position - Math.floor(width / 2));
    to = Math.min(end, from + width);
    if (from > start) prefix = "…";
    if (to < end) suffix = "…";
  }
  const shown = prefix + text.slice(from, to).replace(/\t/g, " ") + suffix;
  const caret = " ".repeat(prefix.length + Math.max(0, position - from)) + "^";
  const gutter = String(line);
  return `  ${gutter} | ${shown}\n  ${" ".repeat(gutter.length)} | ${caret}`;
}

function describeChar(text: string, i: number): string {
  if (i >= text.length) return "end of input";
  const ch = text[i];
  const code = text.charCodeAt(i);
  if (code < 0x20) return `control character U+${code.toString(16).padStart(4, "0").toUpperCase()}`;
  return `'${ch}'`;
}

/**
 * Finds where and why `text` is not JSON (RFC 8259). Returns null when it is valid JSON.
 * Iterative (a stack of open containers), so it is safe on any nesting.
 */
export function locateSyntaxError(text: string): { position: number; reason: string } | null {
  const n = text.length;
  const stack: number[] = []; // 0 = array, 1 = object
  let i = 0;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const fail = (reason: string, at = i) => ({ position: at, reason });
  // Returns an error or null, advancing i past the string.
  const str = (): { position: number; reason: string } | null => {
    const start = i;
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return null;
      }
      if (c === 92) {
        const e = text.charCodeAt(i + 1);
        if (e === 117) {
          for (let k = 2; k < 6; k++) {
            const h = text.charCodeAt(i + k);
            const hex = (h >= 48 && h <= 57) || (h >= 65 && h <= 70) || (h >= 97 && h <= 102);
            if (!hex) return fail("bad \\u escape in string: expected 4 hex digits", i + k);
          }
          i += 6;
        } else if (e === 34 || e === 92 || e === 47 || e === 98 || e === 102 || e === 110 || e === 114 || e === 116) {
          i += 2;
        } else {
          return fail(`bad escape in string: \\${i + 1 < n ? text[i + 1] : ""}`, i);
        }
      } else if (c < 0x20) {
        return fail(`${describeChar(text, i)} inside a string (escape it, e.g. \\n)`);
      } else i++;
    }
    return fail("unterminated string (missing closing quote)", start);
  };
  const num = (): { position: number; reason: string } | null => {
    if (text.charCodeAt(i) === 45) i++;
    const d0 = text.charCodeAt(i);
    if (d0 === 48) i++;
    else if (d0 >= 49 && d0 <= 57) while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    else return fail(`invalid number: expected a digit, found ${describeChar(text, i)}`);
    if (text.charCodeAt(i) === 46) {
      i++;
      if (!(text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57)) return fail(`invalid number: expected a digit after '.', found ${describeChar(text, i)}`);
      while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    }
    const e = text.charCodeAt(i);
    if (e === 101 || e === 69) {
      i++;
      const s = text.charCodeAt(i);
      if (s === 43 || s === 45) i++;
      if (!(text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57)) return fail(`invalid number: expected a digit in the exponent, found ${describeChar(text, i)}`);
      while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    }
    return null;
  };
  const key = (): { position: number; reason: string } | null => {
    ws();
    if (text.charCodeAt(i) !== 34) return fail(`expected a property name in double quotes, found ${describeChar(text, i)}`);
    const e = str();
    if (e) return e;
    ws();
    if (text.charCodeAt(i) !== 58) return fail(`expected ':' after the property name, found ${describeChar(text, i)}`);
    i++;
    return null;
  };

  for (;;) {
    // Expect a value.
    ws();
    if (i >= n) return fail("unexpected end of input: expected a value");
    const c = text.charCodeAt(i);
    let err: { position: number; reason: string } | null = null;
    let opened = false;
    if (c === 123) {
      i++;
      ws();
      if (text.charCodeAt(i) === 125) i++;
      else {
        stack.push(1);
        err = key();
        opened = true;
      }
    } else if (c === 91) {
      i++;
      ws();
      if (text.charCodeAt(i) === 93) i++;
      else {
        stack.push(0);
        opened = true;
      }
    } else if (c === 34) err = str();
    else if (c === 45 || (c >= 48 && c <= 57)) err = num();
    else if (text.startsWith("true", i)) i += 4;
    else if (text.startsWith("false", i)) i += 5;
    else if (text.startsWith("null", i)) i += 4;
    else if (c === 93 || c === 125) {
      const prev = text.slice(0, i).trimEnd();
      return fail(prev.endsWith(",") ? `unexpected '${text[i]}' (trailing commas are not allowed in JSON)` : `unexpected '${text[i]}': expected a value`);
    } else if (c === 39) return fail("unexpected single quote: JSON strings use double quotes");
    else return fail(`unexpected ${describeChar(text, i)}: expected a value`);
    if (err) return err;
    if (opened) continue;
    // After a value: close containers or take a comma.
    for (;;) {
      ws();
      if (stack.length === 0) {
        if (i < n) return fail(`unexpected ${describeChar(text, i)} after the end of the JSON value`);
        return null;
      }
      const top = stack[stack.length - 1];
      const d = text.charCodeAt(i);
      if (d === 44) {
        i++;
        if (top === 1) {
          const e = key();
          if (e) return e;
        }
        break; // expect a value
      }
      if (top === 0 && d === 93) {
        stack.pop();
        i++;
        continue;
      }
      if (top === 1 && d === 125) {
        stack.pop();
        i++;
        continue;
      }
      if (i >= n) return fail(`unexpected end of input: expected ',' or '${top === 0 ? "]" : "}"}'`);
      return fail(`expected ',' or '${top === 0 ? "]" : "}"}' after ${top === 0 ? "an array item" : "a property value"}, found ${describeChar(text, i)}`);
    }
  }
}
