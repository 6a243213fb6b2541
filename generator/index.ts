/**
 * Programmatic API of `npm run gen`: scan -> schemas -> slots -> validators -> files, then write
 * (or, with `check`, compare). Errors from every phase are collected and returned together;
 * nothing is written when there is any.
 *
 * Heavy modules (ts-morph, TypeScript, typescript-json-schema, ajv) load only on a cache miss.
 */
import fs from "node:fs";
import path from "node:path";
import { cacheKey, dependencyHashes, readCache, readSources, writeCache, type CacheEntry, type SourceFile } from "./cache.js";
import {
  documentSchemaFile,
  familySchemaFile,
  GENERATED_HEADER,
  historyFile,
  registryModule,
  validatorsModule,
  type EmittedType,
  type ModuleOptions,
} from "./emit.js";
import type { Failure } from "./compat/check.js";
import { displayPointer } from "./compat/schema.js";
import { compareStrings, formatError, sortErrors, type GenError } from "./errors.js";
import type { MigrationExport, MigrationSummary } from "./migrations.js";
import type { MarkedType } from "./scan.js";
import { buildTypeSchemas, familyFile, memberFile, type FamilySlot } from "./slots.js";

export { formatError, type GenError } from "./errors.js";
export type { FamilySlot } from "./slots.js";
export type { MigrationSummary } from "./migrations.js";

export interface GenerateOptions {
  /** Base for relative paths and for this repo's default layout. Default: `process.cwd()`. */
  cwd?: string;
  /** A user project's tsconfig.json: its include/files are scanned, its directory is the project root. */
  project?: string;
  /** Generated modules (registry.ts, validators.ts). Default: `<root>/src/generated`. */
  out?: string;
  /** JSON Schema files. Default: `<root>/schemas`. */
  schemas?: string;
  /**
   * Module the generated code imports `TypeDefinition`, `Validator` and `isDateTime` from.
   * Default: `"statebag"` with `project`; this repo's `src/runtime/*.js` otherwise.
   */
  runtimeImport?: string;
  /** Compare only: write nothing, report stale/missing/extra files. */
  check?: boolean;
  /** Use and update the no-op cache. Default: true. */
  cache?: boolean;
  /** The command shown in generated headers. */
  regenerateCommand?: string;
  /**
   * Run the compatibility check (generator/compat) after generating: frozen history intact,
   * no breaking change without a version bump, a migration path from every stored version,
   * golden fixtures for every version. Without `check` it records new frozen schemas and renamed
   * types (`update`); with `check` it only reports. Failures make the run exit 1.
   * Default false here; `npm run gen` turns it on.
   */
  compat?: boolean;
  /** Golden fixtures: `<fixtures>/<$type>/v<N>.json`. Default: `<root>/test/fixtures`. */
  fixtures?: string;
  /**
   * Before the compatibility check, write a starting-point fixture for every type and version
   * that has none (`writeScaffoldFixtures`, never overwriting). Not with `check`.
   */
  scaffoldFixtures?: boolean;
}

export interface TypeSummary {
  $type: string;
  family: string;
  version: number;
  name: string;
  source: string;
  slots: FamilySlot[];
  /** Earlier `$type`s (sources of rename migrations ending at this type). */
  formerNames?: string[];
}

/** What the compatibility check found (`compat: true`). */
export interface CompatResult {
  failures: Failure[];
  /** Frozen schemas the check recorded in the lock (update mode). */
  recorded: string[];
  /** Renamed `$type`s it recorded in `retired.json` (update mode). */
  retired: string[];
  /** Types compared against their frozen schema of the same version. */
  compared: number;
}

export interface GeneratedFile {
  /** Relative to `cwd`, forward slashes. */
  path: string;
  content: string;
  /** Frozen history: written only when missing, never compared or overwritten. */
  createOnly: boolean;
}

