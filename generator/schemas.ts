/**
 * Turns the marked types into JSON Schema definitions with typescript-json-schema (tjs), on ONE
 * program for all types, then post-processes what tjs gets wrong or leaves loose.
 *
 * The output is a graph: one definition per named type, still linked by `#/definitions/<name>`
 * refs, with every tagged definition recognised. generator/slots.ts turns the graph into one
 * schema per tagged type (inlining plain types, cutting family slots out).
 *
 * Fixes applied, each because tjs's output would otherwise misdescribe the type:
 * - `Record<string, X>` keeps X (tjs reads the mapped type's declaration, finds no index
 *   signature and emits `additionalProperties: false`, which would reject every entry);
 * - branded primitives `string & {}` stay strings (tjs emits an empty object);
 * - `$type` is a required string const; `$version` an integer const, required from version 2;
 * - the recursive JSON alias (`JsonValue`) becomes `{}`;
 * - `anyOf` of a primitive and literals of the same primitive collapses to the primitive.
 */
import path from "node:path";
import type * as TS from "typescript";
import type { Definition } from "typescript-json-schema";
import { compareStrings, type GenError } from "./errors.js";
import { setOwn } from "./runtime.js";
import { checkJsonable } from "./jsonable.js";
import { markerScope, readMarker, type MarkerScope, type TagInfo, type Ts } from "./markers.js";
import type { MarkedType } from "./scan.js";

export type Schema = Record<string, unknown>;

export interface SchemaGraph {
  /** Definition name of each marked type, by `$type`. */
  roots: Map<string, string>;
  /** Every definition, post-processed; refs are `#/definitions/<name>`. */
  definitions: Map<string, Schema>;
  /** Tagged definitions, including tagged types declared outside the scanned files (a dependency's .d.ts). */
  tagged: Map<string, TagInfo>;
  /** Definitions that mean "any JSON value" (the recursive JsonValue alias): emitted as `{}`. */
  jsonAny: Set<string>;
  /** Every non-library file the compiler read (cache dependencies). */
  files: string[];
  errors: GenError[];
}

export interface SchemaInput {
  root: string;
  types: readonly MarkedType[];
  /** A user project's tsconfig.json, for its module resolution and paths. */
  tsconfig?: string;
}

export const REF_PREFIX = "#/definitions/";

export function refName(ref: string): string {
  return decodeURIComponent(ref.slice(REF_PREFIX.length));
}

/** The project's compiler options, narrowed for speed and forced strict (tjs reads nullability from the program). */
function compilerOptions(ts: Ts, tsconfig: string | undefined): TS.CompilerOptions {
  let base: TS.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  };
  if (tsconfig) {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      tsconfig,
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => {},
      },
    );
    if (parsed) base = parsed.options;
  }
  return {
    ...base,
    strict: true,
    strictNullChecks: true,
    // Default options load every @types package: about 3 s instead of 0.3 s.
    types: [],
    lib: ["lib.es2023.d.ts"],
    noEmit: true,
    skipLibCheck: true,
    declaration: false,
    sourceMap: false,
    composite: false,
    incremental: false,
  };
}

function declarationNode(
  ts: Ts,
  sf: TS.SourceFile,
  name: string,
): TS.InterfaceDeclaration | TS.TypeAliasDeclaration | undefined {
  for (const st of sf.statements)
    if ((ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) && st.name.text === name) return st;
  return undefined;
}

