/**
 * Validated (de)serialization of sessions.
 *
 * ## Stored form (wire format), version 1
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
 * Loading = safe parse (size/depth/key limits, finite numbers, no key twice in an object) ->
 * envelope check -> migrations -> validation of every tagged value (one validator per `$type`) ->
 * the session. Unknown types and newer versions are kept verbatim (reported through `onPreserved`)
 * unless `strict`.
 *
 * Saving always checks the session object itself (id, kind, conversationId, stateBag, and that
 * every state value is a `$type`-tagged object): O(state keys), cheap; and, by a walk of its
 * numbers, it never writes a NaN or Infinity as null. `validate: true` makes save
 * and load one contract: every tagged value is validated exactly as on load, the document is
 * checked against the same parse limits (depth, keys per object, size of the text) and must be
 * plain JSON that reads back equal (no NaN, Dates, class instances, `undefined` array items).
 * Whatever it accepts, loading with the same options gives back equal; whatever loading would
 * refuse, it refuses with the same problem, before anything is written. Stores pass it. It is
 * opt-in because it costs a walk of the data; code that builds state through typed providers can
 * skip it, code that writes to a store should not.
 *
 * `"__proto__"` keys: inside values (a tool's output, a message's extra properties) such a key is
 * ordinary data, kept as an own property exactly as `JSON.parse` does, on save and on load.
 * Where statebag looks values up by key (state-bag provider keys, conversation id names, the
 * session and envelope objects) it is refused, on save and on load alike. Pass the same
 * `limits: { protoKeys: "reject" }` to both sides to refuse it everywhere, or `"keep"` to accept it
 * everywhere, state-bag keys included.
 */
import { StatebagError } from "../core/errors.js";
import { MAX_POINTER_CHARS, boundedPointer, describeValue, jsonPointer, quoted, setOwn } from "../core/json.js";
import type { AgentSession, QuarantinedValue } from "../core/session.js";
import { DEFAULT_MAX_PROBLEMS, formatProblems, type PreservedValue, type ValidationProblem } from "../core/problems.js";
import { valueTexts } from "../json/json-spans.js";
import { PROVIDER_STATE_FAMILY, type TypeRegistry } from "../registry/registry.js";
import { defaultRegistry } from "../validation/default-registry.js";
import {
  DEFAULT_JSON_LIMITS,
  JsonParseError,
  checkDuplicateKeys,
  checkFiniteNumbers,
  checkJsonSize,
  checkWritableJson,
  checkedKeyCount,
  parseJsonText,
  resolveLimits,
  type JsonLimits,
} from "../json/safe-json.js";
import {
  fusedDocumentChars,
  fusedFor,
  fusedLimits,
  fusedMessageDocument,
  fusedSession,
  fusedSessionDocument,
  fusedSessionsDocument,
} from "../validation/fused.js";
import { SessionWalker, type PendingUpgrade, type ValidateOptions } from "../validation/validate.js";
import type { FusedLimits } from "../../generated/fused-check.js";

export const SESSION_FORMAT = "statebag.session";
export const SESSIONS_FORMAT = "statebag.sessions";
/** The newest envelope version this code reads and the one it writes. */
export const SESSION_FORMAT_VERSION = 1;

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

function reportMigrated(upgrades: readonly PendingUpgrade[], options: DeserializeOptions): void {
  if (options.onMigrated === undefined || upgrades.length === 0) return;
  options.onMigrated(
    upgrades.map((u) => {
      const value = u.value as { $type: string; $version?: number };
      return {
        pointer: jsonPointer(u.path),
        fromType: u.fromType,
        from: u.from,
        toType: value.$type,
        to: value.$version ?? 1,
      };
    }),
  );
}

/**
 * A session (or a document of sessions) that cannot be loaded or saved. `problems` lists the
 * problems found (at most 100 by default, `maxProblems`; `problemCount` says how many there are in
 * all), each with a JSON pointer from the document root, what was expected, what was found and a
 * hint; the message shows the first ones, one per line. It never holds the input itself: values
 * are described, long strings cut with their length.
 */
