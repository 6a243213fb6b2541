/**
 * Agent Framework .NET stores, read whole (Agent Framework @ 5eb3eb74, Aug 2026).
 *
 * - `FileSystemAgentSessionStore` (Foundry hosting): `{root}/a-{agent}/u-{userId}/c-{conversationId}.json`,
 *   the `a-` and `u-` layers absent when there is no agent name / user id; each segment sanitized by
 *   percent-encoding `%` and every character invalid in a file name as `%XX` (upper-case hex), and an
 *   all-dots segment as `%2E` per dot. A file holds `SerializeSessionAsync`'s output. Each session
 *   is imported with its agent, user and conversation under the bag key `statebag.dotnet.fsStore`
 *   (`DOTNET_FS_STORE_KEY`; a store-level owner field is planned), not written back on export.
 * - Cosmos DB chat history (`CosmosChatHistoryProvider`): one document per message,
 *   `{id, conversationId, timestamp, messageId, role, message: "<ChatMessage JSON>", type: "ChatMessage",
 *   ttl?, tenantId?, userId?, sessionId?}`. A JSON export of the container (an array, JSON lines, or one document)
 *   becomes one message log per conversation (hierarchical partitions: per tenant/user/session).
 *   The message string is written with System.Text.Json's default options (PascalCase names,
 *   nulls written): names are read case-insensitively into MEAI's camelCase and nulls left out.
 *   The document's other members are kept in the message's `additionalProperties["statebag.cosmos"]`.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../core/messages.js";
import { checkJsonSize } from "../json/safe-json.js";
import { chatMessageFromMeai } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { JsonObject, TaggedValue } from "../core/tagged.js";
import { detectSessionShape } from "./detect.js";
import { DOTNET_FS_STORE_KEY } from "./dotnet.js";
import { InteropError, at, describe } from "./errors.js";
import { foreignState } from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, type JsonRecord } from "./json-util.js";
import { readDocument, type SessionCodecOptions } from "./session-codec.js";
import { familyOf, type SessionShape } from "./shapes.js";

export { DOTNET_FS_STORE_KEY };
export const COSMOS_KEY = "statebag.cosmos";

/** Reverses `FileSystemAgentSessionStore.Sanitize` (`%XX` -> the character). */
export function decodeFsSegment(segment: string): string {
  return segment.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** `FileSystemAgentSessionStore.Sanitize` with Linux's invalid file name characters (NUL and `/`). */
export function encodeFsSegment(value: string): string {
  const out = value.replace(/[%/\0]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0"));
  return out.length > 0 && /^\.+$/.test(out) ? "%2E".repeat(out.length) : out;
}

export interface FsStoreEntry {
  /** Path relative to the root, with `/`. */
  file: string;
  agent?: string;
  user?: string;
  conversation: string;
  /** The statebag session id: the relative path without `.json`. */
  id: string;
}

/** The session files of a `FileSystemAgentSessionStore` root, and what was skipped (with why). Links are not followed. */
export async function listDotnetFsStore(
  root: string,
): Promise<{ entries: FsStoreEntry[]; skipped: { file: string; reason: string }[] }> {
  const entries: FsStoreEntry[] = [];
  const skipped: { file: string; reason: string }[] = [];
  const walk = async (dir: string, rel: string[], agent: string | undefined, user: string | undefined) => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      const file = [...rel, name].join("/");
      const info = await lstat(join(dir, name));
      if (info.isSymbolicLink()) skipped.push({ file, reason: "a symbolic link (not followed)" });
      else if (info.isDirectory()) {
        if (name.startsWith("a-") && rel.length === 0)
          await walk(join(dir, name), [...rel, name], decodeFsSegment(name.slice(2)), undefined);
        else if (
          name.startsWith("u-") &&
          user === undefined &&
          rel.length <= 1 &&
          (rel.length === 0 || agent !== undefined)
        )
          await walk(join(dir, name), [...rel, name], agent, decodeFsSegment(name.slice(2)));
        else skipped.push({ file, reason: "not an a-{agent} or u-{user} directory of the store layout" });
      } else if (info.isFile() && name.startsWith("c-") && name.endsWith(".json")) {
        const entry: FsStoreEntry = { file, conversation: decodeFsSegment(name.slice(2, -5)), id: file.slice(0, -5) };
        if (agent !== undefined) entry.agent = agent;
        if (user !== undefined) entry.user = user;
        entries.push(entry);
      } else
        skipped.push({
          file,
          reason: name.endsWith(".tmp")
            ? "an unfinished write (temp file)"
            : "not a c-{conversation}.json session file",
        });
    }
  };
  await walk(root, [], undefined, undefined);
  return { entries, skipped };
}

