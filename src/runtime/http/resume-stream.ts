/**
 * `GET ${base}/chat/:id/stream`: where `useChat({ resume: true })` reconnects (ai's
 * `HttpChatTransport.reconnectToStream` GETs `${api}/${encodeURIComponent(chatId)}/stream`). The
 * running turn's answer from its first chunk, then live, from whichever process runs it (the
 * chunks are in the store's stream buffer); `204` when no turn runs.
 */
import { checkChatId } from "./ai-sdk-ui.js";
import { readTurnRecord } from "./chat-data.js";
import { chatNotFound } from "./chat-error.js";
import { ownerOf, type Route } from "./request.js";
import { isTerminal, runnerSource, sseResponse } from "./sse-response.js";

export const resumeStream: Route = async (context, request, _url, id) => {
  const owner = await ownerOf(context, request);
  const chatId = checkChatId(id);
  const { chats } = context;
  const stored = await chats.load(owner, chatId);
  if (!stored) throw chatNotFound();
  const active = await chats.activeStream(stored);
  if (!active) return new Response(null, { status: 204, headers: { "cache-control": "no-store" } });
  const local = chats.runner(active.streamId);
  if (local) return sseResponse(runnerSource(local));
  return sseResponse(async (send, signal) => {
    let last = "";
    let first = true;
    for await (const json of chats.streams.follow(active.streamId, { from: 0, signal })) {
      // A turn's record of the user's message (chunk 0) is the server's, not a UI chunk.
      const skip = first && readTurnRecord(json) !== undefined;
      first = false;
      if (skip) continue;
      send(json);
      last = json;
    }
    if (signal.aborted || isTerminal(last)) return;
    // The writer died (or the stream was removed) before the end: say so, and free the chat.
    send(
      JSON.stringify({
        type: "error",
        errorText: "The reply was interrupted; reload the chat to see what was kept.",
      }),
    );
    await chats.load(owner, chatId).catch(() => undefined);
  });
};
