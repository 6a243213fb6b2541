/**
 * UI message conversion used by the handler: a chat's stored history as AI SDK `UIMessage`s (GET
 * /chats/:id), and the new user message of a request as a `ChatMessage`.
 *
 * Interim: `statebag/ui-messages` (`toUIMessages` / `fromUIMessages`) is being written; until it is
 * committed this module holds the subset the handler needs (text, reasoning, tool calls, results
 * and approvals of the in-memory history), behind the same signatures, so the switch is one import.
 */
import type { AIContent, ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { TaggedValue } from "../core/tagged.js";

export interface UIPartOut {
  type: string;
  [key: string]: unknown;
}

export interface UIMessageOut {
  id: string;
  role: "user" | "assistant" | "system";
  parts: UIPartOut[];
}

function historyOf(input: AgentSession | readonly ChatMessage[]): readonly ChatMessage[] {
  if (Array.isArray(input)) return input as readonly ChatMessage[];
  for (const value of Object.values((input as AgentSession).stateBag) as (TaggedValue & { messages?: unknown })[]) {
    if (value?.$type === "InMemoryChatHistoryState" && Array.isArray(value.messages)) return value.messages as ChatMessage[];
  }
  return [];
}

/** The history as UI messages: one assistant message per turn (its model calls as steps), tool parts by state. */
export function toUIMessages(input: AgentSession | readonly ChatMessage[]): UIMessageOut[] {
  const out: UIMessageOut[] = [];
  const tools = new Map<string, UIPartOut>();
  let assistant: UIMessageOut | undefined;
  let newStep = true;
  const assistantMessage = (id: string | undefined): UIMessageOut => {
    if (!assistant) {
      assistant = { id: id ?? `assistant-${out.length}`, role: "assistant", parts: [] };
      out.push(assistant);
    }
    if (newStep) assistant.parts.push({ type: "step-start" });
    newStep = false;
    return assistant;
  };
  const toolPart = (message: UIMessageOut, call: AIContent): UIPartOut | undefined => {
    if (call.$type !== "functionCall" || call.informationalOnly) return undefined;
    let part = tools.get(call.callId);
    if (!part) {
      part = { type: `tool-${call.name}`, toolCallId: call.callId, state: "input-available", input: call.arguments ?? {} };
      tools.set(call.callId, part);
      message.parts.push(part);
    }
    return part;
  };
  history: for (const [i, message] of historyOf(input).entries()) {
    if (message.role === "user") {
      const answers = message.contents.filter((c) => c.$type === "toolApprovalResponse");
      for (const answer of answers) {
        for (const part of tools.values()) {
          const approval = part.approval as { id: string } | undefined;
          if (approval?.id !== answer.requestId) continue;
          part.approval = { id: answer.requestId, approved: answer.approved, ...(answer.reason ? { reason: answer.reason } : {}) };
          part.state = answer.approved ? "approval-responded" : "output-denied";
        }
      }
      if (answers.length === message.contents.length) continue history;
      assistant = undefined;
      newStep = true;
      const parts: UIPartOut[] = message.contents.flatMap((c) => (c.$type === "text" ? [{ type: "text", text: c.text }] : []));
      out.push({ id: message.messageId ?? `user-${i}`, role: "user", parts });
    } else if (message.role === "assistant") {
      const target = assistantMessage(message.messageId);
      for (const content of message.contents) {
        if (content.$type === "text" && content.text) target.parts.push({ type: "text", text: content.text, state: "done" });
        else if (content.$type === "reasoning" && content.text) target.parts.push({ type: "reasoning", text: content.text, state: "done" });
        else if (content.$type === "functionCall") toolPart(target, content);
        else if (content.$type === "toolApprovalRequest") {
          const part = toolPart(target, content.toolCall);
          if (part) {
            part.state = "approval-requested";
            part.approval = { id: content.requestId };
          }
        }
      }
    } else if (message.role === "tool") {
      for (const content of message.contents) {
        if (content.$type !== "functionResult") continue;
        const part = tools.get(content.callId);
        if (!part || part.state === "output-denied") continue;
        part.state = "output-available";
        part.output = content.result ?? null;
      }
      newStep = true;
    }
  }
  return out;
}
