/**
 * Proves that stored data still loads: every golden fixture of every version is migrated through
 * the project's own migrations to the latest version of its type (nested values in family slots
 * too, as the runtime walker does on load) and validated against the latest schema. This is what
 * `statebag gen --check` runs in a user's CI; without it a migration that forgets a field passes
 * every check and then fails on every stored session.
 *
 * The migrations are the project's TypeScript (`export const ... = defineMigration(...)`): their
 * modules are imported (through tsx when they are TypeScript), so a module that declares
 * migrations must load on its own.
 *
 * `checkStoredDocuments` takes any list of documents, so sampled documents can go through the same
 * chain and report in the same form as fixtures.
 */
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { MigrationError, MigrationSet, type Migration, type MigrationContext } from "../runtime.js";
import { storedSchema } from "../stored-schema.js";
import { bundleSchema, compileBundled } from "./bundle.js";
import { fixtureFiles } from "./check.js";
import {
  HISTORY_DIR,
  readCurrentSchemas,
  readFrozenSchemas,
  type CurrentSchema,
  type FrozenSchema,
} from "./history.js";
import { sampleDocuments } from "./sampling.js";
import { fileResolver, GEN_SCAFFOLD_OPTIONS, scaffoldStoredValue, UNEDITED_KEY } from "./scaffold.js";
import { canonicalJson, childPointer, isObject, type JsonSchema } from "./schema.js";

export { UNEDITED_KEY };

export type StoredDataRule = "unedited-fixture" | "stored-data" | "migrations-unloadable";

/** One step of a migration chain, as messages name it. */
export interface MigrationStep {
  type: string;
  from: number;
  toType: string;
  to: number;
  /** Where the step is defined (`src/notes.ts:12`), when known. */
  source?: string;
}

export interface StoredDataFailure {
  /** The `$type` the document was stored as. */
  type: string;
  /** JSON pointer into the document (`""`: the document itself). */
  pointer: string;
  rule: StoredDataRule;
  message: string;
  fix: string;
  /** The fixture (or module) concerned, relative to `cwd`. */
  file?: string;
  /** The migration step that failed or that produced the invalid value. */
  step?: MigrationStep;
}

/** A stored document to load: a golden fixture, or any value as some version stored it. */
export interface StoredDocument {
  /** How messages name it: `golden fixture test/fixtures/acme.NotesState/v1.json`, `sample #3 of ...`. */
  label: string;
  document: unknown;
  /** The version it was stored at (`$version`, absent means 1, must say the same). */
  fromVersion: number;
  /** The file it came from, relative to `cwd` (for `Failure.file`). */
  file?: string;
}

/** What loading needs to know about the project's types. */
export interface StoredDataContext {
  /** Current schemas (`schemas/<Family>/<$type>.schema.json`). */
  schemasDir: string;
  /** The project's migrations (`loadDeclaredMigrations`). */
  migrations: readonly Migration[];
  /** Current `$type` -> earlier names (also read from `x-statebag.formerNames`). */
  formerNames?: Readonly<Record<string, readonly string[]>>;
  /** How to run the generator, for fix texts (`npx statebag gen`). */
  command?: string;
  /** Where each step is declared (`"<type>\u0000<from>"` -> `src/notes.ts:12`), from the generator's scan. */
  sources?: ReadonlyMap<string, string>;
  /** Where messages say the schemas are, when `schemasDir` is a scratch copy of them (default: `schemasDir`). */
  displaySchemasDir?: string;
  /** How messages show a path (default: absolute). */
  relative?: (file: string) => string;
  /** Version type names (`"<$type>\u0000<version>"` -> `NotesState_v1`), for fix texts; default `<title>_v<N>`. */
  versionTypeNames?: ReadonlyMap<string, string>;
}

interface TypeInfo {
  current: CurrentSchema;
  slots: { path: string[]; family: string }[];
  validate?: ReturnType<typeof compileBundled>;
}

/** The types, migrations and validators a batch of documents is loaded with. */
class Loader {
  private readonly types = new Map<string, TypeInfo>();
  private readonly renamed = new Map<string, string>();
  private readonly set = new MigrationSet();
  private readonly resolver = fileResolver();
  /** Steps run for the document being loaded, in order. */
  trace: MigrationStep[] = [];

