/**
 * `AgentChatSerializer`: a group chat's
 * state as a versioned document, never its agents (definitions and secrets stay in code).
 *
 * ```json
 * { "format": "statebag.agentChat", "formatVersion": 1,
 *   "history": [ ...ChatMessage ],
 *   "channels": [ { "channelKey": "hosted:researcher", "channelState": { ...an AgentSession } } ] }
 * ```
 *
 * With `{ encoding: "base64" }` each `channelState` is the base64 of its JSON text (option 3:
 * discourages casual edits, needs no escaping). Loading detects the form of each state: an object,
 * JSON text, or base64 of JSON text. `history` may likewise be an array or base64 of one.
 *
 * Every channel state goes through the session serialization (`serializeSession` /
 * `deserializeSession`), so it is validated and migrated like any stored session; the history is
 * checked the same way (as the messages of a history state). The whole document is checked before
 * the chat is touched: a failed restore leaves the chat exactly as it was.
 *
 * Save and restore are one contract: `serialize` checks the history and every channel state
 * exactly as `deserialize` will (same validation, same limits, `"__proto__"` kept as data inside
 * values), so whatever it writes restores, and whatever would not restore it refuses with the
 * same error. Parse limits apply to each part on its own: a channel state is held to the limits of
 * a stored session measured from its own root (its nesting inside the chat document does not
 * count), the history to those of a history state.
 *
 * Restore cases (the chat restored into may differ from the one saved):
 * - Equivalent / Enhanced: every saved channel whose agent is in the chat is restored; an agent
 *   with no saved channel catches up from the primary history on its first turn.
 * - Reduced: a saved channel whose agent is missing is kept in the chat (`pendingChannelKeys`),
 *   written back by the next `serialize`, and restored when that agent is added.
 * - Empty (no agents) and Invalid (the chat already has history or channels) fail fast with an
 *   `AgentChatRestoreError`; the chat is not changed and stays usable.
 */
import { StatebagError } from "../core/errors.js";
import { describeValue, quoted } from "../core/json.js";
import type { ChatMessage } from "../core/messages.js";
import {
  DEFAULT_JSON_LIMITS,
  checkJsonLimits,
  checkJsonSize,
  checkWritableJson,
  parseJson,
  protoKeyError,
  type JsonLimits,
} from "../json/safe-json.js";
import {
  SESSION_FORMAT,
  SESSION_FORMAT_VERSION,
  SessionValidationError,
  deserializeSession,
  serializeSession,
} from "../persistence/serialization.js";
import type { AgentSession } from "../core/session.js";
import { formatVersionProblem } from "../checks/session-rules.js";
import { isPlainObject } from "../interop/json-util.js";
import { decodeSession, problemHints, problemLines, type SessionCodecOptions } from "../interop/session-codec.js";
import type { JsonObject, TaggedValue } from "../core/tagged.js";
import { channelStateAccess } from "./channel.js";
import { groupChatInternals, type AgentGroupChat } from "./group-chat.js";

export const AGENT_CHAT_FORMAT = "statebag.agentChat";
export const AGENT_CHAT_FORMAT_VERSION = 1;

export interface AgentChatChannelDocument {
  channelKey: string;
  /** The channel's `AgentSession` as JSON, or base64 of its JSON text. */
  channelState: JsonObject | string;
}

export interface AgentChatDocument {
  format: typeof AGENT_CHAT_FORMAT;
  formatVersion: typeof AGENT_CHAT_FORMAT_VERSION;
  /** The primary history, or base64 of its JSON text. */
  history: ChatMessage[] | string;
  channels: AgentChatChannelDocument[];
}

export interface SerializeAgentChatOptions extends Pick<SessionCodecOptions, "registry" | "strict" | "limits"> {
  /** `"json"` (default): channel states as JSON; `"base64"`: base64 of their JSON text. */
  encoding?: "json" | "base64";
}

export interface AgentChatRestoreReport {
  /** Channels given back to agents in the chat. */
  restored: string[];
  /** Saved channels whose agent is not in the chat: kept, written back, restored when it joins. */
  pending: string[];
  /** Agents with no saved channel: they catch up from the history on their first turn. */
  fresh: string[];
}

export type AgentChatRestoreReason = "empty" | "not-empty" | "document";

