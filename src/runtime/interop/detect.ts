/**
 * Recognising which Agent Framework shape a parsed document is. No MAF session form carries a
 * version (except the durable state's `schemaVersion` and the file store's `version`), so the
 * shape is told from the members each one writes. Where two shapes fit, both are reported; when
 * they would read the document into the same statebag session (a `.NET` document with only a
 * `conversationId`, written the same way from Aug 2025 to Feb 2026) the first is used.
 */
import { InteropError } from "./errors.js";
import { isPlainObject, type JsonRecord } from "./json-util.js";
import type { SessionShape } from "./shapes.js";
import { looksLikeAguiSnapshot, looksLikeWorkflowCheckpoint } from "./ag-ui.js";

export interface ShapeDetection {
  /** The shape to read it as (the first candidate). */
  shape: SessionShape;
  /** Why: the members that identify it. */
  evidence: string;
  /** Every shape the document fits, `shape` first. */
  candidates: SessionShape[];
  /** More than one candidate, and they would read it differently: the caller must choose. */
  ambiguous: boolean;
}

const has = (doc: JsonRecord, key: string) => Object.hasOwn(doc, key);
const members = (doc: JsonRecord, keys: string[]) =>
  keys
    .filter((k) => has(doc, k))
    .map((k) => `"${k}"`)
    .join(", ");
const isHistory = (value: unknown) => isPlainObject(value) && Array.isArray(value.messages);

function found(shape: SessionShape, evidence: string, others: SessionShape[] = [], sameReading = true): ShapeDetection {
  return { shape, evidence, candidates: [shape, ...others], ambiguous: others.length > 0 && !sameReading };
}

/** Whether a parsed document is a statebag session (stored form or bare). */
export function isStatebagDocument(doc: unknown): boolean {
  return (
    isPlainObject(doc) &&
    ((doc.format === "statebag.session" && isPlainObject(doc.session)) ||
      (typeof doc.id === "string" && isPlainObject(doc.stateBag)))
  );
}

/** Which Agent Framework shape a parsed document is, with the evidence; `undefined` when none fits. */
export function detectSessionShape(doc: unknown): ShapeDetection | undefined {
  if (!isPlainObject(doc) || isStatebagDocument(doc)) return undefined;
  if (has(doc, "schemaVersion") && has(doc, "data")) {
    const major = typeof doc.schemaVersion === "string" ? doc.schemaVersion.split(".")[0] : "";
    if (major === "2")
      return found("durable-2-preview", `"schemaVersion": "2..." with "data" (the proposed durable state 2.0)`);
    return found("durable", `"schemaVersion" with "data" (durable agent entity state)`);
  }
  if (doc.type === "session" || (typeof doc.session_id === "string" && has(doc, "state"))) {
    if (has(doc, "version"))
      return found("python-file-store", `"type": "session" with "version" (a FileSessionStore snapshot)`);
    const state = isPlainObject(doc.state) ? doc.state : {};
    const inMemory = isHistory(state.in_memory);
    const memory = isHistory(state.memory);
    if (inMemory && memory)
      return found("python", `"state" holds history under both "in_memory" and "memory"`, ["python-memory"], false);
    if (memory)
      return found("python-memory", `"type": "session" with history under "state.memory" (Feb 2026 source id)`);
    return found(
      "python",
      `"type": "session" with "session_id"${inMemory ? ' and history under "state.in_memory"' : ""}`,
    );
  }
  if (doc.type === "agent_thread_state" || has(doc, "service_thread_id") || has(doc, "chat_message_store_state")) {
    return found(
      "python-thread",
      `${members(doc, ["type", "service_thread_id", "chat_message_store_state"])} (Python AgentThread)`,
    );
  }
  if (looksLikeWorkflowCheckpoint(doc))
    return found(
      "workflow-checkpoint",
      `${members(doc, ["workflow_name", "checkpoint_id", "graph_signature_hash", "version"])} (a Python workflow checkpoint)`,
    );
  if (looksLikeAguiSnapshot(doc))
    return found(
      "ag-ui-snapshot",
      `${members(doc, ["messages", "state", "interrupt", "session_state"])} with AG-UI messages (an AG-UI thread snapshot)`,
    );
  if (has(doc, "stateBag")) {
    if (has(doc, "contextId") || has(doc, "taskId") || has(doc, "taskState"))
      return found(
        "dotnet-a2a",
        `"stateBag" with ${members(doc, ["contextId", "taskId", "taskState"])} (A2A agent session)`,
      );
    if (has(doc, "serviceSessionId"))
      return found("dotnet-copilot-studio", `"stateBag" with "serviceSessionId" (Copilot Studio agent session)`);
    if (has(doc, "sessionId"))
      return found("dotnet-github-copilot", `"stateBag" with "sessionId" (GitHub Copilot agent session)`);
    return found("dotnet", `"stateBag"${has(doc, "conversationId") ? ' and "conversationId"' : ""} (.NET session)`);
  }
  if (has(doc, "storeState")) return found("dotnet-thread", `"storeState" (.NET AgentThread, before Jan 2026)`);
  if (has(doc, "chatHistoryProviderState"))
    return found("dotnet-provider-state", `"chatHistoryProviderState" (.NET session, Jan 2026)`);
  if (has(doc, "contextId") || has(doc, "taskId"))
    return found("dotnet-a2a-thread", `${members(doc, ["contextId", "taskId"])} without "stateBag" (A2A agent thread)`);
  if (has(doc, "serviceThreadId"))
    return found("dotnet-service-thread", `"serviceThreadId" (.NET service-id thread, e.g. Copilot Studio)`);
  if (has(doc, "conversationId") || has(doc, "aiContextProviderState")) {
    return found(
      "dotnet-thread",
      `${members(doc, ["conversationId", "aiContextProviderState"])} without "stateBag" (.NET, Aug 2025 - Feb 2026; both generations wrote it alike)`,
      ["dotnet-provider-state"],
    );
  }
  return undefined;
}

