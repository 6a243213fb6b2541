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
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { Command } from "commander";
import { Option } from "commander";
import { action, inputPath, jsonOption, messageOf, storeOption, type CommandContext } from "../context.js";
import { CliError, EXIT, echo, type ExitCode } from "../io.js";
import { convert, FORMATS, parseFormat, readInput, shapeHelp, writeOutput, type Format } from "../interop-io.js";
import { stateLine, summarize } from "../session-report.js";
import { openCliStore } from "../store.js";
import type { AgentSession } from "../../runtime/core/session.js";
import type { SessionShape } from "../../runtime/interop/shapes.js";

interface ImportOptions {
  from?: Format;
  out?: string;
  id?: string;
  historyKey?: string;
  save?: boolean;
  store?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** How many unreadable documents a text report lists (--json lists them all). */
const LISTED_FAILURES = 50;
/** A document larger than this is reported, not read (the session loader's default limit). */
const MAX_DOCUMENT_BYTES = 64 * 1024 * 1024;

export function registerImport(program: Command, context: CommandContext): void {
  program
    .command("import")
    .summary("read Agent Framework sessions (any .NET, Python or durable shape) into statebag sessions")
    .description(
      "Converts session documents written by Microsoft Agent Framework into statebag sessions and validates them.\n\n" +
        shapeHelp() +
        "\n\nWithout --from, each document's shape is recognised (and named, with the evidence); a document two shapes would read differently needs --from. " +
        "One document prints the statebag session unless --out or --store/--save is given. With --store (or --save), every file and directory given (a directory: its *.json files, " +
        "such as a Python FileSessionStore) is imported into the store: sessions already there are left alone (re-running imports nothing twice), and documents that cannot be read are listed while the rest go through.",
    )
    .addOption(new Option("--from <shape>", "the documents' shape (default: recognised per document)").choices(FORMATS).argParser(parseFormat))
    .argument("<inputs...>", 'documents or directories to import ("-": stdin)')
    .option("-o, --out <file>", "write the statebag session document to this file (one input)")
    .option("--id <id>", "the statebag session id (one input; default: the document's own, else its file name, else a new UUID)")
    .option("--history-key <key>", 'statebag history key (default "statebag.chatHistory")')
    .option("--save", "import into the store (see --store); implied by --store")
    .option("--dry-run", "read and check everything, write nothing (with --store/--save)")
    .addOption(storeOption())
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag import thread.json > session.statebag.json        # shape recognised
  $ statebag import --from dotnet-thread thread.json -o session.statebag.json
  $ statebag import --from python-file-store ./sessions --store sqlite:./sessions.db --dry-run
  $ statebag import exported/*.json --store postgres://app@db/app`,
    )
    .action(action(context, (inputs: string[], options: ImportOptions) => runImport(context, inputs, options)));
}

interface Document {
  /** What the report calls it (the path as given, or "(stdin)"). */
  name: string;
  /** The id for documents without one of their own: the file name without its extension. */
  fallbackId?: string;
  read: () => Promise<string>;
}

async function collect(inputs: string[], context: CommandContext): Promise<Document[]> {
  const { environment } = context;
  const docs: Document[] = [];
  for (const input of inputs) {
    if (input === "-") {
      docs.push({ name: "(stdin)", read: () => readInput("-", environment) });
      continue;
    }
    const path = inputPath(input, environment);
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(EXIT.usage, `cannot read ${echo(input)}: ${error.code === "ENOENT" ? "no such file or directory" : error.message}`, { where: path, fix: 'check the path (use "-" to read stdin)' });
    });
    if (info.isDirectory()) {
      const entries = (await readdir(path, { withFileTypes: true }))
        .filter((e) => e.isFile() && e.name.endsWith(".json") && !e.name.startsWith("."))
        .map((e) => e.name)
        .sort();
      for (const name of entries) docs.push({ name: join(input, name), fallbackId: name.slice(0, -".json".length), read: () => readDocumentFile(join(path, name), join(input, name)) });
    } else {
      docs.push({ name: input, fallbackId: basename(input, extname(input)), read: () => readDocumentFile(path, input) });
    }
  }
  return docs;
}

