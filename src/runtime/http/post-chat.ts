/**
 * `POST ${base}/chat`: a turn, as `useChat`'s transport sends it. The user's message is committed
 * before the answer starts; the response follows the turn, which runs to its end whether or not
 * the client stays (unless `disconnect: "abort"`).
 */
import { parseUIChatRequest } from "./ai-sdk-ui.js";
import { ownerOf, readJson, type Route } from "./request.js";
import { runnerSource, sseResponse } from "./sse-response.js";

export const postChat: Route = async (context, request) => {
  const owner = await ownerOf(context, request);
  const { chatId, input } = parseUIChatRequest(await readJson(context, request), context.limits);
  const runner = await context.chats.accept(owner, chatId, input);
  const abortOnLeave = context.chats.disconnect === "abort";
  if (abortOnLeave) request.signal.addEventListener("abort", () => runner.abandon(), { once: true });
  return sseResponse(runnerSource(runner), abortOnLeave ? () => runner.abandon() : undefined);
};
