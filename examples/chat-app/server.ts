/**
 * `npm run chat`: a chat page (React, AI SDK UI's `useChat`) on statebag sessions.
 *
 *   - server.ts (this file): a node:http server on `createChatHandler` (statebag/http) plus the page,
 *     its favicon, and `POST /api/erase` (an erasure request: `store.eraseOwner` for the caller).
 *   - client/app.tsx: the page, bundled by esbuild when the server starts (no network, no CDN).
 *
 * A reply runs on the server to its end whoever listens: reload the page mid-reply and it continues
 * (useChat's `resume`); Stop ends it and keeps what was written, marked "stopped".
 *
 * The model: OpenAIChatClient when OPENAI_API_KEY or STATEBAG_MODEL is set, else the offline
 * ScriptedChatClient, slowed to a readable pace. STATEBAG_MODEL is `[chat:|responses:]<model>` or
 * `[chat:|responses:]<baseURL>#<model>`: the prefix picks OpenAI's API (Chat Completions by default,
 * `responses:` the Responses API). Tools: get_weather, and send_email, which waits for your
 * approval in the page. Listens on 127.0.0.1, port $PORT or a free one; STATEBAG_STORE picks the
 * store (default SQLite ./.statebag/sessions.db).
 *
 * This folder is a small app of its own: package.json declares what it uses (statebag; react,
 * react-dom, @ai-sdk/react and ai for the page; openai and better-sqlite3 for the real model and
 * the default store; esbuild and tsx to build and run). Copied out, `npm install && npm start`.
 * In this repository `npm run chat` runs it from the root: the packages resolve from the root's
 * node_modules, and `statebag` to the sources through tsconfig.json paths.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  ChatClientAgent,
  type AITool,
  type ChatClient,
  type ChatOptions,
  type ChatResponseUpdate,
} from "statebag/agent";
import { chatServerOptions, createChatHandler, toNodeListener } from "statebag/http";
import { OpenAIChatClient } from "statebag/openai";
import { openStore, type SessionStore } from "statebag/stores";
import { ScriptedChatClient } from "statebag/testing";
import type { ChatMessage } from "statebag";

const HERE = dirname(fileURLToPath(import.meta.url));

export const weatherTool: AITool = {
  name: "get_weather",
  description: "Current weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: ({ city }) => ({ city, celsius: 12 + ((String(city).length * 7) % 15), conditions: "sunny" }),
};

/** Sending an email needs a person's approval: the run stops until the page answers. */
export const emailTool: AITool = {
  name: "send_email",
  description: "Send an email",
  parameters: {
    type: "object",
    properties: { to: { type: "string" }, subject: { type: "string" } },
    required: ["to", "subject"],
  },
  requiresApproval: true,
  execute: ({ to, subject }, { callId }) => ({ sent: true, to, subject, messageId: `mail-${callId}` }),
};

/** The offline model: scripted answers, streamed a word at a time with a pause, as a real one would. */
class PacedClient implements ChatClient {
  constructor(
    private readonly inner: ChatClient,
    private readonly pauseMs: number,
  ) {}
  get metadata() {
    return this.inner.metadata;
  }
  getResponse(messages: readonly ChatMessage[], options?: ChatOptions) {
    return this.inner.getResponse(messages, options);
  }
  async *getStreamingResponse(
    messages: readonly ChatMessage[],
    options: ChatOptions = {},
  ): AsyncIterable<ChatResponseUpdate> {
    for await (const update of this.inner.getStreamingResponse(messages, options)) {
      await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
      options.signal?.throwIfAborted();
      yield update;
    }
  }
}

export function scriptedClient(pauseMs = 40): ChatClient {
  return new PacedClient(
    new ScriptedChatClient({
      rules: [
        {
          when: /weather in (\w+)/i,
          reply: (ctx) => ({
            toolCall: { name: "get_weather", arguments: { city: /weather in (\w+)/i.exec(ctx.text)![1] } },
          }),
        },
        {
          when: /email (\S+@\S+)/i,
          reply: (ctx) => ({
            toolCall: {
              name: "send_email",
              arguments: { to: /email (\S+@\S+)/i.exec(ctx.text)![1], subject: "Hello from statebag" },
            },
          }),
        },
        {
          when: /story/i,
          reply: Array.from({ length: 120 }, (_, i) => `Once${i ? " more" : ""} upon a time, sentence ${i + 1}.`).join(
            " ",
          ),
        },
      ],
    }),
    pauseMs,
  );
}

