/**
 * Fresh apps outside this repository, as users make them: the packed packages (built into a staging
 * folder, never this repository's dist/ or kit/dist), and commands run as new processes with one
 * shared download cache, so installs are offline after the first run.
 */
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
/** One download cache for every run and both package managers (kept between runs: installs are offline after the first). */
export const CACHE = join(REPO, "node_modules/.cache/statebag-e2e");

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * How this machine reaches the registry (a proxy, a corporate CA): passed to every command, or a
 * fresh app's first install (an empty cache) fails on TLS or hangs until the timeout.
 */
function networkEnv(): Record<string, string> {
  const keep =
    /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|HTTPS?_PROXY|NO_PROXY|npm_config_(cafile|ca|registry|strict_ssl|proxy|https_proxy|noproxy))$/i;
  return Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => keep.test(e[0]) && e[1] !== undefined),
  );
}

/** Runs a command (a new process) with this Node and the app's bin folder first on PATH. */
export function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const PATH = [dirname(process.execPath), join(cwd, "node_modules/.bin"), process.env.PATH].join(delimiter);
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd,
        env: {
          ...networkEnv(),
          PATH,
          HOME: process.env.HOME ?? tmpdir(),
          NO_COLOR: "1",
          npm_config_update_notifier: "false",
          npm_config_cache: join(CACHE, "npm"),
          npm_config_prefer_offline: "true",
          npm_config_audit: "false",
          npm_config_fund: "false",
          ...env,
        },
        maxBuffer: 16 * 1024 * 1024,
        timeout: 300_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Fails with everything the command printed, so a broken step explains itself. */
export function ok(r: Run, what: string): Run {
  if (r.code !== 0) throw new Error(`${what} exited ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  return r;
}

export function writeIn(cwd: string, file: string, content: string | object): void {
  const path = join(cwd, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content, null, 2) + "\n");
}

const pack = async (dir: string, destination: string) =>
  join(
    destination,
    (
      JSON.parse(
        ok(
          await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", destination], dir),
          `npm pack ${dir}`,
        ).stdout,
      ) as { filename: string }[]
    )[0].filename,
  );

/** Builds statebag into `work`/staging and packs it; returns the tarball and the staging dist/. */
export async function packStatebag(work: string): Promise<{ tarball: string; dist: string }> {
  const staging = join(work, "staging");
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { files: string[] };
  mkdirSync(staging, { recursive: true });
  for (const entry of pkg.files)
    if (!entry.startsWith("!") && entry !== "dist" && existsSync(join(REPO, entry)))
      cpSync(join(REPO, entry), join(staging, entry), { recursive: true });
  cpSync(join(REPO, "package.json"), join(staging, "package.json"));
  ok(
    await run(
      process.execPath,
      [
        join(REPO, "node_modules/typescript/bin/tsc"),
        "-p",
        join(REPO, "tsconfig.build.json"),
        "--outDir",
        join(staging, "dist"),
      ],
      REPO,
    ),
    "build",
  );
  // The build's second step: the studio's page script.
  ok(
    await run(process.execPath, [join(REPO, "scripts/build-studio.mjs"), join(staging, "dist")], REPO),
    "build (studio page script)",
  );
  return { tarball: await pack(staging, work), dist: join(staging, "dist") };
}

/** Packs statebag and statebag-kit (built from statebag's staging dist/). */
export async function packBoth(work: string): Promise<{ statebag: string; kit: string }> {
  mkdirSync(CACHE, { recursive: true });
  const { tarball, dist } = await packStatebag(work);
  // build.mjs loads the built generator, which reaches the runtime and its dependencies (ajv,
  // ajv-formats): the staging copy gets this repository's node_modules, after it was packed.
  symlinkSync(join(REPO, "node_modules"), join(work, "staging", "node_modules"), "dir");
  const kit = join(work, "staging-kit");
  mkdirSync(kit);
  for (const f of ["package.json", "index.js", "index.d.ts", "compat.js", "compat.d.ts", "README.md"])
    cpSync(join(REPO, "kit", f), join(kit, f));
  ok(await run(process.execPath, [join(REPO, "kit/build.mjs"), dist, kit], REPO), "build:kit");
  return { statebag: tarball, kit: await pack(kit, work) };
}

/**
 * A copy of this checkout as a maintainer has it (sources, build configs, kit/, package files; no
 * dist/ nor kit/dist), with this repository's node_modules linked in: packing from it runs the
 * packages' own scripts without writing into this repository.
 */
export function stageCheckout(work: string): string {
  const checkout = join(work, "checkout");
  mkdirSync(checkout, { recursive: true });
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { files: string[] };
  const sources = ["package.json", "tsconfig.json", "tsconfig.build.json", "src", "generator", "scripts"];
  for (const entry of [...sources, ...pkg.files.filter((f) => !f.startsWith("!") && f !== "dist")])
    if (existsSync(join(REPO, entry))) cpSync(join(REPO, entry), join(checkout, entry), { recursive: true });
  cpSync(join(REPO, "kit"), join(checkout, "kit"), {
    recursive: true,
    filter: (src) => !/[\\/]kit[\\/](dist|node_modules)$/.test(src) && !src.endsWith(".tgz"),
  });
  symlinkSync(join(REPO, "node_modules"), join(checkout, "node_modules"), "dir");
  return checkout;
}

/**
 * `npm pack` in the kit's folder of a checkout, the plain way (its own scripts run): what
 * `npm pack ./kit`, `cd kit && npm pack` and `npm publish` pack. Returns the tarball and its files.
 */
export async function packKitPlainly(
  checkout: string,
  destination: string,
): Promise<{ tarball: string; files: string[] }> {
  const r = ok(
    await run("npm", ["pack", "--json", "--pack-destination", destination], join(checkout, "kit")),
    "npm pack (statebag-kit)",
  );
  // The scripts' output comes first on stdout; npm's JSON report is the last thing printed.
  const report = JSON.parse(r.stdout.slice(r.stdout.lastIndexOf("\n[\n") + 1)) as {
    filename: string;
    files: { path: string }[];
  }[];
  return { tarball: join(destination, report[0].filename), files: report[0].files.map((f) => f.path) };
}

/** Packs statebag from a checkout whose dist/ is built (by the kit's prepack, which compiles it). */
export async function packCheckout(checkout: string, destination: string): Promise<string> {
  return pack(checkout, destination);
}

/**
 * The pnpm CLI the tests use, installed once into the shared cache (not a devDependency: pnpm 12
 * lists platform binaries the registry does not have, which breaks `npm ci` of this repository).
 */
export const PNPM_VERSION = "12.21.0";
export async function ensurePnpm(): Promise<string> {
  const prefix = join(CACHE, `pnpm-${PNPM_VERSION}`);
  const bin = join(prefix, "node_modules/.bin/pnpm");
  if (!existsSync(bin)) {
    mkdirSync(prefix, { recursive: true });
    ok(
      await run("npm", ["install", "--no-save", "--prefix", prefix, `pnpm@${PNPM_VERSION}`], prefix),
      "installing pnpm",
    );
  }
  return bin;
}
