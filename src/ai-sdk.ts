/**
 * `statebag/ai-sdk`: any Vercel AI SDK language model as a statebag chat client. A separate entry
 * so the core never loads `@ai-sdk/provider`/`ai` (optional peer dependencies).
 */
export {
  AISDKChatClient,
  type AISDKChatClientOptions,
  type AISDKLanguageModel,
} from "./runtime/agent/clients/ai-sdk-chat-client.js";
export { ModelServiceError } from "./runtime/agent/clients/model-service-error.js";
export { UnsupportedContentError } from "./runtime/agent/clients/openai-content.js";
export { MissingDependencyError } from "./runtime/core/optional-dependency.js";