export interface GenerateResult {
  ok: boolean;
  /** 0 success, 1 generator errors or (check) stale output, 2 usage error: what the CLI exits with. */
  exitCode: 0 | 1 | 2;
  errors: GenError[];
  /** Every file the generator produces (empty when there are errors). */
  files: GeneratedFile[];
  types: TypeSummary[];
  /** Files whose content differs from what is generated (relative to cwd). */
  stale: string[];
  /** Files that do not exist yet. */
  missing: string[];
  /** Generated files on disk that would no longer be generated. */
  extra: string[];
  /** Files written / deleted by this run (always empty with `check`). */
  written: string[];
  deleted: string[];
  /** Frozen schemas newly recorded in `schemas/history/frozen.lock.json` (lock keys). */
  recorded: string[];
  cacheHit: boolean;
  /** Declared migration steps (`export const ... = defineMigration(...)`), in file and line order. */
  migrations: MigrationSummary[];
  /** The compatibility check's findings, when it ran. */
  compat?: CompatResult;
  /** Golden fixtures scaffolded by this run (`scaffoldFixtures`), relative to cwd. */
  scaffolded: string[];
}

interface Config {
  cwd: string;
  root: string;
  tsconfig?: string;
  /** Source roots walked for the cache key (and scanned in default mode). */
  walkRoots: string[];
  outDir: string;
  schemasDir: string;
  fixturesDir: string;
  module: ModuleOptions & { formatsImport: string };
  check: boolean;
  cache: boolean;
  compat: boolean;
  scaffoldFixtures: boolean;
}

class UsageError extends Error {}

function posix(p: string): string {
  return p.split(path.sep).join("/");
}

function relImport(fromDir: string, file: string): string {
  const r = posix(path.relative(fromDir, file));
  return r.startsWith(".") ? r : `./${r}`;
}

function resolveConfig(options: GenerateOptions): Config {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  let root = cwd;
  let tsconfig: string | undefined;
  if (options.project !== undefined) {
    tsconfig = path.resolve(cwd, options.project);
    if (fs.existsSync(tsconfig) && fs.statSync(tsconfig).isDirectory()) tsconfig = path.join(tsconfig, "tsconfig.json");
    if (!fs.existsSync(tsconfig)) throw new UsageError(`--project ${options.project}: no such file`);
    root = path.dirname(tsconfig);
  } else if (!fs.existsSync(path.join(root, "src"))) {
    throw new UsageError(`no src/ directory in ${root}; pass --project path/to/tsconfig.json`);
  }
  const outDir = options.out !== undefined ? path.resolve(cwd, options.out) : path.join(root, "src", "generated");
  const schemasDir = options.schemas !== undefined ? path.resolve(cwd, options.schemas) : path.join(root, "schemas");
  const fixturesDir = options.fixtures !== undefined ? path.resolve(cwd, options.fixtures) : path.join(root, "test", "fixtures");
  if (options.scaffoldFixtures && options.check) throw new UsageError("--scaffold-fixtures writes files; it cannot be combined with --check");
  const typesImport = options.runtimeImport ?? (tsconfig ? "statebag" : relImport(outDir, path.join(root, "src/runtime/persistence/registry-types.js")));
  const formatsImport = options.runtimeImport ?? (tsconfig ? "statebag" : relImport(outDir, path.join(root, "src/runtime/persistence/formats.js")));
  const regenerate =
    options.regenerateCommand ?? (tsconfig ? `statebag gen --project ${posix(path.relative(root, tsconfig))}` : "npm run gen");
  return {
    cwd,
    root,
    tsconfig,
    walkRoots: tsconfig ? [root] : [path.join(root, "src")],
    outDir,
    schemasDir,
    fixturesDir,
    module: { typesImport, formatsImport, regenerate },
    check: options.check ?? false,
    cache: options.cache ?? true,
    compat: options.compat ?? false,
    scaffoldFixtures: options.scaffoldFixtures ?? false,
  };
}

function emptyResult(exitCode: 0 | 1 | 2, errors: GenError[]): GenerateResult {
  return { ok: exitCode === 0, exitCode, errors, files: [], types: [], stale: [], missing: [], extra: [], written: [], deleted: [], recorded: [], cacheHit: false, migrations: [], scaffolded: [] };
}

