/**
 * `createChatHandler`: a Web-standard `(request: Request) => Promise<Response>` that AI SDK UI's
 * `useChat` talks to, over statebag sessions. Routes, under `basePath` (default `/api`):
 *
 *   POST   /chat              a turn: the AI SDK UI request; answers with the UI message stream (SSE)
 *   GET    /chat/:id/stream   the running turn's stream from its first chunk (useChat resume); 204 when none
 *   GET    /chat/:id/files/:hash  a file of the chat kept in the blob store (range requests: 206)
 *   POST   /chat/:id/stop     stops the running turn, keeping its partial answer
 *   GET    /chats             the owner's chats, newest first: { chats, cursor? } (?cursor=&limit=)
 *   GET    /chats/:id         the chat's history as UIMessage[]
 *   DELETE /chats/:id         deletes the chat (204)
 *   POST   /chats/:id/switch  makes the branch holding { messageId } active; the chat's messages
 *   POST   /chats/:id/fork    a new chat of the same owner up to { messageId }: 201 { id, forkedFrom }
 *
 * One function per route (post-chat.ts, resume-stream.ts, stop-chat.ts, list-chats.ts,
 * get-chat.ts, delete-chat.ts, get-file.ts); this file resolves the options, finds the route (own entries of a
 * table, never inherited names) and answers every error with the problem `toProblem` (problem.ts)
 * maps it to: an `application/problem+json` problem; a method a path does not have is a 405 with
 * `Allow`.
 */
import type { ChatClientAgent } from "../agent/agent.js";
import { ConfigurationError } from "../core/errors.js";
import { tracingOf } from "../core/tracing-hooks.js";
import type { StreamBuffer } from "../stores/stream-buffer.js";
import type { SessionStore } from "../stores/types.js";
import { chatNotFound } from "./chat-error.js";
import { DEFAULT_FILE_TYPES } from "./ai-sdk-ui.js";
import { ChatSessions } from "./chat-flow.js";
import { forkChat, switchBranch } from "./chat-branches.js";
import { deleteChat } from "./delete-chat.js";
import { getChat } from "./get-chat.js";
import { getFile } from "./get-file.js";
import { listChats } from "./list-chats.js";
import { postChat } from "./post-chat.js";
import { HttpProblem, problemResponse, toProblem } from "./problem.js";
import type { Route, RouteContext } from "./request.js";
import { resumeStream } from "./resume-stream.js";
import { stopChat } from "./stop-chat.js";

export interface ChatHandlerOptions {
  agent: ChatClientAgent;
  /**
   * Where chats are kept: each chat is a session owned by its user (`meta.owner`), so
   * `eraseOwner`, retention, `list` and encryption cover it. Its `streams` buffer the running
   * turns (resume, stop, recovery, from any process).
   */
  store: SessionStore;
  /**
   * Who is asking: your authentication, from the request (a verified session cookie, a token).
   * Throwing (or returning an empty string) answers 401. Chats are kept per owner.
   */
  owner: (request: Request) => string | Promise<string>;
  /** Path the routes live under. Default `"/api"`. */
  basePath?: string;
  /**
   * Largest request body, in bytes, checked before parsing. Default 1 MiB plus room for
   * `maxFiles` files of `maxFileBytes` sent as base64 data: URLs.
   */
  maxBodyBytes?: number;
  /** Characters of text in one user message. Default 32,000. */
  maxMessageChars?: number;
  /**
   * Bytes of one file attached to a user message (an AI SDK UI `file` part with a `data:` URL).
   * A larger one is a 413 `file-too-large`, and nothing of the message is saved. Default 5 MiB.
   */
  maxFileBytes?: number;
  /** Files in one user message. Default 4. */
  maxFiles?: number;
  /**
   * Media types a file may have: exact (`image/png`) or a top-level type (`image/*`). Another is a
   * 415 `file-type-not-allowed`. Default: PNG, JPEG, GIF and WebP images, PDF and plain text.
   */
  fileTypes?: readonly string[];
  /**
   * Files from this size up go to the store's blob store (`store.blobs`) and the chat keeps a
   * reference; smaller ones stay inline in the message. Default 4096 bytes.
   */
  blobThresholdBytes?: number;
  /** Longest owner string. Default 256. */
  maxOwnerLength?: number;
  /** Default page size of GET /chats (the client may ask for up to 100). Default 20. */
  pageSize?: number;
  /** Time to live of every saved chat revision, in ms. Default: kept until deleted. */
  ttlMs?: number;
  /** Prefix of the store ids of chats (`<idPrefix>/<chat id>`). Default `"ui-chat"`. */
  idPrefix?: string;
  /**
   * What a client that goes away mid-reply does. `"continue"` (default): nothing; the turn runs to
   * its end and is committed, and a reload resumes it. `"abort"`: the model call is aborted and
   * nothing of the turn is kept (not even the user's message), as in statebag 0.1.
   */
  disconnect?: "continue" | "abort";
  /**
   * The lease of a running turn, in ms: renewed every third of it by the process running the turn;
   * once it passes (that process died), any process touching the chat ends the turn as
   * interrupted and frees the chat. Default 15,000.
   */
  leaseMs?: number;
  /** How long a finished turn's stream stays readable, in ms. Default 10 minutes. */
  streamKeepMs?: number;
  /** How long `POST /chat/:id/stop` waits for the stopped turn's commit before answering 202. Default 10,000. */
  stopWaitMs?: number;
  /**
   * The stream buffer, when not the store's own `store.streams`. The store cannot see the turns
   * recorded here: pass it to the blob sweep and to retention too (`sweepOwnerBlobs(store, owner,
   * { streams: [buffer] })`, `purgeRetention(store, policy, { streams: [buffer] })`), or a file of a
   * turn whose commit failed is deleted once older than the sweep's grace window. `purgeExpired()` and
   * `statebag store purge` read only `store.streams`.
   */
  streams?: StreamBuffer;
  /**
   * Called with every unexpected error (a 500, or a failure inside a stream or a background turn)
   * so the app can log it. Nothing is logged otherwise; the client sees only a problem without details.
   */
  onError?: (error: unknown, request?: Request) => void;
}

