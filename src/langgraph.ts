/**
 * `statebag/langgraph`: a LangGraph checkpoint saver over any statebag store. A separate entry so
 * the core never loads `@langchain/langgraph-checkpoint` (an optional peer dependency:
 * `npm i @langchain/langgraph-checkpoint`).
 */
export {
  createStatebagSaver,
  LANGGRAPH_CHECKPOINT_PACKAGE,
  type StatebagSaverOptions,
} from "./runtime/langgraph/saver.js";
export { LANGGRAPH_STATE_KEY, LANGGRAPH_THREAD_TYPE, NotALangGraphThreadError } from "./runtime/langgraph/document.js";
export type {
  LangGraphChannelVersion,
  LangGraphCheckpoint,
  LangGraphCheckpointMetadata,
  LangGraphCheckpointTuple,
  LangGraphConfig,
  LangGraphDeltaChannelHistory,
  LangGraphListOptions,
  LangGraphPendingWrite,
  LangGraphSerializer,
  StatebagSaver,
} from "./runtime/langgraph/types.js";
export { registerLangGraphTypes } from "./runtime/langgraph/registry.js";
export { LANGGRAPH_IMPORT_KEY, LANGGRAPH_IMPORT_TYPE } from "./runtime/langgraph/import.js";
export { MissingDependencyError } from "./runtime/core/optional-dependency.js";
