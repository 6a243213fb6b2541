/**
 * Slot walks: a type's `slots` (the paths to the polymorphic values nested in it) compiled once,
 * into a trie so the walker visits each shared prefix once, and where code generation is allowed
 * into straight-line code per type. The registry compiles them when a type is added; the
 * validation walker runs them.
 */
import type { FamilySlot } from "./registry-types.js";

/** @internal A node of a type's compiled slot tree. `seg === null` means `"*"`. */
export interface SlotNode {
  readonly seg: string | null;
  /** True when `seg` is also a property of `Object.prototype` (read it with an own-property check). */
  readonly guarded: boolean;
  /** The family of the tagged value at this position, when a slot ends here. */
  readonly family: string | null;
  readonly children: readonly SlotNode[];
}

export function compileSlots(slots: readonly FamilySlot[]): SlotNode | null {
  if (slots.length === 0) return null;
  type Mutable = { seg: string | null; guarded: boolean; family: string | null; children: Mutable[] };
  const root: Mutable = { seg: null, guarded: false, family: null, children: [] };
  for (const slot of slots) {
    let node = root;
    for (const raw of slot.path) {
      const seg = raw === "*" ? null : raw;
      let child = node.children.find((c) => c.seg === seg);
      if (child === undefined) {
        child = {
          seg,
          guarded: seg !== null && (seg === "__proto__" || seg in Object.prototype),
          family: null,
          children: [],
        };
        node.children.push(child);
      }
      node = child;
    }
    node.family = slot.family;
  }
  return root;
}

/**
 * @internal The slot walk of one type compiled to straight-line code: property reads with the
 * segment names written out (so each read site gets its own inline cache instead of one generic
 * keyed read shared by every type), calling `walker.visitTagged` at each slot. Same semantics as
 * the generic walk over `SlotNode`s (`SessionWalker.walkChildren`), which remains the fallback
 * where code generation is not allowed.
 *
 * The source names its type: V8 caches `new Function` by source text, so types with the same
 * slots (every content type walks `annotations/*`) would otherwise share one compiled function and
 * one set of inline caches, made megamorphic by all their shapes.
 */
export type SlotWalk = (
  walker: SlotVisitor,
  value: object,
  depth: number,
  nesting: number,
  path: (string | number)[],
) => void;

/** @internal What a compiled slot walk calls back into. */
export interface SlotVisitor {
  visitTagged(value: unknown, family: string, depth: number, nesting: number): void;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

export function compileSlotWalk(tree: SlotNode, $type: string): SlotWalk | null {
  const families: string[] = [];
  let counter = 0;
  const lines: string[] = [];
  const emit = (node: SlotNode, x: string, off: number, indent: string): void => {
    for (const child of node.children) {
      const childVar = `v${++counter}`;
      const depth = `d + ${off}`;
      const inner = (value: string, ind: string): void => {
        if (child.family !== null) {
          families.push(child.family);
          lines.push(`${ind}w.visitTagged(${value}, F[${families.length - 1}], d + ${off + 1}, n);`);
        } else if (child.children.length > 0) {
          lines.push(`${ind}if (${value} !== null && typeof ${value} === "object") {`);
          emit(child, value, off + 1, ind + "  ");
          lines.push(`${ind}}`);
        }
      };
      if (child.seg === null) {
        const indexVar = `i${counter}`;
        lines.push(`${indent}if (Array.isArray(${x})) {`);
        lines.push(`${indent}  for (let ${indexVar} = 0; ${indexVar} < ${x}.length; ${indexVar}++) {`);
        lines.push(`${indent}    p[${depth}] = ${indexVar};`);
        lines.push(`${indent}    const ${childVar} = ${x}[${indexVar}];`);
        inner(childVar, indent + "    ");
        lines.push(`${indent}  }`);
        lines.push(`${indent}} else {`);
        lines.push(`${indent}  for (const ${indexVar} in ${x}) {`);
        lines.push(`${indent}    if (!H.call(${x}, ${indexVar})) continue;`);
        lines.push(`${indent}    p[${depth}] = ${indexVar};`);
        lines.push(`${indent}    const ${childVar} = ${x}[${indexVar}];`);
        inner(childVar, indent + "    ");
        lines.push(`${indent}  }`);
        lines.push(`${indent}}`);
      } else {
        const lit = JSON.stringify(child.seg);
        const read = child.guarded
          ? `(H.call(${x}, ${lit}) ? ${x}[${lit}] : undefined)`
          : IDENTIFIER.test(child.seg)
            ? `${x}.${child.seg}`
            : `${x}[${lit}]`;
        lines.push(`${indent}const ${childVar} = ${read};`);
        lines.push(`${indent}if (${childVar} !== undefined) {`);
        lines.push(`${indent}  p[${depth}] = ${lit};`);
        inner(childVar, indent + "  ");
        lines.push(`${indent}}`);
      }
    }
  };
  emit(tree, "v", 0, "  ");
  try {
    // `$type` is a checked id (letters, digits, "_", ".", "-"): safe in a line comment.
    const factory = new Function(
      "F",
      "H",
      `return function slotWalk(w, v, d, n, p) {\n  // slot walk of ${$type}\n${lines.join("\n")}\n};`,
    ) as (f: string[], h: typeof Object.prototype.hasOwnProperty) => SlotWalk;
    return factory(families, Object.prototype.hasOwnProperty);
  } catch {
    return null; // code generation disallowed (CSP, some edge runtimes): the generic walk is used
  }
}
