/**
 * Typed, owned access to a session's state bag.
 *
 * During a run, providers never touch `session.stateBag` directly: they read and write through a
 * `StagedState`, which the agent commits to the session only when the whole run succeeded. That is
 * what makes a run atomic (a throwing client or provider, or an abandoned stream, leaves the
 * session exactly as it was) and what keeps one provider from overwriting another's key.
 */
import { StatebagError, StateTypeError } from "./errors.js";
import type { AgentSession, StateBag } from "./session.js";
import { versionOf, type TaggedValue } from "./tagged.js";

/** Read/write access to state bag values by key. */
export interface StateAccess {
  get(key: string): TaggedValue | undefined;
  set(key: string, value: TaggedValue): void;
}

/** Copy-on-write view of a session's state bag for the length of one run. */
export class StagedState implements StateAccess {
  private readonly changes = new Map<string, TaggedValue>();
  constructor(private readonly bag: StateBag) {}

  get(key: string): TaggedValue | undefined {
    return this.changes.has(key) ? this.changes.get(key) : Object.hasOwn(this.bag, key) ? this.bag[key] : undefined;
  }

  set(key: string, value: TaggedValue): void {
    this.changes.set(key, value);
  }

  get changedKeys(): readonly string[] {
    return [...this.changes.keys()];
  }

  /** Writes the staged values into the bag. Keys nobody wrote keep their exact values. */
  commitTo(bag: StateBag): void {
    for (const [key, value] of this.changes) bag[key] = value;
  }
}

/**
 * A provider's view of the staged state: it may read any key, but write only its own. A run never
 * deletes or replaces state it does not own.
 */
export class OwnedStateAccess implements StateAccess {
  constructor(
    private readonly staged: StateAccess,
    readonly ownerKey: string,
  ) {}

  get(key: string): TaggedValue | undefined {
    return this.staged.get(key);
  }

  set(key: string, value: TaggedValue): void {
    if (key !== this.ownerKey) {
      throw new StatebagError(
        "state-ownership",
        `provider "${this.ownerKey}" tried to write state bag key "${key}", which it does not own`,
        {
          hint: "a provider writes only under its own key; read other keys, never write them",
        },
      );
    }
    this.staged.set(key, value);
  }
}

/** The session's state is at another version than the one this code reads and writes. */
export class StateVersionError extends StatebagError {
  constructor(
    readonly key: string,
    readonly stateType: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      "state-version",
      found > known
        ? `state bag key "${key}" holds "${stateType}" version ${found}, but this code reads and writes version ${known}`
        : `state bag key "${key}" holds "${stateType}" version ${found}, older than version ${known} this code reads and writes`,
      {
        hint:
          found > known
            ? `either the session was written by a newer release (upgrade; the state is kept untouched meanwhile), or this provider's version is behind its type: ` +
              `construct ProviderSessionState with the generated descriptor (\`new ProviderSessionState(key, ${descriptorName(stateType)}, { initial })\` from src/generated/descriptors.ts) so the version comes from the type`
            : "load the session with deserializeSession() (or a store) so migrations bring it to the latest version before a provider reads it",
      },
    );
  }
}

/** The descriptor name the generator emits for a `$type` (`acme.NotesState` -> `NotesStateType`), for messages. */
function descriptorName(stateType: string): string {
  const last = stateType.slice(stateType.lastIndexOf(".") + 1).replace(/[^A-Za-z0-9_$]/g, "_");
  return `${/^[0-9]/.test(last) ? "_" : ""}${last}Type`;
}

/** Any declared tagged type (interfaces have no index signature, so not `TaggedValue`). */
export type TaggedShape = { $type: string; $version?: number };

/**
 * The version a tagged type is declared at, read from the type itself:
 * `ProviderState<"acme.NotesState", 2>` gives `2` (version 1 declares `$version?: 1`, which gives
 * `1`). A type without a literal version (a hand-written `{ $type: string }`) gives `number`.
 */
export type VersionOf<T> = T extends { $version: infer V extends number }
  ? V
  : T extends { $version?: infer V }
    ? [Exclude<V, undefined>] extends [never]
      ? number
      : Exclude<V, undefined>
    : number;

/** The `$type` a tagged type is declared with (`string` when it has no literal one). */
export type TypeIdOf<T> = T extends { $type: infer I extends string } ? I : string;

/** Type-level only: ties a descriptor to the state type it describes, so it can be inferred from it. */
declare const describedState: unique symbol;

/**
 * What a state type is on the wire: its `$type` and the version this code reads and writes.
 * `npm run gen` emits one per provider state type in `src/generated/descriptors.ts`:
 *
 * ```ts
 * export const NotesStateType: StateDescriptor<NotesState> = { $type: "acme.NotesState", version: 2 };
 * ```
 *
 * Both fields are typed from the state type, so a descriptor whose version is behind its type
 * (`version: 1` for `ProviderState<"acme.NotesState", 2>`) does not compile.
 */
export interface StateDescriptor<T extends TaggedShape = TaggedShape> {
  readonly $type: T["$type"];
  readonly version: VersionOf<T>;
  readonly [describedState]?: T;
}

/**
 * `() => T`, written so that `T` is inferred from the descriptor alone: the initial value is then
 * checked against the declared type (literal `$type`/`$version`) instead of widening it.
 */
export type InitialState<T> = [T] extends [unknown] ? () => T : never;

