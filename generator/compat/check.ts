/**
 * `checkCompatibility`: keeps stored sessions readable as types evolve. It reads the current
 * schemas, the frozen history, the declared migrations and the golden fixtures, and fails when:
 *
 * - a frozen schema file was edited (its hash differs from `schemas/history/frozen.lock.json`),
 *   deleted, or (without `update`) never recorded in the lock;
 * - a current schema rejects a value the frozen schema of the SAME version accepts (decided by
 *   meaning, shown with a witness document), or the check can not decide whether it does;
 * - a version can not be migrated to the current one (a migration step is missing);
 * - a `$type` name is reused: it was retired or renamed, is a former name of another type, moved
 *   to another family, or its version went backwards;
 * - a type was removed (it has history, no current schema, and was not retired or renamed);
 * - a version has no golden fixture, or a fixture does not match its version's schema.
 *
 * Every failure names the type, a JSON pointer (into the value), the rule and the fix.
 */
import fs from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import { isDateTime } from "../runtime.js";
import { compareStrings as cmp } from "../errors.js";
import { renameRecipe } from "../recipes.js";
import {
  type AssessedChange,
  type SamplingReport,
  type Verdict,
  DEFAULT_SAMPLES,
  DEFAULT_SEED,
  assessCompatibility,
} from "./assess.js";
import { BUDGET_NAMES, assessmentWarnings } from "./report.js";
import type { Change, ChangeKind, ChangeRule, Witness } from "./rule-catalogue.js";
import {
  type CurrentSchema,
  type FrozenSchema,
  type RetiredType,
  HISTORY_DIR,
  LOCK_FILE,
  RETIRED_FILE,
  frozenHash,
  readCurrentSchemas,
  readFrozenSchemas,
  readLock,
  readRetired,
  writeLock,
  writeRetired,
  frozenPath,
} from "./history.js";
import { type JsonSchema, childPointer, displayPointer, isObject } from "./schema.js";
import { witnessText } from "./witness.js";

/** A migration as declared with `defineMigration` (only what the check needs). */
export interface DeclaredMigration {
  /** The `$type` the migration produces (for a rename: the new name). */
  type: string;
  from: number;
  to: number;
  /** For a rename: the former `$type` the migration reads. */
  fromType?: string;
  /** Where it is declared (`src/notes.ts:12`), for messages. */
  source?: string;
}

export interface CheckOptions {
  /** The generator's output directory (`schemas/`). */
  schemasDir: string;
  migrations: readonly DeclaredMigration[];
  /** Golden fixtures: `<fixturesDir>/<$type>/v<N>*.json`. */
  fixturesDir: string;
  /** Current `$type` -> its earlier names (`TypeDefinition.formerNames`). Also read from `x-statebag.formerNames`. */
  formerNames?: Readonly<Record<string, readonly string[]>>;
  /**
   * Record what is new instead of failing on it: add lock entries for frozen files the lock does
   * not list, and add renamed types to `retired.json`. The generator passes `true`; a CI
   * `--check` passes `false` (the default), so an unrecorded file fails the build.
   */
  update?: boolean;
  /** Validate each golden fixture against its version's schema (default true). */
  validateFixtures?: boolean;
  /** Paths in messages are relative to this (default `process.cwd()`). */
  cwd?: string;
  /**
   * Sampling of changes judged compatible (documents drawn from the frozen schema, validated
   * against the current one). The whole check spends at most `totalTimeBudgetMs` on it
   * (default 3000), each type at most one second.
   */
  sampling?: { seed?: number; samples?: number; totalTimeBudgetMs?: number };
}

/** Time the whole check may spend sampling: it runs in CI and in pre-commit loops. */
export const DEFAULT_CHECK_TIME_BUDGET_MS = 3000;
const PER_TYPE_TIME_BUDGET_MS = 1000;

export type CheckRule =
  | ChangeRule
  | "frozen-edited"
  | "frozen-deleted"
  | "frozen-unlocked"
  | "invalid-schema"
  | "duplicate-type"
  | "missing-migration"
  | "reused-type-name"
  | "version-regressed"
  | "removed-type"
  | "unrecorded-rename"
  | "missing-fixture"
  | "invalid-fixture";

