/**
 * `statebag store erase --owner <id> [--dry-run]`: an erasure request. Removes every session of the
 * owner, its message logs and the owner's index entries (`store.eraseOwner`), and prints the
 * receipt as JSON: the owner's SHA-256 (never the id), the counts, the times. Interrupted, it
 * leaves a consistent store: run it again to finish.
 */
import type { Command } from "commander";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { EXIT, type ExitCode } from "../io.js";
import { openCliStore } from "../store.js";
import { storeCommand } from "./store-purge.js";

interface EraseCliOptions {
  store?: string;
  json?: boolean;
  dryRun?: boolean;
  owner: string;
}

export function registerStoreErase(program: Command, context: CommandContext): void {
  storeCommand(program)
    .command("erase")
    .summary("remove everything of one owner (an erasure request) and print the receipt")
    .description(
      "Removes every session of the owner, each session's message logs and the owner's index entries, then prints a receipt as JSON: " +
        "{ owner: <SHA-256 of the owner id>, sessions, messageLogs, startedAt, finishedAt, complete: true }, to keep as the record of the request. " +
        "Safe to run again: an interrupted run (Ctrl-C, a crash) is finished by the next one, and a finished one removes nothing more. " +
        "Stop the owner's traffic first: sessions the owner creates while it runs may survive it.",
    )
    .addOption(storeOption())
    .requiredOption("--owner <id>", "the owner (SessionMeta.owner) whose data is erased")
    .option("--dry-run", "remove nothing; count the owner's sessions and message logs")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag store erase --owner user-42 --dry-run
  $ statebag store erase --owner user-42 --store postgres://app@db/app > erasure-user-42.json`,
    )
    .action(action(context, (options: EraseCliOptions) => erase(context, options)));
}

async function erase(context: CommandContext, options: EraseCliOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { ce } = out;
  const { previewErase } = await import("../../runtime/stores/erasure.js");
  const opened = await openCliStore(options.store, context.environment, {
    configured: context.project()?.store,
    ...(options.dryRun ? { dryRun: true } : {}),
  });
  const progress = await out.progress();
  try {
    if (options.dryRun) {
      const preview = { ...(await previewErase(opened.store, options.owner)), dryRun: true };
      context.environment.stdout.write(JSON.stringify(preview, null, 2) + "\n");
      out.note(
        ce.dim(
          `dry run: ${preview.sessions} sessions and ${preview.messageLogs} message logs${preview.blobs !== undefined ? ` and ${preview.blobs} files` : ""} of this owner in ${opened.url}; nothing removed`,
        ),
      );
      return EXIT.ok;
    }
    progress.start(0, "erasing");
    let lastNote = Date.now();
    let shown = 0;
    const receipt = await opened.store.eraseOwner(options.owner, {
      onProgress: (p) => {
        progress.setTotal(p.sessions + 100);
        progress.increment(p.sessions - shown);
        shown = p.sessions;
        if (Date.now() - lastNote >= 2000 && !out.json) {
          lastNote = Date.now();
          out.note(
            ce.dim(
              `  ${p.sessions} sessions and ${p.messageLogs} message logs removed so far (interrupted: run it again to finish)`,
            ),
          );
        }
      },
    });
    progress.stop();
    // The receipt is the output, in both modes: a record to keep.
    context.environment.stdout.write(JSON.stringify(receipt, null, 2) + "\n");
    if (!out.json)
      out.note(
        `${ce.green("✔")} erased ${receipt.sessions} sessions and ${receipt.messageLogs} message logs${receipt.blobs !== undefined ? ` and ${receipt.blobs} files` : ""} of owner sha256:${receipt.owner.slice(0, 12)}… from ${opened.url}`,
      );
    return EXIT.ok;
  } finally {
    progress.stop();
    await opened.close();
  }
}
