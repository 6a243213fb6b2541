/**
 * statebag: AI-agent sessions that can be stored, validated, evolved and restored safely.
 * The package root exports the whole public API.
 */

// Data model
export * from "./runtime/tagged.js";
export * from "./runtime/messages.js";
export * from "./runtime/session.js";
export * from "./runtime/errors.js";
export * from "./runtime/state-bag.js";

// Behaviour
export * from "./runtime/chat-client.js";
export * from "./runtime/tools.js";
export * from "./runtime/agent.js";
export * from "./runtime/middleware.js";
export * from "./runtime/providers/provider.js";
export * from "./runtime/providers/context-provider.js";
export * from "./runtime/providers/chat-history-provider.js";
export * from "./runtime/providers/in-memory-chat-history.js";
export * from "./runtime/providers/reducers.js";
export * from "./runtime/providers/rolling-summary.js";
export * from "./runtime/providers/stored-chat-history.js";
export * from "./runtime/clients/scripted-chat-client.js";

// Registry, validation, (de)serialization, migrations
export { TypeRegistry, defaultRegistry, RegistryError, PROVIDER_STATE_FAMILY, isReservedTypeName } from "./runtime/registry.js";
export type { RegisterTypeSpec, TypeRegistryOptions, RegistryPart } from "./runtime/registry.js";
export { validateSession, validateValue, formatProblems, describeValue } from "./runtime/validate.js";
export type { ValidationProblem, PreservedValue, ValidationResult, ValidateOptions, ValidateValueOptions, ProblemCode } from "./runtime/validate.js";
export * from "./runtime/serialization.js";
export { parseJson, checkJsonLimits, JsonParseError, DEFAULT_JSON_LIMITS } from "./runtime/safe-json.js";
export type { JsonLimits, JsonErrorCode } from "./runtime/safe-json.js";
export { defineMigration, MigrationError, MigrationDefinitionError } from "./runtime/migrations.js";
export type { Migration, MigrationSpec, MigrationContext, UpgradeResult } from "./runtime/migrations.js";

// Registry contract and generated-code support
export * from "./runtime/formats.js";
export * from "./runtime/registry-types.js";

// Many agents, one conversation; Agent Framework interop
export * from "./runtime/group-chat/index.js";
export * from "./runtime/interop/index.js";

// Stores
export * from "./runtime/stores/index.js";
