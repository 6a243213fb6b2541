/** The chat history of a session, read from the state bag the way the history providers keep it. */
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { quoted } from "../core/json.js";
import { isPlainObject } from "../interop/json-util.js";
import { UIMessageError, expected } from "./errors.js";
import { DEFAULT_HISTORY_KEY } from "./keys.js";

/**
 * The messages of a session's history: `InMemoryChatHistoryProvider`'s state under `historyKey`
 * (none there: an empty history). A `StoredChatHistoryProvider` keeps them in a store's message
 * log, which only the store can read: that is an error whose hint says how to pass them.
 */
export function sessionHistory(session: AgentSession, historyKey = DEFAULT_HISTORY_KEY): readonly ChatMessage[] {
  if (!isPlainObject(session) || !isPlainObject(session.stateBag))
    throw expected(
      [],
      "a session ({ id, stateBag }) or an array of chat messages",
      session,
      "pass an AgentSession or its history's messages",
    );
  const state = Object.hasOwn(session.stateBag, historyKey) ? session.stateBag[historyKey] : undefined;
  if (state === undefined) return [];
  const path = ["stateBag", historyKey];
  if (state.$type === "StoredChatHistoryState") {
    throw new UIMessageError(
      path,
      `the history of session ${quoted(session.id)} is kept in a store's message log, not in the session`,
      "read it with resolveStoredHistory(session, store.messages) (statebag/interop), or the log's messages, and pass those messages to toUIMessages",
    );
  }
  if (state.$type !== "InMemoryChatHistoryState" || !Array.isArray(state.messages)) {
    throw expected(
      path,
      'an "InMemoryChatHistoryState" with its messages',
      state,
      "give the key your chat history provider uses (historyKey option)",
    );
  }
  return state.messages as ChatMessage[];
}