export class SessionValidationError extends StatebagError {
  readonly problems: readonly ValidationProblem[];
  /** How many problems there are in all (`problems` holds the first of them). */
  readonly problemCount: number;
  readonly preserved: readonly PreservedValue[];
  constructor(
    summary: string,
    problems: readonly ValidationProblem[],
    options: { preserved?: readonly PreservedValue[]; cause?: unknown; problemCount?: number } = {},
  ) {
    const kept = (problems.length > MAX_HELD ? problems.slice(0, MAX_HELD) : problems).map((p) =>
      p.pointer.length > MAX_POINTER_CHARS ? { ...p, pointer: boundedPointer(p.pointer) } : p,
    );
    const n = Math.max(options.problemCount ?? problems.length, problems.length);
    super("session-invalid", `${summary}: ${n} problem${n === 1 ? "" : "s"}\n${formatProblems(kept, 20, n)}`, {
      cause: options.cause,
    });
    this.problems = kept;
    this.problemCount = n;
    const preserved = options.preserved ?? [];
    this.preserved = preserved.length > MAX_HELD ? preserved.slice(0, MAX_HELD) : preserved;
  }
}

/** At most this many problems (and preserved values) are held by an error, whatever a caller passes. */
const MAX_HELD = 10 * DEFAULT_MAX_PROBLEMS;

// -------------------------------------------------------------------------------------------------
// Saving

/**
 * With `validate`, the document's text, checked in the order loading checks it: size, then
 * depth/keys/plain data (every value follows, in the walk). Without it, undefined: written later.
 */
function checkedText(doc: object, options: SerializeOptions, what: string): string | undefined {
  if (options.validate !== true) return undefined;
  const text = stringify(doc, options.space, what);
  checkWrittenSize(text, options, what);
  checkWritable(doc, options, what);
  return text;
}

/** The walker a save runs: the shape check, or with `validate` every value (`deep`). */
function saveWalker(options: SerializeOptions): SessionWalker {
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
  const doc = { format: SESSION_FORMAT, formatVersion: SESSION_FORMAT_VERSION, session };
  const what = `session ${sessionLabel(session)}`;
  // The fused check: validation and the save-side limits in one walk. On "no", today's path decides.
  if (options.validate === true && fusedSave(options, (limits) => fusedSession(session, 2, limits)))
    return fusedText(doc, options, what);
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
  return text ?? written(doc, options.space, what);
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
    fusedSave(options, (limits) => fusedSessionsDocument(doc, SESSIONS_FORMAT, SESSION_FORMAT_VERSION, limits) >= 0)
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
function fusedSave(
  options: SerializeOptions,
  check: (limits: NonNullable<ReturnType<typeof fusedLimits>>) => boolean,
): boolean {
  if (!fusedFor(options.registry ?? defaultRegistry())) return false;
  const limits = fusedLimits(resolveLimits(sessionLimits(options.limits)), options.maxNesting, true);
  return limits !== undefined && check(limits);
}

/** The text of a document the fused check accepted: stringified, then held to the size limit. */
function fusedText(doc: object, options: SerializeOptions, what: string): string {
  const text = stringify(doc, options.space, what);
  checkWrittenSize(text, options, what);
  return text;
}

/**
 * The text of a save without `validate`: still never a NaN or Infinity written as null (loading
 * could not tell it from a null). A walk for numbers costs less than searching the text for "null".
 */
function written(doc: object, space: string | number | undefined, what: string): string {
  const text = stringify(doc, space, what);
  try {
    checkFiniteNumbers(doc);
  } catch (err) {
    if (!(err instanceof JsonParseError)) throw err;
    throw new SessionValidationError(`cannot save ${what}`, [jsonProblem(err)], { cause: err });
  }
  return text;
}

/** The limits session documents are read with: the caller's, keeping `__proto__` inside values unless told otherwise. */
function sessionLimits(limits: JsonLimits | undefined): JsonLimits {
  if (limits === undefined) return SESSION_LIMITS;
  return limits.protoKeys !== undefined ? limits : { ...limits, protoKeys: "keep" };
}

const SESSION_LIMITS: Readonly<Required<JsonLimits>> = Object.freeze({ ...DEFAULT_JSON_LIMITS, protoKeys: "keep" });

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

function sessionLabel(session: unknown): string {
  const id = typeof session === "object" && session !== null ? (session as { id?: unknown }).id : undefined;
  return typeof id === "string" ? JSON.stringify(id) : "(no id)";
}

// -------------------------------------------------------------------------------------------------
// Loading

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
  const root =
    options.quarantine === true
      ? walkQuarantining(input, doc, owned, options, envelope.value, envelope.base, false)
      : walkLoaded(doc, owned, options, envelope.value, envelope.base, false);
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
  const root =
    options.quarantine === true
      ? walkQuarantining(input, doc, owned, options, sessions, envelope.base, true)
      : walkLoaded(doc, owned, options, sessions, envelope.base, true);
  return (root as { sessions: AgentSession[] }).sessions;
}