export async function generate(options: GenerateOptions = {}): Promise<GenerateResult> {
  let cfg: Config;
  try {
    cfg = resolveConfig(options);
  } catch (e) {
    if (e instanceof UsageError) return emptyResult(2, [{ code: "usage", message: e.message }]);
    throw e;
  }

  const sources = readSources(cfg.walkRoots, [cfg.outDir, cfg.schemasDir]);
  const key = cacheKey(sources, cfg.root, {
    tsconfig: cfg.tsconfig && posix(path.relative(cfg.root, cfg.tsconfig)),
    out: posix(path.relative(cfg.root, cfg.outDir)),
    schemas: posix(path.relative(cfg.root, cfg.schemasDir)),
    module: cfg.module,
  });

  let entry = cfg.cache ? readCache(cfg.root, key) : undefined;
  const cacheHit = entry !== undefined;
  if (!entry) {
    const run = await runPipeline(cfg, sources);
    if (run.errors.length > 0) {
      const errors = sortErrors(run.errors).map((e) => (e.file ? { ...e, file: posix(path.relative(cfg.cwd, path.join(cfg.root, e.file))) } : e));
      return emptyResult(1, errors);
    }
    entry = { key, ...run.entry };
  }

  const result = applyOutputs(cfg, entry);
  if (!cacheHit && cfg.cache && !cfg.check) writeCache(cfg.root, entry);
  let recorded: string[] = [];
  if (!cfg.check) {
    // The compatibility check (generator/compat) locks each frozen schema's hash so an edit is
    // caught; new frozen files are recorded here, where they are written.
    const { recordFrozen } = await import("./compat/history.js");
    recorded = recordFrozen(cfg.schemasDir);
  }
  const toCwd = (abs: string) => posix(path.relative(cfg.cwd, abs));
  let scaffolded: string[] = [];
  if (cfg.scaffoldFixtures) {
    const { writeScaffoldFixtures } = await import("./compat/scaffold.js");
    scaffolded = writeScaffoldFixtures({ schemasDir: cfg.schemasDir, fixturesDir: cfg.fixturesDir, history: true, nonEmpty: true }).map(toCwd);
  }
  const compat = cfg.compat ? await runCompat(cfg, entry, result) : undefined;
  const failed = (compat?.failures.length ?? 0) > 0;
  const exitCode = result.exitCode !== 0 || failed ? 1 : 0;
  return { ...result, ok: exitCode === 0, exitCode, recorded: [...recorded, ...(compat?.recorded ?? [])], cacheHit, migrations: entry.migrations ?? [], compat, scaffolded };
}

/**
 * The compatibility check on this run's schemas. Without `check` they are on disk (just written).
 * With `check` and stale output, the check runs on a scratch copy of the schemas directory with
 * this run's output laid over it, so CI reports the real problem ("breaking change: bump the
 * version and add a migration"), not only "stale"; paths in its messages name the real files.
 */
async function runCompat(cfg: Config, entry: CacheEntry, result: Pick<GenerateResult, "files" | "stale" | "missing" | "extra">): Promise<CompatResult> {
  const { runCompatibilityCheck } = await import("./compat/check.js");
  const formerNames: Record<string, string[]> = {};
  for (const t of entry.types) if (t.formerNames?.length) formerNames[t.$type] = t.formerNames;
  const options = {
    fixturesDir: cfg.fixturesDir,
    migrations: (entry.migrations ?? []).map((m) => (m.toType === m.type ? { type: m.type, from: m.from, to: m.to } : { type: m.toType, from: m.from, to: m.to, fromType: m.type })),
    formerNames,
    update: !cfg.check,
    cwd: cfg.cwd,
  };
  const upToDate = result.stale.length === 0 && result.missing.length === 0 && result.extra.length === 0;
  if (!cfg.check || upToDate) {
    const report = runCompatibilityCheck({ ...options, schemasDir: cfg.schemasDir });
    return { failures: report.failures, recorded: report.recorded, retired: report.retired, compared: report.compared.length };
  }
  const os = await import("node:os");
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "statebag-compat-"));
  const overlay = path.join(scratch, "schemas");
  try {
    if (fs.existsSync(cfg.schemasDir)) fs.cpSync(cfg.schemasDir, overlay, { recursive: true });
    else fs.mkdirSync(overlay, { recursive: true });
    const inSchemas = (abs: string) => {
      const rel = path.relative(cfg.schemasDir, abs);
      return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : path.join(overlay, rel);
    };
    for (const f of result.files) {
      const target = inSchemas(path.resolve(cfg.cwd, f.path));
      if (!target || (f.createOnly && fs.existsSync(target))) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, f.content);
    }
    for (const f of result.extra) {
      const target = inSchemas(path.resolve(cfg.cwd, f));
      if (target) fs.rmSync(target, { force: true });
    }
    const report = runCompatibilityCheck({ ...options, schemasDir: overlay });
    const from = posix(path.relative(cfg.cwd, overlay));
    const to = posix(path.relative(cfg.cwd, cfg.schemasDir)) || ".";
    const real = (text: string) => text.split(from).join(to);
    const failures = report.failures.map((f) => ({ ...f, message: real(f.message), fix: real(f.fix), ...(f.file !== undefined ? { file: real(f.file) } : {}) }));
    return { failures, recorded: [], retired: [], compared: report.compared.length };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Pipeline (cache miss)

