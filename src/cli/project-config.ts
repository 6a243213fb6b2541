/**
 * The project config: where a user's project keeps its statebag files, found by every command
 * from the working directory upward, so no command needs flags in a configured project.
 *
 * It is `statebag.config.json`, or the `"statebag"` key of `package.json` (the first folder, going
 * up, that has either). Paths in it are relative to the folder of the file that holds it:
 *
 *   {
 *     "tsconfig": "tsconfig.json",          // sources to scan (its include/files)
 *     "schemas": "schemas",                 // JSON Schemas; schemas/history/ holds frozen versions
 *     "generated": "src/generated",         // registry.ts and validators.ts
 *     "fixtures": "test/fixtures",          // golden fixtures, <fixtures>/<$type>/v<N>.json
 *     "registry": "src/generated/registry.ts", // the module validate/inspect/migrate/export load
 *     "store": "sqlite:./.statebag/sessions.db" // default store URL (after --store and $STATEBAG_STORE)
 *   }
 *
 * Every key is optional (these are the defaults); `runtimeImport` (the module generated code imports
 * statebag from, default "statebag") is for unusual layouts. `keyring` (no default) is the keyring
 * file of an encrypted store (after --keyring and $STATEBAG_KEYRING); it may be absolute (a secrets
 * mount), a relative one is relative to the config's folder. Unknown keys and wrong types are errors
 * that name the file and the JSON pointer, since a misspelt key would otherwise be silently ignored.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { JsonParseError, parseJson } from "../runtime/json/safe-json.js";
import { pointerSegment } from "../runtime/core/json.js";
import { CliError, EXIT } from "./io.js";

export const CONFIG_FILE = "statebag.config.json";
export const PACKAGE_KEY = "statebag";

/** The config as written, every key optional. */
export interface ProjectConfigFile {
  tsconfig?: string;
  schemas?: string;
  generated?: string;
  fixtures?: string;
  registry?: string;
  store?: string;
  runtimeImport?: string;
  /** The keyring file of an encrypted store: {"current", "keys", "store"} (no default). */
  keyring?: string;
}

/** The config with defaults applied and paths made absolute. */
export interface ProjectConfig {
  /** The file that holds the config (statebag.config.json or package.json). */
  file: string;
  /** The JSON pointer of the config inside `file` ("" or "/statebag"). */
  pointer: string;
  /** The folder paths are relative to: the project root. */
  root: string;
  tsconfig: string;
  schemas: string;
  generated: string;
  fixtures: string;
  registry: string;
  /** A store URL; a relative SQLite path is made absolute against `root`. */
  store: string;
  runtimeImport: string;
  /** The keyring file of an encrypted store, absolute; absent when the config names none. */
  keyring?: string;
}

export const CONFIG_DEFAULTS: Required<Omit<ProjectConfigFile, "keyring">> = {
  tsconfig: "tsconfig.json",
  schemas: "schemas",
  generated: "src/generated",
  fixtures: "test/fixtures",
  registry: "src/generated/registry.ts",
  store: "sqlite:./.statebag/sessions.db",
  runtimeImport: "statebag",
};

/** Keys without a default. `keyring`: the keyring file of an encrypted store (absolute allowed: a secrets mount). */
const OPTIONAL_KEYS: Record<Exclude<keyof ProjectConfigFile, keyof typeof CONFIG_DEFAULTS>, { example: string }> = {
  keyring: { example: "/run/secrets/statebag-keyring.json" },
};
const KEYS = [...Object.keys(CONFIG_DEFAULTS), ...Object.keys(OPTIONAL_KEYS)] as (keyof ProjectConfigFile)[];
const PATH_KEYS = new Set<keyof ProjectConfigFile>(["tsconfig", "schemas", "generated", "fixtures", "registry"]);

/** Where a config was found: the file, and the parsed object (not yet validated). */
interface Located {
  file: string;
  pointer: string;
  value: unknown;
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new CliError(EXIT.usage, `cannot read ${file}: ${(error as Error).message}`, {
      where: file,
      fix: "check the file's permissions",
    });
  }
  try {
    return parseJson(text);
  } catch (error) {
    if (!(error instanceof JsonParseError)) throw error;
    throw new CliError(EXIT.usage, `${file} is not valid JSON: ${error.message}`, {
      where: `${file}${error.pointer ? ` at ${error.pointer}` : ""}`,
      fix: "fix the JSON syntax (a config file has no comments or trailing commas)",
      cause: error,
    });
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The nearest config from `start` upward, undefined when there is none. */
function locate(start: string): Located | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const own = join(dir, CONFIG_FILE);
    const pkgFile = join(dir, "package.json");
    const hasOwn = isFile(own);
    let inPackage: unknown;
    if (isFile(pkgFile)) {
      const pkg = readJson(pkgFile);
      if (typeof pkg === "object" && pkg !== null && !Array.isArray(pkg) && Object.hasOwn(pkg, PACKAGE_KEY))
        inPackage = (pkg as Record<string, unknown>)[PACKAGE_KEY];
    }
    if (hasOwn && inPackage !== undefined) {
      throw new CliError(
        EXIT.usage,
        `two statebag configs in ${dir}: ${CONFIG_FILE} and the "${PACKAGE_KEY}" key of package.json`,
        {
          where: own,
          fix: `keep one: delete ${CONFIG_FILE}, or remove the "${PACKAGE_KEY}" key from package.json`,
        },
      );
    }
    if (hasOwn) return { file: own, pointer: "", value: readJson(own) };
    if (inPackage !== undefined) return { file: pkgFile, pointer: `/${PACKAGE_KEY}`, value: inPackage };
    if (dirname(dir) === dir) return undefined;
  }
}