/**
 * The shared tail of loading: walks the session (`many: false`) or every session of the array
 * `value` (`many: true`) at `base`, throws `SessionValidationError` on any problem, reports
 * migrations, writes the migrated values into the document (a copy of a caller-owned one) and
 * reports preserved values. Returns the document root.
 */
function walkLoaded(
  doc: unknown,
  owned: boolean,
  options: DeserializeOptions,
  value: unknown,
  base: readonly (string | number)[],
  many: boolean,
  keepQuarantine = false,
): unknown {
  const walker = new SessionWalker({
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    collectUpgrades: true,
    ownedInput: owned,
    quarantine: keepQuarantine ? "keep" : "check",
  });
  if (many) {
    const sessions = value as readonly unknown[];
    const path: (string | number)[] = [...base, 0];
    const last = base.length;
    for (let i = 0; i < sessions.length; i++) {
      path[last] = i;
      walker.walkSession(sessions[i], path);
    }
  } else {
    walker.walkSession(value, base);
  }
  const result = walker.result();
  if (!result.ok) {
    const summary = many
      ? `cannot load ${(value as readonly unknown[]).length} sessions`
      : `cannot load session ${sessionLabel(value)}`;
    throw new SessionValidationError(summary, result.problems, {
      preserved: result.preserved,
      problemCount: result.problemCount,
    });
  }
  const upgrades = walker.upgrades!;
  reportMigrated(upgrades, options);
  const root = applyUpgrades(doc, upgrades, owned);
  if (result.preserved.length > 0) options.onPreserved?.(result.preserved);
  return root;
}

// -------------------------------------------------------------------------------------------------
// Quarantine loads (opt-in; the strict path above never comes here)

interface SetAside {
  /** Path from the document root. */
  path: (string | number)[];
  value: unknown;
  problems: readonly ValidationProblem[];
  problemCount: number;
}

/**
 * A quarantine load: every session is walked as on a strict load; one that fails has each failing
 * state-bag entry (or failing message) taken out and recorded in `session.quarantine` with its
 * original text, and the cleaned document then takes the strict tail (`walkLoaded`, migrations
 * applied), so whatever is left is exactly what a strict load accepts. Nothing is modified until
 * every text is taken: the walkers here never migrate in place.
 */