  /** `"<$type>\u0000<version>"` -> the frozen schema, compiled on first use (slots opaque, as the runtime checks it). */
  private readonly frozen = new Map<
    string,
    { schema: JsonSchema; file: string; validate?: ReturnType<typeof compileBundled> }
  >();

  constructor(context: StoredDataContext) {
    for (const frozenSchema of readFrozenSchemas(context.schemasDir)) {
      if (frozenSchema.schema === undefined) continue;
      const shown = path.join(context.displaySchemasDir ?? context.schemasDir, HISTORY_DIR, frozenSchema.key);
      this.frozen.set(`${frozenSchema.$type}\u0000${frozenSchema.version}`, {
        schema: frozenSchema.schema,
        file: context.relative ? context.relative(shown) : shown,
      });
    }
    for (const current of readCurrentSchemas(context.schemasDir).schemas) {
      const meta =
        isObject(current.schema) && isObject(current.schema["x-statebag"]) ? current.schema["x-statebag"] : {};
      const slots = Array.isArray(meta.slots)
        ? meta.slots.filter((s): s is { path: string[]; family: string } => isObject(s) && Array.isArray(s.path))
        : [];
      this.types.set(current.$type, { current, slots });
      for (const former of [...current.formerNames, ...(context.formerNames?.[current.$type] ?? [])])
        this.renamed.set(former, current.$type);
    }
    for (const migration of context.migrations) {
      const source = context.sources?.get(`${migration.type}\u0000${migration.from}`) ?? migration.source;
      const traced: Migration = {
        ...migration,
        up: (value: unknown, ctx: MigrationContext) => {
          this.trace.push({
            type: ctx.type,
            from: ctx.from,
            toType: ctx.toType,
            to: ctx.to,
            ...(source ? { source } : {}),
          });
          return migration.up(value, ctx);
        },
      };
      this.set.add(traced, "the project's migrations");
    }
  }

  has(type: string): boolean {
    return this.types.has(type) || this.renamed.has(type);
  }

  readonly targets: Parameters<MigrationSet["run"]>[2] = {
    latestVersion: (type: string) => this.types.get(type)?.current.version,
    renamedTo: (former: string) => this.renamed.get(former),
    // As the generated registry does at run time (storedVersions): a failing step on a value its
    // own version's schema rejects is invalid stored data, or the fault of the step before.
    storedProblems: (type: string, version: number, value: unknown) => {
      const frozen = this.frozen.get(`${type}\u0000${version}`);
      if (!frozen) return undefined;
      frozen.validate ??= compileBundled(storedSchema(frozen.schema));
      if ("error" in frozen.validate || frozen.validate.validate(value)) return [];
      return (frozen.validate.validate.errors ?? []).map((e) => ({ ...ajvProblem(e), file: frozen.file }));
    },
  };

  /** Brings a tagged value and the tagged values in its slots to their latest versions. */
  upgrade(value: Record<string, unknown>, pointer: string): Record<string, unknown> {
    const type = typeof value.$type === "string" ? value.$type : undefined;
    if (type === undefined || !this.has(type)) return value; // a type of another package: its own schemas check it
    const upgraded = this.set.run(value, pointer, this.targets, true).value as Record<string, unknown>;
    const info = this.types.get(upgraded.$type as string);
    for (const slot of info?.slots ?? []) this.upgradeAt(upgraded, slot.path, 0, pointer);
    return upgraded;
  }

  private upgradeAt(container: unknown, slotPath: readonly string[], depth: number, pointer: string): void {
    if (depth === slotPath.length) return;
    const segment = slotPath[depth]!;
    const last = depth === slotPath.length - 1;
    const visit = (holder: Record<string, unknown> | unknown[], key: string | number): void => {
      const child = (holder as Record<string, unknown>)[key as string];
      const at = childPointer(pointer, key);
      if (!last) return this.upgradeAt(child, slotPath, depth + 1, at);
      if (isObject(child)) (holder as Record<string, unknown>)[key as string] = this.upgrade(child, at);
    };
    if (segment === "*") {
      if (Array.isArray(container)) container.forEach((_, i) => visit(container, i));
      else if (isObject(container)) for (const key of Object.keys(container)) visit(container, key);
    } else if (isObject(container) && Object.hasOwn(container, segment)) visit(container, segment);
  }

