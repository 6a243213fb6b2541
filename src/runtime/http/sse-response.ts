/**
 * A UI message stream response (SSE, `x-vercel-ai-ui-message-stream: v1`, ended by `[DONE]`) fed
 * from chunks already written as JSON text: the turn running in this process, or a stream buffer
 * followed from the store. The client going away stops the following, never the turn (unless the
 * handler's `disconnect` is `"abort"`, through `onCancel`).
 */
import type { TurnRunner } from "./turn-runner.js";
import { SSE_DONE, sseBytes, sseText, UI_MESSAGE_STREAM_HEADERS } from "./ui-message-stream.js";

/** Writes chunks with `send` until the source ends (or `signal` aborts: the client left). */
export type ChunkSource = (send: (json: string) => void, signal: AbortSignal) => Promise<void>;

export function sseResponse(source: ChunkSource, onCancel?: () => void): Response {
  const abort = new AbortController();
  let open = true;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      // Chunks sent in one turn of the event loop (a replay, tokens read from one network packet)
      // go out as one write: one encode, one enqueue, one read for the client, not one per chunk.
      let pending = "";
      let scheduled = false;
      const flush = () => {
        scheduled = false;
        if (!open || pending === "") return;
        const text = pending;
        pending = "";
        controller.enqueue(sseBytes(text));
      };
      const send = (json: string) => {
        // A chunk is one line of JSON; anything else would break the event framing.
        if (!open || json.includes("\n") || json.includes("\r")) return;
        pending += sseText(json);
        if (scheduled) return;
        scheduled = true;
        nextTurn(flush);
      };
      void source(send, abort.signal)
        .catch(() => undefined)
        .finally(() => {
          if (!open) return;
          flush();
          controller.enqueue(SSE_DONE);
          controller.close();
          open = false;
        });
    },
    cancel() {
      open = false;
      abort.abort();
      onCancel?.();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** Built once: a Response copies the headers it is given, and copying a `Headers` skips converting a record. */
const SSE_HEADERS = new Headers(UI_MESSAGE_STREAM_HEADERS);

/** Runs `fn` once this turn of the event loop is over (`setImmediate` where there is one: no timer's delay). */
const nextTurn: (fn: () => void) => void =
  typeof setImmediate === "function" ? (fn) => void setImmediate(fn) : (fn) => void setTimeout(fn, 0);

/** The turn running here, from its first chunk. */
export function runnerSource(runner: TurnRunner): ChunkSource {
  return (send, signal) =>
    new Promise<void>((resolve) => {
      const off = runner.subscribe({ chunk: send, end: resolve });
      signal.addEventListener(
        "abort",
        () => {
          off();
          resolve();
        },
        { once: true },
      );
    });
}

/** Whether a chunk ends a UI message stream (`finish`, or `error`). */
export function isTerminal(json: string): boolean {
  return json.startsWith('{"type":"finish"') || json.startsWith('{"type":"error"');
}
