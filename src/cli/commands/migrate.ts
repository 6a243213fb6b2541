/**
 * `statebag migrate --store <url> [--dry-run]`: brings every stored session to the latest versions
 * of its types with the bulk migration API (`migrateStore`), so old documents do not wait for
 * their next save. Each session is rewritten by one compare-and-swap save; an interrupted run
 * loses nothing and resumes with --start-after. On an encrypted store (--keyring) it decrypts
 * through the keyring; `--encrypt` and `--reencrypt` rewrite rows under the keyring's current key
 * (`migrateEncryption`).
 */
import type { Command } from "commander";
import type { MigrateStoreReport, StateVersionCount } from "../../stores.js";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { CliError, echo, EXIT, type ExitCode, type Output } from "../io.js";
import { resolveRegistry, unknownTypesFix, type CliRegistry } from "../registry.js";
import { listedLines, plural } from "../session-report.js";
import { quoted } from "../../runtime/core/json.js";
import {
  cliKeyring,
  keyringOption,
  openCliStore,
  PlaintextCapture,
  scanTextReader,
  type OpenedStore,
} from "../store.js";
import type { EncryptionMigrationReport } from "../../runtime/stores/encryption/migrate.js";

interface MigrateOptions {
  store?: string;
  registry?: string;
  dryRun?: boolean;
  strict?: boolean;
  allowUnknown?: boolean;
  batchSize: string;
  startAfter?: string;
  json?: boolean;
  keyring?: string;
  encrypt?: boolean;
  reencrypt?: boolean;
  blobs?: boolean;
  blobThreshold?: string;
  apply?: boolean;
  blobsStartAfter?: string;
}

