/**
 * statebag's own registry: its generated types, composed into a `TypeRegistry`. It lives above
 * `src/generated/` (the registry machinery in `registry/` sits below it: generated code imports
 * that), next to the walker that falls back to it when a caller gives no registry.
 */
import { generatedMigrations, generatedTypes } from "../../generated/registry.js";
import { TypeRegistry } from "../registry/registry.js";

let defaultInstance: TypeRegistry | undefined;

/**
 * statebag's own registry: the generated types (message contents, annotations, built-in provider
 * states) and the migrations declared next to them. Built once, on first use. It is process-wide:
 * `register()` on it affects every caller; compose your own (`TypeRegistry.compose(defaultRegistry(), ...)`) to keep registrations local.
 */
export function defaultRegistry(): TypeRegistry {
  defaultInstance ??= new TypeRegistry({ source: "statebag", types: generatedTypes, migrations: generatedMigrations });
  return defaultInstance;
}
