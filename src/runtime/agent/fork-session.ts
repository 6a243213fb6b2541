/**
 * Forking a stored session: the fork is a new session in the same store, with the source's owner,
 * title and labels, so the owner's listing, retention, erasure and encryption treat it like any
 * other session of theirs. One compare-and-swap write (the new session must not exist yet); the
 * source is only read.
 */
import type { AgentSession } from "../core/session.js";
import { SessionNotFoundError } from "../stores/errors.js";
import type { SessionStore } from "../stores/types.js";
import type { ChatClientAgent, ForkOptions } from "./agent.js";

export interface ForkSessionOptions extends ForkOptions {
  /** The tenant asking: a source stored under another owner (or none) is reported as not found. */
  owner?: string;
  /** Time to live of the fork, in ms. */
  ttlMs?: number;
}

export interface ForkSessionResult {
  /** The new session, as saved. */
  session: AgentSession;
  revision: number;
}

/**
 * Forks the stored session `sourceId` up to `messageId` into a new stored session (see
 * `ChatClientAgent.fork`). Throws `SessionNotFoundError` when the source is absent or not the
 * owner's, `MessageNotFoundError` when it has no such message, and `ConflictError` when a session
 * with the fork's id exists already.
 */
export async function forkSession(
  store: SessionStore,
  agent: ChatClientAgent,
  sourceId: string,
  messageId: string,
  options: ForkSessionOptions = {},
): Promise<ForkSessionResult> {
  const stored = await store.get(sourceId);
  if (!stored || (options.owner !== undefined && stored.meta.owner !== options.owner))
    throw new SessionNotFoundError(sourceId);
  const { owner, title, labels } = stored.meta;
  const session = await agent.fork(stored.session, messageId, options);
  const revision = await store.save(session, {
    expectedRevision: null,
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
    meta: {
      ...(owner !== undefined ? { owner } : {}),
      ...(title !== undefined ? { title } : {}),
      ...(labels !== undefined ? { labels } : {}),
    },
  });
  return { session, revision };
}