/** The shape a store file is read as: recognised from its members (any .NET agent's session). */
export function fsStoreShape(doc: unknown, file: string): SessionShape {
  const detected = detectSessionShape(doc);
  // Any .NET agent's session; not Python's shapes (AG-UI snapshots, checkpoints included) nor a durable entity state.
  if (
    detected === undefined ||
    detected.ambiguous ||
    familyOf(detected.shape) !== "dotnet" ||
    detected.shape.startsWith("durable")
  ) {
    throw new InteropError(
      "dotnet",
      "import",
      "",
      `${file} is not a .NET session document${detected ? ` (it looks like ${detected.shape})` : ""}`,
      'FileSystemAgentSessionStore files hold SerializeSessionAsync output, {"stateBag": {...}}',
    );
  }
  return detected.shape;
}

/** Records where the store kept a session. */
export function withFsStoreOwner(session: AgentSession, entry: FsStoreEntry): AgentSession {
  const owner: JsonRecord = { conversation: entry.conversation };
  if (entry.agent !== undefined) owner.agent = entry.agent;
  if (entry.user !== undefined) owner.user = entry.user;
  defineOwn(
    session.stateBag as JsonRecord,
    DOTNET_FS_STORE_KEY,
    foreignState("dotnet", owner as JsonObject) as unknown as TaggedValue,
  );
  return session;
}

/** Reads a store file (held to the loader's limits). */
export async function readFsStoreFile(
  root: string,
  entry: FsStoreEntry,
  options: SessionCodecOptions = {},
): Promise<unknown> {
  return readDocument(await readFile(join(root, ...entry.file.split("/")), "utf8"), options);
}

export interface CosmosConversation {
  /** The message log's storage id: the conversation id, or `tenant/user/session` with hierarchical partitions. */
  storageId: string;
  conversationId: string;
  tenantId?: string;
  userId?: string;
  messages: ChatMessage[];
}

/** MEAI's camelCase name of a System.Text.Json default (PascalCase) name. */
const camel = (key: string) => (key.startsWith("$") || key === "" ? key : key[0].toLowerCase() + key.slice(1));
/** Values whose members are data, not MEAI property names. */
const DATA_MEMBERS = new Set(["additionalProperties", "arguments", "result", "details", "additionalCounts"]);

function normalise(value: unknown, data: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => normalise(v, data));
  if (!isPlainObject(value)) return value;
  const out: JsonRecord = {};
  for (const key of Object.keys(value)) {
    const child = value[key];
    if (child === null && !data) continue;
    const name = data ? key : camel(key);
    defineOwn(out, name, data ? cloneJson(child) : normalise(child, DATA_MEMBERS.has(name)));
  }
  return out;
}

/** The text as one JSON value, or undefined when it is not one (such as JSON lines). */
function wholeDocument(text: string, options: SessionCodecOptions): unknown {
  try {
    return readDocument(text, options);
  } catch {
    return undefined;
  }
}

/**
 * Reads a JSON export of a Cosmos chat-history container (an array of documents, or one document
 * per line) into one message list per conversation, oldest first (by `timestamp`, then input order).
 */
