/**
 * `POST ${base}/chat/:id/stop`: stops the turn running in the chat, from any process, and answers
 * once its commit is seen (within the handler's `stopWaitMs`): `200 { stopped, committed, kept }`,
 * `kept` the UI message holding what the turn kept, as a reload shows it (for an approval's
 * continuation, the message that asked, now with the tools' outcomes; null when the turn kept nothing). `202` with
 * `committed: false` when the commit was not seen in time (it still happens, or the lease
 * recovery does it). `200 { stopped: false }` when nothing ran.
 *
 * The request must say `content-type: application/json` (its body, `{}` or none, is not used): a
 * page of another site can send a simple POST with a user's cookies, but not that one without the
 * browser asking this server first (CORS), so no other site can stop a user's reply.
 */
import { checkChatId } from "./ai-sdk-ui.js";
import { historyOf } from "./chat-data.js";
import { chatNotFound } from "./chat-error.js";
import { HttpProblem } from "./problem.js";
import { isJsonUtf8, json, ownerOf, readJson, type Route } from "./request.js";
import { answeredCalls, isContinuation, lastAnsweredRound, turnMessage } from "./turn-message.js";

export const stopChat: Route = async (context, request, _url, id) => {
  if (!isJsonUtf8(request.headers.get("content-type")))
    throw new HttpProblem("http-unsupported-media-type", {
      detail: "Send the stop request with content-type application/json (the body may be {} or empty).",
    });
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  await readJson(context, request, { allowEmpty: true }); // read within the limits, and not used
  const { chats } = context;
  const outcome = await chats.stop(owner, chatId, context.stopWaitMs);
  if (!outcome.stopped) return json(200, { stopped: false, committed: false });
  if (!outcome.committed) return json(202, { stopped: true, committed: false });
  const stored = await chats.load(owner, chatId);
  if (!stored) throw chatNotFound(); // deleted meanwhile
  // The calls the turn answered (an approvals turn): their outcomes are kept even when no text was.
  const chunks = (await chats.streams.read(outcome.streamId!, { from: 0 }))?.chunks ?? [];
  const history = historyOf(stored.session, chats.historyKey);
  const calls = answeredCalls(chunks);
  // An approvals turn kept the answers and results it recorded, even when it was stopped before
  // the continuation said anything.
  if (isContinuation(chunks)) for (const id of lastAnsweredRound(stored.session, history)) calls.add(id);
  const kept = turnMessage(stored.session, history, `msg-${outcome.streamId}`, calls);
  return json(200, { stopped: true, committed: true, kept: kept ?? null });
};
