/**
 * `structuredClone` for the run's own copies of messages, without its fixed cost: a turn copies a
 * few small messages, for which the serializer round trip of `structuredClone` costs several times
 * the copy itself. Plain data (objects whose prototype is `Object.prototype`, arrays without holes
 * or extra properties, primitives but symbols) is copied here, as `structuredClone` copies it
 * (own enumerable string keys, in order; `undefined`, NaN, -0 and bigints kept). Anything else in
 * the value (a `Date`, a class instance, a null-prototype object, a function, a symbol, a proxy, a
 * cycle, an object reached twice) hands the whole value to `structuredClone`, so the result, and
 * every error, is `structuredClone`'s (a getter met before that is then read a second time).
 */

import { isProxy } from "node:util/types";

/** Marks a value that `copyPlain` does not copy itself. */
const NOT_PLAIN: unique symbol = Symbol("not plain");

/** Deeper than this, `structuredClone` takes over (no recursion limit to think about here). */
const MAX_DEPTH = 64;

/** A deep copy of `value`, equal to `structuredClone(value)`. */
export function cloneData<T>(value: T): T {
  const seen = new Set<object>();
  const copy = copyPlain(value, seen, 0);
  return copy === NOT_PLAIN ? structuredClone(value) : (copy as T);
}

function copyPlain(value: unknown, seen: Set<object>, depth: number): unknown {
  if (typeof value !== "object") {
    // Primitives are copied as they are; symbols and functions make structuredClone throw.
    return typeof value === "symbol" || typeof value === "function" ? NOT_PLAIN : value;
  }
  if (value === null) return null;
  // An object reached twice (shared or a cycle): structuredClone keeps that shape.
  // A proxy looks plain but structuredClone refuses it.
  if (depth > MAX_DEPTH || seen.has(value) || isProxy(value)) return NOT_PLAIN;
  seen.add(value);
  const proto = Object.getPrototypeOf(value);
  if (proto === Array.prototype && Array.isArray(value)) {
    const array = value as unknown[];
    const length = array.length;
    // Holes and extra (non-index) properties: structuredClone keeps them.
    if (Object.keys(array).length !== length) return NOT_PLAIN;
    const out: unknown[] = [];
    for (let i = 0; i < length; i++) {
      const item = copyPlain(array[i], seen, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out.push(item);
    }
    return out;
  }
  if (proto !== Object.prototype) return NOT_PLAIN;
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const item = copyPlain(source[key], seen, depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    // "__proto__" as an own key (JSON.parse makes one): defined, never set, as structuredClone does.
    if (key === "__proto__")
      Object.defineProperty(out, key, { value: item, writable: true, enumerable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}
