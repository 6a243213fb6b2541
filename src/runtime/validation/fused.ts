/**
 * The runtime side of the fused checks (src/generated/fused-check.ts, emitted by
 * generator/fused-check.ts): when a fused check may decide for a registry, and the calls with the
 * limits resolved.
 *
 * A fused check says "yes" only when today's path (limits walk, walker, validators) would accept
 * the value exactly as it is. It knows the generated types only, so it may decide for a registry
 * only when each generated `$type` resolves there to the generated definition itself (the default
 * registry, or a composition of it with other types): then a value it accepts is validated by the
 * same definitions on today's path. Entries are never replaced (a second definition of a `$type`
 * is refused), so once true this stays true; a value of a type registered at runtime (TypeBox,
 * JSON Schema) is a "no" and takes today's path.
 */
import { generatedTypes } from "../../generated/registry.js";
import { checkMessage, checkSession, checkTagged } from "../../generated/fused-check.js";
import { fusedContext, type FusedContext, type FusedLimits } from "../checks/fused-runtime.js";
import { formatVersionProblem, isEnvelopeKey, isJsonObject } from "../checks/session-rules.js";
import type { TypeRegistry } from "../registry/registry.js";
import type { JsonLimits } from "../json/safe-json.js";

export type { FusedLimits };

const fusedRegistries = new WeakSet<TypeRegistry>();

/** True when the generated fused checks decide for `registry` (see above). */
export function fusedFor(registry: TypeRegistry): boolean {
  if (fusedRegistries.has(registry)) return true;
  const table = registry.table;
  for (const def of generatedTypes) if (table.get(def.$type)?.def !== def) return false;
  fusedRegistries.add(registry);
  return true;
}

/** The recursive descent stops at this depth; deeper limits take today's path (an explicit stack). */
const MAX_FUSED_DEPTH = 1024;

const DEFAULT_NESTING = 128;

/** Fused limits for resolved JSON limits; undefined when the fused check cannot apply them. */
export function fusedLimits(
  lim: Required<JsonLimits>,
  maxNesting: number | undefined,
  saving: boolean,
): FusedLimits | undefined {
  if (lim.maxDepth > MAX_FUSED_DEPTH) return undefined;
  // Only a load reads the character count: numbers go into it then.
  return {
    maxDepth: lim.maxDepth,
    maxKeys: lim.maxKeys,
    maxNesting: maxNesting ?? DEFAULT_NESTING,
    saving,
    count: !saving,
  };
}

/** Limits for a check with no JSON limits of its own (`validateSession`): only the recursion bound. */
export const UNLIMITED: FusedLimits = Object.freeze({
  maxDepth: MAX_FUSED_DEPTH,
  maxKeys: Number.MAX_SAFE_INTEGER,
  maxNesting: DEFAULT_NESTING,
  saving: false,
});

/**
 * What a fused check counted of a document it accepted: its object keys, a lower bound of its
 * compact text (`FusedContext.chars`) and what its round integers take more when written out
 * (`plainExtra`, `numberKeys`). All go to the duplicate-key check of its text (`checkDuplicateKeys`).
 */
export type FusedCount = Pick<FusedContext, "keys" | "chars" | "plainExtra" | "numberKeys">;

/**
 * The count of a session document (an envelope `{format, formatVersion, session}` at depth 1, or a
 * bare session) when the fused check accepts it, else undefined. `format`/`maxVersion`: the envelope's.
 */
export function fusedSessionDocument(
  doc: unknown,
  format: string,
  maxVersion: number,
  allowBare: boolean,
  limits: FusedLimits,
): FusedCount | undefined {
  if (!isJsonObject(doc)) return undefined;
  const context = fusedContext(limits);
  if (context === undefined) return undefined;
  if (doc.format === undefined) {
    // A bare session (no "format" key at all: the session check refuses any other key).
    return allowBare && checkSession(context, doc, 1) ? context : undefined;
  }
  if (limits.maxKeys < 3 || !envelopeOnly(doc, format, maxVersion, "session")) return undefined;
  if (!checkSession(context, doc.session, 2)) return undefined;
  context.keys += 3;
  context.chars += envelopeChars(format, "session");
  return context;
}

/**
 * True when `doc` is exactly `{format, formatVersion, <payload>}` (the envelope rules of the
 * loader, ../checks/session-rules.ts) with this `format` and a version it reads.
 */
function envelopeOnly(doc: Record<string, unknown>, format: string, maxVersion: number, payload: string): boolean {
  if (doc.format !== format || formatVersionProblem(doc.formatVersion, maxVersion) !== undefined) return false;
  let keys = 0;
  for (const key in doc) {
    if (!isEnvelopeKey(key, payload)) return false;
    keys++;
  }
  return keys === 3;
}

/**
 * The characters of an envelope around its payload: `{"format":"…","formatVersion":N,"<payload>":…}`:
 * braces and commas 4, the keys with quotes and colons, the format string with its quotes, N at one
 * digit at least.
 */
function envelopeChars(format: string, payload: string): number {
  return 4 + 9 + 16 + payload.length + 3 + format.length + 2 + 1;
}

/** The same for a `statebag.sessions` document: `{format, formatVersion, sessions: [...]}`. */
export function fusedSessionsDocument(
  doc: unknown,
  format: string,
  maxVersion: number,
  limits: FusedLimits,
): FusedCount | undefined {
  if (!isJsonObject(doc) || limits.maxKeys < 3 || limits.maxDepth < 2) return undefined;
  if (!envelopeOnly(doc, format, maxVersion, "sessions")) return undefined;
  const sessions = doc.sessions;
  if (!Array.isArray(sessions)) return undefined;
  const context = fusedContext(limits);
  if (context === undefined) return undefined;
  for (let index = 0; index < sessions.length; index++)
    if (!checkSession(context, sessions[index], 3)) return undefined;
  context.keys += 3;
  // The array's brackets and commas.
  context.chars += envelopeChars(format, "sessions") + (sessions.length === 0 ? 2 : sessions.length + 1);
  return context;
}

/**
 * The count of a message-log entry (one chat message, the document root) when the fused check
 * accepts it, else undefined: held to what a message in a history state is held to.
 */
export function fusedMessageDocument(doc: unknown, limits: FusedLimits): FusedCount | undefined {
  const context = fusedContext(limits);
  return context !== undefined && checkMessage(context, doc, 1) ? context : undefined;
}

/** True when the fused check accepts `session` at `depth` (a save: `limits.saving`). */
export function fusedSession(session: unknown, depth: number, limits: FusedLimits): boolean {
  const context = fusedContext(limits);
  return context !== undefined && checkSession(context, session, depth);
}

/** True when the fused check accepts one tagged value of `family`. */
export function fusedValue(value: unknown, family: string, depth: number, limits: FusedLimits): boolean {
  const context = fusedContext(limits);
  return context !== undefined && checkTagged(context, value, family, depth, 0);
}
