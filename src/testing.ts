/**
 * `statebag/testing`: test doubles. `ScriptedChatClient` is a deterministic, offline model (rules,
 * tool calls, usage, hosted conversations) for tests, demos and examples.
 */
export { ScriptedChatClient } from "./runtime/agent/clients/scripted-chat-client.js";
export type { ScriptContext, ScriptRule, ScriptedChatClientOptions, ScriptedReply } from "./runtime/agent/clients/scripted-chat-client.js";
