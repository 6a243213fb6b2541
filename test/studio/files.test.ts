/**
 * The studio previews the images a session keeps in the blob store: the session view lists its
 * reference contents, and `api/blob` serves an image the session names (read under the session's
 * owner), nothing else: another hash, or a type that can carry script (SVG), is a 404.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStudio } from "../../src/cli/commands/studio.js";
import { blobWriter, offloadDataContents, sha256Hex } from "../../src/runtime/blobs/references.js";
import { userMessage } from "../../src/runtime/core/messages.js";
import { createSessionData } from "../../src/runtime/core/session.js";
import { openStore } from "../../src/stores.js";
import { seedProject, studioContext } from "./seed.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-studio-files-"));
const url = `sqlite:${join(dir, "files.db")}`;
const image = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(12_000)]);
const svg = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>${" ".repeat(5000)}</svg>`);
let studio: Awaited<ReturnType<typeof openStudio>>;

beforeAll(async () => {
  const store = await openStore(url);
  const { messages } = await offloadDataContents(
    [
      userMessage([
        { $type: "text", text: "look" },
        { $type: "data", uri: `data:image/png;base64,${image.toString("base64")}`, name: "cat.png" },
        { $type: "data", uri: `data:image/svg+xml;base64,${svg.toString("base64")}`, name: "x.svg" },
      ]),
    ],
    blobWriter(store.blobs!, "ada"),
  );
  const session = createSessionData({ id: "chat-with-image" });
  session.stateBag["statebag.chatHistory"] = {
    $type: "InMemoryChatHistoryState",
    $version: 2,
    messages,
    droppedMessageCount: 0,
  } as never;
  await store.save(session, { expectedRevision: null, meta: { owner: "ada" } });
  await store.close();
  seedProject(dir, url);
  studio = await openStudio(studioContext(dir), { port: "0", host: "127.0.0.1" });
}, 60_000);

afterAll(async () => {
  await studio?.closeAll();
  rmSync(dir, { recursive: true, force: true });
});

describe("studio: files of a session", () => {
  it("lists the references and serves the image, nothing else", async () => {
    const view = (await (await fetch(`${studio.url}api/session?id=chat-with-image`)).json()) as {
      files: { hash: string; mediaType: string; size: number; name?: string }[];
    };
    expect(view.files).toEqual(
      expect.arrayContaining([
        { hash: sha256Hex(image), mediaType: "image/png", size: image.length, name: "cat.png" },
        { hash: sha256Hex(svg), mediaType: "image/svg+xml", size: svg.length, name: "x.svg" },
      ]),
    );
    const served = await fetch(`${studio.url}api/blob?id=chat-with-image&hash=${sha256Hex(image)}`);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await served.arrayBuffer()).equals(image)).toBe(true);
    expect((await fetch(`${studio.url}api/blob?id=chat-with-image&hash=${sha256Hex(svg)}`)).status).toBe(404);
    expect((await fetch(`${studio.url}api/blob?id=chat-with-image&hash=${"0".repeat(64)}`)).status).toBe(404);
    expect((await fetch(`${studio.url}api/blob?id=chat-with-image&hash=nothex`)).status).toBe(400);
  });
});
