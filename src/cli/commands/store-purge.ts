/**
 * `statebag store purge [--dry-run] [--older-than <d>] [--idle-for <d>]`: removes TTL-expired
 * sessions and the sessions the retention policy no longer keeps (the store URL's
 * `?retentionMaxAge=`/`?retentionMaxIdle=`, or the flags, which replace it), with their message logs.
 * Resumable: an interrupted run leaves a consistent store; running it again continues (what was
 * removed is gone), and `--start-after` skips what was already scanned.
 */
import type { Command } from "commander";
import { action, jsonOption, storeOption, storeUrl, type CommandContext } from "../context.js";
import { CliError, echo, EXIT, type ExitCode } from "../io.js";
import { openCliStore } from "../store.js";

interface PurgeOptions {
  store?: string;
  json?: boolean;
  dryRun?: boolean;
  olderThan?: string;
  idleFor?: string;
  startAfter?: string;
  batchSize: string;
}

/** The `store` command group (`store setup` creates it). */
export function storeCommand(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === "store") ??
    program.command("store").summary("manage session stores").description("Manage session stores.")
  );
}

export function registerStorePurge(program: Command, context: CommandContext): void {
  storeCommand(program)
    .command("purge")
    .summary("remove expired sessions and those the retention policy no longer keeps")
    .description(
      "Removes sessions whose time to live ran out, and sessions older (from their creation) or idle (since their last save) longer than the retention policy allows, each with its message logs. " +
        "The policy is the store URL's ?retentionMaxAge= and ?retentionMaxIdle= (90d, 12h, 30m, ms), or --older-than / --idle-for, which replace it. A session saved while the purge runs is kept.\n\n" +
        "Interrupted (Ctrl-C, a crash), it leaves a consistent store: run it again to continue; --start-after skips what a previous run already scanned.",
    )
    .addOption(storeOption())
    .option("--dry-run", "remove nothing; count what would be removed")
    .option("--older-than <duration>", "remove sessions created longer ago than this (90d, 12h, 30m, 45s, ms)")
    .option("--idle-for <duration>", "remove sessions not saved for longer than this")
    .option("--start-after <id>", "continue after this session id (printed by an interrupted run)")
    .option("--batch-size <n>", "sessions per page read from the store (1-1000)", "500")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag store purge --older-than 90d --dry-run
  $ statebag store purge --store "postgres://app@db/app?retentionMaxIdle=30d"
  $ statebag store purge --idle-for 30d --start-after user-4242   # continue an interrupted run`,
    )
    .action(action(context, (options: PurgeOptions) => purge(context, options)));
}

async function purge(context: CommandContext, options: PurgeOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const batchSize = Number(options.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000)
    throw new CliError(EXIT.usage, `--batch-size ${echo(options.batchSize)}: expected an integer from 1 to 1000`);
  const { parseDuration, purgeRetention, checkRetention, takeRetentionParams } = await import(
    "../../runtime/stores/retention.js"
  );
  const flag = (value: string | undefined, name: string) => {
    if (value === undefined) return undefined;
    try {
      return parseDuration(value, name);
    } catch (error) {
      throw new CliError(
        EXIT.usage,
        `${name} ${echo(value)}: expected a duration such as 90d, 12h, 30m, 45s or a number of milliseconds`,
        { cause: error },
      );
    }
  };
  const maxAgeMs = flag(options.olderThan, "--older-than");
  const maxIdleMs = flag(options.idleFor, "--idle-for");
  // The URL's retention is read here (and taken out), so the store's own purgeExpired removes only expired sessions.
  const taken = takeRetentionParams(storeUrl(options.store, context.environment, context.project()?.store));
  const policy =
    maxAgeMs !== undefined || maxIdleMs !== undefined
      ? checkRetention({
          ...(maxAgeMs !== undefined ? { maxAgeMs } : {}),
          ...(maxIdleMs !== undefined ? { maxIdleMs } : {}),
        })
      : checkRetention(taken.retention);
  const opened = await openCliStore(taken.url, context.environment, options.dryRun ? { dryRun: true } : {});
  const progress = await out.progress();
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  let lastNote = Date.now();
  let shown = 0;
  try {
    const started = Date.now();
    const expired = options.dryRun ? undefined : await opened.store.purgeExpired();
    let report: Awaited<ReturnType<typeof purgeRetention>> | undefined;
    if (policy) {
      progress.start(0, options.dryRun ? "checking" : "purging");
      report = await purgeRetention(opened.store, policy, {
        dryRun: options.dryRun === true,
        batchSize,
        signal: abort.signal,
        ...(options.startAfter !== undefined ? { startAfter: options.startAfter } : {}),
        onProgress: (p) => {
          // Stores do not count their sessions: the bar's end moves ahead a page at a time.
          progress.setTotal(p.scanned + batchSize);
          progress.increment(p.scanned - shown);
          shown = p.scanned;
          if (Date.now() - lastNote >= 2000 && !out.json) {
            lastNote = Date.now();
            out.note(
              colors.dim(
                `  ${p.scanned} scanned, ${p.sessions} ${options.dryRun ? "to remove" : "removed"} (resume: --start-after ${echo(p.cursor ?? "")})`,
              ),
            );
          }
        },
      });
      progress.stop();
    }
    const ms = Date.now() - started;
    const aborted = report?.aborted === true;
    out.result({
      ok: !aborted,
      store: opened.url,
      dryRun: options.dryRun === true,
      ...(expired !== undefined ? { expired } : {}),
      retention: policy ?? null,
      ...(report ?? {}),
      ms,
    });
    const verb = options.dryRun ? "would remove" : "removed";
    const parts = [];
    if (expired !== undefined) parts.push(`${expired} expired (TTL) removed`);
    if (report)
      parts.push(
        `${report.sessions} of ${report.scanned} sessions ${verb} by the retention policy${options.dryRun ? "" : ` (${report.messageLogs} message logs)`}${report.skipped ? `, ${report.skipped} saved meanwhile and kept` : ""}`,
      );
    else
      parts.push(
        "no retention policy (give --older-than, --idle-for or ?retentionMaxAge= / ?retentionMaxIdle= in the store URL)",
      );
    out.line(
      `${colors.green("✔")} ${opened.store.kind} store ${opened.url}: ${parts.join("; ")} ${colors.dim(`(${ms} ms)`)}`,
    );
    if (aborted) {
      out.note(
        `${out.ce.yellow("stopped early")} after ${report!.scanned} sessions\n  ${out.ce.dim("fix:")}   run it again to continue${report!.cursor ? `, or skip what was scanned: --start-after ${echo(report!.cursor)}` : ""}`,
      );
      return EXIT.runtime;
    }
    return EXIT.ok;
  } finally {
    process.removeListener("SIGINT", onSigint);
    progress.stop();
    await opened.close();
  }
}
