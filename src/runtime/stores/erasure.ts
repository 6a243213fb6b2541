/**
 * Erasure requests (#23): `store.eraseOwner(owner)` removes everything a store holds of one owner,
 * implemented once over the store contract. Pages of `list({ owner, order: "id" })` (which finds a
 * session from the store's metadata, repairing a stale index entry on Redis); for each session, first
 * its stream buffers and message logs (the one under its id and any other its stored history
 * names), then the session; once no session is left, every blob of the owner (`store.blobs`).
 * In that order a crash at any point leaves each remaining session with whatever logs it still has,
 * so running it again finds the rest and finishes: the call is idempotent and resumable. It returns
 * only once a listing from the start comes back empty.
 */
import { createHash } from "node:crypto";
import { StatebagError } from "../core/errors.js";
import { StoreUnavailableError } from "./errors.js";
import { checkOwner } from "./listing.js";
import type { EraseOptions, EraseReceipt, SessionStore } from "./types.js";

/** SHA-256 of an owner id (UTF-8), lowercase hex: how a receipt names the owner. */
export function ownerDigest(owner: string): string {
  return createHash("sha256").update(owner, "utf8").digest("hex");
}

/**
 * The message logs a stored session uses: the log under its own id (`StoredChatHistoryProvider`'s
 * default) and the `storageId` of every `StoredChatHistoryState` in its state bag. A session that
 * does not load (a codec that cannot read it) still has the first.
 */
export async function sessionLogIds(store: SessionStore, id: string): Promise<string[]> {
  const ids = new Set([id]);
  try {
    const loaded = await store.get(id);
    for (const value of Object.values(loaded?.session.stateBag ?? {})) {
      const state = value as unknown as { $type?: unknown; storageId?: unknown };
      if (state?.$type === "StoredChatHistoryState" && typeof state.storageId === "string" && state.storageId !== "")
        ids.add(state.storageId);
    }
  } catch (error) {
    if (error instanceof StoreUnavailableError || !(error instanceof StatebagError)) throw error;
  }
  return [...ids];
}

const PAGE = 100;
const CONCURRENCY = 8;

/**
 * `eraseOwner` over the store contract, for stores to delegate to (statebag's own do; Redis then
 * drops the owner's index keys). See `SessionStore.eraseOwner`.
 */
export async function eraseOwnerSessions(
  store: SessionStore,
  owner: string,
  options: EraseOptions = {},
): Promise<EraseReceipt> {
  checkOwner(owner, "eraseOwner owner");
  const startedAt = new Date().toISOString();
  let sessions = 0;
  let messageLogs = 0;
  let streams = 0;
  let idle = 0;
  for (;;) {
    // Always from the start: what this loop removed is gone, so the first page is what is left.
    const page = await store.list({ owner, order: "id", limit: PAGE });
    if (page.items.length === 0) break;
    let removed = 0;
    // A few sessions at a time; each one's logs go before the session itself.
    const queue = [...page.items];
    const worker = async () => {
      for (let item = queue.shift(); item; item = queue.shift()) {
        // Counted here, before the session's delete (which removes whatever a writer opened since).
        // (Awaited before the addition: `streams += await` would add to a stale value read before
        // the other workers' additions.)
        const removedStreams = store.streams ? await store.streams.deleteForSession(item.id) : 0;
        streams += removedStreams;
        for (const logId of await sessionLogIds(store, item.id))
          if (await store.messages.deleteMessages(logId)) messageLogs++;
        if (await store.delete(item.id)) {
          sessions++;
          removed++;
        }
        options.onProgress?.(store.streams ? { sessions, messageLogs, streams } : { sessions, messageLogs });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    // A listing that keeps returning sessions no delete removes is a broken store, not a reason to spin.
    if (removed === 0 && ++idle >= 3) {
      throw new StatebagError(
        "store-unavailable",
        `eraseOwner: the ${store.kind} store keeps listing sessions of the owner that delete does not remove`,
        { hint: "check the store; running eraseOwner again continues where this call stopped" },
      );
    }
  }
  // The owner's files last, once no session refers to them: all of them go (a re-run finds none).
  const blobs = store.blobs ? await store.blobs.eraseOwner(owner) : undefined;
  return {
    owner: ownerDigest(owner),
    sessions,
    messageLogs,
    ...(store.streams ? { streams } : {}),
    ...(blobs ? { blobs: blobs.blobs, blobBytes: blobs.bytes } : {}),
    startedAt,
    finishedAt: new Date().toISOString(),
    complete: true,
  };
}

/** What `eraseOwner` would remove now, removing nothing (`statebag store erase --dry-run`). */
export async function previewErase(
  store: SessionStore,
  owner: string,
): Promise<{ owner: string; sessions: number; messageLogs: number; blobs?: number; blobBytes?: number }> {
  checkOwner(owner, "eraseOwner owner");
  let sessions = 0;
  let messageLogs = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list({ owner, order: "id", limit: PAGE, cursor });
    for (const item of page.items) {
      sessions++;
      for (const logId of await sessionLogIds(store, item.id))
        if ((await store.messages.readMessages(logId)).version > 0) messageLogs++;
    }
    cursor = page.cursor;
  } while (cursor);
  const usage = store.blobs ? await store.blobs.usage({ owner }) : undefined;
  return {
    owner: ownerDigest(owner),
    sessions,
    messageLogs,
    ...(usage ? { blobs: usage.blobs, blobBytes: usage.bytes } : {}),
  };
}