/**
 * The members each shape is recognised by (any one of them); a shape whose members are all
 * optional reads `{}` as an empty session, but a document with members and none of these is not
 * one of its documents.
 */
const OWN_MEMBERS: Partial<Record<SessionShape, readonly string[]>> = {
  "dotnet-thread": ["conversationId", "storeState", "aiContextProviderState", "statebag.session"],
  "dotnet-provider-state": ["conversationId", "chatHistoryProviderState", "aiContextProviderState", "statebag.session"],
  "dotnet-a2a-thread": ["contextId", "taskId", "statebag.session"],
  "dotnet-service-thread": ["serviceThreadId", "statebag.session"],
  "python-thread": ["type", "service_thread_id", "chat_message_store_state", "statebag.session"],
  "ag-ui-snapshot": ["messages", "state", "interrupt", "session_state"],
};

/** Members that make an object a session (of some shape), never a chat message. */
const SESSION_MEMBERS = new Set([
  "stateBag",
  "storeState",
  "chatHistoryProviderState",
  "aiContextProviderState",
  "conversationId",
  "contextId",
  "taskId",
  "serviceSessionId",
  "serviceThreadId",
  "sessionId",
  "session_id",
  "state",
  "service_thread_id",
  "chat_message_store_state",
  "schemaVersion",
  "data",
  "statebag.session",
]);

/** A chat message (MEAI `{"role", "contents"}`, Python `{"type": "chat_message", ...}`, OpenAI `{"role", "content"}`), not a session. */
function looksLikeMessage(value: unknown): boolean {
  if (!isPlainObject(value) || !has(value, "role")) return false;
  if (typeof value.role !== "string" && !isPlainObject(value.role)) return false;
  for (const key of Object.keys(value)) if (SESSION_MEMBERS.has(key)) return false;
  return true;
}

/** The contents of messages in Python's form (`"type"` tags) rather than MEAI's (`"$type"`). */
function pythonMessages(messages: unknown[]): boolean {
  const first = messages[0] as { type?: unknown; contents?: unknown };
  const content = Array.isArray(first?.contents)
    ? (first.contents[0] as { type?: unknown; $type?: unknown } | undefined)
    : undefined;
  return (
    first?.type === "chat_message" ||
    (content !== undefined && content.type !== undefined && content.$type === undefined)
  );
}

function wrapHint(messages: unknown[]): string {
  const where = messages.length === 1 ? "the message" : "the messages";
  return pythonMessages(messages)
    ? `statebag imports whole sessions, and no --from reads a lone message: import the session document the agent saved, or put ${where} in a session, {"type": "session", "session_id": "<id>", "state": {"in_memory": {"messages": [...]}}}, and import that with --from python`
    : `statebag imports whole sessions, and no --from reads a lone message: import the session document the agent saved, or put ${where} in a session, {"stateBag": {"InMemoryChatHistoryProvider": {"messages": [...]}}}, and import that with --from dotnet`;
}

/**
 * Why a document cannot be a session of any shape ("this is a single chat message, not a session"),
 * with how to import what it holds; `undefined` for an object that may be one.
 */
export function describeNonSession(doc: unknown): { problem: string; hint: string } | undefined {
  if (looksLikeMessage(doc)) return { problem: "this is a single chat message, not a session", hint: wrapHint([doc]) };
  const hint = "a session document is a JSON object: give the file the agent's session was serialized to";
  if (Array.isArray(doc)) {
    if (doc.length > 0 && doc.every(looksLikeMessage))
      return {
        problem: `this is an array of ${doc.length} chat message${doc.length === 1 ? "" : "s"}, not a session`,
        hint: wrapHint(doc),
      };
    return {
      problem: `expected an object, found an array${doc.length === 0 ? " (empty)" : ` of ${doc.length} item${doc.length === 1 ? "" : "s"}`}: not a session`,
      hint,
    };
  }
  if (!isPlainObject(doc))
    return {
      problem: `expected an object, found ${doc === null ? "null" : `a JSON ${typeof doc}`}: not a session`,
      hint,
    };
  return undefined;
}

/**
 * Refuses a document that is not a session of `shape` before it is read as one: a chat message,
 * an array or a scalar for every shape, and, for shapes whose members are all optional, an object
 * holding none of them (which would otherwise become an empty session with the whole document
 * kept as unknown members). The message says what the document looks like and which shape fits.
 */
export function checkShapeFits(shape: SessionShape, doc: unknown): void {
  const non = describeNonSession(doc);
  if (non) throw new InteropError(shape, "import", "", non.problem, non.hint);
  const own = OWN_MEMBERS[shape];
  if (own === undefined || !isPlainObject(doc)) return;
  const keys = Object.keys(doc);
  if (keys.length === 0 || keys.some((k) => own.includes(k))) return;
  const detected = detectSessionShape(doc);
  if (detected !== undefined && !detected.candidates.includes(shape)) {
    throw new InteropError(
      shape,
      "import",
      "",
      `this looks like a ${detected.shape} document (${detected.evidence}), with none of the members a ${shape} document has (${own.join(", ")})`,
      `import it with --from ${detected.candidates.join(" or --from ")} ({ from: "${detected.shape}" }), or leave --from out to have the shape recognised`,
    );
  }
  throw new InteropError(
    shape,
    "import",
    "",
    `the document has none of the members a ${shape} document has (${own.join(", ")})`,
    "check that this is the session document Agent Framework wrote; without --from the shape is recognised from its members",
  );
}
