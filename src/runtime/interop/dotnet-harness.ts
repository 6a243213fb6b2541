/**
 * .NET harness and compaction state in the state bag (Agent Framework @ 5eb3eb74, Aug 2026).
 *
 * These values stay as .NET wrote them (`statebag.ForeignState`, format "dotnet", written back
 * byte for byte); the functions here read them through typed views:
 *
 * - Compaction (`Compaction/CompactionProvider.cs`): under the strategy's type name (or the
 *   provider's `stateKey`), `{"messagegroups": [{kind, messages, messageCount, byteCount,
 *   tokenCount, turnIndex?, isExcluded, excludeReason?}]}`; `kind` is one of `System`, `User`,
 *   `AssistantText`, `ToolCall`, `Summary`; a summary message carries
 *   `additionalProperties._is_summary`. `dotnetCompaction` lists, for a reducer, which messages are
 *   excluded and which are summaries.
 * - Harness providers: `TodoProvider` `{items: [{id, title, description?, isComplete}], nextId}`,
 *   `AgentModeProvider` `{currentMode, previousModeForNotification?}`, `FileMemoryProvider`
 *   `{workingFolder}`, `BackgroundAgentsProvider` (opaque), `MessageInjectingChatClient.PendingInjectedMessages`
 *   (a list of ChatMessage). `*_Runtime` entries (`BackgroundAgentsProvider_Runtime`) hold live
 *   tasks, not data: an empty one is dropped on import with a note (.NET re-creates it).
 */
import type { AgentSession, StateBag } from "../core/session.js";
import { isForeignState } from "./foreign.js";
import { isPlainObject, type JsonRecord } from "./json-util.js";

export const DOTNET_SUMMARY_PROPERTY = "_is_summary";
export type CompactionGroupKind = "System" | "User" | "AssistantText" | "ToolCall" | "Summary";

/** One message of a compaction state, as a reducer needs it. */
export interface CompactionMessageInfo {
  /** The bag key of the compaction state. */
  key: string;
  group: number;
  /** Position of the message inside its group. */
  index: number;
  kind: string;
  messageId?: string;
  excluded: boolean;
  excludeReason?: string;
  /** A summary message (`additionalProperties._is_summary`, or a `Summary` group). */
  summary: boolean;
  turnIndex?: number;
}

const raw = (bag: StateBag, key: string): unknown => {
  const entry = (bag as JsonRecord)[key];
  return isForeignState(entry, "dotnet") ? entry.value : undefined;
};

/** Whether a bag value is a .NET compaction state (`{"messagegroups": [...]}`). */
export function isCompactionState(value: unknown): value is { messagegroups: JsonRecord[] } {
  return isPlainObject(value) && Array.isArray(value.messagegroups) && value.messagegroups.every(isPlainObject);
}

/** Every message of every .NET compaction state in the session, in order, marked excluded / summary. */
export function dotnetCompaction(session: AgentSession): CompactionMessageInfo[] {
  const out: CompactionMessageInfo[] = [];
  for (const key of Object.keys(session.stateBag)) {
    const value = raw(session.stateBag, key);
    if (!isCompactionState(value)) continue;
    value.messagegroups.forEach((g, group) => {
      const messages = Array.isArray(g.messages) ? g.messages : [];
      messages.forEach((m, index) => {
        const props = isPlainObject(m) && isPlainObject(m.additionalProperties) ? m.additionalProperties : {};
        const summaryFlag = props[DOTNET_SUMMARY_PROPERTY];
        const info: CompactionMessageInfo = {
          key,
          group,
          index,
          kind: typeof g.kind === "string" ? g.kind : String(g.kind),
          excluded: g.isExcluded === true,
          summary: g.kind === "Summary" || summaryFlag === true || summaryFlag === "true",
        };
        if (isPlainObject(m) && typeof m.messageId === "string") info.messageId = m.messageId;
        if (typeof g.excludeReason === "string") info.excludeReason = g.excludeReason;
        if (typeof g.turnIndex === "number") info.turnIndex = g.turnIndex;
        out.push(info);
      });
    });
  }
  return out;
}

export interface DotnetTodoItem {
  id: number;
  title: string;
  description?: string;
  isComplete: boolean;
}

/** Typed views of the harness providers' state (each absent when the session has none, or it is not of the known form). */
export interface DotnetHarnessState {
  todo?: { items: DotnetTodoItem[]; nextId: number };
  agentMode?: { currentMode: string; previousModeForNotification?: string };
  fileMemory?: { workingFolder: string };
  /** Opaque: the provider's own JSON. */
  backgroundAgents?: unknown;
  /** `MessageInjectingChatClient.PendingInjectedMessages`: messages waiting to be injected. */
  pendingInjectedMessages?: unknown[];
}

export const DOTNET_HARNESS_KEYS = {
  todo: "TodoProvider",
  agentMode: "AgentModeProvider",
  fileMemory: "FileMemoryProvider",
  backgroundAgents: "BackgroundAgentsProvider",
  pendingInjectedMessages: "MessageInjectingChatClient.PendingInjectedMessages",
} as const;

const isTodo = (v: unknown): v is DotnetHarnessState["todo"] =>
  isPlainObject(v) &&
  typeof v.nextId === "number" &&
  Array.isArray(v.items) &&
  v.items.every(
    (i) =>
      isPlainObject(i) && typeof i.id === "number" && typeof i.title === "string" && typeof i.isComplete === "boolean",
  );

/** The harness providers' state of a session imported from .NET, read through typed views. */
export function dotnetHarnessState(session: AgentSession): DotnetHarnessState {
  const bag = session.stateBag;
  const out: DotnetHarnessState = {};
  const todo = raw(bag, DOTNET_HARNESS_KEYS.todo);
  if (isTodo(todo)) out.todo = todo;
  const mode = raw(bag, DOTNET_HARNESS_KEYS.agentMode);
  if (isPlainObject(mode) && typeof mode.currentMode === "string")
    out.agentMode = mode as DotnetHarnessState["agentMode"];
  const memory = raw(bag, DOTNET_HARNESS_KEYS.fileMemory);
  if (isPlainObject(memory) && typeof memory.workingFolder === "string")
    out.fileMemory = memory as DotnetHarnessState["fileMemory"];
  const background = raw(bag, DOTNET_HARNESS_KEYS.backgroundAgents);
  if (background !== undefined) out.backgroundAgents = background;
  const injected = raw(bag, DOTNET_HARNESS_KEYS.pendingInjectedMessages);
  if (Array.isArray(injected)) out.pendingInjectedMessages = injected;
  return out;
}

/** Whether a raw bag entry is a `*_Runtime` entry with no data (live objects .NET re-creates). */
export function isEmptyRuntimeEntry(key: string, value: unknown): boolean {
  return key.endsWith("_Runtime") && (value === null || (isPlainObject(value) && Object.keys(value).length === 0));
}
