/**
 * @internal Where values sit in JSON text: for a set of paths, the exact substring of each value, so
 * a quarantine load keeps a value's original characters (whitespace, escapes, number spellings),
 * not a re-serialization. The text has already passed `parseJson` (well-formed, within limits, no
 * duplicate keys), so this scanner skips what it does not need and validates nothing. Linear in
 * the text; recursion only along the requested paths (bounded by the parse depth limit).
 */
type Trie = { end: boolean; children: Map<string, Trie> };

/** Returns, per path (segments from the document root), its value's text; undefined if not found. */
export function valueTexts(text: string, paths: readonly (readonly (string | number)[])[]): (string | undefined)[] {
  const root: Trie = { end: false, children: new Map() };
  for (const path of paths) {
    let node = root;
    for (const seg of path) {
      const key = String(seg);
      let next = node.children.get(key);
      if (next === undefined) node.children.set(key, (next = { end: false, children: new Map() }));
      node = next;
    }
    node.end = true;
  }
  const found = new Map<Trie, string>();
  const start = skipWs(text, text.charCodeAt(0) === 0xfeff ? 1 : 0);
  scan(text, start, root, found);
  return paths.map((p) => {
    let node: Trie | undefined = root;
    for (const seg of p) node = node?.children.get(String(seg));
    return node === undefined ? undefined : found.get(node);
  });
}

/** Scans the value at `i` (following `node`'s children); returns the index after it. */
function scan(text: string, i: number, node: Trie, found: Map<Trie, string>): number {
  if (node.children.size === 0) {
    const end = skipValue(text, i);
    if (node.end) found.set(node, text.slice(i, end));
    return end;
  }
  const open = text.charCodeAt(i);
  let end: number;
  if (open === 123 /* { */) {
    let pos = skipWs(text, i + 1);
    if (text.charCodeAt(pos) === 125) end = pos + 1;
    else {
      for (;;) {
        const keyEnd = skipString(text, pos);
        const key = JSON.parse(text.slice(pos, keyEnd)) as string;
        pos = skipWs(text, skipWs(text, keyEnd) + 1); // past ':'
        const child = node.children.get(key);
        pos = skipWs(text, child !== undefined ? scan(text, pos, child, found) : skipValue(text, pos));
        if (text.charCodeAt(pos) === 44) pos = skipWs(text, pos + 1);
        else break;
      }
      end = pos + 1; // '}'
    }
  } else if (open === 91 /* [ */) {
    let pos = skipWs(text, i + 1);
    if (text.charCodeAt(pos) === 93) end = pos + 1;
    else {
      for (let index = 0; ; index++) {
        const child = node.children.get(String(index));
        pos = skipWs(text, child !== undefined ? scan(text, pos, child, found) : skipValue(text, pos));
        if (text.charCodeAt(pos) === 44) pos = skipWs(text, pos + 1);
        else break;
      }
      end = pos + 1; // ']'
    }
  } else end = skipValue(text, i);
  if (node.end) found.set(node, text.slice(i, end));
  return end;
}

function skipWs(text: string, i: number): number {
  for (;;) {
    const code = text.charCodeAt(i);
    if (code === 32 || code === 10 || code === 13 || code === 9) i++;
    else return i;
  }
}

/** `i` at an opening quote; returns the index after the closing one. */
function skipString(text: string, i: number): number {
  let pos = i + 1;
  for (;;) {
    const quote = text.indexOf('"', pos);
    let backslash = quote - 1;
    while (text.charCodeAt(backslash) === 92) backslash--;
    if (((quote - 1 - backslash) & 1) === 0) return quote + 1;
    pos = quote + 1;
  }
}

/** Skips one value of any kind (iteratively: nesting is only counted). */
function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 34) return skipString(text, i);
  if (first !== 123 && first !== 91) {
    let pos = i;
    for (;;) {
      const code = text.charCodeAt(pos);
      if (
        code === 44 ||
        code === 125 ||
        code === 93 ||
        code === 32 ||
        code === 10 ||
        code === 13 ||
        code === 9 ||
        Number.isNaN(code)
      )
        return pos;
      pos++;
    }
  }
  let depth = 0;
  let pos = i;
  for (;;) {
    const code = text.charCodeAt(pos);
    if (code === 34) {
      pos = skipString(text, pos);
      continue;
    }
    if (code === 123 || code === 91) depth++;
    else if (code === 125 || code === 93) {
      depth--;
      if (depth === 0) return pos + 1;
    }
    pos++;
  }
}
