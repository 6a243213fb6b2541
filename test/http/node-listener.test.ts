/**
 * `toNodeListener` and `createChatServer` on a real `node:http` server on 127.0.0.1, spoken to
 * with raw sockets (issue 34, items 6 and 7): a request target is routed by its path as sent (a
 * scheme-relative `//evil.example/api/chats` is not `/api/chats`), and a client trickling its
 * headers or its body is cut off by the configured deadlines (small ones here; what is asserted
 * is that the server closed the connection, and what it answered, never how long it took).
 */
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { chatServerOptions, createChatServer, requestUrl, toNodeListener } from "../../src/runtime/http/node.js";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import { Gate, harness, readReply, userTurn } from "./setup.js";

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * Opens a raw connection, writes `head`, then `drip` every 20 ms (forever, if `drip` is given)
 * until the server closes the connection; resolves with everything the server sent.
 */
function rawExchange(port: number, head: string, drip?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let timer: ReturnType<typeof setInterval> | undefined;
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A write racing the server's close: the connection is closed all the same.
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error);
    });
    socket.on("close", () => {
      clearInterval(timer);
      resolve(received);
    });
    socket.write(head);
    if (drip !== undefined)
      timer = setInterval(() => {
        if (!socket.destroyed && socket.writable) socket.write(drip);
      }, 20);
  });
}

/** A complete request on a connection the client then closes: the server's whole answer. */
function rawRequest(port: number, target: string, extra = ""): Promise<string> {
  return rawExchange(
    port,
    `GET ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\nx-owner: ada\r\nconnection: close\r\n${extra}\r\n`,
  );
}

const status = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

describe("request targets", () => {
  it("a scheme-relative path is the path as sent: //evil.example/api/chats is a 404, /api/chats is the route", async () => {
    const { handler } = harness({ basePath: "/api" });
    const seen: string[] = [];
    const port = await listen(
      createChatServer(async (request) => {
        seen.push(request.url);
        return handler(request);
      }),
    );
    const evil = await rawRequest(port, "//evil.example/api/chats");
    expect(status(evil)).toBe(404);
    expect(evil).not.toContain('"chats"');
    expect(status(await rawRequest(port, "//evil.example/api/chats?x=1"))).toBe(404);
    expect(status(await rawRequest(port, "/api/chats"))).toBe(200);
    // The Host header (and the host of an absolute-form target) never makes the URL.
    expect(status(await rawRequest(port, "http://evil.example/api/chats"))).toBe(200);
    expect(seen).toEqual([
      "http://localhost//evil.example/api/chats",
      "http://localhost//evil.example/api/chats?x=1",
      "http://localhost/api/chats",
      "http://localhost/api/chats",
    ]);
  });

  it("a target that is not a path is a 400, before the handler", async () => {
    let calls = 0;
    const port = await listen(
      createServer(
        toNodeListener(async () => {
          calls++;
          return new Response("no");
        }),
      ),
    );
    const answer = await rawExchange(port, "OPTIONS * HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
    expect(status(answer)).toBe(400);
    expect(answer).toContain("urn:statebag:problem:invalid-request-target");
    expect(calls).toBe(0);
    expect(requestUrl("/a//b")?.pathname).toBe("/a//b");
    expect(requestUrl("//h/p")?.host).toBe("localhost");
    expect(requestUrl("mailto:x")).toBeUndefined();
  });
});

describe("slow clients", () => {
  it("headers trickled forever: the server closes the connection (headersTimeout)", async () => {
    const { handler } = harness();
    const port = await listen(createChatServer(handler, { headersTimeoutMs: 200, requestTimeoutMs: 400 }));
    const answer = await rawExchange(port, "GET /api/chats HTTP/1.1\r\nhost: 127.0.0.1\r\n", "x-slow: 1\r\n");
    // Node answers 408 to a request whose headers did not arrive in time, and closes the connection.
    expect(status(answer)).toBe(408);
  });

  it("a body trickled forever: 408 problem and the connection closed (the listener's own body deadline)", async () => {
    const { handler, store } = harness();
    // A plain server with Node's defaults: only toNodeListener's bodyTimeoutMs bounds the body.
    const port = await listen(createServer(toNodeListener(handler, { bodyTimeoutMs: 200 })));
    const head =
      "POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nx-owner: ada\r\ncontent-type: application/json\r\n" +
      'content-length: 100000\r\n\r\n{"id":"slow-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"';
    const answer = await rawExchange(port, head, "a");
    expect(status(answer)).toBe(408);
    expect(answer.toLowerCase()).toContain("connection: close");
    expect(answer).toContain("urn:statebag:problem:request-timeout");
    expect(answer).not.toContain("aaaa");
    // Nothing of the request was stored, and the chat is free for a request that arrives whole.
    expect(await store.get("ui-chat/slow-1")).toBeUndefined();
    const response = await fetch(`http://127.0.0.1:${port}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-owner": "ada" },
      body: JSON.stringify(userTurn("slow-1", "hello again")),
    });
    expect(response.status).toBe(200);
    const { message } = await readReply(response);
    expect(message.parts.some((p) => p.type === "text")).toBe(true);
  });

  it("createChatServer bounds the body too, and a streamed reply outlives requestTimeout", async () => {
    const { handler, client } = harness();
    const server = createChatServer(handler, { headersTimeoutMs: 100, requestTimeoutMs: 200, bodyTimeoutMs: 150 });
    const port = await listen(server);
    const head =
      "POST /api/chat HTTP/1.1\r\nhost: 127.0.0.1\r\nx-owner: ada\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{";
    const answer = await rawExchange(port, head, " ");
    expect(status(answer)).toBe(408);

    // The deadlines bound receiving the request, not the response: a reply still streaming after
    // them ends whole.
    const gate = (client.gate = new Gate());
    const response = await fetch(`http://127.0.0.1:${port}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-owner": "ada" },
      body: JSON.stringify(userTurn("long-1", "Tell me a story")),
    });
    expect(response.status).toBe(200);
    await gate.reachedPromise;
    await new Promise((resolve) => setTimeout(resolve, 600)); // past every deadline of this server
    gate.open();
    const { message, chunks } = await readReply(response);
    expect(chunks.at(-1)).toMatchObject({ type: "finish" });
    const text = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
    expect(text).toBe("Once upon a time there was a chat that was never saved.");
  });

  it("the options are checked: positive numbers, headers within the request", () => {
    expect(chatServerOptions()).toMatchObject({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
    });
    expect(() => chatServerOptions({ headersTimeoutMs: 0 })).toThrow(ConfigurationError);
    expect(() => chatServerOptions({ requestTimeoutMs: Number.NaN })).toThrow(/requestTimeoutMs must be a positive/);
    expect(() => chatServerOptions({ headersTimeoutMs: 5000, requestTimeoutMs: 1000 })).toThrow(/longer than/);
    expect(() => toNodeListener(async () => new Response(), { bodyTimeoutMs: -1 })).toThrow(ConfigurationError);
  });
});