function walkQuarantining(
  input: unknown,
  doc: unknown,
  owned: boolean,
  options: DeserializeOptions,
  value: unknown,
  base: readonly (string | number)[],
  many: boolean,
): unknown {
  const walkerOptions = {
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    quarantine: "keep" as const,
  };
  const sessions: unknown[] = many ? [...(value as unknown[])] : [value];
  const found: SetAside[][] = sessions.map((s, i) => setAside(s, many ? [...base, i] : [...base], walkerOptions));
  if (found.every((f) => f.length === 0)) return walkLoaded(doc, owned, options, value, base, many, true);
  // The exact original characters when there is text; otherwise the caller's value as JSON.
  const source =
    typeof input === "string"
      ? input
      : input instanceof Uint8Array
        ? new TextDecoder("utf-8").decode(input)
        : undefined;
  const all = found.flat();
  const texts =
    source !== undefined
      ? valueTexts(
          source,
          all.map((f) => f.path),
        )
      : [];
  let t = 0;
  const entries: QuarantinedValue[][] = [];
  for (let i = 0; i < sessions.length; i++) {
    if (found[i].length === 0) {
      entries.push([]);
      continue;
    }
    const prefix = many ? base.length + 1 : base.length;
    const list = found[i].map((f) => {
      const text = texts[t++] ?? JSON.stringify(f.value);
      const entry: QuarantinedValue = { pointer: jsonPointer(f.path.slice(prefix)), text, reason: f.problems[0] };
      if (f.problemCount > 1) entry.problemCount = f.problemCount;
      return entry;
    });
    entries.push(list);
    sessions[i] = withoutSetAside(sessions[i] as Record<string, unknown>, found[i], prefix, list);
  }
  // The document with the cleaned sessions (the caller's objects are never changed).
  let root: unknown;
  let cleaned: unknown;
  if (many) {
    cleaned = sessions;
    root = { ...(doc as object), sessions };
  } else {
    cleaned = sessions[0];
    root = base.length === 0 ? cleaned : { ...(doc as object), session: cleaned };
  }
  const result = walkLoaded(root, owned, options, cleaned, base, many, true);
  if (options.onQuarantined !== undefined) {
    const loaded = many
      ? (result as { sessions: AgentSession[] }).sessions
      : [(base.length === 0 ? result : (result as { session: unknown }).session) as AgentSession];
    for (let i = 0; i < entries.length; i++) if (entries[i].length > 0) options.onQuarantined(entries[i], loaded[i]);
  }
  return result;
}

type WalkerOptions = ConstructorParameters<typeof SessionWalker>[0];

/** What to take out of one session (empty when it loads as it is, or when it fails as a whole). */
function setAside(session: unknown, base: (string | number)[], options: WalkerOptions): SetAside[] {
  const first = new SessionWalker(options);
  first.walkSession(session, base);
  if (first.result().ok) return [];
  if (typeof session !== "object" || session === null || Array.isArray(session)) return [];
  const s = session as Record<string, unknown>;
  const bag = s.stateBag;
  if (typeof bag !== "object" || bag === null || Array.isArray(bag)) return [];
  if (hasOwnKey.call(bag, "__proto__") && options.protoKeysAsData !== true) return []; // refused whole
  // Problems of the session object itself refuse it whole.
  const shell = new SessionWalker(options);
  shell.walkSession({ ...s, stateBag: {} }, base);
  if (!shell.result().ok) return [];
  const out: SetAside[] = [];
  for (const key in bag) {
    if (!hasOwnKey.call(bag, key)) continue;
    const v = (bag as Record<string, unknown>)[key];
    const path = [...base, "stateBag", key];
    const r = walkOne(v, path, options);
    if (r.ok) continue;
    const messages = splitMessages(v, path, options);
    if (messages !== undefined) for (const m of messages) out.push(m);
    else out.push({ path, value: v, problems: r.problems, problemCount: r.problemCount ?? r.problems.length });
  }
  return out;
}

function walkOne(value: unknown, path: (string | number)[], options: WalkerOptions) {
  const w = new SessionWalker(options);
  w.walkValue(value, PROVIDER_STATE_FAMILY, path);
  return w.result();
}

/**
 * A failing value with a `messages` array whose failures are all in single messages: those
 * messages (each checked alone in a copy of the value, then the rest checked together).
 * Undefined when the value itself is at fault.
 */
