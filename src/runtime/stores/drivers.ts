/**
 * Database drivers (`pg`, `ioredis`, `better-sqlite3`) are optional peer dependencies, loaded the
 * first time a store needs one: an application installs only the driver its store URL uses, and
 * a missing or unloadable one is reported as what to install, not as a module-resolution trace.
 */
import { createRequire } from "node:module";
import { StatebagError } from "../core/errors.js";

export type OptionalDriver = "pg" | "ioredis" | "better-sqlite3";

const NEEDED_FOR: Record<OptionalDriver, string> = {
  pg: "postgres:// store URLs",
  ioredis: "redis:// store URLs",
  "better-sqlite3": "the SQLite driver better-sqlite3 (?driver=better-sqlite3)",
};

/**
 * A driver package a store needs is not installed (`driver-missing`), or is installed but cannot be
 * loaded on this Node, typically a native build made for another Node version (`driver-unloadable`).
 */
export class DriverMissingError extends StatebagError {
  constructor(
    readonly driver: OptionalDriver,
    readonly unloadable: boolean,
    cause: unknown,
  ) {
    super(
      unloadable ? "driver-unloadable" : "driver-missing",
      unloadable
        ? `the database driver "${driver}" (needed for ${NEEDED_FOR[driver]}) is installed but cannot be loaded on Node ${process.versions.node}`
        : `the database driver "${driver}" (needed for ${NEEDED_FOR[driver]}) is not installed`,
      {
        cause,
        hint: unloadable
          ? `rebuild it for this Node: npm rebuild ${driver} (reinstall with npm i ${driver} if that fails)`
          : `install it in your app: npm i ${driver}` +
            (driver === "better-sqlite3"
              ? ", or drop ?driver=better-sqlite3 to use the built-in node:sqlite driver"
              : ""),
      },
    );
  }
}

/**
 * How a driver's package name is resolved. Tests replace `moduleName` to simulate a missing
 * package, or `require` to simulate one that fails to load. @internal
 */
export const driverResolution: { moduleName: (driver: OptionalDriver) => string; require: (id: string) => unknown } = {
  moduleName: (driver) => driver,
  require: createRequire(import.meta.url),
};

/** Loaded modules, per resolver (so a test's replacement never sees the real modules). */
const loaded = new WeakMap<object, Map<string, unknown>>();

/** The driver's module, loaded once; a `DriverMissingError` when it is absent or unloadable. */
export function loadDriver<T>(driver: OptionalDriver): T {
  const { require } = driverResolution;
  const id = driverResolution.moduleName(driver);
  let modules = loaded.get(require);
  if (!modules) loaded.set(require, (modules = new Map()));
  if (modules.has(id)) return modules.get(id) as T;
  let mod: unknown;
  try {
    mod = require(id);
  } catch (error) {
    throw new DriverMissingError(driver, !isNotFound(error, id), error);
  }
  modules.set(id, mod);
  return mod as T;
}

/** Whether `loadDriver(driver)` would succeed (used to decide whether optional-driver tests can run). */
export function driverInstalled(driver: OptionalDriver): boolean {
  try {
    loadDriver(driver);
    return true;
  } catch (error) {
    if (error instanceof DriverMissingError) return false;
    throw error;
  }
}

/** Only "the package itself is not there" counts as missing; a missing file inside it means a broken install. */
function isNotFound(error: unknown, id: string): boolean {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : "";
  return code === "MODULE_NOT_FOUND" && message.includes(`'${id}'`);
}
