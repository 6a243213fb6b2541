/**
 * Quarantine loads (opt-in, `quarantine: true`; a strict load never comes here): the state-bag
 * entries (or single messages) that fail are set aside, as their exact original text, in
 * `session.quarantine`, and the rest takes the strict tail.
 */
import { jsonPointer, setOwn } from "../core/json.js";
import type { AgentSession, QuarantinedValue } from "../core/session.js";
import type { ValidationProblem } from "../core/problems.js";
import { valueTexts } from "../json/json-spans.js";
import { PROVIDER_STATE_FAMILY } from "../registry/registry.js";
import { defaultRegistry } from "../validation/default-registry.js";
import { SessionWalker } from "../validation/validate.js";
import type { DeserializeOptions } from "./options.js";
import { walkLoaded, type LoadedDocument } from "./walk-loaded.js";

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
export function walkQuarantining(input: unknown, loaded: LoadedDocument, options: DeserializeOptions): unknown {
  const { doc, payload, base, many } = loaded;
  const walkerOptions = {
    registry: options.registry ?? defaultRegistry(),
    strict: options.strict,
    maxNesting: options.maxNesting,
    maxProblems: options.maxProblems,
    protoKeysAsData: options.limits?.protoKeys === "keep",
    quarantine: "keep" as const,
  };
  const sessions: unknown[] = many ? [...(payload as unknown[])] : [payload];
  const found: SetAside[][] = sessions.map((session, index) =>
    setAside(session, many ? [...base, index] : [...base], walkerOptions),
  );
  if (found.every((list) => list.length === 0)) return walkLoaded(loaded, options, "keep");
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
  let textIndex = 0;
  const entries: QuarantinedValue[][] = [];
  for (let i = 0; i < sessions.length; i++) {
    if (found[i].length === 0) {
      entries.push([]);
      continue;
    }
    const prefix = many ? base.length + 1 : base.length;
    const list = found[i].map((f) => {
      const text = texts[textIndex++] ?? JSON.stringify(f.value);
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
  const result = walkLoaded({ ...loaded, doc: root, payload: cleaned }, options, "keep");
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
  const object = session as Record<string, unknown>;
  const bag = object.stateBag;
  if (typeof bag !== "object" || bag === null || Array.isArray(bag)) return [];
  if (hasOwnKey.call(bag, "__proto__") && options.protoKeysAsData !== true) return []; // refused whole
  // Problems of the session object itself refuse it whole.
  const shell = new SessionWalker(options);
  shell.walkSession({ ...object, stateBag: {} }, base);
  if (!shell.result().ok) return [];
  const out: SetAside[] = [];
  for (const key in bag) {
    if (!hasOwnKey.call(bag, key)) continue;
    const state = (bag as Record<string, unknown>)[key];
    const path = [...base, "stateBag", key];
    const result = walkOne(state, path, options);
    if (result.ok) continue;
    const messages = splitMessages(state, path, options);
    if (messages !== undefined) for (const message of messages) out.push(message);
    else
      out.push({
        path,
        value: state,
        problems: result.problems,
        problemCount: result.problemCount ?? result.problems.length,
      });
  }
  return out;
}

function walkOne(value: unknown, path: (string | number)[], options: WalkerOptions) {
  const walker = new SessionWalker(options);
  walker.walkValue(value, PROVIDER_STATE_FAMILY, path);
  return walker.result();
}

/**
 * A failing value with a `messages` array whose failures are all in single messages: those
 * messages (each checked alone in a copy of the value, then the rest checked together).
 * Undefined when the value itself is at fault.
 */
function splitMessages(value: unknown, path: (string | number)[], options: WalkerOptions): SetAside[] | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const state = value as Record<string, unknown>;
  const messages = state.messages;
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  if (!walkOne({ ...state, messages: [] }, path, options).ok) return undefined;
  const bad: SetAside[] = [];
  const good: unknown[] = [];
  const at0 = jsonPointer([...path, "messages", 0]);
  for (let i = 0; i < messages.length; i++) {
    const result = walkOne({ ...state, messages: [messages[i]] }, path, options);
    if (result.ok) {
      good.push(messages[i]);
      continue;
    }
    const at = jsonPointer([...path, "messages", i]);
    bad.push({
      path: [...path, "messages", i],
      value: messages[i],
      problems: result.problems.map((p) => reindexed(p, at0, at)),
      problemCount: result.problemCount ?? result.problems.length,
    });
  }
  if (bad.length === 0 || !walkOne({ ...state, messages: good }, path, options).ok) return undefined;
  return bad;
}

/** A problem found with the message at index 0 of a copy, as at its real index. */
function reindexed(p: ValidationProblem, from: string, to: string): ValidationProblem {
  const swap = (s: string) => {
    let out = "";
    let copied = 0;
    for (let j = s.indexOf(from); j !== -1; j = s.indexOf(from, copied)) {
      const next = s.charCodeAt(j + from.length);
      out += s.slice(copied, j) + (next >= 48 && next <= 57 ? from : to);
      copied = j + from.length;
    }
    return out + s.slice(copied);
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
  for (const key in from) if (hasOwnKey.call(from, key)) setOwn(bag, key, from[key]);
  const dropped = new Map<string, Set<number>>();
  for (const problem of found) {
    const key = problem.path[prefix + 1] as string;
    if (problem.path.length === prefix + 2) delete bag[key];
    else {
      let set = dropped.get(key);
      if (set === undefined) dropped.set(key, (set = new Set()));
      set.add(problem.path[prefix + 3] as number);
    }
  }
  for (const [key, set] of dropped) {
    const state = bag[key] as Record<string, unknown>;
    setOwn(bag, key, { ...state, messages: (state.messages as unknown[]).filter((_, i) => !set.has(i)) });
  }
  const before = Array.isArray(session.quarantine) ? (session.quarantine as QuarantinedValue[]) : [];
  return { ...session, stateBag: bag, quarantine: [...before, ...entries] };
}

const hasOwnKey = Object.prototype.hasOwnProperty;
