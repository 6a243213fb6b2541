/**
 * Finds the migrations declared next to tagged types, with the same syntax-only scan as the
 * markers (no type checker, no import resolution):
 *
 * ```ts
 * import { defineMigration } from "statebag";
 * export const summaryV1toV2 = defineMigration({ type: "acme.Summary", from: 1, to: 2, up: (v) => ... });
 * export const summaryMigrations = [defineMigration({ ... }), defineMigration({ ... })];
 * ```
 *
 * A call counts when it is the initializer of an exported `const` or an element of an array
 * literal that is (the migration array form). Its `type`, `from` and `to` (a version, or
 * `{ type, version }` for a rename) must be literals: the generated registry imports the exported
 * binding, and the compatibility check reads the versions without running any code. A module-level
 * call that is not exported, or not written literally, is an error; calls inside functions are
 * runtime registrations (`registry.addMigration(...)`) and are not the generator's business.
 */
import type * as TS from "typescript";
import type { GenErrorCode } from "./errors.js";
import type { Ts } from "./markers.js";
import { renameRecipe } from "./recipes.js";

/** One migration step as written in the source (what the compatibility check needs). */
export interface ScannedMigration {
  /** The `$type` the step reads. */
  type: string;
  from: number;
  /** The `$type` it writes (`type` unless it renames). */
  toType: string;
  to: number;
  /** 1-based position of the `defineMigration` call. */
  line: number;
  column: number;
}

/** An exported binding that holds one migration, or an array of them. */
export interface MigrationExport {
  /** The exported name the registry imports. */
  exportName: string;
  /** `single`: `export const m = defineMigration(...)`; `array`: `export const ms = [defineMigration(...), ...]`. */
  kind: "single" | "array";
  /** Absolute path of the declaring file. */
  file: string;
  line: number;
  column: number;
  migrations: ScannedMigration[];
}

export interface MigrationProblem {
  code: Extract<GenErrorCode, "migration-not-exported" | "migration-not-literal">;
  node: TS.Node;
  message: string;
  hint: string;
}

/** Local names under which a file can call `defineMigration`. */
interface MigrationScope {
  names: Set<string>;
  namespaces: Set<string>;
}

function migrationScope(ts: Ts, sf: TS.SourceFile): MigrationScope {
  const names = new Set<string>();
  const namespaces = new Set<string>();
  for (const st of sf.statements) {
    if (!ts.isImportDeclaration(st)) continue;
    const clause = st.importClause;
    if (!clause || clause.isTypeOnly) continue;
    const bindings = clause.namedBindings;
    if (!bindings) continue;
    if (ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    else
      for (const el of bindings.elements) {
        if (el.isTypeOnly) continue;
        if ((el.propertyName ?? el.name).text === "defineMigration") names.add(el.name.text);
      }
  }
  return { names, namespaces };
}

function isDefineMigrationCall(ts: Ts, scope: MigrationScope, node: TS.Node): node is TS.CallExpression {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return scope.names.has(callee.text);
  return (
    ts.isPropertyAccessExpression(callee) &&
    ts.isIdentifier(callee.expression) &&
    scope.namespaces.has(callee.expression.text) &&
    callee.name.text === "defineMigration"
  );
}

/** `(x)`, `x as T`, `x satisfies T`, `<T>x`, `x!` -> `x`. */
function unwrap(ts: Ts, node: TS.Expression): TS.Expression {
  for (;;) {
    if (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isNonNullExpression(node) ||
      ts.isTypeAssertionExpression(node)
    )
      node = node.expression;
    else if (ts.isSatisfiesExpression?.(node)) node = node.expression;
    else return node;
  }
}

function propertyName(ts: Ts, name: TS.PropertyName): string | undefined {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNoSubstitutionTemplateLiteral(name)) return name.text;
  return undefined;
}

function stringValue(ts: Ts, node: TS.Expression): string | undefined {
  const unwrapped = unwrap(ts, node);
  return ts.isStringLiteral(unwrapped) || ts.isNoSubstitutionTemplateLiteral(unwrapped) ? unwrapped.text : undefined;
}

function versionValue(ts: Ts, node: TS.Expression): number | undefined {
  const unwrapped = unwrap(ts, node);
  if (!ts.isNumericLiteral(unwrapped)) return undefined;
  const version = Number(unwrapped.text);
  return Number.isInteger(version) && version >= 1 ? version : undefined;
}

const SHAPE =
  'defineMigration({ type: "my.Type", from: 1, to: 2, up }) or, for a rename, to: { type: "my.NewType", version: 2 }';

