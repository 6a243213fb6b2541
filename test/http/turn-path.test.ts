/**
 * The turn's path through the chat server (#36), on every backend: the chat is read first and a
 * refused turn opens nothing; a turn on an existing chat opens the stream its revision names
 * (`turnStreamId`: the busy lock) and writes the chat once, at its end; the response ends once the
 * answer is committed and its last chunk sent, while the buffer's last append and the stream's
 * finish go on after.
 * - every refused turn (another owner's chat, a turn running, a reused message id, a message while
 *   an approval waits) saves nothing, leaves no stream running and does not touch the running one;
 * - a stream that cannot be opened: nothing saved; a new chat's save never runs before its stream's
 *   open resolved (a label never names a stream that is not there);
 * - the committed answer is in the chat when the response ends; the buffer then gets every chunk
 *   the response carried and is finished `done`, also when its finish is slow.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { turnStreamId } from "../../src/runtime/http/chat-data.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { StreamBuffer } from "../../src/runtime/stores/stream-buffer.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { available, memoryBackend, postgresBackend, redisBackend, sqliteBackend } from "../stores/helpers.js";
import { call, fixture, Gate, harness, post, readReply, userTurn, waitFor } from "./setup.js";

const backends = [memoryBackend, sqliteBackend, postgresBackend(), redisBackend()].filter(available);

/** The store's stream buffer, with its opens recorded and `open`/`finish` held or failed on demand. */
interface Recorder {
  streams: StreamBuffer;
  opened: string[];
  /** Set: the next opens wait for it. */
  holdOpen?: Promise<void>;
  /** Set: the next opens fail with it. */
  failOpen?: Error;
  /** Set: the next finishes (`finish`, `finishWith`) with status done wait for it. */
  holdFinish?: Promise<void>;
  /** Stream ids whose open had resolved, in order, when each `store.save` started. */
  openedBeforeSave: string[][];
  /** Set: the next saves fail with it. */
  failSave?: Error;
}

