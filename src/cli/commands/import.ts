/**
 * `statebag import --from dotnet|python <file>`: reads a session written by Microsoft Agent
 * Framework (.NET `SerializeSession`, Python `AgentSession.to_dict()`) and writes it as a statebag
 * session (validated), to stdout, a file, or a store.
 */
import type { Command } from "commander";
import { Option } from "commander";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { EXIT, type ExitCode } from "../io.js";
import { convert, FORMATS, parseFormat, readInput, writeOutput, type Format } from "../interop-io.js";
import { stateLine, summarize } from "../session-report.js";
import { openCliStore } from "../store.js";

interface ImportOptions {
  from: Format;
  out?: string;
  id?: string;
  historyKey?: string;
  save?: boolean;
  store?: string;
  json?: boolean;
}

export function registerImport(program: Command, context: CommandContext): void {
  program
    .command("import")
    .summary("read an Agent Framework (.NET or Python) session into a statebag session")
    .description(
      "Converts a session document written by Microsoft Agent Framework into a statebag session and validates it.\n\n" +
        "  dotnet  ChatClientAgent.SerializeSession (.NET)\n" +
        "  python  AgentSession.to_dict() (Python)\n\n" +
        "History becomes statebag's history state; provider state statebag has no type for is kept verbatim, so `export` gives the original back. Prints the statebag document unless --out or --save is given.",
    )
    .addOption(new Option("--from <format>", "the document's format").choices(FORMATS).argParser(parseFormat).makeOptionMandatory())
    .argument("<file>", 'the document to import ("-": stdin)')
    .option("-o, --out <file>", "write the statebag session document to this file")
    .option("--id <id>", "the statebag session id (default: the document's own, else a new UUID)")
    .option("--history-key <key>", 'statebag history key (default "statebag.chatHistory")')
    .option("--save", "save the session into the store (see --store) as a new session")
    .addOption(storeOption())
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag import --from dotnet session.json > session.statebag.json
  $ statebag import --from python session.json --save --store sqlite:./sessions.db`,
    )
    .action(action(context, (file: string, options: ImportOptions) => runImport(context, file, options)));
}

async function runImport(context: CommandContext, file: string, options: ImportOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c } = out;
  const { environment } = context;
  const text = await readInput(file, environment);
  const { importSession } = await import("../../runtime/interop/index.js");
  const { serializeSession } = await import("../../runtime/persistence/serialization.js");
  const from = options.from;
  const session = convert(file, file, () =>
    importSession(text, { from, ...(options.id !== undefined ? { id: options.id } : {}), ...(options.historyKey !== undefined ? { historyKey: options.historyKey } : {}) }),
  );
  // Validated like every write: an imported session that would not load again is refused here.
  const stored = convert(`the session imported from ${file} is not valid`, file, () => serializeSession(session, { space: 2 }));
  const summary = summarize(session);

  let written: string | undefined;
  if (options.out !== undefined) written = await writeOutput(options.out, stored, environment);
  let revision: number | undefined;
  let storeUrl: string | undefined;
  if (options.save) {
    const opened = await openCliStore(options.store, environment, { configured: context.project()?.store });
    try {
      revision = await opened.store.save(session, { expectedRevision: null });
      storeUrl = opened.url;
    } finally {
      await opened.close();
    }
  }

  if (options.json) {
    out.result({ ok: true, from, id: session.id, session: summary, ...(written ? { out: written } : {}), ...(storeUrl ? { store: storeUrl, revision } : {}), ...(written || storeUrl ? {} : { document: JSON.parse(stored) }) });
    return EXIT.ok;
  }
  if (written === undefined && storeUrl === undefined) {
    environment.stdout.write(stored + "\n");
    return EXIT.ok;
  }
  out.line(`${c.green("✔")} imported ${file} (${from}) as session ${JSON.stringify(session.id)}`);
  for (const s of summary.state) out.line(c.dim(`    ${stateLine(s)}`));
  if (written) out.line(`  wrote ${written}`);
  if (storeUrl) out.line(`  saved to ${storeUrl} at revision ${revision}`);
  return EXIT.ok;
}
