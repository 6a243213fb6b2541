/**
 * Every error the HTTP layer answers is a JSON problem (RFC 9457, `application/problem+json`):
 * `type`, `title`, `status`, `detail`. Never a stack trace, never the raw input echoed back, never
 * a secret. One table (`PROBLEMS`) says which problem each error `code` answers, with a fixed
 * detail, and one function (`toProblem`) turns any thrown value into its problem: the store's
 * errors, the session flow's `ChatError`s and the request checks' own problems alike. The detail
 * a client reads is written here or by the check that refused the request, never copied from
 * another error's message (those name tables, keys and commands for operators: they go to
 * `onError`, as the problem's `cause`).
 */
import { StatebagError, type StatebagErrorCode } from "../core/errors.js";

/** The detail of a problem: one sentence, or one for reads (GET) and one for requests that change things. */
type Detail = string | { read: string; write: string };

interface ProblemKind {
  status: number;
  /** A short slug; the problem's `type` is `urn:statebag:problem:<slug>`. */
  slug: string;
  title: string;
  detail: Detail;
}

const STORE_NOT_READY: ProblemKind = {
  status: 503,
  slug: "store-not-ready",
  title: "Store not ready",
  detail: {
    read: "The chat store is not ready for this server (its setup or a migration is unfinished); the operator has to finish it. Try again later.",
    write:
      "The chat store is not ready for this server (its setup or a migration is unfinished); the operator has to finish it. This request may not have been carried out; reload the chat later to see what was saved.",
  },
};

const APPROVAL_NOT_PENDING: ProblemKind = {
  status: 409,
  slug: "tool-approval-not-pending",
  title: "Approval not pending",
  detail: "The approval answered is not waiting in this chat (answered already, or never asked).",
};

const APPROVAL_CONFLICT = (slug: string): ProblemKind => ({
  status: 409,
  slug,
  title: "Approval conflict",
  detail: "This approval was answered by another request; reload the chat to see the result.",
});

/**
 * The problem each error code answers. A code not in the table is a 500 (`http-internal`): only
 * errors whose meaning for the client is known get another status.
 */
