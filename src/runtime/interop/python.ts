/**
 * Agent Framework for Python: `AgentSession.to_dict()` documents.
 *
 * ```json
 * {"type": "session", "session_id": "s1", "service_session_id": "conv_1" | {...} | null,
 *  "state": {"in_memory": {"messages": [{"type": "message", "role": "user", "contents": [...]}]}, ...}}
 * ```
 *
 * Mapping (Python -> statebag):
 * - `session_id` -> `id`; `service_session_id` -> `conversationId` (a hosted session).
 * - `state["in_memory"]` (the default `InMemoryHistoryProvider` source id) -> the history state
 *   (`statebag.chatHistory`, `InMemoryChatHistoryState`), each `Message.to_dict()` mapped to the
 *   MEAI message shape (snake_case -> camelCase, `type` tag -> `$type` id, table below; the
 *   field mapping is one table for both directions, in `python-contents.ts`).
 * - every other state key: a `$type`-tagged value is kept as it is; anything else is wrapped as a
 *   `statebag.ForeignState` (format "python") and unwrapped on export.
 *
 * | Python `type`                | statebag `$type`       |
 * | ---------------------------- | ---------------------- |
 * | `text`                       | `text`                 |
 * | `text_reasoning`             | `reasoning`            |
 * | `data`, `uri`, `error`       | same                   |
 * | `usage`                      | `usage`                |
 * | `function_call`              | `functionCall`         |
 * | `function_result`            | `functionResult`       |
 * | `hosted_file`                | `hostedFile`           |
 * | `function_approval_request`  | `toolApprovalRequest`  |
 * | `function_approval_response` | `toolApprovalResponse` |
 * | anything else                | `statebag.foreign` (the raw content, kept in place) |
 *
 * Lossless both ways. Where one side has a field the other has no place for (Python's
 * `exception`, a JSON-string `arguments`, a legacy `"chat_message"` tag; statebag's `createdAt`,
 * `informationalOnly`, ...), the mapped item carries the original in its additional properties
 * (`"statebag.pythonOriginal"` on the statebag side, `"statebag.original"` on the Python side,
 * both of which Python and statebag keep as plain data). Writing back, the original is used when
 * the item was not changed since; a changed item is mapped afresh. Items that map cleanly (the
 * usual case) carry nothing extra.
 */
import { chatMessageFromMeai, type AIContent, type ChatMessage } from "../core/messages.js";
import { InMemoryChatHistoryProvider } from "../agent/providers/in-memory-chat-history.js";
import {
  createSessionData,
  type AgentSession,
  type ServiceSessionId,
  type SessionKind,
  type StateBag,
} from "../core/session.js";
import { isTaggedValue, type JsonObject, type JsonValue, type TaggedValue } from "../core/tagged.js";
import { pointerSegment } from "../core/json.js";
import { DEFAULT_JSON_LIMITS, JsonParseError, checkJsonLimits } from "../json/safe-json.js";
import { InteropError, at, describe, reframe, shown } from "./errors.js";
import type { ReaderContext } from "./dotnet.js";
import {
  SESSION_INFO_KEY,
  envelopeKey,
  foreignState,
  isForeignState,
  isHistoryState,
  droppedCountOf,
  type SessionInfo,
} from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, jsonEqual, type JsonRecord } from "./json-util.js";
import { approvalsFromPython, approvalsToPython } from "./python-approvals.js";
import { contentIn, contentOut, str, type Path } from "./python-contents.js";
import { decodeImported, readDocument, type SessionCodecOptions } from "./session-codec.js";

/** The document `AgentSession.to_dict()` writes. */
export interface PythonSessionJson {
  type: "session";
  session_id: string;
  service_session_id: string | { [name: string]: string } | null;
  state: { [sourceId: string]: JsonValue };
  [extra: string]: JsonValue;
}

export interface PythonInteropOptions {
  /** The Python history source id. Default `"in_memory"` (`InMemoryHistoryProvider.DEFAULT_SOURCE_ID`). */
  pythonHistoryKey?: string;
  /** statebag's history key. Default `"statebag.chatHistory"`. */
  historyKey?: string;
}

export interface ImportPythonOptions extends PythonInteropOptions, SessionCodecOptions {
  /** Overrides the session id (default: `session_id`). */
  id?: string;
}