/**
 * A real model when the environment names one, as in examples/demo.ts: STATEBAG_MODEL is
 * `[chat:|responses:]<model>` (OpenAI, with OPENAI_API_KEY) or `[chat:|responses:]<baseURL>#<model>`
 * (an OpenAI-compatible server). `responses:` talks to the Responses API, `chat:` (the default) to
 * Chat Completions; chats are local sessions either way (the server sends the history).
 */
export function realModel(env: NodeJS.ProcessEnv = process.env): OpenAIChatClient | undefined {
  let spec = env.STATEBAG_MODEL?.trim() ?? "";
  const picked = /^(chat|responses):(?!\/\/)/.exec(spec);
  const api = picked?.[1] === "responses" ? "responses" : "chat";
  if (picked) spec = spec.slice(picked[0].length);
  if (/^https?:\/\//.test(spec)) {
    const [baseURL, model] = spec.split("#");
    return new OpenAIChatClient({
      api,
      baseURL,
      model: model || "llama3.2",
      apiKey: env.OPENAI_API_KEY || "not-needed",
      providerName: "openai-compatible",
    });
  }
  if (env.OPENAI_API_KEY)
    return new OpenAIChatClient({
      api,
      model: spec || "gpt-4.1-mini",
      apiKey: env.OPENAI_API_KEY,
      baseURL: env.OPENAI_BASE_URL || undefined,
    });
  return undefined;
}

/**
 * The page's icon, drawn here (no binary file to ship): a 16x16 ICO of one 32-bit bitmap, a blue
 * rounded square with a white speech bubble. Served at /favicon.ico, where browsers look.
 */
export function favicon(): Buffer {
  const size = 16;
  const pixels = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const cx = x + 0.5;
      const cy = y + 0.5;
      // Rounded square: inside unless in a corner farther than 4 px from the corner circle's centre.
      const dx = Math.max(4 - cx, cx - 12, 0);
      const dy = Math.max(4 - cy, cy - 12, 0);
      const inside = dx * dx + dy * dy <= 16;
      // The bubble: an ellipse, and its tail at the lower left.
      const bubble =
        ((cx - 8) / 5) ** 2 + ((cy - 7) / 3.6) ** 2 <= 1 || (cx >= 4.5 && cx <= 7 && cy >= 9 && cy <= 13 - (cx - 4.5));
      const [r, g, b, a] = !inside ? [0, 0, 0, 0] : bubble ? [255, 255, 255, 255] : [0x2f, 0x5b, 0xea, 255];
      // Bitmap rows go bottom up, in BGRA order.
      const at = ((size - 1 - y) * size + x) * 4;
      pixels.set([b, g, r, a], at);
    }
  }
  const mask = Buffer.alloc(size * 4); // the AND mask: all zero, alpha decides
  const header = Buffer.alloc(6 + 16 + 40);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // an icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(size, 6);
  header.writeUInt8(size, 7);
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(40 + pixels.length + mask.length, 14);
  header.writeUInt32LE(22, 18); // where the image starts
  header.writeUInt32LE(40, 22); // BITMAPINFOHEADER
  header.writeInt32LE(size, 26);
  header.writeInt32LE(size * 2, 30); // the image and its mask
  header.writeUInt16LE(1, 34);
  header.writeUInt16LE(32, 36);
  header.writeUInt32LE(pixels.length + mask.length, 42);
  return Buffer.concat([header, pixels, mask]);
}

/** The demo's owner: a cookie the page sets once. Use your authentication's verified user id instead. */
export function ownerOf(cookie: string | undefined): string {
  return /(?:^|;\s*)owner=([A-Za-z0-9_-]{1,64})/.exec(cookie ?? "")?.[1] ?? "";
}

