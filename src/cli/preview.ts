/**
 * A stored document shown for people within a bound: long strings and keys cut with their length,
 * long arrays and objects cut with their count, and the whole text stopped at a character budget,
 * so a 200 MB session prints a page, not 200 MB (`inspect --full` prints everything).
 */

export interface PreviewLimits {
  /** Characters of a string (or key) shown before it is cut. */
  maxString: number;
  /** Items of an array, members of an object, shown before the rest is counted. */
  maxItems: number;
  /** Characters of the whole preview. */
  maxChars: number;
}

export const DEFAULT_PREVIEW: PreviewLimits = { maxString: 300, maxItems: 50, maxChars: 20_000 };

export interface Preview {
  text: string;
  /** Whether anything was left out (the preview is not the whole document). */
  cut: boolean;
}

/** `text`'s first `max` characters, never splitting a surrogate pair. */
function head(text: string, max: number): string {
  const end = max > 0 && /[\ud800-\udbff]/.test(text[max - 1]) ? max - 1 : max;
  return text.slice(0, end);
}

function quote(text: string, limits: PreviewLimits, state: { cut: boolean }): string {
  if (text.length <= limits.maxString) return JSON.stringify(text);
  state.cut = true;
  return `${JSON.stringify(head(text, limits.maxString))}... (${text.length} characters)`;
}

/**
 * Pretty JSON (two-space indent) of a parsed document within `limits`. Recursion is bounded by the
 * document's depth, which the loader's parse already held to its limit.
 */
export function previewJson(value: unknown, limits: PreviewLimits = DEFAULT_PREVIEW): Preview {
  const parts: string[] = [];
  let length = 0;
  const state = { cut: false, full: false };
  const push = (s: string) => {
    if (state.full) return;
    if (length + s.length > limits.maxChars) {
      parts.push(head(s, Math.max(0, limits.maxChars - length)));
      length = limits.maxChars;
      state.full = true;
      state.cut = true;
      return;
    }
    parts.push(s);
    length += s.length;
  };
  const walk = (v: unknown, indent: string): void => {
    if (state.full) return;
    if (typeof v === "string") return push(quote(v, limits, state));
    if (typeof v !== "object" || v === null) return push(JSON.stringify(v) ?? "null");
    const inner = indent + "  ";
    if (Array.isArray(v)) {
      if (v.length === 0) return push("[]");
      push("[");
      const shown = Math.min(v.length, limits.maxItems);
      for (let i = 0; i < shown && !state.full; i++) {
        push(`\n${inner}`);
        walk(v[i], inner);
        if (i < v.length - 1) push(",");
      }
      if (v.length > shown) {
        state.cut = true;
        push(`\n${inner}... ${v.length - shown} more items (${v.length} in all)`);
      }
      return push(`\n${indent}]`);
    }
    const keys = Object.keys(v);
    if (keys.length === 0) return push("{}");
    push("{");
    const shown = Math.min(keys.length, limits.maxItems);
    for (let i = 0; i < shown && !state.full; i++) {
      push(`\n${inner}${quote(keys[i], limits, state)}: `);
      walk((v as Record<string, unknown>)[keys[i]], inner);
      if (i < keys.length - 1) push(",");
    }
    if (keys.length > shown) {
      state.cut = true;
      push(`\n${inner}... ${keys.length - shown} more members (${keys.length} in all)`);
    }
    push(`\n${indent}}`);
  };
  walk(value, "");
  return { text: parts.join(""), cut: state.cut };
}

/** The first `limits.maxChars` characters of text that could not be parsed, as it is stored. */
export function previewText(text: string, limits: PreviewLimits = DEFAULT_PREVIEW): Preview {
  if (text.length <= limits.maxChars) return { text, cut: false };
  return { text: head(text, limits.maxChars), cut: true };
}
