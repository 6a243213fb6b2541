/**
 * `statebag gen [--check]`: the generator's programmatic API (`generator/index.ts`, loaded only
 * when this command runs) with the CLI's conventions.
 *
 * Where it reads and writes comes from the project config (flags override single keys). Without a
 * config it runs only with --project, or inside statebag's own repository, whose default layout
 * writes statebag's internal registry: anywhere else that would break the project, so it refuses.
 */
import { existsSync } from "node:fs";
import { relative } from "node:path";
import type { Command } from "commander";
import { action, inputPath, jsonOption, type CommandContext } from "../context.js";
import { CliError, EXIT, type ExitCode } from "../io.js";
import { statebagRepositoryRoot } from "../project-config.js";
import { loadGenerator } from "../toolchain.js";

interface GenOptions {
  check?: boolean;
  project?: string;
  out?: string;
  schemas?: string;
  runtimeImport?: string;
  fixtures?: string;
  scaffoldFixtures?: boolean;
  compat: boolean;
  cache: boolean;
  json?: boolean;
}

export function registerGen(program: Command, context: CommandContext): void {
  program
    .command("gen")
    .summary("generate JSON Schemas, the type registry and validators from $type-tagged types")
    .description(
      "Scans TypeScript for types declared with the ProviderState<...> or Tagged<...> markers (and migrations declared as `export const ... = defineMigration(...)`) and writes one JSON Schema per type, a frozen history schema per version, and the registry module with precompiled validators and the migrations.\n\n" +
        "Then the compatibility check runs: frozen schemas untouched, no breaking change without a version bump, a migration path from every version, a golden fixture per version.\n\n" +
        "With --check nothing is written: it exits 1 when generated files are stale, missing or extra, or the check fails (use it in CI).",
    )
    .option("--check", "write nothing; exit 1 when generated files are not current")
    .option("--project <tsconfig>", 'your project\'s tsconfig.json (default: "tsconfig" in the project config)')
    .option(
      "--out <dir>",
      'directory of the generated modules (default: "generated" in the config, else <project>/src/generated)',
    )
    .option(
      "--schemas <dir>",
      'directory of the JSON Schema files (default: "schemas" in the config, else <project>/schemas)',
    )
    .option("--runtime-import <module>", 'module the generated code imports statebag from (default: "statebag")')
    .option(
      "--fixtures <dir>",
      'golden fixtures, <dir>/<$type>/v<N>.json (default: "fixtures" in the config, else <project>/test/fixtures)',
    )
    .option(
      "--scaffold-fixtures",
      "write a starting-point fixture for every type and version that has none (never overwrites)",
    )
    .option("--no-compat", "skip the compatibility check")
    .option("--no-cache", "ignore (and do not update) the no-op cache")
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ npx statebag init                              # once: writes statebag.config.json
  $ npx statebag gen --scaffold-fixtures           # a new type or version: also writes starting fixtures
  $ npx statebag gen --check                       # CI: fails when someone forgot to regenerate`,
    )
    .action(action(context, (options: GenOptions) => gen(context, options)));
}

