/**
 * Where a statebag message keeps what its `ChatMessage` shape cannot say about the UI message it
 * came from, so `toUIMessages(fromUIMessages(m))` gives `m` back exactly.
 *
 * An assistant UI message is a turn of steps (each opened by a `step-start` part); each step is one
 * statebag assistant message, followed by its answers and results. `additionalProperties
 * ["statebag.ui"]` of a message: `{ parts?: [{ index, part }], metadata?, dropMetadata?, fields?,
 * stepStart?, newMessage? }`: parts statebag has no content for (`data-*`, `custom`, later
 * versions' parts) with their index in the step, metadata that is not `{ createdAt, usage }`,
 * top-level fields a UI message had besides `id`, `role`, `metadata` and `parts`; `stepStart:
 * false` when the UI message did not begin with a `step-start` part, `newMessage: true` when an
 * assistant UI message directly followed another (so it is not read as that one's next step).
 * A message agents write carries none of this: each assistant message is a step with its
 * `step-start`, and the steps up to the next user message are one UI message.
 *
 * `additionalProperties["statebag.ui"]` of a content: `{ set?: {...}, unset?: [...] }`: the part's
 * fields where they differ from what the content gives (a `dynamic-tool` type, a `state:
 * "streaming"`, a `title`, ...). Provider metadata is kept where statebag's AI SDK client keeps
 * it, `additionalProperties.providerMetadata`, so it goes back to the model.
 */
import type { AIContent, ChatMessage } from "../core/messages.js";
import { isPlainObject, type JsonRecord } from "../interop/json-util.js";

/** The `additionalProperties` key of messages and contents holding what only the UI message had. */
export const UI_MESSAGE_KEY = "statebag.ui";

/** The data part type carrying a statebag content UI messages have no part for (errors, hosted files, usage). */
export const STATEBAG_CONTENT_PART = "data-statebag-content";

/** The history key of `InMemoryChatHistoryProvider` (and `StoredChatHistoryProvider`). */
export const DEFAULT_HISTORY_KEY = "statebag.chatHistory";

export interface MessageExtra {
  parts?: { index: number; part: JsonRecord }[];
  metadata?: unknown;
  dropMetadata?: boolean;
  fields?: JsonRecord;
  /** False: the step has no `step-start` part of its own (a UI message that began without one). */
  stepStart?: boolean;
  /** True: this assistant message begins a UI message of its own, not the next step of the one before. */
  newMessage?: boolean;
}

export interface ContentExtra {
  set?: JsonRecord;
  unset?: string[];
  /** A usage content shown as a data part, not as the message's `metadata.usage`. */
  asPart?: boolean;
}

export function messageExtra(message: ChatMessage): MessageExtra | undefined {
  const stored = message.additionalProperties?.[UI_MESSAGE_KEY];
  return isPlainObject(stored) ? (stored as MessageExtra) : undefined;
}

export function contentExtra(content: AIContent): ContentExtra | undefined {
  const stored = content.additionalProperties?.[UI_MESSAGE_KEY];
  return isPlainObject(stored) ? (stored as ContentExtra) : undefined;
}

/** `additionalProperties.providerMetadata` of a content, when it is an object. */
export function providerMetadataOf(content: { additionalProperties?: JsonRecord } | undefined): JsonRecord | undefined {
  const metadata = content?.additionalProperties?.providerMetadata;
  return isPlainObject(metadata) ? metadata : undefined;
}

/** The result statebag's agent gives a tool that failed: `{ error: string }` (plus `rejected: true` when a person said no). */
export function isErrorResult(result: unknown): result is { error: string; rejected?: true } {
  if (!isPlainObject(result) || typeof result.error !== "string") return false;
  for (const key of Object.keys(result))
    if (key !== "error" && !(key === "rejected" && result.rejected === true)) return false;
  return true;
}

/** The result statebag's agent records for a call a person rejected. */
export function rejectedResult(name: string, reason: string | undefined): { error: string; rejected: true } {
  return { error: `the user rejected this call to ${name}${reason ? `: ${reason}` : ""}`, rejected: true };
}
