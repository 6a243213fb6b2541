/**
 * `POST ${base}/chat/:id/stop`: stops the turn running in the chat, from any process, and answers
 * once its commit is seen (within the handler's `stopWaitMs`): `200 { stopped, committed, kept }`,
 * `kept` the answer as kept in the history (null when nothing had been written). `202` with
 * `committed: false` when the commit was not seen in time (it still happens, or the lease
 * recovery does it). `200 { stopped: false }` when nothing ran.
 */
import { toUIMessages } from "../ui-messages/to-ui.js";
import { checkChatId } from "./ai-sdk-ui.js";
import { chatNotFound } from "./chat-flow.js";
import { json, ownerOf, type Route } from "./request.js";

export const stopChat: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  const { chats } = context;
  const outcome = await chats.stop(owner, chatId, context.stopWaitMs);
  if (!outcome.stopped) return json(200, { stopped: false, committed: false });
  if (!outcome.committed) return json(202, { stopped: true, committed: false });
  const stored = await chats.load(owner, chatId);
  if (!stored) throw chatNotFound(); // deleted meanwhile
  const answerId = `msg-${outcome.streamId}`;
  const kept = toUIMessages(stored.session, { historyKey: chats.historyKey }).find((m) => m.id.startsWith(answerId));
  return json(200, { stopped: true, committed: true, kept: kept ?? null });
};
