/**
 * Every session document shape Microsoft Agent Framework has written, by name.
 *
 * Agent Framework changed its stored session format several times without a version field, so a
 * document's shape is recognised from its members. Each shape belongs to a family (`dotnet` or
 * `python`): values statebag does not model are kept as that family's raw JSON, so any shape of
 * a family can carry them forward to the family's current shape.
 */
import type { InteropFormat } from "./foreign.js";

export type SessionShape =
  | "dotnet"
  | "dotnet-thread"
  | "dotnet-provider-state"
  | "dotnet-a2a"
  | "dotnet-a2a-thread"
  | "dotnet-copilot-studio"
  | "dotnet-service-thread"
  | "dotnet-github-copilot"
  | "python"
  | "python-memory"
  | "python-thread"
  | "python-file-store"
  | "ag-ui-snapshot"
  | "workflow-checkpoint"
  | "durable"
  | "durable-2-preview";

export interface ShapeInfo {
  shape: SessionShape;
  family: InteropFormat;
  /** What writes it and when (as the README's table says). */
  title: string;
  dates: string;
  /** Whether statebag writes it too (every shape here is read). */
  writable: boolean;
  /** A proposed format whose published fixtures are synthetic: may still change. */
  preview?: boolean;
}

export const SHAPES: readonly ShapeInfo[] = [
  {
    shape: "dotnet",
    family: "dotnet",
    title: ".NET ChatClientAgent session (stateBag)",
    dates: "Feb 2026 - now",
    writable: true,
  },
  {
    shape: "dotnet-thread",
    family: "dotnet",
    title: ".NET ChatClientAgentThread (storeState / aiContextProviderState)",
    dates: "Aug 2025 - Jan 2026",
    writable: true,
  },
  {
    shape: "dotnet-provider-state",
    family: "dotnet",
    title: ".NET ChatClientAgentSession (chatHistoryProviderState)",
    dates: "Jan 2026 - Feb 2026",
    writable: true,
  },
  {
    shape: "dotnet-a2a",
    family: "dotnet",
    title: ".NET A2AAgentSession (contextId, taskId, taskState, stateBag)",
    dates: "Feb 2026 - now",
    writable: true,
  },
  {
    shape: "dotnet-a2a-thread",
    family: "dotnet",
    title: ".NET A2AAgentThread (contextId, taskId)",
    dates: "Aug 2025 - Jan 2026",
    writable: true,
  },
  {
    shape: "dotnet-copilot-studio",
    family: "dotnet",
    title: ".NET CopilotStudioAgentSession (serviceSessionId, stateBag)",
    dates: "Feb 2026 - now",
    writable: true,
  },
  {
    shape: "dotnet-service-thread",
    family: "dotnet",
    title: ".NET ServiceIdAgentThread, e.g. Copilot Studio (serviceThreadId)",
    dates: "Aug 2025 - Jan 2026",
    writable: true,
  },
  {
    shape: "dotnet-github-copilot",
    family: "dotnet",
    title: ".NET GitHubCopilotAgentSession (sessionId, stateBag)",
    dates: "Feb 2026 - now",
    writable: true,
  },
  {
    shape: "python",
    family: "python",
    title: 'Python AgentSession.to_dict() (history under "in_memory")',
    dates: "Feb 17 2026 - now",
    writable: true,
  },
  {
    shape: "python-memory",
    family: "python",
    title: 'Python AgentSession.to_dict() (history under "memory")',
    dates: "Feb 12 - Feb 17 2026",
    writable: true,
  },
  {
    shape: "python-thread",
    family: "python",
    title: "Python AgentThread.serialize() (service_thread_id, chat_message_store_state)",
    dates: "Aug 2025 - Feb 2026",
    writable: true,
  },
  {
    shape: "python-file-store",
    family: "python",
    title: 'Python FileSessionStore snapshot ("version": "1.0"), one file per session',
    dates: "Jul 2026 - now",
    writable: true,
  },
  {
    shape: "ag-ui-snapshot",
    family: "python",
    title: "Python AG-UI thread snapshot ({messages, state?, interrupt?, session_state?})",
    dates: "Jul 2026 - now",
    writable: true,
  },
  {
    shape: "workflow-checkpoint",
    family: "python",
    title: "Python workflow checkpoint (version 1.0): recognised, refused (pickled values, no session)",
    dates: "2026 - now",
    writable: false,
  },
  {
    shape: "durable",
    family: "dotnet",
    title: "Durable agent entity state, schemaVersion 1.x (.NET and Python)",
    dates: "Nov 2025 - now",
    writable: true,
  },
  {
    shape: "durable-2-preview",
    family: "dotnet",
    title: "Durable agent entity state 2.0 (proposed; preview)",
    dates: "proposed Sep 2026",
    writable: true,
    preview: true,
  },
];

const BY_NAME = new Map(SHAPES.map((s) => [s.shape, s]));

export const SHAPE_NAMES: readonly SessionShape[] = SHAPES.map((s) => s.shape);

export function isSessionShape(value: unknown): value is SessionShape {
  return typeof value === "string" && BY_NAME.has(value as SessionShape);
}

export function shapeInfo(shape: SessionShape): ShapeInfo {
  return BY_NAME.get(shape)!;
}

export function familyOf(shape: SessionShape | InteropFormat): InteropFormat {
  return BY_NAME.get(shape as SessionShape)?.family ?? (shape as InteropFormat);
}
