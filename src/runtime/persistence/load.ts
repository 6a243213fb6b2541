/**
 * Loading sessions: `deserializeSession` and `deserializeSessions`, and `load`, the parse and
 * limits step every load (the message log's too) starts with.
 */
import { describeValue } from "../core/json.js";
import type { AgentSession } from "../core/session.js";
import { defaultRegistry } from "../validation/default-registry.js";
import {
  JsonParseError,
  checkDuplicateKeys,
  checkedKeyCount,
  parseJsonText,
  resolveLimits,
} from "../json/safe-json.js";
import {
  fusedFor,
  fusedLimits,
  fusedSessionDocument,
  fusedSessionsDocument,
  type FusedCount,
} from "../validation/fused.js";
import type { FusedLimits } from "../checks/fused-runtime.js";
import type { DeserializeOptions } from "./options.js";
import { SESSION_FORMAT, SESSIONS_FORMAT, SESSION_FORMAT_VERSION, readEnvelope, sessionLimits } from "./stored-form.js";
import { SessionValidationError, jsonProblem } from "./session-error.js";
import { walkLoaded, type LoadedDocument } from "./walk-loaded.js";
import { walkQuarantining } from "./quarantine.js";

/**
 * Reads one session from its stored form: text, UTF-8 bytes, or an already-parsed object (whose
 * objects are then not modified: if migrations apply, the result is a copy). Throws
 * `SessionValidationError` listing every problem.
 */
export function deserializeSession(
  input: string | Uint8Array | unknown,
  options: DeserializeOptions = {},
): AgentSession {
  const allowBare = options.allowBare !== false;
  const { doc, owned, fused } = load(input, options, "session", (d, limits) =>
    fusedSessionDocument(d, SESSION_FORMAT, SESSION_FORMAT_VERSION, allowBare, limits),
  );
  // Accepted by the fused check: valid, current, nothing to migrate, preserve or set aside.
  if (fused)
    return (
      (doc as { format?: unknown }).format === undefined ? doc : (doc as { session: unknown }).session
    ) as AgentSession;
  const envelope = readEnvelope(doc, SESSION_FORMAT, "session", allowBare);
  const loaded: LoadedDocument = { doc, owned, payload: envelope.value, base: envelope.base, many: false };
  const root = options.quarantine === true ? walkQuarantining(input, loaded, options) : walkLoaded(loaded, options);
  return (envelope.base.length === 0 ? root : (root as Record<string, unknown>).session) as AgentSession;
}

/** Reads a document written by `serializeSessions`. */
export function deserializeSessions(
  input: string | Uint8Array | unknown,
  options: DeserializeOptions = {},
): AgentSession[] {
  const { doc, owned, fused } = load(input, options, "sessions", (d, limits) =>
    fusedSessionsDocument(d, SESSIONS_FORMAT, SESSION_FORMAT_VERSION, limits),
  );
  if (fused) return (doc as { sessions: AgentSession[] }).sessions;
  const envelope = readEnvelope(doc, SESSIONS_FORMAT, "sessions", false);
  const sessions = envelope.value;
  if (!Array.isArray(sessions)) {
    throw new SessionValidationError("cannot load sessions", [
      {
        code: "envelope",
        pointer: "/sessions",
        expected: "an array of sessions",
        found: describeValue(sessions),
        message: '"sessions" must be an array',
      },
    ]);
  }
  const loaded: LoadedDocument = { doc, owned, payload: sessions, base: envelope.base, many: true };
  const root = options.quarantine === true ? walkQuarantining(input, loaded, options) : walkLoaded(loaded, options);
  return (root as { sessions: AgentSession[] }).sessions;
}

/**
 * Parses (text) and checks the limits, in the order and with the errors of `parseJson`. `fused`
 * returns what the fused check counted when it accepts the document (the limits are folded into
 * it), else undefined: then the limits walk runs as before. `fused: true` in the result: the
 * document is valid as it is.
 */
export function load(
  input: unknown,
  options: DeserializeOptions,
  what: string,
  fused: (doc: unknown, limits: FusedLimits) => FusedCount | undefined,
): { doc: unknown; owned: boolean; fused: boolean } {
  const owned = typeof input === "string" || input instanceof Uint8Array;
  const limits = resolveLimits(sessionLimits(options.limits));
  const fusedLimit = fusedFor(options.registry ?? defaultRegistry())
    ? fusedLimits(limits, options.maxNesting, false)
    : undefined;
  try {
    const { text, value } = owned
      ? parseJsonText(input as string | Uint8Array, limits)
      : { text: undefined, value: input };
    const counted = fusedLimit !== undefined ? fused(value, fusedLimit) : undefined;
    if (counted !== undefined) {
      if (text !== undefined)
        checkDuplicateKeys(text, counted.keys, counted.chars, counted.plainExtra, counted.numberKeys);
    } else {
      const keys = checkedKeyCount(value, limits);
      if (text !== undefined) checkDuplicateKeys(text, keys);
    }
    return { doc: value, owned, fused: counted !== undefined };
  } catch (err) {
    if (!(err instanceof JsonParseError)) throw err;
    throw new SessionValidationError(`cannot load ${what}`, [jsonProblem(err)], { cause: err });
  }
}
