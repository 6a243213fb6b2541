/**
 * `createChatHandler`: a Web-standard `(request: Request) => Promise<Response>` that AI SDK UI's
 * `useChat` talks to, over statebag sessions. Routes, under `basePath` (default `/api`):
 *
 *   POST   /chat         a turn: the AI SDK UI request; answers with the UI message stream (SSE)
 *   GET    /chats        the owner's chats, newest first: { chats, cursor? } (?cursor=&limit=)
 *   GET    /chats/:id    the chat's history as UIMessage[]
 *   DELETE /chats/:id    deletes the chat (204)
 *
 * Every error is an `application/problem+json` problem. The session flow (chat-flow.ts) knows
 * nothing of the wire format; this file and ui-message-stream.ts are the AI SDK UI adapter.
 */
import type { ChatClientAgent } from "../agent/agent.js";
import { ToolApprovalError } from "../agent/approvals.js";
import { ModelServiceError } from "../agent/clients/model-service-error.js";
import { StatebagError } from "../core/errors.js";
import { JsonParseError, parseJson } from "../persistence/safe-json.js";
import { ConflictError, InvalidIdError, StoreUnavailableError } from "../stores/errors.js";
import type { SessionStore } from "../stores/types.js";
import { checkChatId, parseUIChatRequest } from "./ai-sdk-ui.js";
import { InvalidCursorError, type ChatIndex } from "./chat-index.js";
import { ChatSessions } from "./chat-flow.js";
import { HttpProblem, problemResponse } from "./problem.js";
import { toUIMessages } from "../ui-messages/to-ui.js";
import { SSE_DONE, sseEvent, UI_MESSAGE_STREAM_HEADERS, UIMessageStreamEncoder } from "./ui-message-stream.js";

export interface ChatHandlerOptions {
  agent: ChatClientAgent;
  store: SessionStore;
  /**
   * Who is asking: your authentication, from the request (a verified session cookie, a token).
   * Throwing (or returning an empty string) answers 401. Chats are kept per owner.
   */
  owner: (request: Request) => string | Promise<string>;
  /** Path the routes live under. Default `"/api"`. */
  basePath?: string;
  /** Largest request body, in bytes, checked before parsing. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Characters of text in one user message. Default 32,000. */
  maxMessageChars?: number;
  /** Longest owner string. Default 256. */
  maxOwnerLength?: number;
  /** Default page size of GET /chats (the client may ask for up to 100). Default 20. */
  pageSize?: number;
  /** Time to live of every saved chat revision, in ms. Default: kept until deleted. */
  ttlMs?: number;
  /** Prefix of the store ids of chats and index documents. Default `"ui-chat"`. */
  idPrefix?: string;
  /** The owner's chat list. Default: one index document per owner in `store`. */
  index?: ChatIndex;
  /**
   * Called with every unexpected error (a 500, or a failure inside a stream) so the app can log
   * it. Nothing is logged otherwise; the client sees only a problem without details.
   */
  onError?: (error: unknown, request: Request) => void;
}

export type ChatHandler = (request: Request) => Promise<Response>;

const MAX_DEPTH = 64;

