/**
 * Reads the `Tagged<"Family", "T", V>` / `ProviderState<"T", V>` markers from syntax alone.
 *
 * Works on raw TypeScript nodes and takes the `ts` namespace as a parameter: the scan runs on
 * ts-morph's bundled compiler, the schema phase on the `typescript` package typescript-json-schema
 * uses, and both must agree on what is tagged (including declarations in a dependency's .d.ts,
 * such as statebag's own message contents seen from a user project).
 */
import type * as TS from "typescript";
import { TYPE_ID_PATTERN } from "./runtime.js";

export type Ts = typeof TS;
export type MarkerName = "Tagged" | "ProviderState";

export interface TagInfo {
  family: string;
  $type: string;
  version: number;
}

export interface MarkerProblem {
  code:
    | "type-not-literal"
    | "bad-type-id"
    | "family-not-literal"
    | "bad-version"
    | "generic-tagged"
    | "multiple-markers";
  node: TS.Node;
  message: string;
  hint: string;
}

export interface MarkerRead {
  /** Absent when the marker's arguments are unusable (see problems). */
  tag?: TagInfo;
  problems: MarkerProblem[];
  /** A generic helper built on a marker (like `ProviderState` itself): not a tagged type. */
  helper?: boolean;
}

/** `$type` ids end up in file names and generated identifiers: the runtime registry's rule. */
const TYPE_ID = TYPE_ID_PATTERN;
const FAMILY_ID = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Local names under which a file can refer to the markers. */
export interface MarkerScope {
  names: Map<string, MarkerName>;
  namespaces: Set<string>;
}