interface Built {
  emitted: (EmittedType & { at: { file: string; line: number; column: number } })[];
  /** Families some document schema references (their family file must exist). */
  referenced: Set<string>;
  /** Families with tagged members declared outside this project (a dependency's .d.ts). */
  openFamilies: Set<string>;
  /** Every non-library file the compiler read. */
  programFiles: string[];
  errors: GenError[];
}

const FAILED = { dependencies: [], outputs: {}, createOnly: [], types: [], migrations: [] };

async function runPipeline(cfg: Config, sources: readonly SourceFile[]): Promise<{ errors: GenError[]; entry: Omit<CacheEntry, "key"> }> {
  const { scan } = await import("./scan.js");
  const scanned = scan({
    root: cfg.root,
    tsconfig: cfg.tsconfig,
    files: sources.filter((s) => !s.path.endsWith(".json")),
    excludeDirs: [cfg.outDir, cfg.schemasDir],
  });
  // Duplicates are reported by the scan; keep the first so later phases see unique $types.
  const types = scanned.types.filter((t, i, all) => all.findIndex((o) => o.$type === t.$type) === i);
  const { checkMigrations } = await import("./migrations.js");
  const declared = checkMigrations({
    exports: scanned.migrations,
    types: new Map(types.map((t) => [t.$type, { version: t.version, source: `${posix(path.relative(cfg.root, t.file))}:${t.line}` }])),
    relative: (file) => posix(path.relative(cfg.root, file)),
  });
  const built = await buildTypes(cfg, types, declared.formerNames);
  const errors = [...scanned.errors, ...declared.errors, ...built.errors];
  if (errors.length > 0) return { errors, entry: FAILED };

  const { buildValidators } = await import("./validators.js");
  const { runtimeSchema } = await import("./emit.js");
  const validators = await buildValidators(
    built.emitted.map((t) => ({ exportName: t.validatorName, schema: runtimeSchema(t) })),
    cfg.module.formatsImport,
  );
  for (const f of validators.failures) {
    const t = built.emitted.find((e) => e.validatorName === f.exportName)!;
    errors.push({
      code: "schema-failed",
      ...t.at,
      message: `ajv rejected the schema of ${t.name}: ${f.message}`,
      hint: "simplify the type; if it looks valid, report it with the type's source",
    });
  }
  if (errors.length > 0) return { errors, entry: FAILED };

  const walked = new Set(sources.map((s) => s.path));
  const dependencies = dependencyHashes([...new Set([...built.programFiles, ...scanned.files])].filter((f) => !walked.has(f)));
  return { errors, entry: { dependencies, ...assembleOutputs(cfg, built, validators.code, scanned.migrations, declared.summaries) } };
}

