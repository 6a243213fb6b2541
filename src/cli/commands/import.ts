/**
 * `statebag import [--from <shape>] <file|dir|-...>`: reads sessions written by Microsoft Agent
 * Framework, in any shape it has written (see `--help`), into statebag sessions (validated).
 *
 * One document without a store prints the statebag session (or writes `--out`). With `--store`
 * / `--save`, several files or a directory (such as a Python `FileSessionStore`), every document
 * is imported into the store: create-if-absent per session id, so a re-run imports nothing twice
 * and an interrupted run resumes where it stopped; documents that cannot be read are reported
 * (file, pointer, reason) while the rest go through.
 */
import { readdir, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { Command } from "commander";
import { Option } from "commander";
import { action, inputPath, jsonOption, messageOf, storeOption, type CommandContext } from "../context.js";
import { CliError, EXIT, echo, type ExitCode } from "../io.js";
import {
  convert,
  FORMATS,
  IMPORT_FORMATS,
  importShapeHelp,
  parseImportFormat,
  withNewline,
  writeOutput,
  type ImportFormat,
} from "../interop-io.js";
import { DEFAULT_MAX_BYTES, formatBytes, maxBytesOption, readDocumentFile, readStdinBytes } from "../read-document.js";
import { stateLine, summarize } from "../session-report.js";
import { cliKeyring, keyringOption, openCliStore } from "../store.js";
import { isLangGraphSource, LANGGRAPH_SOURCES } from "../langgraph-sources.js";
import type { AgentSession } from "../../runtime/core/session.js";
import type { SessionShape } from "../../runtime/interop/shapes.js";
import { checkId } from "../../runtime/stores/common.js";

interface ImportOptions {
  from?: ImportFormat;
  out?: string;
  id?: string;
  historyKey?: string;
  save?: boolean;
  store?: string;
  dryRun?: boolean;
  maxBytes?: number;
  json?: boolean;
  keyring?: string;
}

/** How many unreadable documents a text report lists (--json lists them all). */
const LISTED_FAILURES = 50;

export function registerImport(program: Command, context: CommandContext): void {
  program
    .command("import")
    .summary("read Agent Framework sessions (any .NET, Python or durable shape) into statebag sessions")
    .description(
      "Converts session documents written by Microsoft Agent Framework into statebag sessions and validates them.\n\n" +
        importShapeHelp() +
        "\n\nWithout --from, each document's shape is recognised (and named, with the evidence); a document two shapes would read differently needs --from. " +
        "One document prints the statebag session unless --out or --store/--save is given. With --store (or --save), every file and directory given (a directory: its *.json files, " +
        "such as a Python FileSessionStore) is imported into the store: sessions already there are left alone (re-running imports nothing twice), and documents that cannot be read are listed while the rest go through.",
    )
    .addOption(
      new Option("--from <shape>", "the documents' shape (default: recognised per document)")
        .choices([...IMPORT_FORMATS, ...LANGGRAPH_SOURCES, "openai-agents"])
        .argParser((v: string) =>
          isLangGraphSource(v) || v === "openai-agents" ? (v as unknown as ImportFormat) : parseImportFormat(v),
        ),
    )
    .argument("<inputs...>", 'documents or directories to import ("-": stdin)')
    .option("-o, --out <file>", "write the statebag session document to this file (one input)")
    .option(
      "--id <id>",
      "the statebag session id (one input; default: the document's own, else its file name, else a new UUID)",
    )
    .option("--history-key <key>", 'statebag history key (default "statebag.chatHistory")')
    .option("--save", "import into the store (see --store); implied by --store")
    .option(
      "--dry-run",
      "read and check everything, write nothing (with --store/--save); a store that does not exist yet is read as empty and not created",
    )
    .addOption(maxBytesOption())
    .addOption(storeOption())
    .addOption(keyringOption())
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag import thread.json > session.statebag.json        # shape recognised
  $ statebag import --from dotnet-thread thread.json -o session.statebag.json
  $ statebag import --from python-file-store ./sessions --store sqlite:./sessions.db --dry-run
  $ statebag import exported/*.json --store postgres://app@db/app
  $ statebag import --from dotnet-fs-store ./sessions --store sqlite:./sessions.db
  $ statebag import --from cosmos-chat-history export.json --store sqlite:./sessions.db
  $ statebag import --from langgraph-sqlite ./checkpoints.db --store sqlite:./sessions.db --dry-run --json
  $ statebag import --from openai-agents history.json run-state.json --store sqlite:./sessions.db --dry-run --json`,
    )
    .action(action(context, (inputs: string[], options: ImportOptions) => runImport(context, inputs, options)));
}

interface Document {
  /** What the report calls it (the path as given, or "(stdin)"). */
  name: string;
  /** The id for documents without one of their own: the file name without its extension. */
  fallbackId?: string;
  /** The document's bytes, size-checked first (the loader decodes them). */
  read: () => Promise<Buffer>;
  /** A `.msgpack` file (a msgpack FileSessionStore snapshot): decoded with @msgpack/msgpack. */
  msgpack?: boolean;
}

/** A `*.json` entry of a directory that is not imported, and why. */
interface Skipped {
  file: string;
  reason: string;
}

/**
 * The documents to import. A directory gives its `*.json` regular files; links and other entries
 * are skipped and listed (a link is not followed: it may lead out of the directory, or to a file
 * imported under another name).
 */
async function collect(
  inputs: string[],
  context: CommandContext,
  maxBytes: number,
): Promise<{ docs: Document[]; skipped: Skipped[] }> {
  const { environment } = context;
  const docs: Document[] = [];
  const skipped: Skipped[] = [];
  for (const input of inputs) {
    if (input === "-") {
      docs.push({ name: "(stdin)", read: () => readStdinBytes(environment.stdin, maxBytes) });
      continue;
    }
    const path = inputPath(input, environment);
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(
        EXIT.usage,
        `cannot read ${echo(input)}: ${error.code === "ENOENT" ? "no such file or directory" : error.message}`,
        { where: path, fix: 'check the path (use "-" to read stdin)' },
      );
    });
    if (info.isDirectory()) {
      const entries = (await readdir(path, { withFileTypes: true }))
        .filter((e) => e.name.endsWith(".json") || e.name.endsWith(".msgpack"))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        const name = join(input, entry.name);
        if (entry.isSymbolicLink())
          skipped.push({
            file: name,
            reason: "a symbolic link (not followed: pass the file it points to by its path)",
          });
        else if (!entry.isFile())
          skipped.push({
            file: name,
            reason: entry.isDirectory()
              ? "a directory (directories are not searched recursively)"
              : "not a regular file",
          });
        else if (entry.name.startsWith("."))
          skipped.push({ file: name, reason: "a hidden file (pass it by its path to import it)" });
        else
          docs.push({
            name,
            fallbackId: entry.name.slice(0, -extname(entry.name).length),
            read: () => readDocumentFile(join(path, entry.name), name, maxBytes),
            ...(entry.name.endsWith(".msgpack") ? { msgpack: true } : {}),
          });
      }
    } else {
      docs.push({
        name: input,
        fallbackId: basename(input, extname(input)),
        read: () => readDocumentFile(path, input, maxBytes),
        ...(input.endsWith(".msgpack") ? { msgpack: true } : {}),
      });
    }
  }
  return { docs, skipped };
}

