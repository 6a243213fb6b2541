/**
 * Migrations: how a stored value written by older code becomes the value today's code reads.
 *
 * A migration is one step for one `$type`: it reads version `from` and writes version `to`
 * (`to > from`), or it renames the type (`to: { type: "newName", version }`). On load, before a
 * tagged value is validated, `MigrationSet.run` chains steps from the value's (type, version) to
 * the latest version of the type the registry knows:
 *
 * ```ts
 * defineMigration({ type: "acme.Summary", from: 1, to: 2, up: (v) => ({ ...v, lines: [v.text] }) });
 * defineMigration({ type: "acme.NotesState", from: 2, to: { type: "acme.Notes", version: 3 }, up: (v) => v }); // a rename
 * ```
 *
 * - `up` receives a private deep copy and may mutate it or return a new object; the runner then
 *   sets `$type` (and `$version`, when the target version is above 1) itself.
 * - The input value is never touched: if any step fails, the caller's value is exactly as it was.
 * - A `$type` listed in a type's `formerNames` with no explicit step is a pure rename at the same
 *   version (the common case: an id changed, the shape did not).
 * - Errors name the type, the versions and the JSON pointer of the value.
 */
import { StatebagError } from "../core/errors.js";
import type { TypeIdOf, VersionOf } from "../core/state-bag.js";
import { setOwn } from "../core/json.js";

/** What `up` is told about the step it runs. */
export interface MigrationContext {
  /** JSON pointer of the value in the document being loaded. */
  pointer: string;
  type: string;
  from: number;
  toType: string;
  to: number;
}

/** `T` without its `$type`/`$version` tag (index signatures kept, unlike `Omit`). */
export type Untagged<T> = { [K in keyof T as K extends "$type" | "$version" ? never : K]: T[K] };

/**
 * What `up` returns for a step writing `Out`: every field of `Out`; `$type` and `$version` may be
 * left out or carried over from the input (`{ ...v, ... }`), since the runner sets them.
 */
export type MigrationResult<Out> = Untagged<Out> & { $type?: string; $version?: number };

/**
 * One step. With the generated version types (`src/generated/versions.ts`) the compiler checks it
 * against both versions' shapes:
 *
 * ```ts
 * defineMigration<NotesState_v1, NotesState_v2>({ type: "acme.NotesState", from: 1, to: 2, up: (v) => ({ notes: ... }) });
 * ```
 *
 * `type`, `from` and `to` must then match the two types' `$type` and `$version`, and `up` must
 * return every required field of the newer version. Without type arguments nothing is checked.
 */
// biome-ignore lint/suspicious/noExplicitAny: an untyped migration (no version types given) reads and returns any shape; typed ones pass <In, Out>
export interface MigrationSpec<In = any, Out = any> {
  /** The `$type` this step reads. */
  type: TypeIdOf<In>;
  /** The version this step reads. */
  from: VersionOf<In>;
  /** The version it writes (same type), or the new name and version (a rename). */
  to: TypeIdOf<Out> extends TypeIdOf<In>
    ? VersionOf<Out> | { type: TypeIdOf<Out>; version: VersionOf<Out> }
    : { type: TypeIdOf<Out>; version: VersionOf<Out> };
  /** Builds the newer value. Gets a private copy: mutating it is fine. */
  // biome-ignore lint/suspicious/noExplicitAny: an untyped migration (no version types given) reads and returns any shape; typed ones pass <In, Out>
  up(value: In, context: MigrationContext): 0 extends 1 & Out ? any : MigrationResult<Out>;
}

export interface Migration {
  readonly type: string;
  readonly from: number;
  readonly toType: string;
  readonly to: number;
  // biome-ignore lint/suspicious/noExplicitAny: an untyped migration (no version types given) reads and returns any shape; typed ones pass <In, Out>
  readonly up: (value: any, context: MigrationContext) => unknown;
  /** Where the migration was defined (`file:line`), for messages. */
  readonly source?: string;
}

/** Thrown for a migration that is defined wrongly (at definition or registration time). */
export class MigrationDefinitionError extends StatebagError {
  constructor(message: string, hint?: string) {
    super("migration-definition", message, { hint });
  }
}

