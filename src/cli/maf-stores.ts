/**
 * `statebag import --from dotnet-fs-store <root> --store <url>` and `statebag import --from
 * cosmos-chat-history <file> --store <url>`: Agent Framework .NET stores read whole
 * (src/runtime/interop/maf-stores.ts).
 *
 * - A `FileSystemAgentSessionStore` tree (`{root}/a-{agent}/u-{user}/c-{conversation}.json`): each
 *   file is a .NET session, imported create-if-absent under its path without `.json` (so a re-run
 *   imports nothing twice), with its agent, user and conversation recorded (`withFsStoreOwner`).
 *   The same id checks, size and JSON limits, dry run and skip listing as a directory import.
 * - A Cosmos DB chat-history export (an array or JSON lines): one message log per conversation,
 *   create-if-absent like `--from python-history`: a log already holding the messages is left as
 *   it is, one holding the start of them gets the rest, one holding others is reported. Appends use
 *   an operation id made of the log's content hash, so a retried run appends nothing twice.
 *
 * Both report one line per file (per conversation for Cosmos), bounded on a terminal (`--json`
 * lists all of them), and exit 1 when anything could not be imported.
 */
import { createHash } from "node:crypto";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { ChatMessage } from "../runtime/core/messages.js";
import type { AgentSession } from "../runtime/core/session.js";
import { checkId } from "../runtime/stores/common.js";
import { inputPath, messageOf, type CommandContext } from "./context.js";
import { CliError, EXIT, echo, type ExitCode } from "./io.js";
import { asFailure } from "./interop-io.js";
import { DEFAULT_MAX_BYTES, readDocumentFile, readStdinBytes } from "./read-document.js";
import { cliKeyring, openCliStore } from "./store.js";

export const DOTNET_FS_STORE_FORMAT = "dotnet-fs-store";
export const COSMOS_CHAT_HISTORY_FORMAT = "cosmos-chat-history";

/** How many per-file lines a text report shows (--json lists them all). */
const LISTED = 50;

interface MafStoreImportOptions {
  id?: string;
  out?: string;
  historyKey?: string;
  store?: string;
  save?: boolean;
  dryRun?: boolean;
  maxBytes?: number;
  json?: boolean;
  keyring?: string;
}

type Outcome = "imported" | "unchanged" | "conflict" | "failed";

/** Usage errors common to both: a store is needed, and ids come from the input. */
function checkUsage(format: string, inputs: string[], options: MafStoreImportOptions, example: string): void {
  if (options.save !== true && options.store === undefined)
    throw new CliError(EXIT.usage, `--from ${format} imports into a store: give --store (or --save)`, { fix: example });
  if (inputs.length !== 1)
    throw new CliError(EXIT.usage, `--from ${format} takes one input, ${inputs.length} given`, { fix: example });
  if (options.id !== undefined)
    throw new CliError(
      EXIT.usage,
      `--id does not go with --from ${format}: the ids come from the ${format === DOTNET_FS_STORE_FORMAT ? "files' paths" : "conversation ids"}`,
      { fix: example },
    );
  if (options.out !== undefined)
    throw new CliError(EXIT.usage, `--out does not go with --from ${format}: everything goes into the store`, {
      fix: example,
    });
}

/** A store that cannot be reached stops the run (every later file would fail the same way). */
function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "store-unavailable" || code === "store-not-set-up";
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

interface FileResult {
  file: string;
  id?: string;
  agent?: string;
  user?: string;
  conversation?: string;
  outcome: Outcome;
  pointer?: string;
  message?: string;
}