/** Reads the literal `{ type, from, to, up }` of one call. */
function readCall(
  ts: Ts,
  sf: TS.SourceFile,
  call: TS.CallExpression,
): { migration?: ScannedMigration; problems: MigrationProblem[] } {
  const problems: MigrationProblem[] = [];
  const notLiteral = (node: TS.Node, message: string) =>
    problems.push({
      code: "migration-not-literal",
      node,
      message,
      hint: `write the step's type and versions as literals: ${SHAPE}`,
    });
  const arg = call.arguments[0] ? unwrap(ts, call.arguments[0]) : undefined;
  if (!arg || !ts.isObjectLiteralExpression(arg) || call.arguments.length !== 1) {
    notLiteral(arg ?? call, "defineMigration takes one object literal { type, from, to, up }");
    return { problems };
  }
  const props = new Map<string, TS.ObjectLiteralElementLike>();
  for (const property of arg.properties) {
    if (ts.isSpreadAssignment(property)) {
      notLiteral(property, "defineMigration({ ...spread }) cannot be read without running code");
      continue;
    }
    const name = property.name ? propertyName(ts, property.name) : undefined;
    if (name !== undefined) props.set(name, property);
  }
  const initializerOf = (key: string): TS.Expression | undefined => {
    const property = props.get(key);
    return property && ts.isPropertyAssignment(property) ? property.initializer : undefined;
  };

  const typeNode = initializerOf("type");
  const type = typeNode && stringValue(ts, typeNode);
  if (type === undefined)
    notLiteral(
      typeNode ?? arg,
      `the migration's "type" must be a string literal${typeNode ? `, found ${typeNode.getText(sf)}` : " (it is missing)"}`,
    );

  const fromNode = initializerOf("from");
  const from = fromNode && versionValue(ts, fromNode);
  if (from === undefined)
    notLiteral(
      fromNode ?? arg,
      `the migration's "from" must be an integer literal >= 1${fromNode ? `, found ${fromNode.getText(sf)}` : " (it is missing)"}`,
    );

  const toNode = initializerOf("to");
  let to: number | undefined;
  let toType = type;
  if (toNode === undefined) notLiteral(arg, 'the migration\'s "to" is missing');
  else {
    const target = unwrap(ts, toNode);
    if (ts.isObjectLiteralExpression(target)) {
      let renamed: string | undefined;
      for (const property of target.properties) {
        const name = !ts.isSpreadAssignment(property) && property.name ? propertyName(ts, property.name) : undefined;
        if (name === "type" && ts.isPropertyAssignment(property)) renamed = stringValue(ts, property.initializer);
        if (name === "version" && ts.isPropertyAssignment(property)) to = versionValue(ts, property.initializer);
      }
      if (renamed === undefined || to === undefined)
        notLiteral(
          toNode,
          `the migration's "to" must be { type: "<string literal>", version: <integer literal> }, found ${toNode.getText(sf)}`,
        );
      toType = renamed;
    } else {
      to = versionValue(ts, toNode);
      if (to === undefined)
        notLiteral(
          toNode,
          `the migration's "to" must be an integer literal >= 1 or { type, version }, found ${toNode.getText(sf)}`,
        );
    }
  }
  if (!props.has("up")) notLiteral(arg, 'the migration has no "up" function');
  if (problems.length > 0 || type === undefined || from === undefined || to === undefined || toType === undefined)
    return { problems };
  const { line, character } = sf.getLineAndCharacterOfPosition(call.getStart(sf));
  return { migration: { type, from, toType, to, line: line + 1, column: character + 1 }, problems };
}

function isFunctionLike(ts: Ts, node: TS.Node): boolean {
  return ts.isFunctionLike(node) || ts.isClassLike(node);
}

/**
 * The exported migrations of one file, and the problems with its other module-level
 * `defineMigration` calls. Returns undefined quickly for a file that cannot call it.
 */
