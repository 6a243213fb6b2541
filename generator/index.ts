/**
 * Programmatic API of `npm run gen` (and statebag-kit's entry): `generate()`, the run as a
 * sequence of steps. Nothing is written until everything is computed and checked; errors from
 * every phase are collected and returned together, and nothing is written when there is any.
 * Each step lives in its own module: config, build (with the cache), versions-output, output,
 * compat-run, report.
 */
import { writeCache, type CacheEntry } from "./cache.js";
import { cachedOrBuilt } from "./build.js";
import { startCompat, type CompatResult, type CompatRun, type RunChanges } from "./compat-run.js";
import { fromCwd, resolveConfig, UsageError, type Config, type GenerateOptions } from "./config.js";
import { isCurrent, planOutputs, writeOutputs, type OutputPlan } from "./output.js";
import { emptyResult, type GenerateResult } from "./report.js";
import { versionTypesOutput } from "./versions-output.js";

export async function generate(options: GenerateOptions = {}): Promise<GenerateResult> {
  const cfg = resolveConfig(options);
  if (cfg instanceof UsageError) return emptyResult(2, [cfg.error]);
  const built = await cachedOrBuilt(cfg);
  if (built.errors) return emptyResult(1, built.errors);
  const { entry, cacheHit } = built;
  // The version types depend on the frozen history too, which is not a cache input.
  const versionTypes = await versionTypesOutput(cfg, entry);
  const outputs = { ...entry.outputs, ...versionTypes.outputs };
  const plan = planOutputs(cfg, entry, outputs);
  // Everything is computed and checked before anything is written.
  const compat = cfg.compat ? await startCompat(cfg, entry, plan, outputs) : undefined;
  try {
    const changes =
      cfg.check || compat?.blocked
        ? noChanges()
        : await applyChanges(cfg, { entry, cacheHit, plan, compat, names: versionTypes.names });
    const compatResult = compat?.blocked ?? (await compat?.finish(changes, versionTypes));
    return runResult(cfg, { entry, cacheHit, plan, changes, compat: compatResult });
  } finally {
    compat?.dispose();
  }
}

type Changes = RunChanges & { written: string[]; deleted: string[]; recorded: string[]; scaffolded: string[] };

function noChanges(): Changes {
  return { written: [], deleted: [], recorded: [], named: [], scaffolded: [] };
}

/** Writes the outputs, the cache and the schema history, then (`scaffoldFixtures`) missing fixtures. */
async function applyChanges(
  cfg: Config,
  run: {
    entry: CacheEntry;
    cacheHit: boolean;
    plan: OutputPlan;
    compat: CompatRun | undefined;
    names: Record<string, string>;
  },
): Promise<Changes> {
  const { written, deleted } = writeOutputs(cfg, run.plan);
  if (!run.cacheHit && cfg.cache) writeCache(cfg.root, run.entry);
  run.compat?.commit();
  // The frozen lock records the hash of each frozen schema (an edit is then caught); new
  // frozen files are recorded where they are written.
  const { recordFrozen, recordNames } = await import("./compat/history.js");
  const recorded = recordFrozen(cfg.schemasDir);
  const named = recordNames(cfg.schemasDir, run.names);
  let scaffolded: string[] = [];
  if (cfg.scaffoldFixtures) {
    const { GEN_SCAFFOLD_OPTIONS, writeScaffoldFixtures } = await import("./compat/scaffold.js");
    scaffolded = writeScaffoldFixtures({
      schemasDir: cfg.schemasDir,
      fixturesDir: cfg.fixturesDir,
      history: true,
      ...GEN_SCAFFOLD_OPTIONS,
    }).map((f) => fromCwd(cfg, f));
  }
  return { written, deleted, recorded, named, scaffolded };
}

/** Exit 1 on stale output with `check` or on any compatibility finding. */
function runResult(
  cfg: Config,
  run: { entry: CacheEntry; cacheHit: boolean; plan: OutputPlan; changes: Changes; compat: CompatResult | undefined },
): GenerateResult {
  const { plan, changes, compat } = run;
  const exitCode = (cfg.check && !isCurrent(plan)) || (compat?.failures.length ?? 0) > 0 ? 1 : 0;
  return {
    ok: exitCode === 0,
    exitCode,
    errors: [],
    warnings: run.entry.warnings ?? [],
    files: plan.files,
    types: run.entry.types,
    stale: plan.stale,
    missing: plan.missing,
    extra: plan.extra,
    written: changes.written,
    deleted: changes.deleted,
    recorded: [...new Set([...changes.recorded, ...(compat?.recorded ?? [])])],
    cacheHit: run.cacheHit,
    migrations: run.entry.migrations ?? [],
    compat,
    scaffolded: changes.scaffolded,
  };
}