/** A value could not be brought to the current version. */
export class MigrationError extends StatebagError {
  /** The message with the value's place written another way (see `messageAt`). */
  readonly #describe: ((place: string) => string) | undefined;
  constructor(
    /** The sentence, or the sentence for a way of writing the value's place (`details.pointer`, "/" for the root). */
    message: string | ((place: string) => string),
    readonly details: {
      /**
       * `no-step`: nothing reads this (type, version); `failed`: a step threw (or, with `type`/`from`
       * naming an earlier step, that step returned a value its version's schema rejects and the next
       * step failed on it); `bad-result`: a step returned a non-object; `invalid-data`: a step failed on a
       * stored value that does not match its own version's schema (the data is wrong, not the step);
       * `loop`/`overshoot`: the chain is inconsistent.
       */
      reason: "no-step" | "failed" | "bad-result" | "invalid-data" | "loop" | "overshoot";
      type: string;
      from: number;
      to?: number;
      toType?: string;
      pointer: string;
      hint?: string;
      cause?: unknown;
      /** With `failed` naming an earlier step: where that step's result fails its version's schema. */
      invalidResult?: StoredProblem;
    },
    /** How the message writes the value's place; default `details.pointer` ("/" for the root). */
    place: string = details.pointer || "/",
  ) {
    super("migration", typeof message === "string" ? message : message(place), {
      hint: details.hint,
      cause: details.cause,
    });
    this.#describe = typeof message === "string" ? undefined : message;
  }
  /**
   * The message with the value's place written as `at` (a shortened pointer, "the document
   * root"), for a report that shows places its own way; the message as it is otherwise.
   */
  messageAt(place: string): string {
    return this.#describe === undefined ? this.message : this.#describe(place);
  }
  get reason(): MigrationError["details"]["reason"] {
    return this.details.reason;
  }
  get type(): string {
    return this.details.type;
  }
  get from(): number {
    return this.details.from;
  }
  get to(): number | undefined {
    return this.details.to;
  }
  get pointer(): string {
    return this.details.pointer;
  }
}

function isVersion(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 1;
}

/** Declares one migration step (checked here; applied by a registry that holds it). */
// biome-ignore lint/suspicious/noExplicitAny: an untyped migration (no version types given) reads and returns any shape; typed ones pass <In, Out>
export function defineMigration<In = any, Out = any>(spec: MigrationSpec<In, Out>): Migration {
  if (typeof spec !== "object" || spec === null)
    throw new MigrationDefinitionError("defineMigration needs { type, from, to, up }");
  // Checked field by field: the typed spec says what the compiler allows, not what arrives.
  const { type, from, to, up } = spec as { type: unknown; from: unknown; to: unknown; up: unknown };
  if (typeof type !== "string" || type.length === 0)
    throw new MigrationDefinitionError(`migration "type" must be a non-empty string, found ${JSON.stringify(type)}`);
  if (!isVersion(from))
    throw new MigrationDefinitionError(
      `migration of "${type}": "from" must be an integer >= 1, found ${JSON.stringify(from)}`,
    );
  if (typeof up !== "function")
    throw new MigrationDefinitionError(`migration of "${type}" v${from}: "up" must be a function`);
  let toType = type;
  let toVersion: number;
  if (typeof to === "number") {
    toVersion = to;
  } else if (
    typeof to === "object" &&
    to !== null &&
    typeof (to as { type?: unknown }).type === "string" &&
    (to as { type: string }).type.length > 0
  ) {
    toType = (to as { type: string }).type;
    toVersion = (to as { version: number }).version;
  } else {
    throw new MigrationDefinitionError(
      `migration of "${type}" v${from}: "to" must be a version number or { type, version }`,
    );
  }
  if (!isVersion(toVersion))
    throw new MigrationDefinitionError(
      `migration of "${type}" v${from}: target version must be an integer >= 1, found ${JSON.stringify(toVersion)}`,
    );
  if (toType === type && toVersion <= from) {
    throw new MigrationDefinitionError(
      `migration of "${type}" goes from v${from} to v${toVersion}: a step must raise the version`,
      "versions only go up; to undo a change, write a new version",
    );
  }
  return Object.freeze({ type, from, toType, to: toVersion, up: up as Migration["up"], source: callerSource() });
}

