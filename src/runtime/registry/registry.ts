/**
 * The type registry: every `$type` statebag may load, each with one compiled validator.
 *
 * It is the allowlist of deserialization: a `$type` that is not here never resolves to anything
 * (lookups go through a `Map`, so `"__proto__"`, `"constructor"` or `"toString"` are just unknown
 * names), and values of unknown types are kept verbatim as data, never instantiated.
 *
 * Sources, composed with `TypeRegistry.compose(...)`:
 * - statebag's own generated types (`defaultRegistry()`, validation/default-registry.ts, from
 *   `src/generated/registry.ts`),
 * - an application's generated registry (its own `npm run gen` output),
 * - runtime registrations without codegen (`registry.register({ $type, version, schema })` with a
 *   TypeBox or plain JSON schema, compiled by ajv at registration time).
 * A `$type` defined twice, or a `$type` that is another type's former name, is an error naming
 * both sources.
 *
 * Migrations (see `migrations.ts`) live here too: `registry.upgrade(value, pointer)` brings an
 * older stored value to the latest version; the validation walker calls it per tagged value.
 */
import AjvModule from "ajv";
import type { Format, Options as AjvOptions } from "ajv";
import { FORMATS } from "./formats.js";
import { setOwn } from "../core/json.js";
import {
  MigrationDefinitionError,
  MigrationSet,
  callerSource,
  invalidStoredData,
  type Migration,
  type MigrationTargets,
  type StoredProblem,
} from "./migrations.js";
import { RegistryError } from "./registry-error.js";
import { opaqueSlot, plainSchema } from "./schema-closing.js";
import { compileSlotWalk, compileSlots, type SlotNode, type SlotWalk } from "./slot-walk.js";
import type { FamilySlot, StoredVersion, TypeDefinition, Validator } from "./registry-types.js";
import { TYPE_ID_PATTERN } from "../core/tagged.js";

const Ajv = AjvModule.default;
type AjvInstance = InstanceType<typeof Ajv>;

/** The family of provider state values (the values directly under a state bag key). */
export const PROVIDER_STATE_FAMILY = "ProviderState";

/** A `$type` id (see `TYPE_ID_PATTERN`) is never the name of something every JavaScript object already has. */
const TYPE_ID = TYPE_ID_PATTERN;

export function isReservedTypeName(name: string): boolean {
  return name === "__proto__" || name === "prototype" || Object.hasOwn(Object.prototype, name);
}

function checkTypeId(id: unknown, what: string): asserts id is string {
  if (typeof id !== "string" || !TYPE_ID.test(id)) {
    throw new RegistryError(
      `${what} ${JSON.stringify(id)} is not a valid $type id`,
      "use letters, digits, '_', '.', '-', starting with a letter or '_' (namespace your own: \"acme.SummaryState\")",
    );
  }
  if (isReservedTypeName(id)) {
    throw new RegistryError(
      `${what} "${id}" is reserved (it names a property every JavaScript object has)`,
      'choose another id, e.g. "acme.' + id + '"',
    );
  }
}

/** @internal What the registry keeps per `$type`. */
export interface RegistryEntry {
  readonly def: TypeDefinition;
  /** Which part of a composition it came from ("statebag", "runtime registration", ...). */
  readonly origin: string;
  /** Compiled `def.slots` (null when the type has none). */
  readonly slotTree: SlotNode | null;
  /** `slotTree` compiled to code (null: none, or code generation unavailable). */
  readonly slotWalk: SlotWalk | null;
}

function describeEntry(e: { def: TypeDefinition; origin: string }): string {
  const where = [e.def.name, e.def.source].filter(Boolean).join(" at ");
  return `${e.origin}${where ? ` (${where})` : ""}`;
}

