/**
 * Programmatic API of `npm run gen`: scan -> schemas -> slots -> validators -> files, then write
 * (or, with `check`, compare). Errors from every phase are collected and returned together;
 * nothing is written when there is any.
 *
 * Heavy modules (ts-morph, TypeScript, typescript-json-schema, ajv) load only on a cache miss.
 */
import fs from "node:fs";
import path from "node:path";
import {
  cacheKey,
  dependencyHashes,
  generatorFingerprint,
  readCache,
  readCompatVerdict,
  readSources,
  treeHash,
  writeCache,
  writeCompatVerdict,
  type CacheEntry,
  type SourceFile,
} from "./cache.js";
import {
  descriptorsModule,
  documentSchemaFile,
  familySchemaFile,
  GENERATED_HEADER,
  historyFile,
  registryModule,
  storedVersionsModule,
  validatorsModule,
  versionsModule,
  type EmittedStoredVersion,
  type EmittedType,
  type EmittedVersion,
  type ModuleOptions,
} from "./emit.js";
import type { Failure } from "./compat/check.js";
import type { MigrationStep, StoredDataRule } from "./compat/stored-data.js";
import { displayPointer } from "./compat/schema.js";
import { compareStrings, formatError, sortErrors, type GenError } from "./errors.js";
import { hash } from "./hash.js";
import type { MigrationExport, MigrationSummary } from "./migrations.js";
import type { MarkedType } from "./scan.js";
import { familyFile, memberFile } from "./schema-files.js";
import type { TypeSummary } from "./summary.js";

export { formatError, type GenError } from "./errors.js";
export type { FamilySlot } from "./slots.js";
export type { MigrationSummary } from "./migrations.js";
export type { TypeSummary } from "./summary.js";

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
  /**
   * How to run the generator where it runs, named in every fix text and in generated headers:
   * `npx statebag gen` in a user project (the CLI passes it), `npm run gen` in this repository
   * (the default without `project`; with `project`: `npx statebag gen --project <tsconfig>`).
   */
  command?: string;
  /** The command shown in generated headers. Default: `command`. */
  regenerateCommand?: string;
  /**
   * Run the compatibility check (generator/compat) after generating: frozen history intact,
   * no breaking change without a version bump, a migration path from every stored version,
   * golden fixtures for every version. Without `check` it records new frozen schemas and renamed
   * types (`update`); with `check` it only reports. Failures make the run exit 1.
   * Default false here; `npm run gen` turns it on. Then every golden fixture is also loaded
   * through the project's migrations and validated at the latest version (`compat/stored-data.ts`).
   *
   * Without `check` the run is atomic for changes stored data would not survive (a breaking change
   * at the same version, an edited or deleted frozen schema, a reused or removed `$type`): then
   * nothing is written. Other findings (a missing migration or fixture, a fixture that does not
   * load) are reported after writing, since fixing them needs the generated files.
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

/** One finding of the compatibility check or of loading the stored data (fixtures). */
export type CompatFailure = Omit<Failure, "rule"> & { rule: Failure["rule"] | StoredDataRule; step?: MigrationStep };

/** What the compatibility check found (`compat: true`). */
export interface CompatResult {
  failures: CompatFailure[];
  /** Frozen schemas the check recorded in the lock (update mode). */
  recorded: string[];
  /** Renamed `$type`s it recorded in `retired.json` (update mode). */
  retired: string[];
  /** Types compared against their frozen schema of the same version. */
  compared: number;
  /** Golden fixtures loaded through the migrations to the latest version (relative to cwd). */
  loaded: string[];
  /** True when a finding stopped `gen` from writing anything. */
  blocked: boolean;
  /**
   * True when a finding would stop `gen` from writing anything (with `check` too): then "run the
   * generator" is no fix for stale output, the findings' own fixes are.
   */
  wouldBlock: boolean;
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
  module: ModuleOptions & { formatsImport: string; stateImport: string; taggedImport: string };
  /** How to run the generator here, for fix texts. */
  command: string;
  check: boolean;
  cache: boolean;
  compat: boolean;
  scaffoldFixtures: boolean;
}

