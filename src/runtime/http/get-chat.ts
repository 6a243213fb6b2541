/**
 * `GET ${base}/chats/:id`: the chat's history as `UIMessage[]`. A tool approval answered in a turn
 * that has not committed its continuation yet (the tab closed, the model is still answering) is
 * shown as the approval state records it: answered, and with the tool's result once it ran. A
 * message with other versions carries `metadata.branch` (chat-branches.ts). The user's message of a
 * turn still running is shown although the chat commits it with the answer (`ChatSessions.view`).
 */
import { checkChatId } from "./ai-sdk-ui.js";
import { chatMessages } from "./chat-branches.js";
import { chatNotFound } from "./chat-error.js";
import { json, ownerOf, type Route } from "./request.js";

export const getChat: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  const stored = await context.chats.view(owner, chatId);
  if (!stored) throw chatNotFound();
  return json(200, chatMessages(context, chatId, stored));
};
