/**
 * Blobs follow their sessions: `sweepOwnerBlobs(store, owner)` deletes the owner's blobs that no
 * session of the owner refers to any more (a deleted chat's images, a session removed by
 * retention), with the blob store's `sweep`. Mark and sweep, safe against concurrent writers:
 *
 * 1. mark: every reference (`statebag.blobReference`) in the owner's sessions (their whole state
 *    bag), in the message logs they use and in each chat's turn not committed yet (the first chunk
 *    of its turn stream in `store.streams`: a turn whose commit failed keeps the user's message,
 *    files included, only there until the next load folds it in; a chat server with a stream
 *    buffer of its own has only the grace window for those), read *before* the sweep starts;
 * 2. sweep: the blob store deletes the owner's other blobs, except those put (or put again) within
 *    `graceMs`: a file put by a request that has not committed its message yet is younger than
 *    that, so it survives a sweep running in between.
 *
 * Retention (`purgeRetention`, `purgeExpired`) runs it for every owner it removed sessions of;
 * erasure (`eraseOwner`) removes all the owner's blobs (`blobs.eraseOwner`) once the sessions are gone.
 */
import { StatebagError } from "../core/errors.js";
import { collectBlobReferences, referencedBlobs } from "../blobs/references.js";
import { sessionLogIds } from "./erasure.js";
import { pendingTurnReferences } from "./turn-stream.js";
import { StoreUnavailableError } from "./errors.js";
import type { SessionStore } from "./types.js";

export interface SweepOwnerBlobsOptions {
  /** Blobs put within this many ms are kept whatever refers to them (default: the blob store's, one hour). */
  graceMs?: number;
  signal?: AbortSignal;
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
 * found by a scan of the whole store).
 */
export async function ownerBlobReferences(store: SessionStore, owner: string | undefined): Promise<Set<string>> {
  const live = new Set<string>();
  const visit = async (id: string) => {
    try {
      const stored = await store.get(id);
      if (stored) {
        referencedBlobs(stored.session, live);
        if (store.streams) await pendingTurnReferences(store.streams, id, stored.revision, stored.meta.updatedAt, live);
      }
    } catch (error) {
      // A session that does not load cannot be proven free of references: stop, keep every blob.
      if (error instanceof StoreUnavailableError || !(error instanceof StatebagError)) throw error;
      throw new StatebagError(
        error.code,
        `sweeping blobs: session ${JSON.stringify(id)} does not load (${error.message}), so its references are unknown; no blob was deleted`,
        { hint: "repair or migrate the session (statebag validate, statebag migrate), then sweep again", cause: error },
      );
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
  const referenced = await ownerBlobReferences(store, owner);
  const swept = await blobs.sweep({
    referenced,
    ...(owner !== undefined ? { owner } : {}),
    ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  return { referenced: referenced.size, blobs: swept.blobs, bytes: swept.bytes };
}