interface Converted {
  session: AgentSession;
  shape: SessionShape | "ai-sdk-ui";
  evidence?: string;
}

type Interop = typeof import("../../runtime/interop/index.js");

/** Parses, recognises (unless --from) and converts one document. Throws data errors as they are. */
/** Every session of one document: one, or (--from ai-sdk-ui) one per chat the file holds. */
function convertAll(
  interop: Interop,
  text: Buffer,
  doc: Document,
  options: ImportOptions,
  id: string | undefined,
): Converted[] {
  if (options.from !== "ai-sdk-ui") return [convertOne(interop, text, doc, options, id)];
  const parsed = interopJson.parseJson(text, {
    protoKeys: "keep",
    ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
  });
  const sessions = uiChats!.importUIChats(parsed, {
    ...(id !== undefined ? { id } : {}),
    ...(doc.fallbackId !== undefined ? { fallbackId: doc.fallbackId } : {}),
    ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}),
  });
  return sessions.map((session) => (checkStorableId(session, doc), { session, shape: "ai-sdk-ui" as const }));
}

function convertOne(
  interop: Interop,
  text: Buffer,
  doc: Document,
  options: ImportOptions,
  id: string | undefined,
): Converted {
  const { parseJson } = interopJson;
  // A FileHistoryProvider file is a history, not a session: named with its evidence.
  const history = options.from === undefined ? interop.detectHistoryFile(basename(doc.name), text) : undefined;
  if (history !== undefined)
    throw new CliError(EXIT.failed, `this is not a session: ${history.evidence}`, {
      where: doc.name,
      fix: "import histories into a store's message logs with --from python-history --store <url>",
    });
  const limits = options.maxBytes === undefined ? undefined : { maxBytes: options.maxBytes };
  const parsed =
    doc.msgpack && msgpackCodec !== undefined
      ? interop.decodeMsgpackDocument(
          msgpackCodec,
          text,
          (options.from as SessionShape | undefined) ?? "python-file-store",
          limits,
        )
      : parseJson(text, limits);
  let shape = options.from as SessionShape | undefined;
  let evidence: string | undefined;
  if (shape === undefined) {
    const detected = interop.detectSessionShape(parsed);
    if (detected === undefined) {
      const non = interop.describeNonSession(parsed);
      if (non !== undefined) throw new CliError(EXIT.failed, non.problem, { where: doc.name, fix: non.hint });
      throw new CliError(
        EXIT.failed,
        interop.isStatebagDocument(parsed)
          ? "this is already a statebag session"
          : "not a session document of any Agent Framework shape statebag knows",
        {
          where: doc.name,
          fix: `name its shape with --from (one of ${FORMATS.join(", ")})`,
        },
      );
    }
    if (detected.ambiguous) {
      throw new CliError(
        EXIT.failed,
        `two readings are possible: ${detected.candidates.join(" or ")} (${detected.evidence})`,
        {
          where: doc.name,
          fix: `choose one with --from ${detected.candidates[0]} or --from ${detected.candidates[1]}`,
        },
      );
    }
    shape = detected.shape;
    evidence = detected.evidence;
  }
  const ownId = shape === "python" || shape === "python-memory" || shape === "python-file-store";
  // Read within --max-bytes, and (importSession's check) writable back within it: the statebag
  // document and this shape's document, so what imports can be exported and imported again.
  const session = interop.importSession(parsed as object, {
    from: shape,
    ...(id !== undefined ? { id } : ownId || doc.fallbackId === undefined ? {} : { id: doc.fallbackId }),
    ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}),
    ...(limits !== undefined ? { limits } : {}),
  });
  checkStorableId(session, doc);
  return { session, shape, ...(evidence !== undefined ? { evidence } : {}) };
}

