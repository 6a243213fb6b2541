/**
 * `statebag migrate --store <url> [--dry-run]`: brings every stored session to the latest versions
 * of its types (the same migrations loading runs), so old documents do not wait for their next
 * save. With --dry-run nothing is written: every session is loaded and the report says which
 * would change and which cannot be migrated (exit 1 when any cannot).
 */
import type { Command } from "commander";
import type { TypeRegistry } from "../../runtime/registry.js";
import type { SessionStore } from "../../runtime/stores/types.js";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { EXIT, type ExitCode, type Output, type Progress } from "../io.js";
import { loadRegistry } from "../registry.js";
import { checkDocument, plural } from "../session-report.js";
import { openCliStore, RawTextCodec } from "../store.js";
import { bulkMigrationMissing, findMigrateStore, type BulkMigrateReport } from "../wiring.js";

interface MigrateOptions {
  store?: string;
  registry?: string;
  dryRun?: boolean;
  json?: boolean;
}

export function registerMigrate(program: Command, context: CommandContext): void {
  program
    .command("migrate")
    .summary("migrate every stored session to the latest type versions")
    .description(
      "Loads every stored session through the registry's migrations and saves the ones that changed (compare-and-swap: a session the application saved meanwhile is left for the next run).\n\n" +
        "With --dry-run nothing is written: it reports what would change and what cannot be migrated. Exit 1 when any session cannot be migrated.",
    )
    .addOption(storeOption())
    .option("--dry-run", "write nothing; report what would change")
    .option("--registry <module>", "your project's generated registry module (your types and migrations)")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag migrate --store postgres://app@db/app --dry-run
  $ statebag migrate --store postgres://app@db/app --registry dist/generated/registry.js`,
    )
    .action(action(context, (options: MigrateOptions) => migrate(context, options)));
}

function printReport(out: Output, report: BulkMigrateReport, url: string, dryRun: boolean): void {
  const { c } = out;
  const verb = dryRun ? "would migrate" : "migrated";
  out.line(`${plural(report.scanned, "session")} in ${url}: ${c.green(`${report.migrated} ${verb}`)}, ${report.unchanged} already current${report.failed.length ? `, ${c.red(`${report.failed.length} cannot be migrated`)}` : ""}`);
  for (const f of report.failed.slice(0, 50)) out.line(`  ${c.red("✖")} ${f.id}${f.pointer !== undefined ? ` at ${f.pointer}` : ""}: ${f.message}`);
  if (report.failed.length > 50) out.line(`  ... and ${report.failed.length - 50} more (use --json for all)`);
}

async function migrate(context: CommandContext, options: MigrateOptions): Promise<ExitCode> {
  const out = context.output(options);
  const registry = await loadRegistry(options.registry, context.environment);
  const dryRun = options.dryRun === true;
  const migrateStore = await findMigrateStore();
  if (!migrateStore && !dryRun) throw bulkMigrationMissing();

  const codec = migrateStore ? undefined : new RawTextCodec();
  const opened = await openCliStore(options.store, context.environment, codec ? { codec } : { registry });
  const progress = await out.progress();
  try {
    let report: BulkMigrateReport;
    if (migrateStore) {
      let started = false;
      report = await migrateStore(opened.store, {
        registry,
        dryRun,
        onProgress: (_done, total) => {
          if (!started) {
            progress.start(total ?? 0, dryRun ? "checking" : "migrating");
            started = true;
          }
          progress.increment();
        },
      });
    } else {
      progress.start(0, "checking");
      report = await dryRunWithScan(opened.store, registry, progress);
    }
    progress.stop();
    out.result({ ok: report.failed.length === 0, store: opened.url, dryRun, ...report });
    printReport(out, report, opened.url, dryRun);
    return report.failed.length === 0 ? EXIT.ok : EXIT.failed;
  } finally {
    progress.stop();
    await opened.close();
  }
}

/** Read-only: loads every stored document and reports which would change on migration. */
async function dryRunWithScan(store: SessionStore, registry: TypeRegistry, progress: Progress): Promise<BulkMigrateReport> {
  const report: BulkMigrateReport = { scanned: 0, migrated: 0, unchanged: 0, failed: [] };
  let cursor: string | undefined;
  do {
    const page = await store.scan({ cursor, limit: 500, includeText: true });
    // The total is known only page by page: what was seen, plus a page more while there is one.
    progress.setTotal(report.scanned + page.items.length + (page.cursor ? 500 : 0));
    for (const item of page.items) {
      report.scanned++;
      const checked = checkDocument(item.text ?? "", { registry, strict: false });
      if (!checked.ok) {
        const first = checked.problems[0];
        report.failed.push({ id: item.id, message: first ? first.message : "does not load", ...(first ? { pointer: first.pointer } : {}) });
      } else if (checked.migrated) report.migrated++;
      else report.unchanged++;
      progress.increment();
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return report;
}
