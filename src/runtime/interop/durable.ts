/**
 * Durable agent entity state (`DurableAgentState`, Agent Framework's Durable Task integration for
 * .NET and Python): the one versioned MAF session format.
 *
 * ```json
 * {"schemaVersion": "1.1.0", "data": {"conversationHistory": [
 *   {"$type": "request", "correlationId": "...", "createdAt": "...", "messages": [...], "responseType": "text"},
 *   {"$type": "response", "correlationId": "...", "createdAt": "...", "messages": [...], "usage": {...}}]}}
 * ```
 *
 * Versions 1.0-1.2 are read alike: 1.2.0's `data.session` (an opaque AgentSession),
 * `ingestedPositions`, `truncation`, `errorResponse` / `compaction` entries and stable message ids
 * are kept verbatim (tested with fixture 43); 2.0's `terminalResults`, `completionReceipts`,
 * `historyBinding`, `developer` role and string arguments likewise, as `durable-2-preview`.
 *
 * `schemaVersion` is checked as the JSON converter checks it: present, a version number, major 1
 * (the `durable-2-preview` shape also takes the proposed `2.0.0`). Mapping:
 * - every entry's messages, in order, become the history (`statebag.chatHistory`); everything
 *   else (each entry's `$type`, correlation id, timestamps, usage, unknown members; `data`'s other
 *   members; unknown root members) is kept under `statebag.durable.state` and written back around
 *   the same messages. Messages appended later (a statebag agent ran) are written as new
 *   request/response entries.
 * - contents: the state's own DTOs (`text`, `reasoning`, `functionCall`, `functionResult`, `data`,
 *   `uri`, `error`, `hostedFile`, `usage`) are MEAI's shapes; `{"$type": "unknown", "content": X}`
 *   reads as the MEAI content X (tool approvals travel this way). A DTO that does not map back
 *   exactly (extra members, `hostedVectorStore`, an unknown wrapper of a non-content) is kept as a
 *   `statebag.foreign` content and written back verbatim.
 */
import { randomUUID } from "node:crypto";
import type { ChatMessage } from "../core/messages.js";
import { createSessionData, type AgentSession, type StateBag } from "../core/session.js";
import type { JsonObject, TaggedValue } from "../core/tagged.js";
import { InMemoryChatHistoryProvider } from "../agent/providers/in-memory-chat-history.js";
import { InteropError, at, describe, shown } from "./errors.js";
import { foreignContent, foreignState, isForeignContent, isForeignState, isHistoryState } from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, jsonEqual, type JsonRecord } from "./json-util.js";
import { decodeImported, readDocument, type SessionCodecOptions } from "./session-codec.js";

/** The bag key holding everything of a durable state that is not a message. */
export const DURABLE_STATE_KEY = "statebag.durable.state";
export const DURABLE_DEFAULT_SCHEMA_VERSION = "1.1.0";
const PREVIEW_VERSIONS = new Set(["2.0.0"]);

export interface DurableImportOptions extends SessionCodecOptions {
  /** The statebag session id (a durable state has none: its entity key is outside it). Default: a new UUID. */
  id?: string;
  historyKey?: string;
  /** Accept the proposed 2.0 envelope. */
  preview?: boolean;
}

export interface DurableExportOptions {
  historyKey?: string;
  preview?: boolean;
}

const DTO_TYPES = new Set([
  "data",
  "error",
  "functionCall",
  "functionResult",
  "hostedFile",
  "hostedVectorStore",
  "text",
  "reasoning",
  "uri",
  "usage",
  "unknown",
]);
const MESSAGE_KEYS = new Set(["authorName", "createdAt", "contents", "role", "messageId"]);

type Shape = "durable" | "durable-2-preview";

/** .NET `Version.TryParse`: 2 to 4 non-negative integer components. */
function parseVersion(text: string): number[] | undefined {
  if (!/^\s*\d+(\.\d+){1,3}\s*$/.test(text)) return undefined;
  const parts = text.trim().split(".").map(Number);
  return parts.every((n) => Number.isSafeInteger(n) && n <= 2147483647) ? parts : undefined;
}