/** `file:line` of the first stack frame outside statebag's runtime (best effort, for messages). */
export function callerSource(): string | undefined {
  const stack = new Error().stack;
  if (!stack) return undefined;
  for (const line of stack.split("\n").slice(1)) {
    if (/src[\\/]runtime[\\/]registry[\\/](migrations|registry)\.[tj]s/.test(line) || line.includes("node:internal"))
      continue;
    const frameMatch = /\(?((?:file:\/\/)?[^\s()]+):(\d+):\d+\)?\s*$/.exec(line);
    if (frameMatch) return `${frameMatch[1].replace(/^file:\/\//, "")}:${frameMatch[2]}`;
  }
  return undefined;
}

/** Upgrade target lookup the runner needs from a registry. */
export interface MigrationTargets {
  /** Latest version of a currently registered `$type`, or undefined. */
  latestVersion(type: string): number | undefined;
  /** The current `$type` a former name now belongs to, or undefined. */
  renamedTo(formerName: string): string | undefined;
  /**
   * Checks a value against the schema it was stored under at (type, version): its problems (empty
   * when valid), or undefined when that version's schema is not known. Asked before each step.
   */
  storedProblems?(type: string, version: number, value: unknown): readonly StoredProblem[] | undefined;
}

/** Where a value fails its own version's schema. */
export interface StoredProblem {
  /** JSON pointer inside the value. */
  pointer: string;
  message: string;
  /** The schema's file (`schemas/history/...`), for messages. */
  file?: string;
}

export interface UpgradeResult {
  /** The upgraded value (a new object), or the input itself when nothing had to change. */
  value: unknown;
  /** Number of steps applied (0: the input was already current). */
  steps: number;
  /**
   * The stored value did not match its own version's schema, yet every step ran. The registry then
   * checks the result at the latest version: invalid there too, it is reported as invalid stored data.
   */
  invalidStored?: { problem: StoredProblem; type: string; version: number; step: Migration };
}

const MAX_STEPS = 10_000;

/** The steps a registry holds, keyed by (type, from). */
export class MigrationSet {
  private readonly steps = new Map<string, Map<number, Migration>>();

  get size(): number {
    let count = 0;
    for (const byVersion of this.steps.values()) count += byVersion.size;
    return count;
  }

  *[Symbol.iterator](): IterableIterator<Migration> {
    for (const byVersion of this.steps.values()) yield* byVersion.values();
  }

  /** The step that reads (type, from), if any. */
  get(type: string, from: number): Migration | undefined {
    return this.steps.get(type)?.get(from);
  }

  /** True when some step reads `type` (at any version). */
  hasType(type: string): boolean {
    return this.steps.has(type);
  }

  add(migration: Migration, where = "this registry"): void {
    let byFrom = this.steps.get(migration.type);
    if (byFrom === undefined) {
      byFrom = new Map();
      this.steps.set(migration.type, byFrom);
    }
    const existing = byFrom.get(migration.from);
    if (existing !== undefined && existing !== migration) {
      throw new MigrationDefinitionError(
        `two migrations read "${migration.type}" v${migration.from}: one to ${describeTarget(existing)}${existing.source ? ` (${existing.source})` : ""}, one to ${describeTarget(migration)}${migration.source ? ` (${migration.source})` : ""} in ${where}`,
        "each (type, from) has exactly one step; remove one of them",
      );
    }
    byFrom.set(migration.from, migration);
  }

