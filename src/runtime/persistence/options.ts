/**
 * What saving and loading sessions take: `SerializeOptions`, `DeserializeOptions`, and the
 * `MigratedValue` a load reports.
 */
import type { AgentSession, QuarantinedValue } from "../core/session.js";
import type { PreservedValue } from "../core/problems.js";
import type { JsonLimits } from "../json/safe-json.js";
import type { ValidateOptions } from "../validation/validate.js";

export interface SerializeOptions extends ValidateOptions {
  /**
   * Fully validate every tagged value before writing (as on load). Default false: only the session
   * object and the tags of its state values are checked. Stores pass `true`.
   */
  validate?: boolean;
  /** Passed to `JSON.stringify` (pretty printing). Default: compact. */
  space?: string | number;
  /** With `validate: true`: the parse limits the document must meet (pass loading the same ones). See `parseJson`. */
  limits?: JsonLimits;
}

export interface DeserializeOptions extends ValidateOptions {
  /**
   * Parse limits (size, depth, keys, `__proto__` handling). See `parseJson`; unlike `parseJson`,
   * sessions keep `"__proto__"` keys inside values unless `protoKeys: "reject"` is given.
   */
  limits?: JsonLimits;
  /** Called with the values kept verbatim (unknown `$type`s, newer versions), when there are any. */
  onPreserved?: (preserved: PreservedValue[]) => void;
  /** Called with the values migrations changed (outer values before the ones nested in them), when there are any. */
  onMigrated?: (migrated: MigratedValue[]) => void;
  /**
   * Accept a bare session object with no envelope (`JSON.stringify(session)`, read as format
   * version 1). Default true; `false` insists on the envelope.
   */
  allowBare?: boolean;
  /**
   * Set aside what fails instead of refusing the session. A state-bag entry that fails validation
   * or migration (and, in a value with a `messages` array such as `InMemoryChatHistoryState`, a
   * single message that fails) is moved, as its exact original JSON text, to `session.quarantine`
   * with its pointer and first problem; the rest loads. Problems of the document itself (JSON
   * limits, envelope, session id/kind, `"__proto__"` state-bag keys) still refuse it. Values
   * already quarantined are kept as they are. Default false: any problem refuses the session, and
   * a session holding quarantined values is refused with their problems.
   */
  quarantine?: boolean;
  /** With `quarantine`: called per session with the values this load set aside, when there are any. */
  onQuarantined?: (quarantined: QuarantinedValue[], session: AgentSession) => void;
}

/** A value that loading migrated: where it sits, and its type and version before and after. */
export interface MigratedValue {
  /** JSON pointer from the document root. */
  pointer: string;
  fromType: string;
  from: number;
  toType: string;
  to: number;
}