/** The stores' own id rule, before anything is written (a lone surrogate would be refused by every store). */
function checkStorableId(session: AgentSession, doc: Document): void {
  try {
    checkId(session.id);
  } catch (error) {
    throw new CliError(EXIT.failed, `the session id from this document cannot be stored: ${messageOf(error)}`, {
      where: doc.name,
      fix: "give the session another id with --id <id> (one document at a time), or fix the id in the document",
    });
  }
}

let interopJson: typeof import("../../runtime/json/safe-json.js");
let msgpackCodec: import("../../runtime/interop/python-msgpack.js").MsgpackCodec | undefined;
let uiChats: typeof import("../../runtime/ui-messages/import.js") | undefined;

async function runImport(context: CommandContext, inputs: string[], options: ImportOptions): Promise<ExitCode> {
  if (isLangGraphSource(options.from))
    return (await import("../langgraph-import.js")).importLangGraph(context, inputs, options);
  if ((options.from as string) === "openai-agents")
    return (await import("../openai-agents-import.js")).importOpenAIAgents(context, inputs, options);
  if (options.from === "python-history")
    return (await import("../python-history.js")).importPythonHistories(context, inputs, options);
  if (options.from === "dotnet-fs-store")
    return (await import("../maf-stores.js")).importDotnetFsStore(context, inputs, options);
  if (options.from === "cosmos-chat-history")
    return (await import("../maf-stores.js")).importCosmosChatHistory(context, inputs, options);
  const interop = await import("../../runtime/interop/index.js");
  interopJson = await import("../../runtime/json/safe-json.js");
  if (options.from === "ai-sdk-ui") uiChats = await import("../../runtime/ui-messages/import.js");
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (options.id !== undefined) {
    try {
      checkId(options.id);
    } catch (error) {
      throw new CliError(EXIT.usage, `--id: ${messageOf(error)}`, {
        fix: "use an id of 1-1024 characters of well-formed text without NUL",
      });
    }
  }
  const { docs, skipped } = await collect(inputs, context, maxBytes);
  if (docs.some((d) => d.msgpack))
    msgpackCodec = await interop.loadMsgpack("statebag import (msgpack FileSessionStore snapshots)");
  const toStore = options.save === true || options.store !== undefined;
  // Listed on stderr for one document; the store report lists them with the rest.
  if (!toStore) for (const skip of skipped) context.output(options).warn(`skipped ${echo(skip.file)}: ${skip.reason}`);
  if (!toStore && (docs.length !== 1 || inputs.length !== 1)) {
    throw new CliError(EXIT.usage, `${docs.length} documents given without a store`, {
      fix: "import several documents or a directory with --store <url> (add --dry-run to only check them)",
    });
  }
  if (docs.length === 0) {
    throw new CliError(
      EXIT.usage,
      `no *.json documents in the given directories${
        skipped.length
          ? ` (${skipped.length} skipped: ${skipped
              .slice(0, 3)
              .map((s) => `${echo(s.file)}, ${s.reason}`)
              .join("; ")}${skipped.length > 3 ? "; ..." : ""})`
          : ""
      }`,
      {
        fix: "give the directory a Python FileSessionStore or your app wrote the documents to",
      },
    );
  }
  if ((options.id !== undefined || options.out !== undefined) && docs.length !== 1)
    throw new CliError(EXIT.usage, "--id and --out take one input", { fix: "import several documents with --store" });
  if (options.dryRun && !toStore)
    throw new CliError(EXIT.usage, "--dry-run goes with --store or --save", {
      fix: "statebag import <dir> --store <url> --dry-run",
    });
  if (options.dryRun && options.out !== undefined)
    throw new CliError(EXIT.usage, "--dry-run writes nothing, and --out writes a file", {
      fix: "leave out --out to check, or --dry-run to write it",
    });
  return toStore
    ? importIntoStore(context, interop, docs, skipped, options)
    : importOne(context, interop, docs[0], options);
}

