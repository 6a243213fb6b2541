/**
 * Agent Framework for Python's compaction (`_compaction.py`, 2026) annotates messages in place, in
 * `additional_properties` (statebag's `additionalProperties`, kept verbatim both ways):
 *
 * - `_group`: `{id, kind, index, has_reasoning, token_count?, _summarized_by_summary_id?}`
 * - `_excluded` (bool), `_exclude_reason`: left out of what the model sees
 * - `_summary_of_message_ids`, `_summary_of_group_ids`: the message is a summary of those
 *
 * and `CompactionProvider` keeps its working copy under `state["_compaction_messages"]` (kept
 * verbatim, as Python state statebag has no type for). `compactionView` says, per message, what
 * those annotations mean; `includedMessages` is the history the model is given (Python's
 * `project_included_messages`).
 */
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { isPlainObject } from "./json-util.js";

export const PYTHON_COMPACTION_STATE_KEY = "_compaction_messages";
export const PYTHON_MESSAGE_INJECTION_KEY = "message_injection.pending_messages";

export interface CompactionAnnotation {
  /** The message's place in the history. */
  index: number;
  messageId?: string;
  excluded: boolean;
  excludeReason?: string;
  /** The group Python put the message in (`_group.id`, `_group.kind`). */
  groupId?: string;
  groupKind?: string;
  /** The summary that replaced this message's group (`_group._summarized_by_summary_id`). */
  summarizedBy?: string;
  /** Set when the message is a summary: the message and group ids it summarizes. */
  summaryOf?: { messageIds: string[]; groupIds: string[] };
}

const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

/** What Python's compaction annotations say about each message of a history. */
export function compactionView(messages: readonly ChatMessage[]): CompactionAnnotation[] {
  return messages.map((m, index) => {
    const props = isPlainObject(m.additionalProperties) ? m.additionalProperties : {};
    const out: CompactionAnnotation = { index, excluded: props._excluded === true };
    if (typeof m.messageId === "string") out.messageId = m.messageId;
    if (typeof props._exclude_reason === "string") out.excludeReason = props._exclude_reason;
    const group = props._group;
    if (isPlainObject(group)) {
      if (typeof group.id === "string") out.groupId = group.id;
      if (typeof group.kind === "string") out.groupKind = group.kind;
      if (typeof group._summarized_by_summary_id === "string") out.summarizedBy = group._summarized_by_summary_id;
    }
    if (Object.hasOwn(props, "_summary_of_message_ids") || Object.hasOwn(props, "_summary_of_group_ids")) {
      out.summaryOf = {
        messageIds: strings(props._summary_of_message_ids),
        groupIds: strings(props._summary_of_group_ids),
      };
    }
    return out;
  });
}

/** The messages the model is given: those not marked `_excluded`. */
export function includedMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.filter((m) => !(isPlainObject(m.additionalProperties) && m.additionalProperties._excluded === true));
}

/** The session's history (in-memory, under `historyKey`) with its compaction annotations read. */
export function sessionCompactionView(
  session: AgentSession,
  historyKey = "statebag.chatHistory",
): CompactionAnnotation[] {
  const history = session.stateBag[historyKey] as unknown;
  return isPlainObject(history) && Array.isArray(history.messages)
    ? compactionView(history.messages as ChatMessage[])
    : [];
}
