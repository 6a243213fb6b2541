/** One model request: streamed when the run streams (each update handed on), plain otherwise. */
import {
  responseFromUpdates,
  type ChatClient,
  type ChatOptions,
  type ChatResponse,
  type ChatResponseUpdate,
} from "../chat-client.js";
import type { ModelRequest } from "./request.js";

/** Calls the model with `request.messages`; a stream left before its end is reported to `request` (`stillReading`). */
export async function callModel(
  client: ChatClient,
  request: ModelRequest,
  options: ChatOptions,
  onUpdate?: (update: ChatResponseUpdate) => void,
): Promise<ChatResponse> {
  const messages = request.messages;
  if (!onUpdate) return client.getResponse(messages, options);
  const updates: ChatResponseUpdate[] = [];
  const stream = abortable(client.getStreamingResponse(messages, options), options.signal, (closing) =>
    request.stillReading(closing),
  );
  for await (const update of stream) {
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
async function* abortable<T>(
  source: AsyncIterable<T>,
  signal: AbortSignal | undefined,
  left: (closing: Promise<unknown>) => void,
): AsyncGenerator<T> {
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
    // Not awaited: a generator busy in a read settles its return() only after that read. Until it
    // does, the client may still read the request (without return(), there is no telling when).
    if (!finished) {
      const closing = iterator.return ? Promise.resolve(iterator.return()).catch(() => {}) : new Promise(() => {});
      left(closing);
    }
  }
}