export interface ExportPythonOptions extends PythonInteropOptions {
  /**
   * Record what Python has no field for (the session kind, the history's dropped count) under
   * `state["statebag.session"]`, a plain dict Python keeps as it is. Default false: the document
   * is exactly what Agent Framework writes.
   */
  metadata?: boolean;
}

export const PYTHON_DEFAULT_HISTORY_KEY = "in_memory";
/** In a statebag item's `additionalProperties`: the Python original it was mapped from. */
export const PYTHON_ORIGINAL_KEY = "statebag.pythonOriginal";
/** In a Python item's `additional_properties`: the statebag original it was mapped from. */
export const STATEBAG_ORIGINAL_KEY = "statebag.original";

const malformed = (path: Path, problem: string, hint?: string) =>
  new InteropError("python", "import", at(path), problem, hint);

// ---------------------------------------------------------------------------------------------
// Originals carried in additional properties

/** Splits the original stashed under `stashKey` in `obj[bagKey]` from the rest of `obj`. */
function takeStash(obj: JsonRecord, bagKey: string, stashKey: string): [JsonRecord, unknown] {
  const bag = obj[bagKey];
  if (!isPlainObject(bag) || !Object.hasOwn(bag, stashKey)) return [obj, undefined];
  const rest: JsonRecord = {};
  for (const key of Object.keys(bag)) if (key !== stashKey) defineOwn(rest, key, bag[key]);
  const clean: JsonRecord = {};
  for (const key of Object.keys(obj)) {
    if (key !== bagKey) defineOwn(clean, key, obj[key]);
    else if (Object.keys(rest).length > 0) defineOwn(clean, key, rest);
  }
  return [clean, bag[stashKey]];
}

function addStash(obj: JsonRecord, bagKey: string, stashKey: string, original: JsonRecord): void {
  const bag: JsonRecord = isPlainObject(obj[bagKey]) ? { ...(obj[bagKey] as JsonRecord) } : {};
  defineOwn(bag, stashKey, cloneJson(original));
  defineOwn(obj, bagKey, bag);
}

