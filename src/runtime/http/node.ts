/**
 * `toNodeListener`: serves a Web-standard handler from `node:http`. The request body is streamed
 * in, the response body streamed out; when the client goes away before the response ended, the
 * request's signal aborts and the response body is cancelled (a running turn then commits nothing).
 *
 * The request's URL is a fixed origin plus the path exactly as sent: `//evil.example/api/chats`
 * is the path `//evil.example/api/chats` (a 404), never a URL of another host, and the `Host`
 * header is not trusted for anything. A body must arrive within `bodyTimeoutMs` of the request's
 * headers; a client trickling it gets a 408 and its connection is closed. Headers are bounded by
 * the server (`headersTimeout`): `createChatServer` and `chatServerOptions` set both.
 */
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { ConfigurationError } from "../core/errors.js";
import { HttpProblem, problemBody } from "./problem.js";

export type NodeListener = (request: IncomingMessage, response: ServerResponse) => void;

export interface NodeListenerOptions {
  /**
   * Longest time, in ms, from a request's headers to the last byte of its body. A body still
   * arriving then is answered `408` and the connection closed (the chat was not touched: a turn
   * starts only once its whole body was read). Default 20,000.
   */
  bodyTimeoutMs?: number;
}

export interface ChatServerOptions extends NodeListenerOptions {
  /** Longest time, in ms, a client may take to send a request's headers (node:http `headersTimeout`). Default 10,000. */
  headersTimeoutMs?: number;
  /**
   * Longest time, in ms, a client may take to send a whole request, headers and body (node:http
   * `requestTimeout`; the response, a stream included, is not bounded by it). Default 30,000.
   */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open, in ms (node:http `keepAliveTimeout`). Default 5,000. */
  keepAliveTimeoutMs?: number;
}

/** Methods the fetch `Request` refuses to carry. */
const UNCARRIED = new Set(["TRACE", "TRACK", "CONNECT"]);

/** The origin every request URL gets: the handler routes by path only. */
const ORIGIN = "http://localhost";