class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

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
  if (!tsconfig && options.runtimeImport === undefined) refuseOutsideStatebag(root);
  const internal = (file: string) => options.runtimeImport ?? (tsconfig ? "statebag" : relImport(outDir, path.join(root, "src/runtime", file)));
  const typesImport = internal("persistence/registry-types.js");
  const formatsImport = internal("persistence/formats.js");
  const stateImport = internal("core/state-bag.js");
  const taggedImport = internal("core/tagged.js");
  const command = options.command ?? (tsconfig ? `npx statebag gen --project ${posix(path.relative(cwd, tsconfig))}` : "npm run gen");
  const regenerate = options.regenerateCommand ?? command;
  return {
    cwd,
    root,
    tsconfig,
    walkRoots: tsconfig ? [root] : [path.join(root, "src")],
    outDir,
    schemasDir,
    fixturesDir,
    module: { typesImport, formatsImport, stateImport, taggedImport, regenerate },
    command,
    check: options.check ?? false,
    cache: options.cache ?? true,
    compat: options.compat ?? false,
    scaffoldFixtures: options.scaffoldFixtures ?? false,
  };
}

/** The runtime files the default (this repository's) layout imports from generated code. */
const INTERNAL_RUNTIME = ["src/runtime/persistence/registry-types.ts", "src/runtime/persistence/formats.ts", "src/runtime/core/tagged.ts"];

/**
 * Without `project`, generated code imports statebag's runtime by relative path: right inside
 * statebag's own repository, a project that no longer compiles anywhere else. Refuse there.
 */
function refuseOutsideStatebag(root: string): void {
  const pkg = nearestPackageJson(root);
  const name = pkg ? packageName(pkg) : undefined;
  const hasRuntime = INTERNAL_RUNTIME.every((f) => fs.existsSync(path.join(root, f)));
  if (hasRuntime && (pkg === undefined || name === "statebag")) return;
  throw new UsageError(
    `${pkg ? `${name ? `"${name}"` : "this package"} (${posix(path.relative(process.cwd(), pkg)) || "package.json"}) is not statebag's own repository` : "this is not statebag's own repository"}, and no project was given: ` +
      "generating here would write statebag's internal imports into src/generated/",
    "run `npx statebag init` once (it writes statebag.config.json, which every command then finds), or pass --project tsconfig.json",
  );
}

function nearestPackageJson(dir: string): string | undefined {
  for (let d = dir; ; d = path.dirname(d)) {
    const file = path.join(d, "package.json");
    if (fs.existsSync(file)) return file;
    if (path.dirname(d) === d) return undefined;
  }
}

