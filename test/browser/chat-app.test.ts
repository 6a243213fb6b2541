/**
 * The chat example in a real browser: Debian's headless Chromium driven by playwright-core. A
 * person types, sees the answer stream in, reloads and sees the stored history, starts a second
 * chat and sees both listed, approves a tool call and sees its result; a message the server refuses
 * (409: an approval is waiting) shows a plain sentence and stays in the input. A reload while an
 * answer streams resumes it from the server; Stop ends it and the partial answer stays, marked
 * stopped, after another reload; the next message continues the chat. "Erase my data" leaves an
 * empty list and nothing of the owner in the store. No request of the page is a 404 (favicon).
 * Run against the offline scripted model (paced: a long story streams for about half a minute,
 * so "mid-reply" is a wait for a condition, never a sleep), then against the loopback
 * OpenAI-compatible server through OpenAIChatClient (Chat Completions, and the Responses API
 * picked by STATEBAG_MODEL=responses:...).
 *
 * Screenshots go to test-artifacts/chat-app/. Without /usr/bin/chromium the suite is skipped with
 * a warning; under CI=true it fails instead.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, launch, type RunningApp, startApp } from "./example-app.js";
import { validateSession } from "../../src/runtime/validation/validate.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { chatSse, responsesSse, startOpenAIServer, type OpenAITestServer } from "../clients/openai-server.js";
import { chatCompletion, streamedResponseEvents, streamedTextChunks } from "../clients/fixtures/openai.js";
import { realModel } from "../../examples/chat-app/server.js";

const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/chat-app");
const available = existsSync(CHROMIUM);
if (!available && !process.env.CI)
  console.warn(
    `test/browser: ${CHROMIUM} is missing; the browser tests are skipped (apt-get install chromium). Under CI=true they fail.`,
  );

/** How long a condition may take to hold (a loaded two-core machine; the page's own steps take well under this). */
const WAIT = { timeout: 30_000, interval: 50 };

/** One streamed tool call in the Chat Completions chunk shape. */
function toolCallChunks(callId: string, name: string, args: string) {
  const base = {
    id: `chatcmpl-${callId}`,
    object: "chat.completion.chunk",
    created: 1764165792,
    model: "gpt-4.1-mini-2025-04-14",
  };
  const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta: d, finish_reason: finish }],
  });
  return [
    delta({ role: "assistant", content: null }),
    delta({ tool_calls: [{ index: 0, id: callId, type: "function", function: { name, arguments: "" } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: args } }] }),
    delta({}, "tool_calls"),
  ];
}

const words = (text: string) => text.match(/\S+\s*/g) ?? [];

async function send(page: Page, text: string) {
  await page.getByTestId("input").fill(text);
  await page.getByTestId("send").click();
}

const lastAnswer = (page: Page) => page.locator('[data-role="assistant"]').last();

/** A page that records every response it got with status 404 (the favicon included). */
async function newPage(context: BrowserContext, notFound: string[]): Promise<Page> {
  const page = await context.newPage();
  page.on("response", (response) => {
    if (response.status() === 404) notFound.push(response.url());
  });
  return page;
}

/** The scroll box of an element (the repository's tsconfig has no DOM types). */
interface Scrolled {
  scrollHeight: number;
  scrollTop: number;
  clientHeight: number;
}

interface Model {
  env: Record<string, string>;
  queue?: (turn: string) => void;
  server?: OpenAITestServer;
  /** The story keeps streaming (the scripted model); the loopback one holds after its first words. */
  storyGrows: boolean;
  /** Words the story's answer starts with. */
  storyStart: string;
}

