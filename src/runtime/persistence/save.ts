/**
 * Saving sessions: `serializeSession` and `serializeSessions`, and the pieces the message log's
 * save shares with them (the text checked in the order loading checks it, the walker a save runs,
 * the fused check under the save-side limits).
 */
import { describeValue } from "../core/json.js";
import type { AgentSession } from "../core/session.js";
import { defaultRegistry } from "../validation/default-registry.js";
import {
  JsonParseError,
  checkFiniteNumbers,
  checkJsonSize,
  checkWritableJson,
  resolveLimits,
} from "../json/safe-json.js";
import { fusedFor, fusedLimits, fusedSession, fusedSessionsDocument } from "../validation/fused.js";
import { SessionWalker } from "../validation/validate.js";
import type { SerializeOptions } from "./options.js";
import { SESSION_FORMAT, SESSIONS_FORMAT, SESSION_FORMAT_VERSION, sessionLimits } from "./stored-form.js";
import { SessionValidationError, jsonProblem, sessionLabel } from "./session-error.js";

/**
 * With `validate`, the document's text, checked in the order loading checks it: size, then
 * depth/keys/plain data (every value follows, in the walk). Without it, undefined: written later.
 */
export function checkedText(doc: object, options: SerializeOptions, what: string): string | undefined {
  if (options.validate !== true) return undefined;
  const text = stringify(doc, options.space, what);
  checkWrittenSize(text, options, what);
  checkWritable(doc, options, what);
  return text;
}

/** The walker a save runs: the shape check, or with `validate` every value (`deep`). */
export function saveWalker(options: SerializeOptions): SessionWalker {
  return new SessionWalker({
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    deep: options.validate === true,
    // Quarantined values are written back exactly as they were, never checked again on save.
    quarantine: "keep",
  });
}

/** Writes one session in the stored form. Throws `SessionValidationError` for an invalid session. */
export function serializeSession(session: AgentSession, options: SerializeOptions = {}): string {
  return writeSession(session, options).text;
}

/**
 * `serializeSession`, and whether the fused check accepted the session (`current`): then its text
 * loads back as it is (every value valid at its latest version, nothing to migrate, preserve or
 * set aside, within the same limits), so a codec that recognizes the text on a read may skip the
 * check (stores/written-texts.ts). @internal
 */
export function writeSession(
  session: AgentSession,
  options: SerializeOptions = {},
): { text: string; current: boolean } {
  const doc = { format: SESSION_FORMAT, formatVersion: SESSION_FORMAT_VERSION, session };
  const what = `session ${sessionLabel(session)}`;
  // The fused check: validation and the save-side limits in one walk. On "no", today's path decides.
  if (options.validate === true && fusedSave(options, (limits) => fusedSession(session, 2, limits)))
    return { text: fusedText(doc, options, what), current: true };
  const text = checkedText(doc, options, what);
  {
    const walker = saveWalker(options);
    walker.walkSession(session, ["session"]);
    const result = walker.result();
    if (!result.ok)
      throw new SessionValidationError(`cannot save ${what}`, result.problems, {
        preserved: result.preserved,
        problemCount: result.problemCount,
      });
  }
  return { text: text ?? written(doc, options.space, what), current: false };
}

/** Writes several sessions as one document. */
export function serializeSessions(sessions: readonly AgentSession[], options: SerializeOptions = {}): string {
  if (!Array.isArray(sessions)) {
    throw new SessionValidationError("cannot save sessions", [
      {
        code: "envelope",
        pointer: "/sessions",
        expected: "an array of sessions",
        found: describeValue(sessions),
        message: "serializeSessions takes an array of sessions",
      },
    ]);
  }
  const doc = { format: SESSIONS_FORMAT, formatVersion: SESSION_FORMAT_VERSION, sessions };
  const what = `${sessions.length} sessions`;
  if (
    options.validate === true &&
    fusedSave(
      options,
      (limits) => fusedSessionsDocument(doc, SESSIONS_FORMAT, SESSION_FORMAT_VERSION, limits) !== undefined,
    )
  )
    return fusedText(doc, options, what);
  const text = checkedText(doc, options, what);
  {
    const walker = saveWalker(options);
    const base: (string | number)[] = ["sessions", 0];
    for (let i = 0; i < sessions.length; i++) {
      base[1] = i;
      walker.walkSession(sessions[i], base);
    }
    const result = walker.result();
    if (!result.ok)
      throw new SessionValidationError(`cannot save ${what}`, result.problems, {
        preserved: result.preserved,
        problemCount: result.problemCount,
      });
  }
  return text ?? written(doc, options.space, what);
}

/**
 * With `validate`: runs `check` under the save-side limits when a fused check decides for the
 * registry. True: the document is valid plain JSON within the depth/keys limits, as the walker,
 * the validators and `checkWritableJson` would find (the size of the text is checked after writing).
 */
export function fusedSave(
  options: SerializeOptions,
  check: (limits: NonNullable<ReturnType<typeof fusedLimits>>) => boolean,
): boolean {
  if (!fusedFor(options.registry ?? defaultRegistry())) return false;
  const limits = fusedLimits(resolveLimits(sessionLimits(options.limits)), options.maxNesting, true);
  return limits !== undefined && check(limits);
}

/** The text of a document the fused check accepted: stringified, then held to the size limit. */
export function fusedText(doc: object, options: SerializeOptions, what: string): string {
  const text = stringify(doc, options.space, what);
  checkWrittenSize(text, options, what);
  return text;
}

/**
 * The text of a save without `validate`: still never a NaN or Infinity written as null (loading
 * could not tell it from a null). A walk for numbers costs less than searching the text for "null".
 */
export function written(doc: object, space: string | number | undefined, what: string): string {
  const text = stringify(doc, space, what);
  try {
    checkFiniteNumbers(doc);
  } catch (err) {
    if (!(err instanceof JsonParseError)) throw err;
    throw new SessionValidationError(`cannot save ${what}`, [jsonProblem(err)], { cause: err });
  }
  return text;
}

/** Save side of the parse limits: what loading would refuse is refused here, with the same problem. */
function checkWritable(doc: object, options: SerializeOptions, what: string): void {
  try {
    checkWritableJson(doc, sessionLimits(options.limits));
  } catch (err) {
    if (!(err instanceof JsonParseError)) throw err;
    throw new SessionValidationError(`cannot save ${what}`, [jsonProblem(err)], { cause: err });
  }
}

function checkWrittenSize(text: string, options: SerializeOptions, what: string): void {
  try {
    checkJsonSize(text, options.limits);
  } catch (err) {
    if (!(err instanceof JsonParseError)) throw err;
    throw new SessionValidationError(`cannot save ${what}`, [jsonProblem(err)], { cause: err });
  }
}

function stringify(doc: object, space: string | number | undefined, what: string): string {
  try {
    return JSON.stringify(doc, null, space);
  } catch (cause) {
    const reason =
      cause instanceof RangeError
        ? "it is nested too deeply (or holds a reference cycle)"
        : cause instanceof Error
          ? cause.message
          : String(cause);
    throw new SessionValidationError(
      `cannot save ${what}`,
      [
        {
          code: "not-json",
          pointer: "",
          expected: "a JSON value",
          found: "a value JSON.stringify rejects",
          message: `the value cannot be written as JSON: ${reason}`,
          hint: "session data must be plain JSON: no cycles, BigInts or class instances",
        },
      ],
      { cause },
    );
  }
}