function recorder(inner: StreamBuffer): Recorder {
  const rec: Recorder = { opened: [], openedBeforeSave: [], streams: undefined as unknown as StreamBuffer };
  const resolved: string[] = [];
  (rec as { resolved?: string[] }).resolved = resolved;
  rec.streams = new Proxy(inner, {
    get(target, key, receiver) {
      if (key === "open")
        return async (streamId: string, options: Parameters<StreamBuffer["open"]>[1]) => {
          rec.opened.push(streamId);
          await rec.holdOpen;
          if (rec.failOpen) throw rec.failOpen;
          await target.open(streamId, options);
          resolved.push(streamId);
        };
      if (key === "finish")
        return async (...args: Parameters<StreamBuffer["finish"]>) => {
          if (args[1] === "done" || rec.failSave) await rec.holdFinish;
          return target.finish(...args);
        };
      // The turn's tail in one write, where the buffer has it: held the same way.
      if (key === "finishWith" && target.finishWith)
        return async (...args: Parameters<NonNullable<StreamBuffer["finishWith"]>>) => {
          if (args[2] === "done" || rec.failSave) await rec.holdFinish;
          return target.finishWith!(...args);
        };
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return rec;
}

/** A store whose saves note which streams were open when each began. */
function noting(store: SessionStore, rec: Recorder): SessionStore {
  const resolved = (rec as { resolved?: string[] }).resolved!;
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "save")
        return (...args: Parameters<SessionStore["save"]>) => {
          rec.openedBeforeSave.push([...resolved]);
          if (rec.failSave) return Promise.reject(rec.failSave);
          return target.save(...args);
        };
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const running = async (streams: StreamBuffer, id: string) => (await streams.info(id))?.status === "running";

for (const backend of backends) {
  describe(`the turn path on ${backend.name}`, () => {
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

    function setup() {
      const rec = recorder(store.streams!);
      const h = harness({ streams: rec.streams, leaseMs: 5_000 }, noting(store, rec));
      return { ...h, rec };
    }

    it("a refused turn saves nothing, leaves no stream running and leaves the running turn alone", async () => {
      const { handler, client, rec } = setup();
      const chat = `refused-${Date.now()}`;
      await readReply(await post(handler, userTurn(chat, "hello", `${chat}-m1`)));
      const id = `ui-chat/${chat}`;
      const settled = (await store.get(id))!;

      // Another owner's chat: absent, and nothing of it changed (nothing opened either).
      const opens = rec.opened.length;
      const foreign = await post(handler, userTurn(chat, "mine now?", `${chat}-x`), { owner: "bob" });
      expect(foreign.status).toBe(404);
      // A reused message id (the answer's).
      const answerId = ((await (await call(handler, "GET", `/chats/${chat}`)).json()) as { id: string }[])[1].id;
      const taken = await post(handler, userTurn(chat, "again", answerId));
      expect(taken.status).toBe(409);
      expect(((await taken.json()) as { type: string }).type).toBe("urn:statebag:problem:message-id-taken");
      expect((await store.get(id))!.revision).toBe(settled.revision);
      expect((await store.get(id))!.meta.labels).toEqual(settled.meta.labels);
      expect(rec.opened.length).toBe(opens);

      // A turn running: the chat is not written (its stream, named by the revision, holds the
      // user's message); a second message is busy; the running turn goes on and commits.
      const gate = (client.gate = new Gate());
      const first = readReply(await post(handler, userTurn(chat, "Tell me a story", `${chat}-m2`)));
      await gate.reachedPromise;
      const during = (await store.get(id))!;
      expect(during.revision).toBe(settled.revision);
      expect(during.meta.labels?.["statebag.activeStream"]).toBeUndefined();
      const active = turnStreamId(id, settled.revision, settled.meta.updatedAt);
      expect(rec.opened.at(-1)).toBe(active);
      expect(await running(store.streams!, active)).toBe(true);
      const shown = (await (await call(handler, "GET", `/chats/${chat}`)).json()) as { id: string }[];
      expect(shown.map((m) => m.id)).toContain(`${chat}-m2`);
      const busy = await post(handler, userTurn(chat, "hurry", `${chat}-m3`));
      expect(busy.status).toBe(409);
      expect(((await busy.json()) as { type: string }).type).toBe("urn:statebag:problem:chat-busy");
      expect((await store.get(id))!.revision).toBe(during.revision);
      expect(await running(store.streams!, active)).toBe(true);
      gate.open();
      const { chunks } = await first;
      expect(chunks.at(-1)).toMatchObject({ type: "finish" });

      // The busy turn tried the same stream (refused by the buffer); the first turn's was a new chat's.
      expect(rec.opened.slice(opens)).toEqual([active, active]);
      // Each turn's stream is finished once the turn is over (its tail follows the response's end).
      await handler.idle();
      expect(await running(store.streams!, rec.opened[0])).toBe(false);
      expect(await running(store.streams!, active)).toBe(false);
      // One write for the whole turn: the user's message and the answer together.
      expect((await store.get(id))!.revision).toBeGreaterThan(settled.revision);
      const history = (await (await call(handler, "GET", `/chats/${chat}`)).json()) as { id: string }[];
      expect(history.map((m) => m.id).filter((m) => m.startsWith(chat))).toEqual([`${chat}-m1`, `${chat}-m2`]);
      expect(history).toHaveLength(4);
    });

    it("a message while an approval waits is refused, nothing saved, no stream left running", async () => {
      const { handler, rec } = setup();
      await readReply(await post(handler, fixture("approval-request-turn.json"), { owner: `owner-${backend.name}-a` }));
      const id = "ui-chat/chat-email-0001";
      const before = (await store.get(id))!;
      const opens = rec.opened.length;
      const refused = await post(handler, userTurn("chat-email-0001", "never mind"), {
        owner: `owner-${backend.name}-a`,
      });
      expect(refused.status).toBe(409);
      expect((await store.get(id))!.revision).toBe(before.revision);
      // Refused on what the read found: no stream was opened.
      expect(rec.opened.length).toBe(opens);
      expect(await store.streams!.info(turnStreamId(id, before.revision, before.meta.updatedAt))).toBeUndefined();
      await store.delete(id);
    });

    it("a stream that cannot be opened: nothing is saved, the chat stays as it was", async () => {
      const { handler, rec, errors } = setup();
      const chat = `noopen-${Date.now()}`;
      await readReply(await post(handler, userTurn(chat, "hello", `${chat}-m1`)));
      const before = (await store.get(`ui-chat/${chat}`))!;
      rec.failOpen = new Error("the buffer is down");
      const failed = await post(handler, userTurn(chat, "again", `${chat}-m2`));
      expect(failed.status).toBe(500);
      const after = (await store.get(`ui-chat/${chat}`))!;
      expect(after.revision).toBe(before.revision);
      expect(after.meta.labels).toEqual(before.meta.labels);
      // A new chat is not created either.
      const fresh = await post(handler, userTurn(`${chat}-new`, "hello", `${chat}-n1`));
      expect(fresh.status).toBe(500);
      expect(await store.get(`ui-chat/${chat}-new`)).toBeUndefined();
      expect(errors.filter((error) => error === rec.failOpen)).toHaveLength(2);
    });

    it("a new chat's save waits for its stream's open: a label never names a stream that is not there", async () => {
      const { handler, rec } = setup();
      const chat = `order-${Date.now()}`;
      let release!: () => void;
      rec.holdOpen = new Promise<void>((resolve) => (release = resolve));
      const saves = rec.openedBeforeSave.length;
      const opens = rec.opened.length;
      const pending = post(handler, userTurn(chat, "hello", `${chat}-m1`));
      // The chat is read meanwhile; nothing is saved while the open is held.
      await waitFor(async () => (rec.opened.length > opens ? true : undefined));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(rec.openedBeforeSave.length).toBe(saves);
      expect(await store.get(`ui-chat/${chat}`)).toBeUndefined();
      rec.holdOpen = undefined;
      release();
      await readReply(await pending);
      // The accept save began once its stream was open.
      const streamId = rec.opened.at(-1)!;
      expect(rec.openedBeforeSave[saves]).toContain(streamId);
      // A turn on the chat now: its stream (the revision's) is open before its only save, the commit.
      const stored = (await store.get(`ui-chat/${chat}`))!;
      const next = saves + 2; // the first turn's accept and commit
      await readReply(await post(handler, userTurn(chat, "more", `${chat}-m2`)));
      const turnStream = turnStreamId(stored.session.id, stored.revision, stored.meta.updatedAt);
      expect(rec.opened.at(-1)).toBe(turnStream);
      expect(rec.openedBeforeSave).toHaveLength(next + 1);
      expect(rec.openedBeforeSave[next]).toContain(turnStream);
    });

    it("a read while a failed commit's stream is still being finished waits for it, then folds the turn in", async () => {
      const { handler, rec, errors } = setup();
      const chat = `tailfail-${Date.now()}`;
      await readReply(await post(handler, userTurn(chat, "hello", `${chat}-m1`)));
      const before = (await store.get(`ui-chat/${chat}`))!;
      const streamId = turnStreamId(before.session.id, before.revision, before.meta.updatedAt);
      let release!: () => void;
      rec.holdFinish = new Promise<void>((resolve) => (release = resolve));
      rec.failSave = new Error("the database went away");
      const { chunks } = await readReply(await post(handler, userTurn(chat, "keep this", `${chat}-m2`)));
      expect(chunks.at(-1)).toMatchObject({ type: "error" });
      expect(errors).toContain(rec.failSave);
      rec.failSave = undefined;
      // The turn is answered (its commit failed) but its stream's finish is held: a read now must
      // not take the turn for running, nor fold it before its last chunks are in the buffer.
      let read: { id: string }[] | undefined;
      const reading = call(handler, "GET", `/chats/${chat}`).then(
        async (r) => (read = (await r.json()) as { id: string }[]),
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(read).toBeUndefined();
      expect((await store.get(`ui-chat/${chat}`))!.revision).toBe(before.revision);
      release();
      await reading;
      expect(read!.map((m) => m.id).slice(2)).toEqual([`${chat}-m2`, `msg-${streamId}`]);
      expect((await store.get(`ui-chat/${chat}`))!.revision).toBeGreaterThan(before.revision);
    });

    it("the turn's tail (its last chunks and the end) is one write where the buffer has finishWith; without it, appends then finish leave the same stream", async () => {
      for (const withTail of [true, false]) {
        const calls: string[] = [];
        const inner = store.streams!;
        const streams = new Proxy(inner, {
          get(target, key, receiver) {
            // A buffer of the app's own, written before finishWith existed: the two calls.
            if (key === "finishWith" && !withTail) return undefined;
            const value = Reflect.get(target, key, receiver) as unknown;
            if (typeof value !== "function") return value;
            return (...args: unknown[]) => {
              if (["open", "append", "renew", "finish", "finishWith"].includes(String(key))) calls.push(String(key));
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          },
        });
        const { handler } = harness({ streams, leaseMs: 5_000 }, store);
        const chat = `tailwrite-${withTail}-${Date.now()}`;
        await readReply(await post(handler, userTurn(chat, "hello", `${chat}-m1`)));
        await handler.idle();
        calls.length = 0;
        const before = (await store.get(`ui-chat/${chat}`))!;
        const streamId = turnStreamId(before.session.id, before.revision, before.meta.updatedAt);
        const { chunks } = await readReply(await post(handler, userTurn(chat, "Tell me a story", `${chat}-m2`)));
        await handler.idle();
        if (inner.finishWith && withTail) {
          // One write at the end; an append before it only for a batch gathered while the turn ran
          // longer than a batch waits (a loaded machine), never for what the tail writes.
          expect(calls[0]).toBe("open");
          expect(calls.at(-1)).toBe("finishWith");
          expect(calls.filter((c) => c === "finishWith")).toHaveLength(1);
          expect(calls).not.toContain("finish");
          expect(calls.filter((c) => c === "append").length).toBeLessThanOrEqual(1);
        } else {
          expect(calls[0]).toBe("open");
          expect(calls.at(-1)).toBe("finish");
          expect(calls).not.toContain("finishWith");
        }
        const buffered = (await inner.read(streamId, { from: 0 }))!;
        expect(buffered.info.status).toBe("done");
        // The turn's record (the user's message) first, then every chunk the response carried.
        expect(buffered.chunks.slice(1).map((text) => JSON.parse(text))).toEqual(chunks);
      }
    });

    it("the response ends once the answer is committed; the buffer then holds every chunk and is finished", async () => {
      const { handler, rec } = setup();
      const chat = `tail-${Date.now()}`;
      let release!: () => void;
      rec.holdFinish = new Promise<void>((resolve) => (release = resolve));
      const { chunks } = await readReply(await post(handler, userTurn(chat, "Tell me a story", `${chat}-m1`)));
      const streamId = rec.opened.at(-1)!;
      expect(chunks.at(-1)).toMatchObject({ type: "finish" });
      // The finish is held: the response ended anyway, with the answer committed and the chat free.
      const stored = (await store.get(`ui-chat/${chat}`))!;
      expect(stored.meta.labels?.["statebag.activeStream"]).toBeUndefined();
      const history = (await (await call(handler, "GET", `/chats/${chat}`)).json()) as { id: string }[];
      expect(history).toHaveLength(2);
      expect(history[1].id).toBe((chunks[0] as { messageId?: string }).messageId);
      expect(
        (await handler(new Request(`http://app.test/api/chat/${chat}/stream`, { headers: { "x-owner": "ada" } })))
          .status,
      ).toBe(204);
      expect(await running(store.streams!, streamId)).toBe(true);
      release();
      await waitFor(async () => ((await store.streams!.info(streamId))?.status === "done" ? true : undefined));
      const buffered = (await store.streams!.read(streamId, { from: 0 }))!.chunks.map((text) => JSON.parse(text));
      expect(buffered).toEqual(chunks);
    });
  });
}