function checkDefinition(def: TypeDefinition, origin: string): void {
  if (typeof def !== "object" || def === null)
    throw new RegistryError(`${origin} holds a type definition that is not an object`);
  checkTypeId(def.$type, `${origin}: $type`);
  if (typeof def.version !== "number" || !Number.isInteger(def.version) || def.version < 1) {
    throw new RegistryError(
      `${origin}: "${def.$type}" has version ${JSON.stringify(def.version)}; versions are integers >= 1`,
    );
  }
  if (typeof def.family !== "string" || def.family.length === 0)
    throw new RegistryError(`${origin}: "${def.$type}" has no family`);
  if (typeof def.validate !== "function") throw new RegistryError(`${origin}: "${def.$type}" has no validate function`);
  if (!Array.isArray(def.slots))
    throw new RegistryError(`${origin}: "${def.$type}" has no slots array (use [] when it has none)`);
  for (const slot of def.slots) {
    if (
      !Array.isArray(slot?.path) ||
      slot.path.length === 0 ||
      !slot.path.every((s: unknown) => typeof s === "string") ||
      typeof slot.family !== "string"
    ) {
      throw new RegistryError(
        `${origin}: "${def.$type}" has a malformed slot ${JSON.stringify(slot)}`,
        'a slot is { path: ["messages", "*", "contents", "*"], family: "AIContent" }',
      );
    }
  }
  for (const former of def.formerNames ?? []) checkTypeId(former, `${origin}: former name of "${def.$type}"`);
}

// -----------------------------------------------------------------------------------------------
// Runtime registration (no codegen): TypeBox or plain JSON Schema, compiled by ajv here.

export interface RegisterTypeSpec {
  /** The registry-unique discriminator. */
  $type: string;
  /** The latest version (values are written at it). Default 1. */
  version?: number;
  /**
   * A TypeBox schema (`Type.Object({...})`) or a plain JSON Schema (draft-07) of an object. It
   * describes the value's own properties: `$type` and `$version` are added for you.
   */
  schema: object;
  /** Default `"ProviderState"` (a value under a state bag key). */
  family?: string;
  /** Nested polymorphic positions. Their subschemas are replaced by "any value": the walker validates them. */
  slots?: readonly FamilySlot[];
  /** Earlier `$type` names of this type (a value under such a name is renamed on load). */
  formerNames?: readonly string[];
  /**
   * Closed model: every object schema that lists `properties` and does not say otherwise gets
   * `additionalProperties: false`, so unknown properties are errors (`{ type: "object" }` with no
   * properties, `Type.Record` and intersections stay as written). `open: true` leaves all schemas
   * as written.
   */
  open?: boolean;
  /** For messages. */
  name?: string;
}

export interface TypeRegistryOptions {
  /** A label for the types given here, used in collision messages. Default "this registry". */
  source?: string;
  types?: readonly TypeDefinition[];
  migrations?: readonly Migration[];
  /** Extra formats for runtime registrations (statebag's own are built in: `FORMATS`, ajv-formats' set). */
  formats?: Record<string, Format>;
}

/** Anything `TypeRegistry.compose` accepts. */
export type RegistryPart =
  | TypeRegistry
  | readonly TypeDefinition[]
  | { source: string; types?: readonly TypeDefinition[]; migrations?: readonly Migration[] };

// -----------------------------------------------------------------------------------------------

export class TypeRegistry {
  /** @internal `$type` -> entry. The walker reads this map directly (one `Map.get` per value). */
  readonly table = new Map<string, RegistryEntry>();
  /** Former name -> the current `$type` it was renamed to. */
  private readonly formerIndex = new Map<string, string>();
  /** `"<$type>\u0000<version>"` -> an older stored version's schema (`TypeDefinition.storedVersions`). */
  private readonly storedIndex = new Map<string, StoredVersion>();
  private readonly migrationSet = new MigrationSet();
  private readonly formats: Record<string, Format>;
  private ajvInstance: AjvInstance | undefined;
  private readonly label: string;
  /** @internal Bound once, handed to the migration runner. */
  readonly targets: MigrationTargets;

