/**
 * Model SDKs are optional peer dependencies: statebag's core never imports them, and a client loads
 * its SDK only when it first talks to the model. A missing package is a clear error, not a crash at
 * import time.
 */
import { StatebagError } from "./errors.js";

export class MissingDependencyError extends StatebagError {
  constructor(
    readonly packageName: string,
    readonly usedBy: string,
    cause: unknown,
  ) {
    super("missing-dependency", `${usedBy} needs the "${packageName}" package, which is not installed`, {
      hint: `npm i ${packageName}`,
      cause,
    });
  }
}

/**
 * `import(name)` with the name as a value: a bundler leaves it alone (no "Could not resolve" when
 * the package is absent, no SDK inlined when present), and Node resolves it when it runs.
 */
export function importPackage<T>(name: string): Promise<T> {
  return import(name) as Promise<T>;
}

/** Imports an optional package, turning "not installed" into `MissingDependencyError`. */
export async function importOptional<T>(packageName: string, usedBy: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND")
      throw new MissingDependencyError(packageName, usedBy, error);
    throw error;
  }
}
