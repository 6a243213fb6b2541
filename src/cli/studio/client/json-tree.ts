/**
 * JSON values shown as text: a collapsible tree (marks on pointers: problems, diff changes) and the
 * raw stored text pretty-printed. Both are bounded whatever a document holds: a container shows
 * MAX_ITEMS children at a time and builds them only when opened, strings are cut at MAX_STRING,
 * and the pretty-printer stops at a character budget with indentation capped at RAW_INDENT_DEPTH
 * levels, so its output stays linear in the stored text.
 */

import { cut, h, MAX_STRING, segment, show } from "./dom.js";

/** How many children of a container are built at a time. */
const MAX_ITEMS = 100;
/** Indentation deepens to this many levels and no further. */
const RAW_INDENT_DEPTH = 40;

/** A highlight on the node at a pointer: a CSS class and a tooltip. */
export interface Mark {
  cls: "problem" | "added" | "removed" | "changed";
  title?: string;
}
export type Marks = Record<string, Mark>;

type JsonObject = Record<string, unknown>;

function summaryOf(value: unknown[] | JsonObject, keyCount: number): string {
  if (Array.isArray(value)) return `[${keyCount} items]`;
  const type = value.$type;
  const version = value.$version;
  const tag = type === undefined ? "" : ` ${cut(type, 80)}${version !== undefined ? ` v${cut(version, 10)}` : ""}`;
  return `{${keyCount} keys}${tag}`;
}

/**
 * A JSON value as a collapsible tree. Nodes under a mark are opened so the mark is visible; big
 * containers and long strings start collapsed.
 */
export function tree(value: unknown, pointer: string, marks: Marks = {}, depth = 0): HTMLElement {
  const mark = marks[pointer];
  let node: HTMLElement;
  if (value !== null && typeof value === "object") {
    const container = value as unknown[] | JsonObject;
    const keys: (string | number)[] = Array.isArray(container)
      ? container.map((_, index) => index)
      : Object.keys(container);
    const markInside = Object.keys(marks).some((marked) => marked.startsWith(`${pointer}/`));
    // Measured only near the top: stringifying every level of a deep value is quadratic.
    const open = depth < 1 || markInside || (depth < 3 && JSON.stringify(container).length < 2000);
    const details = h("details", { open }, h("summary", null, summaryOf(container, keys.length)));
    const renderFrom = (from: number): void => {
      const end = Math.min(keys.length, from + MAX_ITEMS);
      for (let index = from; index < end; index++) {
        const key = keys[index];
        const row = h("div", { class: "kv" }, h("span", { class: "k" }, `${cut(key, 200)}: `));
        row.appendChild(tree((container as JsonObject)[key], `${pointer}/${segment(key)}`, marks, depth + 1));
        details.appendChild(row);
      }
      if (end < keys.length) {
        const more = h(
          "button",
          {
            class: "more",
            onclick: () => {
              details.removeChild(more);
              renderFrom(end);
            },
          },
          `show ${Math.min(MAX_ITEMS, keys.length - end)} more of ${keys.length}`,
        );
        details.appendChild(more);
      }
    };
    // A collapsed container's children are built when it is first opened (a deep value costs nothing until read).
    if (open) renderFrom(0);
    else
      details.addEventListener("toggle", function first() {
        if (!details.open) return;
        details.removeEventListener("toggle", first);
        renderFrom(0);
      });
    node = details;
  } else if (typeof value === "string") {
    const shown = show(value);
    node = h("span", { class: "s" }, `"${shown.length > MAX_STRING ? `${shown.slice(0, MAX_STRING)}…` : shown}"`);
    if (shown.length > MAX_STRING) {
      const holder: HTMLSpanElement = h("span", null, [
        node,
        h(
          "button",
          {
            class: "more",
            onclick: () => {
              holder.textContent = `"${shown}"`;
            },
          },
          `show all ${shown.length} chars`,
        ),
      ]);
      node = holder;
    }
  } else {
    node = h("span", { class: typeof value === "number" ? "n" : "l" }, String(JSON.stringify(value)));
  }
  if (mark) {
    node.classList.add(mark.cls);
    if (mark.title) node.setAttribute("title", mark.title);
    if (mark.cls === "problem") node.setAttribute("data-testid", "problem-node");
    node.setAttribute("data-pointer", pointer);
  }
  return node;
}

/** The first `max` characters of a text, and whether it was cut. */
function head(text: string, max: number): { text: string; cut: boolean } {
  return text.length > max ? { text: text.slice(0, max), cut: true } : { text, cut: false };
}

/**
 * JSON text pretty-printed, stopping at `max` characters. Indentation deepens to RAW_INDENT_DEPTH
 * levels and no further, so the output is at most a constant times the input. Text that is not
 * JSON (or too deep to parse) is shown as it is, cut the same way.
 */
export function prettyJson(text: string, max: number): { text: string; cut: boolean } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return head(text, max);
  }
  const out: string[] = [];
  let size = 0;
  let full = false;
  const put = (piece: string): void => {
    if (full) return;
    if (size + piece.length > max) {
      out.push(piece.slice(0, max - size));
      size = max;
      full = true;
      return;
    }
    out.push(piece);
    size += piece.length;
  };
  const newline = (depth: number): void => put(`\n${"  ".repeat(Math.min(depth, RAW_INDENT_DEPTH))}`);
  const walk = (value: unknown, depth: number): void => {
    if (full) return;
    if (value === null || typeof value !== "object") {
      put(JSON.stringify(value));
      return;
    }
    const array = Array.isArray(value) ? (value as unknown[]) : undefined;
    const keys = array ? undefined : Object.keys(value);
    const count = array ? array.length : keys!.length;
    if (count === 0) {
      put(array ? "[]" : "{}");
      return;
    }
    put(array ? "[" : "{");
    for (let i = 0; i < count && !full; i++) {
      newline(depth + 1);
      if (array) walk(array[i], depth + 1);
      else {
        put(`${JSON.stringify(keys![i])}: `);
        walk((value as JsonObject)[keys![i]], depth + 1);
      }
      if (i < count - 1) put(",");
    }
    newline(depth);
    put(array ? "]" : "}");
  };
  try {
    walk(parsed, 0);
  } catch {
    return head(text, max);
  }
  return { text: out.join(""), cut: full };
}