  constructor(options: TypeRegistryOptions = {}) {
    this.label = options.source ?? "this registry";
    this.formats = { ...FORMATS, ...options.formats };
    const table = this.table;
    const formerIndex = this.formerIndex;
    const storedIndex = this.storedIndex;
    this.targets = {
      latestVersion: (type) => table.get(type)?.def.version,
      renamedTo: (name) => formerIndex.get(name),
      storedProblems: (type, version, value) => {
        const stored = storedIndex.get(`${type}\u0000${version}`);
        return stored && this.storedProblems(stored, value);
      },
    };
    for (const def of options.types ?? []) this.add(def, this.label);
    for (const migration of options.migrations ?? []) this.addMigration(migration);
  }

  /**
   * Builds one registry from several parts (earlier parts first), refusing any `$type` defined
   * twice and any `$type` that is another type's former name.
   *
   * ```ts
   * const registry = TypeRegistry.compose(defaultRegistry(), { source: "my-app", types: appGeneratedTypes });
   * ```
   */
  static compose(...parts: RegistryPart[]): TypeRegistry {
    const formats: Record<string, Format> = {};
    for (const part of parts) if (part instanceof TypeRegistry) Object.assign(formats, part.formats);
    const reg = new TypeRegistry({ source: "composed registry", formats });
    parts.forEach((part, i) => {
      if (part instanceof TypeRegistry) {
        for (const entry of part.table.values()) reg.addEntry(entry.def, entry.origin, entry.slotTree, entry.slotWalk);
        for (const migration of part.migrationSet) reg.addMigration(migration, part.label);
      } else if (Array.isArray(part)) {
        for (const def of part as readonly TypeDefinition[]) reg.add(def, `part ${i + 1} of the composition`);
      } else {
        const described = part as {
          source: string;
          types?: readonly TypeDefinition[];
          migrations?: readonly Migration[];
        };
        for (const def of described.types ?? []) reg.add(def, described.source);
        for (const migration of described.migrations ?? []) reg.addMigration(migration, described.source);
      }
    });
    return reg;
  }

  /** Number of registered types. */
  get size(): number {
    return this.table.size;
  }

  get(type: string): TypeDefinition | undefined {
    return this.table.get(type)?.def;
  }

  has(type: string): boolean {
    return this.table.has(type);
  }

  /** All registered types, in registration order. */
  types(): TypeDefinition[] {
    return [...this.table.values()].map((e) => e.def);
  }

  /** Where a type came from, for messages (`statebag (TextContent at src/runtime/messages.ts:58)`). */
  describe(type: string): string | undefined {
    const entry = this.table.get(type);
    return entry && `"${type}" v${entry.def.version} from ${describeEntry(entry)}`;
  }

  /** The current `$type` a former name was renamed to, if any. */
  renamedTo(formerName: string): string | undefined {
    return this.formerIndex.get(formerName);
  }

  /** Adds a prebuilt definition (generated code, or one built by hand). */
  add(def: TypeDefinition, source = this.label): void {
    checkDefinition(def, source);
    this.addEntry(def, source, compileSlots(def.slots));
  }

