/**
 * A loopback HTTP server speaking the OpenAI wire format from canned bodies: JSON responses, or
 * server-sent events for streams. It records every request so tests can assert what statebag sent.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export type CannedReply =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { status?: number; sse: string }
  /** Sends these events, then keeps the stream open, silent (a model pausing mid-answer), until the client leaves. */
  | { hold: string }
  /** Starts a 200 answer (JSON or a stream), then destroys the socket mid-body (a cut connection). */
  | { cut: string; as: "json" | "sse" };

export interface OpenAITestServer {
  baseURL: string;
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request. */
  reply(...replies: CannedReply[]): void;
  /** The `hold` replies so far: `endedByServer` stays false (the server never ends them). */
  held: { endedByServer: boolean; clientLeft: Promise<void> }[];
  close(): Promise<void>;
}

/** SSE text for Chat Completions chunks (`data: <json>` lines, then `data: [DONE]`). */
export function chatSse(chunks: readonly unknown[]): string {
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
}

/** SSE text for Responses API events (`event: <type>` plus `data: <json>`). */
export function responsesSse(events: readonly { type: string; [key: string]: unknown }[]): string {
  return events.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ ...e, sequence_number: i })}\n\n`).join("");
}

export async function startOpenAIServer(): Promise<OpenAITestServer> {
  const queue: CannedReply[] = [];
  const requests: RecordedRequest[] = [];
  const held: OpenAITestServer["held"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      requests.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
      });
      const next = queue.shift();
      if (!next) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            error: { message: `test server: no reply queued for ${req.method} ${req.url}`, type: "server_error" },
          }),
        );
        return;
      }
      if ("hold" in next) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.write(next.hold);
        const entry = {
          endedByServer: false,
          clientLeft: new Promise<void>((resolve) => res.on("close", () => resolve())),
        };
        res.on("finish", () => (entry.endedByServer = true));
        held.push(entry);
      } else if ("cut" in next) {
        const type = next.as === "sse" ? "text/event-stream" : "application/json";
        // The declared length promises more than is sent, so the client must notice the cut.
        res.writeHead(200, {
          "content-type": type,
          ...(next.as === "json" ? { "content-length": String(Buffer.byteLength(next.cut) * 2) } : {}),
        });
        res.write(next.cut, () => setImmediate(() => res.socket?.destroy()));
      } else if ("sse" in next) {
        res.writeHead(next.status ?? 200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        res.end(next.sse);
      } else {
        res.writeHead(next.status ?? 200, { "content-type": "application/json", ...next.headers });
        res.end(JSON.stringify(next.json));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    held,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