/** Checks a parsed config and applies the defaults. */
export function validateConfig(value: unknown, file: string, pointer = ""): ProjectConfig {
  const fail = (at: string, message: string, fix: string): never => {
    throw new CliError(EXIT.usage, `${relativeName(file)}: ${message}`, {
      where: `${file} at ${at === "" ? "(the document root)" : at}`,
      fix,
    });
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail(
      pointer,
      `the statebag config must be an object, found ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`,
      `write an object such as {"tsconfig": "tsconfig.json"} (every key is optional)`,
    );
  }
  const raw = value as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (key === "$schema") continue;
    if (!(KEYS as string[]).includes(key)) {
      const near = KEYS.find((k) => k.toLowerCase() === key.toLowerCase());
      fail(
        `${pointer}/${pointerSegment(key)}`,
        `unknown key ${JSON.stringify(key)}`,
        near ? `did you mean "${near}"?` : `the keys are ${KEYS.map((k) => `"${k}"`).join(", ")}`,
      );
    }
    const setting = raw[key];
    if (typeof setting !== "string" || setting.trim() === "") {
      fail(
        `${pointer}/${pointerSegment(key)}`,
        `"${key}" must be a non-empty string, found ${setting === null ? "null" : Array.isArray(setting) ? "an array" : typeof setting === "string" ? "an empty string" : typeof setting}`,
        `write it as a string, e.g. "${key}": ${JSON.stringify(key in CONFIG_DEFAULTS ? CONFIG_DEFAULTS[key as keyof typeof CONFIG_DEFAULTS] : OPTIONAL_KEYS[key as keyof typeof OPTIONAL_KEYS].example)}`,
      );
    }
    if (PATH_KEYS.has(key as keyof ProjectConfigFile) && isAbsolute(setting as string)) {
      fail(
        `${pointer}/${pointerSegment(key)}`,
        `"${key}" is an absolute path`,
        `write it relative to ${relativeName(file)}'s folder, so the project works wherever it is checked out`,
      );
    }
  }
  const root = dirname(file);
  const merged = { ...CONFIG_DEFAULTS, ...(raw as ProjectConfigFile) };
  const path = (p: string) => resolve(root, p);
  return {
    file,
    pointer,
    root,
    tsconfig: path(merged.tsconfig),
    schemas: path(merged.schemas),
    generated: path(merged.generated),
    fixtures: path(merged.fixtures),
    registry: path(merged.registry),
    store: resolveStoreUrl(merged.store, root),
    runtimeImport: merged.runtimeImport,
    ...(typeof raw.keyring === "string" ? { keyring: path(raw.keyring) } : {}),
  };
}

/** A relative SQLite path in the config means relative to the project, not to where the CLI runs. */
export function resolveStoreUrl(url: string, root: string): string {
  const sqlite = /^sqlite:(?!\/\/)(?!:memory:)(.*)$/i.exec(url);
  if (sqlite && sqlite[1] !== "" && !isAbsolute(sqlite[1])) return `sqlite:${resolve(root, sqlite[1])}`;
  return url;
}

/** The file's name for messages (the full path is printed on the "where:" line). */
function relativeName(file: string): string {
  return basename(file);
}

/**
 * The project config for a command run in `cwd`: `explicit` (a `--config` file) if given, else the
 * nearest one upward; undefined when there is none.
 */
export function findProjectConfig(cwd: string, explicit?: string): ProjectConfig | undefined {
  if (explicit !== undefined) {
    const file = resolve(cwd, explicit);
    if (!existsSync(file))
      throw new CliError(EXIT.usage, `--config ${explicit}: no such file`, {
        where: file,
        fix: 'pass the path of statebag.config.json (or of a package.json with a "statebag" key)',
      });
    const value = readJson(file);
    if (file.endsWith("package.json")) {
      const pkg = value as Record<string, unknown> | null;
      if (typeof pkg !== "object" || pkg === null || !Object.hasOwn(pkg, PACKAGE_KEY)) {
        throw new CliError(EXIT.usage, `--config ${explicit}: package.json has no "${PACKAGE_KEY}" key`, {
          where: file,
          fix: `add "${PACKAGE_KEY}": {} to it, or run npx statebag init`,
        });
      }
      return validateConfig(pkg[PACKAGE_KEY], file, `/${PACKAGE_KEY}`);
    }
    return validateConfig(value, file);
  }
  const found = locate(cwd);
  return found && validateConfig(found.value, found.file, found.pointer);
}

/**
 * The root of statebag's own repository when `cwd` is inside it (the package named "statebag" that
 * has its generator and runtime sources), else undefined. Only there may `gen` run without a
 * config: its default layout writes statebag's internal registry.
 */
export function statebagRepositoryRoot(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const pkgFile = join(dir, "package.json");
    if (isFile(pkgFile)) {
      let pkg: unknown;
      try {
        pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
      } catch {
        return undefined;
      }
      const own =
        (pkg as { name?: unknown } | null)?.name === "statebag" &&
        isFile(join(dir, "generator/index.ts")) &&
        isFile(join(dir, "src/runtime/core/errors.ts"));
      return own ? dir : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}
