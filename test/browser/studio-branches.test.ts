/**
 * The studio shows the tree of a branched chat history: the active path as the chat, and beside
 * it each branch (a regenerated answer; an edited question with its answer), marked as not on the
 * active path. Debian's headless Chromium via playwright-core; screenshot in
 * test-artifacts/studio-branches/.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import { ScriptedChatClient } from "../../src/runtime/agent/clients/scripted-chat-client.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { seedProject, seedStore, type SeededStore } from "../studio/seed.js";

const CHROMIUM = "/usr/bin/chromium";
const REPO = join(import.meta.dirname, "../..");
const ARTIFACTS = join(REPO, "test-artifacts/studio-branches");
const available = existsSync(CHROMIUM);

async function startStudio(cwd: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(join(REPO, "node_modules/.bin/tsx"), [join(REPO, "src/cli/main.ts"), "studio"], {
    cwd,
    env: {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([k]) => k !== "STATEBAG_STORE" && k !== "STATEBAG_KEYRING"),
      ),
      NO_COLOR: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      output += d.toString();
      const found = /statebag studio: (http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)/.exec(output);
      if (found) resolve(found[1]);
    });
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.on("exit", (code) => reject(new Error(`studio exited (${code}): ${output}`)));
  });
  return { url, child };
}

describe.skipIf(!available && !process.env.CI)("the studio shows a history's branches", () => {
  let browser: Browser;
  let seeded: SeededStore;
  let app: { url: string; child: ChildProcess };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    seeded = await seedStore({ bulk: 0 });
    seedProject(seeded.dir, seeded.url);
    const store = await openStore(seeded.url);
    const agent = new ChatClientAgent({ client: new ScriptedChatClient() });
    const session = agent.createSession({ id: "branched-chat" });
    await agent.run("Will it rain in Lisbon?", session);
    await agent.regenerate(session);
    const [question] = await agent.history.listMessages(session);
    await agent.editMessage(session, question.messageId!, "Will it rain in Porto?");
    await store.save(session, { expectedRevision: null, meta: { owner: "ada" } });
    await store.close();
    app = await startStudio(seeded.dir);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--headless", "--disable-gpu"],
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    app?.child.kill("SIGTERM");
    seeded?.cleanup();
  });

  it("the active path as the chat, each branch beside it, marked", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${app.url}#/session?id=branched-chat`);
    await page.waitForSelector('body[data-ready="session"]', { timeout: 20_000 });
    const branches = page.getByTestId("history-branches");
    await expect.poll(() => branches.count()).toBe(1);
    // One branch from the start: the Lisbon question with its two answers.
    expect(await branches.getByTestId("branch").count()).toBe(1);
    const branch = branches.getByTestId("branch").first();
    expect(await branch.innerText()).toContain("Lisbon");
    expect(await branch.innerText()).toContain("not on the active path");
    expect(await branch.getByTestId("message").count()).toBe(3);
    expect(await page.locator("h3", { hasText: "on the active path" }).first().innerText()).toContain("2 messages");
    await page.screenshot({ path: join(ARTIFACTS, "1-branches.png"), fullPage: true });
  }, 60_000);
});
