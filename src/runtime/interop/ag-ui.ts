/**
 * Agent Framework for Python's AG-UI thread snapshots (`agent_framework_ag_ui._snapshots.
 * AGUIThreadSnapshot`, July 2026) and workflow checkpoints (`_workflows/_checkpoint.py`).
 *
 * AG-UI snapshot: `{"messages": [...], "state"?: {...}, "interrupt"?: [...], "session_state"?: {...}}`,
 * the messages in the AG-UI protocol's camelCase form:
 *
 * | AG-UI message                                                        | statebag message                                   |
 * | -------------------------------------------------------------------- | -------------------------------------------------- |
 * | `id`, `role`, `name`                                                 | `messageId`, `role`, `authorName`                  |
 * | `content` (a string)                                                 | one `text` content                                 |
 * | `toolCalls: [{id, type: "function", function: {name, arguments}}]`   | `functionCall`s (`arguments` JSON text parsed)     |
 * | `role: "tool"`, `toolCallId`, `content`                              | one `functionResult` (`result`: the content)       |
 *
 * A message that does not map back exactly (multimodal content parts, an `error`, an `activity`
 * message, arguments that are not a JSON object) keeps its original under
 * `additionalProperties["statebag.aguiOriginal"]`, written back while the message is unchanged.
 * `state`, `interrupt`, `session_state` (the private `AgentSession.state`) and any other member
 * are kept verbatim under `statebag.agui.snapshot`. The snapshot has no id: `--id`, else the
 * file name. A session holding state the snapshot has no place for is not written as one.
 *
 * Workflow checkpoints (`{"workflow_name", "graph_signature_hash", "checkpoint_id", "messages":
 * {"<executor>": [...]}, "state", "pending_request_info_events", "iteration_count", "metadata",
 * "version": "1.0", ...}`) hold executor inboxes and workflow state encoded by
 * `encode_checkpoint_value`: everything that is not plain JSON, Agent Framework's `Message`
 * included, is a Python pickle (`{"__pickled__": "<base64>", "__type__": "module:qualname"}`).
 * statebag never unpickles (that runs code), so a checkpoint is recognised and refused, naming the
 * first pickled value and its Python type, or saying that it holds no conversation.
 */
import { randomUUID } from "node:crypto";
import type { ChatMessage } from "../core/messages.js";
import { createSessionData, type AgentSession } from "../core/session.js";
import { InteropError, describe, shown } from "./errors.js";
import { foreignContent, foreignState, isForeignState } from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, jsonEqual, type JsonRecord } from "./json-util.js";
import { decodeImported, readDocument, type SessionCodecOptions } from "./session-codec.js";

export const AGUI_SNAPSHOT_KEY = "statebag.agui.snapshot";
export const AGUI_ORIGINAL_KEY = "statebag.aguiOriginal";
const HISTORY_KEY = "statebag.chatHistory";

const fail = (pointer: string, problem: string, hint: string) =>
  new InteropError("ag-ui-snapshot", "import", pointer, problem, hint);

function withoutStash(m: JsonRecord): [JsonRecord, unknown] {
  const props = m.additionalProperties;
  if (!isPlainObject(props) || !Object.hasOwn(props, AGUI_ORIGINAL_KEY)) return [m, undefined];
  const rest: JsonRecord = {};
  for (const key of Object.keys(props)) if (key !== AGUI_ORIGINAL_KEY) defineOwn(rest, key, props[key]);
  const out: JsonRecord = {};
  for (const key of Object.keys(m)) {
    if (key !== "additionalProperties") defineOwn(out, key, m[key]);
    else if (Object.keys(rest).length > 0) defineOwn(out, key, rest);
  }
  return [out, props[AGUI_ORIGINAL_KEY]];
}

function parseArguments(text: unknown): { value: unknown; exact: boolean } {
  if (typeof text !== "string") return { value: {}, exact: false };
  try {
    const value = JSON.parse(text) as unknown;
    return { value, exact: isPlainObject(value) && JSON.stringify(value) === text };
  } catch {
    return { value: {}, exact: false };
  }
}

