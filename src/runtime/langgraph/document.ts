/**
 * How one LangGraph thread is kept in a statebag session: the session `<idPrefix><thread id>`
 * holds, under the state bag key `langgraph`, every namespace of the thread with its checkpoints,
 * its channel values (one per channel and version, shared by the checkpoints that point at it, as
 * LangGraph's SQL savers keep blobs) and its pending writes.
 *
 * Values go through the saver's serializer (`serde`). Its JSON output is kept as text, except that
 * a list of LangChain messages that maps losslessly is kept as statebag chat messages (readable by
 * any statebag tool); its binary output is kept as base64. Everything user-controlled (namespaces,
 * channel names, task ids) sits in array entries, never in object keys, so no name can collide with
 * a JSON limit (`__proto__`) or another field.
 */
import { StatebagError } from "../core/errors.js";
import { quoted } from "../core/json.js";
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { channelToChatMessages, chatMessagesToChannel } from "./messages.js";
import type { LangGraphChannelVersion, LangGraphSerializer } from "./types.js";

/** The state bag key of a thread's LangGraph state. */
export const LANGGRAPH_STATE_KEY = "langgraph";
/** Its `$type` (kept verbatim by every statebag codec: the registry does not model it). */
export const LANGGRAPH_THREAD_TYPE = "statebag.LangGraphThread";

/** A value as the serializer wrote it: JSON text, chat messages (from JSON), or bytes (base64). */
export interface StoredValue {
  serde: string;
  text?: string;
  messages?: ChatMessage[];
  base64?: string;
}

export interface StoredCheckpoint {
  id: string;
  /** The checkpoint without its channel values, through the serializer. */
  checkpoint: StoredValue;
  metadata: StoredValue;
  parent?: string;
}

export interface StoredBlob {
  channel: string;
  /** `JSON.stringify(version)`, so the number 1 and the string "1" stay apart. */
  version: string;
  /** Absent: the channel had no value at this version (LangGraph's "empty" blob). */
  value?: StoredValue;
}

export interface StoredWrite {
  checkpoint: string;
  task: string;
  idx: number;
  channel: string;
  value: StoredValue;
  /** The task path (`writesSortKey`); "" when none was given. */
  path: string;
}

export interface StoredNamespace {
  ns: string;
  checkpoints: StoredCheckpoint[];
  blobs: StoredBlob[];
  writes: StoredWrite[];
}

/** The state bag value (array form, as stored). */
export interface LangGraphThreadState {
  $type: typeof LANGGRAPH_THREAD_TYPE;
  $version: 1;
  threadId: string;
  namespaces: StoredNamespace[];
}

/** A namespace, indexed for lookups. */
export interface Namespace {
  ns: string;
  checkpoints: Map<string, StoredCheckpoint>;
  /** channel -> version key -> blob. */
  blobs: Map<string, Map<string, StoredBlob>>;
  /** checkpoint id -> writes. */
  writes: Map<string, StoredWrite[]>;
}

export interface Thread {
  threadId: string;
  namespaces: Map<string, Namespace>;
}

export function versionKey(version: LangGraphChannelVersion): string {
  return JSON.stringify(version);
}

export function emptyThread(threadId: string): Thread {
  return { threadId, namespaces: new Map() };
}

export function namespaceOf(thread: Thread, ns: string): Namespace {
  let found = thread.namespaces.get(ns);
  if (found === undefined) {
    found = { ns, checkpoints: new Map(), blobs: new Map(), writes: new Map() };
    thread.namespaces.set(ns, found);
  }
  return found;
}

/** A session that does not hold a LangGraph thread where one was expected (an id taken by another session). */
export class NotALangGraphThreadError extends StatebagError {
  constructor(sessionId: string, found: string) {
    super(
      "session-invalid",
      `session ${quoted(sessionId)} is not a LangGraph thread: its state bag key "${LANGGRAPH_STATE_KEY}" holds ${found}`,
      {
        hint: "another session uses this id: give the saver another idPrefix (createStatebagSaver(store, { idPrefix })) or move that session",
      },
    );
  }
}

/** The thread a session holds (checked shape), or undefined for a session without one. */
export function readThread(session: AgentSession): Thread {
  const value = session.stateBag[LANGGRAPH_STATE_KEY] as unknown as LangGraphThreadState | undefined;
  if (value === undefined) throw new NotALangGraphThreadError(session.id, "nothing");
  if (value.$type !== LANGGRAPH_THREAD_TYPE || !Array.isArray(value.namespaces) || typeof value.threadId !== "string")
    throw new NotALangGraphThreadError(session.id, `a value of "$type" ${quoted(String(value.$type))}`);
  const thread = emptyThread(value.threadId);
  for (const stored of value.namespaces) {
    const ns = namespaceOf(thread, stored.ns);
    for (const checkpoint of stored.checkpoints) ns.checkpoints.set(checkpoint.id, checkpoint);
    for (const blob of stored.blobs) {
      let byVersion = ns.blobs.get(blob.channel);
      if (byVersion === undefined) ns.blobs.set(blob.channel, (byVersion = new Map()));
      byVersion.set(blob.version, blob);
    }
    for (const write of stored.writes) {
      const list = ns.writes.get(write.checkpoint);
      if (list === undefined) ns.writes.set(write.checkpoint, [write]);
      else list.push(write);
    }
  }
  return thread;
}

/** The state bag value for a thread. */
export function threadState(thread: Thread): LangGraphThreadState {
  const namespaces: StoredNamespace[] = [];
  for (const ns of thread.namespaces.values()) {
    const blobs: StoredBlob[] = [];
    for (const byVersion of ns.blobs.values()) blobs.push(...byVersion.values());
    const writes: StoredWrite[] = [];
    for (const list of ns.writes.values()) writes.push(...list);
    namespaces.push({ ns: ns.ns, checkpoints: [...ns.checkpoints.values()], blobs, writes });
  }
  return { $type: LANGGRAPH_THREAD_TYPE, $version: 1, threadId: thread.threadId, namespaces };
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A serializer's JSON output starts like this when it is a list of LangChain objects. */
const LC_LIST = '[{"lc":1,';

/** `value` through the serializer, in its stored form. */
export async function encodeValue(serde: LangGraphSerializer, value: unknown): Promise<StoredValue> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type === "json") {
    let text: string | undefined;
    try {
      text = utf8.decode(bytes);
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      if (text.startsWith(LC_LIST)) {
        const messages = channelToChatMessages(JSON.parse(text));
        if (messages !== undefined) return { serde: type, messages };
      }
      return { serde: type, text };
    }
  }
  return { serde: type, base64: Buffer.from(bytes).toString("base64") };
}

/** A stored value back through the serializer. */
export async function decodeValue(serde: LangGraphSerializer, stored: StoredValue): Promise<unknown> {
  if (stored.messages !== undefined) {
    const json = chatMessagesToChannel(stored.messages);
    if (json === undefined)
      throw new StatebagError("session-invalid", "a LangGraph channel's chat messages were changed outside the saver", {
        hint: "messages kept for LangChain carry additionalProperties.langchain; restore it or the channel from a backup",
      });
    return serde.loadsTyped(stored.serde, JSON.stringify(json));
  }
  if (stored.text !== undefined) return serde.loadsTyped(stored.serde, stored.text);
  return serde.loadsTyped(stored.serde, new Uint8Array(Buffer.from(stored.base64 ?? "", "base64")));
}