async function readDocumentFile(path: string, name: string): Promise<string> {
  const info = await stat(path);
  if (info.size > MAX_DOCUMENT_BYTES) throw new CliError(EXIT.failed, `${echo(name)} is ${info.size} bytes, over the ${MAX_DOCUMENT_BYTES}-byte document limit`, { where: name });
  return readFile(path, "utf8");
}

interface Converted {
  session: AgentSession;
  shape: SessionShape;
  evidence?: string;
}

type Interop = typeof import("../../runtime/interop/index.js");

/** Parses, recognises (unless --from) and converts one document. Throws data errors as they are. */
function convertOne(interop: Interop, text: string, doc: Document, options: ImportOptions, id: string | undefined): Converted {
  const { parseJson } = interopJson;
  const parsed = parseJson(text);
  let shape = options.from;
  let evidence: string | undefined;
  if (shape === undefined) {
    const detected = interop.detectSessionShape(parsed);
    if (detected === undefined) {
      throw new CliError(EXIT.failed, interop.isStatebagDocument(parsed) ? "this is already a statebag session" : "not a session document of any Agent Framework shape statebag knows", {
        where: doc.name,
        fix: `name its shape with --from (one of ${FORMATS.join(", ")})`,
      });
    }
    if (detected.ambiguous) {
      throw new CliError(EXIT.failed, `two readings are possible: ${detected.candidates.join(" or ")} (${detected.evidence})`, { where: doc.name, fix: `choose one with --from ${detected.candidates[0]} or --from ${detected.candidates[1]}` });
    }
    shape = detected.shape;
    evidence = detected.evidence;
  }
  const ownId = shape === "python" || shape === "python-memory" || shape === "python-file-store";
  const session = interop.importSession(parsed as object, { from: shape, ...(id !== undefined ? { id } : ownId || doc.fallbackId === undefined ? {} : { id: doc.fallbackId }), ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}) });
  return { session, shape, ...(evidence !== undefined ? { evidence } : {}) };
}

let interopJson: typeof import("../../runtime/persistence/safe-json.js");

async function runImport(context: CommandContext, inputs: string[], options: ImportOptions): Promise<ExitCode> {
  const interop = await import("../../runtime/interop/index.js");
  interopJson = await import("../../runtime/persistence/safe-json.js");
  const docs = await collect(inputs, context);
  const toStore = options.save === true || options.store !== undefined;
  if (!toStore && (docs.length !== 1 || inputs.length !== 1)) {
    throw new CliError(EXIT.usage, `${docs.length} documents given without a store`, { fix: "import several documents or a directory with --store <url> (add --dry-run to only check them)" });
  }
  if (docs.length === 0) throw new CliError(EXIT.usage, "no *.json documents in the given directories", { fix: "give the directory a Python FileSessionStore or your app wrote the documents to" });
  if ((options.id !== undefined || options.out !== undefined) && docs.length !== 1) throw new CliError(EXIT.usage, "--id and --out take one input", { fix: "import several documents with --store" });
  if (options.dryRun && !toStore) throw new CliError(EXIT.usage, "--dry-run goes with --store or --save", { fix: "statebag import <dir> --store <url> --dry-run" });
  return toStore ? importIntoStore(context, interop, docs, options) : importOne(context, interop, docs[0], options);
}

