/**
 * Python's `FileSessionStore` (agent_framework, July 2026): one JSON snapshot per session,
 *
 * ```json
 * {"type": "session", "session_id": "...", "service_session_id": ..., "state": {...}, "version": "1.0"}
 * ```
 *
 * i.e. `AgentSession.to_dict()` plus a `"version"` that must be exactly `"1.0"` (any other is
 * refused, and the file left as it is, as the store does). The file's name encodes the store key:
 * a portable id is used as it is, anything else as `~session-<base64url(key), unpadded>`, and when
 * that would be longer than 180 characters, `~session-sha256-<hex>` (which cannot be decoded: the
 * key is then the snapshot's `session_id`). Keys are at most 128 characters. Writes go to a
 * temporary file renamed over the target, so a reader never sees half a snapshot.
 */
import { createHash, randomUUID } from "node:crypto";
import { readdir, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { InteropError, describe } from "./errors.js";
import { defineOwn, isPlainObject, type JsonRecord } from "./json-util.js";

export const PYTHON_SNAPSHOT_VERSION = "1.0";
export const PYTHON_MAX_SESSION_ID_LENGTH = 128;
const ENCODED_PREFIX = "~session-";
const MAX_ENCODED_STEM = 180;
const EXTENSION = ".json";
/** `FileSessionStore(..., serialization_format="msgpack")` writes `<stem>.msgpack` (same stems). */
export const MSGPACK_EXTENSION = ".msgpack";
export type SnapshotFormat = "json" | "msgpack";
const extensionOf = (format: SnapshotFormat) => (format === "msgpack" ? MSGPACK_EXTENSION : EXTENSION);
const WINDOWS_RESERVED = new Set([
  "CON",
  "PRN",
  "AUX",
  "NUL",
  ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`COM${n}`, `LPT${n}`]),
  "COM\u00b9",
  "COM\u00b2",
  "COM\u00b3",
  "LPT\u00b9",
  "LPT\u00b2",
  "LPT\u00b3",
]);

/** Whether a key is used as its own file name (as `_is_literal_session_file_stem_safe`). */
export function isLiteralSafeKey(key: string): boolean {
  const windowsStem = key.split(".", 1)[0].toUpperCase();
  if (key === "" || key.startsWith(".") || key.endsWith(" ") || key.endsWith(".") || WINDOWS_RESERVED.has(windowsStem))
    return false;
  return /^[A-Za-z0-9._-]+$/.test(key);
}

/** Python's `len()`: code points. */
const codePoints = (s: string) => [...s].length;

/**
 * The file stem `FileSessionStore` and `FileHistoryProvider` use for a key (`_session_file_stem`):
 * the key when it is a portable name, else `~session-<base64url>`, else `~session-sha256-<hex>`.
 */
export function sessionFileStem(key: string): string {
  if (isLiteralSafeKey(key)) return key;
  const encoded = ENCODED_PREFIX + Buffer.from(key, "utf8").toString("base64url");
  if (encoded.length <= MAX_ENCODED_STEM) return encoded;
  return `${ENCODED_PREFIX}sha256-${createHash("sha256").update(key, "utf8").digest("hex")}`;
}

/** The file name `FileSessionStore` uses for a key. Throws for an empty key or one over 128 characters. */
export function sessionFileName(key: string, format: SnapshotFormat = "json"): string {
  if (key === "" || codePoints(key) > PYTHON_MAX_SESSION_ID_LENGTH) {
    throw new InteropError(
      "python-file-store",
      "export",
      "/session_id",
      `session_id must be a non-empty string of at most ${PYTHON_MAX_SESSION_ID_LENGTH} characters (found ${codePoints(key)})`,
      "FileSessionStore refuses longer keys: shorten the session id",
    );
  }
  return sessionFileStem(key) + extensionOf(format);
}

/**
 * The key a snapshot file's name encodes: `undefined` for a hashed name (only the snapshot's own
 * `session_id` can tell) and for names that are not session snapshots (temporary, quarantined
 * `.corrupt` files and other dot files, other extensions).
 */
export function keyFromFileName(
  name: string,
  extension: string = EXTENSION,
): { key?: string; hashed: boolean } | undefined {
  if (!name.endsWith(extension) || name.startsWith(".")) return undefined;
  return keyFromFileStem(name.slice(0, -extension.length));
}