  private addEntry(def: TypeDefinition, origin: string, slotTree: SlotNode | null, slotWalk?: SlotWalk | null): void {
    const incoming = { def, origin };
    const existing = this.table.get(def.$type);
    if (existing !== undefined) {
      if (existing.def === def) return; // the same definition reached us twice (e.g. composed twice)
      throw new RegistryError(
        `$type "${def.$type}" is defined twice: by ${describeEntry(existing)} and by ${describeEntry(incoming)}`,
        `$type ids are unique across the whole registry; rename one (namespace your own, e.g. "acme.${def.$type}")`,
      );
    }
    const renamedTo = this.formerIndex.get(def.$type);
    if (renamedTo !== undefined) {
      const owner = this.table.get(renamedTo);
      throw new RegistryError(
        `$type "${def.$type}" from ${describeEntry(incoming)} is a former name of "${renamedTo}"${owner ? ` from ${describeEntry(owner)}` : ""}`,
        "former names stay reserved forever (stored values under them are renamed on load); choose another id",
      );
    }
    for (const former of def.formerNames ?? []) {
      const clash = this.table.get(former);
      if (clash !== undefined) {
        throw new RegistryError(
          `"${former}", a former name of "${def.$type}" from ${describeEntry(incoming)}, is registered as a type by ${describeEntry(clash)}`,
          "former names stay reserved forever; rename the other type",
        );
      }
      const other = this.formerIndex.get(former);
      if (other !== undefined && other !== def.$type) {
        const owner = this.table.get(other);
        throw new RegistryError(
          `"${former}" is claimed as a former name by both "${other}"${owner ? ` (${describeEntry(owner)})` : ""} and "${def.$type}" (${describeEntry(incoming)})`,
          "a stored value under a former name must rename to exactly one type",
        );
      }
    }
    for (const former of def.formerNames ?? []) this.formerIndex.set(former, def.$type);
    for (const stored of def.storedVersions ?? [])
      this.storedIndex.set(`${stored.$type}\u0000${stored.version}`, stored);
    this.table.set(def.$type, {
      def,
      origin,
      slotTree,
      slotWalk: slotWalk !== undefined ? slotWalk : slotTree === null ? null : compileSlotWalk(slotTree, def.$type),
    });
  }

  /**
   * Registers a type at runtime, without codegen, from a TypeBox (or plain JSON) schema.
   * Registering a `$type` that exists is an error.
   *
   * ```ts
   * registry.register({ $type: "acme.Summary", version: 2, schema: Type.Object({ summary: Type.String() }) });
   * ```
   */
  register(spec: RegisterTypeSpec): TypeDefinition {
    if (typeof spec !== "object" || spec === null)
      throw new RegistryError("register() needs { $type, version, schema }");
    const source = callerSource();
    checkTypeId(spec.$type, "register(): $type");
    const $type = spec.$type;
    const version = spec.version ?? 1;
    if (typeof version !== "number" || !Number.isInteger(version) || version < 1)
      throw new RegistryError(
        `register("${$type}"): version must be an integer >= 1, found ${JSON.stringify(version)}`,
      );
    const family = spec.family ?? PROVIDER_STATE_FAMILY;
    if (typeof family !== "string" || family.length === 0)
      throw new RegistryError(`register("${$type}"): family must be a non-empty string`);
    const existing = this.table.get($type);
    if (existing !== undefined) {
      throw new RegistryError(
        `register("${$type}"): the type is already registered by ${describeEntry(existing)}`,
        "register each type once; to change it, bump its version and add a migration",
      );
    }
    const schema = this.prepareSchema(spec, $type, version);
    let validate: Validator;
    try {
      validate = this.ajv().compile(schema) as Validator;
    } catch (cause) {
      throw new RegistryError(
        `register("${$type}"): ajv cannot compile the schema: ${cause instanceof Error ? cause.message : String(cause)}`,
        /unknown format/.test(String(cause))
          ? "pass the format's checker in new TypeRegistry({ formats: { name: (s) => boolean } })"
          : "check the schema (draft-07 JSON Schema or TypeBox 0.34)",
        cause,
      );
    }
    const def: TypeDefinition = {
      $type,
      family,
      version,
      schema,
      validate,
      slots: (spec.slots ?? []).map((s) => ({ path: [...s.path], family: s.family })),
      ...(spec.name !== undefined ? { name: spec.name } : {}),
      ...(source !== undefined ? { source } : {}),
      ...(spec.formerNames !== undefined ? { formerNames: [...spec.formerNames] } : {}),
    };
    allErrorsDefs.add(def);
    this.add(def, "runtime registration");
    return def;
  }