export async function buildSchemaGraph(input: SchemaInput): Promise<SchemaGraph> {
  // Loaded here, not at the top: a cache hit never pays for the compiler.
  const tjs = await import("typescript-json-schema");
  const ts = tjs.ts as unknown as Ts;

  const errors: GenError[] = [];
  const roots = [...new Set(input.types.map((t) => t.file))].sort(compareStrings);
  const program = ts.createProgram(roots, compilerOptions(ts, input.tsconfig));
  const checker = program.getTypeChecker();

  // Tagged-ness of any type, read from its declaration's syntax (also in .d.ts files of dependencies).
  const scopes = new Map<TS.SourceFile, MarkerScope>();
  const tagOfType = (t: TS.Type): TagInfo | undefined => {
    const decls = [
      ...(t.aliasSymbol?.getDeclarations() ?? []),
      ...(t.aliasSymbol ? [] : (t.getSymbol()?.getDeclarations() ?? [])),
    ];
    for (const decl of decls) {
      if (!ts.isInterfaceDeclaration(decl) && !ts.isTypeAliasDeclaration(decl)) continue;
      const sf = decl.getSourceFile();
      let scope = scopes.get(sf);
      if (!scope) scopes.set(sf, (scope = markerScope(ts, sf)));
      const tag = readMarker(ts, scope, decl)?.tag;
      if (tag) return tag;
    }
    return undefined;
  };

  // One generator for every type: shared definitions are computed once.
  const args = {
    ...tjs.getDefaultArgs(),
    required: true,
    noExtraProps: true,
    strictNullChecks: true,
    ref: true,
    aliasRef: false,
    topRef: true,
    ignoreErrors: true,
  };
  const gen = new tjs.JsonSchemaGenerator([], {}, {}, {}, checker as never, args);
  const typesByName = new Map<string, TS.Type>();
  const patched = gen as unknown as PatchableGenerator;
  patchGenerator(ts, checker, patched, typesByName);

  const rootNames = new Map<string, string>();
  const located: GenError[] = [];
  for (const marked of input.types) {
    const sf = program.getSourceFile(marked.file);
    const decl = sf && declarationNode(ts, sf, marked.name);
    if (!decl) {
      errors.push({
        code: "schema-failed",
        file: rel(input.root, marked.file),
        line: marked.line,
        column: marked.column,
        message: `${marked.name} not found by the compiler`,
      });
      continue;
    }
    const type = checker.getTypeAtLocation(decl);
    const jsonErrors = checkJsonable(
      { ts, checker, program, root: input.root, isTagged: (t) => tagOfType(t) !== undefined },
      marked.name,
      decl,
      type,
    );
    if (jsonErrors.length > 0) {
      located.push(...jsonErrors);
      continue;
    }
    try {
      // asRef: the root becomes a named definition like every other, so refs to it are recognised.
      const symbol = checker.getSymbolAtLocation(decl.name);
      const ref = patched.getTypeDefinition(type, true, undefined, undefined, undefined, symbol);
      if (typeof ref.$ref !== "string") throw new Error("no definition was produced");
      rootNames.set(marked.$type, refName(ref.$ref));
    } catch (e) {
      errors.push({
        code: "schema-failed",
        file: rel(input.root, marked.file),
        line: marked.line,
        column: marked.column,
        message: `typescript-json-schema failed on ${marked.name}: ${(e as Error).message}`,
        hint: "simplify the type (plain interfaces, arrays, index signatures, unions of those)",
      });
    }
  }
  // Shared plain types (a base interface) would report once per tagged type: once is enough.
  const seen = new Set<string>();
  for (const entry of located) {
    const key = `${entry.file}:${entry.line}:${entry.column}:${entry.code}`;
    if (!seen.has(key)) errors.push(entry), seen.add(key);
  }

  const raw = gen.ReffedDefinitions as Record<string, Definition>;
  const tagged = new Map<string, TagInfo>();
  for (const [name, type] of typesByName) {
    const tag = tagOfType(type);
    if (tag) tagged.set(name, tag);
  }
  const definitions = new Map<string, Schema>();
  for (const name of Object.keys(raw).sort(compareStrings)) definitions.set(name, normalize(raw[name] as Schema));
  for (const [name, tag] of tagged) {
    const def = definitions.get(name);
    if (def) definitions.set(name, normalizeTagged(def, tag));
  }
  const jsonAny = new Set([...definitions].filter(([name, def]) => isJsonAny(name, def)).map(([name]) => name));

  const files = program
    .getSourceFiles()
    .filter((sf) => !program.isSourceFileDefaultLibrary(sf))
    .map((sf) => path.resolve(sf.fileName))
    .sort(compareStrings);
  return { roots: rootNames, definitions, tagged, jsonAny, files, errors };
}