/** `import --from dotnet-fs-store <root> --store <url>`. */
export async function importDotnetFsStore(
  context: CommandContext,
  inputs: string[],
  options: MafStoreImportOptions,
): Promise<ExitCode> {
  const example = "statebag import --from dotnet-fs-store ./sessions --store sqlite:./sessions.db";
  checkUsage(DOTNET_FS_STORE_FORMAT, inputs, options, example);
  const out = context.output(options);
  const input = inputs[0];
  if (input === "-")
    throw new CliError(EXIT.usage, "a FileSystemAgentSessionStore is a directory, not stdin", { fix: example });
  const root = inputPath(input, context.environment);
  const info = await stat(root).catch(() => {
    throw new CliError(EXIT.usage, `cannot read ${echo(input)}: no such file or directory`, {
      where: root,
      fix: "give the store's root directory (the one holding a-{agent} / c-{conversation}.json)",
    });
  });
  if (!info.isDirectory())
    throw new CliError(EXIT.usage, `${echo(input)} is not a directory`, {
      where: root,
      fix: "give the store's root directory (the one holding a-{agent} / c-{conversation}.json)",
    });
  const interop = await import("../runtime/interop/index.js");
  const stores = await import("../runtime/interop/maf-stores.js");
  const { parseJson } = await import("../runtime/json/safe-json.js");
  const { jsonEqual } = await import("../runtime/interop/json-util.js");
  const { deserializeSession, serializeSession } = await import("../runtime/persistence/serialization.js");
  const { ConflictError } = await import("../runtime/stores/errors.js");
  const sameAsStored = (stored: AgentSession, fresh: AgentSession) =>
    jsonEqual(deserializeSession(serializeSession(stored)), deserializeSession(serializeSession(fresh)));
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const limits = options.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes };
  const listed = await stores.listDotnetFsStore(root);
  const skipped = listed.skipped.map((s) => ({ file: join(input, s.file), reason: s.reason }));
  if (listed.entries.length === 0) {
    throw new CliError(
      EXIT.usage,
      `no c-{conversation}.json session files under ${echo(input)}${skipped.length ? ` (${skipped.length} skipped)` : ""}`,
      { fix: "give the root directory a FileSystemAgentSessionStore writes to" },
    );
  }
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const results: FileResult[] = [];
  const progress = await out.progress();
  try {
    progress.start(listed.entries.length, options.dryRun ? "checking" : "importing");
    for (const entry of listed.entries) {
      const name = join(input, entry.file);
      const result: FileResult = {
        file: name,
        id: entry.id,
        ...(entry.agent !== undefined ? { agent: entry.agent } : {}),
        ...(entry.user !== undefined ? { user: entry.user } : {}),
        conversation: entry.conversation,
        outcome: "failed",
      };
      try {
        try {
          checkId(entry.id);
        } catch (error) {
          throw new CliError(
            EXIT.failed,
            `the session id from this file's path cannot be stored: ${messageOf(error)}`,
            { where: name, fix: "import the file on its own with --from dotnet --id <id>" },
          );
        }
        const bytes = await readDocumentFile(join(root, ...entry.file.split("/")), name, maxBytes);
        const parsed = parseJson(bytes, limits);
        const shape = stores.fsStoreShape(parsed, name);
        const session = stores.withFsStoreOwner(
          interop.importSession(parsed as object, {
            from: shape,
            id: entry.id,
            ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}),
            ...(limits ? { limits } : {}),
          }),
          entry,
        );
        // Validated as the store would, before anything is written.
        serializeSession(session, { validate: true });
        const existing = await opened.store.get(session.id);
        if (existing !== undefined) result.outcome = sameAsStored(existing.session, session) ? "unchanged" : "conflict";
        else if (options.dryRun) result.outcome = "imported";
        else {
          try {
            await opened.store.save(session, { expectedRevision: null });
            result.outcome = "imported";
          } catch (error) {
            if (!(error instanceof ConflictError)) throw error;
            // Saved by another run meanwhile: the same content counts as done.
            const now = await opened.store.get(session.id);
            result.outcome = now !== undefined && sameAsStored(now.session, session) ? "unchanged" : "conflict";
          }
        }
      } catch (error) {
        if (isUnreachable(error)) throw error;
        const failure = asFailure(error, `cannot import ${name}`, name);
        const pointer = (error as { pointer?: unknown }).pointer;
        result.outcome = "failed";
        if (typeof pointer === "string") result.pointer = pointer;
        result.message = failure instanceof CliError ? failure.message : messageOf(failure);
      }
      results.push(result);
      progress.increment();
    }
  } finally {
    progress.stop();
    await opened.close();
  }
  const count = (o: Outcome) => results.filter((r) => r.outcome === o).length;
  const bad = count("failed") + count("conflict");
  if (options.json) {
    out.result({
      ok: bad === 0,
      dryRun: options.dryRun === true,
      store: opened.url,
      ...(opened.empty ? { emptyStore: opened.empty } : {}),
      from: DOTNET_FS_STORE_FORMAT,
      imported: count("imported"),
      unchanged: count("unchanged"),
      conflicts: count("conflict"),
      failed: count("failed"),
      files: results,
      skipped,
    });
    return bad === 0 ? EXIT.ok : EXIT.failed;
  }
  const { c: colors } = out;
  const verb = options.dryRun ? "would import" : "imported";
  out.line(
    `${bad === 0 ? colors.green("✔") : colors.yellow("!")} ${results.length} session file${results.length === 1 ? "" : "s"} of a FileSystemAgentSessionStore into ${opened.url}${options.dryRun ? colors.dim(" (dry run: nothing written)") : ""}: ${verb} ${count("imported")}, already there ${count("unchanged")}, different session already stored ${count("conflict")}, unreadable ${count("failed")}${skipped.length ? `, skipped ${skipped.length}` : ""}`,
  );
  if (opened.empty) out.line(colors.dim(`  ${echo(opened.empty)}: read as an empty store, nothing created`));
  for (const result of results.slice(0, LISTED)) {
    const owner = [
      result.agent !== undefined ? `agent ${echo(result.agent, 120)}` : "",
      result.user !== undefined ? `user ${echo(result.user, 120)}` : "",
      `conversation ${echo(result.conversation, 120)}`,
    ]
      .filter(Boolean)
      .join(", ");
    if (result.outcome === "failed")
      out.line(
        `  ${colors.red("✖")} ${echo(result.file)}${result.pointer ? ` at ${echo(result.pointer)}` : ""}: ${echo(result.message ?? "", 400)}`,
      );
    else if (result.outcome === "conflict")
      out.line(
        `  ${colors.yellow("≠")} ${echo(result.file)}: session ${echo(result.id)} is stored with other content (left as it is)`,
      );
    else
      out.line(
        colors.dim(
          `    ${echo(result.file)} -> session ${echo(result.id)} (${owner}): ${result.outcome === "imported" ? verb : "already there"}`,
        ),
      );
  }
  for (const skip of skipped.slice(0, LISTED))
    out.line(`  ${colors.yellow("-")} ${echo(skip.file)}: skipped, ${skip.reason}`);
  const unlisted = Math.max(0, results.length - LISTED) + Math.max(0, skipped.length - LISTED);
  if (unlisted > 0) out.line(`  ... and ${unlisted} more (use --json for the full list)`);
  return bad === 0 ? EXIT.ok : EXIT.failed;
}

