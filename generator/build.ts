/**
 * The outputs for the current sources: the cached ones when no input changed, else built by the
 * phases scan -> migrations -> schemas and slots -> validators -> generated files. Heavy modules
 * (ts-morph, TypeScript, typescript-json-schema, ajv) load only on a cache miss.
 */
import path from "node:path";
import { cacheKey, dependencyHashes, readCache, readSources, type CacheEntry, type SourceFile } from "./cache.js";
import { fromCwd, fromRoot, moduleOutput, relImport, schemaOutput, type Config } from "./config.js";
import {
  descriptorsModule,
  documentSchemaFile,
  familySchemaFile,
  historyFile,
  registryModule,
  validatorsModule,
  type EmittedType,
} from "./emit.js";
import { compareStrings, sortErrors, type GenError } from "./errors.js";
import type { MigrationExport, MigrationSummary } from "./migrations.js";
import type { MarkedType } from "./scan.js";
import { familyFile, memberFile } from "./schema-files.js";
import type { TypeSummary } from "./summary.js";

/**
 * The cache entry for this run's inputs (`cacheHit` when it was cached), or the errors of building
 * it, sorted, with paths relative to where the generator runs.
 */
export async function cachedOrBuilt(
  cfg: Config,
): Promise<{ entry: CacheEntry; cacheHit: boolean; errors?: undefined } | { errors: GenError[] }> {
  const sources = readSources(cfg.walkRoots, [cfg.outDir, cfg.schemasDir]);
  const key = cacheKey(sources, cfg.root, {
    tsconfig: cfg.tsconfig && fromRoot(cfg, cfg.tsconfig),
    out: fromRoot(cfg, cfg.outDir),
    schemas: fromRoot(cfg, cfg.schemasDir),
    module: cfg.module,
  });
  const cached = cfg.cache ? readCache(cfg.root, key) : undefined;
  if (cached) return { entry: cached, cacheHit: true };
  const run = await build(cfg, sources);
  if (run.errors.length > 0)
    return { errors: sortErrors(run.errors).map((e) => (e.file ? { ...e, file: fromCwd(cfg, e.file) } : e)) };
  const warnings = sortErrors(run.warnings).map((e) => (e.file ? { ...e, file: fromCwd(cfg, e.file) } : e));
  return { entry: { key, ...run.entry, ...(warnings.length > 0 ? { warnings } : {}) }, cacheHit: false };
}

interface Built {
  emitted: (EmittedType & { at: { file: string; line: number; column: number } })[];
  /** Families some document schema references (their family file must exist). */
  referenced: Set<string>;
  /** Families with tagged members declared outside this project (a dependency's .d.ts). */
  openFamilies: Set<string>;
  /** Every non-library file the compiler read. */
  programFiles: string[];
  errors: GenError[];
  /** Findings that do not stop the run (a format the runtime does not know). */
  warnings: GenError[];
}

const FAILED = { dependencies: [], outputs: {}, createOnly: [], types: [], migrations: [] };

async function build(
  cfg: Config,
  sources: readonly SourceFile[],
): Promise<{ errors: GenError[]; warnings: GenError[]; entry: Omit<CacheEntry, "key"> }> {
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
    types: new Map(types.map((t) => [t.$type, { version: t.version, source: `${fromRoot(cfg, t.file)}:${t.line}` }])),
    relative: (file) => fromRoot(cfg, file),
  });
  const built = await buildTypes(cfg, types, declared.formerNames);
  const errors = [...scanned.errors, ...declared.errors, ...built.errors];
  const warnings = built.warnings;
  if (errors.length > 0) return { errors, warnings, entry: FAILED };

  const { buildValidators } = await import("./validators.js");
  const { runtimeSchema } = await import("./emit.js");
  const validators = await buildValidators(
    built.emitted.map((t) => ({ exportName: t.validatorName, schema: runtimeSchema(t) })),
    cfg.module.formatsImport,
  );
  for (const failure of validators.failures) {
    const emittedValidator = built.emitted.find((e) => e.validatorName === failure.exportName)!;
    errors.push({
      code: "schema-failed",
      ...emittedValidator.at,
      message: `ajv rejected the schema of ${emittedValidator.name}: ${failure.message}`,
      hint: "simplify the type; if it looks valid, report it with the type's source",
    });
  }
  if (errors.length > 0) return { errors, warnings, entry: FAILED };

  const walked = new Set(sources.map((s) => s.path));
  const dependencies = dependencyHashes(
    [...new Set([...built.programFiles, ...scanned.files])].filter((f) => !walked.has(f)),
  );
  const { buildFusedCheck } = await import("./fused-check.js");
  const fused = buildFusedCheck(
    built.emitted.map((t) => ({
      $type: t.$type,
      family: t.family,
      version: t.version,
      validatorName: t.validatorName,
      schema: runtimeSchema(t),
      slots: t.slots,
    })),
    cfg.module.fusedImport,
    cfg.module.regenerate,
  );
  return {
    errors,
    warnings,
    entry: {
      dependencies,
      ...assembleOutputs(cfg, built, validators.code, scanned.migrations, declared.summaries, fused.code),
    },
  };
}