export function registerMigrate(program: Command, context: CommandContext): void {
  program
    .command("migrate")
    .summary("migrate every stored session to the latest type versions")
    .description(
      "Loads every stored session through the registry's migrations and saves the ones that changed, each with one compare-and-swap write (a session the application saved meanwhile is re-read and migrated again). Sessions already current are not written.\n\n" +
        "With --dry-run nothing is written: it reports what would change and what cannot be migrated. Exit 1 when any session cannot be migrated (it is left exactly as stored). Ctrl-C stops after the current session and prints where to resume.\n\n" +
        "Values whose $type the CLI does not know (give it the project's registry: statebag.config.json or --registry) cannot be migrated: they are left as stored and counted apart, never as current, and the exit code is 1 unless --allow-unknown.",
    )
    .addOption(storeOption())
    .option("--dry-run", "write nothing; report what would change")
    .option(
      "--registry <module>",
      'your project\'s registry module, your types and migrations (default: "registry" in the project config)',
    )
    .option("--strict", "unknown $types and newer versions fail the session instead of being kept")
    .option("--allow-unknown", "values of unknown $types or newer versions are left as stored without failing the run")
    .option("--batch-size <n>", "sessions per page read from the store (1-1000)", "100")
    .option("--start-after <id>", "resume after this session id (printed by an interrupted run)")
    .addOption(keyringOption())
    .option(
      "--encrypt",
      "encrypt every plaintext row (and rows under older keys) under the keyring's current key, instead of migrating types; needs a keyring",
    )
    .option(
      "--reencrypt",
      "rewrite rows under older keys under the keyring's current key (after a key rotation), then the store's files (blobs: every chunk and description); needs a keyring",
    )
    .option(
      "--blobs-start-after <cursor>",
      "with --encrypt/--reencrypt: resume the files (blobs) after this cursor (printed by an interrupted run)",
    )
    .option(
      "--blobs",
      "also move inline files (data: contents) into the store's blob store, keeping references in the sessions; a dry run unless --apply",
    )
    .option("--blob-threshold <bytes>", "with --blobs: move files of at least this many bytes", "4096")
    .option("--apply", "with --blobs: write (without it, --blobs only reports what would move)")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag migrate --store postgres://app@db/app --dry-run
  $ statebag migrate                                  # store and registry from statebag.config.json
  $ statebag migrate --encrypt --keyring keyring.json --dry-run
  $ statebag migrate --reencrypt                      # keyring from $STATEBAG_KEYRING or the config

After a key rotation, --reencrypt rewrites the sessions, their message logs and the store's files
(blobs, in the store or in its ?blobs= folder or bucket) under the current key; once it reports no
failure, the older keys can leave the keyring. A file that does not open (changed bytes, a key the
keyring lacks) is reported by owner and hash and left as it is.`,
    )
    .action(action(context, (options: MigrateOptions) => migrate(context, options)));
}

/** What the registry says about a stored state's type: known (and current or migrated), unknown, or newer than it knows. */
function knowledge(s: StateVersionCount, source: CliRegistry): "known" | "unknown-type" | "newer-version" {
  const def = source.registry.get(s.toType);
  if (def === undefined) return "unknown-type";
  return s.to > def.version ? "newer-version" : "known";
}

/** The $type as data (quoted, escaped, cut): it comes from the store. */
const shownType = (type: string): string => quoted(type, 60);

function transitionLine(
  s: StateVersionCount,
  source: CliRegistry,
  transition: (s: StateVersionCount) => string,
): string {
  const known = knowledge(s, source);
  if (known === "unknown-type")
    return `${shownType(s.type)} v${s.to} (unknown type: not checked, left as stored): ${s.count}`;
  if (known === "newer-version")
    return `${shownType(s.type)} v${s.to} (newer than the registry's v${source.registry.get(s.toType)!.version}: left as stored): ${s.count}`;
  return transition(s);
}

function printReport(
  out: Output,
  report: MigrateStoreReport,
  url: string,
  transition: (s: StateVersionCount) => string,
  source: CliRegistry,
  unknownValues: number,
): void {
  const { c: colors } = out;
  const verb = report.dryRun ? "would migrate" : "migrated";
  const parts = [
    colors.green(`${report.migrated} ${verb}`),
    // A session holding values the CLI does not know is unchanged, not "current".
    report.preserved ? `${report.unchanged} unchanged` : `${report.unchanged} already current`,
    ...(report.failedCount ? [colors.red(`${report.failedCount} cannot be migrated`)] : []),
    ...(report.vanished ? [`${report.vanished} deleted meanwhile`] : []),
    ...(report.conflicts ? [`${plural(report.conflicts, "concurrent change")} retried`] : []),
  ];
  out.line(
    `${plural(report.scanned, "session")} in ${url}: ${parts.join(", ")} ${colors.dim(`(${report.durationMs} ms)`)}`,
  );
  if (report.offloaded)
    out.line(
      `  inline files: ${plural(report.offloaded.contents, "file")} (${report.offloaded.bytes} bytes) ${report.dryRun ? "would move to the blob store (run again with --apply)" : "moved to the blob store"}`,
    );
  for (const line of listedLines(
    report.states,
    (s) => (knowledge(s, source) === "known" ? colors.dim : colors.yellow)(transitionLine(s, source, transition)),
    "  ",
  ))
    out.line(line);
  if (report.preserved) {
    out.line(
      `  ${colors.yellow(`${plural(report.preserved, "session")} ${report.preserved === 1 ? "holds" : "hold"} ${plural(unknownValues, "value")} the CLI does not know (unknown types or newer versions): not checked, not migrated, left as stored`)}`,
    );
    out.line(`  ${colors.cyan("fix:")} ${unknownTypesFix(source)}`);
  }
  // Ids, pointers and messages come from the store: escaped and cut.
  for (const failure of report.failed.slice(0, 50))
    out.line(
      `  ${colors.red("✖")} ${echo(failure.id)}${failure.pointer !== undefined ? ` at ${echo(failure.pointer)}` : ""}: ${echo(failure.message, 1000)}`,
    );
  const unlisted = report.failedCount - Math.min(50, report.failed.length);
  if (unlisted > 0) out.line(`  ... and ${unlisted} more (use --json for the list)`);
}

async function migrate(context: CommandContext, options: MigrateOptions): Promise<ExitCode> {
  const out = context.output(options);
  const batchSize = Number(options.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000)
    throw new CliError(EXIT.usage, `--batch-size ${options.batchSize}: expected an integer from 1 to 1000`);
  if (options.encrypt && options.reencrypt)
    throw new CliError(EXIT.usage, "--encrypt and --reencrypt do not go together", {
      fix: "--encrypt for a store with plaintext rows, --reencrypt after a key rotation",
    });
  const source = await resolveRegistry(options.registry, context);
  const { registry } = source;
  if (options.encrypt || options.reencrypt) return migrateEncryptionCommand(context, options, registry, batchSize);
  const blobThreshold = Number(options.blobThreshold ?? "4096");
  if (options.blobs && (!Number.isSafeInteger(blobThreshold) || blobThreshold < 0))
    throw new CliError(EXIT.usage, `--blob-threshold ${options.blobThreshold}: expected a whole number of bytes`);
  // Moving files is a dry run unless asked for: it rewrites every session holding one.
  if (options.blobs && !options.apply) options.dryRun = true;
  const { migrateStore, formatStateTransition } = await import("../../runtime/stores/migrate.js");
  const { defaultSessionCodec } = await import("../../stores.js");
  // On an encrypted store the store's codec decrypts into `capture`; the migration loads the text itself.
  const capture = new PlaintextCapture(defaultSessionCodec({ registry }));
  // A dry run opens the store read-only, creating nothing (no file, folder, table).
  const opened = await openCliStore(options.store, context.environment, {
    codec: capture,
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const progress = await out.progress();
  // Ctrl-C: finish the session in hand, then report where to resume.
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  try {
    progress.start(0, options.dryRun ? "checking" : "migrating");
    const report = await migrateStore(opened.store, {
      registry,
      dryRun: options.dryRun === true,
      strict: options.strict === true,
      batchSize,
      signal: abort.signal,
      readText: scanTextReader(opened, capture),
      ...(options.blobs ? { offloadBlobs: { thresholdBytes: blobThreshold } } : {}),
      ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
      onProgress: (done) => {
        // Stores do not count their sessions: the bar's end moves ahead a page at a time.
        progress.setTotal(Math.ceil((done + 1) / batchSize) * batchSize);
        progress.increment();
      },
    });
    progress.stop();
    const unknown = report.states
      .filter((s) => knowledge(s, source) !== "known")
      .map((s) => ({ type: s.type, version: s.to, count: s.count, reason: knowledge(s, source) }));
    const unknownValues = unknown.reduce((n, u) => n + u.count, 0);
    const unknownFails = report.preserved > 0 && options.allowUnknown !== true;
    out.result({
      ok: report.failedCount === 0 && !report.aborted && !unknownFails,
      store: opened.url,
      ...(opened.empty ? { emptyStore: opened.empty } : {}),
      ...report,
      unknown,
    });
    printReport(out, report, opened.url, formatStateTransition, source, unknownValues);
    if (opened.empty) out.line(out.c.dim(`  dry run: ${echo(opened.empty)}, read as an empty store, nothing created`));
    if (report.aborted) {
      out.note(
        `${out.ce.yellow("stopped early")} after ${plural(report.scanned, "session")}\n  ${out.ce.dim("fix:")}   resume with: statebag migrate${options.store ? ` --store ${opened.url}` : ""}${report.cursor ? ` --start-after ${report.cursor}` : ""}`,
      );
      return EXIT.runtime;
    }
    return report.failedCount === 0 && !unknownFails ? EXIT.ok : EXIT.failed;
  } finally {
    process.removeListener("SIGINT", onSigint);
    progress.stop();
    await opened.close();
  }
}

/** `migrate --encrypt` / `--reencrypt`: `migrateEncryption` with the keyring's codecs. */
async function migrateEncryptionCommand(
  context: CommandContext,
  options: MigrateOptions,
  registry: CliRegistry["registry"],
  batchSize: number,
): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const mode = options.encrypt ? "encrypt" : "reencrypt";
  const flag = `--${mode}`;
  const { defaultSessionCodec } = await import("../../stores.js");
  const { migrateEncryption } = await import("../../runtime/stores/encryption/migrate.js");
  // --encrypt reads plaintext rows for this run only (the codecs' acceptPlaintext window).
  const opened: OpenedStore = await openCliStore(options.store, context.environment, {
    codec: defaultSessionCodec({ registry }),
    configured: context.project()?.store,
    keyring: cliKeyring(options, context),
    ...(mode === "encrypt" ? { acceptPlaintext: true } : {}),
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const progress = await out.progress();
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  try {
    const encryption = opened.encryption;
    if (!encryption) {
      throw new CliError(EXIT.usage, `${flag} needs the store's keyring`, {
        fix: 'pass --keyring <file> (or set STATEBAG_KEYRING=<file>, or "keyring" in statebag.config.json)',
      });
    }
    progress.start(0, options.dryRun ? "checking" : mode === "encrypt" ? "encrypting" : "re-encrypting");
    const report = await migrateEncryption(opened.store, {
      codec: encryption.codec,
      messageCodec: encryption.messageCodec,
      mode,
      dryRun: options.dryRun === true,
      batchSize,
      signal: abort.signal,
      ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
      ...(options.blobsStartAfter !== undefined ? { blobsStartAfter: options.blobsStartAfter } : {}),
      onBlobProgress: () => progress.increment(),
      onProgress: (done) => {
        progress.setTotal(Math.ceil((done + 1) / batchSize) * batchSize);
        progress.increment();
      },
    });
    progress.stop();
    out.result({
      ok: report.failedCount === 0 && !report.aborted,
      store: opened.url,
      storeName: encryption.store,
      ...(opened.empty ? { emptyStore: opened.empty } : {}),
      ...report,
    });
    printEncryptionReport(out, report, opened.url, encryption.store);
    if (opened.empty) out.line(colors.dim(`  dry run: ${echo(opened.empty)}, read as an empty store, nothing created`));
    if (report.aborted) {
      out.note(
        `${out.ce.yellow("stopped early")} after ${plural(report.scanned, "session")}${report.blobs ? ` and ${plural(report.blobs.scanned, "file")}` : ""}\n  ${out.ce.dim("fix:")}   resume with: statebag migrate ${flag}${options.store ? ` --store ${opened.url}` : ""}${report.blobs?.cursor ? ` --start-after ${report.cursor ?? ""} --blobs-start-after ${report.blobs.cursor}` : report.cursor ? ` --start-after ${report.cursor}` : ""}`,
      );
      return EXIT.runtime;
    }
    if (report.failedCount === 0 && !report.dryRun) {
      out.line(
        colors.dim(
          mode === "encrypt"
            ? `  every row is under the key ${report.currentKey}: remove acceptPlaintext from the application's codecs`
            : `  every row is under the key ${report.currentKey}: older keys can leave the keyring once no backup you may restore needs them`,
        ),
      );
    }
    return report.failedCount === 0 ? EXIT.ok : EXIT.failed;
  } finally {
    process.removeListener("SIGINT", onSigint);
    progress.stop();
    await opened.close();
  }
}

function printEncryptionReport(out: Output, report: EncryptionMigrationReport, url: string, storeName: string): void {
  const { c: colors } = out;
  const verb = report.dryRun
    ? report.mode === "encrypt"
      ? "would encrypt"
      : "would re-encrypt"
    : report.mode === "encrypt"
      ? "encrypted"
      : "re-encrypted";
  const parts = [
    colors.green(`${report.rewritten} ${verb}`),
    `${report.current} already under ${report.currentKey}`,
    ...(report.plaintext ? [`${report.plaintext} found in plaintext`] : []),
    ...(report.stale ? [`${report.stale} under older keys`] : []),
    ...(report.failedCount ? [colors.red(`${report.failedCount} failed`)] : []),
    ...(report.vanished ? [`${report.vanished} deleted meanwhile`] : []),
    ...(report.conflicts ? [`${plural(report.conflicts, "concurrent change")} retried`] : []),
  ];
  out.line(
    `${plural(report.scanned, "session")} in ${url} (store name ${quoted(storeName, 200)}): ${parts.join(", ")} ${colors.dim(`(${report.durationMs} ms)`)}`,
  );
  out.line(
    colors.dim(
      `  message logs: ${report.logs.read} read, ${report.logs.rewritten} ${report.dryRun ? "would be rewritten" : "rewritten"} (${plural(report.logs.messages, "message")})`,
    ),
  );
  if (report.blobs)
    out.line(
      colors.dim(
        `  files (blobs): ${report.blobs.scanned} scanned, ${report.blobs.rewritten} ${report.dryRun ? "would be rewritten" : "rewritten"}, ${report.blobs.current} already current, ${report.blobs.failed} failed${report.blobs.vanished ? `, ${report.blobs.vanished} deleted meanwhile` : ""}`,
      ),
    );
  for (const failure of report.failed.slice(0, 50))
    out.line(
      failure.blob
        ? `  ${colors.red("✖")} file ${echo(failure.blob.hash ?? "(unreadable name)")}${failure.blob.owner !== undefined ? ` of owner ${echo(failure.blob.owner)}` : ""}: ${echo(failure.message, 1000)}`
        : `  ${colors.red("✖")} ${echo(failure.id)}${failure.logId !== undefined ? ` (log ${echo(failure.logId)})` : ""}: ${echo(failure.message, 1000)}`,
    );
  const unlisted = report.failedCount - Math.min(50, report.failed.length);
  if (unlisted > 0) out.line(`  ... and ${unlisted} more (use --json for the list)`);
}