function splitMessages(value: unknown, path: (string | number)[], options: WalkerOptions): SetAside[] | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  const messages = v.messages;
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  if (!walkOne({ ...v, messages: [] }, path, options).ok) return undefined;
  const bad: SetAside[] = [];
  const good: unknown[] = [];
  const at0 = jsonPointer([...path, "messages", 0]);
  for (let i = 0; i < messages.length; i++) {
    const r = walkOne({ ...v, messages: [messages[i]] }, path, options);
    if (r.ok) {
      good.push(messages[i]);
      continue;
    }
    const at = jsonPointer([...path, "messages", i]);
    bad.push({
      path: [...path, "messages", i],
      value: messages[i],
      problems: r.problems.map((p) => reindexed(p, at0, at)),
      problemCount: r.problemCount ?? r.problems.length,
    });
  }
  if (bad.length === 0 || !walkOne({ ...v, messages: good }, path, options).ok) return undefined;
  return bad;
}

/** A problem found with the message at index 0 of a copy, as at its real index. */
function reindexed(p: ValidationProblem, from: string, to: string): ValidationProblem {
  const swap = (s: string) => {
    let out = "";
    let i = 0;
    for (let j = s.indexOf(from); j !== -1; j = s.indexOf(from, i)) {
      const next = s.charCodeAt(j + from.length);
      out += s.slice(i, j) + (next >= 48 && next <= 57 ? from : to);
      i = j + from.length;
    }
    return out + s.slice(i);
  };
  return { ...p, pointer: swap(p.pointer), message: swap(p.message) };
}

/** A copy of `session` without the values set aside, and with them added to its `quarantine`. */
function withoutSetAside(
  session: Record<string, unknown>,
  found: readonly SetAside[],
  prefix: number,
  entries: QuarantinedValue[],
): Record<string, unknown> {
  const bag: Record<string, unknown> = {};
  const from = session.stateBag as Record<string, unknown>;
  for (const k in from) if (hasOwnKey.call(from, k)) setOwn(bag, k, from[k]);
  const dropped = new Map<string, Set<number>>();
  for (const f of found) {
    const key = f.path[prefix + 1] as string;
    if (f.path.length === prefix + 2) delete bag[key];
    else {
      let set = dropped.get(key);
      if (set === undefined) dropped.set(key, (set = new Set()));
      set.add(f.path[prefix + 3] as number);
    }
  }
  for (const [key, set] of dropped) {
    const v = bag[key] as Record<string, unknown>;
    setOwn(bag, key, { ...v, messages: (v.messages as unknown[]).filter((_, i) => !set.has(i)) });
  }
  const before = Array.isArray(session.quarantine) ? (session.quarantine as QuarantinedValue[]) : [];
  return { ...session, stateBag: bag, quarantine: [...before, ...entries] };
}

/**
 * Parses (text) and checks the limits, in the order and with the errors of `parseJson`. `fused`
 * returns the document's object keys when the fused check accepts it (the limits are folded into
 * it), else -1: then the limits walk runs as before. `fused: true` in the result: the document is
 * valid as it is.
 */
function load(
  input: unknown,
  options: DeserializeOptions,
  what: string,
  fused: (doc: unknown, limits: FusedLimits) => number,
): { doc: unknown; owned: boolean; fused: boolean } {
  const owned = typeof input === "string" || input instanceof Uint8Array;
  const lim = resolveLimits(sessionLimits(options.limits));
  const fusedLim = fusedFor(options.registry ?? defaultRegistry())
    ? fusedLimits(lim, options.maxNesting, false)
    : undefined;
  try {
    const { text, value } = owned
      ? parseJsonText(input as string | Uint8Array, lim)
      : { text: undefined, value: input };
    let keys = fusedLim !== undefined ? fused(value, fusedLim) : -1;
    const accepted = keys >= 0;
    if (!accepted) keys = checkedKeyCount(value, lim);
    if (text !== undefined) checkDuplicateKeys(text, keys, accepted ? fusedDocumentChars() : -1);
    return { doc: value, owned, fused: accepted };
  } catch (err) {
    if (!(err instanceof JsonParseError)) throw err;
    throw new SessionValidationError(`cannot load ${what}`, [jsonProblem(err)], { cause: err });
  }
}