/** Checks `schemaVersion` as `DurableAgentStateJsonConverter.Read` does (and the preview's listed versions). */
export function checkDurableVersion(doc: JsonRecord, shape: Shape): string {
  const fail = (problem: string, hint: string) => new InteropError(shape, "import", "/schemaVersion", problem, hint);
  if (!Object.hasOwn(doc, "schemaVersion"))
    throw fail(
      "The durable agent state is missing the 'schemaVersion' property.",
      'durable state documents start with "schemaVersion": "1.1.0"',
    );
  const text = doc.schemaVersion;
  const parts = typeof text === "string" ? parseVersion(text) : undefined;
  if (typeof text !== "string" || parts === undefined)
    throw fail("The durable agent state has an invalid 'schemaVersion' property.", 'a version such as "1.1.0"');
  if (parts[0] === 1) return text;
  if (shape === "durable-2-preview" && PREVIEW_VERSIONS.has(text)) return text;
  throw fail(
    `The durable agent state schema version ${shown(text)} is not supported.`,
    parts[0] === 2 && shape === "durable"
      ? "the 2.0 envelope is a proposal: read it with --from durable-2-preview"
      : "statebag reads schema versions 1.x (and the proposed 2.0.0 as durable-2-preview)",
  );
}

function contentIn(dto: JsonRecord): JsonRecord {
  let message: JsonRecord | undefined;
  const extra = (keys: string[]) => Object.keys(dto).some((k) => k !== "$type" && !keys.includes(k));
  switch (dto.$type) {
    case "unknown":
      if (
        !extra(["content"]) &&
        isPlainObject(dto.content) &&
        typeof dto.content.$type === "string" &&
        dto.content.$type !== "statebag.foreign"
      )
        message = cloneJson(dto.content);
      break;
    case "usage":
      if (!extra(["usage"]) && isPlainObject(dto.usage)) message = { $type: "usage", details: cloneJson(dto.usage) };
      break;
    case "data":
      // statebag's data content carries its media type inside the data: URI.
      if (!extra(["uri"]) && typeof dto.uri === "string") message = { $type: "data", uri: dto.uri };
      break;
    case "hostedVectorStore":
      break;
    default:
      if (typeof dto.$type === "string" && DTO_TYPES.has(dto.$type)) message = cloneJson(dto);
  }
  return message !== undefined && jsonEqual(contentOut(message), dto)
    ? message
    : (foreignContent("dotnet", cloneJson(dto) as JsonObject) as unknown as JsonRecord);
}

function contentOut(m: JsonRecord): JsonRecord {
  if (isForeignContent(m, "dotnet")) return cloneJson(m.value) as JsonRecord;
  if (m.$type === "usage" && isPlainObject(m.details) && Object.keys(m).length === 2)
    return { $type: "usage", usage: cloneJson(m.details) };
  if (typeof m.$type === "string" && DTO_TYPES.has(m.$type) && m.$type !== "usage" && m.$type !== "unknown") {
    const back = contentInExact(m);
    if (back) return cloneJson(m);
  }
  return { $type: "unknown", content: cloneJson(m) };
}

/** Whether a statebag content of a DTO type is written as that DTO exactly (nothing the DTO lacks). */
function contentInExact(m: JsonRecord): boolean {
  const allowed: Record<string, string[]> = {
    text: ["text"],
    reasoning: ["text"],
    functionCall: ["arguments", "callId", "name"],
    functionResult: ["callId", "result"],
    data: ["uri"],
    uri: ["uri", "mediaType"],
    error: ["message", "errorCode", "details"],
    hostedFile: ["fileId"],
  };
  const keys = allowed[m.$type as string];
  if (!keys) return false;
  if (m.$type === "functionCall" && !isPlainObject(m.arguments)) return false;
  return Object.keys(m).every((k) => k === "$type" || keys.includes(k));
}

interface EntryRecord {
  /** The entry without its messages. */
  entry: JsonRecord;
  count: number;
  /** Members of each message statebag's message has no field for, by position (null: none). */
  messageExtras?: (JsonRecord | null)[];
  /** The entry had no "messages" member. */
  noMessages?: boolean;
}

