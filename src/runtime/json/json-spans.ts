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
  for (const p of paths) {
    let node = root;
    for (const seg of p) {
      const k = String(seg);
      let next = node.children.get(k);
      if (next === undefined) node.children.set(k, (next = { end: false, children: new Map() }));
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
    let j = skipWs(text, i + 1);
    if (text.charCodeAt(j) === 125) end = j + 1;
    else {
      for (;;) {
        const keyEnd = skipString(text, j);
        const key = JSON.parse(text.slice(j, keyEnd)) as string;
        j = skipWs(text, skipWs(text, keyEnd) + 1); // past ':'
        const child = node.children.get(key);
        j = skipWs(text, child !== undefined ? scan(text, j, child, found) : skipValue(text, j));
        if (text.charCodeAt(j) === 44) j = skipWs(text, j + 1);
        else break;
      }
      end = j + 1; // '}'
    }
  } else if (open === 91 /* [ */) {
    let j = skipWs(text, i + 1);
    if (text.charCodeAt(j) === 93) end = j + 1;
    else {
      for (let index = 0; ; index++) {
        const child = node.children.get(String(index));
        j = skipWs(text, child !== undefined ? scan(text, j, child, found) : skipValue(text, j));
        if (text.charCodeAt(j) === 44) j = skipWs(text, j + 1);
        else break;
      }
      end = j + 1; // ']'
    }
  } else end = skipValue(text, i);
  if (node.end) found.set(node, text.slice(i, end));
  return end;
}

function skipWs(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

/** `i` at an opening quote; returns the index after the closing one. */
function skipString(text: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = text.indexOf('"', j);
    let b = q - 1;
    while (text.charCodeAt(b) === 92) b--;
    if (((q - 1 - b) & 1) === 0) return q + 1;
    j = q + 1;
  }
}

/** Skips one value of any kind (iteratively: nesting is only counted). */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 34) return skipString(text, i);
  if (c !== 123 && c !== 91) {
    let j = i;
    for (;;) {
      const d = text.charCodeAt(j);
      if (d === 44 || d === 125 || d === 93 || d === 32 || d === 10 || d === 13 || d === 9 || Number.isNaN(d)) return j;
      j++;
    }
  }
  let depth = 0;
  let j = i;
  for (;;) {
    const d = text.charCodeAt(j);
    if (d === 34) {
      j = skipString(text, j);
      continue;
    }
    if (d === 123 || d === 91) depth++;
    else if (d === 125 || d === 93) {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
}