async function importOne(
  context: CommandContext,
  interop: Interop,
  doc: Document,
  options: ImportOptions,
): Promise<ExitCode> {
  const out = context.output(options);
  const { environment } = context;
  const { serializeSession } = await import("../../runtime/persistence/serialization.js");
  const text = await doc.read();
  const all = convert(`cannot import ${doc.name}`, doc.name, () =>
    convertAll(
      interop,
      text,
      options.from === "ai-sdk-ui" ? doc : { ...doc, fallbackId: undefined },
      options,
      options.id,
    ),
  );
  if (all.length !== 1)
    throw new CliError(EXIT.usage, `${echo(doc.name)} holds ${all.length} chats`, {
      fix: "import them with --store <url> (add --dry-run to only check them)",
    });
  const converted = all[0];
  const { session, shape } = converted;
  if (converted.evidence !== undefined && !options.json)
    out.note(`${out.ce.dim("recognised")} ${shape}: ${converted.evidence}`);
  const stored = convert(`the session imported from ${doc.name} is not valid`, doc.name, () =>
    statebagText(serializeSession, session, options.maxBytes ?? DEFAULT_MAX_BYTES, doc.name),
  );
  // Written within the limit it is read back with (--max-bytes): the final newline too.
  let written: string | undefined;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (options.out !== undefined) written = await writeOutput(options.out, stored, environment, maxBytes);
  if (options.json) {
    out.result({
      ok: true,
      from: shape,
      ...(converted.evidence ? { evidence: converted.evidence } : {}),
      id: session.id,
      session: summarize(session),
      ...(written ? { out: written } : { document: JSON.parse(stored) }),
    });
    return EXIT.ok;
  }
  if (written === undefined) {
    environment.stdout.write(withNewline(stored, maxBytes));
    return EXIT.ok;
  }
  out.line(`${out.c.green("✔")} imported ${echo(doc.name)} (${shape}) as session ${echo(session.id)}`);
  for (const state of summarize(session).state) out.line(out.c.dim(`    ${stateLine(state)}`));
  out.line(`  wrote ${echo(written)}`);
  return EXIT.ok;
}