/** One AG-UI message as a statebag message (without the original; `messageIn` adds it when needed). */
function mapIn(p: JsonRecord, pointer: string): JsonRecord {
  if (typeof p.role !== "string")
    throw fail(
      `${pointer}/role`,
      `an AG-UI message needs a string "role", found ${describe(p.role)}`,
      'AG-UI messages are {"id", "role", "content"} (and "toolCalls" / "toolCallId")',
    );
  const message: JsonRecord = { role: p.role, contents: [] };
  const contents = message.contents as JsonRecord[];
  if (typeof p.id === "string") message.messageId = p.id;
  if (typeof p.name === "string") message.authorName = p.name;
  if (p.role === "tool") {
    contents.push({
      $type: "functionResult",
      callId: typeof p.toolCallId === "string" ? p.toolCallId : "",
      result: p.content ?? null,
    });
    return message;
  }
  if (typeof p.content === "string") contents.push({ $type: "text", text: p.content });
  else if (Array.isArray(p.content))
    for (const part of p.content)
      contents.push(
        isPlainObject(part) && part.type === "text" && typeof part.text === "string"
          ? { $type: "text", text: part.text }
          : (foreignContent(
              "python",
              (isPlainObject(part) ? part : { value: part }) as never,
            ) as unknown as JsonRecord),
      );
  if (Array.isArray(p.toolCalls)) {
    for (const call of p.toolCalls) {
      const fn = isPlainObject(call) && isPlainObject(call.function) ? call.function : {};
      contents.push({
        $type: "functionCall",
        callId: isPlainObject(call) && typeof call.id === "string" ? call.id : "",
        name: typeof fn.name === "string" ? fn.name : "",
        arguments: parseArguments(fn.arguments).value,
      });
    }
  }
  return message;
}

/** One statebag message as an AG-UI message. */
function mapOut(m: JsonRecord): JsonRecord {
  const contents = Array.isArray(m.contents) ? (m.contents as JsonRecord[]) : [];
  const out: JsonRecord = {};
  if (typeof m.messageId === "string") out.id = m.messageId;
  out.role = m.role;
  if (m.role === "tool" && contents.length === 1 && contents[0].$type === "functionResult") {
    const result = contents[0].result;
    out.content =
      typeof result === "string" || result === null || result === undefined ? (result ?? null) : JSON.stringify(result);
    out.toolCallId = contents[0].callId;
  } else {
    const texts = contents.filter((c) => c.$type === "text").map((c) => c.text as string);
    const calls = contents.filter((c) => c.$type === "functionCall");
    if (texts.length > 0) out.content = texts.join("");
    if (calls.length > 0)
      out.toolCalls = calls.map((c) => ({
        id: c.callId,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) },
      }));
  }
  if (typeof m.authorName === "string") out.name = m.authorName;
  return out;
}

function messageIn(p: unknown, pointer: string): ChatMessage {
  if (!isPlainObject(p))
    throw fail(
      pointer,
      `expected an AG-UI message object, found ${describe(p)}`,
      'AG-UI messages are {"id", "role", "content"}',
    );
  const message = mapIn(p, pointer);
  if (!jsonEqual(mapOut(message), p)) message.additionalProperties = { [AGUI_ORIGINAL_KEY]: cloneJson(p) };
  return message as unknown as ChatMessage;
}

function messageOut(message: ChatMessage): JsonRecord {
  const [clean, original] = withoutStash(message as unknown as JsonRecord);
  if (isPlainObject(original)) {
    try {
      if (jsonEqual(mapIn(original, ""), clean)) return cloneJson(original);
    } catch {
      // a changed message is mapped afresh below
    }
  }
  return mapOut(clean);
}

const SNAPSHOT_MEMBERS = ["messages", "state", "interrupt", "session_state"];

/** Whether a parsed document is an AG-UI thread snapshot (its evidence), without reading it. */
export function looksLikeAguiSnapshot(doc: JsonRecord): boolean {
  if (!Array.isArray(doc.messages) || Object.keys(doc).some((k) => !SNAPSHOT_MEMBERS.includes(k))) return false;
  const first = doc.messages[0];
  return (
    first === undefined || (isPlainObject(first) && typeof first.role === "string" && !Object.hasOwn(first, "contents"))
  );
}

/** Reads an AG-UI thread snapshot into a statebag session (history from `messages`, the rest verbatim). */
export function importAguiSnapshot(
  input: string | object,
  options: SessionCodecOptions & { id?: string; historyKey?: string } = {},
): AgentSession {
  const doc = readDocument(input, options);
  const hint =
    'an AG-UI thread snapshot is {"messages": [...], "state"?: {...}, "interrupt"?: [...], "session_state"?: {...}}';
  if (!isPlainObject(doc)) throw fail("", `expected an object, found ${describe(doc)}`, hint);
  if (!Array.isArray(doc.messages))
    throw fail("/messages", `expected an array of AG-UI messages, found ${describe(doc.messages)}`, hint);
  const historyKey = options.historyKey ?? HISTORY_KEY;
  const messages = doc.messages.map((p, i) => messageIn(p, `/messages/${i}`));
  const extras: JsonRecord = {};
  for (const key of Object.keys(doc)) if (key !== "messages") defineOwn(extras, key, cloneJson(doc[key]));
  const stateBag: JsonRecord = {};
  defineOwn(stateBag, historyKey, {
    $type: "InMemoryChatHistoryState",
    $version: 3,
    messages,
    droppedMessageCount: 0,
    branches: [],
    branchPoints: [],
  });
  if (Object.keys(extras).length > 0) defineOwn(stateBag, AGUI_SNAPSHOT_KEY, foreignState("python", extras as never));
  const session = createSessionData({ id: options.id ?? randomUUID(), kind: "local", stateBag: stateBag as never });
  const prefix = `/stateBag/${historyKey.replace(/~/g, "~0").replace(/\//g, "~1")}/messages/`;
  return decodeImported(
    session,
    "ag-ui-snapshot",
    (p) => (p.startsWith(prefix) ? `/messages/${p.slice(prefix.length)}` : p),
    options,
  );
}