/** A JSON-level error (syntax, limits, data JSON cannot hold) as a validation problem: the same on save and on load. */
function jsonProblem(err: JsonParseError): ValidationProblem {
  const lines = err.message.split("\n  hint: ")[0].split("\n");
  const problem: ValidationProblem = {
    code: err.code === "json-value" ? "not-json" : "json",
    pointer: err.pointer ?? "",
    expected: JSON_EXPECTED[err.code] ?? "JSON text",
    found:
      err.code === "json-syntax"
        ? `a syntax error at line ${err.line}, column ${err.column}`
        : (JSON_FOUND[err.code] ?? err.code),
    message: lines.join("\n     "),
  };
  if (err.hint !== undefined) problem.hint = err.hint;
  if (err.problemDetails !== undefined) problem.details = err.problemDetails;
  return problem;
}

const JSON_EXPECTED: Record<string, string> = {
  "json-syntax": "well-formed JSON",
  "json-too-large": "a document within limits.maxBytes",
  "json-too-deep": "nesting within limits.maxDepth",
  "json-too-many-keys": "objects within limits.maxKeys",
  "json-proto-key": 'no "__proto__" keys',
  "json-input": "JSON text (a string or UTF-8 bytes)",
  "json-value": "plain JSON data",
  "json-duplicate-key": "each key once in an object",
};
const JSON_FOUND: Record<string, string> = {
  "json-too-large": "a larger document",
  "json-too-deep": "deeper nesting",
  "json-too-many-keys": "an object with more keys",
  "json-proto-key": 'a "__proto__" key',
  "json-input": "something else",
  "json-value": "a value JSON cannot hold as it is",
  "json-duplicate-key": "a key given twice",
};

interface Envelope {
  value: unknown;
  /** Path of `value` from the document root. */
  base: readonly (string | number)[];
}

const ENVELOPE_KEYS = new Set(["format", "formatVersion", "session", "sessions"]);

const SESSION_BASE: readonly (string | number)[] = ["session"];
const SESSIONS_BASE: readonly (string | number)[] = ["sessions"];

function readEnvelope(doc: unknown, format: string, key: "session" | "sessions", allowBare: boolean): Envelope {
  // Fast path, nothing allocated but the result: a well-formed envelope. Anything else takes the
  // full check below, which reports every problem.
  if (typeof doc === "object" && doc !== null && !Array.isArray(doc)) {
    const d = doc as Record<string, unknown>;
    const v = d.formatVersion;
    if (
      d.format === format &&
      typeof v === "number" &&
      Number.isInteger(v) &&
      v >= 1 &&
      v <= SESSION_FORMAT_VERSION &&
      hasOwnKey.call(d, "format") &&
      hasOwnKey.call(d, key)
    ) {
      let clean = true;
      for (const k in d) {
        if (k !== key && k !== "format" && k !== "formatVersion") {
          clean = false;
          break;
        }
      }
      if (clean) return { value: d[key], base: key === "session" ? SESSION_BASE : SESSIONS_BASE };
    }
  }
  return readEnvelopeSlow(doc, format, key, allowBare);
}

const hasOwnKey = Object.prototype.hasOwnProperty;