  private prepareSchema(spec: RegisterTypeSpec, $type: string, version: number): Record<string, unknown> {
    if (typeof spec.schema !== "object" || spec.schema === null || Array.isArray(spec.schema))
      throw new RegistryError(`register("${$type}"): schema must be an object schema`);
    const schema = plainSchema(spec.schema, spec.open === true, true, 0) as Record<string, unknown>;
    if (schema.type !== "object" || typeof schema.properties !== "object" || schema.properties === null) {
      throw new RegistryError(
        `register("${$type}"): the schema must describe an object with properties (Type.Object({...}))`,
        "a tagged value is always a JSON object; unions are separate types, each with its own $type",
      );
    }
    const props = schema.properties as Record<string, unknown>;
    const declared = props.$type as { const?: unknown; enum?: unknown[] } | undefined;
    if (declared !== undefined && declared.const !== undefined && declared.const !== $type) {
      throw new RegistryError(
        `register("${$type}"): the schema's $type is ${JSON.stringify(declared.const)}, not "${$type}"`,
      );
    }
    // $type and $version are the registry's: described here, first among the properties.
    const ownProps: Record<string, unknown> = {
      $type: { type: "string", const: $type },
      $version: { type: "integer", const: version },
    };
    for (const key of Object.keys(props)) if (key !== "$type" && key !== "$version") setOwn(ownProps, key, props[key]);
    schema.properties = ownProps;
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    required.delete("$type");
    required.delete("$version");
    schema.required = ["$type", ...(version > 1 ? ["$version"] : []), ...required];
    for (const slot of spec.slots ?? []) opaqueSlot(schema, slot.path);
    return schema;
  }

  /**
   * @internal The validator to explain a failure with: generated validators stop at the first
   * error (`allErrors: false`, the fastest on the hot path), so on the error path the type's schema
   * is compiled once more with `allErrors` to report every problem of the value. Falls back to the
   * type's own validator when its schema does not compile here.
   */
  reportValidator(def: TypeDefinition): Validator {
    const cached = reportValidators.get(def);
    if (cached !== undefined) return cached;
    let validator: Validator = def.validate;
    if (!allErrorsDefs.has(def)) {
      try {
        validator = this.reportAjv().compile(def.schema) as Validator;
      } catch {
        validator = def.validate;
      }
    }
    reportValidators.set(def, validator);
    return validator;
  }

  /**
   * Where `value` fails the schema it was stored under (empty when it matches). Compiled on first
   * use: only values that need migrating get here. A schema that does not compile checks nothing.
   */
  private storedProblems(stored: StoredVersion, value: unknown): StoredProblem[] {
    let validate = storedValidators.get(stored);
    if (validate === undefined) {
      try {
        validate = this.reportAjv().compile(stored.schema) as Validator;
      } catch {
        validate = null;
      }
      storedValidators.set(stored, validate);
    }
    if (validate === null || validate(value)) return [];
    return (validate.errors ?? []).map((e) => ({
      ...describeAjvError(e),
      ...(stored.file !== undefined ? { file: stored.file } : {}),
    }));
  }

  private reportAjvInstance: AjvInstance | undefined;
  private reportAjv(): AjvInstance {
    // Lenient: the schema was already checked strictly where it was compiled first.
    this.reportAjvInstance ??= new Ajv({
      allErrors: true,
      ownProperties: true,
      strict: false,
      allowUnionTypes: true,
      formats: this.formats,
      validateSchema: false,
      addUsedSchema: false,
    });
    return this.reportAjvInstance;
  }

  private ajv(): AjvInstance {
    if (this.ajvInstance === undefined) {
      const options: AjvOptions = {
        allErrors: true,
        // Read own properties only: a property named like an Object.prototype member
        // ("constructor", "toString") must not be found on the prototype.
        ownProperties: true,
        strict: true,
        strictTypes: false,
        strictTuples: false,
        strictRequired: false,
        allowUnionTypes: true,
        formats: this.formats,
      };
      this.ajvInstance = new Ajv(options);
    }
    return this.ajvInstance;
  }

  // ---------------------------------------------------------------------------------------------
  // Migrations

