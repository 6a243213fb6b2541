/**
 * Files in chats: a user message's file part (a data: URL) goes to the store's blob store before
 * the message is committed, the chat keeps a reference, GET /chats/:id shows it with the files
 * route's URL, and GET /chat/:id/files/:hash serves it to its owner only (ranges, safe headers).
 * Erasure and retention take the blobs with the sessions.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ChatHandler } from "../../src/runtime/http/handler.js";
import { sha256Hex } from "../../src/runtime/blobs/references.js";
import { sweepOwnerBlobs } from "../../src/runtime/stores/blob-sweep.js";
import { purgeRetention } from "../../src/runtime/stores/retention.js";
import { BASE, call, harness, post, readReply } from "./setup.js";

const PNG_HEAD = Buffer.from("89504e470d0a1a0a", "hex");
const image = (size: number) => Buffer.concat([PNG_HEAD, randomBytes(size - PNG_HEAD.length)]);
const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString("base64")}`;

function fileTurn(chatId: string, text: string, files: { url: string; mediaType: string; filename?: string }[]) {
  return {
    id: chatId,
    trigger: "submit-message",
    messages: [
      {
        id: `m-${chatId}`,
        role: "user",
        parts: [{ type: "text", text }, ...files.map((f) => ({ type: "file", ...f }))],
      },
    ],
  };
}

const get = (handler: ChatHandler, path: string, headers: Record<string, string> = {}, owner = "ada") =>
  handler(new Request(`${BASE}${path}`, { headers: { "x-owner": owner, ...headers } }));

async function problemSlug(response: Response): Promise<string> {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return String(((await response.json()) as { type: string }).type).replace("urn:statebag:problem:", "");
}

describe("files in chats", () => {
  it("a file goes to the blob store before the message is committed, and is served to its owner only", async () => {
    const { handler, store } = harness();
    const bytes = image(20_000);
    const hash = sha256Hex(bytes);
    const reply = await readReply(
      await post(
        handler,
        fileTurn("chat-pic", "What is in this picture?", [
          { url: dataUrl("image/png", bytes), mediaType: "image/png", filename: "cat.png" },
        ]),
      ),
    );
    expect(reply.errors).toEqual([]);

    // Stored: a reference, not the bytes.
    const stored = await store.get("ui-chat/chat-pic");
    const text = JSON.stringify(stored!.session);
    expect(text).not.toContain("base64");
    expect(text.length).toBeLessThan(5_000);
    const user = (
      stored!.session.stateBag["statebag.chatHistory"] as unknown as { messages: { contents: unknown[] }[] }
    ).messages[0];
    expect(user.contents).toContainEqual({
      $type: "statebag.blobReference",
      hash,
      mediaType: "image/png",
      size: bytes.length,
      name: "cat.png",
    });
    expect(await store.blobs!.has(hash, { owner: "ada" })).toBe(true);

    // Shown with the files route's URL.
    const chat = (await (await call(handler, "GET", "/chats/chat-pic")).json()) as {
      parts: Record<string, unknown>[];
    }[];
    const url = `/api/chat/chat-pic/files/${hash}`;
    expect(chat[0].parts).toContainEqual({ type: "file", mediaType: "image/png", url, filename: "cat.png" });

    // Served whole, with safe headers.
    const whole = await get(handler, `/chat/chat-pic/files/${hash}`);
    expect(whole.status).toBe(200);
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("content-length")).toBe(String(bytes.length));
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    expect(whole.headers.get("content-disposition")).toBe(`inline; filename="cat.png"; filename*=UTF-8''cat.png`);
    expect(whole.headers.get("content-security-policy")).toContain("sandbox");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");

    // A range: 206 with Content-Range; a suffix range; past the end: 416.
    const part = await get(handler, `/chat/chat-pic/files/${hash}`, { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 100-199/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(100, 200))).toBe(true);
    const tail = await get(handler, `/chat/chat-pic/files/${hash}`, { range: "bytes=-10" });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 10))).toBe(true);
    const past = await get(handler, `/chat/chat-pic/files/${hash}`, { range: `bytes=${bytes.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
    await past.body?.cancel();
    // Revalidation: the hash is the ETag.
    const again = await get(handler, `/chat/chat-pic/files/${hash}`, { "if-none-match": `"${hash}"` });
    expect(again.status).toBe(304);

    // Another owner, another hash, a hash of another chat: 404.
    const other = await get(handler, `/chat/chat-pic/files/${hash}`, {}, "bob");
    expect(other.status).toBe(404);
    expect(await problemSlug(other)).toBe("chat-not-found");
    const unknown = await get(handler, `/chat/chat-pic/files/${"0".repeat(64)}`);
    expect(await problemSlug(unknown)).toBe("file-not-found");
    const malformed = await get(handler, "/chat/chat-pic/files/..%2Fsecret");
    expect(malformed.status).toBe(404);
  });

  it("a small file stays inline; an HTML or SVG file allowed by fileTypes is sent as an attachment", async () => {
    const { handler, store } = harness({ fileTypes: ["image/*", "text/html"] });
    const small = image(200);
    await readReply(
      await post(
        handler,
        fileTurn("chat-small", "tiny", [{ url: dataUrl("image/png", small), mediaType: "image/png" }]),
      ),
    );
    expect(JSON.stringify((await store.get("ui-chat/chat-small"))!.session)).toContain("data:image/png;base64,");

    const svg = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>${" ".repeat(5000)}</svg>`,
    );
    await readReply(
      await post(
        handler,
        fileTurn("chat-svg", "look", [
          { url: dataUrl("image/svg+xml", svg), mediaType: "image/svg+xml", filename: "x.svg" },
        ]),
      ),
    );
    const served = await get(handler, `/chat/chat-svg/files/${sha256Hex(svg)}`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/svg+xml");
    expect(served.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(served.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    );
    await served.body?.cancel();
  });

  it("a refused file is a 4xx problem naming the rule, and nothing of the message is saved", async () => {
    const { handler, store } = harness({ maxFileBytes: 10_000, maxFiles: 1 });
    const cases: [unknown, number, string][] = [
      [
        fileTurn("chat-big", "secret-text", [{ url: dataUrl("image/png", image(20_000)), mediaType: "image/png" }]),
        413,
        "file-too-large",
      ],
      [
        fileTurn("chat-html", "secret-text", [
          { url: dataUrl("text/html", Buffer.from("<script>secret-html</script>")), mediaType: "text/html" },
        ]),
        415,
        "file-type-not-allowed",
      ],
      [
        fileTurn("chat-link", "secret-text", [{ url: "https://example.test/secret.png", mediaType: "image/png" }]),
        422,
        "file-not-inline",
      ],
      [
        fileTurn("chat-two", "secret-text", [
          { url: dataUrl("image/png", image(100)), mediaType: "image/png" },
          { url: dataUrl("image/png", image(100)), mediaType: "image/png" },
        ]),
        413,
        "too-many-files",
      ],
    ];
    for (const [body, status, slug] of cases) {
      const response = await post(handler, body);
      expect(response.status, slug).toBe(status);
      const text = await response.clone().text();
      expect(text).not.toContain("secret");
      expect(await problemSlug(response)).toBe(slug);
    }
    for (const id of ["chat-big", "chat-html", "chat-link", "chat-two"])
      expect(await store.get(`ui-chat/${id}`)).toBeUndefined();
    expect((await store.blobs!.usage({ owner: "ada" })).blobs).toBe(0);
  });

  it("erasing the owner removes its files (the URL is 404); a sweep removes the files of a deleted chat", async () => {
    const { handler, store } = harness();
    const kept = image(8_000);
    const dropped = image(9_000);
    for (const [id, bytes] of [
      ["chat-keep", kept],
      ["chat-drop", dropped],
    ] as const)
      await readReply(
        await post(handler, fileTurn(id, "see", [{ url: dataUrl("image/png", bytes), mediaType: "image/png" }])),
      );
    expect((await call(handler, "DELETE", "/chats/chat-drop")).status).toBe(204);
    const swept = await sweepOwnerBlobs(store, "ada", { graceMs: 0 });
    expect(swept).toMatchObject({ referenced: 1, blobs: 1 });
    expect(await store.blobs!.has(sha256Hex(kept), { owner: "ada" })).toBe(true);
    expect(await store.blobs!.has(sha256Hex(dropped), { owner: "ada" })).toBe(false);

    const receipt = await store.eraseOwner("ada");
    expect(receipt).toMatchObject({ sessions: 1, blobs: 1 });
    expect((await get(handler, `/chat/chat-keep/files/${sha256Hex(kept)}`)).status).toBe(404);
    expect((await store.blobs!.usage({ owner: "ada" })).blobs).toBe(0);
  });

  it("retention removes idle chats and sweeps their owner's files that no remaining chat refers to; another owner's copy stays", async () => {
    const { handler, store } = harness();
    const old = image(7_000);
    const shared = image(6_000);
    await readReply(
      await post(handler, fileTurn("chat-old", "old", [{ url: dataUrl("image/png", old), mediaType: "image/png" }])),
    );
    await readReply(
      await post(
        handler,
        fileTurn("chat-old2", "shared", [{ url: dataUrl("image/png", shared), mediaType: "image/png" }]),
      ),
    );
    // Another owner with the same bytes keeps its own copy.
    await readReply(
      await post(handler, fileTurn("chat-bob", "mine", [{ url: dataUrl("image/png", old), mediaType: "image/png" }]), {
        owner: "bob",
      }),
    );
    // Ada's chats pass her rule and go, with her files; Bob's chat and his copy stay. No grace window.
    const report = await purgeRetention(
      store,
      { owners: { ada: { maxIdleMs: 1 } } },
      { now: Date.now() + 60_000, blobGraceMs: 0 },
    );
    expect(report.sessions).toBe(2);
    expect(report.blobs).toBe(2);
    expect((await store.blobs!.usage({ owner: "ada" })).blobs).toBe(0);
    expect(await store.blobs!.has(sha256Hex(old), { owner: "bob" })).toBe(true);
  });
});
