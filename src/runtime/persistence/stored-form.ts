/**
 * The stored form of sessions (wire format), version 1, and how a document's envelope is read.
 *
 * One session:
 * ```json
 * {"format":"statebag.session","formatVersion":1,"session":{"id":"...","kind":"local","stateBag":{"<providerKey>":{"$type":"...", ...}}}}
 * ```
 * Several sessions:
 * ```json
 * {"format":"statebag.sessions","formatVersion":1,"sessions":[{...session...}, ...]}
 * ```
 * - `format` names the document kind; `formatVersion` is the version of this envelope and of the
 *   session object's own shape (`id`, `kind`, `conversationId`, `stateBag`). Like OpenAI Agents JS
 *   `RunState`'s `$schemaVersion`, it is explicit and checked first: every older version stays
 *   readable, a newer one fails fast with an error naming both versions (no guessing).
 * - What sits in the state bag is versioned per value instead (`$type` + `$version`), so providers
 *   evolve independently through migrations without touching `formatVersion`.
 * - `format` comes first so a reader can tell what a file is from its first bytes.
 *
 * Session documents are read with the caller's JSON limits, keeping `"__proto__"` keys inside
 * values unless told otherwise (`sessionLimits`).
 */
import { describeValue, jsonPointer, quoted } from "../core/json.js";
import type { ValidationProblem } from "../core/problems.js";
import { DEFAULT_JSON_LIMITS, type JsonLimits } from "../json/safe-json.js";
import { formatVersionProblem, isEnvelopeKey, isJsonObject } from "../checks/session-rules.js";
import { SessionValidationError } from "./session-error.js";

export const SESSION_FORMAT = "statebag.session";

export const SESSIONS_FORMAT = "statebag.sessions";

/** The newest envelope version this code reads and the one it writes. */
export const SESSION_FORMAT_VERSION = 1;

/** The limits session documents are read with: the caller's, keeping `__proto__` inside values unless told otherwise. */
export function sessionLimits(limits: JsonLimits | undefined): JsonLimits {
  if (limits === undefined) return SESSION_LIMITS;
  return limits.protoKeys !== undefined ? limits : { ...limits, protoKeys: "keep" };
}

const SESSION_LIMITS: Readonly<Required<JsonLimits>> = Object.freeze({ ...DEFAULT_JSON_LIMITS, protoKeys: "keep" });

interface Envelope {
  value: unknown;
  /** Path of `value` from the document root. */
  base: readonly (string | number)[];
}

const SESSION_BASE: readonly (string | number)[] = ["session"];

const SESSIONS_BASE: readonly (string | number)[] = ["sessions"];

/**
 * The payload of an envelope `{format, formatVersion, <key>}` (or of a bare session, when allowed),
 * or a `SessionValidationError` with every problem. The envelope's rules are the fused check's
 * (../checks/session-rules.ts).
 */
export function readEnvelope(doc: unknown, format: string, key: "session" | "sessions", allowBare: boolean): Envelope {
  // Fast path, nothing allocated but the result: a well-formed envelope. Anything else takes the
  // full check below, which reports every problem.
  if (
    isJsonObject(doc) &&
    doc.format === format &&
    formatVersionProblem(doc.formatVersion, SESSION_FORMAT_VERSION) === undefined &&
    hasOwn.call(doc, "format") &&
    hasOwn.call(doc, key)
  ) {
    let clean = true;
    for (const member in doc) {
      if (!isEnvelopeKey(member, key)) {
        clean = false;
        break;
      }
    }
    if (clean) return { value: doc[key], base: key === "session" ? SESSION_BASE : SESSIONS_BASE };
  }
  return readEnvelopeSlow(doc, format, key, allowBare);
}

const hasOwn = Object.prototype.hasOwnProperty;