  /** The latest schema of `type`, bundled with the member and family files its slots point at. */
  validator(type: string): ReturnType<typeof compileBundled> | undefined {
    const info = this.types.get(type);
    if (!info) return undefined;
    info.validate ??= compileBundled(bundleSchema(info.current.schema as JsonSchema, info.current.file, this.resolver));
    return info.validate;
  }
}

function stepText(step: MigrationStep): string {
  return step.toType === step.type
    ? `"${step.type}" v${step.from} -> v${step.to}`
    : `"${step.type}" v${step.from} -> "${step.toType}" v${step.to}`;
}

function versionTypes(step: MigrationStep, typeName: (type: string, version: number) => string): string {
  return `defineMigration<${typeName(step.type, step.from)}, ${typeName(step.toType, step.to)}>`;
}

function ajvProblem(error: {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}): { pointer: string; message: string; keyword: string } {
  const { keyword } = error;
  if (keyword === "required") {
    const name = String(error.params.missingProperty);
    return { pointer: childPointer(error.instancePath, name), message: `missing required property "${name}"`, keyword };
  }
  if (keyword === "additionalProperties") {
    const name = String(error.params.additionalProperty);
    return { pointer: childPointer(error.instancePath, name), message: `unexpected property "${name}"`, keyword };
  }
  return { pointer: error.instancePath, message: error.message ?? `fails "${keyword}"`, keyword };
}

/**
 * Loads each document as the runtime would (migrate to the latest version, nested values too;
 * then validate against the latest schema) and reports every one that does not load.
 * Documents are never modified.
 */