/** Schemas, slots and validator names for every marked type (one compiler program for all). */
async function buildTypes(
  cfg: Config,
  types: readonly MarkedType[],
  formerNames: ReadonlyMap<string, string[]>,
): Promise<Built> {
  const built: Built = {
    emitted: [],
    referenced: new Set(),
    openFamilies: new Set(),
    programFiles: [],
    errors: [],
    warnings: [],
  };
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
  for (const type of local) {
    const at = { file: fromRoot(cfg, type.file), line: type.line, column: type.column };
    const schemas = buildTypeSchemas(graph, graph.roots.get(type.$type)!, { members });
    for (const family of schemas.families) built.referenced.add(family);
    for (const error of schemas.errors)
      built.errors.push({ ...error, ...at, message: `${type.name}: ${error.message}` });
    for (const warning of schemas.warnings)
      built.warnings.push({ ...warning, ...at, message: `${type.name}: ${warning.message}` });
    let validatorName = `validate${type.name}`;
    for (let n = 2; usedNames.has(validatorName); n++) validatorName = `validate${type.name}_${n}`;
    usedNames.add(validatorName);
    built.emitted.push({
      name: type.name,
      family: type.family,
      $type: type.$type,
      version: type.version,
      source: `${at.file}:${type.line}`,
      at,
      runtime: schemas.runtime,
      document: schemas.document,
      slots: schemas.slots,
      validatorName,
      ...(formerNames.has(type.$type) ? { formerNames: formerNames.get(type.$type) } : {}),
    });
  }
  return built;
}

/** How a generated module imports a source file (`.ts` -> `.js`). */
function generatedImport(cfg: Config, file: string): string {
  return relImport(cfg.outDir, file).replace(/\.([mc]?)tsx?$/, ".$1js");
}

/** Every generated file, by path relative to the project root. */
function assembleOutputs(
  cfg: Config,
  built: Built,
  validatorsCode: string,
  migrationExports: readonly MigrationExport[],
  migrations: MigrationSummary[],
  fusedCode: string,
): Omit<CacheEntry, "key" | "dependencies"> {
  const outputs: Record<string, string> = {};
  const createOnly: string[] = [];
  const emittedMigrations = migrationExports.map((ex) => ({
    exportName: ex.exportName,
    kind: ex.kind,
    importPath: generatedImport(cfg, ex.file),
    steps: ex.migrations.map(
      (m) =>
        `${m.toType === m.type ? `"${m.type}" v${m.from} -> v${m.to}` : `"${m.type}" v${m.from} -> "${m.toType}" v${m.to}`} (${fromRoot(cfg, ex.file)}:${m.line})`,
    ),
  }));
  outputs[moduleOutput(cfg, "registry.ts")] = registryModule(built.emitted, cfg.module, emittedMigrations);
  outputs[moduleOutput(cfg, "validators.ts")] = validatorsModule(validatorsCode, cfg.module);
  outputs[moduleOutput(cfg, "fused-check.ts")] = fusedCode;
  const descriptors = built.emitted
    .filter((t) => t.family === "ProviderState")
    .map((t) => ({
      typeName: t.name,
      $type: t.$type,
      version: t.version,
      source: t.source,
      importPath: generatedImport(cfg, path.join(cfg.root, t.at.file)),
    }));
  outputs[moduleOutput(cfg, "descriptors.ts")] = descriptorsModule(descriptors, cfg.module);
  const byFamily = new Map<string, EmittedType[]>([...built.referenced].map((f) => [f, []]));
  for (const emittedValidator of built.emitted) {
    const document = documentSchemaFile(emittedValidator);
    outputs[schemaOutput(cfg, memberFile(emittedValidator.family, emittedValidator.$type))] = document;
    // Frozen copy of this version's schema: written once (see emit.ts).
    const history = schemaOutput(
      cfg,
      historyFile(emittedValidator.family, emittedValidator.$type, emittedValidator.version),
    );
    outputs[history] = document;
    createOnly.push(history);
    byFamily.set(emittedValidator.family, [...(byFamily.get(emittedValidator.family) ?? []), emittedValidator]);
  }
  for (const [family, list] of byFamily)
    outputs[schemaOutput(cfg, familyFile(family))] = familySchemaFile(family, list, built.openFamilies.has(family));

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
