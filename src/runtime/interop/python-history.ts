/**
 * Agent Framework for Python's `FileHistoryProvider` (PR #5248, July 2026): one append-only file per
 * session in a directory, default source id `"file_history"`.
 *
 * - `<stem>.jsonl` (the default): one `Message.to_dict()` per line, compact JSON (msgspec); blank
 *   lines are skipped when reading, as the provider does.
 * - `<stem>.msgpack` (`serialization_format="msgpack"`): records of a 4-byte big-endian length
 *   (1 byte to 64 MiB) followed by `msgspec.msgpack.encode(message.to_dict())`.
 *
 * The stem is the one `FileSessionStore` uses (`sessionFileStem`: the id when portable, else
 * `~session-<base64url>` / `~session-sha256-<hex>`); a session without an id writes `default`.
 * Records map to statebag messages with the same table as sessions (`messagesFromPython`), so a
 * history read and written back is the same file (compact JSON with msgspec's member order; see
 * python-msgpack.ts for msgpack). Errors name the record (`/<index>` pointers, 0-based; the
 * message says the 1-based line or record number as the provider's own errors do).
 */
import type { ChatMessage } from "../core/messages.js";
import { JsonParseError, parseJson, type JsonLimits } from "../json/safe-json.js";
import { InteropError, describe } from "./errors.js";
import { isPlainObject } from "./json-util.js";
import { keyFromFileStem, sessionFileStem } from "./python-file-store.js";
import { decodeMsgpackDocument, type MsgpackCodec } from "./python-msgpack.js";
import { messagesFromPython, messagesToPython } from "./python.js";

export const PYTHON_HISTORY_SOURCE_ID = "file_history";
export const PYTHON_HISTORY_DEFAULT_STEM = "default";
export const PYTHON_HISTORY_MAX_RECORD_BYTES = 64 * 1024 * 1024;
export type HistoryFormat = "jsonl" | "msgpack";
const EXTENSIONS: Record<HistoryFormat, string> = { jsonl: ".jsonl", msgpack: ".msgpack" };

const fail = (pointer: string, problem: string, hint: string, cause?: unknown) =>
  new InteropError("python", "import", pointer, problem, hint, cause);
const RECORD_HINT = 'each record is Message.to_dict(): {"type": "message", "role": ..., "contents": [...]}';

/** The history file name for a session id (`undefined`: the provider's `default` file). */
export function historyFileName(sessionId: string | undefined, format: HistoryFormat = "jsonl"): string {
  return (
    sessionFileStem(sessionId === undefined || sessionId === "" ? PYTHON_HISTORY_DEFAULT_STEM : sessionId) +
    EXTENSIONS[format]
  );
}

/**
 * The session id and format a history file's name encodes; `undefined` for other files (and hidden
 * ones). A hashed name gives no key (`hashed: true`).
 */
export function historyFileKey(name: string): { key?: string; hashed: boolean; format: HistoryFormat } | undefined {
  const format: HistoryFormat | undefined = name.endsWith(".jsonl")
    ? "jsonl"
    : name.endsWith(".msgpack")
      ? "msgpack"
      : undefined;
  if (format === undefined) return undefined;
  const decoded = keyFromFileStem(name.slice(0, -EXTENSIONS[format].length));
  return decoded === undefined ? undefined : { ...decoded, format };
}

/** The raw records (`Message.to_dict()` dicts) of a `.jsonl` history. */
export function readHistoryJsonl(input: string | Uint8Array, limits?: JsonLimits): Record<string, unknown>[] {
  const text = typeof input === "string" ? input : new TextDecoder("utf-8", { fatal: true }).decode(input);
  const records: Record<string, unknown>[] = [];
  let line = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    line++;
    const serialized = text.slice(start, end).trim();
    start = end + 1;
    if (serialized === "") continue;
    const pointer = `/${records.length}`;
    let payload: unknown;
    try {
      payload = parseJson(serialized, limits);
    } catch (error) {
      if (
        !(error instanceof JsonParseError) ||
        error.code === "json-too-deep" ||
        error.code === "json-proto-key" ||
        error.code === "json-too-many-keys" ||
        error.code === "json-too-large"
      )
        throw error;
      const nonFinite = /\b(NaN|-?Infinity)\b/.test(serialized);
      throw fail(
        pointer,
        `history line ${line} is not JSON: ${error.message.slice(0, 200)}`,
        nonFinite
          ? "the line holds NaN or Infinity (Python's json writes them for non-finite floats); JSON has no such values: replace them with null or a string"
          : RECORD_HINT,
        error,
      );
    }
    if (!isPlainObject(payload))
      throw fail(
        pointer,
        `history line ${line} did not deserialize to a mapping (found ${describe(payload)})`,
        RECORD_HINT,
      );
    records.push(payload);
  }
  return records;
}