export function markerScope(ts: Ts, sf: TS.SourceFile): MarkerScope {
  const names = new Map<string, MarkerName>();
  const namespaces = new Set<string>();
  for (const st of sf.statements) {
    if (ts.isImportDeclaration(st)) {
      const bindings = st.importClause?.namedBindings;
      if (!bindings) continue;
      if (ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
      else
        for (const el of bindings.elements) {
          const imported = (el.propertyName ?? el.name).text;
          if (imported === "Tagged" || imported === "ProviderState") names.set(el.name.text, imported);
        }
    } else if (ts.isTypeAliasDeclaration(st) && (st.name.text === "Tagged" || st.name.text === "ProviderState")) {
      // The file that defines the markers (src/runtime/core/tagged.ts).
      names.set(st.name.text, st.name.text);
    }
  }
  return { names, namespaces };
}

interface MarkerRef {
  marker: MarkerName;
  node: TS.Node;
  args: readonly TS.TypeNode[];
}

function markerOf(ts: Ts, scope: MarkerScope, name: TS.Node): MarkerName | undefined {
  if (ts.isIdentifier(name)) return scope.names.get(name.text);
  // `sb.Tagged<...>` (namespace import) in a type reference or a heritage clause.
  const left = ts.isQualifiedName(name) ? name.left : ts.isPropertyAccessExpression(name) ? name.expression : undefined;
  const right = ts.isQualifiedName(name) ? name.right : ts.isPropertyAccessExpression(name) ? name.name : undefined;
  if (left && right && ts.isIdentifier(left) && scope.namespaces.has(left.text)) {
    if (right.text === "Tagged" || right.text === "ProviderState") return right.text;
  }
  return undefined;
}

/** The markers a declaration literally references: interface heritage, or a type alias's (intersected) body. */
function findMarkers(ts: Ts, scope: MarkerScope, decl: TS.InterfaceDeclaration | TS.TypeAliasDeclaration): MarkerRef[] {
  const refs: MarkerRef[] = [];
  if (ts.isInterfaceDeclaration(decl)) {
    for (const clause of decl.heritageClauses ?? [])
      for (const type of clause.types) {
        const marker = markerOf(ts, scope, type.expression);
        if (marker) refs.push({ marker, node: type, args: type.typeArguments ?? [] });
      }
    return refs;
  }
  const visit = (node: TS.TypeNode): void => {
    if (ts.isParenthesizedTypeNode(node)) return visit(node.type);
    if (ts.isIntersectionTypeNode(node)) return node.types.forEach(visit);
    if (ts.isTypeReferenceNode(node)) {
      const marker = markerOf(ts, scope, node.typeName);
      if (marker) refs.push({ marker, node, args: node.typeArguments ?? [] });
    }
  };
  visit(decl.type);
  return refs;
}

function stringLiteral(ts: Ts, node: TS.TypeNode | undefined): string | undefined {
  if (
    node &&
    ts.isLiteralTypeNode(node) &&
    (ts.isStringLiteral(node.literal) || ts.isNoSubstitutionTemplateLiteral(node.literal))
  )
    return node.literal.text;
  return undefined;
}

function numberLiteral(ts: Ts, node: TS.TypeNode | undefined): number | undefined {
  if (!node || !ts.isLiteralTypeNode(node)) return undefined;
  const lit = node.literal;
  if (ts.isNumericLiteral(lit)) return Number(lit.text);
  if (ts.isPrefixUnaryExpression(lit) && lit.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(lit.operand))
    return -Number(lit.operand.text);
  return undefined;
}

/**
 * Reads a declaration's marker. Returns undefined for a declaration that references no marker.
 */
export function readMarker(
  ts: Ts,
  scope: MarkerScope,
  decl: TS.InterfaceDeclaration | TS.TypeAliasDeclaration,
): MarkerRead | undefined {
  const refs = findMarkers(ts, scope, decl);
  if (refs.length === 0) return undefined;
  const problems: MarkerProblem[] = [];
  const name = decl.name.text;
  if (refs.length > 1) {
    problems.push({
      code: "multiple-markers",
      node: refs[1]!.node,
      message: `${name} references ${refs.length} markers; a type has exactly one $type`,
      hint: "keep one Tagged<...>/ProviderState<...>; share other properties through a plain base interface",
    });
    return { problems };
  }
  const ref = refs[0]!;
  const [familyNode, typeNode, versionNode] =
    ref.marker === "ProviderState" ? [undefined, ref.args[0], ref.args[1]] : [ref.args[0], ref.args[1], ref.args[2]];

  const family = ref.marker === "ProviderState" ? "ProviderState" : stringLiteral(ts, familyNode);
  const $type = stringLiteral(ts, typeNode);
  const version = numberLiteral(ts, versionNode);

  if (decl.typeParameters?.length) {
    // `type ProviderState<T, V> = Tagged<"ProviderState", T, V>` builds a marker; it is not a tagged type.
    if (family === undefined || $type === undefined || version === undefined) return { problems, helper: true };
    problems.push({
      code: "generic-tagged",
      node: decl.name,
      message: `tagged type ${name} has type parameters; one $type needs one schema`,
      hint: `remove the type parameters, or declare one tagged type per instantiation`,
    });
    return { problems };
  }

  const sig = ref.marker === "ProviderState" ? 'ProviderState<"my.Type", 1>' : 'Tagged<"Family", "my.type", 1>';
  if (ref.marker === "Tagged" && family === undefined)
    problems.push({
      code: "family-not-literal",
      node: familyNode ?? ref.node,
      message: `the family of ${name} is not a string literal`,
      hint: `write the family as a literal: ${sig}`,
    });
  else if (family !== undefined && !FAMILY_ID.test(family))
    problems.push({
      code: "family-not-literal",
      node: familyNode ?? ref.node,
      message: `family "${family}" of ${name} is not an identifier`,
      hint: "use letters, digits and _ (it names a folder and a schema file)",
    });

  if ($type === undefined)
    problems.push({
      code: "type-not-literal",
      node: typeNode ?? ref.node,
      message: `the $type of ${name} is not a string literal`,
      hint: `write the $type as a literal: ${sig}`,
    });
  else if (!TYPE_ID.test($type))
    problems.push({
      code: "bad-type-id",
      node: typeNode!,
      message: `$type "${$type}" of ${name} has characters that cannot name a file`,
      hint: "use letters, digits, '_', '.' and '-', starting with a letter or '_' (for example \"acme.SummaryState\")",
    });

  if (versionNode === undefined)
    problems.push({
      code: "bad-version",
      node: ref.node,
      message: `${name} has no version`,
      hint: `add the version as the last type argument: ${sig}`,
    });
  else if (version === undefined || !Number.isInteger(version) || version < 1)
    problems.push({
      code: "bad-version",
      node: versionNode,
      message: `the version of ${name} must be an integer literal >= 1, got ${versionNode.getText()}`,
      hint: "start at 1 and add 1 with each breaking change (with a migration)",
    });

  if (problems.length > 0 || family === undefined || $type === undefined || version === undefined) return { problems };
  return { tag: { family, $type, version }, problems };
}