/** Writes a statebag session as an AG-UI thread snapshot. */
export function exportAguiSnapshot(session: AgentSession, options: { historyKey?: string } = {}): JsonRecord {
  const historyKey = options.historyKey ?? HISTORY_KEY;
  const out: JsonRecord = { messages: [] };
  for (const key of Object.keys(session.stateBag)) {
    const value = session.stateBag[key] as unknown as JsonRecord;
    if (key === historyKey && value.$type === "InMemoryChatHistoryState" && Array.isArray(value.messages))
      out.messages = (value.messages as ChatMessage[]).map(messageOut);
    else if (key === AGUI_SNAPSHOT_KEY && isForeignState(value, "python") && isPlainObject(value.value)) {
      for (const field of Object.keys(value.value))
        if (field !== "messages") defineOwn(out, field, cloneJson(value.value[field]));
    } else {
      throw new InteropError(
        "ag-ui-snapshot",
        "export",
        `/stateBag/${key}`,
        `the session holds state an AG-UI thread snapshot has no place for (${shown(key)})`,
        "export it --to python (session state travels there), or remove that state first",
      );
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Workflow checkpoints

const CHECKPOINT_MEMBERS = [
  "workflow_name",
  "graph_signature_hash",
  "checkpoint_id",
  "previous_checkpoint_id",
  "pending_request_info_events",
  "iteration_count",
];

/** Whether a parsed document is a workflow checkpoint. */
export function looksLikeWorkflowCheckpoint(doc: JsonRecord): boolean {
  return (
    CHECKPOINT_MEMBERS.filter((k) => Object.hasOwn(doc, k)).length >= 2 &&
    (Object.hasOwn(doc, "checkpoint_id") || Object.hasOwn(doc, "graph_signature_hash"))
  );
}

/** The first pickled value of a checkpoint (explicit stack, any depth): its pointer and Python type. */
function firstPickle(root: unknown): { pointer: string; type: string } | undefined {
  const stack: { value: unknown; pointer: string }[] = [{ value: root, pointer: "" }];
  while (stack.length > 0) {
    const { value, pointer } = stack.pop()!;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], pointer: `${pointer}/${i}` });
    } else if (isPlainObject(value)) {
      if (Object.hasOwn(value, "__pickled__"))
        return { pointer, type: typeof value.__type__ === "string" ? value.__type__ : "unknown type" };
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i--)
        stack.push({
          value: value[keys[i]],
          pointer: `${pointer}/${keys[i].replace(/~/g, "~0").replace(/\//g, "~1")}`,
        });
    }
  }
  return undefined;
}

/**
 * Refuses a workflow checkpoint with what it holds: a checkpoint is a workflow's executor inboxes
 * and state, with every non-JSON value (Agent Framework's `Message` included) a Python pickle.
 */
export function importWorkflowCheckpoint(input: string | object, options: SessionCodecOptions = {}): never {
  const doc = readDocument(input, options);
  if (!isPlainObject(doc))
    throw new InteropError(
      "workflow-checkpoint",
      "import",
      "",
      `expected an object, found ${describe(doc)}`,
      "a workflow checkpoint is WorkflowCheckpoint.to_dict()",
    );
  const version = doc.version ?? "1.0";
  if (version !== "1.0")
    throw new InteropError(
      "workflow-checkpoint",
      "import",
      "/version",
      `unsupported checkpoint version ${describe(version)}`,
      'Agent Framework writes "version": "1.0"',
    );
  const pickle = firstPickle({
    messages: doc.messages,
    state: doc.state,
    pending_request_info_events: doc.pending_request_info_events,
  });
  const name = typeof doc.workflow_name === "string" ? ` of workflow ${shown(doc.workflow_name, 60)}` : "";
  if (pickle !== undefined) {
    throw new InteropError(
      "workflow-checkpoint",
      "import",
      pickle.pointer,
      `this checkpoint${name} keeps its values as Python pickles (${shown(pickle.type, 80)} here), which statebag does not decode: unpickling runs code`,
      "load the checkpoint in Python and save the conversation as a session (AgentSession.to_dict(), or a FileSessionStore), then import that",
    );
  }
  throw new InteropError(
    "workflow-checkpoint",
    "import",
    "",
    `this checkpoint${name} holds executor inboxes and workflow state, not a conversation statebag can read as a session`,
    "import the sessions of the workflow's agents instead (AgentSession.to_dict() or a FileSessionStore directory)",
  );
}
