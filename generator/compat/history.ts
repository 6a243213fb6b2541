/**
 * The on-disk layout the compatibility check reads, and the two files it owns:
 *
 * - `schemas/<Family>/<$type>.schema.json`: the current schema of each type (with `x-statebag`).
 * - `schemas/history/<Family>/<$type>/v<N>.schema.json`: frozen versions, written once.
 * - `schemas/history/frozen.lock.json`: sha256 of every frozen file, so an edit is caught.
 * - `schemas/history/retired.json`: `$type` names that left the registry (removed or renamed);
 *   reserved forever, since stored sessions may still hold values tagged with them.
 */
import fs from "node:fs";
import path from "node:path";
import { hash as sha256 } from "../hash.js";
import { type JsonSchema, canonicalJson, isObject } from "./schema.js";

export const HISTORY_DIR = "history";
export const LOCK_FILE = "frozen.lock.json";
export const RETIRED_FILE = "retired.json";
const FROZEN_FILE = /^v([1-9][0-9]*)\.schema\.json$/;

export interface CurrentSchema {
  family: string;
  $type: string;
  version: number;
  schema: JsonSchema;
  /** Absolute path. */
  file: string;
  /** `x-statebag.formerNames`, when the generator writes it. */
  formerNames: string[];
}

export interface FrozenSchema {
  family: string;
  $type: string;
  version: number;
  /** Absolute path. */
  file: string;
  /** Path relative to `schemas/history`, forward slashes: the lock key. */
  key: string;
  /** The raw text (hashed for the lock). */
  text: string;
  /** Parsed schema, absent when the file is not valid JSON. */
  schema?: JsonSchema;
}

export interface ReadProblem {
  file: string;
  message: string;
}

function listDirs(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort();
}

/** Current schemas: every `schemas/<Family>/*.schema.json` carrying `x-statebag.$type` (others, like family unions, are skipped). */
export function readCurrentSchemas(schemasDir: string): { schemas: CurrentSchema[]; problems: ReadProblem[] } {
  const schemas: CurrentSchema[] = [];
  const problems: ReadProblem[] = [];
  for (const familyDir of listDirs(schemasDir)) {
    if (familyDir === HISTORY_DIR) continue;
    for (const name of listFiles(path.join(schemasDir, familyDir))) {
      if (!name.endsWith(".schema.json")) continue;
      const file = path.join(schemasDir, familyDir, name);
      let schema: unknown;
      try {
        schema = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch (error) {
        problems.push({ file, message: `not valid JSON: ${(error as Error).message}` });
        continue;
      }
      if (!isObject(schema)) continue;
      const meta = isObject(schema["x-statebag"]) ? schema["x-statebag"] : undefined;
      if (!meta || typeof meta.$type !== "string") continue;
      const version = typeof meta.version === "number" ? meta.version : versionFromSchema(schema);
      const formerNames = Array.isArray(meta.formerNames)
        ? meta.formerNames.filter((n): n is string => typeof n === "string")
        : [];
      schemas.push({
        family: typeof meta.family === "string" ? meta.family : familyDir,
        $type: meta.$type,
        version,
        schema: schema as JsonSchema,
        file,
        formerNames,
      });
    }
  }
  return { schemas, problems };
}

function versionFromSchema(schema: Record<string, unknown>): number {
  const props = isObject(schema.properties) ? schema.properties : {};
  const version = isObject(props.$version) ? props.$version.const : undefined;
  return typeof version === "number" ? version : 1;
}

/** Frozen versions: `schemas/history/<Family>/<$type>/v<N>.schema.json`. */
export function readFrozenSchemas(schemasDir: string): FrozenSchema[] {
  const historyDir = path.join(schemasDir, HISTORY_DIR);
  const result: FrozenSchema[] = [];
  for (const family of listDirs(historyDir)) {
    for (const type of listDirs(path.join(historyDir, family))) {
      for (const name of listFiles(path.join(historyDir, family, type))) {
        const match = FROZEN_FILE.exec(name);
        if (!match) continue;
        const file = path.join(historyDir, family, type, name);
        const text = fs.readFileSync(file, "utf8");
        let schema: JsonSchema | undefined;
        try {
          const parsed: unknown = JSON.parse(text);
          if (typeof parsed === "boolean" || isObject(parsed)) schema = parsed as JsonSchema;
        } catch {
          schema = undefined;
        }
        result.push({
          family,
          $type: type,
          version: Number(match[1]),
          file,
          key: `${family}/${type}/${name}`,
          text,
          schema,
        });
      }
    }
  }
  return result.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) || a.version - b.version);
}

