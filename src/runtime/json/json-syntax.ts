/**
 * Locating a JSON syntax error: `JSON.parse` says little about where text went wrong, so on the
 * error path a small iterative scanner (RFC 8259) finds the position and the reason, and the error
 * shows the line with a caret. Never on the hot path: valid text is parsed by `JSON.parse` alone.
 */
import { escapeControl } from "../core/json.js";

/** Where and why `JSON.parse` rejected `text`, with a snippet of the line and a caret. */
export interface SyntaxErrorReport {
  /** 0-based offset in the text (UTF-16 code units). */
  position: number;
  /** 1-based line and column. */
  line: number;
  column: number;
  /** `malformed JSON at line L, column C: reason` and the snippet. */
  message: string;
}

/** Describes text that `JSON.parse` rejected (error path only). */
export function describeSyntaxError(text: string, cause: unknown): SyntaxErrorReport {
  const found = locateSyntaxError(text);
  let position: number;
  let reason: string;
  if (found !== null) {
    position = found.position;
    reason = found.reason;
  } else {
    // Our scanner accepted what V8 rejected (should not happen): fall back to V8's own words.
    const msg = cause instanceof Error ? cause.message : String(cause);
    const positionMatch = /position (\d+)/.exec(msg);
    position = positionMatch ? Number(positionMatch[1]) : 0;
    reason = escapeControl(msg.length > 200 ? msg.slice(0, 200) + "…" : msg);
  }
  const { line, column } = lineColumn(text, position);
  const snippet = snippetAt(text, position, line, column);
  return { position, line, column, message: `malformed JSON at line ${line}, column ${column}: ${reason}\n${snippet}` };
}

function lineColumn(text: string, position: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(position, text.length);
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i);
    if (code === 10) {
      line++;
      lineStart = i + 1;
    } else if (code === 13) {
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
  // One column per character, so the caret lines up: tabs become spaces, other control characters U+FFFD.
  // eslint-disable-next-line no-control-regex
  const shown =
    prefix +
    text
      .slice(from, to)
      .replace(/\t/g, " ")
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "\ufffd") +
    suffix;
  const caret = " ".repeat(prefix.length + Math.max(0, position - from)) + "^";
  const gutter = String(line);
  return `  ${gutter} | ${shown}\n  ${" ".repeat(gutter.length)} | ${caret}`;
}

function describeChar(text: string, i: number): string {
  if (i >= text.length) return "end of input";
  const ch = text[i];
  const code = text.charCodeAt(i);
  const hex = `U+${code.toString(16).padStart(4, "0").toUpperCase()}`;
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029)
    return `control character ${hex}`;
  if (code >= 0xd800 && code <= 0xdfff) return `character ${hex}`;
  return `'${ch}'`;
}

/**
 * Finds where and why `text` is not JSON (RFC 8259). Returns null when it is valid JSON.
 * Iterative (a stack of open containers), so it is safe on any nesting.
 */
