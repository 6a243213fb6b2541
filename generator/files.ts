/**
 * The file tree, read and written the same way everywhere: one directory walker (the cache's
 * source scan and tree hashes, and the generated files found on disk, all use it), a read that
 * treats a missing file as absent, and the two ways the generator writes a file.
 */
import fs from "node:fs";
import path from "node:path";
import { compareStrings } from "./errors.js";

export interface WalkOptions {
  /** Whether to descend into a directory. Default: every one. */
  enter?: (full: string, name: string) => boolean;
  /** Whether to list an entry that is not a directory. Default: regular files. */
  keep?: (entry: fs.Dirent) => boolean;
}

/** Paths under `dir` (recursively) that `keep` accepts, sorted; none when `dir` cannot be read. */
export function walkFiles(dir: string, { enter = () => true, keep = (e) => e.isFile() }: WalkOptions = {}): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) {
        if (enter(full, entry.name)) walk(full);
      } else if (keep(entry)) found.push(full);
    }
  };
  walk(dir);
  return found.sort(compareStrings);
}

export function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/** Writes `file`, creating its directory. */
export function writeFileCreatingDir(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Writes `file` through a uniquely named temporary file: parallel runs (test workers) never interleave one file. */
export function writeFileAtomic(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileCreatingDir(tmp, content);
  fs.renameSync(tmp, file);
}