const DEFAULTS = {
  bodyTimeoutMs: 20_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

function positive(name: string, value: number | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  if (typeof chosen !== "number" || !Number.isFinite(chosen) || chosen <= 0)
    throw new ConfigurationError(
      `${name} must be a positive number of milliseconds, got ${String(chosen).slice(0, 40)}`,
      `leave ${name} out for its default (${fallback})`,
    );
  return chosen;
}

/**
 * The request URL from the request target as sent: origin-form (`/path?query`) is appended to a
 * fixed origin as it is (so `//host/x` stays a path); absolute-form (`http://host/path`, what a
 * client talking to a proxy sends) keeps its path and query only. Anything else is undefined.
 */
export function requestUrl(target: string | undefined): URL | undefined {
  const raw = target ?? "/";
  try {
    if (raw.startsWith("/")) return new URL(ORIGIN + raw);
    if (/^https?:\/\//i.test(raw)) {
      const sent = new URL(raw);
      return new URL(ORIGIN + sent.pathname + sent.search);
    }
  } catch {
    // not a URL at all
  }
  return undefined;
}

/** Answers `problem` on a response no handler wrote (`close`: the connection ends after it). */
function answerProblem(res: ServerResponse, problem: HttpProblem, close = false) {
  res.writeHead(problem.status, {
    ...problem.headers,
    "content-type": "application/problem+json",
    ...(close ? { connection: "close" } : {}),
  });
  res.end(JSON.stringify(problemBody(problem)));
}

export function toNodeListener(
  handler: (request: Request) => Promise<Response>,
  options: NodeListenerOptions = {},
): NodeListener {
  const bodyTimeoutMs = positive("bodyTimeoutMs", options.bodyTimeoutMs, DEFAULTS.bodyTimeoutMs);
  return (req, res) => {
    const abort = new AbortController();
    const socket = req.socket;
    let ended = false;
    const method = req.method ?? "GET";
    const hasBody = method !== "GET" && method !== "HEAD";
    let bodyDone = !hasBody || req.readableEnded;
    let timedOut = false;
    // The body deadline: from the headers to the body's last byte.
    const deadline = bodyDone
      ? undefined
      : setTimeout(() => {
          if (bodyDone || timedOut) return;
          timedOut = true;
          abort.abort();
          if (!res.headersSent) {
            ended = true;
            answerProblem(res, new HttpProblem("http-request-timeout"), true);
            res.once("finish", () => socket.destroy());
          } else res.destroy();
          // However the response went, the connection ends: the rest of the body is never read.
          setTimeout(() => socket.destroy(), 1000).unref();
        }, bodyTimeoutMs);
    deadline?.unref();
    if (!bodyDone)
      req.once("end", () => {
        bodyDone = true;
        clearTimeout(deadline);
      });
    res.on("close", () => {
      clearTimeout(deadline);
      if (!ended) abort.abort();
      // A body left unread (the response did not need it) cannot be skipped safely on this connection.
      if (!bodyDone) socket.destroy();
    });
    const url = requestUrl(req.url);
    if (!url) {
      ended = true;
      answerProblem(res, new HttpProblem("http-invalid-target"), true);
      return;
    }
    // TRACE, TRACK, CONNECT: a fetch Request cannot carry them (new Request throws), so no handler
    // sees them. One that says which methods a path has (createChatHandler's `allow`) gets its
    // 405 with Allow (404 off its paths); for any other, 501.
    if (UNCARRIED.has(method.toUpperCase())) {
      ended = true;
      const allowOf = (handler as { allow?: (path: string) => string | undefined }).allow;
      const allow = allowOf?.(url.pathname);
      // The connection closes after the answer: the request's body (if any) is never read.
      if (allow !== undefined) {
        const methods = allow.split(", ");
        answerProblem(
          res,
          new HttpProblem("http-method-not-allowed", { allow: methods, detail: `Use ${allow}.` }),
          true,
        );
      } else if (allowOf) answerProblem(res, new HttpProblem("http-not-found"), true);
      else answerProblem(res, new HttpProblem("http-not-implemented"), true);
      return;
    }
    void (async () => {
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      const onClose = () => void reader?.cancel().catch(() => {});
      try {
        const headers = new Headers();
        for (const [name, value] of Object.entries(req.headers)) {
          if (value === undefined) continue;
          for (const headerValue of Array.isArray(value) ? value : [value]) headers.append(name, headerValue);
        }
        const request = new Request(url, {
          method,
          headers,
          signal: abort.signal,
          ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
        } as RequestInit);
        const response = await handler(request);
        if (timedOut) {
          await response.body?.cancel().catch(() => {});
          return;
        }
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
        if (timedOut) return;
        if (!res.headersSent) {
          ended = true;
          answerProblem(res, new HttpProblem("http-internal", { detail: "The server failed to answer." }));
        } else {
          res.destroy();
        }
      }
    })();
  };
}

/**
 * The `node:http` server options bounding slow clients: `headersTimeout`, `requestTimeout`,
 * `keepAliveTimeout`, and a `connectionsCheckingInterval` short enough that they are enforced
 * near their time (Node checks them every 30 s by default). Spread into your own
 * `createServer(options, ...)` (or `https.createServer`) when not using `createChatServer`.
 */
export function chatServerOptions(options: ChatServerOptions = {}): ServerOptions {
  const headersTimeout = positive("headersTimeoutMs", options.headersTimeoutMs, DEFAULTS.headersTimeoutMs);
  const requestTimeout = positive("requestTimeoutMs", options.requestTimeoutMs, DEFAULTS.requestTimeoutMs);
  const keepAliveTimeout = positive("keepAliveTimeoutMs", options.keepAliveTimeoutMs, DEFAULTS.keepAliveTimeoutMs);
  if (headersTimeout > requestTimeout)
    throw new ConfigurationError(
      `headersTimeoutMs (${headersTimeout}) is longer than requestTimeoutMs (${requestTimeout})`,
      "the headers are part of the request: give requestTimeoutMs at least headersTimeoutMs",
    );
  return {
    headersTimeout,
    requestTimeout,
    keepAliveTimeout,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headersTimeout / 4))),
  };
}

/**
 * A `node:http` server serving `handler` (through `toNodeListener`) with every slow-client bound
 * set: headers within `headersTimeoutMs`, the body within `bodyTimeoutMs` of them, the whole
 * request within `requestTimeoutMs`. Not listening yet: call `listen` on it.
 */
export function createChatServer(
  handler: (request: Request) => Promise<Response>,
  options: ChatServerOptions = {},
): Server {
  return createServer(chatServerOptions(options), toNodeListener(handler, options));
}
