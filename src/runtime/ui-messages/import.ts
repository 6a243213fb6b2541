/**
 * Chats an AI SDK UI app saved as JSON, as statebag sessions: a file holding one chat's
 * `UIMessage[]` (its id: the file name), one `{ id, messages }`, or an array of `{ id, messages }`.
 */
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { createSessionData } from "../core/session.js";
import { isPlainObject } from "../interop/json-util.js";
import { UIMessageError, expected, within } from "./errors.js";
import { fromUIMessages, type FromUIMessagesOptions } from "./from-ui.js";
import { DEFAULT_HISTORY_KEY } from "./keys.js";
import type { UIMessageLike } from "./types.js";

export interface ImportUIChatsOptions extends FromUIMessagesOptions {
  /** The session id of a document that is one chat (overrides its own). */
  id?: string;
  /** The id of a bare `UIMessage[]` (the file name without `.json`). */
  fallbackId?: string;
  /** Where the history goes. Default `"statebag.chatHistory"` (InMemoryChatHistoryProvider). */
  historyKey?: string;
}

const HINT =
  "save each chat as its UIMessage[] (named <chat id>.json), as { id, messages }, or as an array of { id, messages }";

/** One statebag session per chat in the document, in order. */
export function importUIChats(doc: unknown, options: ImportUIChatsOptions = {}): AgentSession[] {
  const chats: { id: unknown; messages: unknown; path: (string | number)[] }[] = [];
  if (
    Array.isArray(doc) &&
    doc.length > 0 &&
    doc.every((c) => isPlainObject(c) && Array.isArray(c.messages) && !Array.isArray(c.parts))
  ) {
    doc.forEach((c, i) =>
      chats.push({
        id: (c as { id?: unknown }).id,
        messages: (c as { messages: unknown }).messages,
        path: [i, "messages"],
      }),
    );
    if (options.id !== undefined && chats.length > 1)
      throw new UIMessageError(
        [],
        `this document holds ${chats.length} chats, and one id was given`,
        "leave out --id: each chat keeps its own",
      );
  } else if (Array.isArray(doc)) {
    chats.push({ id: options.fallbackId, messages: doc, path: [] });
  } else if (isPlainObject(doc) && Array.isArray(doc.messages)) {
    chats.push({ id: doc.id, messages: doc.messages, path: ["messages"] });
  } else {
    throw expected([], "a chat's UIMessage[], { id, messages } or an array of { id, messages }", doc, HINT);
  }
  const seen = new Set<string>();
  return chats.map((chat) => {
    const id = chats.length === 1 && options.id !== undefined ? options.id : chat.id;
    const idPath = chat.path.length > 0 ? [...chat.path.slice(0, -1), "id"] : [];
    if (typeof id !== "string")
      throw expected(
        idPath,
        "the chat's id (a string)",
        id,
        chat.path.length === 0 ? "name the file after the chat id, or give --id" : "give every chat a string id",
      );
    if (seen.has(id)) throw new UIMessageError(idPath, "two chats have the same id", "give every chat its own id");
    seen.add(id);
    let messages: ChatMessage[];
    try {
      messages = fromUIMessages(chat.messages as UIMessageLike[], options);
    } catch (error) {
      throw within(chat.path, error);
    }
    return createSessionData({
      id,
      kind: "local",
      stateBag: {
        [options.historyKey ?? DEFAULT_HISTORY_KEY]: {
          $type: "InMemoryChatHistoryState",
          $version: 3,
          branches: [],
          branchPoints: [],
          messages,
          droppedMessageCount: 0,
        } as never,
      },
    });
  });
}