function readEnvelopeSlow(doc: unknown, format: string, key: "session" | "sessions", allowBare: boolean): Envelope {
  const what = `a ${format} document`;
  const shape = `{"format": "${format}", "formatVersion": ${SESSION_FORMAT_VERSION}, "${key}": ...}`;
  const problems: ValidationProblem[] = [];
  const fail = (): never => {
    throw new SessionValidationError(`cannot load ${key === "session" ? "session" : "sessions"}`, problems);
  };
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
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
  const d = doc as Record<string, unknown>;
  const hasOwn = Object.prototype.hasOwnProperty;
  const f = hasOwn.call(d, "format") ? d.format : undefined;
  if (f === undefined) {
    const looksBare = hasOwn.call(d, "stateBag");
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
  if (f !== format) {
    const other =
      f === SESSIONS_FORMAT ? "deserializeSessions()" : f === SESSION_FORMAT ? "deserializeSession()" : undefined;
    problems.push({
      code: "envelope",
      pointer: "/format",
      expected: JSON.stringify(format),
      found: describeValue(f),
      message: `the document's format is ${typeof f === "string" ? quoted(f) : describeValue(f)}, not "${format}"`,
      hint: other ? `read it with ${other}` : `expected ${shape}`,
    });
    return fail();
  }
  const v = d.formatVersion;
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    problems.push({
      code: "envelope",
      pointer: "/formatVersion",
      expected: "an integer >= 1",
      found: describeValue(v),
      message: `"formatVersion" must be an integer >= 1, found ${describeValue(v)}`,
    });
  } else if (v > SESSION_FORMAT_VERSION) {
    problems.push({
      code: "envelope",
      pointer: "/formatVersion",
      expected: `formatVersion ${SESSION_FORMAT_VERSION} or older`,
      found: `formatVersion ${v}`,
      message: `the document is ${format} format version ${v}, but this statebag reads format versions up to ${SESSION_FORMAT_VERSION}`,
      hint: "it was written by a newer statebag: upgrade statebag here to read it (older formats always stay readable)",
    });
  }
  for (const k in d) {
    if (!hasOwn.call(d, k) || ENVELOPE_KEYS.has(k)) continue;
    problems.push({
      code: "envelope",
      pointer: jsonPointer([k]),
      expected: `only ${shape}`,
      found: `property ${quoted(k)}`,
      message: `unknown envelope property ${quoted(k)}`,
      hint: "the envelope holds format, formatVersion and the payload only",
    });
  }
  const wrongKey = key === "session" ? "sessions" : "session";
  if (hasOwn.call(d, wrongKey)) {
    problems.push({
      code: "envelope",
      pointer: "/" + wrongKey,
      expected: `"${key}"`,
      found: `"${wrongKey}"`,
      message: `a ${format} document holds "${key}", not "${wrongKey}"`,
    });
  }
  if (!hasOwn.call(d, key)) {
    problems.push({
      code: "envelope",
      pointer: "/" + key,
      expected: key === "session" ? "the session object" : "an array of sessions",
      found: "nothing (the property is missing)",
      message: `the document has no "${key}"`,
    });
  }
  if (problems.length > 0) return fail();
  return { value: d[key], base: [key] };
}

/**
 * Writes migrated values into the document, in walk order (outer values before the values nested
 * in them). A caller-owned document is copied first, so the caller's objects never change.
 */
function applyUpgrades(doc: unknown, upgrades: readonly PendingUpgrade[], owned: boolean): unknown {
  if (upgrades.length === 0) return doc;
  const root = owned ? doc : structuredClone(doc);
  for (const { path, value } of upgrades) {
    let node = root as Record<string, unknown>;
    for (let i = 0; i < path.length - 1; i++) node = node[path[i] as string] as Record<string, unknown>;
    setOwn(node, path[path.length - 1], value);
  }
  return root;
}

// -------------------------------------------------------------------------------------------------
// Messages (the entries of a store's message log)

/**
 * The history state a log message is checked in on today's path: the message is validated,
 * migrated and reported as the one message of this state, so it is held to exactly what a message
 * in a stored session's history is held to, by the same walker and validators.
 */
const MESSAGE_HOST = "InMemoryChatHistoryState";
const MESSAGE_AT = "/messages/0";

function messageHost(registry: TypeRegistry, message: unknown): Record<string, unknown> {
  const def = registry.table.get(MESSAGE_HOST)?.def;
  if (def === undefined)
    throw new StatebagError(
      "invalid-message",
      `the registry has no "${MESSAGE_HOST}": log messages cannot be checked`,
      {
        hint: "compose the registry with statebag's defaultRegistry()",
      },
    );
  return { $type: MESSAGE_HOST, $version: def.version, messages: [message], droppedMessageCount: 0 };
}

