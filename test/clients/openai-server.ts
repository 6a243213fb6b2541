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

export type CannedReply = { status?: number; json: unknown; headers?: Record<string, string> } | { status?: number; sse: string };

export interface OpenAITestServer {
  baseURL: string;
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request. */
  reply(...replies: CannedReply[]): void;
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
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      const next = queue.shift();
      if (!next) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `test server: no reply queued for ${req.method} ${req.url}`, type: "server_error" } }));
        return;
      }
      if ("sse" in next) {
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
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
