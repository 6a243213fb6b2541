/** Tools an agent (or a context provider) offers the model. */
import type { JsonValue } from "../core/tagged.js";

export interface ToolInvocationContext {
  sessionId: string;
  callId: string;
  signal?: AbortSignal;
}

export interface AITool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters?: Record<string, unknown>;
  /** Runs the tool. Tools without `execute` are declared to the model only (the caller handles the call). */
  execute?(args: { [name: string]: JsonValue }, context: ToolInvocationContext): Promise<JsonValue> | JsonValue;
}
