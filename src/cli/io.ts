/**
 * What every command gets: where to write, whether to colour, how to show progress, and the one
 * error type that carries an exit code. Injected, so tests run the whole program in-process.
 */
import { createColors } from "picocolors";
import type { Readable } from "node:stream";

/** Exit codes, the same for every command. */
export const EXIT = {
  /** Everything checked out. */
  ok: 0,
  /** A session is invalid, a schema change is incompatible, generated files are stale. */
  failed: 1,
  /** The command line was wrong: unknown option, missing argument, unreadable input file, bad URL. */
  usage: 2,
  /** The work could not be done: a store is unreachable, a module is missing, an unexpected error. */
  runtime: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A stream a command writes to. `isTTY` decides colour and progress bars. */
export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface CliEnvironment {
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: Readable | { [Symbol.asyncIterator](): AsyncIterator<string | Buffer> };
  env: Record<string, string | undefined>;
  cwd: string;
}

export function processEnvironment(): CliEnvironment {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env, cwd: process.cwd() };
}

/**
 * A failure the user can act on: what went wrong, where, and how to fix it. Printed without a
 * stack trace (set STATEBAG_DEBUG=1 for one).
 */
export class CliError extends Error {
  constructor(
    readonly exitCode: ExitCode,
    message: string,
    readonly details: { where?: string; fix?: string; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "CliError";
  }
}

export type Colors = ReturnType<typeof createColors>;

/**
 * Characters a terminal acts on or hides: C0/C1 controls (escape sequences, carriage returns,
 * newlines that would forge a line of output), DEL, and the invisible formatting and bidi
 * characters that make text read differently from what it is.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
/** The same, minus the newline and tab a composed line may hold, plus the colour codes the CLI writes itself. */
const UNSAFE_IN_LINE =
  /\u001b\[[0-9;]*m|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** How many characters of an input value are echoed; the rest is cut, and its length said. */
export const MAX_ECHOED = 200;

function escapeChar(ch: string): string {
  const code = ch.charCodeAt(0);
  if (ch === "\n") return "\\n";
  if (ch === "\r") return "\\r";
  if (ch === "\t") return "\\t";
  // JSON's escape form, so escaped JSON text stays valid JSON.
  return `\\u${code.toString(16).padStart(4, "0")}`;
}

/**
 * A value that came from input (an id, a key, a `$type`, a message quoting them), made safe to
 * print on one line: control and invisible characters escaped (`\n`, `\u001b`, `\u202e`), and cut
 * after `max` characters with its full length, so a 50 MB key prints as a short line.
 */
export function echo(value: unknown, max = MAX_ECHOED): string {
  const text = String(value);
  if (text.length <= max) return text.replace(UNSAFE, escapeChar);
  // Never split a surrogate pair at the cut.
  const end = /[\ud800-\udbff]/.test(text[max - 1]) ? max - 1 : max;
  return `${text.slice(0, end).replace(UNSAFE, escapeChar)}... (${text.length} characters)`;
}

/**
 * Output as written to a stream: every control character is escaped except newlines, tabs and
 * (when colour is on) the colour codes picocolors writes. The last line of defence: values are
 * escaped where they are interpolated (`echo`).
 */
export function safeOutput(text: string, color: boolean): string {
  return text.replace(UNSAFE_IN_LINE, (match) =>
    match.length > 1 && color ? match : match.length > 1 ? match.replace(UNSAFE, escapeChar) : escapeChar(match),
  );
}

/** Colour only on a terminal, never with NO_COLOR; FORCE_COLOR=1 forces it on (FORCE_COLOR=0 off). */
export function colorEnabled(stream: OutputStream, env: CliEnvironment["env"]): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/** A long-running task's progress: a bar on a terminal, nothing elsewhere. */
export interface Progress {
  start(total: number, label: string): void;
  /** Changes the total (work whose size is learned as it goes, such as paging through a store). */
  setTotal(total: number): void;
  increment(by?: number): void;
  stop(): void;
}

const silentProgress: Progress = { start() {}, setTotal() {}, increment() {}, stop() {} };

/** Per-command output helpers built from the environment and the command's `--json` flag. */
export class Output {
  readonly c: Colors;
  readonly ce: Colors;
  constructor(
    readonly environment: CliEnvironment,
    readonly json: boolean,
  ) {
    this.c = createColors(colorEnabled(environment.stdout, environment.env));
    this.ce = createColors(colorEnabled(environment.stderr, environment.env));
  }

  /** A line of human output (suppressed in --json mode). */
  line(text = ""): void {
    if (!this.json)
      this.environment.stdout.write(
        safeOutput(text, colorEnabled(this.environment.stdout, this.environment.env)) + "\n",
      );
  }

  /** The one JSON document a command prints in --json mode. */
  result(value: unknown): void {
    if (this.json) this.environment.stdout.write(JSON.stringify(value, null, 2) + "\n");
  }

  /** A notice on stderr (never part of machine output). */
  note(text: string): void {
    this.environment.stderr.write(safeOutput(text, colorEnabled(this.environment.stderr, this.environment.env)) + "\n");
  }

  warn(text: string): void {
    this.note(`${this.ce.yellow("warning:")} ${text}`);
  }

  /** A progress bar on stderr when it is a terminal and the output is for people; otherwise silent. */
  async progress(): Promise<Progress> {
    const stream = this.environment.stderr;
    if (this.json || stream.isTTY !== true || this.environment.env.CI) return silentProgress;
    const { SingleBar, Presets } = await import("cli-progress");
    let bar: InstanceType<typeof SingleBar> | undefined;
    return {
      start(total, label) {
        bar = new SingleBar(
          {
            format: `${label} [{bar}] {value}/{total} {percentage}% eta {eta_formatted}`,
            stream: stream as unknown as NodeJS.WritableStream,
            hideCursor: true,
            clearOnComplete: true,
          },
          Presets.shades_classic,
        );
        bar.start(total, 0);
      },
      setTotal(total) {
        bar?.setTotal(total);
      },
      increment(by = 1) {
        bar?.increment(by);
      },
      stop() {
        bar?.stop();
        bar = undefined;
      },
    };
  }
}

/** An output stream that collects everything written (tests, embedding). */
export class Capture implements OutputStream {
  text = "";
  constructor(readonly isTTY = false) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}
