/**
 * Where a run reads and writes, resolved once from `GenerateOptions`: this repository's default
 * layout or a user project's (`project`), the imports generated code uses, and the paths every
 * later step names files by. A bad option is a usage error (exit 2), reported before any work.
 */
import fs from "node:fs";
import path from "node:path";
import type { ModuleOptions } from "./emit.js";
import type { GenError } from "./errors.js";

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
   * Default: `"statebag"` with `project`; this repo's `src/runtime/*.js` otherwise. The fused check
   * imports its typed runtime from `"statebag/internal/toolchain"` when this is `"statebag"`, else
   * from this module too (which then re-exports that entry's fused-runtime names).
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

export interface Config {
  cwd: string;
  root: string;
  tsconfig?: string;
  /** Source roots walked for the cache key (and scanned in default mode). */
  walkRoots: string[];
  outDir: string;
  schemasDir: string;
  fixturesDir: string;
  module: ModuleOptions & {
    formatsImport: string;
    stateImport: string;
    taggedImport: string;
    /** Where the generated fused check imports its typed runtime (src/runtime/checks/fused-runtime.ts). */
    fusedImport: string;
  };
  /** How to run the generator here, for fix texts. */
  command: string;
  check: boolean;
  cache: boolean;
  compat: boolean;
  scaffoldFixtures: boolean;
}

/** A usage error: the options cannot describe a run (the CLI exits 2). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }

  get error(): GenError {
    return { code: "usage", message: this.message, ...(this.hint ? { hint: this.hint } : {}) };
  }
}

/** The run's configuration, or the usage error that stops it. */
export function resolveConfig(options: GenerateOptions): Config | UsageError {
  try {
    return layout(options);
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
}

/** Resolves the options against cwd and the project; throws `UsageError`. */
function layout(options: GenerateOptions): Config {
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
  const fixturesDir =
    options.fixtures !== undefined ? path.resolve(cwd, options.fixtures) : path.join(root, "test", "fixtures");
  if (options.scaffoldFixtures && options.check)
    throw new UsageError("--scaffold-fixtures writes files; it cannot be combined with --check");
  if (!tsconfig && options.runtimeImport === undefined) refuseOutsideStatebag(root);
  const internal = (file: string) =>
    options.runtimeImport ?? (tsconfig ? "statebag" : relImport(outDir, path.join(root, "src/runtime", file)));
  const typesImport = internal("registry/registry-types.js");
  const formatsImport = internal("registry/formats.js");
  const stateImport = internal("core/state-bag.js");
  const taggedImport = internal("core/tagged.js");
  const fusedImport =
    options.runtimeImport === "statebag" || (options.runtimeImport === undefined && tsconfig)
      ? "statebag/internal/toolchain"
      : internal("checks/fused-runtime.js");
  const command =
    options.command ?? (tsconfig ? `npx statebag gen --project ${posix(path.relative(cwd, tsconfig))}` : "npm run gen");
  const regenerate = options.regenerateCommand ?? command;
  return {
    cwd,
    root,
    tsconfig,
    walkRoots: tsconfig ? [root] : [path.join(root, "src")],
    outDir,
    schemasDir,
    fixturesDir,
    module: { typesImport, formatsImport, stateImport, taggedImport, fusedImport, regenerate },
    command,
    check: options.check ?? false,
    cache: options.cache ?? true,
    compat: options.compat ?? false,
    scaffoldFixtures: options.scaffoldFixtures ?? false,
  };
}

/** The runtime files the default (this repository's) layout imports from generated code. */
const INTERNAL_RUNTIME = [
  "src/runtime/registry/registry-types.ts",
  "src/runtime/registry/formats.ts",
  "src/runtime/core/tagged.ts",
];

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

/** A path with forward slashes, as every report and generated file spells it. */
function posix(p: string): string {
  return p.split(path.sep).join("/");
}

/** The relative import specifier of `file` from a module in `fromDir`. */
export function relImport(fromDir: string, file: string): string {
  const relativePath = posix(path.relative(fromDir, file));
  return relativePath.startsWith(".") ? relativePath : `./${relativePath}`;
}

/** `file` relative to the project root, forward slashes: how outputs and the cache name files. */
export function fromRoot(cfg: Config, file: string): string {
  return posix(path.relative(cfg.root, file));
}

/** `file` (absolute, or relative to the project root) relative to where the generator runs: how results and messages name files. */
export function fromCwd(cfg: Config, file: string): string {
  return posix(path.relative(cfg.cwd, path.resolve(cfg.root, file)));
}

/** The output key of a generated module (`registry.ts`, ...). */
export function moduleOutput(cfg: Config, name: string): string {
  return `${fromRoot(cfg, cfg.outDir)}/${name}`;
}

/** The output key of a schema file, from its path in the schemas directory. */
export function schemaOutput(cfg: Config, file: string): string {
  const dir = fromRoot(cfg, cfg.schemasDir);
  return dir ? `${dir}/${file}` : file;
}