function packageName(file: string): string | undefined {
  try {
    const name = (JSON.parse(fs.readFileSync(file, "utf8")) as { name?: unknown }).name;
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}

function emptyResult(exitCode: 0 | 1 | 2, errors: GenError[]): GenerateResult {
  return { ok: exitCode === 0, exitCode, errors, files: [], types: [], stale: [], missing: [], extra: [], written: [], deleted: [], recorded: [], cacheHit: false, migrations: [], scaffolded: [] };
}

export async function generate(options: GenerateOptions = {}): Promise<GenerateResult> {
  let cfg: Config;
  try {
    cfg = resolveConfig(options);
  } catch (e) {
    if (e instanceof UsageError) return emptyResult(2, [{ code: "usage", message: e.message, ...(e.hint ? { hint: e.hint } : {}) }]);
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
  // The version types depend on the frozen history too, which is not a cache input.
  const versionTypes = await versionTypesOutput(cfg, entry);
  const outputs = { ...entry.outputs, ...versionTypes.outputs };
  const plan = planOutputs(cfg, entry, outputs);

  // Everything is computed and checked before anything is written. A clean verdict on the same
  // inputs stands in for the check when the output on disk is current (nothing to write).
  const verdictKey = cfg.compat && cfg.cache && !cfg.scaffoldFixtures && isCurrent(plan) ? compatVerdictKey(cfg, entry, outputs) : undefined;
  const verdict = verdictKey !== undefined ? readCompatVerdict(cfg.root, verdictKey) : undefined;
  const compat = cfg.compat && !verdict ? await runCompat(cfg, entry, plan) : undefined;
  try {
    if (compat?.blocked) {
      return { ...plan, written: [], deleted: [], ok: false, exitCode: 1, recorded: [], cacheHit, migrations: entry.migrations ?? [], compat: compat.result, scaffolded: [] };
    }
    const toCwd = (abs: string) => posix(path.relative(cfg.cwd, abs));
    let written: string[] = [];
    let deleted: string[] = [];
    let recorded: string[] = [];
    let scaffolded: string[] = [];
    let named: string[] = [];
    if (!cfg.check) {
      ({ written, deleted } = writeOutputs(cfg, plan));
      if (!cacheHit && cfg.cache) writeCache(cfg.root, entry);
      compat?.commit();
      // The frozen lock records the hash of each frozen schema (an edit is then caught); new
      // frozen files are recorded where they are written.
      const { recordFrozen, recordNames } = await import("./compat/history.js");
      recorded = recordFrozen(cfg.schemasDir);
      named = recordNames(cfg.schemasDir, versionTypes.names);
      if (cfg.scaffoldFixtures) {
        const { GEN_SCAFFOLD_OPTIONS, writeScaffoldFixtures } = await import("./compat/scaffold.js");
        scaffolded = writeScaffoldFixtures({ schemasDir: cfg.schemasDir, fixturesDir: cfg.fixturesDir, history: true, ...GEN_SCAFFOLD_OPTIONS }).map(toCwd);
      }
    }
    let result: CompatResult | undefined;
    if (verdict) {
      result = { failures: [], recorded: [], retired: [], compared: verdict.compared, loaded: verdict.loaded, blocked: false, wouldBlock: false };
    } else if (compat) {
      // Fixtures written by this run are no longer missing (the stored-data check reports them as unedited).
      const fixtureDir = (type: string) => `${toCwd(path.join(cfg.fixturesDir, type))}/`;
      const found = compat.result.failures.filter((f) => !(f.rule === "missing-fixture" && scaffolded.some((file) => file.startsWith(fixtureDir(f.type)))));
      const stored = await runStoredData(cfg, entry, cfg.check ? compat.schemasDir : cfg.schemasDir, found, versionTypes.names);
      // An unedited scaffold also fails its schema (the marker key): the one message about it is enough.
      const kept = found.filter((f) => !(f.rule === "invalid-fixture" && f.file !== undefined && stored.unedited.includes(f.file)));
      const unnamed = cfg.check ? unrecordedNames(cfg, versionTypes.unrecorded) : [];
      const failures = sortFailures([...kept, ...stored.failures, ...unnamed]);
      result = { ...compat.result, failures, loaded: stored.loaded, wouldBlock: failures.some(isBlocking) };
      // Recorded nothing and found nothing: the same in `--check` (which fails where this records).
      const clean = result.failures.length === 0 && result.recorded.length === 0 && result.retired.length === 0 && recorded.length === 0 && named.length === 0;
      if (verdictKey !== undefined && !cfg.check && clean) writeCompatVerdict(cfg.root, { key: verdictKey, compared: result.compared, loaded: result.loaded });
    }
    const failed = (result?.failures.length ?? 0) > 0;
    const exitCode = plan.exitCode !== 0 || failed ? 1 : 0;
    return {
      ...plan,
      written,
      deleted,
      ok: exitCode === 0,
      exitCode,
      recorded: [...new Set([...recorded, ...(result?.recorded ?? [])])],
      cacheHit,
      migrations: entry.migrations ?? [],
      compat: result,
      scaffolded,
    };
  } finally {
    compat?.dispose();
  }
}

/** `--check`: frozen versions whose version type name the lock does not record yet (`gen` records it). */
function unrecordedNames(cfg: Config, keys: readonly string[]): CompatFailure[] {
  const lock = posix(path.relative(cfg.cwd, path.join(cfg.schemasDir, "history", "frozen.lock.json")));
  return keys.map((key) => {
    const [family, type] = key.split("/");
    return {
      type: type ?? key,
      family,
      pointer: "",
      rule: "frozen-unlocked",
      message: `${lock} records no version type name for ${key}, so a rename or a new type could still move it`,
      fix: `run ${cfg.command} (it records the names src/generated/versions.ts uses) and commit ${lock}`,
      file: lock,
    };
  });
}

function isCurrent(plan: Plan): boolean {
  return plan.stale.length === 0 && plan.missing.length === 0 && plan.extra.length === 0;
}

/**
 * Everything the compatibility and stored-data checks read, given current output on disk: the
 * generator and runtime code, the sources and the files they import (the migrations run), the
 * outputs, the schemas directory with its history, the fixtures, and where messages point.
 */
function compatVerdictKey(cfg: Config, entry: CacheEntry, outputs: Readonly<Record<string, string>>): string {
  const lines = [generatorFingerprint(), entry.key, JSON.stringify(entry.dependencies), cfg.cwd, cfg.root, cfg.fixturesDir, cfg.command];
  for (const rel of Object.keys(outputs).sort(compareStrings)) lines.push(`${rel}\t${hash(outputs[rel]!)}`);
  lines.push(treeHash(cfg.schemasDir), treeHash(cfg.fixturesDir));
  return hash(lines.join("\n"));
}

/** Rules whose findings mean the new schemas would misdescribe stored data: `gen` then writes nothing. */
const BLOCKING_RULES = new Set(["frozen-edited", "frozen-deleted", "invalid-schema", "duplicate-type", "reused-type-name", "version-regressed", "removed-type"]);

function isBlocking(f: CompatFailure): boolean {
  return f.change !== undefined || BLOCKING_RULES.has(f.rule);
}

function sortFailures(failures: CompatFailure[]): CompatFailure[] {
  return failures.sort((a, b) => compareStrings(a.type, b.type) || compareStrings(a.rule, b.rule) || compareStrings(a.pointer, b.pointer) || compareStrings(a.file ?? "", b.file ?? ""));
}

/** "npm run gen" -> "npm run gen -- --flag"; "npx statebag gen" -> "npx statebag gen --flag". */
function withFlag(command: string, flag: string): string {
  return /^npm run \S+$/.test(command) ? `${command} -- ${flag}` : `${command} ${flag}`;
}

/** The check's texts say `npm run gen` (this repository); name the command for where this runs. */
function localizeCommand<T extends { message: string; fix: string }>(f: T, command: string): T {
  if (command === "npm run gen") return f;
  const swap = (text: string) =>
    text
      .replace(/(?:npx )?statebag gen --scaffold-fixtures/g, withFlag(command, "--scaffold-fixtures"))
      .replace(/\bnpm run gen(?: -- )?/g, (m) => (m.endsWith("-- ") ? `${command} ` : command));
  return { ...f, message: swap(f.message), fix: swap(f.fix) };
}

/**
 * The compatibility check on this run's schemas, before anything is written: on a scratch copy of
 * the schemas directory with this run's output laid over it, so
 * `--check` reports the real problem ("breaking change: bump the version and add a migration"),
 * not only "stale", and `gen` can refuse to write a breaking change. Paths in its messages name
 * the real files. Without `check`, what it records (the frozen lock, renamed types) is copied back
 * by `commit()`, after the outputs are written.
 */
async function runCompat(
  cfg: Config,
  entry: CacheEntry,
  plan: Pick<GenerateResult, "files" | "stale" | "missing" | "extra">,
): Promise<{ result: CompatResult; blocked: boolean; schemasDir: string; commit: () => void; dispose: () => void }> {
  const { runCompatibilityCheck } = await import("./compat/check.js");
  const { HISTORY_DIR, LOCK_FILE, RETIRED_FILE } = await import("./compat/history.js");
  const formerNames: Record<string, string[]> = {};
  for (const t of entry.types) if (t.formerNames?.length) formerNames[t.$type] = t.formerNames;
  const options = {
    fixturesDir: cfg.fixturesDir,
    migrations: (entry.migrations ?? []).map((m) => {
      const source = posix(path.relative(cfg.cwd, path.join(cfg.root, m.source)));
      return m.toType === m.type ? { type: m.type, from: m.from, to: m.to, source } : { type: m.toType, from: m.from, to: m.to, fromType: m.type, source };
    }),
    formerNames,
    update: !cfg.check,
    cwd: cfg.cwd,
  };
  const os = await import("node:os");
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "statebag-compat-"));
  const overlay = path.join(scratch, "schemas");
  const dispose = () => fs.rmSync(scratch, { recursive: true, force: true });
  try {
    if (fs.existsSync(cfg.schemasDir)) fs.cpSync(cfg.schemasDir, overlay, { recursive: true });
    else fs.mkdirSync(overlay, { recursive: true });
    const inSchemas = (abs: string) => {
      const rel = path.relative(cfg.schemasDir, abs);
      return rel.startsWith("..") || path.isAbsolute(rel) ? undefined : path.join(overlay, rel);
    };
    for (const f of plan.files) {
      const target = inSchemas(path.resolve(cfg.cwd, f.path));
      if (!target || (f.createOnly && fs.existsSync(target))) continue;
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, f.content);
    }
    for (const f of plan.extra) {
      const target = inSchemas(path.resolve(cfg.cwd, f));
      if (target) fs.rmSync(target, { force: true });
    }
    const report = runCompatibilityCheck({ ...options, schemasDir: overlay });
    const from = posix(path.relative(cfg.cwd, overlay));
    const to = posix(path.relative(cfg.cwd, cfg.schemasDir)) || ".";
    const real = (text: string) => text.split(from).join(to);
    const failures: CompatFailure[] = report.failures.map((f) =>
      localizeCommand({ ...f, message: real(f.message), fix: real(f.fix), ...(f.file !== undefined ? { file: real(f.file) } : {}) }, cfg.command),
    );
    const blocked = !cfg.check && failures.some(isBlocking);
    // Refused: leave out what only recording would fix (it was not recorded).
    const shown = blocked ? failures.filter((f) => isBlocking(f) || !["frozen-unlocked", "unrecorded-rename"].includes(f.rule)) : failures;
    return {
      result: { failures: shown, recorded: blocked ? [] : report.recorded, retired: blocked ? [] : report.retired, compared: report.compared.length, loaded: [], blocked, wouldBlock: failures.some(isBlocking) },
      blocked,
      schemasDir: overlay,
      // What the check recorded in the overlay (the frozen lock, retired names) goes to the real directory.
      commit: () => {
        for (const name of [LOCK_FILE, RETIRED_FILE]) {
          const source = path.join(overlay, HISTORY_DIR, name);
          const target = path.join(cfg.schemasDir, HISTORY_DIR, name);
          const content = readIfExists(source);
          if (content === undefined || readIfExists(target) === content) continue;
          fs.mkdirSync(path.dirname(target), { recursive: true });
          fs.writeFileSync(target, content);
        }
      },
      dispose,
    };
  } catch (error) {
    dispose();
    throw error;
  }
}

