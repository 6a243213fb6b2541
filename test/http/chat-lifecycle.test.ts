/**
 * The chat lifecycle of statebag/http on every backend (memory, SQLite, PostgreSQL, Redis, Redis
 * Cluster): chats are the store's owned sessions (listed, erased and purged as such, and listed
 * through an encrypting store), a turn survives its request (the user's message is committed on
 * accept on a new chat, kept in the turn's stream on one that exists, the answer after the client left),
 * a second handler on the same store resumes and
 * stops it, a turn whose writer died is recovered once its lease passed, erasure during a turn,
 * reused message ids, and an approval answered before the tab closed.
 */
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSessionCodec, encryptedMessageCodec, encryptedSessionCodec } from "../../src/stores.js";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
import { turnStreamId } from "../../src/runtime/http/chat-data.js";
import { toNodeListener } from "../../src/runtime/http/node.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import {
  available,
  memoryBackend,
  postgresBackend,
  redisBackend,
  redisClusterBackend,
  sqliteBackend,
} from "../stores/helpers.js";
import { BASE, call, fixture, Gate, harness, post, readReply, userTurn, waitFor } from "./setup.js";

type AnyPart = UIMessage["parts"][number] & Record<string, unknown>;
const partsOf = (message: UIMessage) => message.parts as AnyPart[];

const backends = [memoryBackend, sqliteBackend, postgresBackend(), redisBackend(), redisClusterBackend].filter(
  available,
);

async function getChat(handler: ChatHandler, id: string, owner = "ada"): Promise<UIMessage[]> {
  const response = await call(handler, "GET", `/chats/${id}`, owner);
  expect(response.status).toBe(200);
  return (await response.json()) as UIMessage[];
}

async function listChats(handler: ChatHandler, owner = "ada"): Promise<{ id: string; title: string }[]> {
  const response = await call(handler, "GET", "/chats?limit=100", owner);
  expect(response.status).toBe(200);
  return ((await response.json()) as { chats: { id: string; title: string }[] }).chats;
}

const streamOf = (handler: ChatHandler, id: string, owner = "ada") =>
  handler(new Request(`${BASE}/chat/${id}/stream`, { headers: { "x-owner": owner } }));
const stopOf = (handler: ChatHandler, id: string, owner = "ada") =>
  handler(
    new Request(`${BASE}/chat/${id}/stop`, {
      method: "POST",
      headers: { "x-owner": owner, "content-type": "application/json" },
      body: "{}",
    }),
  );

const textOf = (message: UIMessage) =>
  partsOf(message)
    .filter((p) => p.type === "text")
    .map((p) => p.text as string)
    .join("");