  /** Adds migration steps (see `defineMigration`). */
  addMigration(migration: Migration, source?: string): this;
  addMigration(...migrations: Migration[]): this;
  addMigration(...args: (Migration | string | undefined)[]): this {
    const source = typeof args[args.length - 1] === "string" ? (args.pop() as string) : undefined;
    for (const migration of args as Migration[]) {
      if (typeof migration !== "object" || migration === null || typeof migration.up !== "function")
        throw new MigrationDefinitionError("addMigration() takes values built by defineMigration()");
      const current = this.table.get(migration.type);
      if (current !== undefined) {
        if (migration.toType !== migration.type) {
          throw new MigrationDefinitionError(
            `a migration renames "${migration.type}" to "${migration.toType}", but "${migration.type}" is still a registered type (${describeEntry(current)})`,
            "a renamed type's old id must no longer be registered",
          );
        }
        if (migration.from >= current.def.version) {
          throw new MigrationDefinitionError(
            `a migration reads "${migration.type}" v${migration.from}, but the latest "${migration.type}" is v${current.def.version}`,
            "migrations read versions older than the latest",
          );
        }
      }
      this.migrationSet.add(migration, source ?? migration.source ?? this.label);
    }
    return this;
  }

  /** The migration steps this registry holds. */
  migrations(): Migration[] {
    return [...this.migrationSet];
  }

  /**
   * True when `value` (a tagged object) is older than its type's latest version, or sits under a
   * former name: `upgrade` would change it.
   */
  needsUpgrade(value: { $type: string; $version?: number }): boolean {
    const entry = this.table.get(value.$type);
    if (entry === undefined) return this.formerIndex.has(value.$type) || this.migrationSet.hasType(value.$type);
    return (value.$version ?? 1) < entry.def.version;
  }

  /**
   * Brings a tagged value to the latest version of its type by running migration steps. Returns
   * a new object (or `value` itself when it is current); `value` is never modified (with
   * `owned`, for a value parsed by the caller and discarded on error, it is not copied first). Throws
   * `MigrationError` naming the type, the versions and `pointer`.
   */
  upgrade<T = unknown>(value: { $type: string; $version?: number }, pointer = "", options?: { owned?: boolean }): T {
    const result = this.migrationSet.run(
      value as Record<string, unknown>,
      pointer,
      this.targets,
      options?.owned === true,
    );
    const invalid = result.invalidStored;
    if (invalid !== undefined) {
      // The stored value did not match its own version and the steps carried it on: if the result
      // fails the latest version too, the data is at fault, not the last step.
      const def = this.table.get((result.value as { $type: string }).$type)?.def;
      if (def !== undefined && !def.validate(result.value)) {
        const latest = def.validate.errors?.[0];
        const where = latest ? describeAjvError(latest) : undefined;
        throw invalidStoredData(
          invalid.problem,
          { type: invalid.type, version: invalid.version, step: invalid.step, pointer },
          `migrated to "${def.$type}" v${def.version}, it does not match that version either${where ? ` (at ${pointer + where.pointer || "/"}: ${where.message})` : ""}`,
        );
      }
    }
    return result.value as T;
  }
}

/** Per stored version: its compiled schema (null: it did not compile). */
const storedValidators = new WeakMap<StoredVersion, Validator | null>();

/** An ajv error as a pointer into the value and a sentence. */
function describeAjvError(e: {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}): { pointer: string; message: string } {
  const child = (name: unknown) => `${e.instancePath}/${String(name).replace(/~/g, "~0").replace(/\//g, "~1")}`;
  if (e.keyword === "required")
    return {
      pointer: child(e.params.missingProperty),
      message: `missing required property "${String(e.params.missingProperty)}"`,
    };
  if (e.keyword === "additionalProperties")
    return {
      pointer: child(e.params.additionalProperty),
      message: `unexpected property "${String(e.params.additionalProperty)}"`,
    };
  return { pointer: e.instancePath, message: e.message ?? `fails "${e.keyword}"` };
}

/** Definitions whose own validator already reports all errors (runtime registrations). */
const allErrorsDefs = new WeakSet<TypeDefinition>();
/** Per definition: the validator used to explain failures (see `reportValidator`). */
const reportValidators = new WeakMap<TypeDefinition, Validator>();