/** Loads every golden fixture through the project's migrations (compat/stored-data.ts). */
async function runStoredData(
  cfg: Config,
  entry: CacheEntry,
  schemasDir: string,
  failures: readonly CompatFailure[],
  names: Readonly<Record<string, string>>,
): Promise<{ failures: CompatFailure[]; loaded: string[]; unedited: string[] }> {
  const { checkStoredData } = await import("./compat/stored-data.js");
  const formerNames: Record<string, string[]> = {};
  for (const t of entry.types) if (t.formerNames?.length) formerNames[t.$type] = t.formerNames;
  // Reported already as not matching their own version: loading them would blame the migrations.
  const skip = new Set(failures.filter((f) => f.rule === "invalid-fixture" && f.file !== undefined).map((f) => path.resolve(cfg.cwd, f.file!)));
  const bindings = new Map<string, { file: string; exportName: string }>();
  for (const m of entry.migrations ?? []) {
    const file = path.join(cfg.root, m.source.replace(/:\d+$/, ""));
    bindings.set(`${file}\u0000${m.exportName}`, { file, exportName: m.exportName });
  }
  // Steps named as the scan found them (`src/notes.ts:12`, relative to where the generator runs).
  const sources = new Map((entry.migrations ?? []).map((m) => [`${m.type}\u0000${m.from}`, posix(path.relative(cfg.cwd, path.join(cfg.root, m.source)))]));
  // `versions.ts` names by (type, version): fix texts name the types a typed migration imports.
  const versionTypeNames = new Map(Object.entries(names).map(([key, name]) => {
    const [, type, file] = key.split("/");
    return [`${type}\u0000${Number(/^v(\d+)/.exec(file ?? "")?.[1])}`, name] as const;
  }));
  const report = await checkStoredData({ schemasDir, displaySchemasDir: cfg.schemasDir, fixturesDir: cfg.fixturesDir, bindings: [...bindings.values()], formerNames, cwd: cfg.cwd, command: cfg.command, skip, sources, versionTypeNames });
  return { failures: report.failures.map((f) => localizeCommand(f, cfg.command)), loaded: report.loaded, unedited: report.unedited };
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
  const { buildTypeSchemas } = await import("./slots.js");
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
  const descriptors = built.emitted
    .filter((t) => t.family === "ProviderState")
    .map((t) => ({ typeName: t.name, $type: t.$type, version: t.version, source: t.source, importPath: relImport(cfg.outDir, path.join(cfg.root, t.at.file)).replace(/\.([mc]?)tsx?$/, ".$1js") }));
  outputs[`${outRel}/descriptors.ts`] = descriptorsModule(descriptors, cfg.module);
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

type Plan = Omit<GenerateResult, "cacheHit" | "recorded" | "migrations" | "compat" | "scaffolded">;

/** What writing would change: every file with its content, and which are stale, missing or extra. Writes nothing. */
function planOutputs(cfg: Config, entry: CacheEntry, outputs: Readonly<Record<string, string>>): Plan {
  const createOnly = new Set(entry.createOnly);
  const toCwd = (abs: string) => posix(path.relative(cfg.cwd, abs));
  const stale: string[] = [];
  const missing: string[] = [];
  const files: GeneratedFile[] = [];
  const expected = new Set<string>();
  for (const rel of Object.keys(outputs).sort(compareStrings)) {
    const abs = path.join(cfg.root, rel);
    const content = outputs[rel]!;
    expected.add(abs);
    files.push({ path: toCwd(abs), content, createOnly: createOnly.has(rel) });
    const current = readIfExists(abs);
    if (current === undefined) missing.push(toCwd(abs));
    else if (current !== content && !createOnly.has(rel)) stale.push(toCwd(abs));
  }
  const extra = managedFiles(cfg)
    .filter((f) => !expected.has(f))
    .sort(compareStrings)
    .map(toCwd);
  const upToDate = stale.length === 0 && missing.length === 0 && extra.length === 0;
  const exitCode = cfg.check && !upToDate ? 1 : 0;
  return { ok: exitCode === 0, exitCode, errors: [], files, types: entry.types, stale, missing, extra, written: [], deleted: [] };
}

/** Writes the stale and missing files of a plan and deletes its extra ones. */
function writeOutputs(cfg: Config, plan: Plan): { written: string[]; deleted: string[] } {
  const changed = new Set([...plan.stale, ...plan.missing]);
  const written: string[] = [];
  for (const f of plan.files) {
    if (!changed.has(f.path)) continue;
    const abs = path.resolve(cfg.cwd, f.path);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, f.content);
    written.push(f.path);
  }
  for (const f of plan.extra) fs.rmSync(path.resolve(cfg.cwd, f));
  return { written, deleted: [...plan.extra] };
}