/** Schemas, slots and validator names for every marked type (one compiler program for all). */
async function buildTypes(cfg: Config, types: readonly MarkedType[], formerNames: ReadonlyMap<string, string[]>): Promise<Built> {
  const built: Built = { emitted: [], referenced: new Set(), openFamilies: new Set(), programFiles: [], errors: [] };
  if (types.length === 0) return built;
  const { buildSchemaGraph } = await import("./schemas.js");
  const graph = await buildSchemaGraph({ root: cfg.root, types, tsconfig: cfg.tsconfig });
  built.errors.push(...graph.errors);
  built.programFiles = graph.files;

  const local = types.filter((t) => graph.roots.has(t.$type));
  const members = new Map(local.map((t) => [t.$type, t.family]));
  for (const tag of graph.tagged.values()) if (!members.has(tag.$type)) built.openFamilies.add(tag.family);

  const usedNames = new Set<string>();
  for (const t of local) {
    const at = { file: posix(path.relative(cfg.root, t.file)), line: t.line, column: t.column };
    const schemas = buildTypeSchemas(graph, graph.roots.get(t.$type)!, { members });
    for (const f of schemas.families) built.referenced.add(f);
    for (const e of schemas.errors) built.errors.push({ ...e, ...at, message: `${t.name}: ${e.message}` });
    let validatorName = `validate${t.name}`;
    for (let n = 2; usedNames.has(validatorName); n++) validatorName = `validate${t.name}_${n}`;
    usedNames.add(validatorName);
    built.emitted.push({
      name: t.name,
      family: t.family,
      $type: t.$type,
      version: t.version,
      source: `${at.file}:${t.line}`,
      at,
      runtime: schemas.runtime,
      document: schemas.document,
      slots: schemas.slots,
      validatorName,
      ...(formerNames.has(t.$type) ? { formerNames: formerNames.get(t.$type) } : {}),
    });
  }
  return built;
}

/** Every generated file, by path relative to the project root. */
function assembleOutputs(
  cfg: Config,
  built: Built,
  validatorsCode: string,
  migrationExports: readonly MigrationExport[],
  migrations: MigrationSummary[],
): Omit<CacheEntry, "key" | "dependencies"> {
  const outputs: Record<string, string> = {};
  const createOnly: string[] = [];
  const outRel = posix(path.relative(cfg.root, cfg.outDir));
  const schemasRel = posix(path.relative(cfg.root, cfg.schemasDir));
  const inSchemas = (p: string) => (schemasRel ? `${schemasRel}/${p}` : p);

  const relFile = (file: string) => posix(path.relative(cfg.root, file));
  const emittedMigrations = migrationExports.map((ex) => ({
    exportName: ex.exportName,
    kind: ex.kind,
    importPath: relImport(cfg.outDir, ex.file).replace(/\.([mc]?)tsx?$/, ".$1js"),
    steps: ex.migrations.map((m) => `${m.toType === m.type ? `"${m.type}" v${m.from} -> v${m.to}` : `"${m.type}" v${m.from} -> "${m.toType}" v${m.to}`} (${relFile(ex.file)}:${m.line})`),
  }));
  outputs[`${outRel}/registry.ts`] = registryModule(built.emitted, cfg.module, emittedMigrations);
  outputs[`${outRel}/validators.ts`] = validatorsModule(validatorsCode, cfg.module);
  const byFamily = new Map<string, EmittedType[]>([...built.referenced].map((f) => [f, []]));
  for (const t of built.emitted) {
    const document = documentSchemaFile(t);
    outputs[inSchemas(memberFile(t.family, t.$type))] = document;
    // Frozen copy of this version's schema: written once (see emit.ts).
    const history = inSchemas(historyFile(t.family, t.$type, t.version));
    outputs[history] = document;
    createOnly.push(history);
    byFamily.set(t.family, [...(byFamily.get(t.family) ?? []), t]);
  }
  for (const [family, list] of byFamily) outputs[inSchemas(familyFile(family))] = familySchemaFile(family, list, built.openFamilies.has(family));

  const types: TypeSummary[] = built.emitted.map((t) => ({
    $type: t.$type,
    family: t.family,
    version: t.version,
    name: t.name,
    source: t.source,
    slots: t.slots,
    ...(t.formerNames?.length ? { formerNames: [...t.formerNames] } : {}),
  }));
  return { outputs, createOnly: createOnly.sort(compareStrings), types, migrations };
}

// ---------------------------------------------------------------------------------------------
// Comparing with and writing to disk

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Generated files currently on disk: schema files outside history/, and modules carrying our header. */
function managedFiles(cfg: Config): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory() && !(dir === cfg.schemasDir && e.name === "history")) walk(full);
      else if (e.isFile() && e.name.endsWith(".schema.json")) found.push(full);
    }
  };
  walk(cfg.schemasDir);
  let outEntries: string[] = [];
  try {
    outEntries = fs.readdirSync(cfg.outDir);
  } catch {
    // no output yet
  }
  for (const name of outEntries) {
    if (!/\.[mc]?ts$/.test(name)) continue;
    const full = path.join(cfg.outDir, name);
    const head = readIfExists(full)?.slice(0, 200) ?? "";
    if (head.split("\n").slice(0, 2).includes(GENERATED_HEADER)) found.push(full);
  }
  return found;
}

