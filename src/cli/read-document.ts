/**
 * Reading an input document (a file, or stdin) the one way every command does: the size is
 * checked before anything is read (a 600 MB file is refused from its `stat`, never loaded), at
 * most the limit is read, and the bytes go to the loader as bytes, so its strict UTF-8 decoding
 * (`parseJson`) refuses what the runtime would refuse, with the same error.
 */
import { constants } from "node:buffer";
import { open, type FileHandle } from "node:fs/promises";
import { InvalidArgumentError, Option } from "commander";
import { DEFAULT_JSON_LIMITS } from "../runtime/json/safe-json.js";
import { CliError, echo, EXIT, type CliEnvironment } from "./io.js";

/** The session loader's default size limit. */
export const DEFAULT_MAX_BYTES = DEFAULT_JSON_LIMITS.maxBytes;
/** The most `--max-bytes` allows: the decoded document must fit in one JavaScript string. */
export const MAX_MAX_BYTES = constants.MAX_STRING_LENGTH;

export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * 1024) return `${(n / 1024 / 1024 / 1024).toFixed(1)} GiB`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

const UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
};

/** `--max-bytes 100MiB`: a byte count, with an optional binary unit (K, M, G; KiB, MiB, GiB). */
export function parseMaxBytes(value: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(value);
  // Own keys only: "1constructor" must not find Object.prototype.constructor.
  const unit = match && Object.hasOwn(UNITS, match[2].toLowerCase()) ? UNITS[match[2].toLowerCase()] : undefined;
  if (!match || unit === undefined) throw new InvalidArgumentError("expected a size such as 134217728, 128MiB or 1GiB");
  const bytes = Math.floor(Number(match[1]) * unit);
  if (bytes < 1 || bytes > MAX_MAX_BYTES)
    throw new InvalidArgumentError(
      `expected a size from 1 byte to ${formatBytes(MAX_MAX_BYTES)} (the largest document a JavaScript string holds)`,
    );
  return bytes;
}

export function maxBytesOption(): Option {
  return new Option(
    "--max-bytes <size>",
    `largest document read, e.g. 256MiB (default: ${formatBytes(DEFAULT_MAX_BYTES)}, the session loader's limit; at most ${formatBytes(MAX_MAX_BYTES)})`,
  ).argParser(parseMaxBytes);
}

/** A document over the size limit: refused before it is read, with the limit and how to raise it. */
export class DocumentTooLargeError extends CliError {
  /** The message without the document's name ("100.0 MiB (104857600 bytes), over the 64.0 MiB document limit"). */
  readonly reason: string;
  constructor(
    /** The document as the user named it. */
    readonly document: string,
    /** Its size (a lower bound for a stream, which is not read past the limit). */
    readonly bytes: number,
    readonly maxBytes: number,
    atLeast = false,
  ) {
    const reason = `${atLeast ? "" : `${formatBytes(bytes)} (${bytes} bytes), `}over the ${formatBytes(maxBytes)} document limit`;
    super(EXIT.failed, `${echo(document)} is ${reason}`, {
      where: document,
      fix: tooLargeFix(atLeast ? maxBytes + 1 : bytes, maxBytes),
    });
    this.reason = reason;
  }
}

function tooLargeFix(bytes: number, maxBytes: number): string {
  if (bytes > MAX_MAX_BYTES || maxBytes >= MAX_MAX_BYTES)
    return `the CLI reads documents of at most ${formatBytes(MAX_MAX_BYTES)} (the largest a JavaScript string holds): split the document`;
  const mib = 1024 * 1024;
  let example = 128;
  while (example * mib < bytes) example *= 2;
  return `raise the limit with --max-bytes <size>, for example --max-bytes ${Math.min(example, Math.floor(MAX_MAX_BYTES / mib))}MiB (at most ${formatBytes(MAX_MAX_BYTES)})`;
}

const CHUNK = 1024 * 1024;

/** Reads `handle` to its end, never more than `maxBytes + 1` bytes (a file may grow after its stat). */
async function readBounded(handle: FileHandle, expected: number, maxBytes: number, name: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  let want = Math.min(expected, maxBytes) + 1;
  for (;;) {
    const buffer = Buffer.allocUnsafe(want);
    const { bytesRead } = await handle.read(buffer, 0, want, null);
    if (bytesRead === 0) break;
    chunks.push(bytesRead === want ? buffer : buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) throw new DocumentTooLargeError(name, total, maxBytes, true);
    want = Math.min(CHUNK, maxBytes + 1 - total);
  }
  return Buffer.concat(chunks, total);
}

/**
 * A document file's bytes: its size checked first (`DocumentTooLargeError`, exit 1), a missing
 * file or a directory a usage error (exit 2). `name` is how the user gave it.
 */
export async function readDocumentFile(path: string, name: string, maxBytes = DEFAULT_MAX_BYTES): Promise<Buffer> {
  let handle: FileHandle;
  try {
    handle = await open(path, "r");
  } catch (error) {
    throw unreadable(error, path, name);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory())
      throw unreadable(Object.assign(new Error("is a directory"), { code: "EISDIR" }), path, name);
    if (info.size > maxBytes) throw new DocumentTooLargeError(name, info.size, maxBytes);
    return await readBounded(handle, info.size, maxBytes, name);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw unreadable(error, path, name);
  } finally {
    await handle.close();
  }
}

function unreadable(error: unknown, path: string, name: string): CliError {
  const code = (error as NodeJS.ErrnoException).code;
  const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : (error as Error).message;
  return new CliError(EXIT.usage, `cannot read ${echo(name)}: ${reason}`, {
    where: path,
    fix: 'check the path (use "-" to read stdin)',
    cause: error,
  });
}

/** All of stdin as bytes, refused once it passes `maxBytes` (nothing more is buffered). */
export async function readStdinBytes(stream: CliEnvironment["stdin"], maxBytes = DEFAULT_MAX_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream as AsyncIterable<string | Buffer>) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    total += bytes.length;
    if (total > maxBytes) throw new DocumentTooLargeError("(stdin)", total, maxBytes, true);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, total);
}
