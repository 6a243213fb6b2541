/**
 * Errors a session store throws. Each says what failed, where (the store URL, password
 * redacted) and what to do, and carries a stable `code`.
 */
import { ConfigurationError, StatebagError } from "../core/errors.js";
import { quoted } from "../core/json.js";

function revisionText(revision: number | null, unit: string): string {
  return revision === null ? "absent" : `${unit} ${revision}`;
}

/**
 * A compare-and-swap failed: someone else saved (or deleted) the session since it was read.
 * Nothing was written. `currentRevision` is what the store holds now (`null`: absent).
 */
export class ConflictError extends StatebagError {
  constructor(
    readonly id: string,
    readonly expectedRevision: number | null,
    readonly currentRevision: number | null,
    options: { what?: string; unit?: "revision" | "version"; hint?: string } = {},
  ) {
    super(
      "conflict",
      `${options.what ?? "session"} "${id}" was changed by someone else: expected ${revisionText(expectedRevision, options.unit ?? "revision")}, ` +
        `found ${revisionText(currentRevision, options.unit ?? "revision")}; nothing was saved`,
      {
        hint:
          options.hint ??
          "load it again (store.get), re-apply your change to the fresh copy and save with the new revision, " +
            'or use withSession(..., { onConflict: "retry" })',
      },
    );
  }
}

/** The backing server or file cannot be reached or used right now. The same store object works again once it is back. */
export class StoreUnavailableError extends StatebagError {
  constructor(
    readonly store: string,
    readonly url: string,
    readonly operation: string,
    /** `reconnects: false` for a failure that trying again will not cure by itself (a corrupt file, a held lock). */
    options: { cause?: unknown; hint?: string; outcomeUnknown?: boolean; reconnects?: boolean } = {},
  ) {
    const reason = describeCause(options.cause);
    super(
      "store-unavailable",
      `${store} session store at ${url} is unavailable (${operation}${reason ? `: ${reason}` : ""})` +
        (options.outcomeUnknown ? "; the write may or may not have been applied" : ""),
      {
        cause: options.cause,
        hint:
          (options.hint ?? `check that the ${store} server is running and reachable at that address`) +
          (options.reconnects === false ? "" : "; the store reconnects by itself on the next call") +
          (options.outcomeUnknown ? "; reload the session (get) before retrying the write" : ""),
      },
    );
    this.outcomeUnknown = options.outcomeUnknown ?? false;
  }
  /** True when a write was sent but its result never came back. */
  readonly outcomeUnknown: boolean;
}

/** The store's tables are missing or at an older/newer format than this code uses. */
export class StoreNotSetUpError extends StatebagError {
  constructor(
    readonly url: string,
    message: string,
    hint: string,
  ) {
    super("store-not-set-up", message, { hint });
  }
}

/** A session that was required to exist does not. */
export class SessionNotFoundError extends StatebagError {
  constructor(readonly id: string) {
    super("session-not-found", `session "${id}" does not exist`, {
      hint: "create it first, or pass { create: true }",
    });
  }
}

function describeCause(cause: unknown): string {
  if (!cause) return "";
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    const message = cause.message || cause.name;
    return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message;
  }
  return String(cause);
}

/** A message-log version mismatch, reported like a session conflict (version 0: empty log). */
export function logConflict(storageId: string, expected: number, current: number): ConflictError {
  return new ConflictError(storageId, expected, current, {
    what: "message log",
    unit: "version",
    hint: "read the log again (messages.readMessages) and redo the reduction on the fresh messages",
  });
}

/**
 * An id (session, message log or operation id) that is not a non-empty, well-formed string.
 * Backends would otherwise disagree on it: PostgreSQL and Redis turn lone surrogates into U+FFFD
 * (so distinct ids share one record) and PostgreSQL refuses NUL outright.
 */
export class InvalidIdError extends ConfigurationError {
  override readonly code = "invalid-id";
  constructor(
    /** What the id names: "session id", "storageId", "operationId". */
    readonly what: string,
    /** Why it was refused. */
    readonly reason: string,
  ) {
    super(
      `${what} ${reason}`,
      `use an id of 1-${MAX_ID_LENGTH} characters of well-formed Unicode text without NUL (for example a UUID or a URL-safe name)`,
    );
  }
}