function rel(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join("/");
}

// ---------------------------------------------------------------------------------------------
// typescript-json-schema patches (its internals are stable within the pinned 0.68.x line)

interface PatchableGenerator {
  getTypeDefinition(
    typ: TS.Type,
    asRef?: boolean,
    unionModifier?: string,
    prop?: TS.Symbol,
    reffedType?: TS.Symbol,
    pairedSymbol?: TS.Symbol,
    forceNotRef?: boolean,
    ignoreUndefined?: boolean,
  ): Definition;
  getClassDefinition(typ: TS.Type, definition: Definition): Definition;
  getDefinitionForProperty(prop: TS.Symbol, node: TS.Node): Definition | null;
}

function patchGenerator(
  ts: Ts,
  checker: TS.TypeChecker,
  gen: PatchableGenerator,
  typesByName: Map<string, TS.Type>,
): void {
  const Flags = ts.TypeFlags;
  const getTypeDefinition = gen.getTypeDefinition.bind(gen);
  const getClassDefinition = gen.getClassDefinition.bind(gen);

  gen.getTypeDefinition = (typ, ...rest) => {
    if (typ.flags & Flags.Intersection) {
      // `string & {}` (open string unions like ChatRole) and branded primitives: the primitive.
      const prim = (typ as TS.IntersectionType).types.find(
        (m) => m.flags & (Flags.StringLike | Flags.NumberLike | Flags.BooleanLike),
      );
      if (prim) typ = prim;
    }
    const def = getTypeDefinition(typ, ...rest);
    // Remember which type each named definition stands for: slots are recognised by type, not by name.
    if (typeof def.$ref === "string" && def.$ref.startsWith(REF_PREFIX)) {
      const name = refName(def.$ref);
      if (!typesByName.has(name)) typesByName.set(name, typ);
    }
    return def;
  };

  gen.getClassDefinition = (typ, definition) => {
    const out = getClassDefinition(typ, definition);
    // tjs collects properties with `all[name] = def`, which for a property named `__proto__` sets
    // the object's prototype instead: put it back as an own property, in declaration order.
    const props = checker.getPropertiesOfType(typ);
    const proto = props.find((p) => p.getName() === "__proto__" && !(p.flags & ts.SymbolFlags.Method));
    const node = proto?.valueDeclaration ?? proto?.getDeclarations()?.[0];
    const protoDef = proto && node ? gen.getDefinitionForProperty(proto, node) : null;
    if (protoDef) {
      const before = (out.properties ?? {}) as Record<string, Definition>;
      const properties: Record<string, Definition> = {};
      for (const prop of props) {
        const name = prop.getName();
        if (name === "__proto__") setOwn(properties, name, protoDef);
        else if (Object.hasOwn(before, name)) setOwn(properties, name, before[name]);
      }
      out.type ??= "object";
      out.properties = properties;
    }
    if (out.additionalProperties === false && !out.patternProperties) {
      // Record<string, X> and other mapped types: take the value type from the checker.
      const info = checker.getIndexInfoOfType(typ, ts.IndexKind.String);
      if (info) out.additionalProperties = gen.getTypeDefinition(info.type);
    }
    return out;
  };
}

// ---------------------------------------------------------------------------------------------
// Post-processing

/** Keywords that describe a schema without constraining it (kept when a schema is rewritten). */
export const ANNOTATIONS: ReadonlySet<string> = new Set(["description", "title", "examples", "default", "$comment"]);

function isBarePrimitive(s: unknown): s is { type: string } {
  if (typeof s !== "object" || s === null) return false;
  const keys = Object.keys(s).filter((k) => !ANNOTATIONS.has(k));
  return keys.length === 1 && keys[0] === "type" && typeof (s as { type: unknown }).type === "string";
}

