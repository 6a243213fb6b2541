/**
 * Branches in the chat example, in Debian's headless Chromium (playwright-core): a person
 * regenerates an answer (‹ 2/2 › appears), goes back to the first version (‹ 1/2 ›), edits their
 * question and sends it again (a new version of the question, answered), and forks the chat (a new
 * chat, listed as a fork, holding the conversation up to there). After each step the page is
 * reloaded: what it shows is what the store holds. Screenshots go to test-artifacts/chat-branches/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launch, type RunningApp, startApp } from "./example-app.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/chat-branches");
const available = existsSync(CHROMIUM);
const WAIT = { timeout: 30_000, interval: 50 };

const answers = (page: Page) => page.locator('[data-role="assistant"]');
const questions = (page: Page) => page.locator('[data-role="user"]');

describe.skipIf(!available && !process.env.CI)("chat branches in Chromium", () => {
  let browser: Browser;
  let app: RunningApp;
  let dir: string;
  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), "statebag-branches-browser-"));
    app = await startApp({ STATEBAG_STORE: `sqlite:${join(dir, "sessions.db")}` });
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("regenerate, ‹ 1/2 ›, edit and fork, each as stored after a reload", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 760 } })).newPage();
    await page.goto(app.url);
    await page.getByTestId("input").fill("Hello branches");
    await page.getByTestId("send").click();
    await expect.poll(() => answers(page).count(), WAIT).toBe(1);
    await page.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => answers(page).first().getByTestId("regenerate").isEnabled(), WAIT).toBe(true);
    const chatUrl = page.url();

    // Regenerate: a second version of the answer, ‹ 2/2 ›.
    await answers(page).first().getByTestId("regenerate").click();
    await expect.poll(() => answers(page).first().getByTestId("version-label").textContent(), WAIT).toBe("2/2");
    await page.reload();
    await expect.poll(() => answers(page).first().getByTestId("version-label").textContent(), WAIT).toBe("2/2");
    await shot(page, "1-regenerated");

    // ‹ : back to the first version.
    await answers(page).first().getByTestId("version-prev").click();
    await expect.poll(() => answers(page).first().getByTestId("version-label").textContent(), WAIT).toBe("1/2");
    await page.reload();
    await expect.poll(() => answers(page).first().getByTestId("version-label").textContent(), WAIT).toBe("1/2");
    await shot(page, "2-first-version");

    // Edit the question and send it again: a second version of the question, answered.
    await questions(page).first().getByTestId("edit").click();
    await page.getByTestId("edit-input").fill("Hello edited branches");
    await page.getByTestId("edit-send").click();
    await expect.poll(() => questions(page).first().getByTestId("version-label").textContent(), WAIT).toBe("2/2");
    await expect.poll(() => answers(page).count(), WAIT).toBe(1);
    await page.reload();
    await expect.poll(() => questions(page).first().innerText(), WAIT).toContain("Hello edited branches");
    await expect.poll(() => questions(page).first().getByTestId("version-label").textContent(), WAIT).toBe("2/2");
    await expect.poll(() => answers(page).count(), WAIT).toBe(1);
    await shot(page, "3-edited");

    // The first version of the question still holds both answers (shown: its newest, ‹ 2/2 ›).
    await questions(page).first().getByTestId("version-prev").click();
    await expect.poll(() => questions(page).first().innerText(), WAIT).toContain("Hello branches");
    await expect.poll(() => answers(page).first().getByTestId("version-label").textContent(), WAIT).toBe("2/2");

    // Fork at the question: a new chat with the conversation up to there, listed as a fork.
    await questions(page).first().getByTestId("fork").click();
    await expect.poll(() => page.url(), WAIT).not.toBe(chatUrl);
    await expect.poll(() => answers(page).count(), WAIT).toBe(0);
    await expect.poll(() => questions(page).count(), WAIT).toBe(1);
    await expect.poll(() => page.getByTestId("chat-list").innerText(), WAIT).toContain("(fork)");
    await page.reload();
    await expect.poll(() => questions(page).first().innerText(), WAIT).toContain("Hello branches");
    await expect.poll(() => answers(page).count(), WAIT).toBe(0);
    await expect.poll(() => page.getByTestId("chat-list").locator("li").count(), WAIT).toBe(2);
    await shot(page, "4-forked");
    // The source chat is as it was.
    await page.goto(chatUrl);
    await expect.poll(() => answers(page).count(), WAIT).toBe(1);
    await expect.poll(() => questions(page).first().getByTestId("version-label").textContent(), WAIT).toBe("1/2");
    await shot(page, "5-source-after-fork");
  }, 120_000);

  it("an edit refused because another tab's reply runs (409): the sentence shows and the edited text is back in the input", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const first = await context.newPage();
    await first.goto(app.url);
    await first.getByTestId("input").fill("Hi");
    await first.getByTestId("send").click();
    await expect.poll(() => answers(first).count(), WAIT).toBe(1);
    await first.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
    await expect.poll(() => questions(first).first().getByTestId("edit").isEnabled(), WAIT).toBe(true);
    const second = await context.newPage();
    await second.goto(first.url());
    await expect.poll(() => answers(second).count(), WAIT).toBe(1);

    // Tab one edits into a long story (it streams for a while); tab two's edit meanwhile is refused.
    await questions(first).first().getByTestId("edit").click();
    await first.getByTestId("edit-input").fill("Tell me a story");
    await first.getByTestId("edit-send").click();
    await expect.poll(() => answers(first).first().innerText(), WAIT).toContain("upon a time");
    await questions(second).first().getByTestId("edit").click();
    await second.getByTestId("edit-input").fill("Tell me about the sea");
    await second.getByTestId("edit-send").click();
    await expect.poll(() => second.getByTestId("chat-error").innerText(), WAIT).toContain("still being written");
    await expect.poll(() => second.getByTestId("input").inputValue(), WAIT).toBe("Tell me about the sea");
    // The winning edit's reply shows up live in the refused tab.
    await expect.poll(() => answers(second).first().innerText(), WAIT).toContain("upon a time");
    await shot(second, "6-edit-refused");
    await first.getByTestId("stop").click();
    await context.close();
  }, 120_000);
});
