/**
 * How a server uses sessions: load a session by its public id (or
 * create it), run the agent on it, save it back with compare-and-swap.
 *
 * ```ts
 * const { value: reply } = await withSession(store, contextId, async (session) => {
 *   const response = await agent.run(userText, { session });
 *   return response.text;          // the (mutated) session is saved after fn returns
 * });
 * ```
 *
 * Two requests for the same session at the same time never overwrite each other: the second save
 * fails the revision check. With `onConflict: "reject"` (default) it throws `ConflictError` and
 * nothing of that run is saved; with `"retry"` it reloads the fresh session and runs `fn` again
 * (so `fn` runs more than once: use it only when re-running the agent is acceptable).
 */
import { ConfigurationError } from "../core/errors.js";
import type { AgentSession } from "../core/session.js";
import { createSessionData } from "../core/session.js";
import { checkStoredSessionId } from "./codec.js";
import { checkId } from "./common.js";
import { ConflictError, SessionNotFoundError } from "./errors.js";
import { checkMeta } from "./listing.js";
import type { SessionMeta, SessionStore } from "./types.js";
import { tracingOf, type SessionProbe } from "../core/tracing-hooks.js";

export interface WithSessionOptions {
  /** `reject` (default): throw `ConflictError`. `retry`: reload and run `fn` again, up to `retries` times. */
  onConflict?: "reject" | "retry";
  /** Re-runs after a conflict when `onConflict` is `retry` (default 3). */
  retries?: number;
  /**
   * What to do when no session has this id: `true` (default) creates an empty one with this id,
   * a function builds it (its `id` must be the public id), `false` throws `SessionNotFoundError`.
   */
  create?: boolean | ((id: string) => AgentSession);
  /** Time to live of the saved revision, in ms. */
  ttlMs?: number;
  /** Milliseconds to wait before a retry (default: a small random 5-25 ms, times the attempt). */
  retryDelayMs?: (attempt: number) => number;
  /**
   * The tenant making the call. A session stored under this id with another owner (or none) is
   * never loaded, run or overwritten: the call throws `SessionNotFoundError`, exactly as for an
   * absent session with `create: false` (nothing is said about the other owner). A session this
   * call creates gets this owner.
   */
  owner?: string;
  /** Title and labels to save with the session (replacing the stored ones; omitted fields are kept). */
  meta?: Omit<SessionMeta, "owner">;
}

export interface SessionRunContext {
  /** The revision the session was loaded at, or `null` for a new one. */
  revision: number | null;
  /** True when the session did not exist and was created for this run. */
  created: boolean;
  /** 1 for the first run, 2 for the first retry, ... */
  attempt: number;
}

export interface WithSessionResult<R> {
  /** The session as saved. */
  session: AgentSession;
  /** Its new revision. */
  revision: number;
  /** Whether this call created the session. */
  created: boolean;
  /** How many times `fn` ran. */
  attempts: number;
  /** What `fn` returned (when it returned a session, that session). */
  value: R;
}

/**
 * Runs `fn` on the session stored under `publicId` and saves the result with compare-and-swap.
 * `fn` may mutate the session it gets, or return a replacement session (an object whose `id` is
 * `publicId` and that has a `stateBag` object); anything else it returns comes back as `value`.
 * If `fn` throws, nothing is saved.
 */
export async function withSession<R>(
  store: SessionStore,
  publicId: string,
  fn: (session: AgentSession, context: SessionRunContext) => R | Promise<R>,
  options: WithSessionOptions = {},
): Promise<WithSessionResult<R>> {
  checkId(publicId);
  const onConflict = options.onConflict ?? "reject";
  if (onConflict !== "reject" && onConflict !== "retry") {
    throw new ConfigurationError(`onConflict must be "reject" or "retry", got ${JSON.stringify(onConflict)}`);
  }
  const retries = onConflict === "retry" ? (options.retries ?? 3) : 0;
  if (!Number.isSafeInteger(retries) || retries < 0)
    throw new ConfigurationError(`retries must be a non-negative integer, got ${retries}`);
  const create = options.create ?? true;
  const { owner, title, labels } = checkMeta({
    expectedRevision: null,
    meta: { ...options.meta, owner: options.owner },
  });
  const plan: SessionPlan<R> = { store, publicId, fn, options, retries, create, owner, title, labels };
  const tracing = tracingOf(store);
  return tracing === undefined ? runAttempts(plan) : tracing.withSession(publicId, (probe) => runAttempts(plan, probe));
}

