/**
 * The contract between the generator (`generator/`, which emits `src/generated/registry.ts`) and
 * the runtime registry (`src/runtime/registry/registry.ts`). Generated code and runtime registrations both
 * produce `TypeDefinition`s; the runtime treats them the same.
 */

/** Generated registries also list the migrations declared next to the types (`generatedMigrations`). */
export type { Migration, MigrationContext } from "./migrations.js";

/** A compiled validator: ajv's shape (standalone or runtime-compiled). */
export interface Validator {
  (data: unknown): boolean;
  errors?: ValidatorError[] | null;
}

/** The subset of ajv's ErrorObject the runtime reads. */
export interface ValidatorError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Where nested polymorphic values sit inside a type, relative to the value itself.
 * Each segment is a property name, or `"*"` for every item of an array / every value of a map.
 * Example: history state `["messages", "*", "contents", "*"]` -> family `"AIContent"`.
 * The type's own validator treats these positions as opaque tagged objects; the runtime walker
 * dispatches each one by its `$type` to that type's own validator.
 */
export interface FamilySlot {
  path: readonly string[];
  family: string;
}

export interface TypeDefinition {
  /** The registry-unique discriminator. */
  $type: string;
  /** `"ProviderState"` for provider state; otherwise the nested family (`"AIContent"`, ...). */
  family: string;
  /** The latest version this code knows (values are written at this version). */
  version: number;
  /** JSON Schema (draft-07) of the latest version. */
  schema: Record<string, unknown>;
  /** Validator of `schema` (family slots opaque). */
  validate: Validator;
  /** Nested polymorphic positions, walked after `validate` passes. */
  slots: readonly FamilySlot[];
  /** The declaration's name in source, for messages. */
  name?: string;
  /** `file:line` of the declaration, for messages. */
  source?: string;
  /** Earlier `$type` names of this type (renamed by migrations); reserved forever. */
  formerNames?: readonly string[];
  /**
   * Older versions a migration reads, with the schema they were stored under (the frozen one,
   * family slots opaque). A value is checked against it before a step runs on it, so a failure
   * names invalid stored data as such instead of blaming the migration.
   */
  storedVersions?: readonly StoredVersion[];
}

/** One older stored version of a type (under its own or a former `$type`). */
export interface StoredVersion {
  $type: string;
  version: number;
  /** JSON Schema (draft-07) of the value as stored at that version. */
  schema: Record<string, unknown>;
  /** Where the schema comes from (`schemas/history/...`), for messages. */
  file?: string;
}