export interface Failure {
  /** The `$type` concerned. */
  type: string;
  family?: string;
  /** JSON pointer into the value (`""`: the value itself). */
  pointer: string;
  rule: CheckRule;
  message: string;
  /** What to do about it, concretely. */
  fix: string;
  /** The file concerned, relative to `cwd`. */
  file?: string;
  /** For a breaking schema change: the change itself. */
  change?: Change;
  /** For a breaking schema change: a document the frozen schema accepts and the current one rejects. */
  witness?: Witness;
  /** Lines to print under the message (the witness, cut and escaped for a terminal; the budget an undecided change ran out of). */
  details?: string[];
}

export interface CheckReport {
  failures: Failure[];
  /** Lock keys added to `frozen.lock.json` (with `update`). */
  recorded: string[];
  /** `$type`s added to `retired.json` (with `update`). */
  retired: string[];
  /** Types compared with their frozen schema of the same version. */
  compared: { type: string; version: number; changes: AssessedChange[]; verdict: Verdict; sampling?: SamplingReport }[];
  /** `T: warning` lines: sampling that drew no document, budgets that ran out. */
  warnings: string[];
}

export function checkCompatibility(options: CheckOptions): Failure[] {
  return runCompatibilityCheck(options).failures;
}

/** The message for one failure: `T: /pointer: what (rule: r). Fix: how`. */
export function formatFailure(f: Failure): string {
  return `${f.type}: ${displayPointer(f.pointer)}: ${f.message} (rule: ${f.rule}). Fix: ${f.fix}`;
}

/** The lines under a failure's message: its witness, cut and escaped for a terminal. */
export function failureDetails(f: Failure): string[] {
  const budget = (f.change as AssessedChange | undefined)?.budget;
  if (!f.witness) return budget && f.change?.kind === "undecided" ? [`budget ran out: ${BUDGET_NAMES[budget]}`] : [];
  const how = f.witness.source === "sampled" ? `drawn by sampling, seed ${f.witness.seed}` : "built from the change";
  return [`witness (${how}; the old schema accepts it, the new one rejects it): ${witnessText(f.witness.document)}`];
}

export function formatFailures(failures: readonly Failure[]): string {
  if (failures.length === 0) return "statebag compat: no problems.";
  const lines = failures.flatMap((f) => [`  ${formatFailure(f)}`, ...failureDetails(f).map((d) => `    ${d}`)]);
  return `statebag compat: ${failures.length} problem${failures.length === 1 ? "" : "s"}\n${lines.join("\n")}`;
}

/** `defineMigration(...)` text for a fix. */
export function migrationSnippet(type: string, from: number, to: number): string {
  return `defineMigration({ type: ${JSON.stringify(type)}, from: ${from}, to: ${to}, up })`;
}

export function runCompatibilityCheck(options: CheckOptions): CheckReport {
  const ctx = newContext(options);
  const current = readCurrent(ctx);
  const frozen = checkFrozenLock(ctx, current);
  const history = groupHistory(frozen);
  const names = readNames(ctx, current);
  checkRemovedTypes(ctx, current, history, names);
  const budget = samplingBudget(options);
  for (const currentSchema of [...current.values()].sort((a, b) => cmp(a.$type, b.$type))) {
    const base = { type: currentSchema.$type, family: currentSchema.family, file: ctx.rel(currentSchema.file) };
    if (checkNameReuse(ctx, currentSchema, base, history, names)) continue;
    const own = history.get(currentSchema.$type)?.get(currentSchema.family) ?? [];
    const latest = own.length > 0 ? own[own.length - 1] : undefined;
    if (checkVersionRegressed(ctx, currentSchema, base, latest)) continue;
    checkSameVersionChange(ctx, currentSchema, base, latest, budget);
    const chain = readableVersions(ctx, currentSchema, own, history, names);
    checkMissingHistory(ctx, currentSchema, base, chain);
    checkMigrationChain(ctx, currentSchema, base, chain);
    checkGoldenFixtures(ctx, currentSchema, base, chain, history);
  }
  ctx.failures.sort((a, b) => cmp(a.type, b.type) || cmp(a.rule, b.rule) || cmp(a.pointer, b.pointer));
  return ctx.report;
}

// ---------------------------------------------------------------------------------------------
// One function per rule. They share a context: options, the report, and a way to report a failure.

interface CheckContext {
  options: CheckOptions;
  schemasDir: string;
  /** A path as shown in messages: relative to `cwd`, with `/`. */
  rel: (file: string) => string;
  report: CheckReport;
  failures: Failure[];
  fail: (f: Failure) => void;
}

