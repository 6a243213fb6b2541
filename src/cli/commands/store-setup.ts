/**
 * `statebag store setup --store <url>`: creates or upgrades a store's tables/keys. Run it from a
 * deploy step or CI, never implicitly at runtime (PostgreSQL stores refuse to work until it ran).
 */
import type { Command } from "commander";
import { action, jsonOption, storeOption, type CommandContext } from "../context.js";
import { EXIT, type ExitCode } from "../io.js";
import { openCliStore } from "../store.js";

interface SetupOptions {
  store?: string;
  json?: boolean;
}

export function registerStoreSetup(program: Command, context: CommandContext): void {
  const store = program.command("store").summary("manage session stores").description("Manage session stores.");
  store
    .command("setup")
    .summary("create or upgrade a store's tables (idempotent)")
    .description(
      "Creates the store's tables (PostgreSQL: in the schema given by ?schema=, default public) or upgrades them to the format this statebag writes. Safe to run again: an up-to-date store is left as it is.\n\n" +
        "PostgreSQL needs it before first use. SQLite sets itself up when opened; Redis needs no setup (this records its format version).",
    )
    .addOption(storeOption())
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ statebag store setup --store postgres://app@db.internal/app?schema=statebag
  $ statebag store setup --store redis://localhost:6379/0
  $ statebag store setup                      # the default SQLite file ./.statebag/sessions.db`,
    )
    .action(action(context, (options: SetupOptions) => setup(context, options)));
}

async function setup(context: CommandContext, options: SetupOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const opened = await openCliStore(options.store, context.environment, { configured: context.project()?.store });
  try {
    const started = Date.now();
    const result = await opened.store.setup();
    const ms = Date.now() - started;
    out.result({
      ok: true,
      store: opened.url,
      kind: opened.store.kind,
      version: result.version,
      changed: result.changed,
      ms,
    });
    out.line(
      result.changed
        ? `${colors.green("✔")} ${opened.store.kind} store set up at format version ${result.version}: ${opened.url}`
        : `${colors.green("✔")} ${opened.store.kind} store already at format version ${result.version}, nothing to do: ${opened.url}`,
    );
    return EXIT.ok;
  } finally {
    await opened.close();
  }
}