for (const backend of backends) {
  describe(`chat lifecycle on ${backend.name}`, () => {
    let url: string;
    let cleanup: () => Promise<void>;
    const opened: SessionStore[] = [];
    /** A store on the backend's location: for a server backend, a new connection (as another process has). */
    async function open(options: Parameters<typeof openStore>[1] = {}): Promise<SessionStore> {
      const store =
        backend.name === "memory" && opened[0] && !options.retention && !options.codec
          ? opened[0]
          : await openStore(url, options);
      if (!opened.includes(store)) opened.push(store);
      return store;
    }
    let store: SessionStore;
    let other: SessionStore;

    beforeAll(async () => {
      ({ url, cleanup } = await backend.location());
      store = await open();
      other = await open();
    });
    afterAll(async () => {
      for (const s of opened) await s.close();
      await cleanup();
    });

    const lease = { leaseMs: 600, stopWaitMs: 10_000 };
    /** A test of this backend (every built-in store has a stream buffer: the chat server needs it). */
    const test = (name: string, body: () => Promise<void>) =>
      it(name, async () => {
        expect(store.streams).toBeDefined();
        await body();
      });

    test("chats are owned sessions: listed with store.list, titled, another owner's id is absent on every route", async () => {
      const { handler } = harness(lease, store);
      await readReply(await post(handler, userTurn("own-a", "First words of chat a")));
      await readReply(await post(handler, userTurn("own-b", "First words of chat b")));
      await readReply(await post(handler, userTurn("own-c", "Bob's chat"), { owner: "bob-own" }));
      const chats = await listChats(handler);
      expect(chats.slice(0, 2).map((c) => [c.id, c.title])).toEqual([
        ["own-b", "First words of chat b"],
        ["own-a", "First words of chat a"],
      ]);
      const listed = await store.list({ owner: "ada", labels: { "statebag.type": "chat" } });
      expect(listed.items.map((i) => i.id)).toEqual(expect.arrayContaining(["ui-chat/own-a", "ui-chat/own-b"]));
      expect(listed.items.find((i) => i.id === "ui-chat/own-a")!.meta.labels).toEqual({ "statebag.type": "chat" });
      for (const response of [
        await call(handler, "GET", "/chats/own-a", "bob-own"),
        await call(handler, "DELETE", "/chats/own-a", "bob-own"),
        await streamOf(handler, "own-a", "bob-own"),
        await stopOf(handler, "own-a", "bob-own"),
        await post(handler, userTurn("own-a", "taking over"), { owner: "bob-own" }),
      ]) {
        expect(response.status).toBe(404);
        await response.text();
      }
      expect((await listChats(handler, "bob-own")).map((c) => c.id)).toEqual(["own-c"]);
      expect((await getChat(handler, "own-a")).map(textOf)[0]).toBe("First words of chat a");
      // Nothing runs: the stream route answers 204.
      expect((await streamOf(handler, "own-a")).status).toBe(204);
      const deleted = await call(handler, "DELETE", "/chats/own-a");
      expect(deleted.status).toBe(204);
      expect((await call(handler, "GET", "/chats/own-a")).status).toBe(404);
      expect(await store.get("ui-chat/own-a")).toBeUndefined();
      expect((await call(handler, "DELETE", "/chats/own-a")).status).toBe(404);
    });

    test("eraseOwner removes every chat of the owner: the receipt counts them and GET /chats is empty", async () => {
      const { handler } = harness(lease, store);
      for (const id of ["er-1", "er-2", "er-3"])
        await readReply(await post(handler, userTurn(id, `hello ${id}`), { owner: "erin" }));
      await readReply(await post(handler, userTurn("er-keep", "stays"), { owner: "frank" }));
      expect(await listChats(handler, "erin")).toHaveLength(3);
      const receipt = await store.eraseOwner("erin");
      expect(receipt).toMatchObject({ sessions: 3, complete: true });
      expect(await listChats(handler, "erin")).toEqual([]);
      expect((await call(handler, "GET", "/chats/er-1", "erin")).status).toBe(404);
      expect((await listChats(handler, "frank")).map((c) => c.id)).toEqual(["er-keep"]);
    });

    test("retention by label purges chats", async () => {
      const kept = await open({ retention: { labels: [{ match: { "statebag.type": "chat" }, maxIdleMs: 1 }] } });
      const { handler } = harness(lease, kept);
      await readReply(await post(handler, userTurn("ret-1", "short-lived"), { owner: "rita" }));
      expect(await listChats(handler, "rita")).toHaveLength(1);
      // Purged once it has been idle past 1 ms. A purge that removes other chats of this store (they
      // are idle too) does not mean this one went: wait until it is gone from the listing.
      await waitFor(async () => {
        await kept.purgeExpired();
        return (await listChats(handler, "rita")).length === 0 ? true : undefined;
      });
      expect(await listChats(handler, "rita")).toEqual([]);
      expect((await call(handler, "GET", "/chats/ret-1", "rita")).status).toBe(404);
    });

    test("an encrypting store still lists, reads and erases chats", async () => {
      const keyring = { current: "k1", keys: { k1: Buffer.alloc(32, 7) } };
      const sealed = await open({
        codec: encryptedSessionCodec({ keyring, store: "chat-test" }),
        messageCodec: encryptedMessageCodec({ keyring, store: "chat-test" }),
      });
      const { handler } = harness(lease, sealed);
      await readReply(await post(handler, userTurn("enc-1", "a secret title"), { owner: "enzo" }));
      expect((await listChats(handler, "enzo")).map((c) => [c.id, c.title])).toEqual([["enc-1", "a secret title"]]);
      expect((await getChat(handler, "enc-1", "enzo")).map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(await sealed.eraseOwner("enzo")).toMatchObject({ sessions: 1 });
      expect(await listChats(handler, "enzo")).toEqual([]);
    });

    test("the user's message is durable: the client leaves mid-stream and the turn is still committed", async () => {
      const { handler, client } = harness(lease, store);
      const gate = (client.gate = new Gate());
      const response = await post(handler, userTurn("dur-1", "Tell me a story", "m-dur-1"));
      const reader = response.body!.getReader();
      await gate.reachedPromise;
      await reader.cancel();
      const during = await getChat(handler, "dur-1");
      expect(during.map((m) => m.id)).toEqual(["m-dur-1"]);
      expect((await store.get("ui-chat/dur-1"))!.meta.labels?.["statebag.activeStream"]).toBeDefined();
      gate.open();
      const chat = await waitFor(async () => {
        const c = await getChat(handler, "dur-1");
        return c.length === 2 ? c : undefined;
      });
      expect(textOf(chat[1])).toContain("never saved");
      expect((await store.get("ui-chat/dur-1"))!.meta.labels).toEqual({ "statebag.type": "chat" });
    });

    test("a second handler on the same store resumes the running turn from its first chunk to its end", async () => {
      const a = harness(lease, store);
      const b = harness(lease, other);
      const gate = (a.client.gate = new Gate());
      const first = post(a.handler, userTurn("res-1", "Tell me a story", "m-res-1"));
      const direct = readReply(await first);
      await gate.reachedPromise;
      const resumed = await streamOf(b.handler, "res-1");
      expect(resumed.status).toBe(200);
      const reading = readReply(resumed);
      gate.open();
      const [original, replayed] = await Promise.all([direct, reading]);
      expect(replayed.errors).toEqual([]);
      expect(replayed.chunks).toEqual(original.chunks);
      expect(replayed.chunks[0]).toMatchObject({ type: "start" });
      expect(replayed.chunks.at(-1)).toMatchObject({ type: "finish" });
      expect(textOf(replayed.message)).toContain("Once upon a time");
      // The streamed message is the stored one (same id).
      const stored = await getChat(b.handler, "res-1");
      expect(stored[1].id).toBe(original.message.id);
      expect((await streamOf(b.handler, "res-1")).status).toBe(204);
    });

    test("stop sent to another handler stops the run, keeps the partial answer marked stopped, and the next message continues", async () => {
      const a = harness(lease, store);
      const b = harness(lease, other);
      const gate = (a.client.gate = new Gate());
      const reading = readReply(await post(a.handler, userTurn("stop-1", "Tell me a story", "m-stop-1")));
      await gate.reachedPromise;
      const stopped = await stopOf(b.handler, "stop-1");
      expect(stopped.status).toBe(200);
      const body = (await stopped.json()) as { stopped: boolean; committed: boolean; kept: UIMessage | null };
      expect(body).toMatchObject({ stopped: true, committed: true });
      expect(textOf(body.kept!)).toMatch(/^Once upon/);
      expect(textOf(body.kept!)).not.toContain("never saved");
      const { chunks } = await reading;
      expect(chunks.at(-1)).toMatchObject({ type: "finish", messageMetadata: { statebag: { finish: "stopped" } } });
      const chat = await getChat(a.handler, "stop-1");
      expect(chat.map((m) => m.role)).toEqual(["user", "assistant"]);
      expect(chat[1].metadata).toEqual({ statebag: { finish: "stopped" } });
      expect(textOf(chat[1])).toBe(textOf(body.kept!));
      a.client.gate = undefined;
      await readReply(await post(b.handler, userTurn("stop-1", "and then?", "m-stop-2")));
      expect((await getChat(a.handler, "stop-1")).map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "user",
        "assistant",
      ]);
      // Nothing runs any more.
      expect(await (await stopOf(b.handler, "stop-1")).json()).toEqual({ stopped: false, committed: false });
    });

    test("a turn whose writer died is recovered once its lease passed: the user's message stays, the answer is marked interrupted, the chat is free", async () => {
      const { handler } = harness(lease, store);
      const streams = store.streams!;
      // What a server killed mid-turn leaves: the chat with its user message and label, a stream
      // with the chunks so far and a lease nobody renews.
      await readReply(await post(handler, userTurn("dead-1", "Hello there", "m-dead-1")));
      const before = (await store.get("ui-chat/dead-1"))!;
      const streamId = `dead-${Date.now()}`;
      await streams.open(streamId, { sessionId: "ui-chat/dead-1", owner: "ada", leaseMs: 300 });
      const chunks = [
        { type: "start", messageId: `msg-${streamId}` },
        { type: "start-step" },
        { type: "text-start", id: "t1" },
        { type: "text-delta", id: "t1", delta: "Half of " },
        { type: "text-delta", id: "t1", delta: "an answer" },
      ].map((c) => JSON.stringify(c));
      await streams.append(streamId, chunks, 300);
      const session = structuredClone(before.session);
      const history = session.stateBag["statebag.chatHistory"] as unknown as { messages: unknown[] };
      history.messages = [
        ...history.messages,
        { role: "user", contents: [{ $type: "text", text: "Are you there?" }], messageId: "m-dead-2" },
      ];
      await store.save(session, {
        expectedRevision: before.revision,
        meta: { owner: "ada", labels: { "statebag.type": "chat", "statebag.activeStream": streamId } },
      });
      // While the lease runs, the chat is busy.
      const busy = await post(handler, userTurn("dead-1", "hello?", "m-dead-3"));
      if (busy.status === 409)
        expect(((await busy.json()) as { type: string }).type).toBe("urn:statebag:problem:chat-busy");
      else await readReply(busy); // the lease passed already on a slow machine: recovered on this POST
      const chat = await waitFor(async () => {
        const c = await getChat(handler, "dead-1");
        return c.some((m) => m.id === `msg-${streamId}`) ? c : undefined;
      });
      const answer = chat.find((m) => m.id === `msg-${streamId}`)!;
      expect(textOf(answer)).toBe("Half of an answer");
      expect(answer.metadata).toEqual({ statebag: { finish: "interrupted" } });
      expect(chat.some((m) => m.id === "m-dead-2")).toBe(true);
      expect((await streams.info(streamId))?.status).toBe("interrupted");
      const next = await post(handler, userTurn("dead-1", "new message", "m-dead-4"));
      expect(next.status).toBe(200);
      await readReply(next);
      expect((await getChat(handler, "dead-1")).at(-2)!.id).toBe("m-dead-4");
    });

    test("erasure during a running turn: the turn commits nothing and the owner has no chat left", async () => {
      const { handler, client } = harness(lease, store);
      const gate = (client.gate = new Gate());
      const reading = readReply(await post(handler, userTurn("era-1", "Tell me a story"), { owner: "eve" }));
      await gate.reachedPromise;
      const receipt = await store.eraseOwner("eve");
      expect(receipt.sessions).toBe(1);
      gate.open();
      const { chunks } = await reading;
      expect(chunks.at(-1)).toMatchObject({ type: "error" });
      expect(await listChats(handler, "eve")).toEqual([]);
      expect((await call(handler, "GET", "/chats/era-1", "eve")).status).toBe(404);
      expect(await store.get("ui-chat/era-1")).toBeUndefined();
      expect((await store.list({ owner: "eve" })).items).toEqual([]);
    });

    test("a reused message id: an assistant message's is refused and nothing is stored; a user message's is an edit (a new version)", async () => {
      const { handler } = harness(lease, store);
      await readReply(await post(handler, userTurn("ids-1", "first", "m-ids-1")));
      const chat = await getChat(handler, "ids-1");
      const before = (await store.get("ui-chat/ids-1"))!.revision;
      const response = await post(handler, userTurn("ids-1", "again", chat[1].id));
      expect(response.status).toBe(409);
      expect(((await response.json()) as { type: string }).type).toBe("urn:statebag:problem:message-id-taken");
      expect((await store.get("ui-chat/ids-1"))!.revision).toBe(before);
      expect(new Set(chat.map((m) => m.id)).size).toBe(chat.length);
      // useChat's sendMessage({ messageId }): the user message's id names the message edited.
      await readReply(await post(handler, userTurn("ids-1", "again", "m-ids-1")));
      const edited = await getChat(handler, "ids-1");
      expect(edited).toHaveLength(2);
      expect(edited[0].id).not.toBe("m-ids-1");
      expect((edited[0].metadata as { branch?: { count: number } }).branch?.count).toBe(2);
      expect(new Set(edited.map((m) => m.id)).size).toBe(edited.length);
    });

    test("an approval answered, then the tab closes: the history shows the tool's result as soon as it ran, then the answer", async () => {
      const { handler, client, toolRuns } = harness(lease, store);
      const body = { ...fixture("approval-request-turn.json"), id: "appr-1" };
      const first = await readReply(await post(handler, body));
      const asked = partsOf(first.message).find((p) => p.type === "tool-send_email")!;
      const approvalId = (asked.approval as { id: string }).id;
      const answered = {
        ...first.message,
        parts: first.message.parts.map((p) =>
          p === (asked as unknown)
            ? { ...asked, state: "approval-responded", approval: { id: approvalId, approved: true } }
            : p,
        ),
      };
      const gate = (client.responseGate = new Gate());
      const response = await post(handler, { id: "appr-1", messages: [answered], trigger: "submit-message" });
      expect(response.status).toBe(200);
      await response.body!.cancel(); // the tab closes
      await gate.reachedPromise; // the tool ran; the model is answering
      expect(toolRuns.send_email).toBe(1);
      const shown = (await getChat(handler, "appr-1")).flatMap(partsOf).find((p) => p.type === "tool-send_email");
      expect(shown).toMatchObject({
        state: "output-available",
        output: { sent: true },
        approval: { id: approvalId, approved: true },
      });
      // A second answer while it runs: busy, and the tool does not run again.
      const again = await post(handler, { id: "appr-1", messages: [answered], trigger: "submit-message" });
      expect(again.status).toBe(409);
      await again.text();
      gate.open();
      await waitFor(async () =>
        (await store.get("ui-chat/appr-1"))!.meta.labels?.["statebag.activeStream"] ? undefined : true,
      );
      const after = await post(handler, { id: "appr-1", messages: [answered], trigger: "submit-message" });
      expect(after.status).toBe(409);
      expect(((await after.json()) as { type: string }).type).toBe("urn:statebag:problem:tool-approval-not-pending");
      const parts = (await getChat(handler, "appr-1")).flatMap(partsOf);
      expect(parts.filter((p) => p.type === "tool-send_email")).toEqual([
        expect.objectContaining({ state: "output-available", output: { sent: true, to: "ada@example.com" } }),
      ]);
      expect(toolRuns.send_email).toBe(1);
    });

    test("graceful shutdown: handler.idle() resolves once the running turn committed and its stream finished; the store then closes cleanly", async () => {
      // A store of its own (closed below); on memory a separate instance.
      const own = await open({ codec: defaultSessionCodec() });
      const { handler, client, errors } = harness(lease, own);
      await readReply(await post(handler, userTurn("idle-1", "Hello", "m-idle-1")));
      await handler.idle(); // nothing runs: at once
      const gate = (client.gate = new Gate());
      const reading = readReply(await post(handler, userTurn("idle-1", "Tell me a story", "m-idle-2")));
      await gate.reachedPromise;
      let idle = false;
      const waiting = handler.idle().then(() => (idle = true));
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(idle).toBe(false);
      gate.open();
      await reading;
      await waiting;
      const stored = (await own.get("ui-chat/idle-1"))!;
      const history = stored.session.stateBag["statebag.chatHistory"] as unknown as {
        messages: { messageId?: string }[];
      };
      const answerId = history.messages.at(-1)!.messageId!;
      expect(history.messages.map((m) => m.messageId).slice(2)).toEqual(["m-idle-2", answerId]);
      expect((await own.streams!.info(answerId.slice("msg-".length)))?.status).toBe("done");
      await own.close();
      opened.splice(opened.indexOf(own), 1);
      expect(errors).toEqual([]);
    });

    describe("a turn on a chat that exists writes the chat once, at its end", () => {
      /** The chat as stored, and the id of the stream a turn on it opens. */
      async function storedChat(id: string) {
        const stored = (await store.get(`ui-chat/${id}`))!;
        return { stored, streamId: turnStreamId(stored.session.id, stored.revision, stored.meta.updatedAt) };
      }

      test("its stream holds the user's message: the chat shows it, another handler resumes and stops the turn, the commit writes both", async () => {
        const a = harness(lease, store);
        const b = harness(lease, other);
        await readReply(await post(a.handler, userTurn("rec-1", "Hello", "m-rec-1")));
        const { stored: before, streamId } = await storedChat("rec-1");
        const gate = (a.client.gate = new Gate());
        const direct = readReply(await post(a.handler, userTurn("rec-1", "Tell me a story", "m-rec-2")));
        await gate.reachedPromise;
        // Nothing written to the chat yet; the message is shown to every reader, from the stream.
        const during = (await store.get("ui-chat/rec-1"))!;
        expect(during.revision).toBe(before.revision);
        expect(during.meta.labels).toEqual({ "statebag.type": "chat" });
        expect((await getChat(b.handler, "rec-1")).map((m) => m.id)).toEqual([
          "m-rec-1",
          (await getChat(a.handler, "rec-1"))[1].id,
          "m-rec-2",
        ]);
        expect((await store.streams!.info(streamId))?.status).toBe("running");
        // Another process resumes from the answer's first chunk: the record is the server's own.
        const resumed = await streamOf(b.handler, "rec-1");
        expect(resumed.status).toBe(200);
        const reading = readReply(resumed);
        // A second message meanwhile is busy, from either handler.
        const busy = await post(b.handler, userTurn("rec-1", "hurry", "m-rec-3"));
        expect(busy.status).toBe(409);
        await busy.text();
        gate.open();
        const [original, replayed] = await Promise.all([direct, reading]);
        expect(replayed.chunks).toEqual(original.chunks);
        expect(replayed.chunks[0]).toMatchObject({ type: "start", messageId: `msg-${streamId}` });
        const after = await storedChat("rec-1");
        expect(after.stored.revision).toBeGreaterThan(before.revision);
        const chat = await getChat(b.handler, "rec-1");
        expect(chat.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
        expect(chat[3].id).toBe(`msg-${streamId}`);
        expect((await streamOf(b.handler, "rec-1")).status).toBe(204);

        // Stop from the other handler: the partial answer is kept, marked stopped, after the message.
        const gate2 = (a.client.gate = new Gate());
        const reading2 = readReply(await post(a.handler, userTurn("rec-1", "Another story", "m-rec-4")));
        await gate2.reachedPromise;
        const stopped = await stopOf(b.handler, "rec-1");
        expect(stopped.status).toBe(200);
        const body = (await stopped.json()) as { stopped: boolean; committed: boolean; kept: UIMessage | null };
        expect(body).toMatchObject({ stopped: true, committed: true });
        expect(textOf(body.kept!)).toMatch(/^Once upon/);
        await reading2;
        const last = await getChat(a.handler, "rec-1");
        expect(last.map((m) => m.id).slice(4, 5)).toEqual(["m-rec-4"]);
        expect(last[5].metadata).toEqual({ statebag: { finish: "stopped" } });
        expect(await (await stopOf(b.handler, "rec-1")).json()).toEqual({ stopped: false, committed: false });
      });

      test("its writer died before the commit: once the lease passed, the next load folds the user's message and the partial answer in", async () => {
        const { handler } = harness(lease, store);
        const streams = store.streams!;
        await readReply(await post(handler, userTurn("rdead-1", "Hello there", "m-rdead-1")));
        // What a server killed mid-turn leaves: the chat as it was, and the revision's stream with
        // the user's message (its first chunk), the answer so far, and a lease nobody renews.
        const { stored: before, streamId } = await storedChat("rdead-1");
        await streams.open(streamId, { sessionId: "ui-chat/rdead-1", owner: "ada", leaseMs: 300 });
        const record = {
          type: "statebag-turn",
          message: { role: "user", contents: [{ $type: "text", text: "Are you there?" }], messageId: "m-rdead-2" },
        };
        const chunks = [
          record,
          { type: "start", messageId: `msg-${streamId}` },
          { type: "start-step" },
          { type: "text-start", id: "t1" },
          { type: "text-delta", id: "t1", delta: "Half of " },
          { type: "text-delta", id: "t1", delta: "an answer" },
        ].map((c) => JSON.stringify(c));
        await streams.append(streamId, chunks, 300);
        // While the lease runs: the chat shows the message and is busy.
        const busy = await post(handler, userTurn("rdead-1", "hello?", "m-rdead-3"));
        if (busy.status === 409) {
          expect(((await busy.json()) as { type: string }).type).toBe("urn:statebag:problem:chat-busy");
          expect((await getChat(handler, "rdead-1")).map((m) => m.id)).toContain("m-rdead-2");
        } else await readReply(busy); // the lease passed already on a slow machine: folded in on this POST
        const chat = await waitFor(async () => {
          const c = await getChat(handler, "rdead-1");
          return c.some((m) => m.id === `msg-${streamId}`) ? c : undefined;
        });
        const at = chat.findIndex((m) => m.id === "m-rdead-2");
        expect(at).toBe(2);
        expect(chat[at + 1].id).toBe(`msg-${streamId}`);
        expect(textOf(chat[at + 1])).toBe("Half of an answer");
        expect(chat[at + 1].metadata).toEqual({ statebag: { finish: "interrupted" } });
        expect((await streams.info(streamId))?.status).toBe("interrupted");
        // Folded into the stored chat, once.
        const stored = (await store.get("ui-chat/rdead-1"))!;
        expect(stored.revision).toBeGreaterThan(before.revision);
        const ids = (await getChat(handler, "rdead-1")).map((m) => m.id);
        expect(ids.filter((id) => id === "m-rdead-2")).toHaveLength(1);
        const next = await post(handler, userTurn("rdead-1", "new message", "m-rdead-4"));
        expect(next.status).toBe(200);
        await readReply(next);
        expect((await getChat(handler, "rdead-1")).at(-2)!.id).toBe("m-rdead-4");
      });

      test("a commit that fails leaves the user's message in the stream: the next load folds it in; nothing is lost", async () => {
        let failSaves = false;
        const failing = new Proxy(store, {
          get(target, key, receiver) {
            if (key === "save")
              return (...args: Parameters<SessionStore["save"]>) =>
                failSaves ? Promise.reject(new Error("the database went away")) : target.save(...args);
            const value = Reflect.get(target, key, receiver) as unknown;
            return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          },
        });
        const { handler, errors } = harness(lease, failing);
        await readReply(await post(handler, userTurn("rfail-1", "Hello", "m-rfail-1")));
        const { stored: before, streamId } = await storedChat("rfail-1");
        failSaves = true;
        const { chunks } = await readReply(await post(handler, userTurn("rfail-1", "Remember this", "m-rfail-2")));
        expect(chunks.at(-1)).toMatchObject({ type: "error" });
        expect(errors.map(String)).toContain("Error: the database went away");
        expect((await store.get("ui-chat/rfail-1"))!.revision).toBe(before.revision);
        // Its stream is finished (and kept, with the message) once the turn is over.
        await waitFor(async () => {
          const status = (await store.streams!.info(streamId))?.status;
          return status !== undefined && status !== "running" ? true : undefined;
        });
        failSaves = false;
        // The next reader folds the turn in: the user's message and what the answer had said.
        const chat = await getChat(handler, "rfail-1");
        expect(chat.map((m) => m.id).slice(0, 4)).toEqual(["m-rfail-1", chat[1].id, "m-rfail-2", `msg-${streamId}`]);
        expect(chat[3].metadata).toEqual({ statebag: { finish: "interrupted" } });
        const stored = (await store.get("ui-chat/rfail-1"))!;
        expect(stored.revision).toBeGreaterThan(before.revision);
        const next = await post(handler, userTurn("rfail-1", "and now?", "m-rfail-3"));
        expect(next.status).toBe(200);
        await readReply(next);
      });

      test("two turns on one revision from two handlers: one runs, the other is busy; a save meanwhile does not lose the turn", async () => {
        const a = harness(lease, store);
        const b = harness(lease, other);
        await readReply(await post(a.handler, userTurn("rtwo-1", "Hello", "m-rtwo-1")));
        a.client.gate = new Gate();
        b.client.gate = new Gate();
        const [ra, rb] = await Promise.all([
          post(a.handler, userTurn("rtwo-1", "Tell me a story", "m-rtwo-a")),
          post(b.handler, userTurn("rtwo-1", "Tell me a story", "m-rtwo-b")),
        ]);
        expect([ra.status, rb.status].sort()).toEqual([200, 409]);
        const [winner, loser, side] = ra.status === 200 ? [ra, rb, a] : [rb, ra, b];
        expect(((await loser.json()) as { type: string }).type).toBe("urn:statebag:problem:chat-busy");
        const reading = readReply(winner);
        await side.client.gate!.reachedPromise;
        // Someone else saves the chat while the turn runs (an app's own write): the turn's commit
        // finds another revision and puts its messages on what is there now.
        const now = (await store.get("ui-chat/rtwo-1"))!;
        await store.save(now.session, { expectedRevision: now.revision });
        side.client.gate!.open();
        const { chunks } = await reading;
        expect(chunks.at(-1)).toMatchObject({ type: "finish" });
        const chat = await getChat(a.handler, "rtwo-1");
        const mine = ra.status === 200 ? "m-rtwo-a" : "m-rtwo-b";
        expect(chat.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
        expect(chat[2].id).toBe(mine);
        expect(textOf(chat[3])).toContain("Once upon a time");
      });
    });
  });
}

describe("handler hardening", () => {
  it("TRACE (and any method a path does not have) is a 405 with Allow, never a 500", async () => {
    const { handler } = harness();
    for (const [method, path, allow] of [
      ["TRACE", "/chat", "POST"],
      ["PUT", "/chats", "GET"],
      ["PATCH", "/chats/a1", "GET, DELETE"],
      ["toString", "/chats/a1", "GET, DELETE"],
      ["constructor", "/chat", "POST"],
      ["POST", "/chat/a1/stream", "GET"],
      ["GET", "/chat/a1/stop", "POST"],
    ] as const) {
      // `new Request` refuses TRACE (a forbidden method): a server adapter passes what it was sent.
      const request =
        method === "TRACE"
          ? ({ method, url: `${BASE}${path}`, headers: new Headers({ "x-owner": "ada" }) } as Request)
          : new Request(`${BASE}${path}`, { method, headers: { "x-owner": "ada" } });
      const response = await handler(request);
      expect([method, response.status]).toEqual([method, 405]);
      expect(response.headers.get("allow")).toBe(allow);
      expect(((await response.json()) as { type: string }).type).toBe("urn:statebag:problem:method-not-allowed");
    }
    for (const path of ["/__proto__", "/chats/a1/__proto__", "/chat/a1/constructor", "/chat/a1/hasOwnProperty/x"]) {
      const response = await handler(new Request(`${BASE}${path}`, { headers: { "x-owner": "ada" } }));
      expect([path, response.status]).toEqual([path, 404]);
      await response.text();
    }
  });

  it("through toNodeListener, TRACE (which a fetch Request cannot carry) is a 405 with the path's Allow, a 404 off the handler's paths", async () => {
    const { handler } = harness();
    const server = createServer(toNodeListener(handler));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const ask = (method: string, path: string) =>
      new Promise<{ status: number; allow: string | undefined; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, method, path }, (res) => {
          let body = "";
          res.on("data", (d) => (body += d));
          res.on("end", () => resolve({ status: res.statusCode!, allow: res.headers.allow, body }));
        });
        req.on("error", reject);
        req.end();
      });
    try {
      expect(await ask("TRACE", "/api/chat")).toMatchObject({ status: 405, allow: "POST" });
      expect(await ask("TRACE", "/api/chats/a1")).toMatchObject({ status: 405, allow: "GET, DELETE" });
      expect(await ask("TRACE", "/api/chat/a1/stream")).toMatchObject({ status: 405, allow: "GET" });
      const off = await ask("TRACE", "/elsewhere");
      expect(off.status).toBe(404);
      expect(JSON.parse(off.body)).toMatchObject({ type: "urn:statebag:problem:not-found" });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a stop a page of another site could send (no JSON content type) is a 415 and stops nothing", async () => {
    const { handler, client } = harness();
    const gate = (client.gate = new Gate());
    const reading = readReply(await post(handler, userTurn("csrf-1", "Tell me a story")));
    await gate.reachedPromise;
    for (const headers of [
      {},
      { "content-type": "text/plain" },
      { "content-type": "application/x-www-form-urlencoded" },
    ]) {
      const response = await handler(
        new Request(`${BASE}/chat/csrf-1/stop`, {
          method: "POST",
          headers: { "x-owner": "ada", ...headers },
          body: "",
        }),
      );
      expect(response.status).toBe(415);
      await response.text();
    }
    gate.open();
    const { message } = await reading;
    expect(message.metadata).toBeUndefined();
    expect(
      partsOf(message)
        .filter((p) => p.type === "text")
        .map((p) => p.text)
        .join(""),
    ).toContain("never saved");
  });

  it("a JSON body in another charset than UTF-8 is a 415; application/json with charset=utf-8 is read", async () => {
    const { handler } = harness();
    for (const type of [
      "application/json;charset=utf-16",
      "application/json; charset=UTF-16LE",
      "application/jsonfoo",
      "application/json-patch+json",
    ]) {
      const response = await post(handler, userTurn("ct-1", "hi"), { headers: { "content-type": type } });
      expect([type, response.status]).toEqual([type, 415]);
      await response.text();
    }
    for (const type of ["application/json; charset=utf-8", 'application/json;charset="UTF-8"', "Application/JSON"]) {
      const response = await post(handler, userTurn(`ct-${type.length}`, "hi"), { headers: { "content-type": type } });
      expect([type, response.status]).toEqual([type, 200]);
      await readReply(response);
    }
  });
});
