/**
 * `POST ${base}/chat/:id/stop`: stops the turn running in the chat, from any process, and answers
 * once its commit is seen (within the handler's `stopWaitMs`): `200 { stopped, committed, kept }`,
 * `kept` the answer as kept in the history (null when nothing had been written). `202` with
 * `committed: false` when the commit was not seen in time (it still happens, or the lease
 * recovery does it). `200 { stopped: false }` when nothing ran.
 *
 * The request must say `content-type: application/json` (its body, `{}` or none, is not used): a
 * page of another site can send a simple POST with a user's cookies, but not that one without the
 * browser asking this server first (CORS), so no other site can stop a user's reply.
 */
import { toUIMessages } from "../ui-messages/to-ui.js";
import { checkChatId } from "./ai-sdk-ui.js";
import { chatNotFound } from "./chat-flow.js";
import { HttpProblem } from "./problem.js";
import { isJsonUtf8, json, ownerOf, readJson, type Route } from "./request.js";

export const stopChat: Route = async (context, request, _url, id) => {
  if (!isJsonUtf8(request.headers.get("content-type")))
    throw new HttpProblem(
      415,
      "unsupported-media-type",
      "Unsupported media type",
      "Send the stop request with content-type application/json (the body may be {} or empty).",
    );
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  await readJson(context, request, { allowEmpty: true }); // read within the limits, and not used
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
