/**
 * Reading stored session documents for people: load one (any of the stored forms), and describe
 * what it holds and what is wrong with it. Shared by `validate` and `inspect`.
 */
import type { TypeRegistry } from "../runtime/registry/registry.js";
import { JsonParseError, parseJson } from "../runtime/json/safe-json.js";
import {
  deserializeSession,
  deserializeSessions,
  SessionValidationError,
  SESSIONS_FORMAT,
  type MigratedValue,
} from "../runtime/persistence/serialization.js";
import type { AgentSession, QuarantinedValue } from "../runtime/core/session.js";
import type { PreservedValue, ValidationProblem } from "../runtime/core/problems.js";
import { echo, type Colors } from "./io.js";

/** Longest problem message echoed (it quotes pointers and values from the document). */
const MAX_MESSAGE = 1000;

export interface StateSummary {
  key: string;
  $type: string;
  version: number;
  /** Number of messages, for values that hold a `messages` array. */
  messages?: number;
}

export interface SessionSummary {
  id: string;
  kind?: string;
  conversationId?: unknown;
  state: StateSummary[];
}

export interface DocumentReport {
  ok: boolean;
  /** "session" (envelope), "sessions" (several), "bare" (JSON.stringify(session)). */
  form?: "session" | "sessions" | "bare";
  sessions: SessionSummary[];
  problems: ValidationProblem[];
  /** Values kept verbatim: types this registry does not know, or newer versions. */
  preserved: PreservedValue[];
  /** True when loading applied migrations (the stored text is older than the code). */
  migrated: boolean;
  /** The values migrations changed: where, and type/version before and after. */
  migrations: MigratedValue[];
  /** The loaded sessions (after migrations), when the document is valid. */
  loaded?: AgentSession[];
}

export function summarize(session: AgentSession): SessionSummary {
  const state: StateSummary[] = [];
  for (const [key, value] of Object.entries(session.stateBag ?? {})) {
    const tagged = value as { $type?: unknown; $version?: unknown; messages?: unknown };
    const entry: StateSummary = {
      key,
      $type: String(tagged?.$type),
      version: typeof tagged?.$version === "number" ? tagged.$version : 1,
    };
    if (Array.isArray(tagged?.messages)) entry.messages = tagged.messages.length;
    state.push(entry);
  }
  const out: SessionSummary = { id: session.id, state };
  if (session.kind !== undefined) out.kind = session.kind;
  if (session.conversationId !== undefined) out.conversationId = session.conversationId;
  return out;
}

/**
 * Loads `text` as stored sessions (validating and migrating), collecting every problem. Bytes are
 * decoded as the loader decodes them (invalid UTF-8 is its error). `maxBytes` raises the size
 * limit; `onParsed` receives the parsed document (so a caller need not parse it again).
 */
export function checkDocument(
  text: string | Uint8Array,
  options: { registry: TypeRegistry; strict: boolean; maxBytes?: number; onParsed?: (doc: unknown) => void },
): DocumentReport {
  const report: DocumentReport = {
    ok: false,
    sessions: [],
    problems: [],
    preserved: [],
    migrated: false,
    migrations: [],
  };
  let doc: unknown;
  try {
    doc = parseJson(text, options.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes });
  } catch (error) {
    if (!(error instanceof JsonParseError)) throw error;
    // The runtime's hint names its option; the CLI's is --max-bytes.
    const hint =
      error.code === "json-too-large"
        ? "if the application reads it with a higher limits.maxBytes, check it with --max-bytes <size> (the same limit)"
        : error.hint;
    report.problems.push({
      code: "json",
      pointer: error.pointer ?? "",
      expected: "well-formed JSON",
      found:
        error.line === undefined ? error.code : `a syntax error at line ${error.line}, column ${error.column ?? 1}`,
      message: error.message,
      ...(hint ? { hint } : {}),
    });
    return report;
  }
  options.onParsed?.(doc);
  const isObject = typeof doc === "object" && doc !== null && !Array.isArray(doc);
  const format = isObject ? (doc as { format?: unknown }).format : undefined;
  report.form =
    format === SESSIONS_FORMAT
      ? "sessions"
      : format === undefined && isObject && "stateBag" in (doc as object)
        ? "bare"
        : "session";
  const loadOptions = {
    registry: options.registry,
    strict: options.strict,
    // Loops, not push(...values): spreading a long list overflows the call stack.
    onPreserved: (values: PreservedValue[]) => {
      for (const value of values) report.preserved.push(value);
    },
    onMigrated: (values: MigratedValue[]) => {
      for (const value of values) report.migrations.push(value);
    },
  };
  try {
    const loaded =
      report.form === "sessions"
        ? deserializeSessions(doc, loadOptions)
        : [deserializeSession(doc, { ...loadOptions, allowBare: true })];
    report.migrated = report.migrations.length > 0;
    report.loaded = loaded;
    report.sessions = loaded.map(summarize);
    report.ok = true;
  } catch (error) {
    if (!(error instanceof SessionValidationError)) throw error;
    for (const problem of error.problems) report.problems.push(problem);
    const seen = new Set(report.preserved);
    for (const preserved of error.preserved) if (!seen.has(preserved)) report.preserved.push(preserved);
  }
  return report;
}

