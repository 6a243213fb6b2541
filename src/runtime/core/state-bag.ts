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
      throw new StatebagError("state-ownership", `provider "${this.ownerKey}" tried to write state bag key "${key}", which it does not own`, {
        hint: "a provider writes only under its own key; read other keys, never write them",
      });
    }
    this.staged.set(key, value);
  }
}

/** The session's state, newer than this code can safely rewrite. */
export class StateVersionError extends StatebagError {
  constructor(
    readonly key: string,
    readonly stateType: string,
    readonly found: number,
    readonly known: number,
  ) {
    super(
      "state-version",
      `state bag key "${key}" holds "${stateType}" version ${found}, but this code knows versions up to ${known}`,
      {
        hint:
          found > known
            ? "the session was written by a newer release: upgrade statebag/your provider; the state is kept untouched meanwhile"
            : "load the session with deserializeSession() so migrations bring it to the latest version",
      },
    );
  }
}

/** Any declared tagged type (interfaces have no index signature, so not `TaggedValue`). */
export type TaggedShape = { $type: string; $version?: number };

export interface ProviderSessionStateOptions<T extends TaggedShape> {
  /** The `$type` this state carries. */
  stateType: T["$type"];
  /** The version this code writes (the type's latest). */
  version: number;
  /** Fresh state for a session that has none yet. */
  initial: () => T;
}

function isSession(source: AgentSession | StateAccess): source is AgentSession {
  return typeof (source as AgentSession).stateBag === "object" && typeof (source as StateAccess).get !== "function";
}

/**
 * A provider's typed state under one stable key. Reading checks the `$type` (two providers sharing
 * a key is caught, not silently overwritten) and the version (a newer writer's state is never
 * clobbered by older code).
 *
 * State values are treated as immutable: write a new value with `write` rather than mutating what
 * `read` returned, so an aborted run leaves nothing behind.
 */
export class ProviderSessionState<T extends TaggedShape> {
  constructor(
    readonly key: string,
    readonly options: ProviderSessionStateOptions<T>,
  ) {}

  /** The state, or undefined when the session has none under this key. */
  read(source: AgentSession | StateAccess): T | undefined {
    const value = isSession(source) ? (Object.hasOwn(source.stateBag, this.key) ? source.stateBag[this.key] : undefined) : source.get(this.key);
    if (value === undefined) return undefined;
    if (value === null || typeof value !== "object" || value.$type !== this.options.stateType) {
      throw new StateTypeError(this.key, this.options.stateType, value);
    }
    const version = versionOf(value);
    if (version !== this.options.version) throw new StateVersionError(this.key, this.options.stateType, version, this.options.version);
    return value as unknown as T;
  }

  readOrInit(source: AgentSession | StateAccess): T {
    return this.read(source) ?? this.options.initial();
  }

  write(target: AgentSession | StateAccess, value: T): void {
    if (value.$type !== this.options.stateType) throw new StateTypeError(this.key, this.options.stateType, value);
    // Check what is there first: never overwrite state this code does not understand.
    this.read(target);
    const tagged = value as unknown as TaggedValue;
    if (isSession(target)) target.stateBag[this.key] = tagged;
    else target.set(this.key, tagged);
  }
}