export function locateSyntaxError(text: string): { position: number; reason: string } | null {
  const length = text.length;
  const stack: number[] = []; // 0 = array, 1 = object
  let pos = 0;
  const ws = () => {
    while (pos < length) {
      const code = text.charCodeAt(pos);
      if (code === 32 || code === 9 || code === 10 || code === 13) pos++;
      else break;
    }
  };
  const fail = (reason: string, at = pos) => ({ position: at, reason });
  // Returns an error or null, advancing i past the string.
  const str = (): { position: number; reason: string } | null => {
    const start = pos;
    pos++; // opening quote
    while (pos < length) {
      const code = text.charCodeAt(pos);
      if (code === 34) {
        pos++;
        return null;
      }
      if (code === 92) {
        const escaped = text.charCodeAt(pos + 1);
        if (escaped === 117) {
          for (let k = 2; k < 6; k++) {
            const hexCode = text.charCodeAt(pos + k);
            const hex =
              (hexCode >= 48 && hexCode <= 57) || (hexCode >= 65 && hexCode <= 70) || (hexCode >= 97 && hexCode <= 102);
            if (!hex) return fail("bad \\u escape in string: expected 4 hex digits", pos + k);
          }
          pos += 6;
        } else if (
          escaped === 34 ||
          escaped === 92 ||
          escaped === 47 ||
          escaped === 98 ||
          escaped === 102 ||
          escaped === 110 ||
          escaped === 114 ||
          escaped === 116
        ) {
          pos += 2;
        } else {
          return fail(`bad escape in string: \\${pos + 1 < length ? escapeControl(text[pos + 1]) : ""}`, pos);
        }
      } else if (code < 0x20) {
        return fail(`${describeChar(text, pos)} inside a string (escape it, e.g. \\n)`);
      } else pos++;
    }
    return fail("unterminated string (missing closing quote)", start);
  };
  const num = (): { position: number; reason: string } | null => {
    if (text.charCodeAt(pos) === 45) pos++;
    const d0 = text.charCodeAt(pos);
    if (d0 === 48) pos++;
    else if (d0 >= 49 && d0 <= 57)
      while (pos < length && text.charCodeAt(pos) >= 48 && text.charCodeAt(pos) <= 57) pos++;
    else return fail(`invalid number: expected a digit, found ${describeChar(text, pos)}`);
    if (text.charCodeAt(pos) === 46) {
      pos++;
      if (!(text.charCodeAt(pos) >= 48 && text.charCodeAt(pos) <= 57))
        return fail(`invalid number: expected a digit after '.', found ${describeChar(text, pos)}`);
      while (pos < length && text.charCodeAt(pos) >= 48 && text.charCodeAt(pos) <= 57) pos++;
    }
    const exponent = text.charCodeAt(pos);
    if (exponent === 101 || exponent === 69) {
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === 43 || sign === 45) pos++;
      if (!(text.charCodeAt(pos) >= 48 && text.charCodeAt(pos) <= 57))
        return fail(`invalid number: expected a digit in the exponent, found ${describeChar(text, pos)}`);
      while (pos < length && text.charCodeAt(pos) >= 48 && text.charCodeAt(pos) <= 57) pos++;
    }
    return null;
  };
  const key = (): { position: number; reason: string } | null => {
    ws();
    if (text.charCodeAt(pos) !== 34)
      return fail(`expected a property name in double quotes, found ${describeChar(text, pos)}`);
    const keyError = str();
    if (keyError) return keyError;
    ws();
    if (text.charCodeAt(pos) !== 58)
      return fail(`expected ':' after the property name, found ${describeChar(text, pos)}`);
    pos++;
    return null;
  };

  for (;;) {
    // Expect a value.
    ws();
    if (pos >= length) return fail("unexpected end of input: expected a value");
    const code = text.charCodeAt(pos);
    let err: { position: number; reason: string } | null = null;
    let opened = false;
    if (code === 123) {
      pos++;
      ws();
      if (text.charCodeAt(pos) === 125) pos++;
      else {
        stack.push(1);
        err = key();
        opened = true;
      }
    } else if (code === 91) {
      pos++;
      ws();
      if (text.charCodeAt(pos) === 93) pos++;
      else {
        stack.push(0);
        opened = true;
      }
    } else if (code === 34) err = str();
    else if (code === 45 || (code >= 48 && code <= 57)) err = num();
    else if (text.startsWith("true", pos)) pos += 4;
    else if (text.startsWith("false", pos)) pos += 5;
    else if (text.startsWith("null", pos)) pos += 4;
    else if (code === 93 || code === 125) {
      const prev = text.slice(0, pos).trimEnd();
      return fail(
        prev.endsWith(",")
          ? `unexpected '${text[pos]}' (trailing commas are not allowed in JSON)`
          : `unexpected '${text[pos]}': expected a value`,
      );
    } else if (code === 39) return fail("unexpected single quote: JSON strings use double quotes");
    else return fail(`unexpected ${describeChar(text, pos)}: expected a value`);
    if (err) return err;
    if (opened) continue;
    // After a value: close containers or take a comma.
    for (;;) {
      ws();
      if (stack.length === 0) {
        if (pos < length) return fail(`unexpected ${describeChar(text, pos)} after the end of the JSON value`);
        return null;
      }
      const top = stack[stack.length - 1];
      const next = text.charCodeAt(pos);
      if (next === 44) {
        pos++;
        if (top === 1) {
          const keyError = key();
          if (keyError) return keyError;
        }
        break; // expect a value
      }
      if (top === 0 && next === 93) {
        stack.pop();
        pos++;
        continue;
      }
      if (top === 1 && next === 125) {
        stack.pop();
        pos++;
        continue;
      }
      if (pos >= length) return fail(`unexpected end of input: expected ',' or '${top === 0 ? "]" : "}"}'`);
      return fail(
        `expected ',' or '${top === 0 ? "]" : "}"}' after ${top === 0 ? "an array item" : "a property value"}, found ${describeChar(text, pos)}`,
      );
    }
  }
}

/** A key that appears twice in one object. */
export interface DuplicateKey {
  /** Path of the object from the document root. */
  path: (string | number)[];
  /** The key, decoded. */
  key: string;
  /** 0-based offset, 1-based line and column of its second occurrence. */
  position: number;
  line: number;
  column: number;
}

/**
 * Finds the first object, in reading order, that holds a key twice (keys compared decoded, so
 * `"a"` and `"\u0061"` are the same). For text `JSON.parse` accepted; null when no key repeats.
 * Iterative and linear: one pass, each object's keys in a set while it is open.
 */
export function locateDuplicateKey(text: string): DuplicateKey | null {
  // One frame per open container: the keys an object holds so far (null for an array), and the
  // key or index of the member being read, which makes up the path.
  const keys: (Set<string> | null)[] = [];
  const segments: (string | number)[] = [];
  const length = text.length;
  let expectKey = false;
  let pos = 0;
  while (pos < length) {
    const code = text.charCodeAt(pos);
    if (code === 34) {
      const start = pos;
      let end = text.indexOf('"', pos + 1);
      for (;;) {
        let backslash = end - 1;
        while (text.charCodeAt(backslash) === 92) backslash--;
        if (((end - 1 - backslash) & 1) === 0) break;
        end = text.indexOf('"', end + 1);
      }
      pos = end + 1;
      if (!expectKey) continue;
      expectKey = false;
      const raw = text.slice(start + 1, end);
      const key = raw.includes("\\") ? (JSON.parse(text.slice(start, end + 1)) as string) : raw;
      const top = keys.length - 1;
      const seen = keys[top]!;
      if (seen.has(key)) {
        const { line, column } = lineColumn(text, start);
        return { path: segments.slice(0, top), key, position: start, line, column };
      }
      seen.add(key);
      segments[top] = key;
    } else if (code === 123) {
      keys.push(new Set());
      segments.push("");
      expectKey = true;
      pos++;
    } else if (code === 91) {
      keys.push(null);
      segments.push(0);
      pos++;
    } else if (code === 125 || code === 93) {
      keys.pop();
      segments.pop();
      expectKey = false; // after "{}", the next string is not a key
      pos++;
    } else if (code === 44) {
      const top = keys.length - 1;
      if (keys[top] === null) segments[top] = (segments[top] as number) + 1;
      else expectKey = true;
      pos++;
    } else pos++;
  }
  return null;
}