/**
 * Human lines for problems: pointer, message, expected/found, hint. Every part quotes the
 * document (keys, `$type` values, ids), so each is escaped and cut; at most `limit` problems are
 * listed, then the count of the rest.
 */
export function problemLines(problems: readonly ValidationProblem[], c: Colors, indent = "  ", limit = 50): string[] {
  const lines: string[] = [];
  const shown = Math.min(problems.length, limit);
  for (let i = 0; i < shown; i++) {
    const problem = problems[i];
    const pointer = problem.pointer === "" ? "(document root)" : echo(problem.pointer);
    // The pointer is printed once, above the sentence: its place-less form when it has one.
    const message = problem.reason ?? problem.message;
    lines.push(`${indent}${c.bold(pointer)}`);
    lines.push(`${indent}  ${echo(message, MAX_MESSAGE)}`);
    if ((problem.expected || problem.found) && !problem.message.includes(problem.found))
      lines.push(`${indent}  ${c.dim(`expected ${echo(problem.expected)}; found ${echo(problem.found)}`)}`);
    if (problem.hint) lines.push(`${indent}  ${c.cyan("fix:")} ${echo(problem.hint, MAX_MESSAGE)}`);
  }
  if (problems.length > limit) lines.push(`${indent}... and ${problems.length - limit} more (use --json for all)`);
  return lines;
}

export function stateLine(s: StateSummary): string {
  return `${echo(s.key)}: ${echo(s.$type)} v${s.version}${s.messages !== undefined ? ` (${s.messages} message${s.messages === 1 ? "" : "s"})` : ""}`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** "InMemoryChatHistoryState v1 -> v2, RollingSummaryState v1 -> v2": the distinct transitions. */
export function migrationSummary(migrations: readonly MigratedValue[]): string {
  const seen = new Map<string, number>();
  for (const migration of migrations) {
    const key = `${echo(migration.fromType)} v${migration.from} -> ${migration.toType === migration.fromType ? "" : `${echo(migration.toType)} `}v${migration.to}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].map(([k, n]) => (n > 1 ? `${k} (${n}x)` : k)).join(", ");
}

/** One line for a value kept verbatim (unknown type or newer version). */
export function preservedLine(p: PreservedValue, c: Colors): string {
  const message = p.message.replace(` at ${p.pointer}`, "");
  return `${c.yellow("kept as is:")} ${echo(p.pointer)}: ${echo(message, MAX_MESSAGE)}`;
}

/** How many lines of one kind (state entries, kept values) a report prints; --json has them all. */
export const LISTED_LINES = 50;

/** One line per item, at most `limit`, then how many more: a document with 100,000 values prints a page. */
export function listedLines<T>(
  items: readonly T[],
  render: (item: T) => string,
  indent: string,
  limit = LISTED_LINES,
): string[] {
  const lines: string[] = [];
  const shown = Math.min(items.length, limit);
  for (let i = 0; i < shown; i++) lines.push(indent + render(items[i]));
  if (items.length > shown) lines.push(`${indent}... and ${items.length - shown} more (use --json for all)`);
  return lines;
}

/** The values a quarantine load set aside, as stored in a (parsed) session document: `session.quarantine`. */
export function storedQuarantine(doc: unknown): QuarantinedValue[] {
  const document = doc as { session?: { quarantine?: unknown }; quarantine?: unknown } | null;
  const quarantine =
    typeof document === "object" && document !== null
      ? document.session !== undefined
        ? document.session?.quarantine
        : document.quarantine
      : undefined;
  return Array.isArray(quarantine) ? (quarantine as QuarantinedValue[]) : [];
}

/** One line for a quarantined value: where it was, its size, and why it was set aside. */
export function quarantineLine(q: QuarantinedValue, c: Colors): string {
  const why = typeof q?.reason?.message === "string" ? q.reason.message : "(no reason recorded)";
  return `${c.yellow("quarantined:")} ${echo(String(q?.pointer))} (${typeof q?.text === "string" ? q.text.length : 0} chars): ${echo(why, MAX_MESSAGE)}`;
}