/** The raw records of a `.msgpack` history (length-prefixed records, checked as the provider checks them). */
export function readHistoryMsgpack(
  bytes: Uint8Array,
  codec: MsgpackCodec,
  limits?: JsonLimits,
): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  while (offset < bytes.byteLength) {
    const nextNumber = records.length + 1;
    const pointer = `/${records.length}`;
    if (bytes.byteLength - offset < 4)
      throw fail(
        pointer,
        `history record ${nextNumber} has a truncated length header`,
        "the file ends inside a record header: it was cut short",
      );
    const length = view.getUint32(offset);
    if (length <= 0 || length > PYTHON_HISTORY_MAX_RECORD_BYTES)
      throw fail(
        pointer,
        `history record ${nextNumber} has invalid length ${length}`,
        `records are 1 byte to 64 MiB; is this a ${"FileHistoryProvider"} .msgpack file (a FileSessionStore snapshot is one msgpack map without length headers)?`,
      );
    offset += 4;
    if (bytes.byteLength - offset < length)
      throw fail(
        pointer,
        `history record ${nextNumber} is truncated`,
        "the file ends inside a record: it was cut short",
      );
    const payload = decodeMsgpackDocument(
      codec,
      bytes.subarray(offset, offset + length),
      "python-history",
      limits,
      `history record ${nextNumber}: `,
    );
    offset += length;
    if (!isPlainObject(payload))
      throw fail(
        pointer,
        `history record ${nextNumber} did not deserialize to a mapping (found ${describe(payload)})`,
        RECORD_HINT,
      );
    records.push(payload);
  }
  return records;
}

/** A history file's messages as statebag messages. */
export function importPythonHistory(records: readonly Record<string, unknown>[]): ChatMessage[] {
  return messagesFromPython(records);
}

/** Messages as a `.jsonl` history (one compact `Message.to_dict()` per line, each ending in a newline). */
export function exportPythonHistoryJsonl(messages: readonly ChatMessage[]): string {
  return messagesToPython(messages)
    .map((m) => JSON.stringify(m) + "\n")
    .join("");
}

/** Messages as a `.msgpack` history (4-byte big-endian length, then the record, for each message). */
export function exportPythonHistoryMsgpack(messages: readonly ChatMessage[], codec: MsgpackCodec): Uint8Array {
  const parts = messagesToPython(messages).map((m) => codec.encode(m));
  const out = new Uint8Array(parts.reduce((n, p) => n + 4 + p.byteLength, 0));
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const part of parts) {
    if (part.byteLength > PYTHON_HISTORY_MAX_RECORD_BYTES)
      throw new InteropError(
        "python",
        "export",
        `/${parts.indexOf(part)}`,
        `a message encodes to ${part.byteLength} bytes, over the 64 MiB record limit`,
        "FileHistoryProvider cannot read records this large: shorten the message",
      );
    view.setUint32(offset, part.byteLength);
    out.set(part, offset + 4);
    offset += 4 + part.byteLength;
  }
  return out;
}

/**
 * Whether a file is a `FileHistoryProvider` history, with the evidence: the extension and the first
 * record's shape. `undefined` when it is not one.
 */
export function detectHistoryFile(
  name: string,
  bytes: Uint8Array,
): { format: HistoryFormat; evidence: string } | undefined {
  const key = historyFileKey(name);
  if (key === undefined) return undefined;
  if (key.format === "jsonl") {
    const head = new TextDecoder().decode(bytes.subarray(0, 4096)).trimStart();
    if (bytes.byteLength === 0)
      return { format: "jsonl", evidence: "an empty .jsonl file (FileHistoryProvider history)" };
    return head.startsWith("{") && /"type"\s*:\s*"(chat_)?message"/.test(head)
      ? {
          format: "jsonl",
          evidence:
            'a .jsonl file whose first line is a Message.to_dict() ("type": "message"): a FileHistoryProvider history',
        }
      : undefined;
  }
  if (bytes.byteLength < 5) return undefined;
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  const first = bytes[4];
  const isMap = (first >= 0x80 && first <= 0x8f) || first === 0xde || first === 0xdf;
  return length > 0 && length <= bytes.byteLength - 4 && isMap
    ? { format: "msgpack", evidence: "a .msgpack file of length-prefixed msgpack maps: a FileHistoryProvider history" }
    : undefined;
}