/**
 * `versions.ts`: a type per stored version, from the frozen history (and the current schema for
 * the latest version). History files this run creates are taken from its outputs.
 *
 * Names are part of the user's code (migrations import them), so a version keeps the name it got
 * first: it is recorded in the history lock (`names`) and never given to another version. A new
 * version is named after its type's declaration (`<Name>_v<N>`, `<Name>_<k>_v<N>` when taken).
 * `names` maps each lock key to its name, for `recordNames`; `unrecorded` lists the keys of
 * frozen files without a recorded name.
 */
async function versionTypesOutput(cfg: Config, entry: CacheEntry): Promise<{ outputs: Record<string, string>; names: Record<string, string>; unrecorded: string[] }> {
  const { readFrozenSchemas, readLock } = await import("./compat/history.js");
  const { versionTypeDeclaration } = await import("./version-types.js");
  const outRel = posix(path.relative(cfg.root, cfg.outDir));
  const schemasRel = posix(path.relative(cfg.root, cfg.schemasDir));
  const inSchemas = (p: string) => (schemasRel ? `${schemasRel}/${p}` : p);
  const schemas = new Map<string, { family: string; $type: string; version: number; schema: unknown; from: string; frozen: boolean }>();
  const lockKey = (family: string, $type: string, version: number) => historyFile(family, $type, version).slice("history/".length);
  for (const f of readFrozenSchemas(cfg.schemasDir)) {
    if (f.schema === undefined) continue;
    schemas.set(f.key, { family: f.family, $type: f.$type, version: f.version, schema: f.schema, from: inSchemas(historyFile(f.family, f.$type, f.version)), frozen: true });
  }
  const declared = new Map<string, string>();
  for (const t of entry.types) {
    declared.set(t.$type, t.name);
    // The latest version as the current schema describes it (a compatible change at the same version widens the frozen one).
    const file = inSchemas(memberFile(t.family, t.$type));
    const text = entry.outputs[file];
    const key = lockKey(t.family, t.$type, t.version);
    if (text !== undefined) schemas.set(key, { family: t.family, $type: t.$type, version: t.version, schema: JSON.parse(text), from: file, frozen: schemas.has(key) });
  }
  const base = (s: { $type: string; schema: unknown }): string => {
    const known = declared.get(s.$type);
    if (known) return known;
    const title = typeof s.schema === "object" && s.schema !== null ? (s.schema as { title?: unknown }).title : undefined;
    const raw = typeof title === "string" ? title : s.$type.slice(s.$type.lastIndexOf(".") + 1);
    const name = raw.replace(/[^A-Za-z0-9_$]/g, "_");
    return /^[0-9]/.test(name) ? `_${name}` : name;
  };
  const recorded = readLock(cfg.schemasDir).names ?? {};
  const names: Record<string, string> = {};
  const used = new Set(["TaggedValue", ...Object.values(recorded)]);
  const sorted = [...schemas].sort(([, a], [, b]) => compareStrings(a.$type, b.$type) || a.version - b.version);
  for (const [key, s] of sorted) {
    let name = recorded[key];
    if (name === undefined) {
      name = `${base(s)}_v${s.version}`;
      for (let n = 2; used.has(name); n++) name = `${base(s)}_${n}_v${s.version}`;
      used.add(name);
    }
    names[key] = name;
  }
  const versions: EmittedVersion[] = sorted.map(([key, s]) => ({ $type: s.$type, version: s.version, name: names[key]!, schema: s.schema, from: s.from }));
  const content = versionsModule(versions, cfg.module, (v) =>
    versionTypeDeclaration({ name: v.name, summary: `"${v.$type}" version ${v.version}, as stored (${v.from}).`, schema: v.schema }),
  );
  const unrecorded = sorted.filter(([key, s]) => s.frozen && recorded[key] === undefined).map(([key]) => key);
  // The versions migrations read, with their frozen schema, for the runtime's check before a step.
  const { storedSchema } = await import("./stored-schema.js");
  const owner = new Map<string, string>();
  for (const t of entry.types) for (const n of [t.$type, ...(t.formerNames ?? [])]) owner.set(n, t.$type);
  const stored: EmittedStoredVersion[] = [];
  for (const m of entry.migrations ?? []) {
    const family = entry.types.find((t) => t.$type === owner.get(m.type))?.family;
    const frozen = family !== undefined ? schemas.get(lockKey(family, m.type, m.from)) : undefined;
    if (!frozen?.frozen) continue;
    stored.push({ owner: owner.get(m.type)!, $type: m.type, version: m.from, file: frozen.from, schema: storedSchema(frozen.schema) });
  }
  return {
    outputs: { [`${outRel}/versions.ts`]: content, [`${outRel}/stored-versions.ts`]: storedVersionsModule(stored, cfg.module) },
    names,
    unrecorded,
  };
}