export function scanMigrations(
  ts: Ts,
  sf: TS.SourceFile,
  file: string,
): { exports: MigrationExport[]; problems: MigrationProblem[] } | undefined {
  const scope = migrationScope(ts, sf);
  if (scope.names.size === 0 && scope.namespaces.size === 0) return undefined;

  // Names exported through `export { a, b as c }` (no module specifier): local -> exported names.
  const exportedLocals = new Map<string, string[]>();
  for (const st of sf.statements) {
    if (
      !ts.isExportDeclaration(st) ||
      st.moduleSpecifier ||
      st.isTypeOnly ||
      !st.exportClause ||
      !ts.isNamedExports(st.exportClause)
    )
      continue;
    for (const el of st.exportClause.elements) {
      if (el.isTypeOnly) continue;
      const local = (el.propertyName ?? el.name).text;
      exportedLocals.set(local, [...(exportedLocals.get(local) ?? []), el.name.text]);
    }
  }

  const exports: MigrationExport[] = [];
  const problems: MigrationProblem[] = [];
  const accounted = new Set<TS.Node>();
  const pos = (node: TS.Node) => {
    const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    return { line: line + 1, column: character + 1 };
  };

  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    const exported = st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
    const isConst = (st.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const decl of st.declarationList.declarations) {
      if (!decl.initializer || !ts.isIdentifier(decl.name)) continue;
      const init = unwrap(ts, decl.initializer);
      let calls: TS.CallExpression[];
      let kind: MigrationExport["kind"];
      if (isDefineMigrationCall(ts, scope, init)) {
        calls = [init];
        kind = "single";
      } else if (
        ts.isArrayLiteralExpression(init) &&
        init.elements.some((e) => isDefineMigrationCall(ts, scope, unwrap(ts, e)))
      ) {
        kind = "array";
        calls = [];
        for (const el of init.elements) {
          const element = unwrap(ts, el);
          if (isDefineMigrationCall(ts, scope, element)) calls.push(element);
          else
            problems.push({
              code: "migration-not-literal",
              node: el,
              message: `the migration array ${decl.name.text} holds ${el.getText(sf).slice(0, 40)}, not a defineMigration(...) call`,
              hint: "a migration array holds defineMigration(...) calls only; export other migrations under their own names",
            });
        }
      } else continue;
      for (const call of calls) accounted.add(call);
      const names = exported ? [decl.name.text] : (exportedLocals.get(decl.name.text) ?? []);
      if (names.length === 0 || !isConst) {
        problems.push({
          code: "migration-not-exported",
          node: decl.name,
          message:
            !isConst && names.length > 0
              ? `migration ${decl.name.text} is not a const`
              : `migration ${decl.name.text} is not exported`,
          hint: `declare it as \`export const ${decl.name.text} = ...\`: the generated registry imports every migration, so defaultRegistry() and the compatibility check see it`,
        });
        continue;
      }
      const migrations: ScannedMigration[] = [];
      for (const call of calls) {
        const read = readCall(ts, sf, call);
        problems.push(...read.problems);
        if (read.migration) migrations.push(read.migration);
      }
      if (migrations.length !== calls.length) continue;
      exports.push({ exportName: names[0]!, kind, file, ...pos(decl.name), migrations });
    }
  }

  // Any other module-level call: neither exported nor registered anywhere the generator can see.
  const visit = (node: TS.Node): void => {
    if (isFunctionLike(ts, node)) return;
    if (isDefineMigrationCall(ts, scope, node) && !accounted.has(node)) {
      problems.push({
        code: "migration-not-exported",
        node,
        message: "this defineMigration(...) call is not assigned to an exported const",
        hint: "write `export const myMigration = defineMigration({...})` (or an exported array of calls); migrations built inside functions are runtime registrations the generator does not see",
      });
    }
    ts.forEachChild(node, visit);
  };
  for (const st of sf.statements) visit(st);
  return { exports, problems };
}

// ---------------------------------------------------------------------------------------------
// Checks across files (after the scan): what the runtime registry would refuse, found at gen time.

/** A declared migration step, as the generator reports and caches it. */
export interface MigrationSummary {
  type: string;
  from: number;
  toType: string;
  to: number;
  /** The exported binding that holds it. */
  exportName: string;
  /** `relative/path.ts:line` of the `defineMigration` call. */
  source: string;
}

export interface MigrationCheckInput {
  exports: readonly MigrationExport[];
  /** Declared tagged types: `$type` -> version and where (for messages). */
  types: ReadonlyMap<string, { version: number; source: string }>;
  /** Absolute file -> path relative to the project root. */
  relative: (file: string) => string;
}

export interface MigrationCheckError {
  code: "migration-conflict";
  file: string;
  line: number;
  column: number;
  message: string;
  hint: string;
}

export interface MigrationCheck {
  summaries: MigrationSummary[];
  /** Current `$type` -> its former names (sources of rename steps that end at it), sorted. */
  formerNames: Map<string, string[]>;
  errors: MigrationCheckError[];
}

/**
 * Checks the declared steps against the declared types: a step writes a version its type has,
 * reads an older one, no two steps read the same (type, version), a renamed type's old name is no
 * longer declared and its chain ends at a declared type. Also derives each type's former names.
 */
