/**
 * The compatibility run of `gen` (the checks themselves live in compat/): before anything is
 * written, the check on this run's schemas, which may refuse the run; after writing, the golden
 * fixtures loaded through the migrations. A clean verdict on unchanged inputs stands in for both.
 */
import fs from "node:fs";
import path from "node:path";
import { generatorFingerprint, readCompatVerdict, treeHash, writeCompatVerdict, type CacheEntry } from "./cache.js";
import type { Failure } from "./compat/check.js";
import type { MigrationStep, StoredDataRule } from "./compat/stored-data.js";
import { fromCwd, type Config } from "./config.js";
import { compareStrings } from "./errors.js";
import { readIfExists, writeFileCreatingDir } from "./files.js";
import { hash } from "./hash.js";
import { isCurrent, type OutputPlan } from "./output.js";
import type { VersionTypes } from "./versions-output.js";

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
  /** What the check could not fully check (sampling drew nothing, a budget ran out): printed, never silent. */
  warnings: string[];
}

/** What a run changed that the verdict depends on (paths of scaffolded fixtures relative to cwd). */
export interface RunChanges {
  scaffolded: readonly string[];
  /** Frozen schemas and version type names the run recorded in the history lock. */
  recorded: readonly string[];
  named: readonly string[];
}

/** A compatibility run, started before anything is written. */
export interface CompatRun {
  /** Set when a finding stored data would not survive refuses the run: write nothing. */
  blocked?: CompatResult;
  /** After writing: what the check recorded (the frozen lock, retired names) goes to the schemas directory. */
  commit(): void;
  /** The findings, the stored data loaded through the migrations included. */
  finish(changes: RunChanges, versionTypes: Pick<VersionTypes, "names" | "unrecorded">): Promise<CompatResult>;
  /** Removes the scratch copy of the schemas. */
  dispose(): void;
}

/** Starts the compatibility run: the cached clean verdict when the output on disk is current and nothing changed, else the check. */
export async function startCompat(
  cfg: Config,
  entry: CacheEntry,
  plan: OutputPlan,
  outputs: Readonly<Record<string, string>>,
): Promise<CompatRun> {
  const verdictKey =
    cfg.cache && !cfg.scaffoldFixtures && isCurrent(plan) ? compatVerdictKey(cfg, entry, outputs) : undefined;
  const verdict = verdictKey !== undefined ? readCompatVerdict(cfg.root, verdictKey) : undefined;
  if (verdict) {
    const result: CompatResult = {
      failures: [],
      recorded: [],
      retired: [],
      compared: verdict.compared,
      loaded: verdict.loaded,
      blocked: false,
      wouldBlock: false,
      warnings: [],
    };
    return { commit: () => {}, dispose: () => {}, finish: async () => result };
  }
  const check = await runCompat(cfg, entry, plan);
  return {
    ...(check.blocked ? { blocked: check.result } : {}),
    commit: check.commit,
    dispose: check.dispose,
    finish: async (changes, versionTypes) => {
      const result = await withStoredData(cfg, entry, check, changes, versionTypes);
      // Recorded nothing and found nothing: the same in `--check` (which fails where this records).
      const clean =
        result.failures.length === 0 &&
        result.recorded.length === 0 &&
        result.retired.length === 0 &&
        changes.recorded.length === 0 &&
        changes.named.length === 0;
      if (verdictKey !== undefined && !cfg.check && clean)
        writeCompatVerdict(cfg.root, { key: verdictKey, compared: result.compared, loaded: result.loaded });
      return result;
    },
  };
}

