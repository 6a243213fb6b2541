/**
 * A chat server given a stream buffer of its own (`createChatHandler({ streams })`, not the store's
 * `store.streams`) records a turn not committed yet there, where the store cannot see it. The blob
 * sweep and retention count that record when given the buffer (`streams`): a file of a turn whose
 * commit failed survives, the next load folds the message in and serves it, and deleting the chat
 * lets the sweep remove it. A buffer that cannot be read stops the sweep, deleting nothing. Sessions
 * on every backend; the handler's buffer in a SQLite file of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/runtime/blobs/references.js";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { sweepOwnerBlobs } from "../../src/runtime/stores/blob-sweep.js";
import { purgeRetention } from "../../src/runtime/stores/retention.js";
import type { StreamBuffer } from "../../src/runtime/stores/stream-buffer.js";
import { turnStreamId } from "../../src/runtime/stores/turn-stream.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { available, memoryBackend, postgresBackend, redisBackend, sqliteBackend } from "../stores/helpers.js";
import { expectFoldedFile, fileTurn, getChat, image, withFailingSaves } from "./file-turns.js";
import { call, harness, post, readReply, userTurn, waitFor } from "./setup.js";

const backends = [memoryBackend, sqliteBackend, postgresBackend(), redisBackend()].filter(available);

for (const backend of backends) {
  describe(`a file in a turn not committed yet, recorded in the chat server's own buffer, sessions on ${backend.name}`, () => {
    let store: SessionStore;
    let bufferStore: SessionStore;
    let buffer: StreamBuffer;
    const cleanups: (() => Promise<void>)[] = [];
    beforeAll(async () => {
      const location = await backend.location();
      cleanups.push(location.cleanup);
      store = await openStore(location.url);
      const own = await sqliteBackend.location();
      cleanups.push(own.cleanup);
      bufferStore = await openStore(own.url);
      buffer = bufferStore.streams!;
    });
    afterAll(async () => {
      await store.close();
      await bufferStore.close();
      for (const cleanup of cleanups) await cleanup();
    });

    /** A chat with one committed turn, then a file turn whose commit failed; returns the file. */
    async function failedFileTurn(handler: ChatHandler, failing: { on: boolean }, chatId: string, streams = buffer) {
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
        const status = (await streams.info(streamId))?.status;
        return status !== undefined && status !== "running" ? true : undefined;
      });
      failing.on = false;
      // Only the handler's buffer refers to the file: not the stored chat, not the store's buffer.
      expect(JSON.stringify((await store.get(`ui-chat/${chatId}`))!.session)).not.toContain(sha256Hex(bytes));
      expect(await store.streams!.info(streamId)).toBeUndefined();
      return bytes;
    }

    it("a sweep given the buffer keeps it, and the next load folds the message in with the file served", async () => {
      const { store: proxy, failing } = withFailingSaves(store);
      const { handler } = harness({ leaseMs: 600, streams: buffer }, proxy);
      const bytes = await failedFileTurn(handler, failing, "ob-keep");
      const hash = sha256Hex(bytes);

      const swept = await sweepOwnerBlobs(store, "ada", { graceMs: 0, streams: [buffer] });
      expect(swept.blobs).toBe(0);
      expect(await store.blobs!.has(hash, { owner: "ada" })).toBe(true);

      // Folded: the chat itself refers to it now, and any sweep keeps it.
      await expectFoldedFile(handler, store, "ob-keep", "m-ob-keep-2", hash, bytes);
    });

    it("retention given the buffer removes another session of the owner and keeps the file", async () => {
      const { store: proxy, failing } = withFailingSaves(store);
      const { handler } = harness({ leaseMs: 600, streams: buffer }, proxy);
      const bytes = await failedFileTurn(handler, failing, "ob-retain");
      const chat = (await store.get("ui-chat/ob-retain"))!;
      await store.save(
        { ...chat.session, id: "scratch/ob-retain" },
        { expectedRevision: null, meta: { owner: "ada", labels: { kind: "scratch" } } },
      );

      const report = await purgeRetention(
        store,
        { labels: [{ match: { kind: "scratch" }, maxIdleMs: 1 }] },
        { now: Date.now() + 60_000, blobGraceMs: 0, streams: [buffer] },
      );
      expect(report).toMatchObject({ sessions: 1, blobs: 0 });
      expect(await store.get("scratch/ob-retain")).toBeUndefined();
      expect(await store.blobs!.has(sha256Hex(bytes), { owner: "ada" })).toBe(true);
      const user = (await getChat(handler, "ob-retain")).find((m) => m.id === "m-ob-retain-2")!;
      expect(user.parts).toContainEqual(expect.objectContaining({ type: "file" }));
    });

    it("deleting that chat lets the sweep remove the file (its turn stream went with it)", async () => {
      const { store: proxy, failing } = withFailingSaves(store);
      const { handler } = harness({ leaseMs: 600, streams: buffer }, proxy);
      const bytes = await failedFileTurn(handler, failing, "ob-drop");
      expect((await call(handler, "DELETE", "/chats/ob-drop")).status).toBe(204);
      const swept = await sweepOwnerBlobs(store, "ada", { graceMs: 0, streams: [buffer] });
      expect(swept.blobs).toBeGreaterThanOrEqual(1);
      expect(await store.blobs!.has(sha256Hex(bytes), { owner: "ada" })).toBe(false);
    });

    it("a buffer that cannot be read stops the sweep: nothing is deleted", async () => {
      const own = await sqliteBackend.location();
      cleanups.push(own.cleanup);
      const lost = await openStore(own.url);
      const { store: proxy, failing } = withFailingSaves(store);
      const { handler } = harness({ leaseMs: 600, streams: lost.streams! }, proxy);
      const bytes = await failedFileTurn(handler, failing, "ob-lost", lost.streams!);
      await lost.close();
      const sweep = sweepOwnerBlobs(store, "ada", { graceMs: 0, streams: [lost.streams!] });
      // The first chat it looks at names the buffer that does not read (a closed store here).
      await expect(sweep).rejects.toThrow(
        /the pending turn of session "ui-chat\/ob-[a-z]+" does not read from its stream buffer .*closed.*no blob was deleted/,
      );
      await expect(sweep).rejects.toMatchObject({ code: "store-closed" });
      expect(await store.blobs!.has(sha256Hex(bytes), { owner: "ada" })).toBe(true);
    });
  });
}