/** What every failure about one current type starts with. */
interface TypeBase {
  type: string;
  family: string;
  file: string;
}

/** Frozen versions by `$type`, then family, sorted by version. */
type History = Map<string, Map<string, FrozenSchema[]>>;

interface Names {
  /** Former name -> the current type that took it over. */
  formerOf: Map<string, string>;
  retiredByName: Map<string, RetiredType>;
  retiredPath: string;
}

/** A current type's readable versions: each with the `$type` its values are stored under, and the migrations between them. */
interface Chain {
  /** Version -> the name values of that version are stored under (the type or a former name). */
  starts: Map<number, string>;
  /** Every known version, ascending, the current one included. */
  known: number[];
  edges: readonly DeclaredMigration[];
}

function newContext(options: CheckOptions): CheckContext {
  const cwd = options.cwd ?? process.cwd();
  const failures: Failure[] = [];
  return {
    options,
    schemasDir: options.schemasDir,
    rel: (file) => path.relative(cwd, file).split(path.sep).join("/") || ".",
    report: { failures, recorded: [], retired: [], compared: [], warnings: [] },
    failures,
    fail: (f) => {
      failures.push(f);
    },
  };
}

/** Current schemas by `$type`: unreadable files and a `$type` declared twice fail. */
function readCurrent(ctx: CheckContext): Map<string, CurrentSchema> {
  const { schemas, problems } = readCurrentSchemas(ctx.schemasDir);
  for (const problem of problems) {
    ctx.fail({
      type: path.basename(problem.file).replace(/\.schema\.json$/, ""),
      pointer: "",
      rule: "invalid-schema",
      message: `current schema ${ctx.rel(problem.file)} is ${problem.message}`,
      fix: "regenerate it (npm run gen)",
      file: ctx.rel(problem.file),
    });
  }
  const current = new Map<string, CurrentSchema>();
  for (const schema of schemas) {
    const other = current.get(schema.$type);
    if (other) {
      ctx.fail({
        type: schema.$type,
        family: schema.family,
        pointer: "",
        rule: "duplicate-type",
        message: `$type "${schema.$type}" is declared twice (${ctx.rel(other.file)} and ${ctx.rel(schema.file)})`,
        fix: "give one of the two types another $type: a $type must be unique across the registry",
        file: ctx.rel(schema.file),
      });
      continue;
    }
    current.set(schema.$type, schema);
  }
  return current;
}

/** Frozen files against `frozen.lock.json`: unlocked (recorded with `update`), edited, or deleted. */
function checkFrozenLock(ctx: CheckContext, current: Map<string, CurrentSchema>): FrozenSchema[] {
  const { rel, schemasDir, options } = ctx;
  const frozen = readFrozenSchemas(schemasDir);
  const lock = readLock(schemasDir);
  const lockPath = rel(path.join(schemasDir, HISTORY_DIR, LOCK_FILE));
  let lockChanged = false;
  const frozenKeys = new Set(frozen.map((f) => f.key));
  for (const frozenSchema of frozen) {
    const hash = frozenHash(frozenSchema.text);
    const locked = lock.files[frozenSchema.key];
    const latest = current.get(frozenSchema.$type)?.version ?? frozenSchema.version;
    if (locked === undefined) {
      if (options.update && frozenSchema.schema !== undefined) {
        lock.files[frozenSchema.key] = hash;
        ctx.report.recorded.push(frozenSchema.key);
        lockChanged = true;
      } else {
        ctx.fail({
          type: frozenSchema.$type,
          family: frozenSchema.family,
          pointer: "",
          rule: "frozen-unlocked",
          message:
            frozenSchema.schema === undefined
              ? `frozen schema ${rel(frozenSchema.file)} is not valid JSON and not recorded in ${lockPath}`
              : `frozen schema ${rel(frozenSchema.file)} is not recorded in ${lockPath}`,
          fix:
            frozenSchema.schema === undefined
              ? `restore the file (git checkout -- ${rel(frozenSchema.file)}) or delete it and run npm run gen`
              : `run npm run gen (it records new frozen schemas in ${lockPath}) and commit both files`,
          file: rel(frozenSchema.file),
        });
      }
    } else if (locked !== hash) {
      ctx.fail({
        type: frozenSchema.$type,
        family: frozenSchema.family,
        pointer: "",
        rule: "frozen-edited",
        message: `frozen schema ${rel(frozenSchema.file)} was edited (its hash no longer matches ${lockPath})`,
        fix:
          `restore it (git checkout -- ${rel(frozenSchema.file)}): a frozen version describes sessions already stored. ` +
          `To change ${frozenSchema.$type}, change its TypeScript type, bump it to version ${latest + 1} and add a migration ` +
          `${latest} -> ${latest + 1} (${migrationSnippet(frozenSchema.$type, latest, latest + 1)})`,
        file: rel(frozenSchema.file),
      });
    }
  }
  for (const key of Object.keys(lock.files).sort()) {
    if (frozenKeys.has(key)) continue;
    const [family, type, name] = key.split("/");
    const file = path.join(schemasDir, HISTORY_DIR, key);
    ctx.fail({
      type: type ?? key,
      family,
      pointer: "",
      rule: "frozen-deleted",
      message: `frozen schema ${rel(file)} is listed in ${lockPath} but the file is gone`,
      fix: `restore it (git checkout -- ${rel(file)}): sessions stored at ${name?.replace(/\.schema\.json$/, "") ?? "that version"} still need it`,
      file: rel(file),
    });
  }
  if (lockChanged) writeLock(schemasDir, lock);
  return frozen;
}