/** A chat could not be restored. The chat is unchanged and still usable. */
export class AgentChatRestoreError extends StatebagError {
  constructor(
    readonly reason: AgentChatRestoreReason,
    message: string,
    options: { hint: string; pointer?: string; cause?: unknown },
  ) {
    super(
      `agent-chat-${reason}`,
      options.pointer === undefined ? message : `${message} (at ${JSON.stringify(options.pointer)})`,
      options,
    );
    this.pointer = options.pointer;
  }
  readonly pointer?: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeText(value: string): string | undefined {
  const compact = value.replace(/\s+/g, "");
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return undefined;
  return Buffer.from(compact, "base64").toString("utf8");
}

/** An object, JSON text, or base64 of JSON text -> parsed JSON. */
function readEncoded(value: unknown, pointer: string, what: string, limits: JsonLimits | undefined): unknown {
  if (typeof value !== "string") return value;
  const trimmed = value.trimStart();
  const text = trimmed.startsWith("{") || trimmed.startsWith("[") ? value : decodeText(value);
  if (text === undefined) {
    throw new AgentChatRestoreError("document", `${what} is a string that is neither JSON nor base64`, {
      pointer,
      hint: 'channel states are JSON objects, or base64 of their JSON text (encoding: "base64")',
    });
  }
  try {
    return parseJson(text, partLimits(limits));
  } catch (cause) {
    throw new AgentChatRestoreError("document", `${what} does not hold JSON: ${reasonOf(cause)}`, {
      pointer,
      cause,
      hint: "the document was damaged or edited by hand; serialize the chat again",
    });
  }
}

/** At most this many problems are listed in a restore error's message (the cause holds the rest, and the count). */
const LISTED_PROBLEMS = 20;

/** The problems of a session validation error, one per line (a bounded number), at their place in the chat document. */
function describeProblems(cause: unknown, where: (pointer: string) => string): string {
  if (cause instanceof SessionValidationError) {
    const lines = problemLines(cause, where).slice(0, LISTED_PROBLEMS);
    const total = cause.problemCount;
    if (total > lines.length)
      lines.push(`  (${total} problems in all; the first are listed, see error.cause.problems)`);
    return ":\n" + lines.join("\n");
  }
  return `: ${reasonOf(cause)}`;
}

/** What went wrong, from an error that is not a validation error: a StatebagError's message (its hint is a field of its own). */
function reasonOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * The limits a part of a chat document (the history, one channel state) is parsed with: the
 * caller's, keeping `"__proto__"` inside values as data, as session loading does.
 */
function partLimits(limits: JsonLimits | undefined): JsonLimits {
  return limits?.protoKeys !== undefined ? limits : { ...limits, protoKeys: "keep" };
}

/** A channel state sits this many levels below the chat document's root (`/channels/<i>/channelState`). */
const CHANNEL_STATE_DEPTH = 3;

function shellLimits(limits: JsonLimits | undefined): JsonLimits {
  return { ...partLimits(limits), maxDepth: (limits?.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth) + CHANNEL_STATE_DEPTH };
}

/**
 * Reads the chat document itself (text or object). Its depth limit leaves room for the channel
 * states nested in it, which are then held to a stored session's limits from their own root.
 */
function readChatDocument(document: unknown, limits: JsonLimits | undefined): unknown {
  const shell = shellLimits(limits);
  const doc = typeof document === "string" ? parseJson(document, shell) : (checkJsonLimits(document, shell), document);
  if (limits?.protoKeys !== "keep" && isPlainObject(doc)) {
    // The chat document's own keys are looked up by name: a "__proto__" there is refused.
    if (Object.hasOwn(doc, "__proto__"))
      throw protoKeyError(["__proto__"], "the chat document holds format, formatVersion, history and channels only");
    if (Array.isArray(doc.channels)) {
      const channels = doc.channels as unknown[];
      for (let i = 0; i < channels.length; i++) {
        if (isPlainObject(channels[i]) && Object.hasOwn(channels[i] as object, "__proto__"))
          throw protoKeyError(["channels", i, "__proto__"], "a channel holds channelKey and channelState only");
      }
    }
  }
  return doc;
}

/** The history as the messages of a history state in a stored session: how it is checked, on save and on load alike. */
function historyDocument(messages: unknown): { format: string; formatVersion: number; session: AgentSession } {
  const history = {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    messages,
    droppedMessageCount: 0,
    branches: [],
    branchPoints: [],
  };
  return {
    format: SESSION_FORMAT,
    formatVersion: SESSION_FORMAT_VERSION,
    session: { id: "agent-chat-history", stateBag: { history: history as unknown as TaggedValue } },
  };
}

const HISTORY_PREFIX = /^\/session\/stateBag\/history\/messages/;

function historyError(cause: unknown, encoded: boolean): AgentChatRestoreError {
  const where = (inner: string) =>
    encoded ? `/history (decoded)${inner.replace(HISTORY_PREFIX, "")}` : inner.replace(HISTORY_PREFIX, "/history");
  return documentError(
    "/history",
    `the history is not valid${describeProblems(cause, where)}`,
    hintOf(cause, "the document was damaged or edited by hand"),
    cause,
  );
}

/** Loads the primary history (validated and migrated). `encoded`: the document held it as text. */
function readHistory(raw: unknown, encoded: boolean, options: SessionCodecOptions): ChatMessage[] {
  if (!Array.isArray(raw))
    throw documentError("/history", "the history must be an array of messages", "serialize the chat again");
  try {
    const loaded = deserializeSession(historyDocument(raw), {
      registry: options.registry,
      strict: options.strict,
      limits: options.limits,
      onPreserved: options.onPreserved,
    });
    return (loaded.stateBag.history as unknown as { messages: ChatMessage[] }).messages;
  } catch (cause) {
    if (!(cause instanceof SessionValidationError)) throw cause;
    throw historyError(cause, encoded);
  }
}

/** Writes the primary history: checked exactly as `readHistory` will check it; returns a JSON copy. */
function writeHistory(history: readonly ChatMessage[], options: SerializeAgentChatOptions): ChatMessage[] {
  let text: string;
  try {
    text = serializeSession(historyDocument(history).session, {
      registry: options.registry,
      strict: options.strict,
      limits: options.limits,
      validate: true,
    });
  } catch (cause) {
    if (!(cause instanceof SessionValidationError)) throw cause;
    throw historyError(cause, false);
  }
  return (
    parseJson(text, partLimits(options.limits)) as { session: { stateBag: { history: { messages: ChatMessage[] } } } }
  ).session.stateBag.history.messages;
}

function documentError(pointer: string, problem: string, hint: string, cause?: unknown): AgentChatRestoreError {
  return new AgentChatRestoreError("document", problem, { pointer, hint, cause });
}

function hintOf(cause: unknown, fallback: string): string {
  const hints = cause instanceof SessionValidationError ? problemHints(cause).slice(0, 5) : [];
  if (hints.length > 0) return hints.join("; ");
  return (cause as StatebagError).hint ?? fallback;
}

// eslint-disable-next-line @typescript-eslint/no-extraneous-class
// biome-ignore lint/complexity/noStaticOnlyClass: the public API mirrors Agent Framework's AgentChatSerializer (static serialize/deserialize)
export class AgentChatSerializer {
  /**
   * The chat's state as a versioned document (plain JSON; `JSON.stringify` it to store). Checks
   * everything `deserialize` will check (pass it the same registry, strictness and limits), so
   * the document always restores; throws the error `deserialize` would give otherwise.
   */
  static serialize(chat: AgentGroupChat, options: SerializeAgentChatOptions = {}): AgentChatDocument {
    const encoding = options.encoding ?? "json";
    if (encoding !== "json" && encoding !== "base64")
      throw new RangeError(`unknown encoding ${JSON.stringify(encoding)}: use "json" or "base64"`);
    const state = groupChatInternals(chat);
    const sessions = new Map<string, AgentSession>();
    for (const [key, channel] of state.channels) sessions.set(key, channel.session);
    for (const [key, session] of state.pending) sessions.set(key, session);
    const channels = [...sessions.keys()].sort().map((channelKey): AgentChatChannelDocument => {
      const text = serializeSession(sessions.get(channelKey)!, {
        registry: options.registry,
        strict: options.strict,
        limits: options.limits,
        validate: true,
      });
      return {
        channelKey,
        channelState:
          encoding === "base64"
            ? Buffer.from(text, "utf8").toString("base64")
            : (parseJson(text, partLimits(options.limits)) as JsonObject),
      };
    });
    // The checks deserialize makes, in its order: the document's limits, then the history's.
    checkWritableJson(
      { format: AGENT_CHAT_FORMAT, formatVersion: AGENT_CHAT_FORMAT_VERSION, history: state.history },
      shellLimits(options.limits),
    );
    const history = writeHistory(state.history, options);
    const doc: AgentChatDocument = {
      format: AGENT_CHAT_FORMAT,
      formatVersion: AGENT_CHAT_FORMAT_VERSION,
      history,
      channels,
    };
    checkJsonSize(JSON.stringify(doc), options.limits);
    return doc;
  }

