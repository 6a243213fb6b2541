/**
 * `GET ${base}/chats/:id`: the chat's history as `UIMessage[]`. A tool approval answered in a turn
 * that has not committed its continuation yet (the tab closed, the model is still answering) is
 * shown as the approval state records it: answered, and with the tool's result once it ran.
 */
import { toUIMessages } from "../ui-messages/to-ui.js";
import { checkChatId } from "./ai-sdk-ui.js";
import { chatNotFound } from "./chat-error.js";
import { json, ownerOf, type Route } from "./request.js";
import { withApprovalProgress } from "./turn-message.js";

export const getChat: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  const stored = await context.chats.load(owner, chatId);
  if (!stored) throw chatNotFound();
  // Files kept in the blob store are shown from the files route (GET /chat/:id/files/:hash).
  const files = `${context.basePath}/chat/${encodeURIComponent(chatId)}/files/`;
  return json(
    200,
    withApprovalProgress(
      toUIMessages(stored.session, { historyKey: context.chats.historyKey, fileUrl: (ref) => files + ref.hash }),
      stored.session,
    ),
  );
};