/** The key a file stem encodes (`keyFromFileName` without the extension). */
export function keyFromFileStem(stem: string): { key?: string; hashed: boolean } | undefined {
  if (stem.startsWith(".")) return undefined;
  if (stem.startsWith(`${ENCODED_PREFIX}sha256-`) && /^[0-9a-f]{64}$/.test(stem.slice(ENCODED_PREFIX.length + 7)))
    return { hashed: true };
  if (stem.startsWith(ENCODED_PREFIX)) {
    const body = stem.slice(ENCODED_PREFIX.length);
    if (!/^[A-Za-z0-9_-]*$/.test(body)) return undefined;
    const key = Buffer.from(body, "base64url").toString("utf8");
    return Buffer.from(key, "utf8").toString("base64url") === body ? { key, hashed: false } : undefined;
  }
  return isLiteralSafeKey(stem) ? { key: stem, hashed: false } : undefined;
}

/**
 * The session document inside a snapshot (the envelope checked as the store checks it). Throws
 * the store's own errors: an invalid schema, or an unsupported version.
 */
export function snapshotToSession(doc: unknown): JsonRecord {
  const invalid = (pointer: string, problem: string) =>
    new InteropError(
      "python-file-store",
      "import",
      pointer,
      `the session snapshot has an invalid schema: ${problem}`,
      'a snapshot is {"type": "session", "session_id": "...", "service_session_id": ..., "state": {...}, "version": "1.0"}',
    );
  if (!isPlainObject(doc)) throw invalid("", `expected an object, found ${describe(doc)}`);
  if (doc.type !== "session") throw invalid("/type", `expected "session", found ${describe(doc.type)}`);
  if (typeof doc.session_id !== "string")
    throw invalid("/session_id", `expected a string, found ${describe(doc.session_id)}`);
  if (!Object.hasOwn(doc, "state")) throw invalid("/state", 'missing "state"');
  const version = doc.version ?? PYTHON_SNAPSHOT_VERSION; // msgspec fills the default when absent
  if (typeof version !== "string") throw invalid("/version", `expected a string, found ${describe(version)}`);
  if (version !== PYTHON_SNAPSHOT_VERSION) {
    throw new InteropError(
      "python-file-store",
      "import",
      "/version",
      `Unsupported session snapshot version ${pyRepr(version)}; expected ${pyRepr(PYTHON_SNAPSHOT_VERSION)}.`,
      "only version 1.0 snapshots exist; this one was written by a newer or different store (the file is left as it is)",
    );
  }
  if (!isPlainObject(doc.state))
    throw new InteropError(
      "python-file-store",
      "import",
      "/state",
      "Session snapshot state must be a mapping.",
      "state is an object keyed by source id",
    );
  const out: JsonRecord = {};
  for (const key of Object.keys(doc)) if (key !== "version") defineOwn(out, key, doc[key]);
  return out;
}

/** A session document as a snapshot: the store's member order, `"version": "1.0"` last. */
export function sessionToSnapshot(doc: JsonRecord): JsonRecord {
  const out: JsonRecord = {};
  for (const key of ["type", "session_id", "service_session_id", "state"])
    defineOwn(out, key, key === "service_session_id" ? (doc[key] ?? null) : doc[key]);
  defineOwn(out, "version", PYTHON_SNAPSHOT_VERSION);
  for (const key of Object.keys(doc)) if (!Object.hasOwn(out, key)) defineOwn(out, key, doc[key]);
  return out;
}

/** Python's repr of a str, as the store's messages show it. */
function pyRepr(s: string): string {
  const shown = s.length > 40 ? s.slice(0, 40) + "..." : s;
  return `'${shown
    .replace(/\\/g, "\\\\")
    .replace(/'/g, "\\'")
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)}'`;
}

export interface SnapshotFile {
  /** The file's name in the store directory. */
  name: string;
  path: string;
  /** The key its name encodes (absent for a hashed name). */
  key?: string;
  /** `"msgpack"` for a `.msgpack` snapshot. */
  format?: SnapshotFormat;
}

/** The session snapshot files of a `FileSessionStore` directory, in name order (temporary and quarantined files left out). */
export async function listSnapshotFiles(dir: string): Promise<SnapshotFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: SnapshotFile[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const msgpack = entry.name.endsWith(MSGPACK_EXTENSION);
    const decoded = keyFromFileName(entry.name, msgpack ? MSGPACK_EXTENSION : EXTENSION);
    if (decoded === undefined) continue;
    files.push({
      name: entry.name,
      path: join(dir, entry.name),
      ...(decoded.key !== undefined ? { key: decoded.key } : {}),
      ...(msgpack ? { format: "msgpack" as const } : {}),
    });
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Writes one snapshot into a store directory under its key's file name (temporary file + rename, as the store does). */
export async function writeSnapshotFile(
  dir: string,
  key: string,
  text: string | Uint8Array,
  format: SnapshotFormat = "json",
): Promise<string> {
  const path = join(dir, sessionFileName(key, format));
  const temp = join(dir, `.${sessionFileName(key, format)}.${randomUUID().replace(/-/g, "")}.tmp`);
  try {
    await writeFile(temp, text);
    await rename(temp, path);
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return path;
}