export interface ChatHandler {
  (request: Request): Promise<Response>;
  /**
   * The methods a path has (the `Allow` of a 405), undefined for a path the handler does not
   * serve: for server adapters answering methods a fetch `Request` cannot carry (TRACE), as
   * `toNodeListener` does.
   */
  allow(path: string): string | undefined;
  /**
   * Resolves once no turn this handler started is running: each committed (or ended) and its
   * stream finished. For a graceful shutdown: stop accepting requests, `await handler.idle()`
   * (bounded by how long you can wait: a turn left running is recovered by another process once
   * its lease passes), then close the store. Closing the store first fails the turns' last writes.
   */
  idle(): Promise<void>;
}

/** A path's routes, by method (a Map: a method name from a request never reaches an inherited member). */
type Methods = ReadonlyMap<string, { operation: string; route: Route }>;

const CHAT: Methods = new Map([["POST", { operation: "send", route: postChat }]]);
const CHAT_STREAM: Methods = new Map([["GET", { operation: "resume", route: resumeStream }]]);
const CHAT_STOP: Methods = new Map([["POST", { operation: "stop", route: stopChat }]]);
const CHAT_FILE: Methods = new Map([["GET", { operation: "file", route: getFile }]]);
const CHATS: Methods = new Map([["GET", { operation: "list", route: listChats }]]);
const CHAT_SWITCH: Methods = new Map([["POST", { operation: "switch", route: switchBranch }]]);
const CHAT_FORK: Methods = new Map([["POST", { operation: "fork", route: forkChat }]]);
const ONE_CHAT: Methods = new Map([
  ["GET", { operation: "get", route: getChat }],
  ["DELETE", { operation: "delete", route: deleteChat }],
]);

export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  const base = (options.basePath ?? "/api").replace(/\/+$/, "");
  const context = routeContext(options, base);
  const handler = async (request: Request): Promise<Response> => {
    try {
      return await dispatch(context, base, options.store, request);
    } catch (error) {
      const problem = toProblem(error, request.method);
      if (problem.status >= 500) options.onError?.(error, request);
      return problemResponse(problem);
    }
  };
  const allow = (path: string): string | undefined => {
    const found = matchPath(base, path);
    return found ? [...found.methods.keys()].join(", ") : undefined;
  };
  return Object.assign(handler, { allow, idle: () => context.chats.idle() });
}

