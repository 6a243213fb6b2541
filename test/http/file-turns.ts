/**
 * What the tests of files in a turn not committed yet share (pending-turn-files*.test.ts): a PNG
 * image, a useChat request sending a message with it, a store whose commit can be made to fail,
 * and the chat as `GET /chats/:id` shows it.
 */
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import type { UIMessage } from "ai";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { sweepOwnerBlobs } from "../../src/runtime/stores/blob-sweep.js";
import { BASE, call } from "./setup.js";

const PNG_HEAD = Buffer.from("89504e470d0a1a0a", "hex");
export const image = (size: number) => Buffer.concat([PNG_HEAD, randomBytes(size - PNG_HEAD.length)]);

export function fileTurn(chatId: string, messageId: string, text: string, bytes: Buffer) {
  return {
    id: chatId,
    trigger: "submit-message",
    messages: [
      {
        id: messageId,
        role: "user",
        parts: [
          { type: "text", text },
          { type: "file", url: `data:image/png;base64,${bytes.toString("base64")}`, mediaType: "image/png" },
        ],
      },
    ],
  };
}

/** `store`, whose saves fail while `failing.on` is true (the database went away at the commit). */
export function withFailingSaves(store: SessionStore): { store: SessionStore; failing: { on: boolean } } {
  const failing = { on: false };
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      if (key === "save")
        return (...args: Parameters<SessionStore["save"]>) =>
          failing.on ? Promise.reject(new Error("the database went away")) : target.save(...args);
      const value = Reflect.get(target, key, receiver) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: proxy, failing };
}

export async function getChat(handler: ChatHandler, id: string): Promise<UIMessage[]> {
  const response = await call(handler, "GET", `/chats/${id}`);
  expect(response.status).toBe(200);
  return (await response.json()) as UIMessage[];
}

/**
 * The chat shows the user's message of an uncommitted file turn, folded in, with the file served
 * byte for byte; a zero-grace sweep keeps it since the chat refers to it.
 */
export async function expectFoldedFile(
  handler: ChatHandler,
  store: SessionStore,
  chatId: string,
  messageId: string,
  hash: string,
  bytes: Buffer,
): Promise<void> {
  const chat = await getChat(handler, chatId);
  const user = chat.find((m) => m.id === messageId)!;
  const url = `/api/chat/${chatId}/files/${hash}`;
  expect(user.parts).toContainEqual(expect.objectContaining({ type: "file", url }));
  const file = await handler(new Request(`${BASE}${url.replace("/api", "")}`, { headers: { "x-owner": "ada" } }));
  expect(file.status).toBe(200);
  expect(Buffer.from(await file.arrayBuffer()).equals(bytes)).toBe(true);
  expect(await sweepOwnerBlobs(store, "ada", { graceMs: 0 })).toMatchObject({ blobs: 0 });
  expect(await store.blobs!.has(hash, { owner: "ada" })).toBe(true);
}
