/**
 * Shared by `import` and `export`: reading the input document, writing the output, and turning
 * "this document cannot be converted" into a validation failure (exit 1).
 */
import { writeFile } from "node:fs/promises";
import { InvalidArgumentError } from "commander";
import { StatebagError } from "../runtime/core/errors.js";
import { SHAPES, SHAPE_NAMES, type SessionShape } from "../runtime/interop/shapes.js";
import { inputPath, messageOf } from "./context.js";
import { CliError, EXIT, type CliEnvironment } from "./io.js";
import { readDocumentFile, readStdinBytes } from "./read-document.js";

/** Every Agent Framework shape `import --from` / `export --to` take (see the README's table). */
export const FORMATS: readonly Format[] = [...SHAPE_NAMES, "python-history"];
/** A session shape, or `python-history`: FileHistoryProvider files into and out of message logs (src/cli/python-history.ts). */
export type Format = SessionShape | "python-history";

const ALIASES: Record<string, SessionShape> = {
  ".net": "dotnet",
  net: "dotnet",
  csharp: "dotnet",
  durable2: "durable-2-preview",
  "python-session-store": "python-file-store",
};

export function parseFormat(value: string): Format {
  const lower = value.toLowerCase();
  if (Object.hasOwn(ALIASES, lower)) return ALIASES[lower];
  if (!(FORMATS as readonly string[]).includes(lower))
    throw new InvalidArgumentError(`expected one of: ${FORMATS.join(", ")}`);
  return lower as Format;
}

/**
 * `import --from` also reads chats saved by AI SDK UI apps (`UIMessage[]`) and two .NET stores read
 * whole (a `FileSystemAgentSessionStore` tree, a Cosmos DB chat-history export: src/cli/maf-stores.ts),
 * which `export` does not write.
 */
export type ImportFormat = Format | "ai-sdk-ui" | "dotnet-fs-store" | "cosmos-chat-history";
export const IMPORT_FORMATS: readonly ImportFormat[] = [
  ...FORMATS,
  "ai-sdk-ui",
  "dotnet-fs-store",
  "cosmos-chat-history",
];

export function parseImportFormat(value: string): ImportFormat {
  const lower = value.toLowerCase();
  if (lower === "dotnet-fs-store" || lower === "cosmos-chat-history") return lower;
  return lower === "ai-sdk-ui" || lower === "usechat" || lower === "uimessage" ? "ai-sdk-ui" : parseFormat(value);
}

/** The shape list for --help. */
export function shapeHelp(): string {
  const history = `  ${"python-history".padEnd(22)} Python FileHistoryProvider history (<id>.jsonl / <id>.msgpack) into / out of a store's message log, Jul 2026 - now`;
  return [...SHAPES.map((s) => `  ${s.shape.padEnd(22)} ${s.title}, ${s.dates}`), history].join("\n");
}

/** The shape list for `import --help`: the session shapes, and AI SDK UI chats. */
export function importShapeHelp(): string {
  return [
    shapeHelp(),
    `  ${"ai-sdk-ui".padEnd(22)} AI SDK UI chats (useChat UIMessage[], ai 5-7): <chat id>.json, { id, messages } or [{ id, messages }] (only with --from)`,
    `  ${"dotnet-fs-store".padEnd(22)} .NET FileSystemAgentSessionStore root: a-{agent}/u-{user}/c-{conversation}.json, each a .NET session, into a store (only with --from)`,
    `  ${"cosmos-chat-history".padEnd(22)} .NET Cosmos DB chat-history export (JSON array or lines) into a store's message logs, one per conversation (only with --from)`,
  ].join("\n");
}

/** A document's bytes (stdin with "-"), size-checked before reading; the loader decodes them strictly. */
export async function readInput(file: string, environment: CliEnvironment): Promise<Buffer> {
  if (file === "-") return readStdinBytes(environment.stdin);
  return readDocumentFile(inputPath(file, environment), file);
}

/**
 * `text` as a file or stdout ends: with a final newline, unless that byte would take a document
 * written within `maxBytes` (the size its reader allows) over it.
 */
export function withNewline(text: string, maxBytes = Number.POSITIVE_INFINITY): string {
  if (text.endsWith("\n")) return text;
  return text.length * 3 + 1 <= maxBytes || Buffer.byteLength(text, "utf8") + 1 <= maxBytes ? text + "\n" : text;
}

export async function writeOutput(
  file: string,
  text: string,
  environment: CliEnvironment,
  maxBytes?: number,
): Promise<string> {
  const path = inputPath(file, environment);
  try {
    await writeFile(path, withNewline(text, maxBytes));
  } catch (error) {
    throw new CliError(EXIT.usage, `cannot write ${file}: ${(error as Error).message}`, {
      where: path,
      fix: "check that the directory exists and is writable",
    });
  }
  return path;
}

/** Statebag's own "this data is wrong" errors become exit 1 with their pointer; others pass through. */
const NOT_DATA_ERRORS = new Set(["store-unavailable", "store-not-set-up", "conflict", "configuration"]);

export function asFailure(error: unknown, what: string, file: string): unknown {
  if (error instanceof StatebagError && !(error instanceof CliError) && !NOT_DATA_ERRORS.has(error.code)) {
    const pointer = (error as { pointer?: unknown }).pointer;
    return new CliError(EXIT.failed, `${what}: ${messageOf(error)}`, {
      where: typeof pointer === "string" ? `${file}${pointer === "" ? "" : ` at ${pointer}`}` : file,
      fix: error.hint,
      cause: error,
    });
  }
  return error;
}

/** Runs a conversion, mapping data errors with `asFailure`. */
export function convert<T>(what: string, file: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw asFailure(error, what, file);
  }
}