function isLiteralOf(s: unknown, type: string): boolean {
  if (typeof s !== "object" || s === null) return false;
  const object = s as Schema;
  const keys = Object.keys(object).filter((k) => !ANNOTATIONS.has(k));
  return object.type === type && keys.every((k) => k === "type" || k === "enum" || k === "const");
}

/** Recursive clean-up of one tjs definition. */
export function normalize(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "propertyOrder" || key === "defaultProperties" || key === "typeof") continue;
    if (key === "properties" || key === "patternProperties" || key === "definitions") {
      const map: Schema = {};
      for (const [keyword, child] of Object.entries(value as Schema))
        setOwn(map, keyword, typeof child === "object" && child !== null ? normalize(child as Schema) : child); // `__proto__` too
      out[key] = map;
    } else if (key === "anyOf" || key === "oneOf" || key === "allOf" || (key === "items" && Array.isArray(value))) {
      out[key] = (value as unknown[]).map((v) => (typeof v === "object" && v !== null ? normalize(v as Schema) : v));
    } else if (
      [
        "items",
        "additionalProperties",
        "additionalItems",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
      ].includes(key)
    ) {
      out[key] = typeof value === "object" && value !== null ? normalize(value as Schema) : value;
    } else {
      out[key] = value;
    }
  }
  if (Array.isArray(out.anyOf)) {
    // "a" | "b" | (string & {}) is just a string.
    let branches = out.anyOf as Schema[];
    const primitives = new Set(branches.filter(isBarePrimitive).map((b) => b.type as string));
    branches = branches.filter((b) => isBarePrimitive(b) || ![...primitives].some((p) => isLiteralOf(b, p)));
    if (branches.length === 1) {
      delete out.anyOf;
      return { ...branches[0], ...out };
    }
    out.anyOf = branches;
  }
  return out;
}

function normalizeTagged(def: Schema, tag: TagInfo): Schema {
  const properties = { ...((def.properties as Schema | undefined) ?? {}) };
  properties.$type = { type: "string", const: tag.$type };
  properties.$version = { type: "integer", const: tag.version };
  const required = new Set((def.required as string[] | undefined) ?? []);
  required.add("$type");
  // Absent `$version` means 1, which keeps version-1 values byte-compatible with MEAI documents.
  if (tag.version === 1) required.delete("$version");
  else required.add("$version");
  return { ...def, type: "object", properties, required: [...required].sort(compareStrings) };
}

/**
 * "Any JSON value": `string | number | boolean | null | X[] | { [k: string]: X }` where X is the
 * alias itself (its definition) or an alias already known to mean any JSON (a property typed with
 * the alias directly, which tjs inlines one level deep).
 */
export function isJsonAnyShape(def: Schema, isAnyRef: (ref: string) => boolean): boolean {
  const branches = def.anyOf as Schema[] | undefined;
  if (!Array.isArray(branches)) return false;
  const refTo = (s: unknown) =>
    typeof s === "object" &&
    s !== null &&
    typeof (s as Schema).$ref === "string" &&
    isAnyRef((s as Schema).$ref as string);
  const types = new Set<string>();
  let array = false;
  let object = false;
  for (const branch of branches) {
    if (branch.type === "array" && refTo(branch.items)) array = true;
    else if (branch.type === "object" && refTo(branch.additionalProperties) && !branch.properties) object = true;
    else if (
      isBarePrimitive(branch) ||
      (Array.isArray(branch.type) && Object.keys(branch).every((k) => k === "type" || ANNOTATIONS.has(k)))
    )
      for (const typeName of [branch.type].flat() as string[]) types.add(typeName);
    else return false;
  }
  return (
    array &&
    object &&
    ["null", "string", "number", "boolean"].every((t) => types.has(t) || (t === "number" && types.has("integer")))
  );
}

function isJsonAny(name: string, def: Schema): boolean {
  const self = REF_PREFIX + encodeURIComponent(name);
  return isJsonAnyShape(def, (ref) => ref === self);
}
