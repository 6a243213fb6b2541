/**
 * `toNodeListener`: serves a Web-standard handler from `node:http`. The request body is streamed
 * in, the response body streamed out; when the client goes away before the response ended, the
 * request's signal aborts and the response body is cancelled (a running turn then commits nothing).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void;

export function toNodeListener(handler: (request: Request) => Promise<Response>): NodeListener {
  return (req, res) => {
    const abort = new AbortController();
    let ended = false;
    res.on("close", () => {
      if (!ended) abort.abort();
    });
    void (async () => {
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      const onClose = () => void reader?.cancel().catch(() => {});
      try {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
        }
        const method = req.method ?? "GET";
        const hasBody = method !== "GET" && method !== "HEAD";
        // The path only: the Host header is not trusted for anything.
        const request = new Request(new URL(req.url ?? "/", "http://localhost"), {
          method,
          headers,
          signal: abort.signal,
          ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
        } as RequestInit);
        const response = await handler(request);
        const out: Record<string, string> = {};
        response.headers.forEach((value, name) => (out[name] = value));
        res.writeHead(response.status, out);
        if (!response.body) {
          ended = true;
          res.end();
          return;
        }
        res.flushHeaders();
        reader = response.body.getReader();
        res.on("close", onClose);
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (!res.write(value))
            await new Promise<void>((resolve) => {
              res.once("drain", resolve);
              res.once("close", resolve);
            });
          if (res.destroyed) break;
        }
        ended = true;
        res.end();
      } catch {
        if (!res.headersSent) {
          ended = true;
          res.writeHead(500, { "content-type": "application/problem+json" });
          res.end(
            JSON.stringify({
              type: "urn:statebag:problem:internal",
              title: "Internal error",
              status: 500,
              detail: "The server failed to answer.",
            }),
          );
        } else {
          res.destroy();
        }
      }
    })();
  };
}