interface ShapeCounts {
  imported: number;
  unchanged: number;
  conflicts: number;
}

interface Failure {
  file: string;
  pointer?: string;
  message: string;
}

async function importIntoStore(
  context: CommandContext,
  interop: Interop,
  docs: Document[],
  skipped: Skipped[],
  options: ImportOptions,
): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const { ConflictError } = await import("../../runtime/stores/errors.js");
  const { jsonEqual } = await import("../../runtime/interop/json-util.js");
  const { deserializeSession, serializeSession } = await import("../../runtime/persistence/serialization.js");
  // The stored side was migrated and normalised on load: compare the fresh side after the same
  // save-and-load round trip, or a re-run would call an unchanged session "different".
  const sameAsStored = (stored: AgentSession, fresh: AgentSession) =>
    jsonEqual(deserializeSession(serializeSession(stored)), deserializeSession(serializeSession(fresh)));
  // A dry run opens the store read-only, creating nothing (no file, folder, table).
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const byShape = new Map<string, ShapeCounts>();
  const failed: Failure[] = [];
  const conflicts: { file: string; id: string }[] = [];
  const one: { session?: AgentSession; shape?: SessionShape | "ai-sdk-ui" } = {};
  const counts = (shape: string) => {
    let entry = byShape.get(shape);
    if (!entry) byShape.set(shape, (entry = { imported: 0, unchanged: 0, conflicts: 0 }));
    return entry;
  };
  const progress = await out.progress();
  const started = Date.now();
  try {
    progress.start(docs.length, options.dryRun ? "checking" : "importing");
    for (const doc of docs) {
      try {
        const text = await doc.read();
        for (const { session, shape } of convertAll(interop, text, doc, options, options.id)) {
          if (docs.length === 1) Object.assign(one, { session, shape });
          const existing = await opened.store.get(session.id);
          if (existing !== undefined) {
            if (sameAsStored(existing.session, session)) counts(shape).unchanged++;
            else {
              counts(shape).conflicts++;
              conflicts.push({ file: doc.name, id: session.id });
            }
          } else if (options.dryRun) {
            // What the save would check (the store's codec: a valid session within its size limit),
            // so a dry run never counts as importable what the real run would refuse.
            serializeSession(session, { validate: true });
            counts(shape).imported++;
          } else {
            try {
              await opened.store.save(session, { expectedRevision: null });
              counts(shape).imported++;
            } catch (error) {
              if (!(error instanceof ConflictError)) throw error;
              // Saved by someone else meanwhile (another import run): the same content counts as done.
              const now = await opened.store.get(session.id);
              if (now !== undefined && sameAsStored(now.session, session)) counts(shape).unchanged++;
              else {
                counts(shape).conflicts++;
                conflicts.push({ file: doc.name, id: session.id });
              }
            }
          }
        }
      } catch (error) {
        if (isUnreachable(error)) throw error;
        const pointer = (error as { pointer?: unknown }).pointer;
        failed.push({ file: doc.name, ...(typeof pointer === "string" ? { pointer } : {}), message: messageOf(error) });
      }
      progress.increment();
    }
  } finally {
    progress.stop();
    await opened.close();
  }
  let written: string | undefined;
  if (options.out !== undefined && one.session !== undefined) {
    const { serializeSession } = await import("../../runtime/persistence/serialization.js");
    written = await writeOutput(
      options.out,
      statebagText(serializeSession, one.session, options.maxBytes ?? DEFAULT_MAX_BYTES, docs[0].name),
      context.environment,
      options.maxBytes ?? DEFAULT_MAX_BYTES,
    );
  }
  const shapes = Object.fromEntries([...byShape].sort(([a], [b]) => (a < b ? -1 : 1)));
  const total = (k: keyof ShapeCounts) => [...byShape.values()].reduce((n, s) => n + s[k], 0);
  if (options.json) {
    out.result({
      ok: failed.length === 0,
      dryRun: options.dryRun === true,
      store: opened.url,
      ...(opened.empty ? { emptyStore: opened.empty } : {}),
      skipped,
      documents: docs.length,
      imported: total("imported"),
      unchanged: total("unchanged"),
      conflicts,
      failed,
      byShape: shapes,
      ...(written ? { out: written } : {}),
      durationMs: Date.now() - started,
    });
  } else {
    const verb = options.dryRun ? "would import" : "imported";
    out.line(
      `${failed.length === 0 ? colors.green("✔") : colors.yellow("!")} ${docs.length} document${docs.length === 1 ? "" : "s"} into ${opened.url}${options.dryRun ? colors.dim(" (dry run: nothing written)") : ""}: ${verb} ${total("imported")}, already there ${total("unchanged")}, different session already stored ${conflicts.length}, unreadable ${failed.length}${skipped.length ? `, skipped ${skipped.length}` : ""}`,
    );
    if (opened.empty) out.line(colors.dim(`  ${echo(opened.empty)}: read as an empty store, nothing created`));
    if (one.session !== undefined)
      out.line(`  ${echo(docs[0].name)} (${one.shape}) is session ${echo(one.session.id)}`);
    if (written !== undefined) out.line(`  wrote ${echo(written)}`);
    for (const [shape, count] of Object.entries(shapes))
      out.line(
        colors.dim(
          `    ${shape.padEnd(22)} ${verb} ${count.imported}, already there ${count.unchanged}${count.conflicts ? `, different session stored ${count.conflicts}` : ""}`,
        ),
      );
    for (const conflict of conflicts.slice(0, LISTED_FAILURES))
      out.line(
        `  ${colors.yellow("≠")} ${echo(conflict.file)}: session ${echo(conflict.id)} is stored with other content (left as it is)`,
      );
    for (const skip of skipped.slice(0, LISTED_FAILURES))
      out.line(`  ${colors.yellow("-")} ${echo(skip.file)}: skipped, ${skip.reason}`);
    for (const failure of failed.slice(0, LISTED_FAILURES))
      out.line(
        `  ${colors.red("✖")} ${echo(failure.file)}${failure.pointer ? ` at ${echo(failure.pointer)}` : ""}: ${echo(failure.message, 400)}`,
      );
    const unlisted =
      Math.max(0, failed.length - LISTED_FAILURES) +
      Math.max(0, conflicts.length - LISTED_FAILURES) +
      Math.max(0, skipped.length - LISTED_FAILURES);
    if (unlisted > 0) out.line(`  ... and ${unlisted} more (use --json for the full list)`);
  }
  return failed.length === 0 ? EXIT.ok : EXIT.failed;
}