export function checkStoredDocuments(
  documents: readonly StoredDocument[],
  context: StoredDataContext,
): StoredDataFailure[] {
  const loader = new Loader(context);
  const command = context.command ?? "npm run gen";
  const failures: StoredDataFailure[] = [];
  const typeName = (type: string, version: number): string => {
    const recorded = context.versionTypeNames?.get(`${type}\u0000${version}`);
    if (recorded !== undefined) return recorded;
    const schema = readTitle(context.schemasDir, type);
    return `${schema ?? type.slice(type.lastIndexOf(".") + 1)}_v${version}`;
  };
  for (const doc of documents) {
    const original = doc.document;
    const where = doc.file !== undefined ? { file: doc.file } : {};
    if (!isObject(original) || typeof original.$type !== "string") {
      failures.push({
        type: "?",
        pointer: "",
        rule: "stored-data",
        message: `${doc.label} is not a tagged object (no string "$type")`,
        fix: "a stored value is a JSON object with its $type (and $version from version 2 on)",
        ...where,
      });
      continue;
    }
    const type = original.$type;
    const declared = original.$version === undefined ? 1 : original.$version;
    if (declared !== doc.fromVersion) {
      failures.push({
        type,
        pointer: "/$version",
        rule: "stored-data",
        message: `${doc.label} says $version ${JSON.stringify(declared)} but is filed as version ${doc.fromVersion}`,
        fix: `a value stored at version ${doc.fromVersion} ${doc.fromVersion === 1 ? "has no $version (or 1)" : `has "$version": ${doc.fromVersion}`}; correct the value or move it to v${declared}.json`,
        ...where,
      });
      continue;
    }
    if (!loader.has(type)) continue; // not a type of this project: its own package checks it
    // A value its own version's schema rejects was never stored by this type's code: say so
    // instead of running the migrations on it and blaming them.
    const own =
      loader.targets.latestVersion(type) === doc.fromVersion
        ? undefined
        : loader.targets.storedProblems?.(type, doc.fromVersion, original)?.[0];
    if (own) {
      failures.push({
        type,
        pointer: own.pointer,
        rule: "stored-data",
        message: `${doc.label} is invalid stored data, not a migration bug: it does not match "${type}" v${doc.fromVersion}${own.file ? ` (${own.file})` : ""} at ${own.pointer || "/"}: ${own.message}`,
        fix: `correct the value: it must be exactly as stored at version ${doc.fromVersion}, matching that version's frozen schema; the migrations need no change`,
        ...where,
      });
      continue;
    }
    loader.trace = [];
    let latest: Record<string, unknown>;
    try {
      latest = loader.upgrade(structuredClone(original), "");
    } catch (error) {
      if (!(error instanceof MigrationError)) throw error;
      if (error.reason === "no-step") continue; // the compatibility check reports the missing migration, with its fix
      if (error.reason === "invalid-data") {
        failures.push({
          type,
          pointer: error.pointer,
          rule: "stored-data",
          message: `${doc.label} holds invalid stored data, not a migration bug: ${firstLine(error.message)}`,
          fix: `correct the value at ${error.pointer || "/"}: a nested value must be exactly as its own type stored it at its version, matching that version's frozen schema; the migrations need no change`,
          ...where,
        });
        continue;
      }
      const failed =
        error.details.toType !== undefined && error.details.to !== undefined
          ? { type: error.type, from: error.from, toType: error.details.toType, to: error.details.to }
          : undefined;
      const step: MigrationStep | undefined = failed
        ? (loader.trace.findLast((s) => s.type === failed.type && s.from === failed.from) ?? failed)
        : undefined;
      const cause = error.details.cause instanceof Error ? error.details.cause.message : error.message;
      failures.push({
        type,
        pointer: error.pointer,
        rule: "stored-data",
        message: error.details.invalidResult
          ? `${doc.label} (stored at version ${doc.fromVersion}) does not load: ${firstLine(error.message)}`
          : `${doc.label} (stored at version ${doc.fromVersion}) does not load: ${step ? `migration ${stepText(step)} failed` : "its migrations failed"}: ${firstLine(cause)}`,
        fix: step
          ? `fix the migration ${stepText(step)}${step.source ? ` (${step.source})` : ""} so it handles this stored value; if no release ever stored a value like it, correct the fixture`
          : `fix the migrations of "${type}" (${error.details.hint ?? error.reason})`,
        ...where,
        ...(step ? { step } : {}),
      });
      continue;
    }
    const finalType = latest.$type as string;
    const compiled = loader.validator(finalType);
    if (!compiled) continue;
    if ("error" in compiled) {
      failures.push({
        type,
        pointer: "",
        rule: "stored-data",
        message: `the current schema of "${finalType}" can not be compiled: ${compiled.error}`,
        fix: `regenerate it (${command})`,
        ...where,
      });
      continue;
    }
    const version = (latest.$version as number | undefined) ?? 1;
    if (compiled.validate(latest)) continue;
    const problem = ajvProblem(compiled.validate.errors![0]!);
    const last = loader.trace.at(-1);
    if (last === undefined) {
      failures.push({
        type,
        pointer: problem.pointer,
        rule: "stored-data",
        message: `${doc.label} does not match the current schema of "${finalType}" v${version} at ${problem.pointer || "/"}: ${problem.message}`,
        fix: `correct the fixture: it must be a value exactly as stored at version ${doc.fromVersion}; if it is right, the current type rejects stored data: revert that change, or bump the version and add a migration`,
        ...where,
      });
      continue;
    }
    failures.push({
      type,
      pointer: problem.pointer,
      rule: "stored-data",
      message:
        `${doc.label} (stored at version ${doc.fromVersion}) migrated through ${loader.trace.map(stepText).join(", ")} ` +
        `does not match "${finalType}" v${version} at ${problem.pointer || "/"}: ${problem.message}`,
      fix:
        `make the migration ${stepText(last)}${last.source ? ` (${last.source})` : ""} return a valid "${last.toType}" v${last.to} for this value` +
        `${problem.keyword === "required" ? ` (set ${problem.pointer})` : ""}; declare it as ${versionTypes(last, typeName)}({ ... }) ` +
        `(types from src/generated/versions.ts) and the compiler checks \`up\` for you`,
      ...where,
      step: last,
    });
  }
  return failures;
}

function readTitle(schemasDir: string, type: string): string | undefined {
  for (const current of readCurrentSchemas(schemasDir).schemas)
    if (current.$type === type && isObject(current.schema) && typeof current.schema.title === "string")
      return current.schema.title;
  return undefined;
}