async function importOne(context: CommandContext, interop: Interop, doc: Document, options: ImportOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { environment } = context;
  const { serializeSession } = await import("../../runtime/persistence/serialization.js");
  const text = await doc.read();
  const converted = convert(`cannot import ${doc.name}`, doc.name, () => convertOne(interop, text, { ...doc, fallbackId: undefined }, options, options.id));
  const { session, shape } = converted;
  if (converted.evidence !== undefined && !options.json) out.note(`${out.ce.dim("recognised")} ${shape}: ${converted.evidence}`);
  const stored = convert(`the session imported from ${doc.name} is not valid`, doc.name, () => serializeSession(session, { space: 2 }));
  let written: string | undefined;
  if (options.out !== undefined) written = await writeOutput(options.out, stored, environment);
  if (options.json) {
    out.result({ ok: true, from: shape, ...(converted.evidence ? { evidence: converted.evidence } : {}), id: session.id, session: summarize(session), ...(written ? { out: written } : { document: JSON.parse(stored) }) });
    return EXIT.ok;
  }
  if (written === undefined) {
    environment.stdout.write(stored + "\n");
    return EXIT.ok;
  }
  out.line(`${out.c.green("✔")} imported ${echo(doc.name)} (${shape}) as session ${echo(session.id)}`);
  for (const s of summarize(session).state) out.line(out.c.dim(`    ${stateLine(s)}`));
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

async function importIntoStore(context: CommandContext, interop: Interop, docs: Document[], options: ImportOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c } = out;
  const { ConflictError } = await import("../../runtime/stores/errors.js");
  const { jsonEqual } = await import("../../runtime/interop/json-util.js");
  const { deserializeSession, serializeSession } = await import("../../runtime/persistence/serialization.js");
  // The stored side was migrated and normalised on load: compare the fresh side after the same
  // save-and-load round trip, or a re-run would call an unchanged session "different".
  const sameAsStored = (stored: AgentSession, fresh: AgentSession) => jsonEqual(deserializeSession(serializeSession(stored)), deserializeSession(serializeSession(fresh)));
  const opened = await openCliStore(options.store, context.environment, { configured: context.project()?.store });
  const byShape = new Map<string, ShapeCounts>();
  const failed: Failure[] = [];
  const conflicts: { file: string; id: string }[] = [];
  const one: { session?: AgentSession; shape?: SessionShape } = {};
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
        const { session, shape } = convertOne(interop, text, doc, options, options.id);
        if (docs.length === 1) Object.assign(one, { session, shape });
        const existing = await opened.store.get(session.id);
        if (existing !== undefined) {
          if (sameAsStored(existing.session, session)) counts(shape).unchanged++;
          else {
            counts(shape).conflicts++;
            conflicts.push({ file: doc.name, id: session.id });
          }
        } else if (options.dryRun) {
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
    written = await writeOutput(options.out, serializeSession(one.session, { space: 2 }), context.environment);
  }
  const shapes = Object.fromEntries([...byShape].sort(([a], [b]) => (a < b ? -1 : 1)));
  const total = (k: keyof ShapeCounts) => [...byShape.values()].reduce((n, s) => n + s[k], 0);
  if (options.json) {
    out.result({ ok: failed.length === 0, dryRun: options.dryRun === true, store: opened.url, documents: docs.length, imported: total("imported"), unchanged: total("unchanged"), conflicts, failed, byShape: shapes, ...(written ? { out: written } : {}), durationMs: Date.now() - started });
  } else {
    const verb = options.dryRun ? "would import" : "imported";
    out.line(`${failed.length === 0 ? c.green("✔") : c.yellow("!")} ${docs.length} document${docs.length === 1 ? "" : "s"} into ${opened.url}${options.dryRun ? c.dim(" (dry run: nothing written)") : ""}: ${verb} ${total("imported")}, already there ${total("unchanged")}, different session already stored ${conflicts.length}, unreadable ${failed.length}`);
    if (one.session !== undefined) out.line(`  ${echo(docs[0].name)} (${one.shape}) is session ${echo(one.session.id)}`);
    if (written !== undefined) out.line(`  wrote ${echo(written)}`);
    for (const [shape, n] of Object.entries(shapes)) out.line(c.dim(`    ${shape.padEnd(22)} ${verb} ${n.imported}, already there ${n.unchanged}${n.conflicts ? `, different session stored ${n.conflicts}` : ""}`));
    for (const conflict of conflicts.slice(0, LISTED_FAILURES)) out.line(`  ${c.yellow("≠")} ${echo(conflict.file)}: session ${echo(conflict.id)} is stored with other content (left as it is)`);
    for (const f of failed.slice(0, LISTED_FAILURES)) out.line(`  ${c.red("✖")} ${echo(f.file)}${f.pointer ? ` at ${echo(f.pointer)}` : ""}: ${echo(f.message, 400)}`);
    const unlisted = Math.max(0, failed.length - LISTED_FAILURES) + Math.max(0, conflicts.length - LISTED_FAILURES);
    if (unlisted > 0) out.line(`  ... and ${unlisted} more (use --json for the full list)`);
  }
  return failed.length === 0 ? EXIT.ok : EXIT.failed;
}

/** A store that cannot be reached stops the run (every later document would fail the same way). */
function isUnreachable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "store-unavailable" || code === "store-not-set-up";
}
