/**
 * statebag: AI-agent sessions that can be stored, validated, evolved and restored safely.
 *
 * The package root is the session model: tagged types, sessions and their state bag, messages, the
 * type registry, validation, (de)serialization, migrations and errors. The rest lives in subpaths
 * mirroring `src/runtime/`: `statebag/agent`, `statebag/stores`, `statebag/interop`,
 * `statebag/group-chat`, `statebag/testing`, and one per model client (`statebag/openai`).
 *
 * Named exports only: a name missing here is internal. `test/api/exports.snapshot.json` lists every
 * entry point's names, so a change to the surface shows up as a deliberate diff.
 */

// Tagged values: the markers user types extend, and what generated code imports.
export { TYPE_ID_PATTERN, isTaggedValue, versionOf } from "./runtime/core/tagged.js";
export type {
  JsonObject,
  JsonValue,
  ProviderState,
  ProviderStateFamily,
  Tagged,
  TaggedValue,
  Versioned,
} from "./runtime/core/tagged.js";

// Sessions and their state bag
export { createSessionData, newSessionId } from "./runtime/core/session.js";
export type {
  AgentSession,
  CreateSessionOptions,
  QuarantinedValue,
  ServiceSessionId,
  SessionKind,
  StateBag,
} from "./runtime/core/session.js";
export { ProviderSessionState, StateVersionError } from "./runtime/core/state-bag.js";
export type {
  InitialState,
  ProviderSessionStateOptions,
  StateAccess,
  StateDescriptor,
  TaggedShape,
  TypeIdOf,
  VersionOf,
} from "./runtime/core/state-bag.js";

// Messages (Microsoft.Extensions.AI's JSON shape)
export {
  assistantMessage,
  chatMessageFromMeai,
  functionCallContent,
  functionResultContent,
  messageText,
  systemMessage,
  textContent,
  toolMessage,
  usageContent,
  userMessage,
} from "./runtime/core/messages.js";
export type {
  AdditionalProperties,
  AIAnnotation,
  AIAnnotationTypes,
  AIContent,
  AIContentBase,
  AIContentTypes,
  AnnotatedRegion,
  AnnotatedRegionTypes,
  BlobReferenceContent,
  ChatMessage,
  ChatRole,
  CitationAnnotation,
  DataContent,
  ErrorContent,
  FunctionCallContent,
  FunctionResultContent,
  HostedFileContent,
  TextContent,
  TextReasoningContent,
  TextSpanAnnotatedRegion,
  ToolApprovalRequestContent,
  ToolApprovalResponseContent,
  UriContent,
  UsageContent,
  UsageDetails,
} from "./runtime/core/messages.js";

// Errors
export { ConfigurationError, StateTypeError, StatebagError } from "./runtime/core/errors.js";
export type { StatebagErrorCode } from "./runtime/core/errors.js";

// The type registry, and the contract generated registry modules are written against
export { PROVIDER_STATE_FAMILY, TypeRegistry } from "./runtime/registry/registry.js";
export { defaultRegistry } from "./runtime/validation/default-registry.js";
export { RegistryError } from "./runtime/registry/registry-error.js";
export type { RegisterTypeSpec, RegistryPart, TypeRegistryOptions } from "./runtime/registry/registry.js";
export type { FamilySlot, TypeDefinition, Validator, ValidatorError } from "./runtime/registry/registry-types.js";
export { FORMATS, formatCheck, isDateTime } from "./runtime/registry/formats.js";
export type { FormatCheck, FormatType } from "./runtime/registry/formats.js";

// Validation
export { validateSession, validateValue } from "./runtime/validation/validate.js";
export type { ValidateOptions, ValidateValueOptions, ValidationResult } from "./runtime/validation/validate.js";
export { formatProblems } from "./runtime/core/problems.js";
export type {
  DuplicateKeyProblemDetails,
  FamilyProblemDetails,
  JsonTypeName,
  LimitProblemDetails,
  OtherSchemaKeyword,
  PreservedValue,
  ProblemCode,
  ProblemDetails,
  SchemaProblemDetails,
  SessionProblemDetails,
  SyntaxProblemDetails,
  ValidationProblem,
  VersionProblemDetails,
} from "./runtime/core/problems.js";

// (De)serialization and safe JSON parsing
export {
  SESSIONS_FORMAT,
  SESSION_FORMAT,
  SESSION_FORMAT_VERSION,
  SessionValidationError,
  deserializeSession,
  deserializeSessions,
  serializeSession,
  serializeSessions,
} from "./runtime/persistence/serialization.js";
export type { DeserializeOptions, MigratedValue, SerializeOptions } from "./runtime/persistence/serialization.js";
export { DEFAULT_JSON_LIMITS, JsonParseError, checkJsonLimits, parseJson } from "./runtime/json/safe-json.js";
export type { JsonErrorCode, JsonLimits } from "./runtime/json/safe-json.js";

// Migrations
export { MigrationDefinitionError, MigrationError, defineMigration } from "./runtime/registry/migrations.js";
export type {
  Migration,
  MigrationContext,
  MigrationResult,
  MigrationSpec,
  Untagged,
  UpgradeResult,
} from "./runtime/registry/migrations.js";