export function checkMigrations(input: MigrationCheckInput): MigrationCheck {
  const summaries: MigrationSummary[] = [];
  const errors: MigrationCheckError[] = [];
  const at = new Map<MigrationSummary, { file: string; line: number; column: number }>();
  for (const ex of input.exports) {
    const file = input.relative(ex.file);
    for (const migration of ex.migrations) {
      const summary: MigrationSummary = {
        type: migration.type,
        from: migration.from,
        toType: migration.toType,
        to: migration.to,
        exportName: ex.exportName,
        source: `${file}:${migration.line}`,
      };
      summaries.push(summary);
      at.set(summary, { file, line: migration.line, column: migration.column });
    }
  }
  const fail = (s: MigrationSummary, message: string, hint: string) =>
    errors.push({ code: "migration-conflict", ...at.get(s)!, message, hint });
  const describe = (s: MigrationSummary) =>
    s.toType === s.type ? `"${s.type}" v${s.from} -> v${s.to}` : `"${s.type}" v${s.from} -> "${s.toType}" v${s.to}`;

  const byStart = new Map<string, MigrationSummary>();
  for (const summary of summaries) {
    const key = `${summary.type}\u0000${summary.from}`;
    const other = byStart.get(key);
    if (other) {
      fail(
        summary,
        `two migrations read "${summary.type}" v${summary.from}: ${describe(other)} (${other.source}) and ${describe(summary)} (${summary.source})`,
        "each (type, from) has exactly one step; remove one of them",
      );
      continue;
    }
    byStart.set(key, summary);
  }

  const renames = new Map<string, MigrationSummary[]>();
  for (const summary of summaries)
    if (summary.toType !== summary.type) renames.set(summary.type, [...(renames.get(summary.type) ?? []), summary]);

  // The latest version a (possibly no longer declared) type reached, as its steps say.
  const lastVersionOf = (type: string) =>
    Math.max(...summaries.filter((m) => m.type === type && m.toType === type).map((m) => m.to));
  for (const summary of summaries) {
    const declared = input.types.get(summary.type);
    if (summary.toType === summary.type) {
      if (summary.to <= summary.from) {
        fail(
          summary,
          `migration ${describe(summary)} does not raise the version`,
          "versions only go up; to undo a change, write a new version",
        );
      } else if (!declared && renameTarget(summary.type, renames, input.types) === undefined) {
        // (A step of a former name that is itself renamed later is fine: it evolves old values first.)
        fail(
          summary,
          `migration ${describe(summary)}: no tagged type declares "${summary.type}"`,
          `declare the type, or, if it was renamed: ${renameRecipe(summary.type, lastVersionOf(summary.type))}`,
        );
      } else if (declared && summary.to > declared.version) {
        fail(
          summary,
          `migration ${describe(summary)} writes v${summary.to}, but "${summary.type}" is at version ${declared.version} (${declared.source})`,
          `bump the type to version ${summary.to}, or fix the step's "to"`,
        );
      }
      continue;
    }
    if (declared) {
      fail(
        summary,
        `migration ${describe(summary)} renames "${summary.type}", but "${summary.type}" is still declared (${declared.source})`,
        `a renamed type's old $type must no longer be declared: change the marker at ${declared.source} to ProviderState<"${summary.toType}", ${summary.to}> (or the Tagged<...> equivalent)`,
      );
      continue;
    }
    // Follow the rename chain to the declared type it ends at.
    const end = renameTarget(summary.toType, renames, input.types);
    if (end === undefined) {
      fail(
        summary,
        `migration ${describe(summary)}: no tagged type declares "${summary.toType}" (nor does a rename chain from it end at one)`,
        `declare "${summary.toType}", or point the rename at a declared type`,
      );
      continue;
    }
    const target = input.types.get(summary.toType);
    if (target && summary.to > target.version) {
      fail(
        summary,
        `migration ${describe(summary)} writes v${summary.to}, but "${summary.toType}" is at version ${target.version} (${target.source})`,
        `fix the step's "to" version (at most ${target.version})`,
      );
    }
  }

  const formerNames = new Map<string, string[]>();
  for (const former of renames.keys()) {
    if (input.types.has(former)) continue;
    const end = renameTarget(former, renames, input.types);
    if (end === undefined) continue;
    formerNames.set(end, [...(formerNames.get(end) ?? []), former]);
  }
  for (const list of formerNames.values()) list.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { summaries, formerNames, errors };
}

/** The declared type a (possibly renamed) name ends at, following rename steps; undefined on a dead end or a loop. */
function renameTarget(
  name: string,
  renames: ReadonlyMap<string, MigrationSummary[]>,
  types: ReadonlyMap<string, unknown>,
): string | undefined {
  const seen = new Set<string>();
  let current = name;
  while (!types.has(current)) {
    if (seen.has(current)) return undefined;
    seen.add(current);
    const next = renames.get(current)?.[0];
    if (!next) return undefined;
    current = next.toType;
  }
  return current;
}