/** Reads a durable entity state (text or parsed) into a statebag session. */
export function importDurableState(json: string | object, options: DurableImportOptions = {}): AgentSession {
  const shape: Shape = options.preview ? "durable-2-preview" : "durable";
  const doc = readDocument(json, options);
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError(shape, "import", at(path), problem, hint);
  if (!isPlainObject(doc))
    throw fail(
      [],
      `expected an object, found ${describe(doc)}`,
      'a durable state is {"schemaVersion": "1.1.0", "data": {"conversationHistory": [...]}}',
    );
  checkDurableVersion(doc, shape);
  if (!Object.hasOwn(doc, "data")) throw fail(["data"], "The durable agent state is missing the 'data' property.");
  const data = doc.data;
  if (!isPlainObject(data)) throw fail(["data"], `expected an object, found ${describe(data)}`);
  const history = data.conversationHistory ?? [];
  if (!Array.isArray(history))
    throw fail(["data", "conversationHistory"], `expected an array of entries, found ${describe(history)}`);
  const messages: ChatMessage[] = [];
  const entries: EntryRecord[] = [];
  const sourceOf: string[] = []; // history index -> pointer of the message in the document
  history.forEach((entry, i) => {
    const here = ["data", "conversationHistory", i];
    if (!isPlainObject(entry))
      throw fail(
        here,
        `expected an entry object, found ${describe(entry)}`,
        'entries are {"$type": "request" | "response", "correlationId", "createdAt", "messages": [...]}',
      );
    const list = entry.messages ?? [];
    if (!Array.isArray(list))
      throw fail([...here, "messages"], `expected an array of messages, found ${describe(list)}`);
    const record: EntryRecord = { entry: {}, count: list.length };
    for (const key of Object.keys(entry)) if (key !== "messages") defineOwn(record.entry, key, cloneJson(entry[key]));
    if (!Object.hasOwn(entry, "messages")) record.noMessages = true;
    const extras: (JsonRecord | null)[] = [];
    list.forEach((message, j) => {
      const at = [...here, "messages", j];
      if (!isPlainObject(message)) throw fail(at, `expected a message object, found ${describe(message)}`);
      if (typeof message.role !== "string")
        throw fail([...at, "role"], `a message needs a string "role", found ${describe(message.role)}`);
      const contents = message.contents ?? [];
      if (!Array.isArray(contents))
        throw fail([...at, "contents"], `expected an array of contents, found ${describe(contents)}`);
      const out: JsonRecord = { role: message.role };
      if (message.authorName !== undefined && message.authorName !== null) out.authorName = message.authorName;
      if (message.createdAt !== undefined && message.createdAt !== null) out.createdAt = message.createdAt;
      if (typeof message.messageId === "string") out.messageId = message.messageId;
      out.contents = contents.map((c, k) => {
        if (!isPlainObject(c) || typeof c.$type !== "string")
          throw fail(
            [...at, "contents", k],
            'expected a content object with a "$type" discriminator',
            'contents are {"$type": "text", "text": "..."}, {"$type": "functionCall", ...}, or {"$type": "unknown", "content": ...}',
          );
        return contentIn(c);
      });
      const extra: JsonRecord = {};
      for (const key of Object.keys(message))
        if (
          !MESSAGE_KEYS.has(key) ||
          (key === "messageId" && typeof message.messageId !== "string") ||
          ((key === "authorName" || key === "createdAt") && message[key] === null)
        )
          defineOwn(extra, key, cloneJson(message[key]));
      if (!Object.hasOwn(message, "contents")) extra["statebag.noContents"] = true;
      extras.push(Object.keys(extra).length > 0 ? extra : null);
      messages.push(out as unknown as ChatMessage);
      sourceOf.push(`/data/conversationHistory/${i}/messages/${j}`);
    });
    if (extras.some((e) => e !== null)) record.messageExtras = extras;
    entries.push(record);
  });
  const kept: JsonRecord = { schemaVersion: doc.schemaVersion, entries };
  const dataRest: JsonRecord = {};
  for (const key of Object.keys(data))
    if (key !== "conversationHistory") defineOwn(dataRest, key, cloneJson(data[key]));
  if (!Object.hasOwn(data, "conversationHistory")) kept.noConversationHistory = true;
  kept.data = dataRest;
  const root: JsonRecord = {};
  for (const key of Object.keys(doc))
    if (key !== "schemaVersion" && key !== "data") defineOwn(root, key, cloneJson(doc[key]));
  kept.root = root;
  const historyKey = options.historyKey ?? InMemoryChatHistoryProvider.defaultKey;
  const bag: StateBag = {};
  defineOwn(bag as JsonRecord, historyKey, {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    branches: [],
    branchPoints: [],
    messages,
    droppedMessageCount: 0,
  });
  defineOwn(bag as JsonRecord, DURABLE_STATE_KEY, foreignState("dotnet", kept as JsonObject) as unknown as TaggedValue);
  const session = createSessionData({ id: options.id, kind: "local", stateBag: bag });
  const prefix = `/stateBag/${historyKey.replace(/~/g, "~0").replace(/\//g, "~1")}/messages/`;
  return decodeImported(
    session,
    shape,
    (pointer) => {
      if (!pointer.startsWith(prefix)) return pointer;
      const rest = pointer.slice(prefix.length);
      const slash = rest.indexOf("/");
      const index = Number(slash < 0 ? rest : rest.slice(0, slash));
      return (sourceOf[index] ?? pointer) + (slash < 0 ? "" : rest.slice(slash));
    },
    options,
  );
}