/** The check's findings with the stored-data check's, and (`--check`) versions whose type name the lock does not record. */
async function withStoredData(
  cfg: Config,
  entry: CacheEntry,
  check: CompatCheck,
  changes: RunChanges,
  versionTypes: Pick<VersionTypes, "names" | "unrecorded">,
): Promise<CompatResult> {
  // Fixtures written by this run are no longer missing (the stored-data check reports them as unedited).
  const fixtureDir = (type: string) => `${fromCwd(cfg, path.join(cfg.fixturesDir, type))}/`;
  const found = check.result.failures.filter(
    (f) => !(f.rule === "missing-fixture" && changes.scaffolded.some((file) => file.startsWith(fixtureDir(f.type)))),
  );
  const stored = await runStoredData(
    cfg,
    entry,
    cfg.check ? check.schemasDir : cfg.schemasDir,
    found,
    versionTypes.names,
  );
  // An unedited scaffold also fails its schema (the marker key): the one message about it is enough.
  const kept = found.filter(
    (f) => !(f.rule === "invalid-fixture" && f.file !== undefined && stored.unedited.includes(f.file)),
  );
  const unnamed = cfg.check ? unrecordedNames(cfg, versionTypes.unrecorded) : [];
  const failures = sortFailures([...kept, ...stored.failures, ...unnamed]);
  return { ...check.result, failures, loaded: stored.loaded, wouldBlock: failures.some(isBlocking) };
}

/** The check on a scratch copy of the schemas (see `runCompat`). */
interface CompatCheck {
  result: CompatResult;
  blocked: boolean;
  /** The scratch schemas directory, this run's output laid over the real one. */
  schemasDir: string;
  commit: () => void;
  dispose: () => void;
}

/** The earlier `$type`s of renamed types, by their current `$type`. */
function formerNamesOf(entry: CacheEntry): Record<string, string[]> {
  const formerNames: Record<string, string[]> = {};
  for (const type of entry.types) if (type.formerNames?.length) formerNames[type.$type] = type.formerNames;
  return formerNames;
}