/** True when `fn` maps `value` to something equal to `expected` (false if it throws). */
function mapsTo(fn: (v: JsonRecord) => unknown, value: unknown, expected: unknown): boolean {
  if (!isPlainObject(value)) return false;
  try {
    return jsonEqual(fn(value), expected);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Contents (the field mapping itself is in python-contents.ts)

/*
 * Each item's round trip is checked on its own fields only: a nested content is mapped (and
 * checked, and given its own original if it needs one) exactly once, where it sits, and the
 * parent's check looks it up by identity. Checking the parent by mapping its whole subtree again
 * would map every level once per ancestor in each direction: exponential in the nesting depth.
 *
 * Likewise a saved original holds the item's own fields only, with `NESTED_MARK` where its nested
 * content sat; reading it back puts the child's own mapping there. A full copy of the subtree at
 * every level would make the output quadratic in the nesting depth. (An original saved whole, as
 * earlier versions wrote it, still reads back: it simply has no mark.)
 */

/** In a saved original: "the nested content went here" (mapped on its own, where it sits). */
const NESTED_MARK_KEY = "statebag.nested";
const isNestedMark = (value: unknown): boolean =>
  isPlainObject(value) && value[NESTED_MARK_KEY] === true && Object.keys(value).length === 1;

/** `obj` with the field `key` replaced by the nested mark (key order kept). */
function markNested(obj: JsonRecord, key: string): JsonRecord {
  const out: JsonRecord = {};
  for (const field of Object.keys(obj)) defineOwn(out, field, field === key ? { [NESTED_MARK_KEY]: true } : obj[field]);
  return out;
}

/** A copy of a saved original with its nested mark (at `key`) replaced by `child()`; undefined when there is no child to put there. */
function rebuildOriginal(
  original: JsonRecord,
  key: string,
  child: () => JsonRecord | undefined,
): JsonRecord | undefined {
  const out: JsonRecord = {};
  for (const field of Object.keys(original)) {
    if (field === key && isNestedMark(original[field])) {
      const nested = child();
      if (nested === undefined) return undefined;
      defineOwn(out, field, nested);
    } else if (original[field] !== undefined) defineOwn(out, field, cloneJson(original[field]));
  }
  return out;
}

/**
 * Maps the nested content at most once, however many times it is asked for (the saved original's
 * check and the fresh mapping both need it); a failure is remembered too, so a chain of failing
 * levels does not retry each child once per ancestor.
 */
function once<A extends unknown[], R>(fn: (...args: A) => R): ((...args: A) => R) & { done: () => R | undefined } {
  let state: { value: R } | { error: unknown } | undefined;
  const call = (...args: A): R => {
    if (state === undefined) {
      try {
        state = { value: fn(...args) };
      } catch (error) {
        state = { error };
      }
    }
    if ("error" in state) throw state.error;
    return state.value;
  };
  return Object.assign(call, { done: () => (state !== undefined && "value" in state ? state.value : undefined) });
}

/** One Python content (dict, or a bare string as Python also accepts) -> a statebag content. */
function importContent(p: unknown, path: Path): JsonRecord {
  if (typeof p === "string") return { $type: "text", text: p };
  if (!isPlainObject(p))
    throw malformed(
      path,
      `expected a content object, found ${describe(p)}`,
      'a content is {"type": "text", "text": "..."} (Content.to_dict())',
    );
  if (!str(p.type)) {
    if (str(p.$type)) return cloneJson(p); // a statebag content written as it is
    throw malformed(
      path,
      'a content needs a string "type"',
      'Content.from_dict() requires "type"; known ones are "text", "function_call", "function_result", ...',
    );
  }
  const [clean, original] = takeStash(p, "additional_properties", STATEBAG_ORIGINAL_KEY);
  const rawChild = clean.function_call;
  const child = once((raw: unknown, at: Path) => importContent(raw, at));
  const childOut = (c: JsonRecord) => (c === child.done() ? (rawChild as JsonRecord) : exportContent(c));
  if (isPlainObject(original)) {
    let rebuilt: JsonRecord | undefined;
    try {
      rebuilt = rebuildOriginal(original, "toolCall", () =>
        isPlainObject(rawChild) ? child(rawChild, [...path, "function_call"]) : undefined,
      );
    } catch {
      rebuilt = undefined; // the child fails on its own; the fresh mapping below says where
    }
    if (rebuilt !== undefined && mapsTo((o) => contentOut(o, childOut), rebuilt, clean)) return rebuilt;
  }
  const message = contentIn(clean, path, (raw, at) => (raw === rawChild ? child(raw, at) : importContent(raw, at)));
  if (!jsonEqual(contentOut(message, childOut), clean)) {
    const nested = child.done() !== undefined && message.toolCall === child.done();
    addStash(message, "additionalProperties", PYTHON_ORIGINAL_KEY, nested ? markNested(clean, "function_call") : clean);
  }
  return message;
}

/** One statebag content -> a Python content dict. */
function exportContent(m: JsonRecord): JsonRecord {
  const [clean, original] = takeStash(m, "additionalProperties", PYTHON_ORIGINAL_KEY);
  const sbChild = clean.toolCall;
  const child = once((c: JsonRecord) => exportContent(c));
  const childIn = (raw: unknown, at: Path) => (raw === child.done() ? (sbChild as JsonRecord) : importContent(raw, at));
  if (isPlainObject(original)) {
    const rebuilt = rebuildOriginal(original, "function_call", () =>
      isPlainObject(sbChild) ? child(sbChild) : undefined,
    );
    if (rebuilt !== undefined && mapsTo((o) => contentIn(o, [], childIn), rebuilt, clean)) return rebuilt;
  }
  const exported = contentOut(clean, (c) => (c === sbChild ? child(c) : exportContent(c)));
  if (!mapsTo((o) => contentIn(o, [], childIn), exported, clean)) {
    const nested = child.done() !== undefined && exported.function_call === child.done();
    addStash(exported, "additional_properties", STATEBAG_ORIGINAL_KEY, nested ? markNested(clean, "toolCall") : clean);
  }
  return exported;
}

// ---------------------------------------------------------------------------------------------
// Messages (the "head": everything but the contents, which map one by one)

function headIn(p: JsonRecord, path: Path): JsonRecord {
  let role = p.role;
  if (isPlainObject(role) && str(role.value)) role = role.value; // legacy {"value": "user"}
  if (!str(role))
    throw malformed(
      [...path, "role"],
      `a message needs a string "role", found ${describe(p.role)}`,
      'roles are "user", "assistant", "system", "tool" or any custom string',
    );
  const message: JsonRecord = {};
  if (str(p.author_name)) message.authorName = p.author_name;
  message.role = role;
  if (str(p.message_id)) message.messageId = p.message_id;
  if (isPlainObject(p.additional_properties)) message.additionalProperties = cloneJson(p.additional_properties);
  return message;
}

function headOut(m: JsonRecord): JsonRecord {
  const item: JsonRecord = { type: "message", role: m.role };
  if (m.authorName !== undefined) item.author_name = m.authorName;
  if (m.messageId !== undefined) item.message_id = m.messageId;
  if (m.additionalProperties !== undefined) item.additional_properties = cloneJson(m.additionalProperties);
  return item;
}

function withoutContents(obj: JsonRecord): JsonRecord {
  const out: JsonRecord = {};
  for (const key of Object.keys(obj)) if (key !== "contents") defineOwn(out, key, obj[key]);
  return out;
}

/** Puts `contents` right after `role` (the order both MEAI and `Message.to_dict()` write). */
function placeContents(head: JsonRecord, contents: JsonRecord[]): JsonRecord {
  const out: JsonRecord = {};
  let placed = false;
  for (const key of Object.keys(head)) {
    defineOwn(out, key, head[key]);
    if (key === "role") {
      defineOwn(out, "contents", contents);
      placed = true;
    }
  }
  if (!placed) defineOwn(out, "contents", contents);
  return out;
}

function importMessage(p: unknown, path: Path): ChatMessage {
  if (!isPlainObject(p))
    throw malformed(
      path,
      `expected a message object, found ${describe(p)}`,
      'a history entry is Message.to_dict(): {"type": "message", "role": ..., "contents": [...]}',
    );
  if (p.type !== "message" && p.type !== "chat_message") {
    throw malformed(
      [...path, "type"],
      `expected "type": "message", found ${describe(p.type)}`,
      'a history entry is Message.to_dict(): {"type": "message", "role": ..., "contents": [...]}',
    );
  }
  const rawContents = p.contents ?? [];
  if (!Array.isArray(rawContents))
    throw malformed([...path, "contents"], `expected an array of contents, found ${describe(rawContents)}`);
  const contents = rawContents.map((c, i) => importContent(c, [...path, "contents", i]));
  const [clean, original] = takeStash(withoutContents(p), "additional_properties", STATEBAG_ORIGINAL_KEY);
  let head: JsonRecord;
  if (mapsTo(headOut, original, clean)) head = cloneJson(original as JsonRecord);
  else {
    head = headIn(clean, path);
    if (!jsonEqual(headOut(head), clean)) addStash(head, "additionalProperties", PYTHON_ORIGINAL_KEY, clean);
  }
  return chatMessageFromMeai(placeContents(head, contents) as unknown as ChatMessage);
}

function exportMessage(m: ChatMessage): JsonRecord {
  const record = m as unknown as JsonRecord;
  const contents = (m.contents ?? []).map((c) => exportContent(c as unknown as JsonRecord));
  const [clean, original] = takeStash(withoutContents(record), "additionalProperties", PYTHON_ORIGINAL_KEY);
  let head: JsonRecord;
  if (mapsTo((o) => headIn(o, []), original, clean)) head = cloneJson(original as JsonRecord);
  else {
    head = headOut(clean);
    if (!mapsTo((o) => headIn(o, []), head, clean))
      addStash(head, "additional_properties", STATEBAG_ORIGINAL_KEY, clean);
  }
  return placeContents(head, contents);
}

/** Maps Python `Message.to_dict()` dicts to statebag (MEAI-shaped) messages. */
export function messagesFromPython(messages: readonly unknown[], path: Path = []): ChatMessage[] {
  return messages.map((p, i) => importMessage(p, [...path, i]));
}

/** Maps statebag messages to Python `Message.to_dict()` dicts. */
export function messagesToPython(messages: readonly ChatMessage[]): JsonRecord[] {
  return messages.map(exportMessage);
}

/** Maps one Python content dict to a statebag content. */
export function contentFromPython(content: unknown): AIContent {
  return importContent(content, []) as unknown as AIContent;
}

/** Maps one statebag content to a Python content dict. */
export function contentToPython(content: AIContent): JsonRecord {
  return exportContent(content as unknown as JsonRecord);
}

// ---------------------------------------------------------------------------------------------
// Sessions

/** How the approval round maps contents (python-approvals.ts). */
const APPROVAL_MAPPER = { from: (c: unknown) => contentFromPython(c), to: (c: AIContent) => contentToPython(c) };

const KNOWN_TOP_LEVEL = new Set(["type", "session_id", "service_session_id", "state"]);

function serviceSessionIdIn(value: unknown): ServiceSessionId | undefined {
  if (value === undefined || value === null) return undefined;
  if (str(value)) return value;
  if (isPlainObject(value) && Object.values(value).every(str)) return cloneJson(value) as { [name: string]: string };
  throw malformed(["service_session_id"], `expected a string, an object of strings or null, found ${describe(value)}`);
}

/** Reads `AgentSession.to_dict()` output (text or parsed) into a statebag session. */
export function importPythonSession(
  json: string | object,
  options: ImportPythonOptions = {},
  context?: ReaderContext,
): AgentSession {
  if (context === undefined) return readPythonSession(json, options, { shape: "python", sourcePointer: (p) => p });
  try {
    return readPythonSession(json, options, context);
  } catch (error) {
    throw reframe(error, context.shape, context.sourcePointer);
  }
}

function readPythonSession(json: string | object, options: ImportPythonOptions, context: ReaderContext): AgentSession {
  const doc = readDocument(json, options);
  const pyHistoryKey = options.pythonHistoryKey ?? PYTHON_DEFAULT_HISTORY_KEY;
  const historyKey = options.historyKey ?? InMemoryChatHistoryProvider.defaultKey;
  const hint =
    'Python\'s AgentSession.to_dict() writes {"type": "session", "session_id": ..., "service_session_id": ..., "state": {...}}';
  if (!isPlainObject(doc)) throw malformed([], `expected an object, found ${describe(doc)}`, hint);
  if (doc.type !== undefined && doc.type !== "session")
    throw malformed(["type"], `expected "type": "session", found ${describe(doc.type)}`, hint);
  if (!str(doc.session_id) || doc.session_id === "") {
    const looksDotnet = "stateBag" in doc;
    throw malformed(
      ["session_id"],
      `expected a non-empty string "session_id", found ${describe(doc.session_id)}`,
      looksDotnet ? 'this looks like a .NET session (it has "stateBag"): import it with { from: "dotnet" }' : hint,
    );
  }
  const state = doc.state ?? {};
  if (!isPlainObject(state)) throw malformed(["state"], `expected an object, found ${describe(state)}`, hint);
  const conversationId = serviceSessionIdIn(doc.service_session_id);

  const bag: StateBag = {};
  let info: SessionInfo | undefined;
  let hasHistory = false;
  const put = (key: string, value: TaggedValue) => {
    if (Object.hasOwn(bag, key)) {
      throw malformed(
        ["state", key],
        `two state entries map to the statebag key ${shown(key)}`,
        `import with another historyKey (now ${shown(historyKey)}) or rename one of them`,
      );
    }
    defineOwn(bag as JsonRecord, key, value);
  };
  for (const key of Object.keys(state)) {
    const value = state[key];
    const path = ["state", key];
    if (key === SESSION_INFO_KEY && isPlainObject(value) && value.$type === "statebag.SessionInfo") {
      info = value as unknown as SessionInfo;
      continue;
    }
    if (
      key === pyHistoryKey &&
      isPlainObject(value) &&
      !isTaggedValue(value) &&
      Array.isArray(value.messages) &&
      Object.keys(value).length === 1
    ) {
      put(historyKey, {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: messagesFromPython(value.messages, [...path, "messages"]),
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      });
      hasHistory = true;
    } else if (
      key === pyHistoryKey &&
      isPlainObject(value) &&
      !isTaggedValue(value) &&
      "messages" in value &&
      !Array.isArray(value.messages)
    ) {
      throw malformed([...path, "messages"], `expected an array of messages, found ${describe(value.messages)}`);
    } else if (isTaggedValue(value)) {
      put(key, cloneJson(value));
    } else {
      put(key, foreignState("python", cloneJson(value as JsonValue)) as unknown as TaggedValue);
    }
  }
  const extras: JsonRecord = {};
  for (const key of Object.keys(doc)) if (!KNOWN_TOP_LEVEL.has(key)) defineOwn(extras, key, cloneJson(doc[key]));
  if (Object.keys(extras).length > 0)
    put(envelopeKey("python"), foreignState("python", extras as JsonObject) as unknown as TaggedValue);

  approvalsFromPython(bag as JsonRecord, historyKey, APPROVAL_MAPPER);
  const kind: SessionKind | undefined =
    info?.kind ?? (conversationId !== undefined ? "hosted" : hasHistory ? "local" : undefined);
  if (hasHistory && droppedCountOf(info) > 0)
    (bag[historyKey] as JsonRecord).droppedMessageCount = droppedCountOf(info);
  const session = createSessionData({ id: options.id ?? doc.session_id, kind, conversationId, stateBag: bag });
  const historyPrefix = `/stateBag/${pointerSegment(historyKey)}/`;
  return decodeImported(
    session,
    context.shape,
    (pointer) => {
      if (hasHistory && pointer.startsWith(historyPrefix))
        return context.sourcePointer(`/state/${pointerSegment(pyHistoryKey)}/${pointer.slice(historyPrefix.length)}`);
      return context.sourcePointer(pointer.replace(/^\/stateBag\//, "/state/"));
    },
    options,
  );
}

/**
 * A session handed to export was not necessarily loaded (and so never held to the read limits):
 * the mapping recurses per level and a too-deep value would overflow the stack or the string
 * length. The check walks with an explicit stack, and counts depth as in the session document.
 * The limit is the default read limit: what a default read accepts, and shallow enough for the
 * per-level recursion of the mapping.
 */
function checkExportDepth(session: AgentSession, maxDepth: number): void {
  try {
    checkJsonLimits({ stateBag: session.stateBag }, { maxDepth, maxKeys: Number.MAX_SAFE_INTEGER, protoKeys: "keep" });
  } catch (error) {
    if (!(error instanceof JsonParseError) || error.code !== "json-too-deep") throw error;
    throw new InteropError(
      "python",
      "export",
      error.pointer ?? "",
      `the value nests deeper than ${maxDepth} levels`,
      "a document this deep could not be read back with the default limits: flatten the value (for a nested approval, keep the chain shorter)",
      error,
    );
  }
}

/** Writes a statebag session as Python's `AgentSession.to_dict()` document. */
export function exportPythonSession(session: AgentSession, options: ExportPythonOptions = {}): PythonSessionJson {
  const pyHistoryKey = options.pythonHistoryKey ?? PYTHON_DEFAULT_HISTORY_KEY;
  const historyKey = options.historyKey ?? InMemoryChatHistoryProvider.defaultKey;
  const fail = (path: Path, problem: string, hint?: string) =>
    new InteropError("python", "export", at(path), problem, hint);
  checkExportDepth(session, DEFAULT_JSON_LIMITS.maxDepth);
  const state: JsonRecord = {};
  let extras: JsonRecord = {};
  let dropped = 0;
  const put = (key: string, value: unknown) => {
    if (Object.hasOwn(state, key))
      throw fail(
        ["stateBag", key],
        `two state bag entries map to the Python state key ${shown(key)}`,
        `export with another pythonHistoryKey (now ${shown(pyHistoryKey)}) or rename one of them`,
      );
    defineOwn(state, key, value);
  };
  const sourceBag = approvalsToPython(session.stateBag as JsonRecord, historyKey, APPROVAL_MAPPER);
  for (const key of Object.keys(sourceBag)) {
    const value = sourceBag[key] as StateBag[string];
    if (key === envelopeKey("python") && isForeignState(value, "python") && isPlainObject(value.value)) {
      extras = cloneJson(value.value);
    } else if (key === historyKey && isHistoryState(value)) {
      put(pyHistoryKey, { messages: messagesToPython(value.messages) });
      dropped = typeof value.droppedMessageCount === "number" ? value.droppedMessageCount : 0;
    } else if (isForeignState(value, "python")) {
      put(key, cloneJson(value.value));
    } else if (key === SESSION_INFO_KEY) {
      throw fail(
        ["stateBag", key],
        `the key ${shown(key)} is reserved for session metadata`,
        "rename that provider's key",
      );
    } else {
      put(key, cloneJson(value));
    }
  }
  if (options.metadata === true && (session.kind !== undefined || dropped > 0)) {
    const info: SessionInfo = { $type: "statebag.SessionInfo" };
    if (session.kind !== undefined) info.kind = session.kind;
    if (dropped > 0) info.historyDroppedMessageCount = dropped;
    put(SESSION_INFO_KEY, info);
  }
  const doc: JsonRecord = {
    type: "session",
    session_id: session.id,
    service_session_id: session.conversationId === undefined ? null : cloneJson(session.conversationId),
    state,
  };
  for (const key of Object.keys(extras)) if (!KNOWN_TOP_LEVEL.has(key)) defineOwn(doc, key, extras[key]);
  return doc as PythonSessionJson;
}