/** A problem found in the host's message 0, as found in the message itself: pointers from the message, no host named. */
function fromHost<T extends { pointer: string; $type?: string; message?: string; hint?: string; expected?: string }>(
  p: T,
): T {
  const text = (s: string) => {
    let out = "";
    let i = 0;
    for (let j = s.indexOf(MESSAGE_AT); j !== -1; j = s.indexOf(MESSAGE_AT, i)) {
      const next = s.charCodeAt(j + MESSAGE_AT.length);
      // "/messages/0/x" -> "/x"; "/messages/0" alone -> "the message"; "/messages/01" stays.
      out += s.slice(i, j) + (next >= 48 && next <= 57 ? MESSAGE_AT : next === 47 ? "" : "the message");
      i = j + MESSAGE_AT.length;
    }
    out += s.slice(i);
    out = out.replace(/"InMemoryChatHistoryState" v[0-9]+/g, "a chat message");
    return out.split(`"${MESSAGE_HOST}"`).join("a chat message");
  };
  const at = p.pointer;
  const out = {
    ...p,
    pointer: at === MESSAGE_AT ? "" : at.startsWith(`${MESSAGE_AT}/`) ? at.slice(MESSAGE_AT.length) : at,
  };
  // The message itself is not a tagged value: a problem of its own names no type.
  if (out.$type === MESSAGE_HOST) delete out.$type;
  if (p.message !== undefined) out.message = text(p.message);
  if (p.hint !== undefined) out.hint = text(p.hint);
  if (p.expected !== undefined) out.expected = text(p.expected);
  return out;
}

/**
 * Writes one chat message (a message-log entry) as JSON, validated as a message of a stored history
 * is: the fused check, else the walker (every content, the date-time rule, unknown keys), the
 * save-side JSON limits and no NaN/Infinity. Throws `SessionValidationError` with pointers from the message.
 */
export function serializeMessage(message: unknown, options: SerializeOptions = {}): string {
  const what = "chat message";
  if (fusedSave(options, (limits) => fusedMessageDocument(message, limits) >= 0))
    return fusedText(message as object, options, what);
  const text = checkedText(message as object, { ...options, validate: true }, what);
  const walker = saveWalker({ ...options, validate: true });
  walker.walkValue(messageHost(options.registry ?? defaultRegistry(), message), PROVIDER_STATE_FAMILY, []);
  const result = walker.result();
  if (!result.ok)
    throw new SessionValidationError(`cannot save ${what}`, result.problems.map(fromHost), {
      preserved: result.preserved.map(fromHost),
      problemCount: result.problemCount,
    });
  return text ?? written(message as object, options.space, what);
}

/**
 * Reads one chat message (a message-log entry) as a session load reads a message of its history:
 * the same JSON limits and duplicate-key rule, then the fused check, else the walker (migrations
 * of older contents, unknown `$type`s kept or refused under `strict`). Throws
 * `SessionValidationError` with pointers from the message.
 */
export function deserializeMessage(input: string | Uint8Array, options: DeserializeOptions = {}): unknown {
  const { doc, fused } = load(input, options, "chat message", fusedMessageDocument);
  if (fused) return doc;
  const host = messageHost(options.registry ?? defaultRegistry(), doc);
  const walker = new SessionWalker({
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    collectUpgrades: true,
    ownedInput: true,
  });
  walker.walkValue(host, PROVIDER_STATE_FAMILY, []);
  const result = walker.result();
  if (!result.ok)
    throw new SessionValidationError("cannot load chat message", result.problems.map(fromHost), {
      preserved: result.preserved.map(fromHost),
      problemCount: result.problemCount,
    });
  const upgrades = walker.upgrades!;
  // Parsed here and discarded on error: the upgrades go into the message itself (held by the host).
  applyUpgrades(host, upgrades, true);
  reportMigrated(
    upgrades.map((u) => ({ ...u, path: u.path.slice(2) })),
    options,
  );
  if (result.preserved.length > 0) options.onPreserved?.(result.preserved.map(fromHost));
  return (host.messages as unknown[])[0];
}