  /**
   * Brings `value` (a tagged object) to the latest version of its type. The input is never
   * modified, unless `owned`: a value the caller just parsed and throws away on error (a document
   * loaded from text) is not copied first, and steps may then change it in place.
   * Throws `MigrationError` naming type, versions and `pointer`.
   */
  run(value: Record<string, unknown>, pointer: string, targets: MigrationTargets, owned = false): UpgradeResult {
    const startType = value.$type as string;
    const startVersion = value.$version === undefined ? 1 : (value.$version as number);
    let type = startType;
    let version = startVersion;
    let current: Record<string, unknown> = value;
    let copied = owned;
    let steps = 0;
    /** The last step that ran (a pure rename is none): blamed when its result fails its version's schema. */
    let previous: Migration | undefined;
    let invalidStored: UpgradeResult["invalidStored"];
    const seen = new Set<string>();
    for (;;) {
      const latest = targets.latestVersion(type);
      if (latest !== undefined && version === latest)
        return { value: current, steps, ...(invalidStored ? { invalidStored } : {}) };
      if (latest !== undefined && version > latest) {
        throw new MigrationError(
          (place) =>
            `migrating "${startType}" v${startVersion} at ${place} reached "${type}" v${version}, newer than the latest known v${latest}`,
          {
            reason: "overshoot",
            type,
            from: version,
            to: latest,
            pointer,
            hint: `a migration of "${type}" writes a version the registry does not know; fix its "to"`,
          },
        );
      }
      const key = `${type}\u0000${version}`;
      if (seen.has(key) || steps >= MAX_STEPS) {
        throw new MigrationError(
          (place) => `migrations of "${startType}" v${startVersion} at ${place} loop back to "${type}" v${version}`,
          {
            reason: "loop",
            type,
            from: version,
            pointer,
            hint: "a rename chain leads back to a name it started from; check the migrations' targets",
          },
        );
      }
      seen.add(key);
      const step = this.get(type, version);
      if (step === undefined) {
        const renamed = latest === undefined ? targets.renamedTo(type) : undefined;
        if (renamed !== undefined) {
          // Pure rename at the same version (a former name with no explicit step).
          if (!copied) {
            current = copyForMigration(current, type, version, pointer);
            copied = true;
          }
          current.$type = renamed;
          type = renamed;
          steps++;
          continue;
        }
        throw noStep(startType, startVersion, type, version, latest, pointer);
      }
      // Checked before `up` runs (it may change its input), used only if the step fails: a value that
      // does not match its version's schema explains the failure (a frozen schema is the version as
      // first generated, so a value a later compatible change allowed may not match it: then a
      // working step keeps it loadable).
      const invalid = targets.storedProblems?.(type, version, current)?.[0];
      if (invalid && previous === undefined) invalidStored = { problem: invalid, type, version, step };
      if (!copied) {
        current = copyForMigration(current, type, version, pointer);
        copied = true;
      }
      const context: MigrationContext = { pointer, type, from: version, toType: step.toType, to: step.to };
      let out: unknown;
      try {
        out = step.up(current, context);
      } catch (cause) {
        if (invalid)
          throw invalidInput(invalid, {
            type,
            version,
            step,
            previous,
            pointer,
            what: cause instanceof Error ? cause.message : String(cause),
            cause,
          });
        throw new MigrationError(
          (place) =>
            `migration of "${type}" v${version} -> ${describeTarget(step)} failed at ${place}: ${cause instanceof Error ? cause.message : String(cause)}`,
          {
            reason: "failed",
            type,
            from: version,
            to: step.to,
            toType: step.toType,
            pointer,
            cause,
            hint: step.source ? `the migration is defined at ${step.source}` : undefined,
          },
        );
      }
      if (typeof out !== "object" || out === null || Array.isArray(out)) {
        if (invalid)
          throw invalidInput(invalid, {
            type,
            version,
            step,
            previous,
            pointer,
            what: `it returned ${out === null ? "null" : Array.isArray(out) ? "an array" : typeof out}`,
          });
        throw new MigrationError(
          (place) =>
            `migration of "${type}" v${version} -> ${describeTarget(step)} at ${place} returned ${out === null ? "null" : Array.isArray(out) ? "an array" : typeof out}, not an object`,
          {
            reason: "bad-result",
            type,
            from: version,
            to: step.to,
            toType: step.toType,
            pointer,
            hint: "`up` must return the migrated object",
          },
        );
      }
      const next = out as Record<string, unknown>;
      setOwn(next, "$type", step.toType);
      if (step.to > 1) setOwn(next, "$version", step.to);
      else if (next.$version !== undefined && next.$version !== 1) setOwn(next, "$version", 1);
      current = next;
      type = step.toType;
      version = step.to;
      previous = step;
      steps++;
    }
  }
}

/**
 * A stored value that does not match its own version's schema, and what then went wrong with it
 * (`after`: a step failed on it, or its migrated value fails the latest version too).
 */