/** `--check`: frozen versions whose version type name the lock does not record yet (`gen` records it). */
function unrecordedNames(cfg: Config, keys: readonly string[]): CompatFailure[] {
  const lock = fromCwd(cfg, path.join(cfg.schemasDir, "history", "frozen.lock.json"));
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

/**
 * Everything the compatibility and stored-data checks read, given current output on disk: the
 * generator and runtime code, the sources and the files they import (the migrations run), the
 * outputs, the schemas directory with its history, the fixtures, and where messages point.
 */
function compatVerdictKey(cfg: Config, entry: CacheEntry, outputs: Readonly<Record<string, string>>): string {
  const lines = [
    generatorFingerprint(),
    entry.key,
    JSON.stringify(entry.dependencies),
    cfg.cwd,
    cfg.root,
    cfg.fixturesDir,
    cfg.command,
  ];
  for (const rel of Object.keys(outputs).sort(compareStrings)) lines.push(`${rel}\t${hash(outputs[rel]!)}`);
  lines.push(treeHash(cfg.schemasDir), treeHash(cfg.fixturesDir));
  return hash(lines.join("\n"));
}

/** Rules whose findings mean the new schemas would misdescribe stored data: `gen` then writes nothing. */
const BLOCKING_RULES = new Set([
  "frozen-edited",
  "frozen-deleted",
  "invalid-schema",
  "duplicate-type",
  "reused-type-name",
  "version-regressed",
  "removed-type",
]);

function isBlocking(f: CompatFailure): boolean {
  return f.change !== undefined || BLOCKING_RULES.has(f.rule);
}

function sortFailures(failures: CompatFailure[]): CompatFailure[] {
  return failures.sort(
    (a, b) =>
      compareStrings(a.type, b.type) ||
      compareStrings(a.rule, b.rule) ||
      compareStrings(a.pointer, b.pointer) ||
      compareStrings(a.file ?? "", b.file ?? ""),
  );
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
async function runCompat(cfg: Config, entry: CacheEntry, plan: OutputPlan): Promise<CompatCheck> {
  const { runCompatibilityCheck } = await import("./compat/check.js");
  const { HISTORY_DIR, LOCK_FILE, RETIRED_FILE } = await import("./compat/history.js");
  const options = {
    fixturesDir: cfg.fixturesDir,
    migrations: (entry.migrations ?? []).map((m) => {
      const source = fromCwd(cfg, m.source);
      return m.toType === m.type
        ? { type: m.type, from: m.from, to: m.to, source }
        : { type: m.toType, from: m.from, to: m.to, fromType: m.type, source };
    }),
    formerNames: formerNamesOf(entry),
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
    for (const file of plan.files) {
      const target = inSchemas(path.resolve(cfg.cwd, file.path));
      if (!target || (file.createOnly && fs.existsSync(target))) continue;
      writeFileCreatingDir(target, file.content);
    }
    for (const file of plan.extra) {
      const target = inSchemas(path.resolve(cfg.cwd, file));
      if (target) fs.rmSync(target, { force: true });
    }
    const report = runCompatibilityCheck({ ...options, schemasDir: overlay });
    const from = fromCwd(cfg, overlay);
    const to = fromCwd(cfg, cfg.schemasDir) || ".";
    const real = (text: string) => text.split(from).join(to);
    const failures: CompatFailure[] = report.failures.map((f) =>
      localizeCommand(
        {
          ...f,
          message: real(f.message),
          fix: real(f.fix),
          ...(f.file !== undefined ? { file: real(f.file) } : {}),
          ...(f.details !== undefined ? { details: f.details.map(real) } : {}),
        },
        cfg.command,
      ),
    );
    const blocked = !cfg.check && failures.some(isBlocking);
    // Refused: leave out what only recording would fix (it was not recorded).
    const shown = blocked
      ? failures.filter((f) => isBlocking(f) || !["frozen-unlocked", "unrecorded-rename"].includes(f.rule))
      : failures;
    return {
      result: {
        failures: shown,
        recorded: blocked ? [] : report.recorded,
        retired: blocked ? [] : report.retired,
        compared: report.compared.length,
        loaded: [],
        blocked,
        wouldBlock: failures.some(isBlocking),
        warnings: report.warnings.map(real),
      },
      blocked,
      schemasDir: overlay,
      // What the check recorded in the overlay (the frozen lock, retired names) goes to the real directory.
      commit: () => {
        for (const name of [LOCK_FILE, RETIRED_FILE]) {
          const source = path.join(overlay, HISTORY_DIR, name);
          const target = path.join(cfg.schemasDir, HISTORY_DIR, name);
          const content = readIfExists(source);
          if (content === undefined || readIfExists(target) === content) continue;
          writeFileCreatingDir(target, content);
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
  // Reported already as not matching their own version: loading them would blame the migrations.
  const skip = new Set(
    failures
      .filter((f) => f.rule === "invalid-fixture" && f.file !== undefined)
      .map((f) => path.resolve(cfg.cwd, f.file!)),
  );
  const bindings = new Map<string, { file: string; exportName: string }>();
  for (const migration of entry.migrations ?? []) {
    const file = path.join(cfg.root, migration.source.replace(/:\d+$/, ""));
    bindings.set(`${file}\u0000${migration.exportName}`, { file, exportName: migration.exportName });
  }
  // Steps named as the scan found them (`src/notes.ts:12`, relative to where the generator runs).
  const sources = new Map((entry.migrations ?? []).map((m) => [`${m.type}\u0000${m.from}`, fromCwd(cfg, m.source)]));
  // `versions.ts` names by (type, version): fix texts name the types a typed migration imports.
  const versionTypeNames = new Map(
    Object.entries(names).map(([key, name]) => {
      const [, type, file] = key.split("/");
      return [`${type}\u0000${Number(/^v(\d+)/.exec(file ?? "")?.[1])}`, name] as const;
    }),
  );
  const report = await checkStoredData({
    schemasDir,
    displaySchemasDir: cfg.schemasDir,
    fixturesDir: cfg.fixturesDir,
    bindings: [...bindings.values()],
    formerNames: formerNamesOf(entry),
    cwd: cfg.cwd,
    command: cfg.command,
    skip,
    sources,
    versionTypeNames,
  });
  return {
    failures: report.failures.map((f) => localizeCommand(f, cfg.command)),
    loaded: report.loaded,
    unedited: report.unedited,
  };
}
