/**
 * The Python session shapes before today's `AgentSession.to_dict()` with `"in_memory"` history.
 *
 * - `python-thread` (Aug 2025 - Feb 2026): `AgentThread.serialize()`, i.e.
 *   `AgentThreadState.to_dict(exclude_none=False)`:
 *   `{"type": "agent_thread_state", "service_thread_id": <str|null>, "chat_message_store_state":
 *   {"type": "chat_message_store_state", "messages": [...]} | null}`. A thread has no id of its
 *   own: the statebag session gets the one given, else a new UUID. Read by turning it into a
 *   session document (`service_thread_id` -> `service_session_id`, the store's messages -> the
 *   history); a store state that is not `{messages}` is kept verbatim under the state key
 *   `"chat_message_store_state"`. Writing it back puts the two `"type"` tags in, as
 *   `to_dict()` does.
 * - `python-memory` (Feb 12 - 17 2026): today's document, but the history provider's source id
 *   was `"memory"`. Read and written by the session reader with that source id.
 */
import { randomUUID } from "node:crypto";
import { InteropError, at, describe, shown } from "./errors.js";
import { cloneJson, defineOwn, isPlainObject, type JsonRecord } from "./json-util.js";
import { PYTHON_DEFAULT_HISTORY_KEY } from "./python.js";
import { SESSION_INFO_KEY } from "./foreign.js";

const THREAD_TYPE = "agent_thread_state";
const STORE_TYPE = "chat_message_store_state";
/** The state key of a thread's store state that is not plain history. */
export const PYTHON_THREAD_STORE_KEY = "chat_message_store_state";

/** A thread document as a session document (for the session reader), and the pointer mapping back. */
export function pythonThreadToSession(
  doc: unknown,
  id: string | undefined,
  historyKey = PYTHON_DEFAULT_HISTORY_KEY,
): { doc: JsonRecord; sourcePointer: (pointer: string) => string } {
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError("python-thread", "import", at(path), problem, hint);
  const hint =
    'AgentThread.serialize() writes {"type": "agent_thread_state", "service_thread_id": ..., "chat_message_store_state": {"messages": [...]}}';
  if (!isPlainObject(doc)) throw fail([], `expected an object, found ${describe(doc)}`, hint);
  if (doc.type !== undefined && doc.type !== THREAD_TYPE)
    throw fail(["type"], `expected "type": "${THREAD_TYPE}", found ${describe(doc.type)}`, hint);
  const service = doc.service_thread_id;
  if (service !== undefined && service !== null && typeof service !== "string")
    throw fail(["service_thread_id"], `expected a string or null, found ${describe(service)}`, hint);
  const store = doc.chat_message_store_state;
  const state: JsonRecord = {};
  let storeAt = "";
  if (store !== undefined && store !== null) {
    if (!isPlainObject(store))
      throw fail(["chat_message_store_state"], `expected an object or null, found ${describe(store)}`, hint);
    const keys = Object.keys(store).filter((k) => !(k === "type" && store.type === STORE_TYPE));
    if (keys.length === 1 && keys[0] === "messages" && Array.isArray(store.messages)) {
      state[historyKey] = { messages: store.messages };
      storeAt = `/state/${historyKey}`;
    } else {
      defineOwn(state, PYTHON_THREAD_STORE_KEY, cloneJson(store));
      storeAt = `/state/${PYTHON_THREAD_STORE_KEY}`;
    }
  }
  const out: JsonRecord = {
    type: "session",
    session_id: id ?? randomUUID(),
    service_session_id: service ?? null,
    state,
  };
  for (const key of Object.keys(doc)) {
    if (key === "type" || key === "service_thread_id" || key === "chat_message_store_state") continue;
    if (key === SESSION_INFO_KEY) {
      defineOwn(state, key, cloneJson(doc[key])); // statebag's metadata, written at the top level of a thread
      continue;
    }
    if (key === "session_id" || key === "service_session_id" || key === "state")
      throw fail(
        [key],
        `a thread has no ${shown(key)} member`,
        "this looks like a session document: import it with --from python",
      );
    defineOwn(out, key, cloneJson(doc[key]));
  }
  const sourcePointer = (pointer: string) => {
    if (storeAt !== "" && (pointer === storeAt || pointer.startsWith(storeAt + "/")))
      return "/chat_message_store_state" + pointer.slice(storeAt.length);
    if (pointer === "/service_session_id") return "/service_thread_id";
    return pointer;
  };
  return { doc: out, sourcePointer };
}

/** A session document (as the Python writer made it) in the thread shape. */
export function pythonSessionToThread(doc: JsonRecord, historyKey = PYTHON_DEFAULT_HISTORY_KEY): JsonRecord {
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError("python-thread", "export", at(path), problem, hint);
  const state = isPlainObject(doc.state) ? doc.state : {};
  const service = doc.service_session_id;
  if (service !== null && service !== undefined && typeof service !== "string")
    throw fail(
      ["service_thread_id"],
      "the conversation id is an object of named ids; an AgentThread holds one string",
      'export to "python" (today\'s shape) instead',
    );
  let store: unknown = null;
  for (const key of Object.keys(state)) {
    const value = state[key];
    if (key === historyKey && isPlainObject(value) && Array.isArray(value.messages))
      store = { type: STORE_TYPE, messages: value.messages };
    else if (key === PYTHON_THREAD_STORE_KEY) store = value;
    else if (key === SESSION_INFO_KEY) continue;
    else
      throw fail(
        ["state", key],
        `the state under ${shown(key)} has no place in an AgentThread (it holds one message store's state)`,
        'export to "python" (today\'s shape) instead',
      );
  }
  const out: JsonRecord = { type: THREAD_TYPE, service_thread_id: service ?? null, chat_message_store_state: store };
  if (Object.hasOwn(state, SESSION_INFO_KEY)) defineOwn(out, SESSION_INFO_KEY, state[SESSION_INFO_KEY]);
  for (const key of Object.keys(doc))
    if (!["type", "session_id", "service_session_id", "state"].includes(key)) defineOwn(out, key, doc[key]);
  return out;
}
