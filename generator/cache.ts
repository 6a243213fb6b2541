/**
 * Makes a no-op `npm run gen` cheap: outputs are cached under a key made of the content hashes of
 * every input file, the generator's own code and toolchain versions, and the options. A hit needs
 * only file reads and hashes: ts-morph, TypeScript and ajv are never loaded.
 *
 * Inputs are over-approximated on purpose (every .ts file under the source roots, plus every
 * non-library file the compiler read last time), so a hit is never stale.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { compilerVersions } from "./compilers.js";
import { compareStrings, type GenError } from "./errors.js";
import { walkFiles, writeFileAtomic } from "./files.js";
import { hash } from "./hash.js";
import type { MigrationSummary } from "./migrations.js";
import type { TypeSummary } from "./summary.js";

export interface SourceFile {
  path: string;
  text: string;
}

const SKIP_DIRS = new Set(["node_modules", ".git", "dist", "coverage", ".statebag-cache"]);

/** Every .ts/.tsx/.mts/.cts file (no .d.ts) under `dirs`, and every tsconfig*.json, sorted by path. */
export function readSources(dirs: readonly string[], excludeDirs: readonly string[]): SourceFile[] {
  const excluded = new Set(excludeDirs.map((d) => path.resolve(d)));
  const isSource = (name: string) =>
    /\.(ts|tsx|mts|cts)$/.test(name) ? !/\.d\.[mc]?ts$/.test(name) : /^tsconfig.*\.json$/.test(name);
  return dirs
    .flatMap((d) =>
      walkFiles(path.resolve(d), {
        enter: (full, name) => !SKIP_DIRS.has(name) && !excluded.has(full),
        keep: (e) => e.isFile() && isSource(e.name),
      }),
    )
    .sort(compareStrings)
    .map((file) => ({ path: file, text: fs.readFileSync(file, "utf8") }));
}

let fingerprint: string | undefined;

/**
 * The generator's own code (compatibility check included), the runtime code it runs (migrations,
 * formats) and the versions of the tools whose output it embeds: the compilers it actually loads
 * (typescript-json-schema's TypeScript and ts-morph's bundled one), never the app's `typescript`.
 */
export function generatorFingerprint(): string {
  return (fingerprint ??= hash(generatorFingerprintInputs().join("\n")));
}

/** What the fingerprint hashes: file names with content hashes, then package names with versions. @internal */
export function generatorFingerprintInputs(): string[] {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const isCode = (e: fs.Dirent) => e.isFile() && /\.(ts|js)$/.test(e.name) && !e.name.endsWith(".d.ts");
  const parts: string[] = [];
  for (const dir of [here, runtimeDir(here)])
    for (const file of walkFiles(dir, { keep: isCode }))
      parts.push(path.relative(here, file), hash(fs.readFileSync(file)));
  const require = createRequire(import.meta.url);
  for (const pkg of ["ajv", "typescript-json-schema", "ts-morph"]) {
    try {
      parts.push(pkg, (require(`${pkg}/package.json`) as { version: string }).version);
    } catch {
      parts.push(pkg, "?");
    }
  }
  const compilers = compilerVersions();
  parts.push("typescript (typescript-json-schema)", compilers.typescript, "typescript (ts-morph)", compilers.tsMorph);
  return parts;
}

/**
 * The runtime the generator runs: this repository's src/runtime next to generator/, or in
 * statebag-kit the installed statebag's (dist/src/runtime, found through its package.json).
 */
function runtimeDir(here: string): string {
  const sources = path.join(here, "..", "src", "runtime");
  if (fs.existsSync(sources)) return sources;
  try {
    return path.join(
      path.dirname(createRequire(import.meta.url).resolve("statebag/package.json")),
      "dist",
      "src",
      "runtime",
    );
  } catch {
    return sources;
  }
}

/** One hash of every file under `dir`: names and contents. */
export function treeHash(dir: string): string {
  return hash(
    walkFiles(dir)
      .map((f) => `${path.relative(dir, f)}\t${hash(fs.readFileSync(f))}`)
      .join("\n"),
  );
}

export interface CacheEntry {
  key: string;
  /** Files outside the walked roots that the compiler read (imports), with their hashes. */
  dependencies: { path: string; hash: string }[];
  /** Generated files by path relative to the project root. */
  outputs: Record<string, string>;
  /** Outputs written only when missing (frozen schema history). */
  createOnly: string[];
  types: TypeSummary[];
  /** Declared migration steps (the compatibility check runs on every run, cached or not). */
  migrations: MigrationSummary[];
  /** Warnings of the build (a format the runtime does not know), repeated on a cached run. */
  warnings?: GenError[];
}

export function cacheDir(root: string): string {
  return fs.existsSync(path.join(root, "node_modules"))
    ? path.join(root, "node_modules", ".cache", "statebag")
    : path.join(root, ".statebag-cache");
}

function cacheFile(root: string, name = "gen.json"): string {
  return path.join(cacheDir(root), name);
}

export function cacheKey(sources: readonly SourceFile[], root: string, options: unknown): string {
  const lines = [generatorFingerprint(), JSON.stringify(options)];
  for (const source of sources) lines.push(`${path.relative(root, source.path)}\t${hash(source.text)}`);
  return hash(lines.join("\n"));
}

/** The cached outputs when `key` matches and no recorded dependency changed. */
export function readCache(root: string, key: string): CacheEntry | undefined {
  let entry: CacheEntry;
  try {
    entry = JSON.parse(fs.readFileSync(cacheFile(root), "utf8")) as CacheEntry;
  } catch {
    return undefined;
  }
  if (entry.key !== key) return undefined;
  for (const dep of entry.dependencies) {
    try {
      if (hash(fs.readFileSync(dep.path)) !== dep.hash) return undefined;
    } catch {
      return undefined;
    }
  }
  return entry;
}

export function writeCache(root: string, entry: CacheEntry): void {
  writeJson(cacheFile(root), entry);
}

function writeJson(file: string, value: unknown): void {
  try {
    writeFileAtomic(file, JSON.stringify(value));
  } catch {
    // A cache that cannot be written only costs the next run its speed.
  }
}

/**
 * A compatibility check (and stored-data check) that found nothing and recorded nothing, under a
 * key of everything it read: with it a no-op run loads no ajv and none of the project's modules.
 */
export interface CompatVerdict {
  key: string;
  compared: number;
  loaded: string[];
}

export function readCompatVerdict(root: string, key: string): CompatVerdict | undefined {
  try {
    const verdict = JSON.parse(fs.readFileSync(cacheFile(root, "compat.json"), "utf8")) as CompatVerdict;
    return verdict.key === key ? verdict : undefined;
  } catch {
    return undefined;
  }
}

export function writeCompatVerdict(root: string, verdict: CompatVerdict): void {
  writeJson(cacheFile(root, "compat.json"), verdict);
}

export function dependencyHashes(files: readonly string[]): CacheEntry["dependencies"] {
  return [...files].sort(compareStrings).map((p) => ({ path: p, hash: hash(fs.readFileSync(p)) }));
}
