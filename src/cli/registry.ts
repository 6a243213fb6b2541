/**
 * The types a command that reads sessions knows: statebag's own, plus the project's from its
 * registry module (`--registry <module>`, else the project config's `"registry"`).
 *
 * Without one the CLI knows statebag's own types only; values of the project's types are then kept
 * and reported as "not checked" (see `unknownTypesFix`). The module may export:
 *   - `registry`: a `TypeRegistry` (used as it is: compose `defaultRegistry()` into it yourself), or
 *   - `generatedTypes` and `generatedMigrations` (what `statebag gen` writes to
 *     src/generated/registry.ts; a plain `migrations` array is accepted too);
 * the latter are composed with statebag's own types.
 *
 * Every registry a command gets also holds the types statebag itself writes outside its generated
 * registry (`cliBuiltinTypes`: the chat index document statebag/http 0.1.0 kept per owner), so a
 * document statebag wrote is always checked, never reported as a type the CLI does not know.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { registerLangGraphTypes } from "../runtime/langgraph/registry.js";
import { registerOpenAIAgentsTypes } from "../runtime/openai-agents/registry.js";
import { TypeRegistry } from "../runtime/registry/registry.js";
import { defaultRegistry } from "../runtime/validation/default-registry.js";
import type { Migration } from "../runtime/registry/migrations.js";
import type { TypeDefinition } from "../runtime/registry/registry-types.js";
import { inputPath, type CommandContext } from "./context.js";
import { CliError, EXIT, type CliEnvironment } from "./io.js";

/** The registry a command uses, and where it came from (for messages about types it does not know). */
export interface CliRegistry {
  registry: TypeRegistry;
  /** "flag": --registry; "config": the project config; "none": statebag's own types only. */
  origin: "flag" | "config" | "none";
  /** The module loaded, as the user wrote it (flag) or relative to the project (config). */
  module?: string;
  /** The config file that named the module (origin "config"). */
  configFile?: string;
}

let tsxRegistered = false;

/**
 * Lets `import()` load TypeScript: the project's own tsx first (it matches the project), else the
 * one statebag was installed with. Without either, says what to do.
 */
async function ensureTypeScriptLoader(projectDir: string, module: string, where: string): Promise<void> {
  if (tsxRegistered) return;
  let api: { register(): unknown } | undefined;
  const candidates: (() => Promise<{ register(): unknown }>)[] = [
    async () =>
      (await import(pathToFileURL(createRequire(join(projectDir, "package.json")).resolve("tsx/esm/api")).href)) as {
        register(): unknown;
      },
    async () => (await import("tsx/esm/api")) as { register(): unknown },
  ];
  for (const load of candidates) {
    try {
      api = await load();
      break;
    } catch {
      // try the next one
    }
  }
  if (api === undefined) {
    throw new CliError(
      EXIT.usage,
      `the registry module ${module} is TypeScript, and no TypeScript loader is installed to load it`,
      {
        where,
        fix: "install one in the project (npm install --save-dev tsx), or point the registry at the compiled JavaScript (e.g. dist/generated/registry.js)",
      },
    );
  }
  api.register();
  tsxRegistered = true;
}

/**
 * The `$type` statebag/http 0.1.0 gave the chat index document it kept per owner (state bag key
 * `statebag.http.chats`): `{ chats: [{ id, title, updatedAt }] }`. Later versions no longer write
 * it, but stores keep what 0.1.0 wrote.
 */
export const CHAT_INDEX_TYPE = "statebag.http.ChatIndex";

let builtins: readonly TypeDefinition[] | undefined;

/**
 * The types statebag writes that `defaultRegistry()` (its generated registry) does not hold. The
 * CLI adds them to every registry it uses, so what statebag stored is always checked.
 */
export function cliBuiltinTypes(): readonly TypeDefinition[] {
  if (builtins) return builtins;
  const registry = new TypeRegistry({ source: "statebag (CLI)" });
  const chatIndex = registry.register({
    $type: CHAT_INDEX_TYPE,
    version: 1,
    name: "the chat index of statebag/http 0.1.0",
    schema: {
      type: "object",
      required: ["chats"],
      properties: {
        chats: {
          type: "array",
          items: {
            type: "object",
            required: ["id", "title", "updatedAt"],
            properties: { id: { type: "string" }, title: { type: "string" }, updatedAt: { type: "string" } },
          },
        },
      },
    },
  });
  // The framework adapters' documents (LangGraph threads, OpenAI Agents items and run states).
  registerLangGraphTypes(registry);
  registerOpenAIAgentsTypes(registry);
  builtins = [chatIndex, ...registry.types().filter((def) => def !== chatIndex)];
  return builtins;
}

/** `registry` with the built-in types it lacks (a project's registry that already has one keeps its own). */
export function withCliBuiltins(registry: TypeRegistry): TypeRegistry {
  const missing = cliBuiltinTypes().filter(
    (def) => !registry.has(def.$type) && registry.renamedTo(def.$type) === undefined,
  );
  return missing.length === 0 ? registry : TypeRegistry.compose(registry, { source: "statebag (CLI)", types: missing });
}

let cliDefault: TypeRegistry | undefined;

/** statebag's own types, as the CLI knows them: `defaultRegistry()` and `cliBuiltinTypes()`. */
export function cliDefaultRegistry(): TypeRegistry {
  cliDefault ??= withCliBuiltins(defaultRegistry());
  return cliDefault;
}

