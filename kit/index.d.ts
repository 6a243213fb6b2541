export * from "./dist/generator/index.js";
export { formatResult, type GenerateResult } from "./dist/generator/report.js";
export { formatError, type GenError } from "./dist/generator/errors.js";
export type { GenerateOptions } from "./dist/generator/config.js";
export type { CompatFailure, CompatResult } from "./dist/generator/compat-run.js";
export type { GeneratedFile } from "./dist/generator/output.js";
export type { FamilySlot } from "./dist/generator/slots.js";
export type { MigrationSummary } from "./dist/generator/migrations.js";
export type { TypeSummary } from "./dist/generator/summary.js";
