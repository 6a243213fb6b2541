/**
 * Files in the chat example, in a real browser (Debian Chromium through playwright-core): a person
 * attaches an image (the file input), sends it with a question, sees it in the message; after a
 * reload the image still shows, now served by the chat handler's files route from the store's blob
 * store (the session holds a reference, not the bytes); "Erase my data" erases the owner and the
 * image's URL answers 404. Screenshots go to test-artifacts/chat-attachments/.
 */
import { deflateSync } from "node:zlib";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launch, type RunningApp, startApp } from "./example-app.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/chat-attachments");
const available = existsSync(CHROMIUM);
const WAIT = { timeout: 30_000, interval: 50 };

/** A real PNG (a colour gradient of `w` x `h`), big enough to go to the blob store. */
function png(w: number, h: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2; // truecolour
  const raw = Buffer.alloc((w * 3 + 1) * h);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const o = y * (w * 3 + 1) + 1 + x * 3;
      raw[o] = (x * 255) / w;
      raw[o + 1] = (y * 255) / h;
      raw[o + 2] = ((x ^ y) * 7) & 0xff;
    }
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw, { level: 0 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

describe.skipIf(!available && !process.env.CI)("chat app in Chromium: attachments", () => {
  let browser: Browser;
  let app: RunningApp;
  let store: SessionStore;
  let dir: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), "statebag-chat-files-"));
    const storeUrl = `sqlite:${join(dir, "sessions.db")}`;
    app = await startApp({ STATEBAG_STORE: storeUrl });
    store = await openStore(storeUrl);
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("attaches an image, shows it after a reload from the files route, and erasing the owner makes its URL 404", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const page = await context.newPage();
    await page.goto(app.url);
    const image = png(160, 120);

    await page.getByTestId("file-input").setInputFiles({ name: "gradient.png", mimeType: "image/png", buffer: image });
    await expect.poll(() => page.getByTestId("attachments").innerText(), WAIT).toContain("gradient.png");
    await page.getByTestId("input").fill("What is in this picture?");
    await page.screenshot({ path: join(ARTIFACTS, "1-attached.png") });
    await page.getByTestId("send").click();
    await expect.poll(() => page.locator('[data-role="assistant"]').count(), WAIT).toBe(1);
    await page.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => page.locator('[data-role="user"] [data-testid="file-image"]').count(), WAIT).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, "2-sent.png") });

    // Stored: a reference, and the bytes in the blob store.
    const owner = (await context.cookies()).find((c) => c.name === "owner")!.value;
    const [chat] = (await store.list({ owner })).items;
    const stored = JSON.stringify((await store.get(chat.id))!.session);
    expect(stored).toContain('"statebag.blobReference"');
    expect(stored).not.toContain("base64");
    expect((await store.blobs!.usage({ owner })).blobs).toBe(1);

    // Reload: the image comes from the files route and renders.
    await page.reload();
    const img = page.locator('[data-role="user"] [data-testid="file-image"]');
    await expect.poll(() => img.count(), WAIT).toBe(1);
    const src = (await img.getAttribute("src"))!;
    expect(src).toMatch(/^\/api\/chat\/[A-Za-z0-9_-]+\/files\/[0-9a-f]{64}$/);
    await expect
      .poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth), WAIT)
      .toBe(160);
    await page.screenshot({ path: join(ARTIFACTS, "3-reloaded.png") });
    const served = await page.request.get(new URL(src, app.url).href);
    expect(served.status()).toBe(200);
    expect(served.headers()["content-type"]).toBe("image/png");
    expect(served.headers()["x-content-type-options"]).toBe("nosniff");
    expect(Buffer.from(await served.body()).equals(image)).toBe(true);

    // Erase the owner: the chat and the file are gone; the URL is 404.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByTestId("erase").click();
    await expect.poll(() => page.getByTestId("notice").innerText(), WAIT).toContain("Erased: 1 chat");
    expect((await page.request.get(new URL(src, app.url).href)).status()).toBe(404);
    expect((await store.blobs!.usage({ owner })).blobs).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, "4-erased.png") });
    await context.close();
  }, 120_000);
});