function messageOut(m: ChatMessage, extra: JsonRecord | null | undefined): JsonRecord {
  const record = m as unknown as JsonRecord;
  const out: JsonRecord = {};
  if (record.authorName !== undefined) out.authorName = record.authorName;
  if (record.createdAt !== undefined) out.createdAt = record.createdAt;
  if (!(extra && extra["statebag.noContents"] === true && (m.contents ?? []).length === 0))
    out.contents = (m.contents ?? []).map((c) => contentOut(c as unknown as JsonRecord));
  out.role = record.role;
  if (record.messageId !== undefined) out.messageId = record.messageId;
  if (extra)
    for (const key of Object.keys(extra)) if (key !== "statebag.noContents") defineOwn(out, key, cloneJson(extra[key]));
  return out;
}

/** Writes a statebag session as a durable entity state document. */
export function exportDurableState(session: AgentSession, options: DurableExportOptions = {}): JsonRecord {
  const shape: Shape = options.preview ? "durable-2-preview" : "durable";
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError(shape, "export", at(path), problem, hint);
  const historyKey = options.historyKey ?? InMemoryChatHistoryProvider.defaultKey;
  let messages: ChatMessage[] = [];
  let kept: JsonRecord | undefined;
  for (const key of Object.keys(session.stateBag)) {
    const value = session.stateBag[key];
    if (key === historyKey && isHistoryState(value)) messages = value.messages;
    else if (key === DURABLE_STATE_KEY && isForeignState(value) && isPlainObject(value.value)) kept = value.value;
    else
      throw fail(
        ["stateBag", key],
        `the state under ${shown(key)} has no place in a durable agent state (it holds the conversation only)`,
        'export to "dotnet" to keep every provider state',
      );
  }
  const records = (kept && Array.isArray(kept.entries) ? kept.entries : []) as EntryRecord[];
  const history: JsonRecord[] = [];
  let next = 0;
  for (const record of records) {
    const take = messages.slice(next, next + record.count);
    if (take.length < record.count) break; // the history was cut (a reducer ran): write what is left as new entries
    const entry = cloneJson(record.entry);
    if (!(record.noMessages && take.length === 0))
      entry.messages = take.map((m, i) => messageOut(m, record.messageExtras?.[i]));
    history.push(entry);
    next += record.count;
  }
  // Messages a statebag agent added: user messages open a request, the rest form its response.
  let start = next;
  while (start < messages.length) {
    const isUser = messages[start].role === "user";
    let end = start;
    while (end < messages.length && (messages[end].role === "user") === isUser) end++;
    history.push({
      $type: isUser ? "request" : "response",
      correlationId: randomUUID().replace(/-/g, ""),
      createdAt: new Date().toISOString(),
      messages: messages.slice(start, end).map((m) => messageOut(m, null)),
    });
    start = end;
  }
  const data: JsonRecord = {};
  if (!(kept?.noConversationHistory === true && history.length === 0)) data.conversationHistory = history;
  if (kept && isPlainObject(kept.data))
    for (const key of Object.keys(kept.data)) defineOwn(data, key, cloneJson(kept.data[key]));
  const doc: JsonRecord = {
    schemaVersion: typeof kept?.schemaVersion === "string" ? kept.schemaVersion : DURABLE_DEFAULT_SCHEMA_VERSION,
    data,
  };
  if (kept && isPlainObject(kept.root))
    for (const key of Object.keys(kept.root)) defineOwn(doc, key, cloneJson(kept.root[key]));
  return doc;
}