function flow(label: string, makeModel: () => Promise<Model>, options: { serverDeath?: boolean } = {}) {
  describe.skipIf(!available && !process.env.CI)(`chat app in Chromium (${label})`, () => {
    let browser: Browser;
    let app: RunningApp;
    let store: SessionStore;
    let dir: string;
    let storeUrl: string;
    let model: Model;
    const notFound: string[] = [];
    const queue = (turn: string) => model.queue?.(turn);
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: join(ARTIFACTS, `${label}-${name}.png`), fullPage: true });

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      model = await makeModel();
      dir = mkdtempSync(join(tmpdir(), "statebag-chat-browser-"));
      storeUrl = `sqlite:${join(dir, "sessions.db")}`;
      app = await startApp({ ...model.env, STATEBAG_STORE: storeUrl });
      store = await openStore(storeUrl);
      browser = await launch();
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await app?.stop();
      await store?.close();
      await model?.server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("streams an answer, keeps it across a reload, lists two chats, runs an approved tool; a refused message stays in the input", async () => {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await newPage(context, notFound);
      await page.goto(app.url);

      // 1. A message; the streamed answer appears.
      queue("name");
      await send(page, "Hi, my name is Ada.");
      await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain("Nice to meet you, Ada.");
      await page.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
      await shot(page, "1-answer");

      // 2. Reload: the same history, from the store.
      await page.reload();
      await expect.poll(() => page.getByTestId("messages").innerText(), WAIT).toContain("Nice to meet you, Ada.");
      expect(await page.locator('[data-role="user"]').count()).toBe(1);
      await shot(page, "2-reloaded");

      // 3. A second chat with a tool; both chats listed.
      await page.getByTestId("new-chat").click();
      queue("weather");
      queue("weather-result");
      await send(page, "What's the weather in Lisbon?");
      await expect.poll(() => page.getByTestId("tool-output").first().innerText(), WAIT).toContain("Lisbon");
      await expect.poll(() => page.getByTestId("chat-list").locator("li").count(), WAIT).toBe(2);
      await shot(page, "3-two-chats");

      // 4. A tool that needs approval. A message sent meanwhile is refused (409): the page says why
      // in a sentence, the text stays in the input, and no message is added.
      await page.getByTestId("new-chat").click();
      queue("email");
      await send(page, "Please email ada@example.com");
      await page.getByTestId("approve").waitFor({ timeout: 30_000 });
      const refusal = page.waitForResponse((r) => r.url().endsWith("/api/chat") && r.request().method() === "POST");
      await send(page, "Actually, never mind.");
      expect((await refusal).status()).toBe(409);
      await expect.poll(() => page.getByTestId("chat-error").innerText(), WAIT).toContain("waiting for your answer");
      expect(await page.getByTestId("chat-error").innerText()).not.toContain("{");
      expect(await page.getByTestId("input").inputValue()).toBe("Actually, never mind.");
      expect(await page.locator('[data-role="user"]').count()).toBe(1);
      await shot(page, "4-refused-409");
      queue("email-result");
      await page.getByTestId("approve").click();
      await expect
        .poll(() => page.getByTestId("tool-send_email").getAttribute("data-state"), WAIT)
        .toBe("output-available");
      expect(await page.getByTestId("tool-output").innerText()).toContain('"sent": true');
      await expect.poll(() => page.getByTestId("messages").innerText(), WAIT).toContain("The tool returned");
      // The refused text is still there to send now.
      expect(await page.getByTestId("input").inputValue()).toBe("Actually, never mind.");
      await shot(page, "4-approved");

      expect(notFound).toEqual([]);
      const icon = await fetch(`${app.url}favicon.ico`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/x-icon");
      expect(Buffer.from(await icon.arrayBuffer()).readUInt16LE(2)).toBe(1); // an ICO
      await context.close();
    }, 180_000);

    it("an approval answered in another tab: the second answer is refused in a sentence, and no text already sent comes back into the input", async () => {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const first = await newPage(context, notFound);
      await first.goto(app.url);
      queue("email");
      await send(first, "Please email ada@example.com");
      await first.getByTestId("approve").waitFor({ timeout: 30_000 });
      await first.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);

      const second = await newPage(context, notFound);
      await second.goto(first.url());
      queue("email-result");
      await second.getByTestId("approve").click();
      await expect
        .poll(() => second.getByTestId("tool-send_email").getAttribute("data-state"), WAIT)
        .toBe("output-available");

      const refusal = first.waitForResponse((r) => r.url().endsWith("/api/chat") && r.request().method() === "POST");
      await first.getByTestId("approve").click();
      expect((await refusal).status()).toBe(409);
      await expect.poll(() => first.getByTestId("chat-error").innerText(), WAIT).toContain("already answered");
      expect(await first.getByTestId("input").inputValue()).toBe("");
      // The page brings itself up to date: the tool ran (answered in the other tab).
      await expect
        .poll(() => first.getByTestId("tool-send_email").getAttribute("data-state"), WAIT)
        .toBe("output-available");
      await shot(first, "4b-approval-answered-elsewhere");
      await first.reload();
      await expect
        .poll(() => first.getByTestId("tool-send_email").getAttribute("data-state"), WAIT)
        .toBe("output-available");
      expect(notFound).toEqual([]);
      await context.close();
    }, 120_000);

    it("a message sent while another tab's reply runs is refused (409): the text stays, the running reply shows up live and can be stopped from here", async () => {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const mine = await newPage(context, notFound);
      await mine.goto(app.url);
      queue("name");
      await send(mine, "Hi, my name is Ada.");
      await expect.poll(() => lastAnswer(mine).innerText(), WAIT).toContain("Nice to meet you, Ada.");
      await mine.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);

      const other = await newPage(context, notFound);
      await other.goto(mine.url());
      await expect.poll(() => lastAnswer(other).innerText(), WAIT).toContain("Nice to meet you, Ada.");
      queue("story");
      await send(other, "Tell me a story");
      await expect.poll(() => lastAnswer(other).innerText(), WAIT).toContain(model.storyStart);

      const refusal = mine.waitForResponse((r) => r.url().endsWith("/api/chat") && r.request().method() === "POST");
      await send(mine, "And what about the weather?");
      expect((await refusal).status()).toBe(409);
      await expect.poll(() => mine.getByTestId("chat-error").innerText(), WAIT).toContain("still being written");
      expect(await mine.getByTestId("input").inputValue()).toBe("And what about the weather?");
      // The other tab's question and its reply, as they run.
      await expect.poll(() => mine.locator('[data-role="user"]').last().innerText(), WAIT).toContain("Tell me a story");
      await expect.poll(() => lastAnswer(mine).innerText(), WAIT).toContain(model.storyStart);
      await shot(mine, "4c-busy-elsewhere");

      // Stopped from this tab: both tabs show the kept answer, marked stopped; then the text can go.
      await mine.getByTestId("stop").click();
      for (const page of [mine, other])
        await expect.poll(() => page.getByTestId("finish-marker").getAttribute("data-finish"), WAIT).toBe("stopped");
      queue("weather");
      queue("weather-result");
      await mine.getByTestId("input").fill("What's the weather in Lisbon?");
      await mine.getByTestId("send").click();
      await expect.poll(() => mine.getByTestId("tool-output").first().innerText(), WAIT).toContain("Lisbon");
      expect(notFound).toEqual([]);
      await context.close();
    }, 120_000);

    it("a reload mid-reply resumes it; Stop keeps the partial answer, marked stopped, after another reload; the chat goes on", async () => {
      // A short window, so the answer outgrows it: the page must keep its newest words in view.
      const context = await browser.newContext({ viewport: { width: 1000, height: 440 } });
      const page = await newPage(context, notFound);
      const box = page.getByTestId("messages");
      /** Pixels between the bottom of the list and the bottom of its window (0: the newest text is in view). */
      const belowView = () =>
        box.evaluate((el) => {
          const e = el as unknown as Scrolled;
          return e.scrollHeight - e.scrollTop - e.clientHeight;
        });
      const overflows = () =>
        box.evaluate((el) => {
          const e = el as unknown as Scrolled;
          return e.scrollHeight > e.clientHeight + 40;
        });
      await page.goto(app.url);
      queue("story");
      await send(page, "Tell me a story");
      await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain(model.storyStart);
      if (model.storyGrows) await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain("sentence 3.");
      await page.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
      const chatId = /\/c\/([A-Za-z0-9_-]+)$/.exec(page.url())![1];
      const seen = (await lastAnswer(page).innerText()).length;
      await shot(page, "5-mid-reply");

      // Reload while it streams: the question is there (committed when the turn was accepted), and
      // the answer is replayed from its first word and goes on.
      await page.reload();
      await expect.poll(() => page.locator('[data-role="user"]').count(), WAIT).toBe(1);
      await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain(model.storyStart);
      if (model.storyGrows) {
        await expect.poll(async () => (await lastAnswer(page).innerText()).length, WAIT).toBeGreaterThan(seen + 20);
        expect(await lastAnswer(page).innerText()).toMatch(/^Assistant\s+Once upon a time, sentence 1\./);
        // Once the answer outgrows the window, the list follows the words as they arrive.
        await expect.poll(overflows, WAIT).toBe(true);
        await expect.poll(belowView, WAIT).toBeLessThan(40);
      }
      await page.getByTestId("stop").waitFor(WAIT);
      await shot(page, "6-resumed");

      // Stop: the answer ends where it is, marked stopped.
      await page.getByTestId("stop").click();
      await expect.poll(() => page.getByTestId("finish-marker").getAttribute("data-finish"), WAIT).toBe("stopped");
      await page.getByTestId("send").waitFor(WAIT);
      const kept = await lastAnswer(page).locator(".text").innerText();
      expect(kept).toContain(model.storyStart);
      if (model.storyGrows) expect(kept).not.toContain("sentence 120.");
      await shot(page, "7-stopped");

      // Another reload: the partial answer is in the stored history, with its mark.
      await page.reload();
      await expect.poll(() => page.getByTestId("finish-marker").getAttribute("data-finish"), WAIT).toBe("stopped");
      expect(await lastAnswer(page).locator(".text").innerText()).toBe(kept);
      expect(await page.getByTestId("stop").count()).toBe(0);
      const owner = (await context.cookies()).find((c) => c.name === "owner")!.value;
      const stored = (await store.get(`ui-chat/${chatId}`))!;
      expect(stored.meta.owner).toBe(owner);
      expect(validateSession(stored.session, { strict: true }).ok).toBe(true);
      await shot(page, "8-stopped-reloaded");

      // The chat goes on from there.
      queue("weather");
      queue("weather-result");
      await send(page, "What's the weather in Lisbon?");
      await expect.poll(() => page.getByTestId("tool-output").first().innerText(), WAIT).toContain("Lisbon");
      await expect.poll(() => page.locator('[data-role="user"]').count(), WAIT).toBe(2);
      expect(await page.getByTestId("finish-marker").count()).toBe(1);
      // The newest message is scrolled into view.
      expect(await overflows()).toBe(true);
      await expect.poll(belowView, WAIT).toBeLessThan(40);
      await shot(page, "9-continued");

      // A reload mid-reply in a chat that has a history: the question is shown although the chat
      // commits it with its answer (the turn's stream holds it), and the answer resumes.
      queue("story");
      await send(page, "Tell me another story");
      await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain(model.storyStart);
      await page.reload();
      await expect.poll(() => page.locator('[data-role="user"]').count(), WAIT).toBe(3);
      expect(await page.locator('[data-role="user"]').last().innerText()).toContain("Tell me another story");
      await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain(model.storyStart);
      await page.getByTestId("stop").waitFor(WAIT);
      await shot(page, "9b-second-story-resumed");
      await page.getByTestId("stop").click();
      await page.getByTestId("send").waitFor(WAIT);
      await page.reload();
      await expect.poll(() => page.locator('[data-role="user"]').count(), WAIT).toBe(3);
      await expect.poll(() => page.getByTestId("finish-marker").count(), WAIT).toBe(2);
      await shot(page, "9c-second-story-stopped-reloaded");
      expect(notFound).toEqual([]);
      await context.close();
    }, 180_000);

    it.skipIf(!options.serverDeath)(
      "a server killed mid-reply: the page says the connection is lost; on another server, once the lease ran out, the answer is kept marked interrupted and the chat goes on",
      async () => {
        // A server of its own on the same store, killed (SIGKILL: no goodbye) while it writes a reply.
        const doomed = await startApp({ ...model.env, STATEBAG_STORE: storeUrl });
        let next: RunningApp | undefined;
        const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
        try {
          const page = await newPage(context, notFound);
          await page.goto(doomed.url);
          queue("story");
          await send(page, "Tell me a story");
          // The tab sees chunks as they are written; the buffer holds them a batch (20 ms) later, so
          // the kill comes one sentence after the one the kept answer must hold.
          await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain("sentence 4.");
          await page.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
          const chatId = /\/c\/([A-Za-z0-9_-]+)$/.exec(page.url())![1];
          await doomed.stop("SIGKILL");
          await expect
            .poll(() => page.getByTestId("chat-error").innerText(), WAIT)
            .toContain("connection to the server was lost");
          await shot(page, "11-server-died");

          // Another server on the same store: the chat is held by the dead turn until its lease
          // (15 s) runs out, then the partial answer is committed, marked interrupted.
          next = await startApp({ ...model.env, STATEBAG_STORE: storeUrl });
          await page.goto(`${next.url}c/${chatId}`);
          await expect
            .poll(() => page.getByTestId("finish-marker").getAttribute("data-finish"), { ...WAIT, timeout: 60_000 })
            .toBe("interrupted");
          const kept = await lastAnswer(page).locator(".text").innerText();
          expect(kept).toMatch(/^Once upon a time, sentence 1\. .*sentence 3\./);
          expect(kept).not.toContain("sentence 120.");
          expect(await page.locator('[data-role="user"]').count()).toBe(1);
          // The mark says what happened: no error is left on screen.
          await expect.poll(() => page.getByTestId("chat-error").count(), WAIT).toBe(0);
          await shot(page, "12-interrupted");
          await page.reload();
          await expect
            .poll(() => page.getByTestId("finish-marker").getAttribute("data-finish"), WAIT)
            .toBe("interrupted");
          expect(await lastAnswer(page).locator(".text").innerText()).toBe(kept);
          const stored = (await store.get(`ui-chat/${chatId}`))!;
          expect(stored.meta.labels?.["statebag.activeStream"]).toBeUndefined();

          // The chat is free: the next message is answered.
          queue("weather");
          queue("weather-result");
          await send(page, "What's the weather in Lisbon?");
          await expect.poll(() => page.getByTestId("tool-output").first().innerText(), WAIT).toContain("Lisbon");
          await shot(page, "13-after-interrupted");
        } finally {
          await context.close();
          await doomed.stop("SIGKILL");
          await next?.stop();
        }
      },
      180_000,
    );

    it("'Erase my data' erases every chat of the owner: the list is empty, in the page and in the store", async () => {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await newPage(context, notFound);
      await page.goto(app.url);
      queue("name");
      await send(page, "Hi, my name is Ada.");
      await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain("Nice to meet you, Ada.");
      await expect.poll(() => page.getByTestId("chat-list").locator("li").count(), WAIT).toBe(1);
      const owner = (await context.cookies()).find((c) => c.name === "owner")!.value;
      expect((await store.list({ owner })).items).toHaveLength(1);

      page.once("dialog", (dialog) => void dialog.accept());
      await page.getByTestId("erase").click();
      await expect.poll(() => page.getByTestId("notice").innerText(), WAIT).toContain("Erased: 1 chat");
      expect(await page.getByTestId("chat-list").locator("li").count()).toBe(0);
      await shot(page, "10-erased");
      await page.reload();
      await expect.poll(() => page.locator("aside").innerText(), WAIT).toContain("No chats yet.");
      expect(await page.getByTestId("chat-list").locator("li").count()).toBe(0);
      expect((await store.list({ owner })).items).toEqual([]);
      // A cross-site form cannot send it: it is a JSON request, and the cookie stays on this site.
      const form = await fetch(`${app.url}api/erase`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: `owner=${owner}` },
        body: "",
      });
      expect(form.status).toBe(415);
      expect(notFound).toEqual([]);
      await context.close();
    }, 120_000);
  });
}

