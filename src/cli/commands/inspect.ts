/**
 * `statebag inspect --store <url> <id>`: one stored session as it is: its revision, the stored
 * document pretty-printed, and whether it loads (validation and migrations). Without an id, lists
 * the stored sessions.
 */
import type { Command } from "commander";
import { quoted } from "../../runtime/core/json.js";
import { MAX_ID_LENGTH } from "../../runtime/stores/errors.js";
import { StoredSessionIdError } from "../../runtime/stores/codec.js";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { CliError, EXIT, echo, type ExitCode } from "../io.js";
import { resolveRegistry, unknownTypesFix, unknownTypesSummary } from "../registry.js";
import {
  checkDocument,
  listedLines,
  migrationSummary,
  plural,
  preservedLine,
  problemLines,
  quarantineLine,
  stateLine,
  storedQuarantine,
} from "../session-report.js";
import { previewJson, previewText } from "../preview.js";
import { maxBytesOption } from "../read-document.js";
import { cliKeyring, keyringOption, openCliStore, RawTextCodec } from "../store.js";

interface InspectOptions {
  store?: string;
  registry?: string;
  strict?: boolean;
  allowUnknown?: boolean;
  brief?: boolean;
  full?: boolean;
  maxBytes?: number;
  limit: string;
  json?: boolean;
  keyring?: string;
}

export function registerInspect(program: Command, context: CommandContext): void {
  program
    .command("inspect")
    .summary("show a stored session: revision, stored JSON, validation summary")
    .description(
      "Reads one session from a store and prints its revision, the stored document and whether it loads (validation and migrations, as the runtime would). Without an id, lists the stored sessions.\n\n" +
        "A value whose $type the CLI does not know cannot be checked: the session is then reported as not fully checked and the exit code is 1, unless --allow-unknown.",
    )
    .argument("[id]", "the session id (omit to list sessions)")
    .addOption(storeOption())
    .addOption(keyringOption())
    .option(
      "--registry <module>",
      'your project\'s registry module, so your own types are checked too (default: "registry" in the project config)',
    )
    .option("--strict", "unknown $types and newer versions are problems")
    .option("--allow-unknown", "values of unknown $types or newer versions do not fail the run (exit 0)")
    .option("--brief", "leave out the stored document")
    .addOption(maxBytesOption())
    .option(
      "--full",
      "print the whole stored document (by default long strings, arrays and objects are cut and the output is bounded)",
    )
    .option("--limit <n>", "how many sessions to list without an id", "50")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag inspect                                  # list sessions (store: the config's "store", else ./.statebag/sessions.db)
  $ statebag inspect 6f1c...                          # one session from the default store
  $ statebag inspect --store postgres://localhost/app 6f1c... --json`,
    )
    .action(action(context, (id: string | undefined, options: InspectOptions) => inspect(context, id, options)));
}

