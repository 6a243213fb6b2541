/**
 * Building the page: elements made with createElement and filled with textContent, never
 * innerHTML. Every text that comes from a store, a schema or a request goes through `show` (control
 * and bidirectional characters made visible) or `cut` (the same, bounded); links are fragments built
 * with URLSearchParams.
 */

/** Characters that are invisible or change the direction of what follows them. */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]/g;

/** The longest string (or chat text) shown before a "show all" button. */
export const MAX_STRING = 400;

/** A value as text to show: invisible and direction-changing characters made visible (`\uXXXX`). */
export function show(value: unknown): string {
  return String(value).replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `show`, cut at `max` characters (the full length said). */
export function cut(value: unknown, max: number): string {
  const text = show(value);
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

type Listener<E extends Event> = (event: E) => void;

/** What `h` sets: a few properties by name, listeners, and any other name as an attribute. */
export interface Props {
  class?: string;
  onclick?: Listener<MouseEvent>;
  /** `<details open>`. */
  open?: boolean;
  value?: string;
  /** Set through the CSSOM: the CSP allows that, a style attribute it does not. */
  style?: string;
  [attribute: string]: string | number | boolean | null | undefined | Listener<MouseEvent>;
}

/** Children: text (a text node, never markup), nodes, and nothing (skipped). */
export type Child = Node | string | number | null | undefined | false;

/** An element: props set as the properties or attributes chosen here, children appended as text or nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  children?: Child | Child[],
): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  const element: HTMLElement = created;
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = String(value);
    else if (name === "onclick") element.addEventListener("click", value as Listener<MouseEvent>);
    else if (name === "open") (element as HTMLDetailsElement).open = true;
    else if (name === "value") (element as HTMLInputElement).value = String(value);
    else if (name === "style") element.style.cssText = String(value);
    else if (typeof value !== "function") element.setAttribute(name, String(value));
  }
  if (children !== undefined) append(element, children);
  return created;
}

/** Appends children to an element (text as text nodes). */
export function append<E extends Element>(element: E, children: Child | Child[]): E {
  for (const child of Array.isArray(children) ? children : [children]) {
    if (child === undefined || child === null || child === false) continue;
    element.appendChild(
      typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child,
    );
  }
  return element;
}

/** Removes every child. */
export function clear<E extends Element>(element: E): E {
  while (element.firstChild) element.removeChild(element.firstChild);
  return element;
}

/** Query parameters without the empty ones. */
export function queryOf(params: Record<string, string | number | undefined | null> | null | undefined): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {}))
    if (value !== undefined && value !== null && value !== "") query.set(name, String(value));
  return query.toString();
}

/** The fragment of one of the page's views: `#/route?params`. */
export function hashOf(route: string, params?: Record<string, string | number | undefined | null>): string {
  const query = queryOf(params);
  return `#/${route}${query ? `?${query}` : ""}`;
}

export function link(
  route: string,
  params: Record<string, string | number | undefined | null>,
  text: string,
  testid?: string,
): HTMLAnchorElement {
  return h("a", { href: hashOf(route, params), "data-testid": testid }, text);
}

/** A coloured label: a validity, a verdict, a change kind (the CSS class is `b-<kind>`). */
export function badge(kind: string, text?: string): HTMLSpanElement {
  return h("span", { class: `badge b-${kind}`, "data-testid": "badge" }, text || kind.replace("-", " "));
}

export function bytes(size: number): string {
  if (size < 1024) return `${size} B`;
  return size < 1048576 ? `${(size / 1024).toFixed(1)} KiB` : `${(size / 1048576).toFixed(1)} MiB`;
}

/** A key as a JSON pointer segment (RFC 6901). */
export function segment(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

export function typeLink(type: string, version?: number): HTMLAnchorElement {
  return link("type", { name: type, v: version }, show(type) + (version ? ` v${version}` : ""), "type-link");
}

/** A long text as an element: its first MAX_STRING characters, and a button that shows all of it. */
export function longText(className: string, text: unknown, testid?: string): HTMLDivElement {
  const shown = show(text);
  const element = h(
    "div",
    { class: className, "data-testid": testid },
    shown.length > MAX_STRING ? `${shown.slice(0, MAX_STRING)}…` : shown,
  );
  if (shown.length > MAX_STRING)
    element.appendChild(
      h(
        "button",
        {
          class: "more",
          "data-testid": "show-all",
          onclick: () => {
            element.textContent = shown;
          },
        },
        `show all ${shown.length} chars`,
      ),
    );
  return element;
}

/** An error as a red box (its message shown as text). */
export function failure(error: unknown): HTMLDivElement {
  const message = error instanceof Error ? error.message : error;
  return h("div", { class: "error", "data-testid": "error" }, show(message));
}
