/** `DELETE ${base}/chats/:id`: the chat, its message log and its streams (a running turn ends uncommitted). */
import { checkChatId } from "./ai-sdk-ui.js";
import { chatNotFound } from "./chat-error.js";
import { ownerOf, type Route } from "./request.js";

export const deleteChat: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  if (!(await context.chats.delete(owner, checkChatId(id)))) throw chatNotFound();
  return new Response(null, { status: 204 });
};
