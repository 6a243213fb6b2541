/**
 * `--registry <module>`: the types of your own project, for commands that read sessions.
 *
 * Without it the CLI knows statebag's own types only; values of your types are then kept and
 * reported as "unknown type" (an error with --strict). The module may export:
 *   - `registry`: a `TypeRegistry` (used as it is: compose `defaultRegistry()` into it yourself), or
 *   - `generatedTypes` and `generatedMigrations` (what `statebag gen --project` writes to
 *     src/generated/registry.ts; a plain `migrations` array is accepted too);
 * the latter are composed with statebag's own types.
 */
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { defaultRegistry, TypeRegistry } from "../runtime/persistence/registry.js";
import type { Migration } from "../runtime/persistence/migrations.js";
import type { TypeDefinition } from "../runtime/persistence/registry-types.js";
import { inputPath } from "./context.js";
import { CliError, EXIT, type CliEnvironment } from "./io.js";

let tsxRegistered = false;

/** Lets `import()` load TypeScript when the CLI runs from compiled JavaScript. */
async function ensureTypeScriptLoader(): Promise<void> {
  if (tsxRegistered) return;
  const { register } = await import("tsx/esm/api");
  register();
  tsxRegistered = true;
}

export async function loadRegistry(module: string | undefined, environment: CliEnvironment): Promise<TypeRegistry> {
  if (module === undefined) return defaultRegistry();
  const file = inputPath(module, environment);
  const where = file;
  if (!existsSync(file)) {
    throw new CliError(EXIT.usage, `--registry ${module}: no such file`, {
      where,
      fix: "pass the module `statebag gen --project` wrote (e.g. --registry src/generated/registry.ts), or one that exports `registry`",
    });
  }
  if (/\.[cm]?tsx?$/.test(file)) await ensureTypeScriptLoader();
  let mod: { registry?: unknown; generatedTypes?: unknown; generatedMigrations?: unknown; migrations?: unknown; default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as typeof mod;
  } catch (error) {
    throw new CliError(EXIT.usage, `--registry ${module}: the module cannot be loaded: ${error instanceof Error ? error.message : String(error)}`, {
      where,
      fix: "check that it compiles and that its imports resolve from where it is",
      cause: error,
    });
  }
  const candidate = mod.registry ?? mod.default;
  if (candidate instanceof TypeRegistry) return candidate;
  if (candidate !== undefined && typeof candidate === "object" && typeof (candidate as { types?: unknown }).types === "function") {
    // A TypeRegistry from another copy of statebag (e.g. the project's own node_modules).
    const foreign = candidate as { types(): TypeDefinition[]; migrations?: () => Migration[] };
    return TypeRegistry.compose({ source: module, types: foreign.types(), migrations: foreign.migrations?.() ?? [] });
  }
  if (Array.isArray(mod.generatedTypes)) {
    const declared = mod.generatedMigrations ?? mod.migrations;
    const migrations = Array.isArray(declared) ? (declared as Migration[]) : [];
    return TypeRegistry.compose(defaultRegistry(), { source: module, types: mod.generatedTypes as TypeDefinition[], migrations });
  }
  throw new CliError(EXIT.usage, `--registry ${module}: the module exports neither \`registry\` nor \`generatedTypes\``, {
    where,
    fix: "export a TypeRegistry as `registry`, or point at the generated registry module (it exports `generatedTypes`)",
  });
}
