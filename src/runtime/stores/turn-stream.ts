/**
 * The stream of a chat turn that has not been committed yet. The chat server (`statebag/http`)
 * writes nothing to a chat until a turn ends: the turn's stream, whose id is derived from the
 * chat's stored revision, holds what the turn adds (the user's message, its files' references) as
 * its first chunk. It lives here, below the chat server, because what reads a chat's data must
 * find it too: the blob sweep counts the references in it.
 */
import { hash } from "node:crypto";
import { collectBlobReferences } from "../blobs/references.js";
import type { StreamBuffer } from "./stream-buffer.js";

/**
 * The stream id of a turn on the chat as stored at `revision` (saved at `updatedAt`): the same for
 * every process that read that revision, and never again once the chat is saved. The chat's
 * storage id, revision and save time are hashed: a chat deleted and created again under the same
 * id gets other ids.
 */
export function turnStreamId(storageId: string, revision: number, updatedAt: string): string {
  // The one-shot hash: a third of createHash's time for a short text.
  const digest = hash("sha256", `${storageId}\n${revision}\n${updatedAt}`, "base64url");
  return `turn-${digest.slice(0, 32)}`;
}

/**
 * Adds to `into` the blob references in the first chunk of the turn stream of the chat stored at
 * `revision`, when there is such a stream (a turn not committed yet: running, or ended without its
 * commit and waiting for the next load to fold it in). A chunk that is not JSON holds none.
 */
export async function pendingTurnReferences(
  streams: StreamBuffer,
  storageId: string,
  revision: number,
  updatedAt: string,
  into: Set<string>,
): Promise<void> {
  const head = await streams.read(turnStreamId(storageId, revision, updatedAt), { from: 0, limit: 1 });
  const first = head?.chunks[0];
  if (first === undefined) return;
  let record: unknown;
  try {
    record = JSON.parse(first);
  } catch {
    return;
  }
  collectBlobReferences(record, into);
}
