/**
 * Rejects what JSON cannot hold inside a tagged type (functions, class instances, Map/Set/Date,
 * symbols, bigint, undefined-only), with the position of the offending declaration.
 *
 * typescript-json-schema would quietly turn some of these into something else (a Date becomes a
 * date-time string, a bigint a number), which breaks the promise that a session is its JSON.
 */
import path from "node:path";
import type * as TS from "typescript";
import type { GenError } from "./errors.js";
import type { Ts } from "./markers.js";

export interface JsonCheckContext {
  ts: Ts;
  checker: TS.TypeChecker;
  program: TS.Program;
  root: string;
  /** Tagged types are checked on their own; the walk stops at them. */
  isTagged(type: TS.Type): boolean;
}

const FIX_BY_LIB_TYPE: Record<string, string> = {
  Date: "store an ISO-8601 string and annotate it /** @format date-time */",
  Map: "use an object { [key: string]: V } (or an array of entries)",
  ReadonlyMap: "use an object { [key: string]: V } (or an array of entries)",
  Set: "use an array",
  ReadonlySet: "use an array",
  RegExp: "store the pattern as a string",
  Error: "store the message (and code) as strings",
  Promise: "store the resolved value instead",
};

function location(root: string, node: TS.Node) {
  const sf = node.getSourceFile();
  const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
  return { file: path.relative(root, sf.fileName).split(path.sep).join("/"), line: line + 1, column: character + 1 };
}

/** Checks one tagged type (`typeName` is its declaration name, `decl` its declaration). */
export function checkJsonable(ctx: JsonCheckContext, typeName: string, decl: TS.Node, type: TS.Type): GenError[] {
  const { ts, checker, program } = ctx;
  const Flags = ts.TypeFlags;
  const errors: GenError[] = [];
  const visited = new Set<TS.Type>();

  const fail = (at: TS.Node, where: string, what: string, hint: string, code: GenError["code"] = "not-json") =>
    errors.push({ code, ...location(ctx.root, at), message: `${where} is ${what}, which JSON cannot hold`, hint });

  const visit = (t: TS.Type, where: string, at: TS.Node, isRoot = false): void => {
    const typeFlags = t.flags;
    if (typeFlags & Flags.Any && (t as { intrinsicName?: string }).intrinsicName === "error") {
      errors.push({
        code: "unresolved-type",
        ...location(ctx.root, at),
        message: `the type of ${where} cannot be resolved`,
        hint: "check its import; the generator compiles with `types: []`, so ambient globals (@types/node's Buffer, DOM types) are not visible",
      });
      return;
    }
    if (typeFlags & (Flags.Any | Flags.Unknown | Flags.Never | Flags.NonPrimitive)) return;
    if (typeFlags & (Flags.StringLike | Flags.NumberLike | Flags.BooleanLike | Flags.Null | Flags.EnumLike)) return;
    if (typeFlags & Flags.BigIntLike)
      return void fail(at, where, "a bigint", "store it as a decimal string (or a number if it fits)");
    if (typeFlags & Flags.ESSymbolLike) return void fail(at, where, "a symbol", "use a string");
    if (typeFlags & (Flags.Undefined | Flags.Void))
      return void fail(
        at,
        where,
        "only undefined",
        "drop the property, or make it optional with a real type (`x?: string`)",
      );
    if (typeFlags & Flags.TypeParameter)
      return void fail(at, where, "a type parameter", "tagged types have one concrete schema; use a concrete type");
    if (typeFlags & Flags.Union) {
      const members = (t as TS.UnionType).types.filter((m) => !(m.flags & (Flags.Undefined | Flags.Void)));
      if (members.length === 0)
        return void fail(
          at,
          where,
          "only undefined",
          "drop the property, or make it optional with a real type (`x?: string`)",
        );
      for (const member of members) visit(member, where, at);
      return;
    }
    if (typeFlags & Flags.Intersection) {
      const members = (t as TS.IntersectionType).types;
      // Branded primitives (`string & {}`, `string & { __brand: "Id" }`) are their primitive on the wire.
      if (members.some((m) => m.flags & (Flags.StringLike | Flags.NumberLike | Flags.BooleanLike))) return;
      for (const member of members) visit(member, where, at);
      return;
    }
    if (!(typeFlags & Flags.Object)) return;
    if (!isRoot && ctx.isTagged(t)) return;

    if (checker.isArrayType(t) || checker.isTupleType(t)) {
      if (visited.has(t)) return;
      visited.add(t);
      for (const arg of checker.getTypeArguments(t as TS.TypeReference)) visit(arg, `${where}[]`, at);
      return;
    }
    // Leaf checks come before the visited check: each use of a Date is its own error.
    const sym = t.getSymbol();
    const name = sym?.getName() ?? "";
    if (t.getCallSignatures().length > 0)
      return void fail(at, where, "a function", "keep behaviour on the provider; store only data in its state");
    if (t.getConstructSignatures().length > 0)
      return void fail(at, where, "a class constructor", "store data, not classes");
    if (sym && sym.flags & ts.SymbolFlags.Class)
      return void fail(
        at,
        where,
        `an instance of class ${name}`,
        "use a plain interface; JSON.parse gives back plain objects, never class instances",
      );
    const decls = sym?.getDeclarations() ?? [];
    if (
      sym &&
      sym.flags & ts.SymbolFlags.Interface &&
      decls.some((d) => program.isSourceFileDefaultLibrary(d.getSourceFile()))
    )
      return void fail(
        at,
        where,
        `a ${name}`,
        FIX_BY_LIB_TYPE[name] ?? "use plain objects, arrays, strings, numbers, booleans and null",
      );

    // Structure is walked once per type (recursive types end here).
    if (visited.has(t)) return;
    visited.add(t);
    for (const prop of checker.getPropertiesOfType(t)) {
      const propDecl = prop.valueDeclaration ?? prop.getDeclarations()?.[0];
      const propAt = propDecl ?? at;
      const propWhere = `${where}.${prop.getName()}`;
      if (prop.flags & ts.SymbolFlags.Method) {
        fail(propAt, propWhere, "a method", "keep behaviour on the provider; store only data in its state");
        continue;
      }
      visit(checker.getTypeOfSymbolAtLocation(prop, propDecl ?? decl), propWhere, propAt);
    }
    for (const info of checker.getIndexInfosOfType(t)) visit(info.type, `${where}[key]`, info.declaration ?? at);
  };

  visit(type, typeName, decl, true);
  return errors;
}