/**
 * The statebag session document `statebag import` writes (stdout, --out): indented, or compact
 * when the indentation alone would take it over the size limit it is read back with (the same
 * session either way); over it even compact, refused (importSession checked this already for
 * Agent Framework shapes; an AI SDK chat file is checked here).
 */
/** The UTF-8 length of `text` when it is over `max`, else undefined. */
function overBy(text: string, max: number): number | undefined {
  if (text.length * 3 <= max) return undefined;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > max ? bytes : undefined;
}

function statebagText(
  serialize: typeof import("../../runtime/persistence/serialization.js").serializeSession,
  session: AgentSession,
  maxBytes: number,
  name: string,
): string {
  const pretty = serialize(session, { space: 2 });
  if (overBy(pretty, maxBytes) === undefined) return pretty;
  const compact = serialize(session);
  const bytes = overBy(compact, maxBytes);
  if (bytes !== undefined)
    throw new CliError(
      EXIT.failed,
      `the statebag session document would be ${bytes} bytes, over the ${formatBytes(maxBytes)} (${maxBytes} bytes) limit it is read back with`,
      { where: name, fix: `raise --max-bytes to at least ${bytes} here and wherever the document is read` },
    );
  return compact;
}

/** A store that cannot be reached stops the run (every later document would fail the same way). */
function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "store-unavailable" || code === "store-not-set-up";
}