/**
 * A `list` or `scan` cursor that the store did not give out (edited, truncated, forged, or from a
 * listing in another order). Checked before any query runs, the same on every backend.
 */
export class InvalidCursorError extends ConfigurationError {
  override readonly code = "invalid-cursor";
  constructor(
    /** "list cursor" or "scan cursor". */
    readonly what: string,
    /** Why it was refused (never the cursor itself). */
    readonly reason: string,
  ) {
    super(
      `${what} ${reason}`,
      what === "scan cursor"
        ? "pass the cursor of the previous page (the last id it returned) unchanged, or leave it out to start over"
        : "pass the cursor of the previous page unchanged, with the same order (or leave it out to start over)",
    );
  }
}

/** The longest id a store accepts, in UTF-16 code units. */
export const MAX_ID_LENGTH = 1024;

/** Where a store refused to connect because its credentials were wrong. Nothing was read or written. */
export class StoreAuthenticationError extends StatebagError {
  constructor(
    readonly store: string,
    readonly url: string,
    readonly user: string | undefined,
    hint: string,
  ) {
    super(
      "store-authentication",
      `${store} at ${url} refused the credentials${user ? ` of user "${user}"` : ""}: authentication failed`,
      { hint },
    );
  }
}

/**
 * A Redis key where this store keeps its data holds something it did not write: another program
 * writes there, or (keys of earlier releases) a store of the older layout encloses this prefix.
 */
export class StoreKeyConflictError extends StatebagError {
  constructor(
    readonly url: string,
    readonly prefix: string,
    detail: string,
  ) {
    super(
      "store-key-conflict",
      `the Redis store at ${url} (prefix "${prefix}") found a key it did not write: ${detail}`,
      {
        hint: "give every store its own key prefix, and let no other program write keys under it; the message says which key and what to do",
      },
    );
  }
}

/**
 * A save named an owner other than the one the session is stored with (or an owner for a session
 * stored without one). A session never changes tenant; nothing was written. `withSession(..., {
 * owner })` never throws this for another owner's session: it answers as if the session did not
 * exist (`SessionNotFoundError`), so a caller learns nothing about sessions it does not own.
 */
export class SessionOwnerError extends ConfigurationError {
  constructor(
    readonly id: string,
    /** The owner the save named. The stored owner is deliberately not carried. */
    readonly owner: string,
  ) {
    super(
      `session ${quoted(id)} cannot be saved with owner ${quoted(owner)}: it is stored with another owner or none, and a session never changes owner; nothing was saved`,
      "save it with the owner it was created with (or leave meta.owner out); to move a session to another owner, create a new session under a new id and delete this one",
    );
  }
}

/**
 * A write to a stream buffer (append, renew) whose stream is no longer running: its writer
 * finished it, another process ended it as `interrupted` after the writer's lease passed, or it is
 * gone (expired, deleted with its session, erased). Nothing was written. `status` is the stream's
 * final status, `undefined` when it is gone.
 */
export class StreamClosedError extends StatebagError {
  constructor(
    readonly streamId: string,
    readonly status: "done" | "stopped" | "failed" | "interrupted" | undefined,
  ) {
    super(
      "stream-closed",
      `stream ${quoted(streamId, 200)} ${status === undefined ? "does not exist (never opened, expired or deleted with its session)" : `is no longer running (it ended as ${status})`}; nothing was written to it`,
      {
        hint:
          status === "interrupted"
            ? "this writer's lease passed and another process ended the stream: stop the turn, renew the lease more often than leaseMs"
            : "stop writing to it: a stream takes chunks only between open and finish",
      },
    );
  }
}

/**
 * `streams.open` of a stream id that exists: a `ConflictError` (nothing changed) saying so; its
 * revisions are both null (a stream has none).
 */
export function streamExistsError(streamId: string): ConflictError {
  const error = new ConflictError(streamId, null, null, {
    what: "stream",
    hint: "open each reply under a new stream id (for example a fresh UUID per turn)",
  });
  error.message = `stream ${quoted(streamId, 200)} exists already; nothing was changed`;
  return error;
}