/** The long form, for a state type without a generated descriptor: pass `T` explicitly. */
export interface ProviderSessionStateOptions<T extends TaggedShape> {
  /** The `$type` this state carries. */
  stateType: T["$type"];
  /** The version this code reads and writes: the type's own (`ProviderState<"x", 2>` accepts only `2`). */
  version: VersionOf<T>;
  /** Fresh state for a session that has none yet. */
  initial: () => T;
}

function isSession(source: AgentSession | StateAccess): source is AgentSession {
  return typeof (source as AgentSession).stateBag === "object" && typeof (source as StateAccess).get !== "function";
}

function isVersion(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1;
}

/**
 * A provider's typed state under one stable key. Reading checks the `$type` (two providers sharing
 * a key is caught, not silently overwritten) and the version (a newer writer's state is never
 * clobbered by older code).
 *
 * ```ts
 * readonly state = new ProviderSessionState(this.key, NotesStateType, { initial: () => ({ $type: "acme.NotesState", $version: 2, notes: [] }) });
 * ```
 *
 * The version comes from the state type through its descriptor, so bumping the type's version
 * (and regenerating) moves the provider along; nothing typed by hand can fall behind.
 *
 * State values are treated as immutable: write a new value with `write` rather than mutating what
 * `read` returned, so an aborted run leaves nothing behind.
 */
export class ProviderSessionState<T extends TaggedShape = never> {
  /** The `$type` this state carries. */
  readonly stateType: T["$type"];
  /** The version this code reads and writes. */
  readonly version: VersionOf<T>;
  private readonly initial: () => T;

  /** With the generated descriptor (`src/generated/descriptors.ts`): `T` is inferred from it. */
  constructor(key: string, type: StateDescriptor<T>, options: { initial: NoInfer<InitialState<T>> });
  /** Without a descriptor: `new ProviderSessionState<NotesState>(key, { stateType, version, initial })`. */
  constructor(key: string, options: ProviderSessionStateOptions<NoInfer<T>>);
  constructor(
    readonly key: string,
    typeOrOptions: StateDescriptor<T> | ProviderSessionStateOptions<T>,
    options?: { initial: InitialState<T> },
  ) {
    const legacy = "stateType" in typeOrOptions;
    const stateType = legacy ? typeOrOptions.stateType : typeOrOptions.$type;
    const version: unknown = typeOrOptions.version;
    const initial: unknown = legacy ? typeOrOptions.initial : options?.initial;
    if (typeof stateType !== "string" || stateType.length === 0) {
      throw new StatebagError(
        "state-descriptor",
        `ProviderSessionState for key "${key}": the state's $type must be a non-empty string, found ${typeof stateType}`,
        {
          hint: "pass the generated descriptor: new ProviderSessionState(key, NotesStateType, { initial }) (src/generated/descriptors.ts)",
        },
      );
    }
    if (!isVersion(version)) {
      throw new StatebagError(
        "state-descriptor",
        `ProviderSessionState for key "${key}" ("${stateType}"): version must be an integer >= 1, found ${typeof version === "number" ? version : typeof version}`,
        {
          hint: "pass the generated descriptor, whose version comes from the type's ProviderState<..., N> marker",
        },
      );
    }
    if (typeof initial !== "function") {
      throw new StatebagError(
        "state-descriptor",
        `ProviderSessionState for key "${key}" ("${stateType}"): initial must be a function returning fresh state`,
        {
          hint: `new ProviderSessionState(key, descriptor, { initial: () => ({ $type: "${stateType}", ... }) })`,
        },
      );
    }
    this.stateType = stateType;
    this.version = version as VersionOf<T>;
    this.initial = initial as () => T;
  }

  /** The state, or undefined when the session has none under this key. */
  read(source: AgentSession | StateAccess): T | undefined {
    const value = isSession(source)
      ? Object.hasOwn(source.stateBag, this.key)
        ? source.stateBag[this.key]
        : undefined
      : source.get(this.key);
    if (value === undefined) return undefined;
    if (value === null || typeof value !== "object" || value.$type !== this.stateType) {
      throw new StateTypeError(this.key, this.stateType, value);
    }
    const version = versionOf(value);
    if (version !== this.version) throw new StateVersionError(this.key, this.stateType, version, this.version);
    return value as unknown as T;
  }

  readOrInit(source: AgentSession | StateAccess): T {
    return this.read(source) ?? this.initial();
  }

  write(target: AgentSession | StateAccess, value: T): void {
    if (value === null || typeof value !== "object" || value.$type !== this.stateType)
      throw new StateTypeError(this.key, this.stateType, value);
    const written = versionOf(value as unknown as TaggedValue);
    if (written !== this.version) {
      // Caught here, not on the next turn: a value tagged with another version would fail every later read.
      throw new StatebagError(
        "state-version",
        `provider state "${this.key}" ("${this.stateType}") was written with $version ${written}, but this code writes version ${this.version}`,
        {
          hint:
            this.version === 1
              ? "leave $version out (or set it to 1) for version 1"
              : `set $version: ${this.version} on the value (the type's ProviderState<..., ${this.version}> marker requires it)`,
        },
      );
    }
    // Check what is there first: never overwrite state this code does not understand.
    this.read(target);
    const tagged = value as unknown as TaggedValue;
    if (isSession(target)) target.stateBag[this.key] = tagged;
    else target.set(this.key, tagged);
  }
}
