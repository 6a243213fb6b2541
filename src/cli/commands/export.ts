/**
 * `statebag export --to <shape> [file]`: writes a statebag session (a file, stdin, a stored
 * session with --id, or every stored session with --all) as a Microsoft Agent Framework session
 * document of any shape it has written. A session whose history lives in the store's message log
 * (`StoredChatHistoryProvider`) is written with that history.
 */
import { mkdir, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import { Option } from "commander";
import { action, inputPath, jsonOption, storeOption, type CommandContext } from "../context.js";
import { CliError, EXIT, echo, type ExitCode } from "../io.js";
import {
  asFailure,
  convert,
  FORMATS,
  parseFormat,
  shapeHelp,
  withNewline,
  writeOutput,
  type Format,
} from "../interop-io.js";
import { DEFAULT_MAX_BYTES, formatBytes, parseMaxBytes, readDocumentFile, readStdinBytes } from "../read-document.js";
import { resolveRegistry } from "../registry.js";
import { cliKeyring, keyringOption, openCliStore } from "../store.js";
import type { AgentSession } from "../../runtime/core/session.js";
import type { SessionShape } from "../../runtime/interop/shapes.js";

interface ExportOptions {
  to: Format;
  out?: string;
  id?: string;
  all?: boolean;
  store?: string;
  registry?: string;
  historyKey?: string;
  withMetadata?: boolean;
  /** With --to python-file-store: msgpack snapshots (`serialization_format="msgpack"`). */
  msgpack?: boolean;
  /** The size limit of the document read (a file, stdin) and of the one written: import's --max-bytes. */
  maxBytes?: number;
  json?: boolean;
  keyring?: string;
}

export function registerExport(program: Command, context: CommandContext): void {
  program
    .command("export")
    .summary("write statebag sessions as Agent Framework documents (any .NET, Python or durable shape)")
    .description(
      "Loads a statebag session (validated and migrated) and writes it as a Microsoft Agent Framework session document of the given shape:\n\n" +
        shapeHelp() +
        "\n\nReads a statebag document from <file>, a stored session with --id, or every stored session with --all (into the directory --out names; " +
        "with --to python-file-store that directory is a Python FileSessionStore). The document is exactly what Agent Framework writes; " +
        "--with-metadata adds what it has no field for (the statebag id and kind) under a key Agent Framework keeps as raw JSON.",
    )
    .addOption(
      new Option("--to <shape>", "the shape to write").choices(FORMATS).argParser(parseFormat).makeOptionMandatory(),
    )
    .argument("[file]", 'a statebag session document ("-": stdin); omit with --id or --all')
    .option("--id <id>", "export this session from the store instead of a file")
    .option("--all", "export every stored session into the directory given by --out")
    .addOption(storeOption())
    .addOption(keyringOption())
    .option("--registry <module>", "your project's generated registry module (to load your own types)")
    .option("-o, --out <path>", "write the document to this file (with --all: this directory) instead of stdout")
    .option("--history-key <key>", 'statebag history key (default "statebag.chatHistory")')
    .option("--with-metadata", "record the statebag session id and kind in the document (import reads them back)")
    .option(
      "--msgpack",
      'with --to python-file-store: write msgpack snapshots (<id>.msgpack, FileSessionStore serialization_format="msgpack"); needs --out',
    )
    .addOption(
      new Option(
        "--max-bytes <size>",
        `largest document read (<file>, stdin) and written, e.g. 256MiB (default: ${formatBytes(DEFAULT_MAX_BYTES)}, what statebag import reads by default; a document over it is written without indentation, then refused)`,
      ).argParser(parseMaxBytes),
    )
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag export --to dotnet session.json -o session.dotnet.json
  $ statebag export --to python --id 6f1c... --store sqlite:./sessions.db
  $ statebag export --to python-file-store --all --store sqlite:./sessions.db --out ./py-sessions`,
    )
    .action(action(context, (file: string | undefined, options: ExportOptions) => runExport(context, file, options)));
}

async function runExport(context: CommandContext, file: string | undefined, options: ExportOptions): Promise<ExitCode> {
  const sources = [file !== undefined, options.id !== undefined, options.all === true].filter(Boolean).length;
  if (sources !== 1) {
    throw new CliError(
      EXIT.usage,
      sources === 0 ? "nothing to export: give a file, --id or --all" : "give one of a file, --id or --all",
      {
        fix: "statebag export --to dotnet session.json   or   statebag export --to dotnet --id <id> --store <url>",
      },
    );
  }
  if (options.all && options.out === undefined)
    throw new CliError(EXIT.usage, "--all writes one file per session: give the directory with --out", {
      fix: "statebag export --to python-file-store --all --out ./sessions",
    });
  const { registry } = await resolveRegistry(options.registry, context);
  const interop = await import("../../runtime/interop/index.js");
  // One size limit for what is read and what is written: the one `statebag import` reads the
  // written document back with (its --max-bytes, same default), so an export always imports again.
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const limits = { maxBytes };
  const readInput = (f: string) =>
    f === "-"
      ? readStdinBytes(context.environment.stdin, maxBytes)
      : readDocumentFile(inputPath(f, context.environment), f, maxBytes);
  if (options.to === "python-history") {
    const { deserializeSession } = await import("../../runtime/persistence/serialization.js");
    const loadFile = async (f: string) =>
      convert(`cannot load ${f}`, f, async () =>
        deserializeSession(await readInput(f), { registry, allowBare: true, limits }),
      );
    return (await import("../python-history.js")).exportPythonHistory(context, file, options, loadFile);
  }
  if (options.msgpack && (options.to !== "python-file-store" || options.out === undefined)) {
    throw new CliError(
      EXIT.usage,
      "--msgpack writes FileSessionStore msgpack snapshots: it goes with --to python-file-store and --out",
      { fix: "statebag export --to python-file-store --msgpack --all --store <url> --out ./sessions" },
    );
  }
  if (options.msgpack) {
    msgpack = await interop.loadMsgpack("statebag export --msgpack");
    ({ checkEncodedSize } = await import("../../runtime/interop/limits.js"));
  }
  const exportOne = (session: AgentSession, source: string) =>
    convert(source, source, () =>
      interop.exportSession(session, {
        to: options.to as SessionShape,
        metadata: options.withMetadata === true,
        ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}),
        limits,
      }),
    );
  if (file !== undefined) {
    const { deserializeSession } = await import("../../runtime/persistence/serialization.js");
    const source = file === "-" ? "(stdin)" : file;
    const text = await readInput(file);
    const session = convert(`cannot load ${source}`, source, () =>
      deserializeSession(text, { registry, allowBare: true, limits }),
    );
    if (hasStoredHistory(session)) {
      throw new CliError(
        EXIT.failed,
        `${echo(source)} keeps its history in a store's message log (StoredChatHistoryProvider)`,
        { fix: "export it from its store: statebag export --to <shape> --id <id> --store <url>" },
      );
    }
    return emit(context, options, session, exportOne(session, source), source);
  }
  const { defaultSessionCodec } = await import("../../stores.js");
  const opened = await openCliStore(options.store, context.environment, {
    codec: defaultSessionCodec({ registry, allowBare: true }),
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
  });
  try {
    const load = async (id: string) => {
      const source = `session ${echo(id)} in ${opened.url}`;
      const stored = await opened.store.get(id).catch((error: unknown) => {
        throw asFailure(error, `cannot load ${source}`, opened.url);
      });
      if (!stored)
        throw new CliError(EXIT.failed, `${source} does not exist`, {
          fix: "list stored sessions with: statebag inspect --store <url>",
        });
      const withHistory = await interop.resolveStoredHistory(
        stored.session,
        opened.store.messages,
        options.historyKey !== undefined ? { historyKey: options.historyKey } : {},
      );
      // Files kept in the blob store travel inline (data: contents, which Agent Framework reads):
      // the document carries them; statebag import keeps them, statebag migrate --blobs moves them back.
      const { blobReader, inlineSessionReferences } = await import("../../runtime/blobs/references.js");
      const session = await inlineSessionReferences(
        withHistory,
        opened.store.blobs ? blobReader(opened.store.blobs, stored.meta.owner) : undefined,
      ).catch((error: unknown) => {
        throw asFailure(error, `cannot read the files of ${source}`, opened.url);
      });
      return { session, source };
    };
    if (options.id !== undefined) {
      const { session, source } = await load(options.id);
      return await emit(context, options, session, exportOne(session, source), source);
    }
    return await exportAll(context, options, opened, load, exportOne);
  } finally {
    await opened.close();
  }
}