function groupHistory(frozen: readonly FrozenSchema[]): History {
  const history: History = new Map();
  for (const frozenSchema of frozen) {
    let byFamily = history.get(frozenSchema.$type);
    if (!byFamily) history.set(frozenSchema.$type, (byFamily = new Map()));
    const list = byFamily.get(frozenSchema.family) ?? [];
    list.push(frozenSchema);
    byFamily.set(frozenSchema.family, list);
  }
  for (const byFamily of history.values())
    for (const list of byFamily.values()) list.sort((a, b) => a.version - b.version);
  return history;
}

function readNames(ctx: CheckContext, current: Map<string, CurrentSchema>): Names {
  const formerOf = new Map<string, string>();
  for (const currentSchema of current.values()) {
    const names = new Set([...(ctx.options.formerNames?.[currentSchema.$type] ?? []), ...currentSchema.formerNames]);
    for (const name of names) if (name !== currentSchema.$type) formerOf.set(name, currentSchema.$type);
  }
  const retired = readRetired(ctx.schemasDir);
  return {
    formerOf,
    retiredByName: new Map(retired.map((r) => [r.$type, r])),
    retiredPath: ctx.rel(path.join(ctx.schemasDir, HISTORY_DIR, RETIRED_FILE)),
  };
}

/** Types with history but no current schema: renamed (recorded with `update`), retired, or removed (a failure). */
function checkRemovedTypes(
  ctx: CheckContext,
  current: Map<string, CurrentSchema>,
  history: History,
  names: Names,
): void {
  const newlyRetired: RetiredType[] = [];
  for (const [type, byFamily] of history) {
    if (current.has(type) || names.retiredByName.has(type)) continue;
    const versions = [...byFamily.values()].flat().map((f) => f.version);
    const lastVersion = Math.max(...versions);
    const family = [...byFamily.keys()][0];
    const renamedTo = names.formerOf.get(type);
    if (renamedTo !== undefined) {
      if (ctx.options.update) {
        const entry: RetiredType = { $type: type, family, lastVersion, renamedTo };
        newlyRetired.push(entry);
        names.retiredByName.set(type, entry);
        ctx.report.retired.push(type);
      } else {
        ctx.fail({
          type,
          family,
          pointer: "",
          rule: "unrecorded-rename",
          message: `$type "${type}" was renamed to "${renamedTo}" but ${names.retiredPath} does not reserve the old name`,
          fix: `run npm run gen (it records renamed types in ${names.retiredPath}) and commit the file`,
        });
      }
      continue;
    }
    ctx.fail({
      type,
      family,
      pointer: "",
      rule: "removed-type",
      message: `type removed: ${HISTORY_DIR}/${family}/${type} holds version${versions.length > 1 ? "s" : ""} ${versions.join(", ")} but no current schema declares "${type}", so stored sessions holding it can not be read`,
      fix:
        `restore the type; or, if it was renamed: ${renameRecipe(type, lastVersion, undefined, family)}; ` +
        `or, to drop it for good (no stored session may hold it any more), reserve the name: add { "$type": "${type}", "reason": "..." } ` +
        `to the "retired" list of ${names.retiredPath} (create it as { "retired": [] } if missing)`,
    });
  }
  if (newlyRetired.length > 0) writeRetired(ctx.schemasDir, [...readRetired(ctx.schemasDir), ...newlyRetired]);
}

