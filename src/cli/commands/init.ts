/**
 * `statebag init`: sets a project up for statebag: writes the project config (statebag.config.json,
 * or the "statebag" key of package.json), creates its folders, and a tsconfig.json when there is
 * none. Refuses to overwrite anything, so running it twice is harmless.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import type { Command } from "commander";
import { action, jsonOption, type CommandContext } from "../context.js";
import { CliError, EXIT, type ExitCode } from "../io.js";
import {
  CONFIG_DEFAULTS,
  CONFIG_FILE,
  findProjectConfig,
  PACKAGE_KEY,
  statebagRepositoryRoot,
  validateConfig,
  type ProjectConfigFile,
} from "../project-config.js";

interface InitOptions {
  packageJson?: boolean;
  store?: string;
  json?: boolean;
}

/**
 * A tsconfig for a new project: ES modules, strict, the sources under src/. Valid on TypeScript 5.9
 * and 7: TypeScript 7 wants `rootDir` whenever `outDir` is set (TS5011) and loads no `@types`
 * package unless `types` names it (`process` would be TS2591), so both are explicit.
 */
export const STARTER_TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    rootDir: "src",
    outDir: "dist",
    types: ["node"],
    strict: true,
    skipLibCheck: true,
  },
  include: ["src"],
};

export function registerInit(program: Command, context: CommandContext): void {
  program
    .command("init")
    .summary("set up a project: statebag.config.json and its folders")
    .description(
      `Writes the project config (${CONFIG_FILE}, or with --package-json the "${PACKAGE_KEY}" key of package.json) in the working directory, creates the folders it names, and writes a tsconfig.json when there is none. Every command finds the config from the working directory upward, so none of them needs flags.\n\n` +
        "Refuses to overwrite: when the project already has a config, nothing is written and the exit code is 2.",
    )
    .option("--package-json", `put the config under "${PACKAGE_KEY}" in package.json instead of ${CONFIG_FILE}`)
    .option("--store <url>", `default store URL for the commands that open a store (default: ${CONFIG_DEFAULTS.store})`)
    .addOption(jsonOption())
    .addHelpText(
      "after",
      `
Examples:
  $ npx statebag init
  $ npx statebag init --store postgres://app@localhost/app`,
    )
    .action(action(context, (options: InitOptions) => init(context, options)));
}

async function init(context: CommandContext, options: InitOptions): Promise<ExitCode> {
  const out = context.output(options);
  const { c: colors } = out;
  const { environment } = context;
  const dir = environment.cwd;
  const configFile = join(dir, CONFIG_FILE);
  const packageFile = join(dir, "package.json");

  if (statebagRepositoryRoot(dir) !== undefined) {
    throw new CliError(EXIT.usage, "this is statebag's own repository: it needs no project config", {
      fix: "run init in your own project's root folder",
    });
  }
  const existing = existsSync(configFile) ? configFile : packageHasKey(packageFile) ? packageFile : undefined;
  if (existing !== undefined) {
    throw new CliError(
      EXIT.usage,
      `this project already has a statebag config: ${relative(dir, existing)}${existing === packageFile ? ` ("${PACKAGE_KEY}" key)` : ""}`,
      {
        where: existing,
        fix: 'edit it instead (init never overwrites); its keys are described in the README, "Project config"',
      },
    );
  }
  if (options.packageJson && !existsSync(packageFile)) {
    throw new CliError(EXIT.usage, "--package-json: there is no package.json here", {
      where: dir,
      fix: `run npm init first, or leave out --package-json to write ${CONFIG_FILE}`,
    });
  }
  // A config further up would be shadowed by this one: say so, it is probably not what was meant.
  const parent = findProjectConfig(join(dir, ".."));

  const written: ProjectConfigFile = { ...CONFIG_DEFAULTS };
  delete (written as Partial<ProjectConfigFile>).runtimeImport; // for unusual layouts only
  if (options.store !== undefined) written.store = options.store;
  // The same checks a command applies when it reads the config.
  const config = validateConfig(
    written,
    options.packageJson ? packageFile : configFile,
    options.packageJson ? `/${PACKAGE_KEY}` : "",
  );

  const created: string[] = [];
  if (options.packageJson) {
    const text = readFileSync(packageFile, "utf8");
    const pkg = JSON.parse(text) as Record<string, unknown>;
    pkg[PACKAGE_KEY] = written;
    writeFileSync(packageFile, JSON.stringify(pkg, null, detectIndent(text)) + "\n");
    created.push(`package.json ("${PACKAGE_KEY}" key)`);
  } else {
    writeFileSync(configFile, JSON.stringify(written, null, 2) + "\n", { flag: "wx" });
    created.push(CONFIG_FILE);
  }
  if (!existsSync(config.tsconfig)) {
    writeFileSync(config.tsconfig, JSON.stringify(STARTER_TSCONFIG, null, 2) + "\n", { flag: "wx" });
    created.push(relative(dir, config.tsconfig));
  }
  for (const folder of [config.schemas, config.generated, config.fixtures]) {
    if (existsSync(folder)) continue;
    mkdirSync(folder, { recursive: true });
    created.push(`${relative(dir, folder)}/`);
  }

  out.result({
    ok: true,
    config: options.packageJson ? packageFile : configFile,
    created,
    settings: written,
    ...(parent ? { shadows: parent.file } : {}),
  });
  for (const file of created) out.line(`${colors.green("created")} ${file}`);
  if (parent) out.warn(`this config takes precedence over ${parent.file} for commands run here`);
  out.line(`${colors.green("✔")} statebag is set up. Next:`);
  // The starter tsconfig names Node's types: without @types/node every tsc run fails on it.
  if (created.includes(relative(dir, config.tsconfig)) && !resolvable("@types/node/package.json", dir)) {
    out.line(`  0. npm i -D @types/node                  ${colors.dim("# tsconfig.json uses Node's types")}`);
  }
  out.line(
    `  1. write a state type in ${relative(dir, config.root) || "src/"} (README: "Walkthrough: add a provider type")`,
  );
  out.line(
    `  2. npx statebag gen --scaffold-fixtures   ${colors.dim(`# schemas, ${relative(dir, config.generated)}/, starting fixtures`)}`,
  );
  out.line(`  3. npx statebag gen --check               ${colors.dim("# in CI")}`);
  return EXIT.ok;
}

function resolvable(id: string, dir: string): boolean {
  try {
    createRequire(join(dir, "package.json")).resolve(id);
    return true;
  } catch {
    return false;
  }
}

function packageHasKey(file: string): boolean {
  if (!existsSync(file)) return false;
  try {
    const pkg = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return typeof pkg === "object" && pkg !== null && Object.hasOwn(pkg, PACKAGE_KEY);
  } catch {
    throw new CliError(EXIT.usage, "package.json is not valid JSON", {
      where: file,
      fix: "fix its syntax, then run init again",
    });
  }
}

/** Keeps package.json's indentation (two spaces when it cannot tell). */
function detectIndent(text: string): string | number {
  const match = /^[{[]\r?\n([ \t]+)/.exec(text);
  return match ? match[1] : 2;
}