function hasStoredHistory(session: AgentSession): boolean {
  return Object.values(session.stateBag).some((v) => (v as { $type?: unknown }).$type === "StoredChatHistoryState");
}

/** The msgpack codec, loaded when --msgpack is given. */
let msgpack: import("../../runtime/interop/python-msgpack.js").MsgpackCodec | undefined;
let checkEncodedSize: typeof import("../../runtime/interop/limits.js").checkEncodedSize;

/** The msgpack snapshot of an exported JSON document, held to the same size limit (import reads it with that limit). */
function packed(
  codec: import("../../runtime/interop/python-msgpack.js").MsgpackCodec,
  text: string,
  options: ExportOptions,
): Uint8Array {
  const bytes = codec.encode(JSON.parse(text));
  checkEncodedSize(bytes, options.maxBytes ?? DEFAULT_MAX_BYTES, options.to as SessionShape);
  return bytes;
}

async function emit(
  context: CommandContext,
  options: ExportOptions,
  session: AgentSession,
  text: string,
  source: string,
): Promise<ExitCode> {
  const out = context.output(options);
  if (options.out !== undefined) {
    const written =
      msgpack !== undefined
        ? inputPath(options.out, context.environment)
        : await writeOutput(options.out, text, context.environment, options.maxBytes ?? DEFAULT_MAX_BYTES);
    if (msgpack !== undefined) await writeFile(written, packed(msgpack, text, options));
    out.result({ ok: true, to: options.to, id: session.id, out: written });
    out.line(`${out.c.green("✔")} exported ${source} as ${options.to}: ${echo(written)}`);
    return EXIT.ok;
  }
  if (options.json) out.result({ ok: true, to: options.to, id: session.id, document: JSON.parse(text) });
  else context.environment.stdout.write(withNewline(text, options.maxBytes ?? DEFAULT_MAX_BYTES));
  return EXIT.ok;
}

