/**
 * A session whose history lives in a store's message log (`StoredChatHistoryProvider`) holds only
 * the log's id and a count. Another framework's document has no log to point to, so before such
 * a session is exported its history is read from the log, exactly as the provider's next run
 * would see it (the committed messages plus a pending write not yet applied; of a branched
 * history, its active path), and put in the session as in-memory history under the history key.
 */
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { MessageLog } from "../stores/types.js";
import type { StoredChatHistoryState } from "../builtins/stored-chat-history-state.js";
import { pathSegments, TreeReader } from "../agent/providers/stored-branches.js";
import { InteropError, shown } from "./errors.js";
import { defineOwn, isPlainObject, type JsonRecord } from "./json-util.js";

/** A copy of `session` with every `StoredChatHistoryState` replaced by the history it stands for. */
export async function resolveStoredHistory(
  session: AgentSession,
  log: MessageLog,
  options: { historyKey?: string } = {},
): Promise<AgentSession> {
  const historyKey = options.historyKey ?? "statebag.chatHistory";
  const bag: JsonRecord = {};
  let found = false;
  for (const key of Object.keys(session.stateBag)) {
    const value = session.stateBag[key] as unknown as JsonRecord;
    if (value.$type !== "StoredChatHistoryState") {
      if (!Object.hasOwn(bag, key)) defineOwn(bag, key, value);
      continue;
    }
    if (found || (Object.hasOwn(session.stateBag, historyKey) && key !== historyKey)) {
      throw new InteropError(
        "dotnet",
        "export",
        `/stateBag/${key}`,
        `the session holds more than one history (${shown(key)} and ${shown(historyKey)})`,
        "export a session with one history provider",
      );
    }
    found = true;
    const storageId = typeof value.storageId === "string" ? value.storageId : "";
    const count = typeof value.messageCount === "number" ? value.messageCount : 0;
    const logged = storageId === "" ? [] : await log.getMessages(storageId);
    const pending = isPlainObject(value.pending) ? value.pending : undefined;
    const pendingMessages = (Array.isArray(pending?.messages) ? pending.messages : []) as ChatMessage[];
    let messages: ChatMessage[];
    if (pending?.mode === "replace") messages = pendingMessages;
    else if (isPlainObject(value.tree) && storageId !== "") {
      // A branched history: its active path, read run by run (the other branches stay in the log).
      const state = value as unknown as StoredChatHistoryState;
      messages = await new TreeReader(log, session.id, state, state.tree!).readPath(
        pathSegments(state.tree!, state.tree!.active),
      );
    } else {
      messages = logged.slice(0, count);
      for (const message of pendingMessages) messages.push(message);
    }
    defineOwn(bag, historyKey, {
      $type: "InMemoryChatHistoryState",
      $version: 3,
      messages,
      droppedMessageCount: 0,
      branches: [],
      branchPoints: [],
    });
  }
  return found ? { ...session, stateBag: bag as AgentSession["stateBag"] } : session;
}
