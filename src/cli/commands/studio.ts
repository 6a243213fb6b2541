/**
 * `statebag studio [--store url] [--port n] [--host h] [--allow-host name] [--write]`: a local web page to browse a
 * store's sessions (validity, state bag, history as a chat, problems at their pointers), preview
 * migrations step by step, and read every type's schema history with its compatibility verdicts.
 *
 * It listens on 127.0.0.1 unless --host says otherwise, behind a random token in the URL it prints
 * (a request without it gets an empty 404), answers only requests naming an allowed Host
 * (--allow-host; see server.ts), and is read-only unless --write (which allows
 * migrating one session, with the compare-and-swap save `statebag migrate` uses). Store, registry,
 * schemas and fixtures come from the project config like every command's.
 */
import { resolve } from "node:path";
import type { Command } from "commander";
import { action, storeOption, type CommandContext } from "../context.js";
import { quoted } from "../../runtime/core/json.js";
import { CliError, EXIT, echo, type ExitCode } from "../io.js";
import { CONFIG_DEFAULTS } from "../project-config.js";
import { resolveRegistry } from "../registry.js";
import { cliKeyring, keyringOption, openCliStore, PlaintextCapture } from "../store.js";
import { loadCompat } from "../toolchain.js";
import { StudioApi, type CompatApi, type StudioPaths } from "../studio/api.js";
import { isLoopback, isWildcard, normalHostName, startStudio, type RunningStudio } from "../studio/server.js";

export interface StudioOptions {
  store?: string;
  keyring?: string;
  registry?: string;
  port: string;
  host: string;
  /** --allow-host, repeatable or comma-separated. */
  allowHost?: string[];
  write?: boolean;
}

const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(",")];

export function registerStudio(program: Command, context: CommandContext): void {
  program
    .command("studio")
    .summary("a local web page to browse sessions, preview migrations and read type histories")
    .description(
      "Serves a local web page over the store: a searchable, paginated list of sessions (validity, types and versions, size, messages), one session's state bag and history with its problems at their JSON pointers, a step-by-step migration preview, and every registered type's schema history with the compatibility verdict (and witness) between consecutive versions.\n\n" +
        "It listens on 127.0.0.1 unless --host says otherwise; the URL it prints carries a random token, and a request without it is answered with nothing. A request whose Host header is not localhost, 127.0.0.1, [::1], the --host address or an --allow-host name is refused (403), and so is a write whose Origin is not one of them. Read-only unless --write (which allows migrating one session at a time, with the compare-and-swap save statebag migrate uses). Ctrl-C stops it.",
    )
    .addOption(storeOption())
    .addOption(keyringOption())
    .option("--registry <module>", 'your project\'s registry module (default: "registry" in the project config)')
    .option("--port <n>", "the port to listen on (0: a free one)", "0")
    .option(
      "--host <host>",
      "the address to listen on (anything but loopback exposes the page, token-protected, to the network)",
      "127.0.0.1",
    )
    .option(
      "--allow-host <name>",
      "a host name or address the page may be reached by (repeatable, or comma-separated); default on 0.0.0.0 or ::, the machine's own names and addresses; localhost, 127.0.0.1 and [::1] always",
      collect,
    )
    .option("--write", "allow migrating a session from the page (otherwise read-only)")
    .addHelpText(
      "after",
      `
Examples:
  $ statebag studio                                   # the config's store, read-only, on 127.0.0.1
  $ statebag studio --store sqlite:./sessions.db --port 4873
  $ statebag studio --write --keyring keyring.json   # an encrypted store; migrate sessions one by one
  $ statebag studio --host 0.0.0.0 --allow-host studio.lan   # on the network, reached as studio.lan only`,
    )
    .action(action(context, (options: StudioOptions) => studio(context, options)));
}