function firstLine(text: string): string {
  return text.split("\n")[0]!;
}

// ---------------------------------------------------------------------------------------------
// The project's migrations

/** A binding holding migrations, as the generator found it (`export const x = defineMigration(...)`). */
export interface MigrationBinding {
  /** Absolute path of the declaring module. */
  file: string;
  exportName: string;
}

export interface LoadedMigrations {
  migrations: Migration[];
  failures: StoredDataFailure[];
}

function isMigration(value: unknown): value is Migration {
  return (
    isObject(value) &&
    typeof value.type === "string" &&
    typeof value.from === "number" &&
    typeof value.toType === "string" &&
    typeof value.to === "number" &&
    typeof value.up === "function"
  );
}

/** Imports a module of the project: TypeScript through tsx's scoped loader, JavaScript as it is. */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (/\.[cm]?tsx?$/.test(file)) {
    const { tsImport } = await import("tsx/esm/api");
    return (await tsImport(url, { parentURL: import.meta.url })) as Record<string, unknown>;
  }
  return (await import(url)) as Record<string, unknown>;
}

/** Imports every module that declares migrations and collects them, each failure named with its file. */
export async function loadDeclaredMigrations(
  bindings: readonly MigrationBinding[],
  options: { cwd: string; command?: string },
): Promise<LoadedMigrations> {
  const byFile = new Map<string, string[]>();
  for (const binding of bindings) byFile.set(binding.file, [...(byFile.get(binding.file) ?? []), binding.exportName]);
  const migrations: Migration[] = [];
  const failures: StoredDataFailure[] = [];
  const rel = (file: string) => path.relative(options.cwd, file).split(path.sep).join("/");
  for (const [file, names] of byFile) {
    let mod: Record<string, unknown>;
    try {
      mod = await importModule(file);
    } catch (error) {
      failures.push({
        type: "*",
        pointer: "",
        rule: "migrations-unloadable",
        message: `${rel(file)} declares migrations but can not be loaded to run them on the golden fixtures: ${firstLine(error instanceof Error ? error.message : String(error))}`,
        fix: `make ${rel(file)} load on its own (\`npx tsx ${rel(file)}\` shows the error): a module declaring migrations must not need a running service or missing generated files at import time; run ${options.command ?? "npm run gen"} first if it imports src/generated/`,
        file: rel(file),
      });
      continue;
    }
    for (const name of names) {
      const value = mod[name];
      const list = Array.isArray(value) ? value : [value];
      const bad = list.filter((m) => !isMigration(m));
      if (bad.length > 0) {
        failures.push({
          type: "*",
          pointer: "",
          rule: "migrations-unloadable",
          message: `${rel(file)}: export "${name}" does not hold ${Array.isArray(value) ? "only " : ""}defineMigration(...) results at run time`,
          fix: `export the value defineMigration(...) returns (or an array of them) as "${name}"`,
          file: rel(file),
        });
      }
      migrations.push(...list.filter(isMigration));
    }
  }
  return { migrations, failures };
}

// ---------------------------------------------------------------------------------------------
// Golden fixtures

export interface StoredDataOptions extends Omit<StoredDataContext, "migrations"> {
  /** Golden fixtures: `<fixturesDir>/<$type>/v<N>*.json`. */
  fixturesDir: string;
  /** Where the project's migrations are (the generator's scan). */
  bindings: readonly MigrationBinding[];
  /** Paths in messages are relative to this. */
  cwd: string;
  /** Fixture files (absolute) not to load: the compatibility check already reported them as invalid. */
  skip?: ReadonlySet<string>;
  /**
   * Documents drawn from each older frozen version's schema, also run through the migrations
   * (default: 40 per version, seed 1, at most 3 s in all). `count: 0` turns it off.
   */
  sampling?: { count?: number; seed?: number; timeBudgetMs?: number };
}

export interface StoredDataReport {
  failures: StoredDataFailure[];
  /** Fixture files loaded (relative to `cwd`). */
  loaded: string[];
  /** Fixture files still holding the scaffold's placeholder (relative to `cwd`). */
  unedited: string[];
}

/**
 * Every golden fixture of every stored version of every current type (and of its former names),
 * loaded through the project's migrations and validated at the latest version.
 */
