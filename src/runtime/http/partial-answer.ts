/**
 * The answer a turn had written when it ended early (stopped, or its server died), rebuilt from
 * the UI message stream chunks kept in the stream buffer: the same chunks `useChat` built its
 * message from, so what is committed is what the user saw. Text, reasoning and finished tool
 * calls are kept; a tool call without an outcome (input only, an approval nobody answered) is
 * dropped, because the model would otherwise be shown a call with no result. Steps are kept as
 * `step-start` parts and text and reasoning as `state: "done"`, as `readUIMessageStream` built
 * them, so `fromUIMessages` stores one message per step and a reload shows what the stream showed.
 *
 * The message carries UI metadata `{ statebag: { finish } }` (kept by `fromUIMessages` in the
 * message's `additionalProperties`, given back by `toUIMessages`), so a reloaded chat can say
 * "stopped" or "interrupted" under the answer.
 */
import type { ChatMessage } from "../core/messages.js";
import { fromUIMessages } from "../ui-messages/from-ui.js";
import type { UIMessageLike } from "../ui-messages/types.js";

/** How a turn ended, as the UI metadata of its answer says it: `metadata.statebag.finish`. */
export type TurnFinish = "stopped" | "interrupted" | "failed";

type Part = Record<string, unknown> & { type: string };

/**
 * The partial answer of `chunks` (JSON texts of UI message chunks, in stream order) as statebag
 * messages, its first message with id `messageId`. Empty when nothing was said: the caller still
 * records the end (see `finishMarker`).
 */
export function partialAnswer(chunks: readonly string[], messageId: string, finish: TurnFinish): ChatMessage[] {
  const parts: Part[] = [];
  const blocks = new Map<string, Part>();
  const tools = new Map<string, Part>();
  for (const text of chunks) {
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue; // not ours: a buffer holds only what this server wrote
    }
    if (typeof chunk !== "object" || chunk === null) continue;
    const id = typeof chunk.id === "string" ? chunk.id : "";
    const callId = typeof chunk.toolCallId === "string" ? chunk.toolCallId : "";
    switch (chunk.type) {
      case "start-step":
        parts.push({ type: "step-start" });
        break;
      case "text-start":
      case "reasoning-start": {
        const part: Part = { type: chunk.type === "text-start" ? "text" : "reasoning", text: "", state: "done" };
        blocks.set(id, part);
        parts.push(part);
        break;
      }
      case "text-delta":
      case "reasoning-delta": {
        const part = blocks.get(id);
        if (part && typeof chunk.delta === "string") part.text = `${part.text as string}${chunk.delta}`;
        break;
      }
      case "tool-input-available": {
        if (typeof chunk.toolName !== "string") break;
        const part: Part = {
          type: `tool-${chunk.toolName}`,
          toolCallId: callId,
          state: "input-available",
          input: chunk.input ?? {},
        };
        tools.set(callId, part);
        parts.push(part);
        break;
      }
      case "tool-output-available": {
        const part = tools.get(callId);
        if (part) Object.assign(part, { state: "output-available", output: chunk.output ?? null });
        break;
      }
      case "tool-output-error": {
        const part = tools.get(callId);
        if (part) Object.assign(part, { state: "output-error", errorText: String(chunk.errorText ?? "") });
        break;
      }
      default:
        break; // step ends, approval requests, start/finish: no content of their own
    }
  }
  const content = parts.filter((p) =>
    p.type === "step-start"
      ? true
      : p.type === "text" || p.type === "reasoning"
        ? (p.text as string).length > 0
        : p.state === "output-available" || p.state === "output-error",
  );
  // A step left with no content (cut before it said anything) is dropped with its step-start.
  const kept = content.filter(
    (p, i) => p.type !== "step-start" || (content[i + 1] && content[i + 1].type !== "step-start"),
  );
  if (!kept.some((p) => p.type !== "step-start")) return [];
  const ui: UIMessageLike = {
    id: messageId,
    role: "assistant",
    parts: kept,
    metadata: { statebag: { finish } },
  } as UIMessageLike;
  return fromUIMessages([ui]);
}

/** The UI metadata a turn's answer carries when the turn did not finish normally. */
export function finishMarker(finish: TurnFinish): { statebag: { finish: TurnFinish } } {
  return { statebag: { finish } };
}