/** The registry for a command: `--registry`, else the project config's, else statebag's own types. */
export async function resolveRegistry(option: string | undefined, context: CommandContext): Promise<CliRegistry> {
  const { environment } = context;
  if (option !== undefined) {
    return {
      registry: await importRegistry(inputPath(option, environment), `--registry ${option}`, option, environment.cwd),
      origin: "flag",
      module: option,
    };
  }
  const config = context.project();
  if (config === undefined) return { registry: cliDefaultRegistry(), origin: "none" };
  const module = relative(config.root, config.registry) || config.registry;
  if (!existsSync(config.registry)) {
    throw new CliError(
      EXIT.usage,
      `the registry module ${module} does not exist yet ("registry" in ${relative(config.root, config.file)})`,
      {
        where: config.registry,
        fix: 'run npx statebag gen to generate it (or correct "registry" in the config)',
      },
    );
  }
  return {
    registry: await importRegistry(config.registry, module, module, config.root),
    origin: "config",
    module,
    configFile: config.file,
  };
}

/** Kept for commands that take only `--registry`: statebag's own types without it. */
export async function loadRegistry(module: string | undefined, environment: CliEnvironment): Promise<TypeRegistry> {
  if (module === undefined) return cliDefaultRegistry();
  return importRegistry(inputPath(module, environment), `--registry ${module}`, module, environment.cwd);
}

async function importRegistry(file: string, label: string, module: string, projectDir: string): Promise<TypeRegistry> {
  return withCliBuiltins(await importModuleRegistry(file, label, module, projectDir));
}

async function importModuleRegistry(
  file: string,
  label: string,
  module: string,
  projectDir: string,
): Promise<TypeRegistry> {
  const where = file;
  if (!existsSync(file)) {
    throw new CliError(EXIT.usage, `${label}: no such file`, {
      where,
      fix: "pass the module `statebag gen` wrote (e.g. --registry src/generated/registry.ts), or one that exports `registry`",
    });
  }
  if (/\.[cm]?tsx?$/.test(file)) await ensureTypeScriptLoader(projectDir, module, where);
  let mod: {
    registry?: unknown;
    generatedTypes?: unknown;
    generatedMigrations?: unknown;
    migrations?: unknown;
    default?: unknown;
  };
  try {
    mod = (await import(pathToFileURL(file).href)) as typeof mod;
  } catch (error) {
    throw new CliError(
      EXIT.usage,
      `${label}: the module cannot be loaded: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      {
        where,
        fix: "check that it compiles and that its imports resolve from where it is (is statebag installed in the project?)",
        cause: error,
      },
    );
  }
  const candidate = mod.registry ?? mod.default;
  if (candidate instanceof TypeRegistry) return candidate;
  if (
    candidate !== undefined &&
    typeof candidate === "object" &&
    typeof (candidate as { types?: unknown }).types === "function"
  ) {
    // A TypeRegistry from another copy of statebag (e.g. the project's own node_modules).
    const foreign = candidate as { types(): TypeDefinition[]; migrations?: () => Migration[] };
    return TypeRegistry.compose({ source: module, types: foreign.types(), migrations: foreign.migrations?.() ?? [] });
  }
  if (Array.isArray(mod.generatedTypes)) {
    const declared = mod.generatedMigrations ?? mod.migrations;
    const migrations = Array.isArray(declared) ? (declared as Migration[]) : [];
    return TypeRegistry.compose(defaultRegistry(), {
      source: module,
      types: mod.generatedTypes as TypeDefinition[],
      migrations,
    });
  }
  throw new CliError(EXIT.usage, `${label}: the module exports neither \`registry\` nor \`generatedTypes\``, {
    where,
    fix: "export a TypeRegistry as `registry`, or point at the generated registry module (it exports `generatedTypes`)",
  });
}

/** How to make the CLI know the types it reported as unknown. */
export function unknownTypesFix(source: CliRegistry): string {
  if (source.origin === "none") {
    return 'give the CLI your registry: set "registry" in statebag.config.json (npx statebag init writes one), or pass --registry src/generated/registry.ts';
  }
  return `${source.module} does not declare these types: run npx statebag gen so it does, or check the $type`;
}

/**
 * What a load could not check, in one clause: "2 values of a type the CLI does not know ("acme.NotesState")
 * were not checked" (values of newer versions are counted apart).
 */
export function unknownTypesSummary(
  values: readonly { $type: string; reason?: "unknown-type" | "newer-version" }[],
): string {
  // $types come from the data: quoted and cut, never printed raw.
  const names = (list: readonly { $type: string }[]) => {
    const types = [...new Set(list.map((v) => v.$type))];
    return {
      count: types.length,
      shown:
        types
          .slice(0, 5)
          .map((t) => JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}...` : t))
          .join(", ") + (types.length > 5 ? `, and ${types.length - 5} more` : ""),
    };
  };
  const values_ = (n: number) => `${n} value${n === 1 ? "" : "s"}`;
  const unknown = values.filter((v) => v.reason !== "newer-version");
  const newer = values.filter((v) => v.reason === "newer-version");
  const parts: string[] = [];
  if (unknown.length > 0) {
    const typeNames = names(unknown);
    parts.push(
      `${values_(unknown.length)} of ${typeNames.count === 1 ? "a type" : `${typeNames.count} types`} the CLI does not know (${typeNames.shown})`,
    );
  }
  if (newer.length > 0) parts.push(`${values_(newer.length)} at versions newer than it knows (${names(newer).shown})`);
  return `${parts.join(" and ")} ${values.length === 1 ? "was" : "were"} not checked`;
}
