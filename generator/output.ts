/**
 * The generated files against the disk: which are stale, missing or extra (generated earlier, no
 * longer produced), and writing the changed ones and removing the extra ones. Planning writes
 * nothing, so `--check` and a refused run share it with a real one.
 */
import fs from "node:fs";
import path from "node:path";
import type { CacheEntry } from "./cache.js";
import { fromCwd, type Config } from "./config.js";
import { GENERATED_HEADER } from "./emit.js";
import { compareStrings } from "./errors.js";
import { readIfExists, walkFiles, writeFileCreatingDir } from "./files.js";

export interface GeneratedFile {
  /** Relative to `cwd`, forward slashes. */
  path: string;
  content: string;
  /** Frozen history: written only when missing, never compared or overwritten. */
  createOnly: boolean;
}

/** Every generated file, and which differ from the disk (paths relative to cwd). */
export interface OutputPlan {
  files: GeneratedFile[];
  /** Files whose content differs from what is generated. */
  stale: string[];
  /** Files that do not exist yet. */
  missing: string[];
  /** Generated files on disk that would no longer be generated. */
  extra: string[];
}

/** What writing would change: every file with its content, and which are stale, missing or extra. Writes nothing. */
export function planOutputs(cfg: Config, entry: CacheEntry, outputs: Readonly<Record<string, string>>): OutputPlan {
  const createOnly = new Set(entry.createOnly);
  const stale: string[] = [];
  const missing: string[] = [];
  const files: GeneratedFile[] = [];
  const expected = new Set<string>();
  for (const rel of Object.keys(outputs).sort(compareStrings)) {
    const abs = path.join(cfg.root, rel);
    const content = outputs[rel]!;
    expected.add(abs);
    files.push({ path: fromCwd(cfg, abs), content, createOnly: createOnly.has(rel) });
    const current = readIfExists(abs);
    if (current === undefined) missing.push(fromCwd(cfg, abs));
    else if (current !== content && !createOnly.has(rel)) stale.push(fromCwd(cfg, abs));
  }
  const extra = managedFiles(cfg)
    .filter((f) => !expected.has(f))
    .sort(compareStrings)
    .map((f) => fromCwd(cfg, f));
  return { files, stale, missing, extra };
}

/** True when the disk holds exactly the generated files. */
export function isCurrent(plan: Pick<OutputPlan, "stale" | "missing" | "extra">): boolean {
  return plan.stale.length === 0 && plan.missing.length === 0 && plan.extra.length === 0;
}

/** Writes the stale and missing files of a plan and deletes its extra ones. */
export function writeOutputs(cfg: Config, plan: OutputPlan): { written: string[]; deleted: string[] } {
  const changed = new Set([...plan.stale, ...plan.missing]);
  const written: string[] = [];
  for (const file of plan.files) {
    if (!changed.has(file.path)) continue;
    writeFileCreatingDir(path.resolve(cfg.cwd, file.path), file.content);
    written.push(file.path);
  }
  for (const file of plan.extra) fs.rmSync(path.resolve(cfg.cwd, file));
  return { written, deleted: [...plan.extra] };
}

/** Generated files currently on disk: schema files outside history/, and modules carrying our header. */
function managedFiles(cfg: Config): string[] {
  const history = path.join(cfg.schemasDir, "history");
  const schemas = walkFiles(cfg.schemasDir, {
    enter: (dir) => dir !== history,
    keep: (e) => e.isFile() && e.name.endsWith(".schema.json"),
  });
  const modules = walkFiles(cfg.outDir, { enter: () => false, keep: (e) => /\.[mc]?ts$/.test(e.name) }).filter((file) =>
    (readIfExists(file)?.slice(0, 200) ?? "").split("\n").slice(0, 2).includes(GENERATED_HEADER),
  );
  return [...schemas, ...modules];
}