export const PROBLEMS = {
  // The request itself
  "http-not-found": { status: 404, slug: "not-found", title: "Not found", detail: "There is nothing at this path." },
  "http-method-not-allowed": {
    status: 405,
    slug: "method-not-allowed",
    title: "Method not allowed",
    detail: "This path does not have this method; the Allow header lists the ones it has.",
  },
  "http-unauthenticated": {
    status: 401,
    slug: "unauthenticated",
    title: "Unauthenticated",
    detail: "The request does not say who is asking.",
  },
  "http-unsupported-media-type": {
    status: 415,
    slug: "unsupported-media-type",
    title: "Unsupported media type",
    detail: "Send the body as application/json in UTF-8.",
  },
  "http-body-too-large": {
    status: 413,
    slug: "body-too-large",
    title: "Body too large",
    detail: "The body is larger than this server accepts.",
  },
  "http-invalid-json": {
    status: 400,
    slug: "invalid-json",
    title: "Invalid JSON",
    detail: "The body is not valid JSON.",
  },
  "http-invalid-request": {
    status: 400,
    slug: "invalid-request",
    title: "Invalid request",
    detail: "The request is not one this server accepts.",
  },
  "http-message-too-long": {
    status: 413,
    slug: "message-too-long",
    title: "Message too long",
    detail: "The message is longer than this server accepts.",
  },
  "http-unsupported-part": {
    status: 422,
    slug: "unsupported-part",
    title: "Unsupported message part",
    detail: "Only text parts are accepted in a user message.",
  },
  "http-file-too-large": {
    status: 413,
    slug: "file-too-large",
    title: "File too large",
    detail: "A file of the message is larger than this server accepts; nothing of the message was saved.",
  },
  "http-too-many-files": {
    status: 413,
    slug: "too-many-files",
    title: "Too many files",
    detail: "The message carries more files than this server accepts; nothing of the message was saved.",
  },
  "http-file-type-not-allowed": {
    status: 415,
    slug: "file-type-not-allowed",
    title: "File type not allowed",
    detail: "A file of the message has a type this server does not accept; nothing of the message was saved.",
  },
  "http-file-not-inline": {
    status: 422,
    slug: "file-not-inline",
    title: "File not inline",
    detail: "Send a file's bytes inline, as a base64 data: URL.",
  },
  "http-file-not-found": {
    status: 404,
    slug: "file-not-found",
    title: "File not found",
    detail: "There is no file with this hash in this chat.",
  },
  "http-range-not-satisfiable": {
    status: 416,
    slug: "range-not-satisfiable",
    title: "Range not satisfiable",
    detail: "The range asked for is outside the file.",
  },
  "http-request-timeout": {
    status: 408,
    slug: "request-timeout",
    title: "Request timeout",
    detail: "The request body did not arrive in time.",
  },
  "http-invalid-target": {
    status: 400,
    slug: "invalid-request-target",
    title: "Invalid request target",
    detail: "The request target must be a path.",
  },
  "http-not-implemented": {
    status: 501,
    slug: "not-implemented",
    title: "Not implemented",
    detail: "This server does not answer this method.",
  },
  "http-internal": {
    status: 500,
    slug: "internal",
    title: "Internal error",
    detail: {
      read: "The server failed to answer.",
      write:
        "The server failed to answer; this request may not have been carried out. Reload the chat to see what was saved.",
    },
  },
  // The session flow (ChatError)
  "chat-not-found": {
    status: 404,
    slug: "chat-not-found",
    title: "Chat not found",
    detail: "There is no chat with this id.",
  },
  "chat-busy": {
    status: 409,
    slug: "chat-busy",
    title: "Chat busy",
    detail: "A reply is still being written in this chat; wait for it to finish (or stop it), then send again.",
  },
  "chat-message-id-taken": {
    status: 409,
    slug: "message-id-taken",
    title: "Message id taken",
    detail: "A message with this id is already in the chat; give every new message a new id.",
  },
  "chat-approval-pending": {
    status: 409,
    slug: "tool-approval-pending",
    title: "Approval pending",
    detail: "This chat is waiting for a tool approval; approve or deny it before sending a new message.",
  },
  "chat-approval-not-pending": APPROVAL_NOT_PENDING,
  // Branches: regenerate, edit, switch, fork (MessageNotFoundError, HistoryBranchError)
  "message-not-found": {
    status: 404,
    slug: "message-not-found",
    title: "Message not found",
    detail: "The chat has no message with this id; reload the chat to see its messages.",
  },
  "history-branch": {
    status: 422,
    slug: "history-branch",
    title: "Cannot branch here",
    detail:
      "This message cannot be regenerated, edited or branched from (only a user message can be edited, and only an answer to a question regenerated).",
  },
  // Tool approvals (ToolApprovalError)
  "tool-approval-invalid": {
    status: 400,
    slug: "tool-approval-invalid",
    title: "Invalid approval",
    detail: "The approval answer is incomplete.",
  },
  "tool-approval-not-found": { ...APPROVAL_NOT_PENDING, detail: "The approval answered is not waiting in this chat." },
  "tool-approval-answered": APPROVAL_CONFLICT("tool-approval-answered"),
  "tool-approval-pending": APPROVAL_CONFLICT("tool-approval-pending"),
  "tool-approval-in-progress": APPROVAL_CONFLICT("tool-approval-in-progress"),
  // The store
  conflict: {
    status: 409,
    slug: "chat-conflict",
    title: "Chat changed",
    detail:
      "This chat was changed by another request at the same time; nothing of this request was saved. Reload and try again.",
  },
  "session-not-found": {
    status: 404,
    slug: "chat-not-found",
    title: "Chat not found",
    detail: "There is no chat with this id.",
  },
  "invalid-id": { status: 400, slug: "invalid-id", title: "Invalid id", detail: "The id is not a valid chat id." },
  "invalid-cursor": {
    status: 400,
    slug: "invalid-cursor",
    title: "Invalid cursor",
    detail: "The cursor is not one this server gave out.",
  },
  "store-unavailable": {
    status: 503,
    slug: "store-unavailable",
    title: "Store unavailable",
    detail: {
      read: "The session store cannot be reached; try again later.",
      write:
        "The session store cannot be reached; this request may not have been carried out. Reload the chat and try again later.",
    },
  },
  // The store refuses to work until an operator acts (setup, a migration such as `statebag migrate
  // --reencrypt`, credentials, a key layout, the configuration): the client is told it is the
  // server's setup, never the store's own message.
  "store-not-set-up": STORE_NOT_READY,
  "store-authentication": STORE_NOT_READY,
  "store-key-conflict": STORE_NOT_READY,
  configuration: STORE_NOT_READY,
  // Blobs: a file that does not fit the blob budget (store or owner)
  "blob-budget-exceeded": {
    status: 413,
    slug: "file-storage-full",
    title: "No room for the file",
    detail:
      "There is no room left to keep this file; nothing of the message was saved. Delete older chats or send a smaller file.",
  },
  // The model
  "model-service": {
    status: 502,
    slug: "model-service",
    title: "Model service failed",
    detail: "The model service failed; try again later.",
  },
} as const satisfies Partial<Record<StatebagErrorCode, ProblemKind>>;

