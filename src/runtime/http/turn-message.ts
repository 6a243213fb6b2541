/**
 * The UI message a turn wrote into, found in the chat's history as `toUIMessages` shows it. A
 * turn's own messages carry ids from its answer id (`msg-<streamId>`, `msg-<streamId>-<n>`), but
 * the UI message they appear in may be an earlier one: `toUIMessages` groups a whole assistant
 * turn into one message, so an approval's continuation (and its partial answer when stopped) joins
 * the message that asked. The stop answer's `kept` and the stream's final metadata are read from
 * this message, so they say what a reload shows (`GET /chats/:id`: the history, with the approval
 * state's answers and results on the tool parts they answer, `withApprovalProgress`).
 */
import { toolApprovalState } from "../agent/approvals.js";
import type { AIContent, ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { buildUIMessages } from "../ui-messages/to-ui.js";
import type { UIMessage } from "../ui-messages/types.js";

/**
 * The last UI message holding a part made from a message whose id is `answerId` (or starts with
 * `answerId-`), or a tool part of one of `callIds` (the calls an approvals turn answered);
 * undefined when the history holds nothing of the turn.
 */
export function turnMessage(
  session: AgentSession,
  history: readonly ChatMessage[],
  answerId: string,
  callIds: ReadonlySet<string> = new Set(),
): UIMessage | undefined {
  const madeFrom = new Map<AIContent, Record<string, unknown>>();
  const messages = withApprovalProgress(buildUIMessages(history, {}, madeFrom), session);
  const own = new Set<unknown>();
  for (const message of history) {
    const id = message.messageId;
    if (id === undefined || (id !== answerId && !id.startsWith(`${answerId}-`))) continue;
    for (const content of message.contents) {
      const part = madeFrom.get(content);
      if (part) own.add(part);
    }
  }
  for (let i = messages.length - 1; i >= 0; i--) {
    const parts = messages[i].parts as unknown as Record<string, unknown>[];
    if (parts.some((p) => own.has(p) || (typeof p.toolCallId === "string" && callIds.has(p.toolCallId))))
      return messages[i];
  }
  return undefined;
}

/**
 * Whether the chunks (JSON texts) are those of an approvals turn: its `start` names no message id
 * (it continues the message on screen).
 */
export function isContinuation(chunks: readonly string[]): boolean {
  for (const text of chunks.slice(0, 4)) {
    try {
      const chunk = JSON.parse(text) as { type?: unknown; messageId?: unknown };
      if (chunk.type === "start") return chunk.messageId === undefined;
    } catch {
      // not a chunk of ours
    }
  }
  return false;
}

/**
 * The calls answered in the last assistant UI message (tool parts whose approval has an answer):
 * what an approvals turn recorded before anything of its own was streamed. A new message cannot
 * be sent while approvals wait, so the last answered round is the turn's.
 */
export function lastAnsweredRound(session: AgentSession, history: readonly ChatMessage[]): Set<string> {
  const messages = withApprovalProgress(buildUIMessages(history), session);
  const last = messages.findLast((m) => m.role === "assistant");
  const ids = new Set<string>();
  for (const part of (last?.parts ?? []) as unknown as Record<string, unknown>[]) {
    const approval = part.approval as { approved?: unknown } | undefined;
    if (typeof part.toolCallId === "string" && typeof approval?.approved === "boolean") ids.add(part.toolCallId);
  }
  return ids;
}

/** The tool calls a turn's chunks (JSON texts) gave an outcome: the calls an approvals turn answered. */
export function answeredCalls(chunks: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const text of chunks) {
    if (!text.includes('"tool-output-')) continue;
    try {
      const chunk = JSON.parse(text) as { type?: unknown; toolCallId?: unknown };
      if (typeof chunk.toolCallId === "string" && String(chunk.type).startsWith("tool-output-"))
        ids.add(chunk.toolCallId);
    } catch {
      // not a chunk of ours
    }
  }
  return ids;
}

/** The tool parts still `approval-requested` in the history, updated from the session's approval state. */
export function withApprovalProgress(messages: UIMessage[], session: AgentSession): UIMessage[] {
  const state = toolApprovalState.read(session);
  if (!state || state.pending.length === 0) return messages;
  const byCall = new Map(state.pending.map((entry) => [entry.call.callId, entry]));
  for (const message of messages) {
    for (const part of message.parts as unknown as Record<string, unknown>[]) {
      if (part.state !== "approval-requested" || typeof part.toolCallId !== "string") continue;
      const entry = byCall.get(part.toolCallId);
      const response = entry?.response;
      if (!entry || !response) continue;
      const approval: Record<string, unknown> = { id: response.requestId, approved: response.approved };
      if (response.reason) approval.reason = response.reason;
      part.approval = approval;
      if (!response.approved) part.state = "output-denied";
      else if (entry.result) {
        part.state = "output-available";
        part.output = entry.result.result ?? null;
      } else part.state = "approval-responded";
    }
  }
  return messages;
}