function applyOutputs(cfg: Config, entry: CacheEntry): Omit<GenerateResult, "cacheHit" | "recorded" | "migrations" | "compat" | "scaffolded"> {
  const createOnly = new Set(entry.createOnly);
  const toCwd = (abs: string) => posix(path.relative(cfg.cwd, abs));
  const stale: string[] = [];
  const missing: string[] = [];
  const written: string[] = [];
  const deleted: string[] = [];
  const files: GeneratedFile[] = [];
  const expected = new Set<string>();

  for (const rel of Object.keys(entry.outputs).sort(compareStrings)) {
    const abs = path.join(cfg.root, rel);
    const content = entry.outputs[rel]!;
    expected.add(abs);
    files.push({ path: toCwd(abs), content, createOnly: createOnly.has(rel) });
    const current = readIfExists(abs);
    if (current === undefined) missing.push(toCwd(abs));
    else if (current !== content && !createOnly.has(rel)) stale.push(toCwd(abs));
    else continue;
    if (!cfg.check) {
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, content);
      written.push(toCwd(abs));
    }
  }
  const extra = managedFiles(cfg)
    .filter((f) => !expected.has(f))
    .sort(compareStrings);
  if (!cfg.check)
    for (const f of extra) {
      fs.rmSync(f);
      deleted.push(toCwd(f));
    }
  const upToDate = stale.length === 0 && missing.length === 0 && extra.length === 0;
  const exitCode = cfg.check && !upToDate ? 1 : 0;
  return {
    ok: exitCode === 0,
    exitCode,
    errors: [],
    files,
    types: entry.types,
    stale,
    missing,
    extra: extra.map(toCwd),
    written,
    deleted,
  };
}

/** The report the CLI prints (also handy in tests). */
export function formatResult(result: GenerateResult, check: boolean): string[] {
  if (result.errors.length > 0) return [...result.errors.map(formatError), `${result.errors.length} error(s); nothing was written.`];
  const compat = formatCompat(result);
  if (check) {
    const upToDate = result.stale.length === 0 && result.missing.length === 0 && result.extra.length === 0;
    if (upToDate) return [`generated files are current (${result.files.length} files, ${result.types.length} types).`, ...compat];
    return [
      ...result.stale.map((f) => `stale: ${f}`),
      ...result.missing.map((f) => `missing: ${f}`),
      ...result.extra.map((f) => `extra: ${f}`),
      "generated files are out of date; run the generator.",
      ...compat,
    ];
  }
  const changes = [
    ...result.written.map((f) => `wrote ${f}`),
    ...result.deleted.map((f) => `deleted ${f}`),
    ...result.scaffolded.map((f) => `scaffolded ${f} (edit it into a realistic stored value)`),
    ...(result.recorded.length > 0 ? [`recorded ${result.recorded.length} frozen schema(s) in the history lock`] : []),
    ...(result.compat?.retired.length ? [`reserved renamed type(s) in retired.json: ${result.compat.retired.join(", ")}`] : []),
  ];
  return [...changes, `${result.types.length} types, ${result.files.length} files${changes.length === 0 ? ", all current" : ""}${result.cacheHit ? " (cached)" : ""}.`, ...compat];
}

/** The compatibility check's lines: one per failure (type, pointer, rule, fix), or a summary. */
function formatCompat(result: GenerateResult): string[] {
  const compat = result.compat;
  if (!compat) return [];
  if (compat.failures.length === 0) {
    return [`schemas compatible: ${result.types.length} types, ${result.migrations.length} migration(s), every version has a golden fixture.`];
  }
  const n = compat.failures.length;
  return [
    `compatibility check: ${n} problem${n === 1 ? "" : "s"}`,
    ...compat.failures.flatMap((f) => [`  ${f.type}: ${displayPointer(f.pointer)}: ${f.message} (rule: ${f.rule}). Fix: ${f.fix}`, ...(f.details ?? []).map((d) => `    ${d}`)]),
  ];
}