/** A `$type` that belongs to something else: retired, a former name of another type, or history in another family. True when it failed. */
function checkNameReuse(ctx: CheckContext, c: CurrentSchema, base: TypeBase, history: History, names: Names): boolean {
  const typeName = c.$type;
  const reuse: string[] = [];
  const retiredEntry = names.retiredByName.get(typeName);
  if (retiredEntry) {
    reuse.push(
      `$type "${typeName}" was retired${retiredEntry.renamedTo ? ` (renamed to "${retiredEntry.renamedTo}")` : ""}${retiredEntry.reason ? ` (${retiredEntry.reason})` : ""} and is listed in ${names.retiredPath}`,
    );
  }
  const owner = names.formerOf.get(typeName);
  if (owner !== undefined && owner !== typeName) reuse.push(`$type "${typeName}" is a former name of "${owner}"`);
  const byFamily = history.get(typeName);
  const otherFamilies = byFamily ? [...byFamily.keys()].filter((f) => f !== c.family) : [];
  if (otherFamilies.length > 0) {
    reuse.push(
      `$type "${typeName}" has frozen history in family ${otherFamilies.join(", ")} but is now declared in family ${c.family}`,
    );
  }
  for (const message of reuse) {
    ctx.fail({
      ...base,
      pointer: "",
      rule: "reused-type-name",
      message: `${message}: stored values tagged "${typeName}" mean the old type`,
      fix: `give this type a new $type (a $type name can never be reused), or, if it really is the same type, remove "${typeName}" from ${names.retiredPath} / its former names`,
    });
  }
  return reuse.length > 0;
}

/** The current version is below the latest frozen one. True when it failed. */
function checkVersionRegressed(
  ctx: CheckContext,
  c: CurrentSchema,
  base: TypeBase,
  latest: FrozenSchema | undefined,
): boolean {
  if (!latest || latest.version <= c.version) return false;
  const typeName = c.$type;
  ctx.fail({
    ...base,
    pointer: "",
    rule: "version-regressed",
    message: `version ${c.version} is lower than frozen version ${latest.version}`,
    fix: `set ${typeName}'s version to ${latest.version + 1} and add a migration ${latest.version} -> ${latest.version + 1} (${migrationSnippet(typeName, latest.version, latest.version + 1)}); if this is a different type, give it a new $type`,
  });
  return true;
}

/** What is left of the sampling time for the whole check. */
interface SamplingBudget {
  seed: number;
  samples: number;
  remainingMs: number;
}

function samplingBudget(options: CheckOptions): SamplingBudget {
  return {
    seed: options.sampling?.seed ?? DEFAULT_SEED,
    samples: options.sampling?.samples ?? DEFAULT_SAMPLES,
    remainingMs: options.sampling?.totalTimeBudgetMs ?? DEFAULT_CHECK_TIME_BUDGET_MS,
  };
}

/**
 * The current schema against the frozen schema of the same version: every stored value must
 * still validate. A break (with its witness) or an undecidable change fails; a change judged
 * compatible is sampled within what is left of the check's time budget.
 */
function checkSameVersionChange(
  ctx: CheckContext,
  c: CurrentSchema,
  base: TypeBase,
  latest: FrozenSchema | undefined,
  budget: SamplingBudget,
): void {
  if (!latest || latest.version !== c.version || latest.schema === undefined) return;
  const typeName = c.$type;
  const started = performance.now();
  const assessment = assessCompatibility(latest.schema, c.schema, {
    oldBase: latest.file,
    newBase: c.file,
    seed: budget.seed,
    samples: budget.remainingMs > 0 ? budget.samples : 0,
    timeBudgetMs: Math.min(PER_TYPE_TIME_BUDGET_MS, budget.remainingMs),
    ...(budget.remainingMs > 0
      ? {}
      : { samplingOffReason: "the check's sampling time budget was spent on other types" }),
  });
  if (assessment.sampling) budget.remainingMs -= performance.now() - started;
  const entry: CheckReport["compared"][number] = {
    type: typeName,
    version: c.version,
    changes: assessment.changes,
    verdict: assessment.verdict,
  };
  if (assessment.sampling) entry.sampling = assessment.sampling;
  ctx.report.compared.push(entry);
  for (const warning of assessmentWarnings(assessment.changes, assessment.sampling))
    ctx.report.warnings.push(`${typeName}: ${warning}`);
  const next = c.version + 1;
  const bump = `bump ${typeName} to version ${next} and add a migration ${c.version} -> ${next} (${migrationSnippet(typeName, c.version, next)})`;
  for (const change of assessment.changes) {
    if (change.kind === "compatible") continue;
    const failure: Failure = {
      ...base,
      pointer: change.pointer,
      rule: change.rule,
      message: change.message,
      fix:
        change.kind === "breaking"
          ? bump
          : `the check can not tell whether every stored value still validates: make the change in a way it can read (see the keyword "${change.keyword ?? change.rule}"), or ${bump}`,
      change,
    };
    if (change.witness) failure.witness = change.witness;
    const details = failureDetails(failure);
    if (details.length > 0) failure.details = details;
    ctx.fail(failure);
  }
}

