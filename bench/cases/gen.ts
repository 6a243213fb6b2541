/**
 * gen.cold, gen.noop: `npm run gen` as a user runs it (a fresh process each time), against
 * `tsc --noEmit` on the same project, the check every TypeScript project already pays for.
 *
 *   gen.cold  the whole pipeline: scan, schemas (TypeScript type checker), validators (ajv), compare,
 *             compatibility check
 *   gen.noop  nothing changed since the last run: the no-op cache answers
 *
 * Runs on a temporary copy of this repository's src/, schemas/ and test/fixtures/ (the generator's
 * own project; the compatibility check that `npm run gen` runs reads the fixtures),
 * with its own node_modules links and cache, so the repository is never touched. `--check` is used
 * throughout: the pipeline runs in full but writes nothing.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { median, result, type BenchContext, type CaseOutcome } from "../harness.js";

function project(root: string): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-gen-"));
  // The library's own sources. The CLI and the toolchain seam (src/internal/, which imports the
  // CLI's toolchain loader) are not part of what the generator scans or tsc checks here.
  const left = [join(root, "src", "cli"), join(root, "src", "internal")];
  cpSync(join(root, "src"), join(dir, "src"), { recursive: true, filter: (p) => !left.some((l) => p.startsWith(l)) });
  cpSync(join(root, "schemas"), join(dir, "schemas"), { recursive: true });
  // Golden fixtures: `npm run gen` runs the compatibility check, which reads them.
  cpSync(join(root, "test", "fixtures"), join(dir, "test", "fixtures"), { recursive: true });
  cpSync(join(root, "package.json"), join(dir, "package.json"));
  const tsconfig = readTsconfig(root);
  tsconfig.include = ["src"];
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2));
  // Packages resolve through links; the generator's cache lands in this copy's own node_modules/.cache.
  mkdirSync(join(dir, "node_modules"));
  for (const name of readdirSync(join(root, "node_modules"))) {
    if (name === ".cache") continue;
    symlinkSync(join(root, "node_modules", name), join(dir, "node_modules", name));
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function readTsconfig(root: string): Record<string, unknown> {
  // tsconfig.json is plain JSON in this repository.
  return JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")) as Record<string, unknown>;
}

/** Runs a command to completion; returns wall milliseconds. Fails loudly: a broken run is no measurement. */
function timed(label: string, args: string[], cwd: string): number {
  const start = performance.now();
  const run = spawnSync(process.execPath, args, { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
  const ms = performance.now() - start;
  if (run.status !== 0) throw new Error(`${label} failed (exit ${run.status}):\n${run.stdout}\n${run.stderr}`);
  return ms;
}

export async function genCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const { dir, cleanup } = project(ctx.root);
  const tsx = join(ctx.root, "node_modules/tsx/dist/cli.mjs");
  const tsc = join(ctx.root, "node_modules/typescript/bin/tsc");
  const gen = join(ctx.root, "generator/cli.ts");
  try {
    const cold: number[] = [];
    const noop: number[] = [];
    const base: number[] = [];
    // Fills the no-op cache (and proves the copy is current).
    timed("gen (warm-up)", [tsx, gen], dir);
    const samples = Math.max(1, ctx.slowSamples);
    for (let i = 0; i < samples; i++) {
      ctx.log(`gen.cold / gen.noop / tsc --noEmit (sample ${i + 1} of ${samples})`);
      cold.push(timed("gen --check --no-cache", [tsx, gen, "--check", "--no-cache"], dir));
      base.push(timed("tsc --noEmit", [tsc, "--noEmit", "-p", "tsconfig.json"], dir));
      noop.push(timed("gen --check", [tsx, gen, "--check"], dir));
    }
    const baseline = median(base);
    return [
      result("gen.cold", "tsc --noEmit", { ours_ms: median(cold), baseline_ms: baseline }),
      result("gen.noop", "tsc --noEmit", { ours_ms: median(noop), baseline_ms: baseline }),
    ];
  } finally {
    cleanup();
  }
}