flow("scripted", async () => ({ env: {}, storyGrows: true, storyStart: "Once upon a time, sentence 1." }), {
  serverDeath: true,
});

/** Replies of the loopback OpenAI-compatible server, by turn (Chat Completions). */
function loopbackQueue(server: OpenAITestServer) {
  return (turn: string) => {
    if (turn === "name") server.reply({ sse: chatSse(streamedTextChunks(words("Nice to meet you, Ada."))) });
    if (turn === "weather")
      server.reply({ sse: chatSse(toolCallChunks("call_weatherLisbon0001", "get_weather", '{"city":"Lisbon"}')) });
    if (turn === "weather-result") server.reply({ sse: chatSse(streamedTextChunks(words("It is sunny in Lisbon."))) });
    if (turn === "email")
      server.reply({
        sse: chatSse(
          toolCallChunks("call_emailAda00000001", "send_email", '{"to":"ada@example.com","subject":"Hello"}'),
        ),
      });
    // answerToolApprovals continues with a plain (not streamed) request.
    if (turn === "email-result")
      server.reply({ json: chatCompletion({ content: "The tool returned: the email was sent." }) });
    // A model that starts a story and pauses until the call is ended (by Stop).
    if (turn === "story")
      server.reply({
        hold: chatSse(streamedTextChunks(words("Once upon a time there was"))).replace(
          /data: \{[^\n]*"finish_reason":"stop"[\s\S]*$/,
          "",
        ),
      });
  };
}

flow("openai-loopback", async () => {
  const server = await startOpenAIServer();
  return {
    env: { STATEBAG_MODEL: `${server.baseURL}#gpt-4.1-mini` },
    queue: loopbackQueue(server),
    server,
    storyGrows: false,
    storyStart: "Once upon a time there was",
  };
});

describe("the chat app's model choice (STATEBAG_MODEL)", () => {
  it("picks Chat Completions by default and the Responses API with responses:", () => {
    expect(realModel({})).toBeUndefined();
    expect(realModel({ STATEBAG_MODEL: "http://127.0.0.1:11434/v1#llama3.2" })).toMatchObject({
      api: "chat",
      model: "llama3.2",
    });
    expect(realModel({ STATEBAG_MODEL: "responses:http://127.0.0.1:11434/v1#llama3.2" })).toMatchObject({
      api: "responses",
      model: "llama3.2",
    });
    expect(realModel({ OPENAI_API_KEY: "sk-test", STATEBAG_MODEL: "responses:gpt-4.1" })).toMatchObject({
      api: "responses",
      model: "gpt-4.1",
    });
    expect(realModel({ OPENAI_API_KEY: "sk-test", STATEBAG_MODEL: "chat:gpt-4.1" })).toMatchObject({
      api: "chat",
      model: "gpt-4.1",
    });
    expect(realModel({ OPENAI_API_KEY: "sk-test" })).toMatchObject({ api: "chat", model: "gpt-4.1-mini" });
  });

  it.skipIf(!available && !process.env.CI)(
    "answers in the page through the Responses API of an OpenAI-compatible server",
    async () => {
      const server = await startOpenAIServer();
      const dir = mkdtempSync(join(tmpdir(), "statebag-chat-responses-"));
      const app = await startApp({
        STATEBAG_MODEL: `responses:${server.baseURL}#gpt-4.1-mini`,
        STATEBAG_STORE: `sqlite:${join(dir, "sessions.db")}`,
      });
      const browser = await launch();
      try {
        expect(app.output()).toContain("(Responses API)");
        const page = await browser.newPage();
        server.reply({ sse: responsesSse(streamedResponseEvents("resp_chatapp1", words("Hello from Responses."))) });
        await page.goto(app.url);
        await send(page, "Hi there");
        await expect.poll(() => lastAnswer(page).innerText(), WAIT).toContain("Hello from Responses.");
        expect(server.requests.map((r) => r.path)).toEqual([expect.stringMatching(/\/responses$/)]);
        expect(server.requests[0].body).toMatchObject({ model: "gpt-4.1-mini", store: false, stream: true });
      } finally {
        await browser.close();
        await app.stop();
        await server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