export async function checkStoredData(options: StoredDataOptions): Promise<StoredDataReport> {
  const rel = (file: string) => path.relative(options.cwd, file).split(path.sep).join("/");
  const current = readCurrentSchemas(options.schemasDir).schemas;
  const frozen = readFrozenSchemas(options.schemasDir);
  const formerOf = new Map<string, string>();
  for (const currentSchema of current)
    for (const formerName of [...currentSchema.formerNames, ...(options.formerNames?.[currentSchema.$type] ?? [])])
      formerOf.set(formerName, currentSchema.$type);
  const versions = new Map<string, Set<number>>();
  const add = (type: string, version: number) => versions.set(type, (versions.get(type) ?? new Set()).add(version));
  for (const currentSchema of current) add(currentSchema.$type, currentSchema.version);
  for (const frozenSchema of frozen)
    if (current.some((c) => c.$type === frozenSchema.$type) || formerOf.has(frozenSchema.$type))
      add(frozenSchema.$type, frozenSchema.version);

  const documents: StoredDocument[] = [];
  const failures: StoredDataFailure[] = [];
  const unedited: string[] = [];
  // What --scaffold-fixtures writes for a version, from its frozen schema (or the current one).
  const resolver = fileResolver();
  const placeholders = (type: string, version: number): string[] => {
    const sources = [
      ...frozen.filter((f) => f.$type === type && f.version === version && f.schema !== undefined),
      ...current.filter((c) => c.$type === type && c.version === version),
    ];
    return sources.map((t) =>
      canonicalJson(
        scaffoldStoredValue(
          options.schemasDir,
          { version, schema: t.schema as JsonSchema, file: t.file },
          { ...GEN_SCAFFOLD_OPTIONS, resolveExternalRef: resolver },
        ),
      ),
    );
  };
  const isPlaceholder = (value: unknown, type: string, version: number) =>
    placeholders(type, version).includes(canonicalJson(value));
  for (const [type, set] of [...versions].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (const version of [...set].sort((a, b) => a - b)) {
      for (const file of fixtureFiles(path.join(options.fixturesDir, type), version)) {
        let value: unknown;
        try {
          value = JSON.parse(fs.readFileSync(file, "utf8"));
        } catch {
          continue; // the compatibility check reports fixtures that are not JSON
        }
        if (isObject(value) && Object.hasOwn(value, UNEDITED_KEY)) {
          unedited.push(rel(file));
          failures.push({
            type,
            pointer: "",
            rule: "unedited-fixture",
            message: `golden fixture ${rel(file)} is still the placeholder --scaffold-fixtures wrote, so it proves nothing about stored data`,
            fix: `replace it with a realistic value of "${type}" exactly as your code stored it at version ${version} (real text, non-empty lists, the optional fields you set), and delete its "${UNEDITED_KEY}" key`,
            file: rel(file),
          });
          continue;
        }
        if (isPlaceholder(value, type, version)) {
          unedited.push(rel(file));
          failures.push({
            type,
            pointer: "",
            rule: "unedited-fixture",
            message: `golden fixture ${rel(file)} is still the placeholder --scaffold-fixtures wrote (its "${UNEDITED_KEY}" key is gone, its value unchanged), so it proves nothing about stored data`,
            fix: `replace it with a realistic value of "${type}" exactly as your code stored it at version ${version} (real text, non-empty lists, the optional fields you set)`,
            file: rel(file),
          });
          continue;
        }
        if (options.skip?.has(file)) continue;
        documents.push({
          label: `golden fixture ${rel(file)}`,
          document: value,
          fromVersion: version,
          file: rel(file),
        });
      }
    }
  }
  const loaded = await loadDeclaredMigrations(options.bindings, { cwd: options.cwd, command: options.command });
  failures.push(...loaded.failures);
  const context = { relative: rel, ...options, migrations: loaded.migrations };
  const fixtureFailures = checkStoredDocuments(documents, context);
  failures.push(...fixtureFailures);
  const samples = sampledOlderVersions(frozen, current, formerOf, options, rel);
  failures.push(...newSteps(checkStoredDocuments(samples, context), fixtureFailures));
  return { failures, loaded: documents.map((d) => d.file!), unedited };
}