interface LogResult {
  log: string;
  conversation: string;
  tenant?: string;
  user?: string;
  outcome: Outcome | "appended";
  messages: number;
  message?: string;
}

/** `import --from cosmos-chat-history <file> --store <url>`. */
export async function importCosmosChatHistory(
  context: CommandContext,
  inputs: string[],
  options: MafStoreImportOptions,
): Promise<ExitCode> {
  const example = "statebag import --from cosmos-chat-history export.json --store sqlite:./sessions.db";
  checkUsage(COSMOS_CHAT_HISTORY_FORMAT, inputs, options, example);
  const out = context.output(options);
  const input = inputs[0];
  const name = input === "-" ? "(stdin)" : input;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (input !== "-") {
    const path = inputPath(input, context.environment);
    const info = await stat(path).catch(() => {
      throw new CliError(EXIT.usage, `cannot read ${echo(input)}: no such file or directory`, {
        where: path,
        fix: 'check the path (use "-" to read stdin)',
      });
    });
    if (info.isDirectory())
      throw new CliError(EXIT.usage, `${echo(input)} is a directory`, {
        where: path,
        fix: "give the container's JSON export (an array of documents, or one per line)",
      });
  }
  const bytes =
    input === "-"
      ? await readStdinBytes(context.environment.stdin, maxBytes)
      : await readDocumentFile(inputPath(input, context.environment), input, maxBytes);
  const { readCosmosChatHistory } = await import("../runtime/interop/maf-stores.js");
  const { jsonEqual } = await import("../runtime/interop/json-util.js");
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new CliError(EXIT.failed, `${echo(name)} is not valid UTF-8`, {
      where: name,
      fix: "export the container as UTF-8 JSON",
    });
  }
  const limits = options.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes };
  let logs: ReturnType<typeof readCosmosChatHistory>;
  try {
    logs = readCosmosChatHistory(text, limits ? { limits } : {});
  } catch (error) {
    throw asFailure(error, `cannot import ${name}`, name);
  }
  if (logs.length === 0)
    throw new CliError(EXIT.failed, `${echo(name)} holds no chat-history documents`, {
      where: name,
      fix: "export the chat-history container's ChatMessage documents",
    });
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const results: LogResult[] = [];
  const plain = (m: readonly ChatMessage[]) => JSON.parse(JSON.stringify(m)) as unknown;
  try {
    for (const log of logs) {
      const result: LogResult = {
        log: log.storageId,
        conversation: log.conversationId,
        ...(log.tenantId !== undefined ? { tenant: log.tenantId } : {}),
        ...(log.userId !== undefined ? { user: log.userId } : {}),
        outcome: "failed",
        messages: 0,
      };
      try {
        try {
          checkId(log.storageId, "storageId");
        } catch (error) {
          throw new CliError(EXIT.failed, `the conversation's log id cannot be stored: ${messageOf(error)}`, {
            where: name,
          });
        }
        const stored = await opened.store.messages.getMessages(log.storageId);
        const messages = log.messages;
        let rest: readonly ChatMessage[] = messages;
        if (stored.length === 0) result.outcome = messages.length === 0 ? "unchanged" : "imported";
        else if (
          stored.length <= messages.length &&
          jsonEqual(plain(stored), plain(messages.slice(0, stored.length)))
        ) {
          rest = messages.slice(stored.length);
          result.outcome = rest.length === 0 ? "unchanged" : "appended";
        } else result.outcome = "conflict";
        if (result.outcome === "imported" || result.outcome === "appended") {
          result.messages = rest.length;
          if (!options.dryRun) {
            // The same log content and starting point give the same id: a retried run appends nothing.
            const hash = createHash("sha256")
              .update(log.storageId)
              .update("\0")
              .update(JSON.stringify(messages))
              .digest("hex")
              .slice(0, 32);
            await opened.store.messages.appendMessages(log.storageId, rest, {
              operationId: `statebag-import:cosmos-chat-history:${hash}:${stored.length}`,
            });
          }
        }
      } catch (error) {
        if (isUnreachable(error)) throw error;
        result.outcome = "failed";
        result.message = messageOf(asFailure(error, `cannot import conversation ${log.storageId}`, name));
      }
      results.push(result);
    }
  } finally {
    await opened.close();
  }
  const count = (o: LogResult["outcome"]) => results.filter((r) => r.outcome === o).length;
  const bad = count("failed") + count("conflict");
  if (options.json) {
    out.result({
      ok: bad === 0,
      dryRun: options.dryRun === true,
      store: opened.url,
      ...(opened.empty ? { emptyStore: opened.empty } : {}),
      from: COSMOS_CHAT_HISTORY_FORMAT,
      file: name,
      logs: results,
    });
    return bad === 0 ? EXIT.ok : EXIT.failed;
  }
  const { c: colors } = out;
  const verb = options.dryRun ? "would import" : "imported";
  out.line(
    `${bad === 0 ? colors.green("✔") : colors.yellow("!")} ${results.length} conversation${results.length === 1 ? "" : "s"} of ${echo(name)} into the message logs of ${opened.url}${options.dryRun ? colors.dim(" (dry run: nothing written)") : ""}: ${verb} ${count("imported")}, appended to ${count("appended")}, already there ${count("unchanged")}, other messages already logged ${count("conflict")}, failed ${count("failed")}`,
  );
  if (opened.empty) out.line(colors.dim(`  ${echo(opened.empty)}: read as an empty store, nothing created`));
  for (const result of results.slice(0, LISTED)) {
    if (result.outcome === "failed")
      out.line(`  ${colors.red("✖")} log ${echo(result.log)}: ${echo(result.message ?? "", 400)}`);
    else if (result.outcome === "conflict")
      out.line(`  ${colors.yellow("≠")} log ${echo(result.log)} holds other messages (left as it is)`);
    else
      out.line(
        colors.dim(
          `    conversation ${echo(result.conversation)} -> log ${echo(result.log)}: ${result.outcome === "imported" ? verb : result.outcome === "appended" ? (options.dryRun ? "would append" : "appended") : "already there"}${result.messages ? ` (${result.messages} message${result.messages === 1 ? "" : "s"})` : ""}`,
        ),
      );
  }
  if (results.length > LISTED) out.line(`  ... and ${results.length - LISTED} more (use --json for the full list)`);
  return bad === 0 ? EXIT.ok : EXIT.failed;
}