async function gen(context: CommandContext, options: GenOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { environment } = context;
  const layout = resolveLayout(context, options);
  const { generate } = await loadGenerator(environment.cwd);
  const check = options.check === true;
  const started = Date.now();
  const result = await generate({
    ...layout.options,
    scaffoldFixtures: options.scaffoldFixtures === true,
    compat: options.compat,
    check,
    cache: options.cache,
  });
  const ms = Date.now() - started;
  const { c: colors, ce } = out;

  out.result({
    ok: result.ok,
    check,
    types: result.types.map((t) => ({
      $type: t.$type,
      family: t.family,
      version: t.version,
      name: t.name,
      source: t.source,
    })),
    files: result.files.length,
    written: result.written,
    deleted: result.deleted,
    stale: result.stale,
    missing: result.missing,
    extra: result.extra,
    errors: result.errors,
    migrations: result.migrations,
    compat: result.compat ?? null,
    scaffolded: result.scaffolded,
    recorded: result.recorded,
    cacheHit: result.cacheHit,
    ms,
  });

  if (result.errors.length > 0) {
    const usage = result.exitCode === 2;
    for (const error of result.errors) {
      const lines = [
        `${ce.red(ce.bold("error:"))} ${error.message.replace(/\.$/, "")}${usage ? "" : ce.dim(` [${error.code}]`)}`,
      ];
      if (error.file) lines.push(`  ${ce.dim("where:")} ${error.file}:${error.line ?? 1}:${error.column ?? 1}`);
      const fix =
        error.hint ??
        (usage ? "run it from your project's directory, or pass --project path/to/tsconfig.json" : undefined);
      if (fix) lines.push(`  ${ce.dim("fix:")}   ${fix}`);
      out.note(lines.join("\n"));
    }
    if (!usage) out.note(`${result.errors.length} error(s); nothing was written.`);
    return usage ? EXIT.usage : EXIT.failed;
  }

  const upToDate = result.stale.length === 0 && result.missing.length === 0 && result.extra.length === 0;
  const failures = result.compat?.failures ?? [];
  const flags = (["project", "out", "schemas", "runtimeImport", "fixtures"] as const).flatMap((k) =>
    options[k] === undefined ? [] : [`--${k.replace(/[A-Z]/g, (ch) => `-${ch.toLowerCase()}`)} ${options[k]}`],
  );
  const regenerate = [
    layout.command,
    ...(flags.length > 0 && layout.command.startsWith("npm run") ? ["--"] : []),
    ...flags,
  ].join(" ");

  if (check) {
    for (const file of result.stale) out.line(`${colors.yellow("stale  ")} ${file}`);
    for (const file of result.missing) out.line(`${colors.yellow("missing")} ${file}`);
    for (const file of result.extra) out.line(`${colors.yellow("extra  ")} ${file}`);
    if (upToDate)
      out.line(
        `${colors.green("✔")} generated files are current (${result.types.length} types, ${result.files.length} files, ${ms} ms${result.cacheHit ? ", cached" : ""})`,
      );
    // While a finding below stands, gen writes nothing: its fix comes first.
    else if (result.compat?.wouldBlock)
      out.note(
        `${ce.red(ce.bold("error:"))} generated files are out of date\n  ${ce.dim("fix:")}   fix the compatibility problems below first (until then ${regenerate} writes nothing), then run ${regenerate}`,
      );
    else
      out.note(
        `${ce.red(ce.bold("error:"))} generated files are out of date\n  ${ce.dim("fix:")}   run ${regenerate} and commit the result`,
      );
  } else if (result.compat?.blocked) {
    // gen is atomic on a change stored data would not survive: nothing was written, so no success line.
  } else {
    for (const file of result.written) out.line(`${colors.green("wrote  ")} ${file}`);
    for (const file of result.deleted) out.line(`${colors.yellow("deleted")} ${file}`);
    for (const file of result.recorded)
      out.line(`${colors.green("froze  ")} ${file} ${colors.dim("(recorded in the frozen history lock)")}`);
    for (const file of result.scaffolded)
      out.line(
        `${colors.green("fixture")} ${file} ${colors.dim("(a starting point: edit it into a realistic stored value)")}`,
      );
    const changed = result.written.length + result.deleted.length;
    out.line(
      `${colors.green("✔")} ${result.types.length} types, ${result.files.length} files${changed === 0 ? ", all current" : ""} (${ms} ms${result.cacheHit ? ", cached" : ""})`,
    );
  }

  if (result.compat) {
    for (const warning of result.compat.warnings ?? []) out.note(`${ce.yellow(ce.bold("warning:"))} ${warning}`);
    if (failures.length === 0) {
      out.line(
        `${colors.green("✔")} schemas compatible: ${result.migrations.length} migration step(s), every version has a golden fixture`,
      );
    } else {
      for (const failure of failures) {
        const lines = [
          `${ce.red(ce.bold("error:"))} ${failure.type}${failure.pointer ? ` ${failure.pointer}` : ""}: ${failure.message}${ce.dim(` [${failure.rule}]`)}`,
        ];
        if (failure.file) lines.push(`  ${ce.dim("where:")} ${failure.file}`);
        // The witness (a stored value the new schema refuses) and any budget that ran out: bounded and escaped by the check.
        for (const detail of failure.details ?? []) lines.push(`  ${detail}`);
        lines.push(`  ${ce.dim("fix:")}   ${failure.fix}`);
        out.note(lines.join("\n"));
      }
      out.note(
        `${failures.length} compatibility problem(s): stored sessions of these types might not load after this change.`,
      );
      if (!check && result.compat.blocked) out.note("nothing was written: fix the problems above, then run it again.");
    }
  }
  if (check && !upToDate) return EXIT.failed;
  return failures.length > 0 ? EXIT.failed : EXIT.ok;
}

/** The generator's options for where this command runs, and the command that regenerates there. */
function resolveLayout(
  context: CommandContext,
  options: GenOptions,
): { options: Parameters<typeof import("../../../generator/index.js").generate>[0] & object; command: string } {
  const { environment } = context;
  const path = (p: string | undefined) => (p === undefined ? undefined : inputPath(p, environment));
  const config = context.project();
  if (config !== undefined) {
    if (options.project === undefined && !existsSync(config.tsconfig)) {
      throw new CliError(
        EXIT.usage,
        `${relative(config.root, config.tsconfig) || config.tsconfig}: no such file ("tsconfig" in ${relative(config.root, config.file)})`,
        {
          where: config.file,
          fix: 'create the tsconfig.json that includes your sources, or set "tsconfig" in the config to yours',
        },
      );
    }
    // One command in a configured project, so the generated headers do not depend on how it was run.
    const command = "npx statebag gen";
    return {
      command,
      options: {
        cwd: environment.cwd,
        project: options.project ?? config.tsconfig,
        out: path(options.out) ?? config.generated,
        schemas: path(options.schemas) ?? config.schemas,
        fixtures: path(options.fixtures) ?? config.fixtures,
        runtimeImport: options.runtimeImport ?? config.runtimeImport,
        // Every fix text and generated header names this command, never this repository's npm script.
        command,
      },
    };
  }
  const common = {
    out: path(options.out),
    schemas: path(options.schemas),
    fixtures: path(options.fixtures),
    runtimeImport: options.runtimeImport,
  };
  // Without a config the generator's fix texts say `npx statebag gen --project <tsconfig>`.
  if (options.project !== undefined)
    return { command: "npx statebag gen", options: { cwd: environment.cwd, project: options.project, ...common } };
  const repository = statebagRepositoryRoot(environment.cwd);
  if (repository === undefined) {
    throw new CliError(EXIT.usage, `no statebag config in ${environment.cwd} or any folder above it`, {
      fix: "run npx statebag init in your project's root (it writes statebag.config.json), then npx statebag gen",
    });
  }
  // statebag's own repository: its sources, its internal registry, its npm script.
  return { command: "npm run gen", options: { cwd: repository, command: "npm run gen", ...common } };
}