/** The options, checked and resolved, as every route sees them. */
function routeContext(options: ChatHandlerOptions, base: string): RouteContext {
  const maxFileBytes = positive("maxFileBytes", options.maxFileBytes, 5 * 1024 * 1024);
  const maxFiles = options.maxFiles ?? 4;
  if (!Number.isSafeInteger(maxFiles) || maxFiles < 0)
    throw new ConfigurationError(`maxFiles must be a whole number from 0, got ${maxFiles}`);
  if (
    options.fileTypes !== undefined &&
    !options.fileTypes.every((t) => typeof t === "string" && /^[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+)$/i.test(t))
  )
    throw new ConfigurationError(
      "fileTypes must be media types such as image/png or image/*",
      'list the media types a file may have, e.g. ["image/*", "application/pdf"]',
    );
  return {
    chats: new ChatSessions({
      agent: options.agent,
      store: options.store,
      idPrefix: options.idPrefix,
      ttlMs: options.ttlMs,
      streams: options.streams,
      leaseMs: positive("leaseMs", options.leaseMs, 15_000),
      streamKeepMs: positive("streamKeepMs", options.streamKeepMs, 10 * 60_000),
      disconnect: options.disconnect,
      onError: options.onError ? (error) => options.onError?.(error) : undefined,
      ...(options.blobThresholdBytes !== undefined ? { blobThresholdBytes: options.blobThresholdBytes } : {}),
    }),
    owner: options.owner,
    basePath: base,
    maxBodyBytes: positive(
      "maxBodyBytes",
      options.maxBodyBytes,
      1024 * 1024 + Math.ceil((maxFileBytes * 4) / 3) * maxFiles,
    ),
    maxOwnerLength: options.maxOwnerLength ?? 256,
    pageSize: options.pageSize ?? 20,
    limits: {
      maxMessageChars: options.maxMessageChars ?? 32_000,
      maxAnswers: 32,
      maxFileBytes,
      maxFiles,
      fileTypes: options.fileTypes ? [...options.fileTypes] : DEFAULT_FILE_TYPES,
    },
    stopWaitMs: positive("stopWaitMs", options.stopWaitMs, 10_000),
    onError: options.onError,
  };
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isFinite(resolved) || resolved <= 0)
    throw new ConfigurationError(`${name} must be a positive number, got ${resolved}`);
  return resolved;
}

/**
 * The routes of a path and the chat id in it; undefined for a path the handler does not serve,
 * null for a chat path whose id does not decode (no such chat).
 */
function matchPath(base: string, path: string): { methods: Methods; id?: string } | undefined | null {
  if (path === `${base}/chat`) return { methods: CHAT };
  if (path === `${base}/chats`) return { methods: CHATS };
  const prefix = path.startsWith(`${base}/chats/`) ? "chats" : path.startsWith(`${base}/chat/`) ? "chat" : undefined;
  if (prefix === undefined) return undefined;
  const rest = path.slice(base.length + prefix.length + 2).split("/");
  let id: string;
  try {
    id = decodeURIComponent(rest[0]);
  } catch {
    return null;
  }
  if (prefix === "chats") {
    if (rest.length === 1) return { methods: ONE_CHAT, id };
    if (rest.length === 2 && rest[1] === "switch") return { methods: CHAT_SWITCH, id };
    if (rest.length === 2 && rest[1] === "fork") return { methods: CHAT_FORK, id };
    return undefined;
  }
  if (rest.length === 3 && rest[1] === "files" && rest[2] !== "") return { methods: CHAT_FILE, id };
  if (rest.length !== 2) return undefined;
  if (rest[1] === "stream") return { methods: CHAT_STREAM, id };
  if (rest[1] === "stop") return { methods: CHAT_STOP, id };
  return undefined;
}

/** Runs the request's route (under a span naming the chat operation, when the store is traced). */
async function dispatch(context: RouteContext, base: string, store: SessionStore, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const found = matchPath(base, url.pathname);
  if (found === null) throw chatNotFound();
  if (found === undefined) throw new HttpProblem("http-not-found");
  const handle = found.methods.get(request.method);
  if (!handle) {
    const allow = [...found.methods.keys()];
    throw new HttpProblem("http-method-not-allowed", { allow, detail: `Use ${allow.join(", ")}.` });
  }
  const run = () => handle.route(context, request, url, found.id);
  const tracing = tracingOf(store);
  if (!tracing?.chat) return run();
  const id = found.id === undefined ? undefined : context.chats.storageId(found.id);
  return tracing.chat(handle.operation, id, run);
}