/** The codes the table maps: an `HttpProblem`'s code is one of them. */
export type HttpProblemCode = keyof typeof PROBLEMS;

function hasProblem(code: string): code is HttpProblemCode {
  return Object.hasOwn(PROBLEMS, code);
}

/** The fixed detail of a code, for a request of this method. */
export function problemDetail(code: HttpProblemCode, method = "POST"): string {
  const detail: Detail = PROBLEMS[code].detail;
  if (typeof detail === "string") return detail;
  return method === "GET" || method === "HEAD" ? detail.read : detail.write;
}

/**
 * A problem the handler answers with: a `StatebagError` whose `code` picks status, type and title
 * from the table, whose `message` is the `detail` the client reads, and whose `cause` is the error
 * it answers for (never shown to the client).
 */
export class HttpProblem extends StatebagError {
  declare readonly code: HttpProblemCode;
  readonly status: number;
  /** A short slug; the problem's `type` is `urn:statebag:problem:<slug>`. */
  readonly slug: string;
  readonly title: string;
  /** What the client reads: a sentence statebag wrote, never a copy of the input or of another error. */
  readonly detail: string;
  /** The methods the path has, for a 405 (its `Allow` header). */
  readonly allow?: readonly string[];
  constructor(
    code: HttpProblemCode,
    options: {
      /** The sentence the client reads; default the table's fixed detail for the code. */
      detail?: string;
      /** The request's method: a GET's fixed detail says nothing about a change that may not have happened. */
      method?: string;
      allow?: readonly string[];
      hint?: string;
      cause?: unknown;
    } = {},
  ) {
    const detail = options.detail ?? problemDetail(code, options.method);
    super(code, detail, { hint: options.hint, cause: options.cause });
    const kind: ProblemKind = PROBLEMS[code];
    this.status = kind.status;
    this.slug = kind.slug;
    this.title = kind.title;
    this.detail = detail;
    if (options.allow !== undefined) this.allow = [...options.allow];
  }

  /** `urn:statebag:problem:<slug>`. */
  get type(): string {
    return `urn:statebag:problem:${this.slug}`;
  }

  /** The response headers the problem needs (`Allow` of a 405), from its fields. */
  get headers(): Readonly<Record<string, string>> {
    return this.allow === undefined ? {} : { allow: this.allow.join(", ") };
  }
}

/**
 * The one mapping from a thrown value to the problem the client sees: an `HttpProblem` as it is;
 * a `StatebagError` whose code the table knows, with that code's fixed detail (its own message,
 * which may name tables, keys or the input, stays in `cause`); anything else a 500.
 */
export function toProblem(error: unknown, method = "POST"): HttpProblem {
  if (error instanceof HttpProblem) return error;
  const code = error instanceof StatebagError && hasProblem(error.code) ? error.code : "http-internal";
  return new HttpProblem(code, { method, cause: error });
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
}

export function problemBody(problem: HttpProblem): ProblemBody {
  return { type: problem.type, title: problem.title, status: problem.status, detail: problem.detail };
}

export function problemResponse(problem: HttpProblem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problemBody(problem)), {
    status: problem.status,
    headers: {
      ...problem.headers,
      ...headers,
      "content-type": "application/problem+json",
      "cache-control": "no-store",
    },
  });
}