/**
 * One failure per migration step that no fixture already showed broken: a step that fails on a
 * fixture needs no sampled example, and one sampled example per step is enough to fix it.
 */
function newSteps(sampled: readonly StoredDataFailure[], known: readonly StoredDataFailure[]): StoredDataFailure[] {
  const key = (f: StoredDataFailure) => `${f.type}\u0000${f.step ? `${f.step.from}>${f.step.to}` : ""}`;
  const seen = new Set(known.map(key));
  const out: StoredDataFailure[] = [];
  for (const fixture of sampled) {
    if (seen.has(key(fixture))) continue;
    seen.add(key(fixture));
    out.push(fixture);
  }
  return out;
}

/**
 * Documents drawn from the schema of every frozen version older than its type's current one (and
 * of former names): what fixtures do not show (optional fields, empty lists, odd values) still has
 * to migrate. Seeded, so a failure names a document that reproduces; bounded in count and time.
 */
function sampledOlderVersions(
  frozen: readonly FrozenSchema[],
  current: readonly CurrentSchema[],
  formerOf: ReadonlyMap<string, string>,
  options: StoredDataOptions,
  rel: (file: string) => string,
): StoredDocument[] {
  const count = options.sampling?.count ?? 40;
  const seed = options.sampling?.seed ?? 1;
  const deadline = Date.now() + (options.sampling?.timeBudgetMs ?? 3000);
  const out: StoredDocument[] = [];
  if (count <= 0) return out;
  const latest = new Map(current.map((c) => [c.$type, c.version]));
  const order = [...frozen].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const fixture of order) {
    const now = latest.get(fixture.$type);
    const older = now !== undefined ? fixture.version < now : formerOf.has(fixture.$type);
    if (!older || fixture.schema === undefined) continue;
    const left = deadline - Date.now();
    if (left <= 0) break;
    const resolver = fileResolver();
    const drawn = sampleDocuments(fixture.schema, {
      seed,
      count,
      timeBudgetMs: Math.min(left, 1000),
      base: fixture.file,
      resolveExternalRef: resolver,
    });
    // A family slot is opaque in its parent's schema, so the sampler fills it with any value, which
    // no stored session could hold: empty the slots and keep the documents the schema still accepts.
    const slots = slotPaths(fixture.schema);
    const shown = rel(path.join(options.displaySchemasDir ?? options.schemasDir, HISTORY_DIR, fixture.key));
    // Every stored value names its type (and, from version 2, its version): a draw that left them
    // out is not something a store could hold.
    const validate = compileBundled(bundleSchema(fixture.schema, fixture.file, resolver));
    drawn.documents.forEach((document, i) => {
      if (!isObject(document)) return;
      for (const slot of slots) clearSlot(document, slot);
      document.$type = fixture.$type;
      if (fixture.version > 1) document.$version = fixture.version;
      if ("error" in validate || !validate.validate(document)) return;
      out.push({
        label: `document #${i + 1} drawn from ${shown} (sampling seed ${seed})`,
        document,
        fromVersion: fixture.version,
        file: shown,
      });
    });
  }
  return out;
}

/** The family slots a generated schema declares (`x-statebag.slots[].path`). */
function slotPaths(schema: JsonSchema): string[][] {
  const meta = isObject(schema) && isObject(schema["x-statebag"]) ? schema["x-statebag"] : {};
  const slots = Array.isArray(meta.slots) ? meta.slots : [];
  return slots.filter((s): s is { path: string[] } => isObject(s) && Array.isArray(s.path)).map((s) => s.path);
}

/** Removes what sits at a slot path: array items for a trailing `*`, else the property. */
function clearSlot(value: unknown, slot: readonly string[]): void {
  if (slot.length === 0 || (!isObject(value) && !Array.isArray(value))) return;
  const [head, ...rest] = slot;
  if (head === "*") {
    if (!Array.isArray(value)) return;
    if (rest.length === 0) value.length = 0;
    else for (const item of value) clearSlot(item, rest);
    return;
  }
  if (!isObject(value) || !Object.hasOwn(value, head)) return;
  if (rest.length === 0) delete value[head];
  else clearSlot(value[head], rest);
}