function readEnvelopeSlow(doc: unknown, format: string, key: "session" | "sessions", allowBare: boolean): Envelope {
  const what = `a ${format} document`;
  const shape = `{"format": "${format}", "formatVersion": ${SESSION_FORMAT_VERSION}, "${key}": ...}`;
  const problems: ValidationProblem[] = [];
  const fail = (): never => {
    throw new SessionValidationError(`cannot load ${key === "session" ? "session" : "sessions"}`, problems);
  };
  if (!isJsonObject(doc)) {
    problems.push({
      code: "envelope",
      pointer: "",
      expected: `${what}: ${shape}`,
      found: describeValue(doc),
      message: `the document is not ${what}`,
      hint: `write it with serializeSession${key === "sessions" ? "s" : ""}()`,
    });
    return fail();
  }
  const found = hasOwn.call(doc, "format") ? doc.format : undefined;
  if (found === undefined) {
    const looksBare = hasOwn.call(doc, "stateBag");
    if (looksBare && allowBare) return { value: doc, base: [] };
    problems.push({
      code: "envelope",
      pointer: "/format",
      expected: JSON.stringify(format),
      found: 'nothing (no "format" key)',
      message: `the document has no "format": it is not ${what}`,
      hint: looksBare
        ? "this looks like a bare session (JSON.stringify(session)); store sessions with serializeSession(), or pass { allowBare: true } to read it"
        : `expected ${shape}`,
    });
    return fail();
  }
  if (found !== format) {
    const other =
      found === SESSIONS_FORMAT
        ? "deserializeSessions()"
        : found === SESSION_FORMAT
          ? "deserializeSession()"
          : undefined;
    problems.push({
      code: "envelope",
      pointer: "/format",
      expected: JSON.stringify(format),
      found: describeValue(found),
      message: `the document's format is ${typeof found === "string" ? quoted(found) : describeValue(found)}, not "${format}"`,
      hint: other ? `read it with ${other}` : `expected ${shape}`,
    });
    return fail();
  }
  const version = doc.formatVersion;
  const versionProblem = formatVersionProblem(version, SESSION_FORMAT_VERSION);
  if (versionProblem === "invalid") {
    problems.push({
      code: "envelope",
      pointer: "/formatVersion",
      expected: "an integer >= 1",
      found: describeValue(version),
      message: `"formatVersion" must be an integer >= 1, found ${describeValue(version)}`,
    });
  } else if (versionProblem === "newer") {
    problems.push({
      code: "envelope",
      pointer: "/formatVersion",
      expected: `formatVersion ${SESSION_FORMAT_VERSION} or older`,
      found: `formatVersion ${version}`,
      message: `the document is ${format} format version ${version}, but this statebag reads format versions up to ${SESSION_FORMAT_VERSION}`,
      hint: "it was written by a newer statebag: upgrade statebag here to read it (older formats always stay readable)",
    });
  }
  // The other document kind's payload key is reported on its own, below.
  const wrongKey = key === "session" ? "sessions" : "session";
  for (const member in doc) {
    if (!hasOwn.call(doc, member) || isEnvelopeKey(member, key) || member === wrongKey) continue;
    problems.push({
      code: "envelope",
      pointer: jsonPointer([member]),
      expected: `only ${shape}`,
      found: `property ${quoted(member)}`,
      message: `unknown envelope property ${quoted(member)}`,
      hint: "the envelope holds format, formatVersion and the payload only",
    });
  }
  if (hasOwn.call(doc, wrongKey)) {
    problems.push({
      code: "envelope",
      pointer: "/" + wrongKey,
      expected: `"${key}"`,
      found: `"${wrongKey}"`,
      message: `a ${format} document holds "${key}", not "${wrongKey}"`,
    });
  }
  if (!hasOwn.call(doc, key)) {
    problems.push({
      code: "envelope",
      pointer: "/" + key,
      expected: key === "session" ? "the session object" : "an array of sessions",
      found: "nothing (the property is missing)",
      message: `the document has no "${key}"`,
    });
  }
  if (problems.length > 0) return fail();
  return { value: doc[key], base: [key] };
}