/** Opens the store and starts the server; the caller closes both (`close`). Used by the command and tests. */
export async function openStudio(
  context: CommandContext,
  options: StudioOptions,
): Promise<RunningStudio & { api: StudioApi; closeAll(): Promise<void> }> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(EXIT.usage, `--port ${options.port}: expected an integer from 0 to 65535`);
  const host = options.host.trim();
  if (host === "") throw new CliError(EXIT.usage, "--host is empty", { fix: "pass --host 127.0.0.1 (the default)" });
  const allowHosts = options.allowHost?.map((name) => {
    const normal = normalHostName(name.trim());
    if (normal === undefined || isWildcard(normal))
      throw new CliError(EXIT.usage, `--allow-host ${quoted(name, 120)}: not a host name or address`, {
        fix: "pass a name or address as a browser's address bar shows it, without scheme or port (e.g. --allow-host studio.lan --allow-host 192.168.1.20)",
      });
    return normal;
  });
  const source = await resolveRegistry(options.registry, context);
  const { defaultSessionCodec } = await import("../../stores.js");
  // Reads hand the stored (decrypted) text over; the one write (--write) is the real codec's.
  const capture = new PlaintextCapture(defaultSessionCodec({ registry: source.registry }));
  const project = context.project();
  const opened = await openCliStore(options.store, context.environment, {
    codec: capture,
    configured: project?.store,
    keyring: cliKeyring(options, context),
    // Read-only: SQLite opened read-only, nothing created (a store that does not exist yet reads as empty).
    ...(options.write ? {} : { dryRun: true }),
  });
  const cwd = context.environment.cwd;
  const paths: StudioPaths = project
    ? { root: project.root, schemas: project.schemas, fixtures: project.fixtures }
    : { root: cwd, schemas: resolve(cwd, CONFIG_DEFAULTS.schemas), fixtures: resolve(cwd, CONFIG_DEFAULTS.fixtures) };
  const api = new StudioApi({
    opened,
    capture,
    source,
    paths,
    write: options.write === true,
    loadCompat: async () => (await loadCompat(paths.root)) as unknown as CompatApi,
  });
  let running: RunningStudio;
  try {
    running = await startStudio({ api, host, port, ...(allowHosts ? { allowHosts } : {}) });
  } catch (error) {
    await opened.close();
    const code = (error as { code?: string }).code;
    throw new CliError(EXIT.usage, `cannot listen on ${host}:${port}${code ? ` (${code})` : ""}`, {
      fix: code === "EADDRINUSE" ? "pick another --port, or 0 for a free one" : "check --host and --port",
      cause: error,
    });
  }
  return {
    ...running,
    api,
    closeAll: async () => {
      await running.close();
      await opened.close();
    },
  };
}

async function studio(context: CommandContext, options: StudioOptions): Promise<ExitCode> {
  const out = context.output({});
  const { c: colors } = out;
  const running = await openStudio(context, options);
  const info = running.api.info();
  out.line(`${colors.bold("statebag studio")}: ${running.url}`);
  out.line(
    colors.dim(
      `  store ${echo(info.store)} (${info.write ? colors.yellow("read-write: sessions can be migrated from the page") : "read-only"})${info.encrypted ? ", decrypted with the keyring" : ""}`,
    ),
  );
  if (info.empty) out.line(colors.dim(`  ${echo(info.empty)}: read as an empty store`));
  out.line(colors.dim(`  types: ${echo(info.registry)}; schema history: ${echo(info.schemas)}/history`));
  if (!isLoopback(running.host)) {
    context.environment.stderr.write(
      `warning: listening on ${echo(running.host)}, not only on this machine: anyone who can reach it and has the URL (its token) can read the store\n`,
    );
    // Which names work: the Host check refuses any other (a name from the network is --allow-host's).
    out.line(
      colors.dim(
        `  answers to Host ${running.allowedHosts.map((n) => echo(n)).join(", ")} (port ${running.port}); --allow-host names others`,
      ),
    );
  }
  out.line(colors.dim("  the URL's token is the only key: do not share it. Ctrl-C stops."));
  await new Promise<void>((resolveStop) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolveStop();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await running.closeAll();
  out.line(colors.dim("statebag studio stopped"));
  return EXIT.ok;
}
