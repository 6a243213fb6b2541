/** Tools an agent (or a context provider) offers the model. */
import type { JsonValue } from "../core/tagged.js";

export interface ToolInvocationContext {
  sessionId: string;
  /** The model's id for this call: stable across processes, so a tool with side effects can use it as an idempotency key. */
  callId: string;
  signal?: AbortSignal;
}

export interface AITool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  /**
   * Whether a call needs the application's approval before it runs: `true`, or a predicate on the
   * call's arguments. A run that reaches such a call stops and returns the request (see approvals.ts).
   */
  requiresApproval?:
    | boolean
    | ((args: { [name: string]: JsonValue }, context: ToolInvocationContext) => boolean | Promise<boolean>);
  /** Runs the tool. Tools without `execute` are declared to the model only (the caller handles the call). */
  execute?(args: { [name: string]: JsonValue }, context: ToolInvocationContext): Promise<JsonValue> | JsonValue;
}
