/**
 * `statebag export --to dotnet|python <file>`: writes a statebag session (a file, stdin, or a
 * stored session with --id) as a Microsoft Agent Framework session document.
 */
import type { Command } from "commander";
import { Option } from "commander";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { CliError, EXIT, type ExitCode } from "../io.js";
import { asFailure, convert, FORMATS, parseFormat, readInput, writeOutput, type Format } from "../interop-io.js";
import { resolveRegistry } from "../registry.js";
import { openCliStore } from "../store.js";

interface ExportOptions {
  to: Format;
  out?: string;
  id?: string;
  store?: string;
  registry?: string;
  historyKey?: string;
  metadata: boolean;
  json?: boolean;
}

export function registerExport(program: Command, context: CommandContext): void {
  program
    .command("export")
    .summary("write a statebag session as an Agent Framework (.NET or Python) session")
    .description(
      "Loads a statebag session (validated and migrated) and writes it as a Microsoft Agent Framework session document.\n\n" +
        "  dotnet  what ChatClientAgent.DeserializeSession reads (.NET)\n" +
        "  python  what AgentSession.from_dict() reads (Python)\n\n" +
        "Reads a statebag document from <file>, or a stored session with --id (from --store).",
    )
    .addOption(new Option("--to <format>", "the format to write").choices(FORMATS).argParser(parseFormat).makeOptionMandatory())
    .argument("[file]", 'a statebag session document ("-": stdin); omit with --id')
    .option("--id <id>", "export this session from the store instead of a file")
    .addOption(storeOption())
    .option("--registry <module>", "your project's generated registry module (to load your own types)")
    .option("-o, --out <file>", "write the document to this file instead of stdout")
    .option("--history-key <key>", 'statebag history key (default "statebag.chatHistory")')
    .option("--no-metadata", "leave out the statebag session id/kind record (a bare Agent Framework document)")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag export --to dotnet session.json -o session.dotnet.json
  $ statebag export --to python --id 6f1c... --store sqlite:./sessions.db`,
    )
    .action(action(context, (file: string | undefined, options: ExportOptions) => runExport(context, file, options)));
}

async function runExport(context: CommandContext, file: string | undefined, options: ExportOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c } = out;
  const { environment } = context;
  if ((file === undefined) === (options.id === undefined)) {
    throw new CliError(EXIT.usage, file === undefined ? "nothing to export: give a file, or --id to read from a store" : "give either a file or --id, not both", {
      fix: "statebag export --to dotnet session.json   or   statebag export --to dotnet --id <id> --store <url>",
    });
  }
  const { registry } = await resolveRegistry(options.registry, context);
  const { deserializeSession } = await import("../../runtime/persistence/serialization.js");
  const { exportSession } = await import("../../runtime/interop/index.js");
  let source: string;
  let session;
  if (options.id !== undefined) {
    const { defaultSessionCodec } = await import("../../runtime/stores/index.js");
    const opened = await openCliStore(options.store, environment, { codec: defaultSessionCodec({ registry, allowBare: true }), configured: context.project()?.store, readOnly: true });
    try {
      source = `session ${JSON.stringify(options.id)} in ${opened.url}`;
      const stored = await opened.store.get(options.id).catch((error: unknown) => {
        throw asFailure(error, `cannot load ${source}`, opened.url);
      });
      if (!stored) throw new CliError(EXIT.failed, `${source} does not exist`, { fix: "list stored sessions with: statebag inspect --store <url>" });
      session = stored.session;
    } finally {
      await opened.close();
    }
  } else {
    source = file === "-" ? "(stdin)" : file!;
    const text = await readInput(file!, environment);
    session = convert(`cannot load ${source}`, source, () => deserializeSession(text, { registry, allowBare: true }));
  }
  const loaded = session;
  const text = convert(source, source, () =>
    exportSession(loaded, { to: options.to, metadata: options.metadata, ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}) }),
  );
  if (options.out !== undefined) {
    const written = await writeOutput(options.out, text, environment);
    out.result({ ok: true, to: options.to, id: loaded.id, out: written });
    out.line(`${c.green("✔")} exported ${source} as ${options.to}: ${written}`);
    return EXIT.ok;
  }
  if (options.json) out.result({ ok: true, to: options.to, id: loaded.id, document: JSON.parse(text) });
  else environment.stdout.write(text + "\n");
  return EXIT.ok;
}
