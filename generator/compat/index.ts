/** The compatibility check ("Versioned stored sessions", part 2). */
export { OPAQUE_SLOT_SCHEMA, type DiffOptions, type SlotInfo, diffSchemas, hasBreaking, slotsOf } from "./diff.js";
export { CHANGE_RULES, type Change, type ChangeKind, type ChangeRule } from "./rule-catalogue.js";
export {
  type CheckOptions,
  type CheckReport,
  type CheckRule,
  type DeclaredMigration,
  type Failure,
  checkCompatibility,
  formatFailure,
  failureDetails,
  formatFailures,
  migrationSnippet,
  runCompatibilityCheck,
  validateFixture,
} from "./check.js";
export {
  type FrozenLock,
  type RetiredType,
  HISTORY_DIR,
  LOCK_FILE,
  RETIRED_FILE,
  frozenHash,
  frozenPath,
  readLock,
  readRetired,
  recordFrozen,
  retireType,
  unfreeze,
} from "./history.js";
export {
  type ScaffoldFixturesOptions,
  type ScaffoldOptions,
  fileResolver,
  scaffoldFixture,
  writeScaffoldFixtures,
} from "./scaffold.js";
export {
  type DiffReportOptions,
  type RunDiffOptions,
  type RunDiffResult,
  formatDiffReport,
  runDiff,
} from "./report.js";
export {
  type AssessOptions,
  type AssessedChange,
  type Assessment,
  type Budget,
  type SamplingReport,
  type Verdict,
  assessCompatibility,
  verdictOf,
} from "./assess.js";
export { type SampleOptions, type Samples, sampleDocuments } from "./sampling.js";
export { formatWitness, searchWitness, witnessText } from "./witness.js";
export { normalizeIds } from "./bundle.js";
export { type ExternalRefResolver, type JsonSchema, type SchemaDoc, canonicalJson } from "./schema.js";