async function inspect(context: CommandContext, id: string | undefined, options: InspectOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw new CliError(EXIT.usage, `--limit ${options.limit}: expected an integer from 1 to 1000`);
  const codec = new RawTextCodec();
  const opened = await openCliStore(options.store, context.environment, {
    codec,
    configured: context.project()?.store,
    readOnly: true,
    keyring: cliKeyring(options, context),
  });
  try {
    if (id === undefined) {
      const page = await opened.store.scan({ limit });
      out.result({
        ok: true,
        store: opened.url,
        sessions: page.items.map((i) => ({ id: i.id, revision: i.revision })),
        more: page.cursor !== undefined,
      });
      if (page.items.length === 0) {
        out.line(`no sessions in ${opened.url}`);
        return EXIT.ok;
      }
      out.line(
        colors.dim(
          `${plural(page.items.length, "session")} in ${opened.url}${page.cursor ? ` (first ${limit}; --limit for more)` : ""}`,
        ),
      );
      for (const item of page.items)
        out.line(`${echo(item.id, MAX_ID_LENGTH)}  ${colors.dim(`revision ${item.revision}`)}`);
      return EXIT.ok;
    }

    const stored = await opened.store.get(id);
    if (stored === undefined || codec.last === undefined) {
      throw new CliError(EXIT.failed, `session ${quoted(id, MAX_ID_LENGTH)} is not in ${opened.url}`, {
        fix: `list the stored sessions with: statebag inspect${options.store ? ` --store ${opened.url}` : ""}`,
      });
    }
    const text = codec.last;
    const source = await resolveRegistry(options.registry, context);
    // The check parses the document once; the preview reuses it (a stored row can be hundreds of MB).
    let parsed: { doc: unknown } | undefined;
    const report = checkDocument(text, {
      registry: source.registry,
      strict: options.strict === true,
      ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      onParsed: (doc) => (parsed = { doc }),
    });
    // The load rule store.get applies: the row's session must have the id it is stored under.
    if (report.ok) applyStoredIdRule(report, id);
    const unchecked = report.ok ? report.preserved.length : 0;
    const bytes = Buffer.byteLength(text);
    // Bounded unless --full: long strings, arrays and objects cut with their sizes, the whole capped.
    const preview = options.full ? undefined : parsed ? previewJson(parsed.doc) : previewText(text);
    const whole = () => (parsed ? parsed.doc : parseOrText(text));
    const quarantined = parsed ? storedQuarantine(parsed.doc) : [];

    out.result({
      ok: report.ok && (unchecked === 0 || options.allowUnknown === true),
      store: opened.url,
      id,
      revision: stored.revision,
      ...(opened.encryption ? { encrypted: { store: opened.encryption.store } } : {}),
      bytes,
      ...(preview === undefined || !preview.cut ? { document: whole() } : { preview: preview.text, previewCut: true }),
      validation: {
        ok: report.ok,
        unchecked,
        migrated: report.migrated,
        migrations: report.migrations,
        state: report.sessions[0]?.state ?? [],
        problems: report.problems,
        preserved: report.preserved,
        quarantined,
      },
    });

    out.line(
      `${colors.bold(`session ${quoted(id, MAX_ID_LENGTH)}`)}  revision ${colors.cyan(String(stored.revision))}  ${colors.dim(`${formatBytes(bytes)} in ${opened.url}`)}`,
    );
    if (opened.encryption)
      out.line(
        colors.dim(
          `encrypted at rest; decrypted with the keyring (store name ${quoted(opened.encryption.store, 200)})`,
        ),
      );
    if (!options.brief && !options.json) {
      out.line();
      if (preview === undefined) {
        const document = whole();
        out.line(typeof document === "string" ? document : JSON.stringify(document, null, 2));
      } else {
        out.line(preview.text);
        if (preview.cut)
          out.line(
            colors.dim(
              `(cut: long strings, arrays and objects are shortened${parsed ? "" : ", the text was not parsed"}; --full prints all ${formatBytes(bytes)})`,
            ),
          );
      }
      out.line();
    }
    if (unchecked > 0) {
      out.line(`${colors.yellow("? loads, but not fully checked")}: ${unknownTypesSummary(report.preserved)}`);
      for (const line of listedLines(report.sessions[0]?.state ?? [], stateLine, "  ")) out.line(line);
      for (const line of listedLines(report.preserved, (p) => preservedLine(p, colors), "  ")) out.line(line);
      out.line(`  ${colors.cyan("fix:")} ${unknownTypesFix(source)}`);
      return options.allowUnknown ? EXIT.ok : EXIT.failed;
    }
    if (report.ok) {
      out.line(
        `${colors.green("✔ valid")}${report.migrated ? colors.yellow(` (stored at older versions, migrated on load: ${migrationSummary(report.migrations)}; rewritten on the next save)`) : ""}`,
      );
      for (const line of listedLines(report.sessions[0]?.state ?? [], stateLine, "  ")) out.line(line);
    } else {
      out.line(`${colors.red("✖ does not load")}: ${plural(report.problems.length, "problem")}`);
      for (const line of problemLines(report.problems, colors)) out.line(line);
    }
    for (const line of listedLines(report.preserved, (p) => preservedLine(p, colors), "  ")) out.line(line);
    if (quarantined.length > 0)
      out.line(
        `${colors.yellow(`${plural(quarantined.length, "value")} set aside by a quarantine load`)} (kept verbatim in session.quarantine):`,
      );
    for (const line of listedLines(quarantined, (q) => quarantineLine(q, colors), "  ")) out.line(line);
    return report.ok ? EXIT.ok : EXIT.failed;
  } finally {
    await opened.close();
  }
}

function applyStoredIdRule(report: ReturnType<typeof checkDocument>, id: string): void {
  const documentId = report.loaded?.length === 1 ? report.loaded[0].id : undefined;
  if (documentId === id) return;
  report.ok = false;
  report.problems.push(new StoredSessionIdError(id, documentId).toProblem());
}

/** The stored text parsed for --full, or the text itself when it is not JSON. */
function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function formatBytes(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
