/**
 * Errors a session store throws. Each says what failed, where (the store URL, password
 * redacted) and what to do, and carries a stable `code`.
 */
import { StatebagError } from "../core/errors.js";

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
    options: { cause?: unknown; hint?: string; outcomeUnknown?: boolean } = {},
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
          "; the store reconnects by itself on the next call" +
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
  constructor(readonly url: string, message: string, hint: string) {
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