export function readCosmosChatHistory(text: string, options: SessionCodecOptions = {}): CosmosConversation[] {
  const shape = "dotnet";
  // The whole export is held to the size limit, JSON lines too (each line is then held to the rest).
  checkJsonSize(text, options.limits);
  const trimmed = text.trimStart();
  let docs: unknown[];
  let pointerOf: (i: number) => string;
  if (trimmed.startsWith("[")) {
    const parsed = readDocument(text, options);
    docs = parsed as unknown[];
    pointerOf = (i) => `/${i}`;
  } else {
    // One document, possibly written over several lines, is read as one (not as JSON lines).
    const whole = trimmed.startsWith("{") ? wholeDocument(text, options) : undefined;
    docs = whole === undefined ? [] : [whole];
    pointerOf = (i) => `/${i}`;
  }
  if (docs.length === 0 && !trimmed.startsWith("[")) {
    const lines: number[] = [];
    text.split("\n").forEach((line, n) => {
      if (line.trim() === "") return;
      docs.push(readDocument(line, options));
      lines.push(n + 1);
    });
    pointerOf = (i) => `/${i} (line ${lines[i]})`;
  }
  const byLog = new Map<
    string,
    { conversation: CosmosConversation; items: { ts: number; order: number; message: ChatMessage }[] }
  >();
  docs.forEach((doc, i) => {
    const fail = (path: (string | number)[], problem: string, hint?: string) =>
      new InteropError(shape, "import", pointerOf(i) + at(path), problem, hint);
    if (!isPlainObject(doc))
      throw fail(
        [],
        `expected a Cosmos chat-history document, found ${describe(doc)}`,
        'each document is {"id", "conversationId", "timestamp", "message": "<ChatMessage JSON>", "type": "ChatMessage"}',
      );
    if (doc.type !== "ChatMessage")
      throw fail(
        ["type"],
        `expected "ChatMessage", found ${describe(doc.type)}`,
        "export only the chat-history container's ChatMessage documents",
      );
    if (typeof doc.conversationId !== "string" || doc.conversationId === "")
      throw fail(["conversationId"], `expected a conversation id string, found ${describe(doc.conversationId)}`);
    if (typeof doc.message !== "string")
      throw fail(["message"], `expected the ChatMessage as a JSON string, found ${describe(doc.message)}`);
    let inner: unknown;
    try {
      inner = readDocument(doc.message, options);
    } catch (error) {
      throw fail(["message"], `the message string is not JSON the loader accepts: ${(error as Error).message}`);
    }
    const normalised = normalise(inner, false);
    if (
      !isPlainObject(normalised) ||
      (normalised.role !== undefined && typeof normalised.role !== "string") ||
      (normalised.contents !== undefined && !Array.isArray(normalised.contents))
    ) {
      throw fail(
        ["message"],
        "the message string is not a ChatMessage",
        'a ChatMessage is {"role": "user", "contents": [{"$type": "text", "text": "..."}]}',
      );
    }
    (normalised.contents as unknown[] | undefined)?.forEach((c, j) => {
      if (!isPlainObject(c) || typeof c.$type !== "string")
        throw fail(["message"], `content ${j} of the message has no "$type"`);
    });
    const meta: JsonRecord = {};
    for (const key of Object.keys(doc)) if (key !== "message") defineOwn(meta, key, cloneJson(doc[key]));
    const props = isPlainObject(normalised.additionalProperties) ? normalised.additionalProperties : {};
    defineOwn(props, COSMOS_KEY, meta);
    normalised.additionalProperties = props;
    const tenant = typeof doc.tenantId === "string" ? doc.tenantId : undefined;
    const user = typeof doc.userId === "string" ? doc.userId : undefined;
    const storageId =
      tenant !== undefined || user !== undefined
        ? [tenant ?? "", user ?? "", typeof doc.sessionId === "string" ? doc.sessionId : doc.conversationId].join("/")
        : doc.conversationId;
    let log = byLog.get(storageId);
    if (!log) {
      const conversation: CosmosConversation = { storageId, conversationId: doc.conversationId, messages: [] };
      if (tenant !== undefined) conversation.tenantId = tenant;
      if (user !== undefined) conversation.userId = user;
      byLog.set(storageId, (log = { conversation, items: [] }));
    }
    log.items.push({
      ts: typeof doc.timestamp === "number" ? doc.timestamp : 0,
      order: i,
      message: chatMessageFromMeai(normalised as unknown as Parameters<typeof chatMessageFromMeai>[0]),
    });
  });
  return [...byLog.values()].map(({ conversation, items }) => {
    items.sort((a, b) => a.ts - b.ts || a.order - b.order);
    conversation.messages = items.map((x) => x.message);
    return conversation;
  });
}
