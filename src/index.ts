/**
 * statebag: AI-agent sessions that can be stored, validated, evolved and restored safely.
 * The package root exports the whole public API.
 */

// Data model
export * from "./runtime/core/tagged.js";
export * from "./runtime/core/messages.js";
export * from "./runtime/core/session.js";
export * from "./runtime/core/errors.js";
export * from "./runtime/core/state-bag.js";

// Behaviour
export * from "./runtime/agent/chat-client.js";
export * from "./runtime/agent/tools.js";
export * from "./runtime/agent/agent.js";
export * from "./runtime/agent/middleware.js";
export * from "./runtime/agent/providers/provider.js";
export * from "./runtime/agent/providers/context-provider.js";
export * from "./runtime/agent/providers/chat-history-provider.js";
export * from "./runtime/agent/providers/in-memory-chat-history.js";
export * from "./runtime/agent/providers/reducers.js";
export * from "./runtime/agent/providers/rolling-summary.js";
export * from "./runtime/agent/providers/stored-chat-history.js";
export * from "./runtime/agent/clients/scripted-chat-client.js";

// Registry, validation, (de)serialization, migrations
export { TypeRegistry, defaultRegistry, RegistryError, PROVIDER_STATE_FAMILY, isReservedTypeName } from "./runtime/persistence/registry.js";
export type { RegisterTypeSpec, TypeRegistryOptions, RegistryPart } from "./runtime/persistence/registry.js";
export { validateSession, validateValue, formatProblems, describeValue } from "./runtime/persistence/validate.js";
export type { ValidationProblem, PreservedValue, ValidationResult, ValidateOptions, ValidateValueOptions, ProblemCode } from "./runtime/persistence/validate.js";
export * from "./runtime/persistence/serialization.js";
export { parseJson, checkJsonLimits, JsonParseError, DEFAULT_JSON_LIMITS } from "./runtime/persistence/safe-json.js";
export type { JsonLimits, JsonErrorCode } from "./runtime/persistence/safe-json.js";
export { defineMigration, MigrationError, MigrationDefinitionError } from "./runtime/persistence/migrations.js";
export type { Migration, MigrationSpec, MigrationContext, UpgradeResult } from "./runtime/persistence/migrations.js";

// Registry contract and generated-code support
export * from "./runtime/persistence/formats.js";
export * from "./runtime/persistence/registry-types.js";

// Many agents, one conversation; Agent Framework interop
export * from "./runtime/group-chat/index.js";
export * from "./runtime/interop/index.js";

// Stores
export * from "./runtime/stores/index.js";
