/**
 * `statebag/openai`: the OpenAI chat client. A separate entry so the core never loads `openai`
 * (an optional peer dependency: `npm i openai`).
 */
export { OpenAIChatClient, type OpenAIChatClientOptions } from "./runtime/agent/clients/openai-chat-client.js";
export { ModelServiceError } from "./runtime/agent/clients/model-service-error.js";
export { UnsupportedContentError } from "./runtime/agent/clients/openai-content.js";
export { MissingDependencyError } from "./runtime/core/optional-dependency.js";
