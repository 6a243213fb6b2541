/**
 * The chat example in a real browser: Debian's headless Chromium driven by playwright-core. A
 * person types, sees the answer stream in, reloads and sees the stored history, starts a second
 * chat and sees both listed, approves a tool call and sees its result, and closes the page while
 * an answer streams (the stored chat stays as it was and valid). Run against the offline scripted
 * model, then against the loopback OpenAI-compatible server through OpenAIChatClient.
 *
 * Screenshots go to test-artifacts/chat-app/. Without /usr/bin/chromium the suite is skipped with
 * a warning; under CI=true it fails instead.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateSession } from "../../src/runtime/persistence/validate.js";
import { openStore } from "../../src/runtime/stores/open.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { chatSse, startOpenAIServer, type OpenAITestServer } from "../clients/openai-server.js";
import { chatCompletion, streamedTextChunks } from "../clients/fixtures/openai.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/chat-app");
const available = existsSync(CHROMIUM);
if (!available && !process.env.CI)
  console.warn(
    `test/browser: ${CHROMIUM} is missing; the browser tests are skipped (apt-get install chromium). Under CI=true they fail.`,
  );

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

const REPO = join(import.meta.dirname, "../..");

/** `npm run chat` as a user runs it (tsx, the app's own process); resolves with its printed URL. */
async function startApp(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(join(REPO, "node_modules/.bin/tsx"), ["examples/chat-app/server.ts"], {
    cwd: REPO,
    env: { ...process.env, PORT: "0", OPENAI_API_KEY: "", STATEBAG_MODEL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      output += d.toString();
      const found = /statebag chat: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (found) resolve(found[1]);
    });
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.on("exit", (code) => reject(new Error(`chat app exited (${code}): ${output}`)));
  });
  return { url, child };
}

async function send(page: Page, text: string) {
  await page.getByTestId("input").fill(text);
  await page.getByTestId("send").click();
}

function flow(
  label: string,
  makeModel: () => Promise<{ env: Record<string, string>; queue?: (turn: string) => void; server?: OpenAITestServer }>,
) {
  describe.skipIf(!available && !process.env.CI)(`chat app in Chromium (${label})`, () => {
    let browser: Browser;
    let app: { url: string; child: ChildProcess };
    let store: SessionStore;
    let dir: string;
    let queue: (turn: string) => void = () => {};
    let server: OpenAITestServer | undefined;
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: join(ARTIFACTS, `${label}-${name}.png`), fullPage: true });

    beforeAll(async () => {
      mkdirSync(ARTIFACTS, { recursive: true });
      const made = await makeModel();
      queue = made.queue ?? queue;
      server = made.server;
      dir = mkdtempSync(join(tmpdir(), "statebag-chat-browser-"));
      const url = `sqlite:${join(dir, "sessions.db")}`;
      app = await startApp({ ...made.env, STATEBAG_STORE: url });
      store = await openStore(url);
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          "--no-sandbox",
          "--headless",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      app?.child.kill();
      await store?.close();
      await server?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("streams an answer, keeps it across a reload, lists two chats, runs an approved tool, and commits nothing of a page closed mid-stream", async () => {
      const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
      const page = await context.newPage();
      await page.goto(app.url);

      // 1. A message; the streamed answer appears.
      queue("name");
      await send(page, "Hi, my name is Ada.");
      await expect
        .poll(() => page.locator('[data-role="assistant"]').last().innerText())
        .toContain("Nice to meet you, Ada.");
      await page.waitForURL(/\/c\/[A-Za-z0-9_-]+$/);
      const firstChat = /\/c\/([A-Za-z0-9_-]+)$/.exec(page.url())![1];
      await shot(page, "1-answer");

      // 2. Reload: the same history, from the store.
      await page.reload();
      await expect.poll(() => page.getByTestId("messages").innerText()).toContain("Nice to meet you, Ada.");
      expect(await page.locator('[data-role="user"]').count()).toBe(1);
      await shot(page, "2-reloaded");

      // 3. A second chat with a tool; both chats listed.
      await page.getByTestId("new-chat").click();
      queue("weather");
      queue("weather-result");
      await send(page, "What's the weather in Lisbon?");
      await expect.poll(() => page.getByTestId("tool-output").first().innerText()).toContain("Lisbon");
      await expect.poll(() => page.getByTestId("chat-list").locator("li").count()).toBe(2);
      await shot(page, "3-two-chats");

      // 4. A tool that needs approval: approve it in the page; its result shows.
      await page.getByTestId("new-chat").click();
      queue("email");
      await send(page, "Please email ada@example.com");
      await page.getByTestId("approve").waitFor({ timeout: 30_000 });
      queue("email-result");
      await page.getByTestId("approve").click();
      await expect.poll(() => page.getByTestId("tool-send_email").getAttribute("data-state")).toBe("output-available");
      expect(await page.getByTestId("tool-output").innerText()).toContain('"sent": true');
      await expect.poll(() => page.getByTestId("messages").innerText()).toContain("The tool returned");
      await shot(page, "4-approved");

      // 5. Close the page while the answer streams: the stored chat is what it was, and valid.
      const owner = (await context.cookies()).find((c) => c.name === "owner")!.value;
      const id = `ui-chat/${owner}/${firstChat}`;
      const before = (await store.get(id))!;
      await page.goto(`${app.url}c/${firstChat}`);
      await expect.poll(() => page.getByTestId("messages").innerText()).toContain("Nice to meet you");
      queue("story");
      await send(page, "Tell me a story");
      await expect.poll(() => page.locator('[data-role="assistant"]').last().innerText()).toContain("upon a time");
      await shot(page, "5-mid-stream");
      await page.close();
      // The turn ends once the server sees the page gone; until then a new turn on the chat is a 409.
      queue("hello");
      let status = 409;
      while (status === 409) {
        const response = await fetch(`${app.url}api/chat`, {
          method: "POST",
          headers: { "content-type": "application/json", cookie: `owner=${owner}` },
          body: JSON.stringify({
            id: firstChat,
            message: { id: "after-close", role: "user", parts: [{ type: "text", text: "hello again" }] },
            trigger: "submit-message",
          }),
        });
        status = response.status;
        await response.text();
      }
      expect(status).toBe(200);
      const after = (await store.get(id))!;
      expect(validateSession(after.session, { strict: true }).ok).toBe(true);
      const history = (s: typeof after.session) =>
        (
          s.stateBag["statebag.chatHistory"] as unknown as {
            messages: { role: string; contents: { $type: string; text?: string }[] }[];
          }
        ).messages;
      expect(history(after.session).slice(0, history(before.session).length)).toEqual(history(before.session));
      const texts = history(after.session).map((m) => m.contents.map((c) => c.text ?? "").join(""));
      expect(texts.join("\n")).not.toMatch(/story|upon a time/i);
      expect(texts).toContain("hello again");
      await context.close();
    }, 120_000);
  });
}

flow("scripted", async () => ({ env: {} }));

flow("openai-loopback", async () => {
  const server = await startOpenAIServer();
  const queue = (turn: string) => {
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
    // A model that starts a story and pauses: the page is closed meanwhile.
    if (turn === "story")
      server.reply({
        hold: chatSse(streamedTextChunks(words("Once upon a time there was"))).replace(
          /data: \{[^\n]*"finish_reason":"stop"[\s\S]*$/,
          "",
        ),
      });
    if (turn === "hello") server.reply({ sse: chatSse(streamedTextChunks(words("Hello again, Ada."))) });
  };
  return { env: { STATEBAG_MODEL: `${server.baseURL}#gpt-4.1-mini` }, queue, server };
});
