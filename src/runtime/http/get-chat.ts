/**
 * `GET ${base}/chats/:id`: the chat's history as `UIMessage[]`. A tool approval answered in a turn
 * that has not committed its continuation yet (the tab closed, the model is still answering) is
 * shown as the approval state records it: answered, and with the tool's result once it ran.
 */
import { toolApprovalState } from "../agent/approvals.js";
import type { AgentSession } from "../core/session.js";
import { toUIMessages } from "../ui-messages/to-ui.js";
import type { UIMessage } from "../ui-messages/types.js";
import { checkChatId } from "./ai-sdk-ui.js";
import { chatNotFound } from "./chat-flow.js";
import { json, ownerOf, type Route } from "./request.js";

export const getChat: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const stored = await context.chats.load(owner, checkChatId(id));
  if (!stored) throw chatNotFound();
  return json(
    200,
    withApprovalProgress(toUIMessages(stored.session, { historyKey: context.chats.historyKey }), stored.session),
  );
};

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