/** The path a frozen version is written to. */
export function frozenPath(schemasDir: string, family: string, $type: string, version: number): string {
  return path.join(schemasDir, HISTORY_DIR, family, $type, `v${version}.schema.json`);
}

// ---------------------------------------------------------------------------------------------
// frozen.lock.json

export interface FrozenLock {
  version: 1;
  /** Lock key (`<Family>/<$type>/v<N>.schema.json`) -> `sha256:<hex>` of the file's canonical JSON. */
  files: Record<string, string>;
  /**
   * Lock key -> the name `versions.ts` gives that version (`NotesState_v1`). Recorded when the
   * version is first generated and never reassigned, so a rename or a new type can not move a
   * name that migrations already import.
   */
  names?: Record<string, string>;
}

/**
 * The hash of a frozen file: sha256 of its canonical JSON (keys sorted, no whitespace), so
 * reformatting or line endings do not count as an edit and any change of content does.
 * A file that is not JSON is hashed as raw text.
 */
export function frozenHash(text: string): string {
  try {
    return "sha256:" + sha256(canonicalJson(JSON.parse(text)));
  } catch {
    return "sha256-raw:" + sha256(text);
  }
}

export function readLock(schemasDir: string): FrozenLock {
  const file = path.join(schemasDir, HISTORY_DIR, LOCK_FILE);
  if (!fs.existsSync(file)) return { version: 1, files: {} };
  const parsed: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
  const files = isObject(parsed) && isObject(parsed.files) ? parsed.files : {};
  const names = isObject(parsed) && isObject(parsed.names) ? parsed.names : {};
  const strings = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => typeof e[1] === "string"));
  return { version: 1, files: strings(files), names: strings(names) };
}

