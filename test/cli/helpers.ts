/**
 * Runs the CLI in-process (the whole commander program, with injected streams, stdin, env and
 * working directory) and, for the few tests that need the real thing, as a child process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Capture } from "../../src/cli/io.js";
import { runCli } from "../../src/cli/main.js";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
export const BIN = join(REPO, "bin/statebag.mjs");
export const FIXTURES = join(REPO, "test/fixtures/maf");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = any>(): T;
}

export interface RunOptions {
  stdin?: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  tty?: boolean;
}

function result(code: number, stdout: string, stderr: string): RunResult {
  return {
    code,
    stdout,
    stderr,
    json() {
      try {
        return JSON.parse(stdout);
      } catch {
        throw new Error(`stdout is not JSON:\n${stdout}\n--- stderr:\n${stderr}`);
      }
    },
  };
}

/** The CLI in-process: fast enough to run every command and error path. */
export async function cli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  const stdout = new Capture(options.tty ?? false);
  const stderr = new Capture(options.tty ?? false);
  const code = await runCli(args, {
    stdout,
    stderr,
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    env: options.env ?? {},
    cwd: options.cwd ?? REPO,
  });
  return result(code, stdout.text, stderr.text);
}

/** `node bin/statebag.mjs ...` as a child process (about half a second each: use sparingly). */
export function spawnCli(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return spawnNode([BIN, ...args], { ...options, env: { STATEBAG_FROM_SOURCE: "1", ...options.env } });
}

/**
 * `tsx examples/<file> ...` as a child process, as a user runs an example. `--tsconfig` names this
 * repository's: its `paths` make the examples' `statebag` imports the sources (tsx would otherwise
 * look for a tsconfig in `cwd`, and a test run elsewhere would get the built dist/).
 */
export function runExample(file: string, args: string[] = [], options: RunOptions = {}): Promise<RunResult> {
  return spawnNode(
    [
      join(REPO, "node_modules/tsx/dist/cli.mjs"),
      "--tsconfig",
      join(REPO, "tsconfig.json"),
      join(REPO, "examples", file),
      ...args,
    ],
    options,
  );
}

/** `node <argv>` with only PATH and HOME from this process's environment. */
function spawnNode(argv: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: options.cwd ?? REPO,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve(result(code ?? -1, stdout, stderr)));
    child.stdin.end(options.stdin ?? "");
  });
}

/** A temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = "statebag-cli-"): {
  dir: string;
  file(name: string, content: string | object): string;
  cleanup(): void;
} {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return {
    dir,
    file(name, content) {
      const path = join(dir, name);
      writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2));
      return path;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A small valid session (bare form) with one history message. */
export function sampleSession(id = "s-1"): any {
  return {
    id,
    kind: "local",
    stateBag: {
      "statebag.chatHistory": {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: [
          {
            role: "user",
            createdAt: "2025-03-01T10:00:00+01:00",
            contents: [{ $type: "text", text: "Hi, my name is Ada." }],
          },
          {
            role: "assistant",
            contents: [
              { $type: "text", text: "Nice to meet you, Ada." },
              { $type: "usage", details: { inputTokenCount: 5, outputTokenCount: 5 } },
            ],
          },
        ],
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      },
    },
  };
}

export function envelope(session: unknown): object {
  return { format: "statebag.session", formatVersion: 1, session };
}

export const ANSI = /\u001b\[/;