type Opened = Awaited<ReturnType<typeof openCliStore>>;

async function exportAll(
  context: CommandContext,
  options: ExportOptions,
  opened: Opened,
  load: (id: string) => Promise<{ session: AgentSession; source: string }>,
  exportOne: (session: AgentSession, source: string) => string,
): Promise<ExitCode> {
  const out = context.output(options);
  const { writeSnapshotFile } = await import("../../runtime/interop/python-file-store.js");
  const dir = inputPath(options.out!, context.environment);
  await mkdir(dir, { recursive: true });
  const failed: { id: string; message: string }[] = [];
  let written = 0;
  const progress = await out.progress();
  progress.start(0, "exporting");
  let cursor: string | undefined;
  try {
    do {
      const page = await opened.store.scan({ cursor, limit: 200 });
      progress.setTotal(written + failed.length + page.items.length + (page.cursor ? 200 : 0));
      for (const item of page.items) {
        try {
          const { session, source } = await load(item.id);
          // The file store's own naming (safe ids as they are, others encoded) suits every shape.
          const text = exportOne(session, source);
          await (msgpack !== undefined
            ? writeSnapshotFile(dir, session.id, packed(msgpack, text, options), "msgpack")
            : writeSnapshotFile(dir, session.id, withNewline(text, options.maxBytes ?? DEFAULT_MAX_BYTES)));
          written++;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          failed.push({ id: item.id, message });
        }
        progress.increment();
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
  } finally {
    progress.stop();
  }
  out.result({ ok: failed.length === 0, to: options.to, out: dir, written, failed });
  out.line(
    `${failed.length === 0 ? out.c.green("✔") : out.c.yellow("!")} exported ${written} session${written === 1 ? "" : "s"} from ${opened.url} as ${options.to} into ${echo(dir)}${failed.length ? `; ${failed.length} could not be written` : ""}`,
  );
  for (const failure of failed.slice(0, 50))
    out.line(`  ${out.c.red("✖")} ${echo(failure.id)}: ${echo(failure.message, 400)}`);
  if (failed.length > 50) out.line(`  ... and ${failed.length - 50} more (use --json for the full list)`);
  return failed.length === 0 ? EXIT.ok : EXIT.failed;
}
