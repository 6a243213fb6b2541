/**
 * Recognising which Agent Framework shape a parsed document is. No MAF session form carries a
 * version (except the durable state's `schemaVersion` and the file store's `version`), so the
 * shape is told from the members each one writes. Where two shapes fit, both are reported; when
 * they would read the document into the same statebag session (a `.NET` document with only a
 * `conversationId`, written the same way from Aug 2025 to Feb 2026) the first is used.
 */
import { isPlainObject, type JsonRecord } from "./json-util.js";
import type { SessionShape } from "./shapes.js";

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
const members = (doc: JsonRecord, keys: string[]) => keys.filter((k) => has(doc, k)).map((k) => `"${k}"`).join(", ");
const isHistory = (value: unknown) => isPlainObject(value) && Array.isArray(value.messages);

function found(shape: SessionShape, evidence: string, others: SessionShape[] = [], sameReading = true): ShapeDetection {
  return { shape, evidence, candidates: [shape, ...others], ambiguous: others.length > 0 && !sameReading };
}

/** Whether a parsed document is a statebag session (stored form or bare). */
export function isStatebagDocument(doc: unknown): boolean {
  return isPlainObject(doc) && ((doc.format === "statebag.session" && isPlainObject(doc.session)) || (typeof doc.id === "string" && isPlainObject(doc.stateBag)));
}

/** Which Agent Framework shape a parsed document is, with the evidence; `undefined` when none fits. */
export function detectSessionShape(doc: unknown): ShapeDetection | undefined {
  if (!isPlainObject(doc) || isStatebagDocument(doc)) return undefined;
  if (has(doc, "schemaVersion") && has(doc, "data")) {
    const major = typeof doc.schemaVersion === "string" ? doc.schemaVersion.split(".")[0] : "";
    if (major === "2") return found("durable-2-preview", `"schemaVersion": "2..." with "data" (the proposed durable state 2.0)`);
    return found("durable", `"schemaVersion" with "data" (durable agent entity state)`);
  }
  if (doc.type === "session" || (typeof doc.session_id === "string" && has(doc, "state"))) {
    if (has(doc, "version")) return found("python-file-store", `"type": "session" with "version" (a FileSessionStore snapshot)`);
    const state = isPlainObject(doc.state) ? doc.state : {};
    const inMemory = isHistory(state.in_memory);
    const memory = isHistory(state.memory);
    if (inMemory && memory) return found("python", `"state" holds history under both "in_memory" and "memory"`, ["python-memory"], false);
    if (memory) return found("python-memory", `"type": "session" with history under "state.memory" (Feb 2026 source id)`);
    return found("python", `"type": "session" with "session_id"${inMemory ? ' and history under "state.in_memory"' : ""}`);
  }
  if (doc.type === "agent_thread_state" || has(doc, "service_thread_id") || has(doc, "chat_message_store_state")) {
    return found("python-thread", `${members(doc, ["type", "service_thread_id", "chat_message_store_state"])} (Python AgentThread)`);
  }
  if (has(doc, "stateBag")) {
    if (has(doc, "contextId") || has(doc, "taskId") || has(doc, "taskState")) return found("dotnet-a2a", `"stateBag" with ${members(doc, ["contextId", "taskId", "taskState"])} (A2A agent session)`);
    if (has(doc, "serviceSessionId")) return found("dotnet-copilot-studio", `"stateBag" with "serviceSessionId" (Copilot Studio agent session)`);
    if (has(doc, "sessionId")) return found("dotnet-github-copilot", `"stateBag" with "sessionId" (GitHub Copilot agent session)`);
    return found("dotnet", `"stateBag"${has(doc, "conversationId") ? ' and "conversationId"' : ""} (.NET session)`);
  }
  if (has(doc, "storeState")) return found("dotnet-thread", `"storeState" (.NET AgentThread, before Jan 2026)`);
  if (has(doc, "chatHistoryProviderState")) return found("dotnet-provider-state", `"chatHistoryProviderState" (.NET session, Jan 2026)`);
  if (has(doc, "contextId") || has(doc, "taskId")) return found("dotnet-a2a-thread", `${members(doc, ["contextId", "taskId"])} without "stateBag" (A2A agent thread)`);
  if (has(doc, "serviceThreadId")) return found("dotnet-service-thread", `"serviceThreadId" (.NET service-id thread, e.g. Copilot Studio)`);
  if (has(doc, "conversationId") || has(doc, "aiContextProviderState")) {
    return found("dotnet-thread", `${members(doc, ["conversationId", "aiContextProviderState"])} without "stateBag" (.NET, Aug 2025 - Feb 2026; both generations wrote it alike)`, ["dotnet-provider-state"]);
  }
  return undefined;
}
