/**
 * One size limit for every document interop reads and writes: `limits.maxBytes` (default
 * `DEFAULT_JSON_LIMITS.maxBytes`, 64 MiB), the limit the session loader, the stores' codecs and
 * `statebag import` read with, and the one `serializeSession` holds a saved session's text to.
 *
 * The rule: statebag never writes a document its own reader would refuse under the same limit,
 * and it never accepts one it could not write back. So
 * - an export is held to the limit (`exportSession`): indentation is dropped when it alone would
 *   take the text over (the compact text is the same document), and a document still over it is an
 *   `InteropSizeError` before anything is written;
 * - an import checks up front that the session it read can be written back within the limit it
 *   was read with, as its statebag session document (what a store saves) and in the shape it came
 *   from (what `exportSession` would write for it, compact): a document that imports can always
 *   be saved, loaded, exported and imported again with the same limit.
 */
import { resolveLimits, type JsonLimits } from "../json/safe-json.js";
import { serializeSession } from "../persistence/serialization.js";
import type { AgentSession } from "../core/session.js";
import { InteropError } from "./errors.js";
import type { SessionShape } from "./shapes.js";

/** What a document over the limit would have been: a session's statebag document, or a shape's. */
export type SizedDocument = SessionShape | "statebag";

/**
 * A document is over the size limit statebag reads and writes documents with: an export that
 * would write it, or an import whose session could not be written back within it. Carries the
 * limit (`limit`, bytes), the size found (`bytes`, the compact UTF-8 text) and which document
 * (`document`); the hint says how to proceed.
 */
export class InteropSizeError extends InteropError {
  constructor(
    shape: SessionShape,
    direction: "import" | "export",
    /** The document that is over the limit: the session's statebag document, or `shape`'s. */
    readonly document: SizedDocument,
    /** Its size: UTF-8 bytes of its compact JSON text. */
    readonly bytes: number,
    /** The limit (`limits.maxBytes`) it was held to. */
    readonly limit: number,
  ) {
    const which = document === "statebag" ? "its statebag session document" : `the ${document} document`;
    super(
      shape,
      direction,
      "",
      direction === "export"
        ? `the document would be ${sizeText(bytes)} written compactly, over the ${sizeText(limit)} limit (limits.maxBytes) statebag reads documents with`
        : `this document reads within the ${sizeText(limit)} limit (limits.maxBytes), but statebag would write ${which} as ${sizeText(bytes)}, over that limit, so it could not be ${document === "statebag" ? "saved" : "exported"} and read back`,
      `raise limits.maxBytes to at least ${bytes} on every side that reads or writes it (the CLI: --max-bytes ${Math.ceil(bytes / (1024 * 1024))}MiB on import and export, and the same limits on the store's codec), or split the session (trim or compact its history) so it fits`,
    );
  }
}

/** `n` bytes as a message shows them: "67,108,865 bytes (64.0 MiB)". */
function sizeText(n: number): string {
  const mib = n / (1024 * 1024);
  return `${n.toLocaleString("en-US")} bytes${mib >= 0.1 ? ` (${mib.toFixed(1)} MiB)` : ""}`;
}

/** The UTF-8 length of `text` when it is over `max`, else undefined (counted only when its UTF-16 length leaves that open). */
function overBy(text: string, max: number): number | undefined {
  // A UTF-16 unit is 1 to 3 UTF-8 bytes (a surrogate pair is 4 for 2): length <= bytes <= 3 * length.
  if (text.length * 3 <= max) return undefined;
  const bytes = Buffer.byteLength(text, "utf8");
  return bytes > max ? bytes : undefined;
}

/** The size limit documents are read and written with: `limits.maxBytes`, or the default. */
export function documentLimit(limits: JsonLimits | undefined): number {
  return resolveLimits(limits).maxBytes;
}

/**
 * The text of `doc` within `maxBytes`: indented by `indent`, or compact when the indentation alone
 * would take it over. Throws `InteropSizeError` (export) when even the compact text is over.
 */
export function documentText(doc: unknown, indent: number, maxBytes: number, shape: SessionShape): string {
  if (indent > 0) {
    const pretty = JSON.stringify(doc, null, indent);
    if (overBy(pretty, maxBytes) === undefined) return pretty;
  }
  const compact = JSON.stringify(doc);
  const bytes = overBy(compact, maxBytes);
  if (bytes !== undefined) throw new InteropSizeError(shape, "export", shape, bytes, maxBytes);
  return compact;
}

/** Throws `InteropSizeError` (export) when encoded bytes (a msgpack document) are over `maxBytes`. */
export function checkEncodedSize(bytes: Uint8Array, maxBytes: number, shape: SessionShape): void {
  if (bytes.byteLength > maxBytes) throw new InteropSizeError(shape, "export", shape, bytes.byteLength, maxBytes);
}

/**
 * The import's promise that it can write back what it read: `session`'s statebag document and
 * `exportDocument()` (the shape's document, or undefined for a shape statebag does not write) are
 * within `maxBytes` as compact text, else `InteropSizeError` (import). Linear: one serialization each.
 */
export function checkWritesBack(
  session: AgentSession,
  shape: SessionShape,
  maxBytes: number,
  exportDocument: () => unknown,
): void {
  // The saved form, as a store's codec writes it (the limit itself is checked here, with the size).
  const stored = serializeSession(session, { limits: { maxBytes: Number.MAX_SAFE_INTEGER } });
  const storedBytes = overBy(stored, maxBytes);
  if (storedBytes !== undefined) throw new InteropSizeError(shape, "import", "statebag", storedBytes, maxBytes);
  let doc: unknown;
  try {
    doc = exportDocument();
  } catch (error) {
    // A session the shape cannot hold for another reason is told so by the export itself: this
    // check is about size only, and an import never fails for what a later export might refuse.
    if (error instanceof InteropError) return;
    throw error;
  }
  if (doc === undefined) return;
  const bytes = overBy(JSON.stringify(doc), maxBytes);
  if (bytes !== undefined) throw new InteropSizeError(shape, "import", shape, bytes, maxBytes);
}
