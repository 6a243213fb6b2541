/**
 * statebag: AI-agent sessions that can be stored, validated, evolved and restored safely.
 * The package root exports the whole public API.
 */

// Data model
export * from "./runtime/tagged.js";
export * from "./runtime/messages.js";
export * from "./runtime/session.js";
export * from "./runtime/errors.js";
export * from "./runtime/state-bag.js";

// Behaviour
export * from "./runtime/chat-client.js";
export * from "./runtime/tools.js";
export * from "./runtime/agent.js";
export * from "./runtime/middleware.js";
export * from "./runtime/providers/provider.js";
export * from "./runtime/providers/context-provider.js";
export * from "./runtime/providers/chat-history-provider.js";
export * from "./runtime/providers/in-memory-chat-history.js";
export * from "./runtime/providers/reducers.js";
export * from "./runtime/providers/rolling-summary.js";
export * from "./runtime/providers/stored-chat-history.js";
export * from "./runtime/clients/scripted-chat-client.js";

// Registry contract and generated-code support
export * from "./runtime/formats.js";
export * from "./runtime/registry-types.js";

// Many agents, one conversation; Agent Framework interop
export * from "./runtime/group-chat/index.js";
export * from "./runtime/interop/index.js";

// Stores
export * from "./runtime/stores/index.js";
