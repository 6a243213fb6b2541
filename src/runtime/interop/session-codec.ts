/**
 * The one place the interop and group-chat code turns sessions into stored text and back. It goes
 * through the session serialization (`serializeSession` / `deserializeSession`), so every session
 * these modules read (an imported document, a group-chat channel, a workflow session) is validated
 * and migrated like any other, and nothing is written that could not be loaded again.
 */
import { checkJsonLimits, parseJson } from "../json/safe-json.js";
import {
  SessionValidationError,
  deserializeSession,
  serializeSession,
  type DeserializeOptions,
} from "../persistence/serialization.js";
import type { AgentSession } from "../core/session.js";
import { InteropError, escaped, problemText, shownPointer } from "./errors.js";
import type { InteropFormat } from "./foreign.js";
import type { SessionShape } from "./shapes.js";

/** Registry, strictness and limits used to validate the sessions read. */
export type SessionCodecOptions = Pick<DeserializeOptions, "registry" | "strict" | "limits" | "onPreserved">;

/**
 * A document given as JSON text or as an already-parsed object, held to the same limits either
 * way: an object can be as deep, cyclic or `__proto__`-laden as text, and the interop mappers
 * recurse over it before any validation runs.
 */
export function readDocument(input: string | object, options: Pick<SessionCodecOptions, "limits"> = {}): unknown {
  if (typeof input === "string") return parseJson(input, options.limits);
  checkJsonLimits(input, options.limits);
  return input;
}

/** A session in its stored form (`{"format": "statebag.session", ...}`), fully validated first. */
export function encodeSession(
  session: AgentSession,
  options: Pick<DeserializeOptions, "registry" | "strict"> = {},
): string {
  return serializeSession(session, { registry: options.registry, strict: options.strict, validate: true });
}

/**
 * A session from its stored form, or from a bare session object built in code: validated and
 * migrated. Throws `SessionValidationError` listing every problem.
 */
export function decodeSession(input: string | object, options: SessionCodecOptions = {}): AgentSession {
  return deserializeSession(input, { ...options, allowBare: true });
}

/** At most this many problems are listed in an import error (the count says how many there are). */
export const MAX_LISTED_PROBLEMS = 20;

/** @internal A validation error's problems, one line each, at their place in the source document. */
export function problemLines(error: SessionValidationError, toSource: (pointer: string) => string): string[] {
  const lines: string[] = [];
  const listed = Math.min(error.problems.length, MAX_LISTED_PROBLEMS);
  for (let i = 0; i < listed; i++) {
    const problem = error.problems[i];
    lines.push(`  - ${shownPointer(toSource(problem.pointer))}: ${escaped(problemText(problem))}`);
  }
  if (error.problems.length > listed) lines.push(`  ... and ${error.problems.length - listed} more`);
  return lines;
}

/** @internal The distinct hints of a validation error's problems. */
export function problemHints(error: SessionValidationError): string[] {
  const hints = new Set<string>();
  for (const problem of error.problems) {
    if (problem.hint !== undefined) hints.add(problem.hint);
    if (hints.size >= 5) break;
  }
  return [...hints];
}

/**
 * Validates a session built from another format's document. A validation failure becomes an
 * `InteropError` whose problems point into the imported document (`toSource` maps a pointer in the
 * statebag session to the document's; field names inside messages are statebag's).
 */
export function decodeImported(
  session: AgentSession,
  format: InteropFormat | SessionShape,
  toSource: (pointer: string) => string,
  options: SessionCodecOptions = {},
): AgentSession {
  try {
    return decodeSession(session, options);
  } catch (cause) {
    if (!(cause instanceof SessionValidationError)) throw cause;
    const lines = problemLines(cause, toSource);
    const hints = problemHints(cause);
    const first = cause.problems[0];
    throw new InteropError(
      format,
      "import",
      first ? toSource(first.pointer) : "",
      `the document holds ${cause.problems.length === 1 ? "a value" : `${cause.problems.length} values`} statebag cannot accept:\n${lines.join("\n")}\n `,
      hints.length > 0
        ? hints.join("; ")
        : "fix the values listed, or load without strict to keep unknown types as they are",
      cause,
    );
  }
}
