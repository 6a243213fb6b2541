/**
 * `@ai-sdk/openai` (4.x, for `ai` 7) as far as the docs use it, for the snippet type-check: this
 * repository does not install provider packages. The real `openai` is an `OpenAIProvider`, callable
 * with a model id and returning a `LanguageModelV4`.
 */
import type { LanguageModelV4 } from "@ai-sdk/provider";

export interface OpenAIProvider {
  (modelId: string): LanguageModelV4;
  languageModel(modelId: string): LanguageModelV4;
  chat(modelId: string): LanguageModelV4;
  responses(modelId: string): LanguageModelV4;
}

export declare const openai: OpenAIProvider;