/** The report the CLI prints (also handy in tests). */
export function formatResult(result: GenerateResult, check: boolean): string[] {
  if (result.errors.length > 0) return [...result.errors.map(formatError), `${result.errors.length} error(s); nothing was written.`];
  const compat = formatCompat(result);
  if (result.compat?.blocked) return [...compat, "nothing was written: stored sessions would not survive this change (see the fixes above)."];
  if (check) {
    const upToDate = result.stale.length === 0 && result.missing.length === 0 && result.extra.length === 0;
    if (upToDate) return [`generated files are current (${result.files.length} files, ${result.types.length} types).`, ...compat];
    return [
      ...result.stale.map((f) => `stale: ${f}`),
      ...result.missing.map((f) => `missing: ${f}`),
      ...result.extra.map((f) => `extra: ${f}`),
      // Running gen would refuse while a finding stored data would not survive stands: say that, not "run the generator".
      result.compat?.wouldBlock
        ? "generated files are out of date, and gen writes nothing until the problems below are fixed (see each fix)."
        : "generated files are out of date; run the generator.",
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
    const loaded = compat.loaded.length;
    return [
      `schemas compatible: ${result.types.length} types, ${result.migrations.length} migration(s), every version has a golden fixture` +
        (loaded > 0 ? `; ${loaded} fixture(s) load through the migrations and validate at the latest version.` : "."),
    ];
  }
  const n = compat.failures.length;
  return [
    `compatibility check: ${n} problem${n === 1 ? "" : "s"}`,
    ...compat.failures.flatMap((f) => [`  ${f.type}: ${displayPointer(f.pointer)}: ${f.message} (rule: ${f.rule}). Fix: ${f.fix}`, ...(f.details ?? []).map((d) => `    ${d}`)]),
  ];
}
