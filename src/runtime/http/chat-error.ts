/**
 * What the session flow of a chat server refuses, as coded errors free of any wire format: the
 * chat handler answers each with the problem its code maps to (problem.ts), and any other server
 * can branch on the `code` the same way.
 */
import { StatebagError } from "../core/errors.js";

/** Why a chat request was refused. */
export type ChatErrorCode =
  /** No chat with this id for this owner (another owner's chat is just as absent). */
  | "chat-not-found"
  /** A reply is still being written in the chat. */
  | "chat-busy"
  /** The new user message reuses a message id the chat holds. */
  | "chat-message-id-taken"
  /** A new message while a tool approval waits for its answer. */
  | "chat-approval-pending"
  /** An answer to an approval request that is not waiting (answered already, or never asked). */
  | "chat-approval-not-pending";

export class ChatError extends StatebagError {
  declare readonly code: ChatErrorCode;
  constructor(code: ChatErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(code, message, options);
  }
}

export const chatNotFound = (): ChatError =>
  new ChatError("chat-not-found", "there is no chat with this id for this owner", {
    hint: "list the owner's chats (GET /chats) for the ids there are; a new chat starts with its first message",
  });

export const chatBusy = (): ChatError =>
  new ChatError("chat-busy", "a reply is still being written in this chat", {
    hint: "wait for the reply to finish (or stop it), then send again",
  });