  /**
   * Restores a document (object or JSON text) into a freshly created chat that already has its
   * agents. Validates everything first; the chat changes only if the whole document is good.
   */
  static deserialize(
    chat: AgentGroupChat,
    document: AgentChatDocument | object | string,
    options: SessionCodecOptions = {},
  ): AgentChatRestoreReport {
    const state = groupChatInternals(chat);
    if (state.members.length === 0) {
      throw new AgentChatRestoreError(
        "empty",
        "cannot restore a chat that has no agents: nothing would receive the channel states",
        {
          hint: "create the chat with the same agents (definitions and secrets are never serialized), then deserialize into it; the chat is unchanged and usable",
        },
      );
    }
    if (state.history.length > 0 || state.channels.size > 0 || state.pending.size > 0) {
      throw new AgentChatRestoreError(
        "not-empty",
        `cannot restore into a chat that already has ${state.history.length} history message(s) and ${state.channels.size + state.pending.size} channel(s)`,
        {
          hint: "deserialize into a freshly created chat; this chat is unchanged and usable",
        },
      );
    }

    const doc = readChatDocument(document, options.limits);
    const bad = documentError;
    if (!isPlainObject(doc))
      throw bad("", "an agent chat document must be an object", "serialize with AgentChatSerializer.serialize(chat)");
    if (doc.format !== AGENT_CHAT_FORMAT)
      throw bad(
        "/format",
        `expected "format": "${AGENT_CHAT_FORMAT}", found ${typeof doc.format === "string" ? quoted(doc.format) : describeValue(doc.format)}`,
        "this is not a statebag agent chat document",
      );
    // The envelope's version rule is the session document's (checks/session-rules.ts).
    const versionProblem = formatVersionProblem(doc.formatVersion, AGENT_CHAT_FORMAT_VERSION);
    if (versionProblem === "invalid") {
      throw bad(
        "/formatVersion",
        `expected a positive integer "formatVersion", found ${describeValue(doc.formatVersion)}`,
        `this release writes formatVersion ${AGENT_CHAT_FORMAT_VERSION}`,
      );
    }
    if (versionProblem === "newer") {
      throw bad(
        "/formatVersion",
        `the document has formatVersion ${doc.formatVersion}, newer than this release reads (${AGENT_CHAT_FORMAT_VERSION})`,
        "upgrade statebag; the document is untouched",
      );
    }

    // History: validated and migrated like a history state's messages.
    const rawHistory = readEncoded(doc.history, "/history", "the history", options.limits);
    const history = readHistory(rawHistory, typeof doc.history === "string", options);

    // Channels: each an AgentSession, validated and migrated.
    if (!Array.isArray(doc.channels))
      throw bad("/channels", "expected an array of channels", "serialize the chat again");
    const restored = new Map<string, AgentSession>();
    doc.channels.forEach((entry: unknown, i: number) => {
      const pointer = `/channels/${i}`;
      if (!isPlainObject(entry))
        throw bad(pointer, "a channel must be an object { channelKey, channelState }", "serialize the chat again");
      const key = entry.channelKey;
      if (typeof key !== "string" || key === "")
        throw bad(
          `${pointer}/channelKey`,
          "expected a non-empty string channel key",
          'keys look like "local:writer" or "hosted:researcher"',
        );
      if (restored.has(key))
        throw bad(
          `${pointer}/channelKey`,
          `the channel key ${quoted(key)} appears twice`,
          "each channel is saved once; the document was edited by hand",
        );
      const raw = readEncoded(
        entry.channelState,
        `${pointer}/channelState`,
        `the state of channel ${quoted(key)}`,
        options.limits,
      );
      if (!isPlainObject(raw))
        throw bad(
          `${pointer}/channelState`,
          `the state of channel ${quoted(key)} must be a session object`,
          "serialize the chat again",
        );
      let session: AgentSession;
      try {
        session = decodeSession(raw, options);
      } catch (cause) {
        const base = `${pointer}/channelState`;
        const where = (inner: string) =>
          typeof entry.channelState === "string" ? `${base} (decoded)${inner}` : `${base}${inner}`;
        throw bad(
          base,
          `the state of channel ${quoted(key)} is not a valid session${describeProblems(cause, where)}`,
          hintOf(cause, "serialize the chat again"),
          cause,
        );
      }
      const mark = channelStateAccess.read(session);
      if (mark && mark.synced > history.length) {
        throw bad(
          `${pointer}/channelState`,
          `channel ${quoted(key)} has seen ${mark.synced} messages but the history holds ${history.length}`,
          "the history and the channels come from different saves; use one document as written",
        );
      }
      restored.set(key, session);
    });

    // Everything checked: apply.
    const report: AgentChatRestoreReport = { restored: [], pending: [], fresh: [] };
    // A loop, not push(...history): spreading a long history overflows the call stack.
    for (const message of history) state.history.push(message);
    for (const [key, session] of restored) {
      const member = state.members.find((m) => m.key === key);
      if (member) {
        state.channels.set(key, { ...member, session });
        report.restored.push(key);
      } else {
        state.pending.set(key, session);
        report.pending.push(key);
      }
    }
    for (const member of state.members) if (!restored.has(member.key)) report.fresh.push(member.key);
    return report;
  }
}