/** Bundles client/app.tsx with esbuild's command line into a fresh temporary folder; returns the script. */
export async function bundleClient(): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), "statebag-chat-app-"));
  try {
    // esbuild is a build tool here, run as its CLI (found next to the app's node_modules).
    const esbuildBin = join(dirname(createRequire(import.meta.url).resolve("esbuild/package.json")), "bin", "esbuild");
    await promisify(execFile)(esbuildBin, [
      join(HERE, "client", "app.tsx"),
      "--bundle",
      "--format=esm",
      "--jsx=automatic",
      "--minify",
      "--log-level=warning",
      '--define:process.env.NODE_ENV="production"',
      `--outfile=${join(out, "app.js")}`,
    ]);
    return readFileSync(join(out, "app.js"), "utf8");
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>statebag chat</title><link rel="icon" href="/favicon.ico"><link rel="stylesheet" href="/app.css"></head>
<body><div id="root"></div><script type="module" src="/app.js"></script></body></html>`;

export interface ChatApp {
  url: string;
  server: Server;
  store: SessionStore;
  close(): Promise<void>;
}

/**
 * Starts the app. The owner is a cookie the page sets once (a demo stand-in for your login: use
 * your authentication's verified user id).
 */
export async function startChatApp(
  options: { client?: ChatClient; store?: SessionStore; port?: number } = {},
): Promise<ChatApp> {
  const store = options.store ?? (await openStore(process.env.STATEBAG_STORE || undefined));
  await store.setup();
  const agent = new ChatClientAgent({
    client: options.client ?? realModel() ?? scriptedClient(),
    name: "chat-app",
    instructions: "You are a concise assistant. Use get_weather for the weather and send_email to send emails.",
    tools: [weatherTool, emailTool],
  });
  const handler = createChatHandler({
    agent,
    store,
    owner: (request) => ownerOf(request.headers.get("cookie") ?? undefined),
    // String(error): the name and message, and a statebag error's hint on the next line.
    onError: (error) => process.stderr.write(`chat-app: ${error instanceof Error ? String(error) : "error"}\n`),
  });
  const script = await bundleClient();
  const css = readFileSync(join(HERE, "client", "app.css"), "utf8");
  const icon = favicon();
  const api = toNodeListener(handler);
  const problem = (res: ServerResponse, status: number, slug: string, title: string, detail: string) => {
    res.writeHead(status, { "content-type": "application/problem+json", "cache-control": "no-store" });
    res.end(JSON.stringify({ type: `urn:statebag:problem:${slug}`, title, status, detail }));
  };
  // The API's bounded request timeouts (headers, whole request; the body deadline is toNodeListener's),
  // not Node's defaults: the example serves its pages too, so it builds the server itself.
  const server = createServer(chatServerOptions(), (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/api/erase") {
      if (req.method !== "POST") {
        res.setHeader("allow", "POST");
        return problem(res, 405, "method-not-allowed", "Method not allowed", "Use POST.");
      }
      // A JSON request, as statebag/http's stop route asks: a page of another site cannot send one
      // without the browser asking first (and the owner cookie is SameSite=Strict besides).
      if (!/^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? ""))
        return problem(res, 415, "unsupported-media-type", "Unsupported media type", "Send a JSON request.");
      const owner = ownerOf(req.headers.cookie);
      if (!owner) return problem(res, 401, "unauthenticated", "Not signed in", "There is no owner to erase.");
      // An erasure request: every chat of the owner with its message logs and reply streams. The
      // receipt names the owner by its SHA-256 only: keep it as the record of the request.
      store.eraseOwner(owner).then(
        (receipt) => {
          res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
          res.end(JSON.stringify(receipt));
        },
        (error: unknown) => {
          process.stderr.write(`chat-app: erase failed: ${error instanceof Error ? error.message : "error"}\n`);
          problem(res, 503, "erase-failed", "Erasure not finished", "The erasure did not finish; send it again.");
        },
      );
      return;
    }
    if (path.startsWith("/api/")) return api(req, res);
    if (path === "/favicon.ico" && req.method === "GET") {
      res.writeHead(200, { "content-type": "image/x-icon", "cache-control": "max-age=86400" });
      res.end(icon);
      return;
    }
    const asset =
      path === "/app.js"
        ? ["text/javascript", script]
        : path === "/app.css"
          ? ["text/css", css]
          : path === "/" || /^\/c\/[A-Za-z0-9_-]+$/.test(path)
            ? ["text/html", PAGE]
            : undefined;
    if (!asset || req.method !== "GET")
      return problem(res, 404, "not-found", "Not found", "There is nothing at this path.");
    res.writeHead(200, { "content-type": `${asset[0]}; charset=utf-8`, "cache-control": "no-store" });
    res.end(asset[1]);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    store,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // The turns still running commit before the store closes (up to 10 s: one left running then
      // is recovered, once its lease passes, by the next process that opens the chat).
      await Promise.race([handler.idle(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      if (!options.store) await store.close();
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const real = realModel();
  const app = await startChatApp({ port: process.env.PORT ? Number(process.env.PORT) : 0 });
  process.stdout.write(`statebag chat: ${app.url}\n`);
  process.stdout.write(
    `model: ${real ? `${real.metadata.providerName} ${real.model} (${real.api === "responses" ? "Responses API" : "Chat Completions"})` : "offline ScriptedChatClient (set OPENAI_API_KEY or STATEBAG_MODEL for a real one)"}; store: ${app.store.url}\n`,
  );
  process.stdout.write(
    `try: "What's the weather in Lisbon?", "Please email ada@example.com", "Tell me a story" (reload or press Stop while it streams)\n`,
  );
  const stop = () => void app.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
