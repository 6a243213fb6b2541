/**
 * Pieces of statebag the CLI uses that are not part of every build yet. Each is looked up here,
 * in one place, by the export name its module promises; when the module lands this is the only
 * file to touch (replace the lookup with a typed `import()`).
 *
 * Everything that exists is imported directly by the commands (typed, and lazily so a command
 * pays only for what it uses).
 */
import type { TypeRegistry } from "../runtime/registry.js";
import type { SessionStore } from "../runtime/stores/types.js";
import { runtimeError } from "./io.js";

/** The first of `modules` (relative to this file) that exports `name`, or undefined. */
async function findExport<T>(modules: readonly string[], name: string): Promise<T | undefined> {
  for (const relative of modules) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(new URL(relative, import.meta.url).href)) as Record<string, unknown>;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") continue;
      throw error;
    }
    if (mod[name] !== undefined) return mod[name] as T;
  }
  return undefined;
}

// -------------------------------------------------------------------------------------------------
// Bulk migration (`statebag migrate`): rewrites every stored session at the latest versions.

export interface BulkMigrateOptions {
  registry?: TypeRegistry;
  dryRun?: boolean;
  /** Called after each session (for progress bars). */
  onProgress?: (done: number, total: number | undefined) => void;
}

export interface BulkMigrateFailure {
  id: string;
  message: string;
  pointer?: string;
}

export interface BulkMigrateReport {
  scanned: number;
  migrated: number;
  unchanged: number;
  failed: BulkMigrateFailure[];
}

export type MigrateStore = (store: SessionStore, options: BulkMigrateOptions) => Promise<BulkMigrateReport>;

const BULK_MIGRATION_MODULES = ["../runtime/stores/index.js", "../runtime/migrations.js", "../runtime/bulk-migrate.js", "../runtime/stores/migrate.js"];

/** The bulk migration API, or undefined when this build has none. */
export async function findMigrateStore(): Promise<MigrateStore | undefined> {
  return findExport<MigrateStore>(BULK_MIGRATION_MODULES, "migrateStore");
}

export function bulkMigrationMissing(): Error {
  return runtimeError("bulk migration (writing) is not available in this build of statebag", {
    fix: "use --dry-run to see which sessions need migrating; sessions are also migrated on load and rewritten on their next save",
  });
}