export function writeLock(schemasDir: string, lock: FrozenLock): void {
  const file = path.join(schemasDir, HISTORY_DIR, LOCK_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sorted = (o: Record<string, string>) =>
    Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  const names = lock.names ?? {};
  const body = {
    $comment:
      "Written by statebag: sha256 (of canonical JSON) of every frozen schema, and the name src/generated/versions.ts gives each version. Frozen schemas describe sessions already stored: never edit one; bump the type's version and add a migration instead.",
    version: 1,
    files: sorted(lock.files),
    ...(Object.keys(names).length > 0 ? { names: sorted(names) } : {}),
  };
  fs.writeFileSync(file, JSON.stringify(body, null, 2) + "\n");
}

/**
 * Adds lock entries for frozen files the lock does not list yet (never changes an existing
 * entry). The generator calls this right after writing new frozen files. Returns the added keys.
 */
export function recordFrozen(schemasDir: string): string[] {
  const lock = readLock(schemasDir);
  const added: string[] = [];
  for (const frozen of readFrozenSchemas(schemasDir)) {
    if (frozen.key in lock.files || frozen.schema === undefined) continue;
    lock.files[frozen.key] = frozenHash(frozen.text);
    added.push(frozen.key);
  }
  if (added.length > 0) writeLock(schemasDir, lock);
  return added;
}

/**
 * Records the version type name of each frozen file that has none yet (`names`: lock key -> name);
 * a recorded name is never changed. Returns the keys it added.
 */
export function recordNames(schemasDir: string, names: Readonly<Record<string, string>>): string[] {
  const lock = readLock(schemasDir);
  const recorded = (lock.names ??= {});
  const frozen = new Set(readFrozenSchemas(schemasDir).map((f) => f.key));
  const added = Object.keys(names).filter((key) => frozen.has(key) && recorded[key] === undefined);
  for (const key of added) recorded[key] = names[key]!;
  if (added.length > 0) writeLock(schemasDir, lock);
  return added;
}

// ---------------------------------------------------------------------------------------------
// retired.json

export interface RetiredType {
  $type: string;
  family?: string;
  /** The last version that was ever written under this name. */
  lastVersion?: number;
  /** Set when the type lives on under another name (its migrations read the old values). */
  renamedTo?: string;
  reason?: string;
}

export function readRetired(schemasDir: string): RetiredType[] {
  const file = path.join(schemasDir, HISTORY_DIR, RETIRED_FILE);
  if (!fs.existsSync(file)) return [];
  const parsed: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
  const list = isObject(parsed) && Array.isArray(parsed.retired) ? parsed.retired : Array.isArray(parsed) ? parsed : [];
  return list
    .map((e: unknown): RetiredType | undefined => {
      if (typeof e === "string") return { $type: e };
      if (!isObject(e) || typeof e.$type !== "string") return undefined;
      const entry: RetiredType = { $type: e.$type };
      if (typeof e.family === "string") entry.family = e.family;
      if (typeof e.lastVersion === "number") entry.lastVersion = e.lastVersion;
      if (typeof e.renamedTo === "string") entry.renamedTo = e.renamedTo;
      if (typeof e.reason === "string") entry.reason = e.reason;
      return entry;
    })
    .filter((e): e is RetiredType => e !== undefined);
}

export function writeRetired(schemasDir: string, retired: readonly RetiredType[]): void {
  const file = path.join(schemasDir, HISTORY_DIR, RETIRED_FILE);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const sorted = [...retired].sort((a, b) => (a.$type < b.$type ? -1 : a.$type > b.$type ? 1 : 0));
  const body = {
    $comment:
      "Written by statebag: $type names that left the registry (removed or renamed). Stored sessions may still hold values tagged with them, so a name listed here can never be used again.",
    version: 1,
    retired: sorted,
  };
  fs.writeFileSync(file, JSON.stringify(body, null, 2) + "\n");
}

/**
 * Records a removed (or renamed) type as retired, so the check accepts that it is gone and
 * refuses any later reuse of its name. `family`/`lastVersion` default to what its history holds.
 */
export function retireType(schemasDir: string, entry: RetiredType): RetiredType {
  const retired = readRetired(schemasDir);
  const history = readFrozenSchemas(schemasDir).filter((f) => f.$type === entry.$type);
  const full: RetiredType = { ...entry };
  if (full.family === undefined && history.length > 0) full.family = history[0].family;
  if (full.lastVersion === undefined && history.length > 0)
    full.lastVersion = Math.max(...history.map((h) => h.version));
  const rest = retired.filter((r) => r.$type !== entry.$type);
  writeRetired(schemasDir, [...rest, full]);
  return full;
}

/**
 * Drops a frozen version and its lock entry, for a version that was never released (no stored
 * session can hold it): the next `npm run gen` freezes the current schema again. Refuses to
 * drop anything but the type's latest frozen version. Returns whether a file was removed.
 */
export function unfreeze(schemasDir: string, family: string, $type: string, version: number): boolean {
  const versions = readFrozenSchemas(schemasDir)
    .filter((f) => f.family === family && f.$type === $type)
    .map((f) => f.version);
  if (versions.length > 0 && version < Math.max(...versions)) {
    throw new Error(
      `${$type} v${version} is not the latest frozen version (v${Math.max(...versions)}): older versions can not be unfrozen`,
    );
  }
  const file = frozenPath(schemasDir, family, $type, version);
  const existed = fs.existsSync(file);
  if (existed) fs.rmSync(file);
  const lock = readLock(schemasDir);
  const key = `${family}/${$type}/v${version}.schema.json`;
  if (key in lock.files) {
    delete lock.files[key];
    writeLock(schemasDir, lock);
  }
  return existed;
}