/** Every version the type can be stored at, with the name it is stored under, and the migrations that apply. */
function readableVersions(
  ctx: CheckContext,
  c: CurrentSchema,
  own: readonly FrozenSchema[],
  history: History,
  names: Names,
): Chain {
  const typeName = c.$type;
  // Former names: declared by the current type, or recorded as renamed to it in retired.json.
  const formers = [
    ...new Set([
      ...[...names.formerOf.entries()].filter(([, to]) => to === typeName).map(([name]) => name),
      ...[...names.retiredByName.values()].filter((r) => r.renamedTo === typeName).map((r) => r.$type),
    ]),
  ];
  const graphTypes = new Set([typeName, ...formers]);
  const edges = ctx.options.migrations.filter(
    (m) => graphTypes.has(m.type) || (m.fromType !== undefined && graphTypes.has(m.fromType) && m.type === typeName),
  );
  const starts = new Map<number, string>();
  for (const frozenSchema of own) starts.set(frozenSchema.version, typeName);
  for (const former of formers) {
    for (const list of history.get(former)?.values() ?? [])
      for (const frozenSchema of list) if (!starts.has(frozenSchema.version)) starts.set(frozenSchema.version, former);
  }
  const known = [...new Set([...starts.keys(), c.version])].sort((a, b) => a - b);
  return { starts, known, edges };
}

/**
 * A version that fixtures (or migrations) still refer to must have its frozen schema: deleting it
 * together with its lock entry would otherwise drop that version from every check (its fixtures
 * unread, its steps never run on them) while stored sessions of that version still exist. A
 * version only migrations read is fine when it was never frozen (a project that adopted the
 * generator later); the lock's recorded version type names show it was.
 */
function checkMissingHistory(ctx: CheckContext, c: CurrentSchema, base: TypeBase, chain: Chain): void {
  const typeName = c.$type;
  const { rel } = ctx;
  const frozenFile = (name: string, v: number) => frozenPath(ctx.schemasDir, c.family, name, v);
  const lockPath = rel(path.join(ctx.schemasDir, HISTORY_DIR, LOCK_FILE));
  const wasFrozen = readLock(ctx.schemasDir).names ?? {};
  // Any name of the type's history counts: a step or fixture filed under the new name for a
  // version stored under a former one is another check's business.
  const known = (v: number) => v === c.version || chain.starts.has(v);
  const missing = new Map<string, { name: string; v: number; fixtures: string[]; steps: string[] }>();
  const refer = (name: string, v: number) => {
    const key = `${name}\u0000${v}`;
    if (!missing.has(key)) missing.set(key, { name, v, fixtures: [], steps: [] });
    return missing.get(key)!;
  };
  for (const edge of chain.edges) {
    const name = edge.fromType ?? edge.type;
    if (!known(edge.from))
      refer(name, edge.from).steps.push(
        `migration "${name}" v${edge.from} -> ${edge.fromType ? `"${edge.type}" ` : ""}v${edge.to}${edge.source ? ` (${edge.source})` : ""}`,
      );
  }
  const names = new Set([typeName, ...chain.starts.values(), ...chain.edges.map((m) => m.fromType ?? m.type)]);
  for (const name of names) {
    const dir = path.join(ctx.options.fixturesDir, name);
    if (!fs.existsSync(dir)) continue;
    for (const file of fs.readdirSync(dir).sort()) {
      const fileVersion = Number(/^v([1-9][0-9]*)(?![0-9]).*\.json$/.exec(file)?.[1] ?? NaN);
      if (Number.isNaN(fileVersion) || known(fileVersion) || (name === typeName && fileVersion > c.version)) continue;
      refer(name, fileVersion).fixtures.push(rel(path.join(dir, file)));
    }
  }
  for (const { name, v: version, fixtures, steps } of missing.values()) {
    const gone = rel(frozenFile(name, version));
    const key = path
      .relative(path.join(ctx.schemasDir, HISTORY_DIR), frozenFile(name, version))
      .split(path.sep)
      .join("/");
    if (fixtures.length === 0 && wasFrozen[key] === undefined) continue;
    const by = [...fixtures.map((f) => `golden fixture ${f}`), ...steps];
    ctx.fail({
      ...base,
      type: name,
      pointer: "",
      rule: "frozen-deleted",
      message: `"${name}" version ${version} is still referred to (${by.join(", ")}), but its frozen schema ${gone} is gone and ${lockPath} does not list it: stored sessions of that version would no longer be checked`,
      fix: `restore ${gone} and its entries in ${lockPath} (git checkout -- ${gone} ${lockPath})`,
      ...(fixtures.length > 0 ? { file: fixtures[0] } : {}),
    });
  }
}

