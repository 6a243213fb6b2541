/**
 * `statebag import --from python-history <file|dir...> --store <url>` and `statebag export --to
 * python-history`: Agent Framework for Python's `FileHistoryProvider` files (`<stem>.jsonl`,
 * `<stem>.msgpack`) into and out of a store's message logs (`store.messages`), one log per file,
 * named by the session id the file name encodes (or `--id`).
 *
 * Import is create-if-absent like session import: a log already holding the file's messages is
 * left as it is; a log holding the start of them (the file grew since) gets the rest appended; a
 * log holding other messages is reported and left alone. Appends use an operation id made of the
 * file's content hash, so a retried run appends nothing twice.
 */
import { createHash } from "node:crypto";
import { readdir, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { ChatMessage } from "../runtime/core/messages.js";
import type { AgentSession } from "../runtime/core/session.js";
import { inputPath, messageOf, type CommandContext } from "./context.js";
import { CliError, EXIT, echo, type ExitCode } from "./io.js";
import { asFailure, writeOutput } from "./interop-io.js";
import { DEFAULT_MAX_BYTES, readDocumentFile } from "./read-document.js";
import { cliKeyring, openCliStore } from "./store.js";

export const PYTHON_HISTORY_FORMAT = "python-history";

interface HistoryImportOptions {
  id?: string;
  store?: string;
  save?: boolean;
  dryRun?: boolean;
  maxBytes?: number;
  json?: boolean;
  keyring?: string;
}

interface HistoryFile {
  name: string;
  path: string;
  key?: string;
}

async function collectHistories(
  inputs: string[],
  context: CommandContext,
): Promise<{ files: HistoryFile[]; skipped: { file: string; reason: string }[] }> {
  const { historyFileKey } = await import("../runtime/interop/python-history.js");
  const files: HistoryFile[] = [];
  const skipped: { file: string; reason: string }[] = [];
  for (const input of inputs) {
    if (input === "-")
      throw new CliError(EXIT.usage, "a history is read from its file (its name says the session id and the format)", {
        fix: "give the .jsonl or .msgpack file, or the FileHistoryProvider directory",
      });
    const path = inputPath(input, context.environment);
    const info = await stat(path).catch(() => {
      throw new CliError(EXIT.usage, `cannot read ${echo(input)}: no such file or directory`, {
        where: path,
        fix: "check the path",
      });
    });
    if (info.isDirectory()) {
      const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
      for (const entry of entries) {
        if (!entry.name.endsWith(".jsonl") && !entry.name.endsWith(".msgpack")) continue;
        const name = join(input, entry.name);
        if (!entry.isFile())
          skipped.push({
            file: name,
            reason: entry.isSymbolicLink() ? "a symbolic link (not followed)" : "not a regular file",
          });
        else if (entry.name.startsWith(".")) skipped.push({ file: name, reason: "a hidden file" });
        else
          files.push({
            name,
            path: join(path, entry.name),
            ...(historyFileKey(entry.name)?.key !== undefined ? { key: historyFileKey(entry.name)!.key } : {}),
          });
      }
    } else {
      const decoded = historyFileKey(basename(input));
      if (decoded === undefined && extname(input) !== ".jsonl" && extname(input) !== ".msgpack") {
        throw new CliError(EXIT.usage, `${echo(input)} is not a FileHistoryProvider file`, {
          fix: "history files end in .jsonl (JSON Lines) or .msgpack (length-prefixed msgpack)",
        });
      }
      files.push({ name: input, path, ...(decoded?.key !== undefined ? { key: decoded.key } : {}) });
    }
  }
  return { files, skipped };
}

/** `import --from python-history`. */
export async function importPythonHistories(
  context: CommandContext,
  inputs: string[],
  options: HistoryImportOptions,
): Promise<ExitCode> {
  const out = context.output(options);
  if (options.save !== true && options.store === undefined) {
    throw new CliError(EXIT.usage, "a history goes into a store's message log: give --store (or --save)", {
      fix: "statebag import --from python-history ./history --store sqlite:./sessions.db",
    });
  }
  const interop = await import("../runtime/interop/index.js");
  const { jsonEqual } = await import("../runtime/interop/json-util.js");
  const { files, skipped } = await collectHistories(inputs, context);
  if (files.length === 0)
    throw new CliError(EXIT.usage, "no .jsonl or .msgpack history files given", {
      fix: "give the FileHistoryProvider directory or its files",
    });
  if (options.id !== undefined && files.length !== 1)
    throw new CliError(EXIT.usage, "--id takes one history file", {
      fix: "import several files without --id: each file name says its session id",
    });
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const results: {
    file: string;
    log?: string;
    outcome: "imported" | "appended" | "unchanged" | "conflict" | "failed";
    messages?: number;
    message?: string;
  }[] = [];
  try {
    for (const file of files) {
      try {
        const key = options.id ?? file.key;
        if (key === undefined)
          throw new CliError(
            EXIT.failed,
            "the file name is a hash (~session-sha256-...), which does not say the session id",
            { where: file.name, fix: "import it on its own with --id <session id>" },
          );
        const bytes = await readDocumentFile(file.path, file.name, options.maxBytes ?? DEFAULT_MAX_BYTES);
        const records = file.name.endsWith(".msgpack")
          ? interop.readHistoryMsgpack(bytes, await interop.loadMsgpack())
          : interop.readHistoryJsonl(bytes);
        const messages = interop.importPythonHistory(records);
        const stored = await opened.store.messages.getMessages(key);
        const same = (a: readonly ChatMessage[], b: readonly ChatMessage[]) =>
          a.length === b.length && jsonEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
        const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 32);
        let outcome: "imported" | "appended" | "unchanged" | "conflict";
        let rest = messages;
        if (stored.length === 0) outcome = messages.length === 0 ? "unchanged" : "imported";
        else if (stored.length <= messages.length && same(stored, messages.slice(0, stored.length))) {
          rest = messages.slice(stored.length);
          outcome = rest.length === 0 ? "unchanged" : "appended";
        } else outcome = "conflict";
        if ((outcome === "imported" || outcome === "appended") && !options.dryRun) {
          await opened.store.messages.appendMessages(key, rest, {
            operationId: `statebag-import:python-history:${hash}:${stored.length}`,
          });
        }
        results.push({ file: file.name, log: key, outcome, messages: rest.length });
      } catch (error) {
        if ((error as { code?: unknown }).code === "store-unavailable") throw error;
        const failure = asFailure(error, `cannot import ${file.name}`, file.name);
        results.push({ file: file.name, outcome: "failed", message: messageOf(failure) });
      }
    }
  } finally {
    await opened.close();
  }
  const count = (o: string) => results.filter((r) => r.outcome === o).length;
  const failed = count("failed") + count("conflict");
  if (options.json) {
    out.result({
      ok: failed === 0,
      dryRun: options.dryRun === true,
      store: opened.url,
      from: PYTHON_HISTORY_FORMAT,
      files: results,
      skipped,
    });
  } else {
    const verb = options.dryRun ? "would import" : "imported";
    out.line(
      `${failed === 0 ? out.c.green("✔") : out.c.yellow("!")} ${files.length} history file${files.length === 1 ? "" : "s"} into the message logs of ${opened.url}${options.dryRun ? out.c.dim(" (dry run: nothing written)") : ""}: ${verb} ${count("imported")}, appended to ${count("appended")}, already there ${count("unchanged")}, other messages already logged ${count("conflict")}, unreadable ${count("failed")}`,
    );
    for (const result of results) {
      if (result.outcome === "failed")
        out.line(`  ${out.c.red("✖")} ${echo(result.file)}: ${echo(result.message ?? "", 400)}`);
      else if (result.outcome === "conflict")
        out.line(
          `  ${out.c.yellow("≠")} ${echo(result.file)}: log ${echo(result.log!)} holds other messages (left as it is)`,
        );
      else
        out.line(
          out.c.dim(
            `    ${echo(result.file)} -> log ${echo(result.log!)}: ${result.outcome}${result.messages ? ` (${result.messages} message${result.messages === 1 ? "" : "s"})` : ""}`,
          ),
        );
    }
    for (const skip of skipped) out.line(`  ${out.c.yellow("-")} ${echo(skip.file)}: skipped, ${skip.reason}`);
  }
  return failed === 0 ? EXIT.ok : EXIT.failed;
}