export function invalidStoredData(
  problem: StoredProblem,
  at: { type: string; version: number; step: Migration; pointer: string; cause?: unknown },
  after: string,
): MigrationError {
  const { type, version, step, pointer } = at;
  const inside = pointer + problem.pointer;
  const schema = problem.file ? ` (${problem.file})` : "";
  return new MigrationError(
    (place) =>
      `invalid stored data: "${type}" v${version} at ${place} does not match version ${version}'s schema${schema} at ${inside || "/"}: ${problem.message}; ${after}`,
    {
      reason: "invalid-data",
      type,
      from: version,
      to: step.to,
      toType: step.toType,
      pointer: inside,
      cause: at.cause,
      hint: `the stored value is wrong, not the migration: it does not match "${type}" v${version}, so that version's code did not write it; correct or remove it in the store (if values like it were really stored, make the migration${step.source ? ` at ${step.source}` : ""} accept them)`,
    },
    pointer || "/",
  );
}

/**
 * A step failed on a value that does not match its own version's schema: the stored data is
 * invalid (no step ran before), or the step before returned it.
 */
function invalidInput(
  problem: StoredProblem,
  at: {
    type: string;
    version: number;
    step: Migration;
    previous: Migration | undefined;
    pointer: string;
    what: string;
    cause?: unknown;
  },
): MigrationError {
  const { type, version, step, previous, pointer } = at;
  const inside = pointer + problem.pointer;
  const schema = problem.file ? ` (${problem.file})` : "";
  const failed = `migration of "${type}" v${version} -> ${describeTarget(step)} then failed on it: ${at.what}`;
  if (previous === undefined)
    return invalidStoredData(problem, { type, version, step, pointer, cause: at.cause }, failed);
  return new MigrationError(
    (place) =>
      `migration of "${previous.type}" v${previous.from} -> ${describeTarget(previous)} at ${place} returned a value that does not match version ${version}'s schema${schema} at ${inside || "/"}: ${problem.message}; the next ${failed}`,
    {
      reason: "failed",
      type: previous.type,
      from: previous.from,
      to: previous.to,
      toType: previous.toType,
      pointer: inside,
      cause: at.cause,
      invalidResult: problem,
      hint: `fix the migration "${previous.type}" v${previous.from} -> ${describeTarget(previous)}${previous.source ? ` (defined at ${previous.source})` : ""} so it returns a valid v${version}`,
    },
    pointer || "/",
  );
}

/** The private copy a chain works on (so the caller's value is never touched). */
function copyForMigration(
  value: Record<string, unknown>,
  type: string,
  version: number,
  pointer: string,
): Record<string, unknown> {
  try {
    return structuredClone(value);
  } catch (cause) {
    throw new MigrationError(
      (place) =>
        `"${type}" v${version} at ${place} cannot be copied for migration: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        reason: "failed",
        type,
        from: version,
        pointer,
        cause,
        hint: "state values must be plain JSON data",
      },
    );
  }
}

function noStep(
  startType: string,
  startVersion: number,
  type: string,
  version: number,
  latest: number | undefined,
  pointer: string,
): MigrationError {
  const via = type === startType && version === startVersion ? "" : ` (reached from "${startType}" v${startVersion})`;
  if (latest === undefined) {
    return new MigrationError(
      (place) => `"${type}" v${version} at ${place}${via} is no registered type and no migration reads it`,
      {
        reason: "no-step",
        type,
        from: version,
        pointer,
        hint: `register the type, or, if it was renamed, add the step that renames it at the next version: defineMigration({ type: "${type}", from: ${version}, to: { type: "<new $type>", version: ${version + 1} }, up: (v) => v })`,
      },
    );
  }
  return new MigrationError(
    (place) =>
      `"${type}" v${version} at ${place}${via} is older than the latest v${latest} and no migration reads v${version}`,
    {
      reason: "no-step",
      type,
      from: version,
      to: latest,
      pointer,
      hint: `add defineMigration({ type: "${type}", from: ${version}, to: ${version + 1}, up: (value) => ... }) and register it`,
    },
  );
}

function describeTarget(m: Migration): string {
  return m.toType === m.type ? `v${m.to}` : `"${m.toType}" v${m.to}`;
}