interface SessionPlan<R> {
  store: SessionStore;
  publicId: string;
  fn: (session: AgentSession, context: SessionRunContext) => R | Promise<R>;
  options: WithSessionOptions;
  retries: number;
  create: NonNullable<WithSessionOptions["create"]>;
  owner: string | undefined;
  title: string | undefined;
  labels: SessionMeta["labels"];
}

/** The load-run-save attempts of one `withSession` call (`probe`: its span, when the store is traced). */
async function runAttempts<R>(plan: SessionPlan<R>, probe?: SessionProbe): Promise<WithSessionResult<R>> {
  const { store, publicId, fn, options, retries, create, owner, title, labels } = plan;
  for (let attempt = 1; ; attempt++) {
    probe?.attempt(attempt);
    const loaded = await store.get(publicId);
    let session: AgentSession;
    if (loaded && owner !== undefined && loaded.meta?.owner !== owner) {
      // Another tenant's session (or an unowned one): answered like an absent one that cannot be created.
      throw new SessionNotFoundError(publicId);
    }
    if (loaded) {
      session = loaded.session;
      // Stores apply this rule when loading; checked again for a store implemented elsewhere, so
      // a mismatched row is named as such instead of as "fn changed the session id".
      checkStoredSessionId(publicId, session, store.url);
    } else if (create === false) {
      throw new SessionNotFoundError(publicId);
    } else {
      session = typeof create === "function" ? create(publicId) : createSessionData({ id: publicId });
      if (session?.id !== publicId) {
        throw new ConfigurationError(
          `the create function returned a session with id ${JSON.stringify(session?.id)}, expected "${publicId}"`,
        );
      }
    }
    const context: SessionRunContext = { revision: loaded?.revision ?? null, created: !loaded, attempt };
    try {
      // A conflict inside fn (e.g. a history log written by a concurrent run) counts like a save conflict.
      const value = await fn(session, context);
      const toSave = isReplacement(value, publicId) ? value : session;
      if (toSave.id !== publicId) {
        throw new ConfigurationError(
          `fn changed the session id to ${JSON.stringify(toSave.id)}; a session keeps the id "${publicId}" it is stored under`,
        );
      }
      // The stored owner is passed back on update, so a codec that binds the owner need not look it up.
      const meta: SessionMeta = { owner: owner ?? loaded?.meta?.owner };
      if (title !== undefined) meta.title = title;
      if (labels !== undefined) meta.labels = labels;
      const revision = await store.save(toSave, { expectedRevision: context.revision, ttlMs: options.ttlMs, meta });
      return { session: toSave, revision, created: context.created, attempts: attempt, value };
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt > retries) {
        if (error instanceof ConflictError && retries > 0) {
          throw new ConflictError(publicId, error.expectedRevision, error.currentRevision, {
            hint: `gave up after ${attempt} runs; the session is being changed faster than this request can finish`,
          });
        }
        throw error;
      }
      probe?.conflict(attempt);
      const delay = options.retryDelayMs ? options.retryDelayMs(attempt) : (5 + Math.random() * 20) * attempt;
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

function isReplacement(value: unknown, id: string): value is AgentSession {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { id?: unknown }).id === id &&
    typeof (value as { stateBag?: unknown }).stateBag === "object" &&
    (value as { stateBag?: unknown }).stateBag !== null
  );
}
