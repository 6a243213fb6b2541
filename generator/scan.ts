/**
 * Finds the marked (`$type`-tagged) declarations with a syntax-only ts-morph scan: no import
 * resolution, no type checker, so it takes milliseconds. The marker must be written literally
 * (see generator/markers.ts); that is what makes a cheap scan possible.
 */
import path from "node:path";
import { Project, ts as morphTs } from "ts-morph";
import type * as TS from "typescript";
import { compareStrings, type GenError } from "./errors.js";
import { markerScope, readMarker, type TagInfo, type Ts } from "./markers.js";
import { scanMigrations, type MigrationExport } from "./migrations.js";

export interface MarkedType extends TagInfo {
  /** Declaration name. */
  name: string;
  /** Absolute path of the declaring file. */
  file: string;
  /** 1-based position of the declaration name. */
  line: number;
  column: number;
}

export interface ScanInput {
  root: string;
  /** Files to scan (default mode); ignored when `tsconfig` is given. */
  files?: readonly { path: string; text: string }[];
  /** A user project's tsconfig.json: its include/files decide what is scanned. */
  tsconfig?: string;
  /** Never scanned (the generated output). */
  excludeDirs: readonly string[];
}

export interface ScanResult {
  /** Absolute paths of every scanned file, sorted. */
  files: string[];
  types: MarkedType[];
  /** Exported `defineMigration(...)` bindings (see generator/migrations.ts), by file and line. */
  migrations: MigrationExport[];
  errors: GenError[];
}

export function relativePath(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join("/");
}

function isExcluded(file: string, excludeDirs: readonly string[]): boolean {
  return (
    file.endsWith(".d.ts") ||
    file.split(/[\\/]/).includes("node_modules") ||
    excludeDirs.some((dir) => file === dir || file.startsWith(dir + path.sep) || file.startsWith(dir + "/"))
  );
}

export function scan(input: ScanInput): ScanResult {
  // ts-morph bundles its own compiler; the marker reader takes whichever namespace it is given.
  const ts = morphTs as unknown as Ts;
  const project = input.tsconfig
    ? new Project({ tsConfigFilePath: input.tsconfig, skipFileDependencyResolution: true, skipLoadingLibFiles: true })
    : new Project({
        skipFileDependencyResolution: true,
        skipLoadingLibFiles: true,
        compilerOptions: { allowJs: false },
      });
  if (!input.tsconfig)
    for (const file of input.files ?? []) project.createSourceFile(file.path, file.text, { overwrite: true });

  const errors: GenError[] = [];
  const types: MarkedType[] = [];
  const migrations: MigrationExport[] = [];
  const files: string[] = [];

  for (const sourceFile of project.getSourceFiles()) {
    const file = path.resolve(sourceFile.getFilePath());
    if (isExcluded(file, input.excludeDirs)) continue;
    files.push(file);
    const sf = sourceFile.compilerNode as unknown as TS.SourceFile;
    const where = (node: TS.Node) => {
      const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      return { file: relativePath(input.root, file), line: line + 1, column: character + 1 };
    };
    const declared = scanMigrations(ts, sf, file);
    if (declared) {
      migrations.push(...declared.exports);
      for (const problem of declared.problems)
        errors.push({ code: problem.code, ...where(problem.node), message: problem.message, hint: problem.hint });
    }
    const scope = markerScope(ts, sf);
    // Cheap early exit: a file that cannot name a marker has no marked types.
    if (scope.names.size === 0 && scope.namespaces.size === 0) continue;
    // Top-level declarations only: the registry must be able to import every tagged type.
    for (const decl of [...sourceFile.getInterfaces(), ...sourceFile.getTypeAliases()]) {
      const raw = decl.compilerNode as TS.InterfaceDeclaration | TS.TypeAliasDeclaration;
      const read = readMarker(ts, scope, raw);
      if (!read || read.helper) continue;
      for (const problem of read.problems)
        errors.push({ code: problem.code, ...where(problem.node), message: problem.message, hint: problem.hint });
      if (!decl.isExported()) {
        errors.push({
          code: "not-exported",
          ...where(raw.name),
          message: `tagged type ${decl.getName()} is not exported`,
          hint: `add \`export\`: the generated registry and other modules must be able to name it`,
        });
        continue;
      }
      if (read.tag) {
        const { line, column } = where(raw.name);
        types.push({ ...read.tag, name: decl.getName(), file, line, column });
      }
    }
  }

  errors.push(...duplicates(input.root, types));
  files.sort(compareStrings);
  types.sort((a, b) => compareStrings(a.$type, b.$type) || compareStrings(a.file, b.file) || a.line - b.line);
  migrations.sort((a, b) => compareStrings(a.file, b.file) || a.line - b.line);
  return { files, types, migrations, errors };
}

/** `$type` is unique across the whole registry, whatever the family. */
function duplicates(root: string, types: readonly MarkedType[]): GenError[] {
  const byType = new Map<string, MarkedType[]>();
  for (const type of types) byType.set(type.$type, [...(byType.get(type.$type) ?? []), type]);
  const errors: GenError[] = [];
  for (const [$type, list] of byType) {
    if (list.length < 2) continue;
    const sorted = [...list].sort((a, b) => compareStrings(a.file, b.file) || a.line - b.line);
    const places = sorted.map((t) => `${t.name} (${relativePath(root, t.file)}:${t.line})`).join(" and ");
    for (const duplicate of sorted.slice(1))
      errors.push({
        code: "duplicate-type",
        file: relativePath(root, duplicate.file),
        line: duplicate.line,
        column: duplicate.column,
        message: `$type "${$type}" is declared twice: ${places}`,
        hint: 'every $type is unique across the registry; prefix yours with a namespace ("acme.Summary")',
      });
  }
  return errors;
}