/** Every known version must migrate to the current one: one failure per gap in the chain. */
function checkMigrationChain(ctx: CheckContext, c: CurrentSchema, base: TypeBase, chain: Chain): void {
  const typeName = c.$type;
  const reachable = (from: number): Set<number> => {
    const seen = new Set([from]);
    const queue = [from];
    while (queue.length > 0) {
      const reached = queue.shift()!;
      for (const edge of chain.edges) {
        if (edge.from === reached && edge.to > edge.from && edge.to <= c.version && !seen.has(edge.to)) {
          seen.add(edge.to);
          queue.push(edge.to);
        }
      }
    }
    return seen;
  };
  const reported = new Set<string>();
  for (const knownVersion of chain.known) {
    if (knownVersion >= c.version) continue;
    const seen = reachable(knownVersion);
    if (seen.has(c.version)) continue;
    const stuck = Math.max(...seen);
    const target = chain.known.find((k) => k > stuck) ?? c.version;
    const key = `${stuck}->${target}`;
    if (reported.has(key)) continue;
    reported.add(key);
    const storedAs = chain.starts.get(stuck);
    const renamed = storedAs !== undefined && storedAs !== typeName;
    const isCurrent = target === c.version;
    ctx.fail({
      ...base,
      pointer: "",
      rule: "missing-migration",
      message: renamed
        ? `no migration from "${storedAs}" version ${stuck} (the former name) to version ${target}: sessions stored with it can not be read`
        : isCurrent
          ? `current version ${target} has no migration from version ${stuck}: sessions stored at version ${knownVersion} can not be read`
          : `no migration from version ${stuck} to version ${target}: sessions stored at version ${knownVersion} can not be read`,
      fix: renamed
        ? `add the step that renames $type "${storedAs}" v${stuck} to "${typeName}" v${target}: defineMigration({ type: "${storedAs}", from: ${stuck}, to: { type: "${typeName}", version: ${target} }, up: (v) => v })`
        : `add a migration ${stuck} -> ${target} (${migrationSnippet(typeName, stuck, target)})`,
    });
  }
}

/** Golden fixtures: every readable version has one, and each matches its version's schema. */
function checkGoldenFixtures(
  ctx: CheckContext,
  c: CurrentSchema,
  base: TypeBase,
  chain: Chain,
  history: History,
): void {
  const { rel, options } = ctx;
  const typeName = c.$type;
  for (const knownVersion of chain.known) {
    const name = chain.starts.get(knownVersion) ?? typeName;
    let schema: JsonSchema | undefined;
    if (name === typeName && knownVersion === c.version) schema = c.schema;
    else {
      for (const list of history.get(name)?.values() ?? []) {
        const hit = list.find((f) => f.version === knownVersion);
        if (hit) schema = hit.schema;
      }
    }
    const dir = path.join(options.fixturesDir, name);
    const files = fixtureFiles(dir, knownVersion);
    const isCurrent = name === typeName && knownVersion === c.version;
    if (files.length === 0) {
      ctx.fail({
        ...base,
        type: name,
        pointer: "",
        rule: "missing-fixture",
        message: `version ${knownVersion} has no golden fixture (${rel(dir)}/v${knownVersion}*.json)`,
        fix: `add ${rel(path.join(dir, `v${knownVersion}.json`))}: a value of ${name} as stored at version ${knownVersion}${isCurrent ? " (statebag gen --scaffold-fixtures writes a starting point)" : ""}`,
      });
      continue;
    }
    if (options.validateFixtures === false || schema === undefined) continue;
    for (const file of files) {
      for (const problem of validateFixture(file, name, knownVersion, schema)) {
        ctx.fail({
          ...base,
          type: name,
          pointer: problem.pointer,
          rule: "invalid-fixture",
          message: `golden fixture ${rel(file)} does not match version ${knownVersion}: ${problem.message}`,
          fix: isCurrent
            ? `correct the fixture; if it is right, the current schema of ${typeName} rejects a stored value: revert that change, or bump ${typeName} to version ${c.version + 1} with a migration`
            : `correct the fixture: it must be a value exactly as stored at version ${knownVersion}`,
          file: rel(file),
        });
      }
    }
  }
}

