/**
 * `statebag/testing`: test doubles and kits. `ScriptedChatClient` is a deterministic, offline model
 * (rules, tool calls, usage, hosted conversations) for tests, demos and examples.
 * `storeConformance` registers the `SessionStore` contract on any test runner, for stores written
 * outside statebag.
 */
export { ScriptedChatClient } from "./runtime/agent/clients/scripted-chat-client.js";
export type {
  ScriptContext,
  ScriptRule,
  ScriptedChatClientOptions,
  ScriptedReply,
} from "./runtime/agent/clients/scripted-chat-client.js";
export { storeConformance } from "./runtime/testing/store-conformance.js";
export type { StoreConformanceOptions, StoreConformanceRunner } from "./runtime/testing/store-conformance.js";
export type { StoreCapability } from "./runtime/testing/conformance/case.js";
