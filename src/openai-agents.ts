/**
 * `statebag/openai-agents`: a `Session` for the OpenAI Agents SDK over any statebag store, and a
 * way to keep a run interrupted for approval in it. A separate entry so the core never loads
 * `@openai/agents-core` (an optional peer dependency: only `loadRunState` loads it).
 */
export {
  StatebagSession,
  type StatebagSessionOptions,
  type OpenAIAgentsRunStateValue,
  OPENAI_AGENTS_HISTORY_KEY,
  OPENAI_AGENTS_RUN_STATE_KEY,
  OPENAI_AGENTS_RUN_STATE_TYPE,
} from "./runtime/openai-agents/session.js";
export {
  itemToMessage,
  messageToItems,
  messagesToItems,
  isVerbatimItemMessage,
  OpenAIAgentsItemError,
  OPENAI_AGENTS_ITEM_TYPE,
  type OpenAIAgentsItemContent,
} from "./runtime/openai-agents/items.js";
export { registerOpenAIAgentsTypes } from "./runtime/openai-agents/registry.js";
export type { RunStateAgent } from "./runtime/openai-agents/run-state.js";
export type { AgentItem, AgentsSession, SerializableRunState } from "./runtime/openai-agents/types.js";
export { MissingDependencyError } from "./runtime/core/optional-dependency.js";