/** Files `v<N>.json`, `v<N>-<anything>.json`, `v<N>.<anything>.json` in a fixture directory. */
export function fixtureFiles(dir: string, version: number): string[] {
  if (!fs.existsSync(dir)) return [];
  const pattern = new RegExp(`^v${version}(?![0-9]).*\\.json$`);
  return fs
    .readdirSync(dir)
    .filter((n) => pattern.test(n))
    .sort()
    .map((n) => path.join(dir, n));
}

// ---------------------------------------------------------------------------------------------
// Fixture validation

let ajvInstance: Ajv | undefined;
function ajv(): Ajv {
  if (!ajvInstance) {
    ajvInstance = new Ajv({
      strict: false,
      allErrors: true,
      discriminator: true,
      logger: false,
      validateSchema: false,
    });
    // The runtime's own check, so a fixture passes here exactly when it loads (no "2025-02-30").
    ajvInstance.addFormat("date-time", isDateTime);
    ajvInstance.addFormat("date", /^\d{4}-\d{2}-\d{2}$/);
  }
  return ajvInstance;
}

/** Replaces `$ref`s to other files (family slots) by an open schema: each nested value is checked by its own type. */
function localOnly(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(localOnly);
  if (!isObject(value)) return value;
  if (typeof value.$ref === "string" && !value.$ref.startsWith("#")) return {};
  for (const key of ["anyOf", "oneOf"]) {
    const branches = value[key];
    if (
      Array.isArray(branches) &&
      branches.some((b) => isObject(b) && typeof b.$ref === "string" && !b.$ref.startsWith("#"))
    ) {
      return {};
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === "$id") continue;
    out[key] = key === "const" || key === "enum" || key === "default" || key === "examples" ? child : localOnly(child);
  }
  return out;
}

export interface FixtureProblem {
  pointer: string;
  message: string;
}

export function validateFixture(file: string, type: string, version: number, schema: JsonSchema): FixtureProblem[] {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    return [{ pointer: "", message: `not valid JSON (${(error as Error).message})` }];
  }
  const problems: FixtureProblem[] = [];
  if (isObject(value)) {
    if (value.$type !== type)
      problems.push({ pointer: "/$type", message: `$type is ${JSON.stringify(value.$type)}, expected "${type}"` });
    const storedVersion = value.$version === undefined ? 1 : value.$version;
    if (storedVersion !== version)
      problems.push({
        pointer: "/$version",
        message: `$version is ${JSON.stringify(storedVersion)}, expected ${version}`,
      });
  }
  let validate: ReturnType<Ajv["compile"]>;
  try {
    validate = ajv().compile(localOnly(schema) as object);
  } catch (error) {
    problems.push({ pointer: "", message: `its schema could not be compiled (${(error as Error).message})` });
    return problems;
  }
  if (!validate(value)) {
    for (const error of validate.errors ?? []) {
      const detail =
        error.keyword === "additionalProperties"
          ? `unexpected property "${String(error.params.additionalProperty)}"`
          : error.keyword === "required"
            ? `missing property "${String(error.params.missingProperty)}"`
            : (error.message ?? error.keyword);
      const key =
        error.keyword === "additionalProperties"
          ? error.params.additionalProperty
          : error.keyword === "required"
            ? error.params.missingProperty
            : undefined;
      problems.push({
        pointer: typeof key === "string" ? childPointer(error.instancePath, key) : error.instancePath,
        message: detail,
      });
    }
  }
  return problems;
}

export type { ChangeKind };