export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  const base = (options.basePath ?? "/api").replace(/\/+$/, "");
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxOwnerLength = options.maxOwnerLength ?? 256;
  const pageSize = options.pageSize ?? 20;
  const limits = { maxMessageChars: options.maxMessageChars ?? 32_000, maxAnswers: 32 };
  const chats = new ChatSessions({
    agent: options.agent,
    store: options.store,
    idPrefix: options.idPrefix,
    index: options.index,
    ttlMs: options.ttlMs,
  });

  async function ownerOf(request: Request): Promise<string> {
    let owner: unknown;
    try {
      owner = await options.owner(request);
    } catch {
      owner = undefined;
    }
    if (typeof owner !== "string" || owner.length === 0 || owner.length > maxOwnerLength) {
      throw new HttpProblem(401, "unauthenticated", "Unauthenticated", "The request does not say who is asking.");
    }
    return owner;
  }

  async function readJson(request: Request): Promise<unknown> {
    const type = request.headers.get("content-type") ?? "";
    if (!/^application\/json\s*(;|$)/i.test(type))
      throw new HttpProblem(
        415,
        "unsupported-media-type",
        "Unsupported media type",
        "Send the body as application/json.",
      );
    const tooLarge = () =>
      new HttpProblem(413, "body-too-large", "Body too large", `The body is larger than ${maxBodyBytes} bytes.`);
    const declared = Number(request.headers.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > maxBodyBytes) throw tooLarge();
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (request.body) {
      const reader = request.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBodyBytes) {
          await reader.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
    }
    const bytes = Buffer.concat(chunks);
    try {
      return parseJson(bytes, { maxBytes: maxBodyBytes, maxDepth: MAX_DEPTH, maxKeys: 10_000, protoKeys: "reject" });
    } catch (error) {
      if (error instanceof JsonParseError) {
        const detail =
          error.code === "json-too-deep"
            ? `The body is nested deeper than ${MAX_DEPTH} levels.`
            : error.code === "json-too-many-keys"
              ? "An object of the body has too many keys."
              : error.code === "json-too-large"
                ? `The body is larger than ${maxBodyBytes} bytes.`
                : error.code === "json-duplicate-key"
                  ? "An object of the body has the same key twice."
                  : error.code === "json-proto-key"
                    ? 'The body contains a "__proto__" key.'
                    : "The body is not valid JSON.";
        throw new HttpProblem(error.code === "json-too-large" ? 413 : 400, "invalid-json", "Invalid JSON", detail);
      }
      throw error;
    }
  }

  async function postChat(request: Request): Promise<Response> {
    const owner = await ownerOf(request);
    const { chatId, input } = parseUIChatRequest(await readJson(request), limits);
    const turn = await chats.begin(owner, chatId, input);
    const abort = new AbortController();
    const onAbort = () => abort.abort(new StatebagError("stream-abandoned", "the client went away"));
    request.signal.addEventListener("abort", onAbort, { once: true });
    let open = true;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const send = (bytes: Uint8Array) => {
          if (open) controller.enqueue(bytes);
        };
        const encoder = new UIMessageStreamEncoder((chunk) => send(sseEvent(chunk)));
        encoder.begin();
        void turn
          .run(encoder, abort.signal)
          .then(
            () => encoder.finish(),
            (error: unknown) => {
              if (abort.signal.aborted) return; // the client left: nothing was committed, nobody to tell
              options.onError?.(error, request);
              encoder.fail(streamErrorText(error));
            },
          )
          .finally(() => {
            request.signal.removeEventListener("abort", onAbort);
            send(SSE_DONE);
            if (open) controller.close();
            open = false;
          });
      },
      cancel() {
        open = false;
        onAbort();
      },
    });
    return new Response(body, { status: 200, headers: UI_MESSAGE_STREAM_HEADERS });
  }

  async function listChats(request: Request, url: URL): Promise<Response> {
    const owner = await ownerOf(request);
    const limitText = url.searchParams.get("limit");
    const limit = limitText === null ? pageSize : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new HttpProblem(400, "invalid-request", "Invalid request", "limit must be an integer from 1 to 100.");
    const cursor = url.searchParams.get("cursor") ?? undefined;
    try {
      return json(200, await chats.index.list(owner, { cursor, limit }));
    } catch (error) {
      if (error instanceof InvalidCursorError)
        throw new HttpProblem(400, "invalid-cursor", "Invalid cursor", "The cursor is not one this server gave out.");
      throw error;
    }
  }

  async function getChat(request: Request, id: string): Promise<Response> {
    const owner = await ownerOf(request);
    const session = await chats.load(owner, checkChatId(id));
    if (!session) throw notFound();
    return json(200, toUIMessages(session));
  }

  async function deleteChat(request: Request, id: string): Promise<Response> {
    const owner = await ownerOf(request);
    if (!(await chats.delete(owner, checkChatId(id)))) throw notFound();
    return new Response(null, { status: 204 });
  }

  async function route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const path = url.pathname;
    if (path === `${base}/chat`) {
      if (request.method !== "POST") throw methodNotAllowed("POST");
      return postChat(request);
    }
    if (path === `${base}/chats`) {
      if (request.method !== "GET") throw methodNotAllowed("GET");
      return listChats(request, url);
    }
    if (path.startsWith(`${base}/chats/`)) {
      let id: string;
      try {
        id = decodeURIComponent(path.slice(base.length + "/chats/".length));
      } catch {
        throw notFound();
      }
      if (request.method === "GET") return getChat(request, id);
      if (request.method === "DELETE") return deleteChat(request, id);
      throw methodNotAllowed("GET, DELETE");
    }
    throw new HttpProblem(404, "not-found", "Not found", "There is nothing at this path.");
  }

  return async (request) => {
    try {
      return await route(request);
    } catch (error) {
      const problem = toProblem(error);
      if (problem.status >= 500) options.onError?.(error, request);
      return problemResponse(
        problem,
        problem.status === 405 ? { allow: problem.detail.replace(/^Use /, "").replace(/\.$/, "") } : {},
      );
    }
  };
}

function json(status: number, value: unknown): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

const notFound = () => new HttpProblem(404, "chat-not-found", "Chat not found", "There is no chat with this id.");
const methodNotAllowed = (allow: string) =>
  new HttpProblem(405, "method-not-allowed", "Method not allowed", `Use ${allow}.`);

/** Maps an error to the problem the client sees: only what is safe to show. */
export function toProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  if (error instanceof ConflictError)
    return new HttpProblem(
      409,
      "chat-conflict",
      "Chat changed",
      "This chat was changed by another request at the same time; nothing of this request was saved. Reload and try again.",
    );
  if (error instanceof ToolApprovalError) {
    if (error.code === "tool-approval-invalid")
      return new HttpProblem(400, "tool-approval-invalid", "Invalid approval", "The approval answer is incomplete.");
    if (error.code === "tool-approval-not-found")
      return new HttpProblem(
        409,
        "tool-approval-not-pending",
        "Approval not pending",
        "The approval answered is not waiting in this chat.",
      );
    return new HttpProblem(
      409,
      error.code,
      "Approval conflict",
      "This approval was answered by another request; reload the chat to see the result.",
    );
  }
  if (error instanceof InvalidIdError)
    return new HttpProblem(400, "invalid-id", "Invalid id", "The id is not a valid chat id.");
  if (error instanceof StoreUnavailableError)
    return new HttpProblem(
      503,
      "store-unavailable",
      "Store unavailable",
      "The session store cannot be reached; try again later.",
    );
  if (error instanceof ModelServiceError)
    return new HttpProblem(
      502,
      "model-service",
      "Model service failed",
      "The model service failed; nothing was saved. Try again later.",
    );
  return new HttpProblem(500, "internal", "Internal error", "The server failed to answer; nothing was saved.");
}

/** The `errorText` of a stream that failed after it started. */
function streamErrorText(error: unknown): string {
  const problem = toProblem(error);
  return problem.status === 500 ? "The reply failed; nothing of this turn was saved." : problem.detail;
}
