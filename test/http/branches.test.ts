/**
 * Branches through the chat handler on every store (memory, SQLite, PostgreSQL, Redis, Redis Cluster): useChat's regenerate
 * (`regenerate-message` with `messageId`), an edit (`submit-message` with the id of an earlier user
 * message), the ‹ 1/2 › marks of GET /chats/:id (`metadata.branch`), switching a branch, forking
 * into a new chat of the same owner (listed, erased with the owner), and two edits at once: one
 * wins, the other is a 409 and saves nothing.
 */
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
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
import { BASE, call, Gate, harness, post, readReply, userTurn } from "./setup.js";

const backends = [memoryBackend, sqliteBackend, postgresBackend(), redisBackend(), redisClusterBackend].filter(
  available,
);

type Branch = { index: number; count: number; siblingIds: string[] };
const branchOf = (message: UIMessage) => (message.metadata as { branch?: Branch } | undefined)?.branch;
const textOf = (message: UIMessage) =>
  (message.parts as { type: string; text?: string }[])
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");

async function getChat(handler: ChatHandler, id: string, owner = "ada"): Promise<UIMessage[]> {
  const response = await call(handler, "GET", `/chats/${id}`, owner);
  expect(response.status).toBe(200);
  return (await response.json()) as UIMessage[];
}

const postTo = (handler: ChatHandler, path: string, body: unknown, owner = "ada") =>
  handler(
    new Request(`${BASE}${path}`, {
      method: "POST",
      headers: { "x-owner": owner, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );

for (const backend of backends) {
  describe(`branches through the handler on ${backend.name}`, () => {
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

    it("regenerate, edit, switch and fork: each stored, shown with ‹ n/count ›, the fork listed and erased with its owner", async () => {
      const { handler, errors } = harness({}, store);
      const first = await readReply(await post(handler, userTurn("br-1", "Hello there", "m-q1")));
      const answer1 = first.message.id;
      expect((await getChat(handler, "br-1")).map((m) => m.id)).toEqual(["m-q1", answer1]);

      // useChat's regenerate(): the answer is written again, the first one stays as its sibling.
      const regenerated = await readReply(
        await post(handler, {
          id: "br-1",
          trigger: "regenerate-message",
          messageId: answer1,
          messages: [{ id: "m-q1", role: "user", parts: [{ type: "text", text: "Hello there" }] }],
        }),
      );
      const answer2 = regenerated.message.id;
      expect(answer2).not.toBe(answer1);
      let chat = await getChat(handler, "br-1");
      expect(chat.map((m) => m.id)).toEqual(["m-q1", answer2]);
      expect(branchOf(chat[0])).toBeUndefined();
      expect(branchOf(chat[1])).toEqual({ index: 1, count: 2, siblingIds: [answer1, answer2] });

      // ‹ 1/2 ›: back to the first answer.
      const switched = await postTo(handler, "/chats/br-1/switch", { messageId: answer1 });
      expect(switched.status).toBe(200);
      expect(((await switched.json()) as UIMessage[]).map((m) => m.id)).toEqual(["m-q1", answer1]);
      chat = await getChat(handler, "br-1");
      expect(chat.map((m) => m.id)).toEqual(["m-q1", answer1]);
      expect(branchOf(chat[1])?.index).toBe(0);

      // An edit: useChat sends the edited message with the id it had; a new branch from its parent.
      const edited = await readReply(await post(handler, userTurn("br-1", "Hello again", "m-q1")));
      chat = await getChat(handler, "br-1");
      expect(chat).toHaveLength(2);
      expect(textOf(chat[0])).toBe("Hello again");
      expect(chat[1].id).toBe(edited.message.id);
      const editedId = chat[0].id;
      expect(editedId).not.toBe("m-q1");
      expect(branchOf(chat[0])).toEqual({ index: 1, count: 2, siblingIds: ["m-q1", editedId] });
      // The original question still holds both answers.
      await postTo(handler, "/chats/br-1/switch", { messageId: "m-q1" });
      chat = await getChat(handler, "br-1");
      expect(chat.map((m) => m.id)).toEqual(["m-q1", answer2]);
      expect(branchOf(chat[1])?.count).toBe(2);

      // Fork up to the first question: a new chat of the same owner, listed, naming its source.
      const forked = await postTo(handler, "/chats/br-1/fork", { messageId: "m-q1", id: "br-1-fork" });
      expect(forked.status).toBe(201);
      expect(await forked.json()).toEqual({ id: "br-1-fork", forkedFrom: { chatId: "br-1", messageId: "m-q1" } });
      expect((await getChat(handler, "br-1-fork")).map((m) => m.id)).toEqual(["m-q1"]);
      const list = (await (await call(handler, "GET", "/chats?limit=100")).json()) as {
        chats: { id: string; forkedFrom?: string }[];
      };
      expect(list.chats.find((c) => c.id === "br-1-fork")?.forkedFrom).toBe("br-1");
      // The fork answers on: a turn in it leaves the source as it was.
      await readReply(await post(handler, userTurn("br-1-fork", "And then?", "m-f2")));
      expect((await getChat(handler, "br-1-fork")).map((m) => m.id).slice(0, 2)).toEqual(["m-q1", "m-f2"]);
      expect((await getChat(handler, "br-1")).map((m) => m.id)).toEqual(["m-q1", answer2]);

      // Another owner sees none of it; unknown messages and taken ids are refused, nothing saved.
      expect((await postTo(handler, "/chats/br-1/switch", { messageId: answer1 }, "bob")).status).toBe(404);
      expect((await postTo(handler, "/chats/br-1/fork", { messageId: "m-q1" }, "bob")).status).toBe(404);
      const missing = await postTo(handler, "/chats/br-1/switch", { messageId: "nope" });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { type: string }).type).toContain("message-not-found");
      expect((await postTo(handler, "/chats/br-1/fork", { messageId: "m-q1", id: "br-1-fork" })).status).toBe(409);
      const badRegenerate = await post(handler, {
        id: "br-1",
        trigger: "regenerate-message",
        messageId: "nope",
        messages: [],
      });
      expect(badRegenerate.status).toBe(404);

      // Erasing the owner takes the fork with the chat.
      await store.eraseOwner("ada");
      expect((await call(handler, "GET", "/chats/br-1")).status).toBe(404);
      expect((await call(handler, "GET", "/chats/br-1-fork")).status).toBe(404);
      expect(errors).toEqual([]);
    });

    it("two edits of one chat at once: one wins, the other is a 409 and saves nothing", async () => {
      const { handler, client } = harness({}, store);
      await readReply(await post(handler, userTurn("br-2", "Hi", "m-h1")));
      const gate = (client.gate = new Gate());
      const winner = post(handler, userTurn("br-2", "Tell me a story", "m-h1"));
      await gate.reachedPromise;
      const loser = await post(handler, userTurn("br-2", "Tell me a poem", "m-h1"));
      expect(loser.status).toBe(409);
      gate.open();
      await readReply(await winner);
      client.gate = undefined;
      const chat = await getChat(handler, "br-2");
      expect(textOf(chat[0])).toBe("Tell me a story");
      expect(branchOf(chat[0])?.count).toBe(2);
      expect(JSON.stringify(chat)).not.toContain("poem");
      await store.eraseOwner("ada");
    });
  });
}
