/**
 * The example chat app as its browser tests run it: `npm run chat` as a user runs it (tsx, in a
 * process group of its own, on a free loopback port), and Debian's Chromium launched headless
 * through playwright-core (nothing downloads a browser).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

const REPO = join(import.meta.dirname, "../..");

/** The example app started for a test: its URL, its output so far, and a way to end it. */
export interface RunningApp {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Signals the app's process group (tsx and the node process it runs) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `npm run chat` as a user runs it (tsx, the app's own process group); resolves once it prints its URL. */
export async function startApp(env: Record<string, string>): Promise<RunningApp> {
  const child = spawn(join(REPO, "node_modules/.bin/tsx"), ["examples/chat-app/server.ts"], {
    cwd: REPO,
    env: { ...process.env, PORT: "0", OPENAI_API_KEY: "", STATEBAG_MODEL: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      output += d.toString();
      const found = /statebag chat: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (found) resolve(found[1]);
    });
    child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
    child.on("exit", (code) => reject(new Error(`chat app exited (${code}): ${output}`)));
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal = "SIGTERM") {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, signal);
      } catch {
        return; // already gone
      }
      await exited;
    },
  };
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
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
}
