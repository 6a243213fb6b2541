/**
 * A file sent with a message whose turn has not been committed (its commit failed, and the next load
 * has not folded it in yet) lives in the chat only through the turn's stream record. The blob sweep
 * (retention runs it) must count that reference: the file survives the sweep, and the fold shows it.
 * On every backend with a blob store and a stream buffer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/runtime/blobs/references.js";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { sweepOwnerBlobs } from "../../src/runtime/stores/blob-sweep.js";
import { turnStreamId } from "../../src/runtime/stores/turn-stream.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { available, memoryBackend, postgresBackend, redisBackend, sqliteBackend } from "../stores/helpers.js";
import { expectFoldedFile, fileTurn, image, withFailingSaves } from "./file-turns.js";
import { call, harness, post, readReply, userTurn, waitFor } from "./setup.js";

const backends = [memoryBackend, sqliteBackend, postgresBackend(), redisBackend()].filter(available);

for (const backend of backends) {
  describe(`a file in a turn not committed yet, on ${backend.name}`, () => {
    let store: SessionStore;
    let cleanup: () => Promise<void>;
    beforeAll(async () => {
      const location = await backend.location();
      cleanup = location.cleanup;
      store = await openStore(location.url);
    });
    afterAll(async () => {
      await store.close();
      await cleanup();
    });

    /** A chat with one committed turn, then a file turn whose commit failed; returns the file. */
    async function failedFileTurn(handler: ChatHandler, failing: { on: boolean }, chatId: string) {
      await readReply(await post(handler, userTurn(chatId, "Hello", `m-${chatId}-1`)));
      const before = (await store.get(`ui-chat/${chatId}`))!;
      const streamId = turnStreamId(before.session.id, before.revision, before.meta.updatedAt);
      const bytes = image(8_000);
      failing.on = true;
      const { chunks } = await readReply(
        await post(handler, fileTurn(chatId, `m-${chatId}-2`, "What is in this picture?", bytes)),
      );
      expect(chunks.at(-1)).toMatchObject({ type: "error" });
      await waitFor(async () => {
        const status = (await store.streams!.info(streamId))?.status;
        return status !== undefined && status !== "running" ? true : undefined;
      });
      failing.on = false;
      // Not in the stored chat: only the turn's stream refers to the file.
      expect(JSON.stringify((await store.get(`ui-chat/${chatId}`))!.session)).not.toContain(sha256Hex(bytes));
      return bytes;
    }

    it("the sweep keeps it, and the next load folds the message in with the file served", async () => {
      const { store: proxy, failing } = withFailingSaves(store);
      const { handler } = harness({ leaseMs: 600 }, proxy);
      const bytes = await failedFileTurn(handler, failing, "pf-keep");
      const hash = sha256Hex(bytes);

      const swept = await sweepOwnerBlobs(store, "ada", { graceMs: 0 });
      expect(swept.blobs).toBe(0);
      expect(await store.blobs!.has(hash, { owner: "ada" })).toBe(true);

      // Folded: the chat itself refers to it now, and a sweep still keeps it.
      await expectFoldedFile(handler, store, "pf-keep", "m-pf-keep-2", hash, bytes);
    });

    it("deleting that chat lets the sweep remove the file (its turn stream went with it)", async () => {
      const { store: proxy, failing } = withFailingSaves(store);
      const { handler } = harness({ leaseMs: 600 }, proxy);
      const bytes = await failedFileTurn(handler, failing, "pf-drop");
      expect((await call(handler, "DELETE", "/chats/pf-drop")).status).toBe(204);
      const swept = await sweepOwnerBlobs(store, "ada", { graceMs: 0 });
      expect(swept.blobs).toBeGreaterThanOrEqual(1);
      expect(await store.blobs!.has(sha256Hex(bytes), { owner: "ada" })).toBe(false);
    });
  });
}