interface HistoryExportOptions {
  id?: string;
  all?: boolean;
  out?: string;
  store?: string;
  historyKey?: string;
  json?: boolean;
  keyring?: string;
}

/**
 * `export --to python-history`: the messages of a session's history (`--id`, resolved from the
 * message log when it lives there), or of the message log with that id when no session has it, or
 * of a statebag session file. `--out x.msgpack` writes the msgpack form; anything else JSON Lines.
 */
export async function exportPythonHistory(
  context: CommandContext,
  file: string | undefined,
  options: HistoryExportOptions,
  loadFile: (file: string) => Promise<AgentSession>,
): Promise<ExitCode> {
  const out = context.output(options);
  if (options.all)
    throw new CliError(
      EXIT.usage,
      "--to python-history writes one history: give --id (a session or message log id) or a session file",
      { fix: "statebag export --to python-history --id <id> --store <url> --out <id>.jsonl" },
    );
  const interop = await import("../runtime/interop/index.js");
  const historyKey = options.historyKey ?? "statebag.chatHistory";
  const fromSession = (session: AgentSession): ChatMessage[] | undefined => {
    const history = session.stateBag[historyKey] as unknown as { $type?: string; messages?: ChatMessage[] } | undefined;
    return history?.$type === "InMemoryChatHistoryState" && Array.isArray(history.messages)
      ? history.messages
      : undefined;
  };
  let messages: ChatMessage[] | undefined;
  let source: string;
  if (file !== undefined) {
    source = file;
    messages = fromSession(await loadFile(file));
    if (messages === undefined)
      throw new CliError(EXIT.failed, `${echo(file)} has no in-memory history under ${echo(historyKey)}`, {
        fix: "export a stored session with --id (its message log is read), or name the history with --history-key",
      });
  } else {
    const opened = await openCliStore(options.store, context.environment, {
      configured: context.project()?.store,
      readOnly: true,
      keyring: cliKeyring(options, context),
    });
    source = `${echo(options.id!)} in ${opened.url}`;
    try {
      const stored = await opened.store.get(options.id!);
      if (stored !== undefined)
        messages = fromSession(
          await interop.resolveStoredHistory(stored.session, opened.store.messages, { historyKey }),
        );
      if (messages === undefined) {
        const logged = await opened.store.messages.getMessages(options.id!);
        if (logged.length > 0 || stored === undefined) messages = logged;
      }
      if (stored === undefined && messages!.length === 0)
        throw new CliError(EXIT.failed, `no session and no message log ${source}`, {
          fix: "list stored sessions with: statebag inspect --store <url>",
        });
    } finally {
      await opened.close();
    }
  }
  const msgpack = options.out?.endsWith(".msgpack");
  const body = msgpack
    ? interop.exportPythonHistoryMsgpack(messages!, await interop.loadMsgpack())
    : interop.exportPythonHistoryJsonl(messages!);
  if (options.out === undefined) {
    context.environment.stdout.write(body as string);
    return EXIT.ok;
  }
  const written = msgpack
    ? await writeBytes(inputPath(options.out, context.environment), body as Uint8Array, options.out)
    : await writeOutput(options.out, body as string, context.environment);
  out.result({ ok: true, to: PYTHON_HISTORY_FORMAT, messages: messages!.length, out: written });
  out.line(
    `${out.c.green("✔")} exported ${messages!.length} message${messages!.length === 1 ? "" : "s"} of ${source} as a FileHistoryProvider ${msgpack ? "msgpack" : "JSON Lines"} history: ${echo(written)}`,
  );
  return EXIT.ok;
}

async function writeBytes(path: string, bytes: Uint8Array, name: string): Promise<string> {
  const { writeFile } = await import("node:fs/promises");
  try {
    await writeFile(path, bytes);
  } catch (error) {
    throw new CliError(EXIT.usage, `cannot write ${name}: ${(error as Error).message}`, {
      where: path,
      fix: "check that the directory exists and is writable",
    });
  }
  return path;
}
