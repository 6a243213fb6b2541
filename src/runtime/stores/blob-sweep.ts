/**
 * Blobs follow their sessions: `sweepOwnerBlobs(store, owner)` deletes the owner's blobs that no
 * session of the owner refers to any more (a deleted chat's images, a session removed by
 * retention), with the blob store's `sweep`. Mark and sweep, safe against concurrent writers:
 *
 * 1. mark: every reference (`statebag.blobReference`) in the owner's sessions (their whole state
 *    bag), in the message logs they use and in each chat's turn not committed yet (the first chunk
 *    of its turn stream in `store.streams` and in each buffer of `options.streams`: a turn whose
 *    commit failed keeps the user's message, files included, only there until the next load folds
 *    it in), read *before* the sweep starts. A record that does not read stops the sweep, as a
 *    session that does not load does;
 * 2. sweep: the blob store deletes the owner's other blobs, except those put (or put again) within
 *    `graceMs`: a file put by a request that has not committed its message yet is younger than
 *    that, so it survives a sweep running in between.
 *
 * Retention (`purgeRetention`, `purgeExpired`) runs it for every owner it removed sessions of;
 * erasure (`eraseOwner`) removes all the owner's blobs (`blobs.eraseOwner`) once the sessions are gone.
 *
 * A chat server given a buffer of its own (`createChatHandler({ streams })`) records its turns
 * there, where the store cannot see them: the caller names it (`streams`), as the store knows only
 * its own. It is passed, not registered with the store, because a registration keyed by the store
 * object would miss the sweeps that run on another object for the same data (a traced store's
 * `purgeExpired` sweeps with the store it wraps; the CLI in another process).
 */
import { StatebagError } from "../core/errors.js";
import { collectBlobReferences, referencedBlobs } from "../blobs/references.js";
import { sessionLogIds } from "./erasure.js";
import { pendingTurnReferences } from "./turn-stream.js";
import { StoreUnavailableError } from "./errors.js";
import type { StreamBuffer } from "./stream-buffer.js";
import type { SessionStore, StoredSession } from "./types.js";

export interface SweepOwnerBlobsOptions {
  /** Blobs put within this many ms are kept whatever refers to them (default: the blob store's, one hour). */
  graceMs?: number;
  signal?: AbortSignal;
  /**
   * Stream buffers whose pending turn records count too, besides the store's own `store.streams`:
   * the `streams` a chat server was given (`createChatHandler({ streams })`). Without it, a file of
   * a turn recorded there whose commit failed is deleted once older than the grace window.
   */
  streams?: readonly StreamBuffer[];
}

export interface SweepOwnerBlobsResult {
  /** Blobs the owner's sessions still refer to. */
  referenced: number;
  /** Blobs deleted, and their bytes. */
  blobs: number;
  bytes: number;
}

const PAGE = 200;

/**
 * The blob hashes the owner's sessions refer to (`owner` undefined: the sessions without an owner,
 * found by a scan of the whole store), with those of their turns pending in the store's buffer and
 * in `streams`.
 */
export async function ownerBlobReferences(
  store: SessionStore,
  owner: string | undefined,
  streams: readonly StreamBuffer[] = [],
): Promise<Set<string>> {
  const live = new Set<string>();
  // The store's own buffer first; one given twice is read once.
  const buffers = [...new Set([...(store.streams ? [store.streams] : []), ...streams])];
  const visit = async (id: string) => {
    let stored: StoredSession | undefined;
    try {
      stored = await store.get(id);
    } catch (error) {
      // A session that does not load cannot be proven free of references: stop, keep every blob.
      if (error instanceof StoreUnavailableError || !(error instanceof StatebagError)) throw error;
      throw new StatebagError(
        error.code,
        `sweeping blobs: session ${JSON.stringify(id)} does not load (${error.message}), so its references are unknown; no blob was deleted`,
        { hint: "repair or migrate the session (statebag validate, statebag migrate), then sweep again", cause: error },
      );
    }
    if (stored) {
      referencedBlobs(stored.session, live);
      for (const buffer of buffers) {
        try {
          await pendingTurnReferences(buffer, id, stored.revision, stored.meta.updatedAt, live);
        } catch (error) {
          // Nor can a turn whose record does not read (a chunk that does not decrypt): the same stop.
          if (error instanceof StoreUnavailableError || !(error instanceof StatebagError)) throw error;
          throw new StatebagError(
            error.code,
            `sweeping blobs: the pending turn of session ${JSON.stringify(id)} does not read from its stream buffer (${error.message}), so its references are unknown; no blob was deleted`,
            {
              hint: "check the stream buffer's keyring and backend; once the chat loads (GET /chats/:id folds the turn in), sweep again",
              cause: error,
            },
          );
        }
      }
    }
    for (const logId of await sessionLogIds(store, id)) {
      const log = await store.messages.readMessages(logId);
      if (log.version > 0) collectBlobReferences(log.messages, live);
    }
  };
  let cursor: string | undefined;
  do {
    if (owner !== undefined) {
      const page = await store.list({ owner, order: "id", limit: PAGE, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) await visit(item.id);
      cursor = page.cursor;
    } else {
      const page = await store.scan({ limit: PAGE, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) if (item.meta?.owner === undefined) await visit(item.id);
      cursor = page.cursor;
    }
  } while (cursor);
  return live;
}

/** Deletes the owner's blobs no session of the owner refers to (older than the grace window). See the module comment. */
export async function sweepOwnerBlobs(
  store: SessionStore,
  owner: string | undefined,
  options: SweepOwnerBlobsOptions = {},
): Promise<SweepOwnerBlobsResult> {
  const blobs = store.blobs;
  if (!blobs) return { referenced: 0, blobs: 0, bytes: 0 };
  const referenced = await ownerBlobReferences(store, owner, options.streams);
  const swept = await blobs.sweep({
    referenced,
    ...(owner !== undefined ? { owner } : {}),
    ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { referenced: referenced.size, blobs: swept.blobs, bytes: swept.bytes };
}
