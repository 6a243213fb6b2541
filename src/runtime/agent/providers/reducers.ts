/**
 * Chat history reducers: shrink a local session's history to fit a context
 * window. They never split a function call from its result: a tool message whose call was cut is
 * cut too, so the model is never shown an orphaned result.
 */
import type { ChatMessage } from "../../core/messages.js";

export type ChatReducer = (messages: readonly ChatMessage[]) => ChatMessage[] | Promise<ChatMessage[]>;

function callIdsOf(message: ChatMessage, type: "functionCall" | "functionResult"): string[] {
  const ids: string[] = [];
  for (const content of message.contents) if (content.$type === type) ids.push(content.callId);
  return ids;
}

/** Moves `start` forward past results whose calls lie before it. */
function skipOrphanedResults(messages: readonly ChatMessage[], start: number): number {
  const calls = new Set<string>();
  for (let i = start; i < messages.length; i++) for (const id of callIdsOf(messages[i], "functionCall")) calls.add(id);
  while (start < messages.length) {
    const results = callIdsOf(messages[start], "functionResult");
    if (results.length === 0 || results.every((id) => calls.has(id))) break;
    start++;
  }
  return start;
}

/** Keeps the last `count` messages (fewer when that would orphan a function result). */
export function keepLastMessages(count: number): ChatReducer {
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`keepLastMessages: count must be a positive integer, got ${count}`);
  return (messages) => {
    if (messages.length <= count) return [...messages];
    return messages.slice(skipOrphanedResults(messages, messages.length - count));
  };
}

/**
 * Keeps the first system message plus the last `turns` turns. A turn starts at a user message and
 * runs up to the next one, so a function call and its result (always inside one turn) stay together.
 */
export function keepSystemAndLastTurns(turns: number): ChatReducer {
  if (!Number.isInteger(turns) || turns < 1)
    throw new RangeError(`keepSystemAndLastTurns: turns must be a positive integer, got ${turns}`);
  return (messages) => {
    const system = messages.find((m) => m.role === "system");
    let start = messages.length;
    let seen = 0;
    for (let i = messages.length - 1; i >= 0 && seen < turns; i--) {
      if (messages[i].role === "user") {
        seen++;
        start = i;
      }
    }
    if (seen < turns) start = 0;
    const kept = messages.slice(start).filter((m) => m !== system);
    return system ? [system, ...kept] : kept;
  };
}
