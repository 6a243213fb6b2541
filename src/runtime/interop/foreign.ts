/**
 * Envelopes that let data statebag does not model travel through a statebag session unchanged.
 *
 * Agent Framework keeps state bag values as raw JSON until a provider reads them, so a value under
 * a key nobody reads survives a round trip. statebag's bag holds only `$type`-tagged values (that
 * is what makes it validatable and migratable), so an untagged foreign value is wrapped:
 *
 * ```json
 * { "$type": "statebag.ForeignState", "format": "dotnet", "value": <the raw JSON, untouched> }
 * ```
 *
 * and unwrapped again when the session is written back to the format it came from. A foreign
 * message content (a Python content type statebag has no counterpart for, such as
 * `code_interpreter_tool_call`) is wrapped the same way as a `statebag.foreign` content, so a
 * history keeps every item, in order, and the model simply does not see the ones it cannot read.
 */
import type { ChatMessage } from "../core/messages.js";
import { versionOf, type JsonObject, type JsonValue, type TaggedValue } from "../core/tagged.js";
import { isPlainObject, type JsonRecord } from "./json-util.js";

export type { ForeignContent, ForeignState, InteropFormat } from "../builtins/foreign-state.js";
import type { ForeignContent, ForeignState, InteropFormat } from "../builtins/foreign-state.js";

export const FOREIGN_STATE_TYPE = "statebag.ForeignState";
export const FOREIGN_CONTENT_TYPE = "statebag.foreign";

/**
 * The state bag key under which an export records what the target format has no field for (the
 * statebag session id and kind, a non-string conversation id). Import reads it and removes it.
 */
export const SESSION_INFO_KEY = "statebag.session";

/** What `SESSION_INFO_KEY` holds in an exported document. Never part of a statebag session. */
export interface SessionInfo {
  $type: "statebag.SessionInfo";
  id?: string;
  kind?: "local" | "hosted";
  conversationId?: { [name: string]: string };
  /**
   * The history's `droppedMessageCount` (messages a reducer removed), when not 0: the other
   * format's history has no field for it. Restored on import.
   */
  historyDroppedMessageCount?: number;
}

/**
 * A history state an export can write as the other format's `{ messages }`:
 * `InMemoryChatHistoryState` v2 (or v1, in a session built in code and not loaded through a store).
 */
export function isHistoryState(
  value: TaggedValue,
): value is TaggedValue & { messages: ChatMessage[]; droppedMessageCount?: number } {
  return (
    value.$type === "InMemoryChatHistoryState" &&
    (versionOf(value) === 1 || versionOf(value) === 2 || versionOf(value) === 3) &&
    Array.isArray(value.messages)
  );
}

/** The `historyDroppedMessageCount` an export recorded, when it is a usable count. */
export function droppedCountOf(info: SessionInfo | undefined): number {
  const dropped = info?.historyDroppedMessageCount;
  return typeof dropped === "number" && Number.isSafeInteger(dropped) && dropped > 0 ? dropped : 0;
}

/** The bag key that keeps unknown top-level members of an imported document's envelope. */
export const envelopeKey = (format: InteropFormat) => `statebag.${format}.envelope`;

export function foreignState(format: InteropFormat, value: JsonValue): ForeignState {
  return { $type: FOREIGN_STATE_TYPE, format, value };
}

export function isForeignState(value: unknown, format?: InteropFormat): value is ForeignState {
  return (
    isPlainObject(value) &&
    value.$type === FOREIGN_STATE_TYPE &&
    (format === undefined || value.format === format) &&
    "value" in value
  );
}

export function foreignContent(format: InteropFormat, value: JsonObject): ForeignContent {
  return { $type: FOREIGN_CONTENT_TYPE, format, value };
}

export function isForeignContent(value: unknown, format?: InteropFormat): value is ForeignContent & JsonRecord {
  return (
    isPlainObject(value) &&
    value.$type === FOREIGN_CONTENT_TYPE &&
    (format === undefined || value.format === format) &&
    isPlainObject(value.value)
  );
}
