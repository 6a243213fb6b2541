/**
 * `statebag/internal/toolchain`: the runtime helpers the generator (the `statebag-kit` package)
 * runs. Internal: not a public API, no compatibility promise; it exists so that the kit uses the
 * application's installed statebag, and an app has one copy of the runtime's classes (a
 * `MigrationError` thrown by a user's migration is the same class the compatibility check tests for).
 */
export { jsonEqual, pointerSegment, setOwn } from "../runtime/core/json.js";
export { StatebagError } from "../runtime/core/errors.js";
export { TYPE_ID_PATTERN } from "../runtime/core/tagged.js";
export { FORMATS, formatCheck, isDateTime, isKnownFormat } from "../runtime/registry/formats.js";
export type { FormatCheck, FormatType } from "../runtime/registry/formats.js";
export {
  MigrationError,
  MigrationSet,
  type Migration,
  type MigrationContext,
} from "../runtime/registry/migrations.js";
export { ToolchainMissingError } from "../runtime/core/toolchain-error.js";
// What a project's generated fused check imports (src/generated/fused-check.ts of `statebag gen`).
export {
  checkSessionObject,
  formatTest,
  opaqueJson,
  numberChars,
  plainObject,
  scalarChars,
  type FusedContext,
  type TaggedCheck,
} from "../runtime/checks/fused-runtime.js";
