/**
 * The compilers the generator actually runs: typescript-json-schema's `typescript` (the schemas)
 * and the TypeScript bundled in ts-morph (the scan). Both are resolved from the generator's own
 * location (statebag-kit's dependencies, wherever npm or pnpm put them), never from the app, whose
 * `typescript` may be another major (TypeScript 7 has no compiler API at all).
 *
 * Only package.json files and the head of ts-morph's bundle are read: a cache hit loads no compiler.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { ToolchainMissingError } from "./runtime.js";

export interface CompilerVersions {
  /** `typescript` as typescript-json-schema resolves it. */
  typescript: string;
  /** The TypeScript inside ts-morph (@ts-morph/common's bundle). */
  tsMorph: string;
}

/** Where a package's package.json is, as seen from `from` (a file), or undefined. */
function packageFile(from: string, name: string): string | undefined {
  try {
    return createRequire(from).resolve(`${name}/package.json`);
  } catch {
    return undefined;
  }
}

function versionOf(file: string | undefined): string {
  if (file === undefined) return "?";
  try {
    return (JSON.parse(fs.readFileSync(file, "utf8")) as { version?: string }).version ?? "?";
  } catch {
    return "?";
  }
}

/** The `version = "x.y.z"` declared near the top of ts-morph's bundled typescript.js. */
function bundledVersion(commonPackage: string | undefined): string {
  if (commonPackage === undefined) return "?";
  let fd: number | undefined;
  try {
    fd = fs.openSync(path.join(path.dirname(commonPackage), "dist", "typescript.js"), "r");
    const head = Buffer.alloc(512 * 1024);
    const text = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0)).toString("utf8");
    return /\bversion = "(\d+\.\d+\.[^"]+)"/.exec(text)?.[1] ?? "?";
  } catch {
    return "?";
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

let cached: CompilerVersions | undefined;

/** The versions of the compilers the generator loads (from `from`: the generator's own file by default). */
export function compilerVersions(from: string = import.meta.url): CompilerVersions {
  if (cached && from === import.meta.url) return cached;
  const tjs = packageFile(from, "typescript-json-schema");
  const morph = packageFile(from, "ts-morph");
  const versions = {
    typescript: versionOf(tjs === undefined ? undefined : packageFile(tjs, "typescript")),
    tsMorph: bundledVersion(morph === undefined ? undefined : packageFile(morph, "@ts-morph/common")),
  };
  if (from === import.meta.url) cached = versions;
  return versions;
}

const majorMinor = (v: string) => /^\d+\.\d+/.exec(v)?.[0];

/**
 * Throws a ToolchainMissingError unless the compilers found are the major.minor the kit was built
 * and tested with (an override or a broken install could hand typescript-json-schema TypeScript 7,
 * which has no compiler API, or another 5.x whose output differs).
 */
export function assertCompilers(
  expected: CompilerVersions,
  installCommand: string,
  from: string = import.meta.url,
): CompilerVersions {
  const found = compilerVersions(from);
  for (const [key, label] of [
    ["typescript", "TypeScript (typescript-json-schema's compiler)"],
    ["tsMorph", "ts-morph's bundled TypeScript"],
  ] as const) {
    if (majorMinor(found[key]) !== majorMinor(expected[key])) {
      throw new ToolchainMissingError(
        [`${label} ${majorMinor(expected[key])}`],
        "gen",
        installCommand,
        found[key] === "?" ? "none that loads" : `version ${found[key]}`,
      );
    }
  }
  return found;
}
