/** One model request: streamed when the run streams (each update handed on), plain otherwise. */
import {
  responseFromUpdates,
  type ChatClient,
  type ChatOptions,
  type ChatResponse,
  type ChatResponseUpdate,
} from "../chat-client.js";
import type { ChatMessage } from "../../core/messages.js";

export async function callModel(
  client: ChatClient,
  messages: ChatMessage[],
  options: ChatOptions,
  onUpdate?: (update: ChatResponseUpdate) => void,
): Promise<ChatResponse> {
  if (!onUpdate) return client.getResponse(messages, options);
  const updates: ChatResponseUpdate[] = [];
  for await (const update of abortable(client.getStreamingResponse(messages, options), options.signal)) {
    updates.push(update);
    onUpdate(update);
  }
  // A client may end its stream quietly when aborted (the OpenAI SDK does): that is no answer.
  options.signal?.throwIfAborted();
  return responseFromUpdates(updates);
}

/**
 * A client's stream that stops as soon as the signal fires, even while the client waits for a chunk
 * that never comes (a stalled service, a client that ignores the signal): the run must end promptly
 * when its consumer leaves.
 */
async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  if (!signal) {
    yield* source;
    return;
  }
  const iterator = source[Symbol.asyncIterator]();
  let aborted!: () => void;
  const stopped = new Promise<never>((_, reject) => (aborted = () => reject(signal.reason)));
  stopped.catch(() => {});
  signal.addEventListener("abort", aborted, { once: true });
  let finished = false;
  try {
    for (;;) {
      signal.throwIfAborted();
      const next = await Promise.race([iterator.next(), stopped]);
      if (next.done) {
        finished = true;
        return;
      }
      yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", aborted);
    // Not awaited: a generator busy in a read settles its return() only after that read.
    if (!finished) void Promise.resolve(iterator.return?.()).catch(() => {});
  }
}
