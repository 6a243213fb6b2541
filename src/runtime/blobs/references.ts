/**
 * Reference contents (`statebag.blobReference`): a session keeps the SHA-256 of a file's bytes in
 * place of the bytes, and the bytes live once in the store's blob store, per owner. This module
 * moves between the two forms:
 *
 * - `offloadDataContents` puts the bytes of inline `data:` contents above a threshold into the blob
 *   store and returns the messages with references in their place (the chat handler on a new user
 *   message, `statebag migrate --blobs` on stored sessions);
 * - `resolveBlobReferences` reads the bytes back for a model request: the model clients call it
 *   when they build a request, with the reader the run was given (`RunOptions.blobs`);
 * - `referencedBlobs` finds every reference a session holds (anywhere in its state bag): the live
 *   set a sweep keeps.
 */
import { createHash } from "node:crypto";
import { StatebagError } from "../core/errors.js";
import type { AIContent, BlobReferenceContent, ChatMessage, DataContent } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { BlobStore } from "./blob-store.js";

export const BLOB_REFERENCE_TYPE = "statebag.blobReference";

/** Reads one owner's blobs by hash: what resolving a reference for a model request needs. */
export interface BlobReader {
  /** The whole blob's bytes, or undefined when the owner has no blob with this hash. */
  read(hash: string): Promise<Uint8Array | undefined>;
}

/** Writes one owner's blobs: what turning inline bytes into references needs. */
export interface BlobWriter {
  /** Stores the bytes (once: the same bytes again are not stored twice) and returns their SHA-256 in hex. */
  write(bytes: Uint8Array, mediaType: string, name?: string): Promise<string>;
}

/** A reader of one owner's blobs in a blob store (for `RunOptions.blobs`): each read gathers the whole blob. */
export function blobReader(blobs: BlobStore, owner: string | undefined): BlobReader {
  return {
    async read(hash) {
      const found = await blobs.get(hash, owner === undefined ? {} : { owner });
      if (!found) return undefined;
      const chunks: Uint8Array[] = [];
      let size = 0;
      const reader = found.stream.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        size += value.byteLength;
      }
      return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    },
  };
}

/** A writer of one owner's blobs in a blob store. */
export function blobWriter(blobs: BlobStore, owner: string | undefined): BlobWriter {
  return {
    async write(bytes, mediaType, name) {
      const put = await blobs.put(bytes, {
        mediaType,
        size: bytes.byteLength,
        ...(owner !== undefined ? { owner } : {}),
        ...(name !== undefined ? { name } : {}),
      });
      return put.hash;
    },
  };
}

export class BlobReferenceError extends StatebagError {
  constructor(message: string, hint: string) {
    super("unsupported-content", message, { hint });
  }
}

export function isBlobReference(content: unknown): content is BlobReferenceContent {
  return (
    typeof content === "object" &&
    content !== null &&
    (content as { $type?: unknown }).$type === BLOB_REFERENCE_TYPE &&
    typeof (content as { hash?: unknown }).hash === "string"
  );
}

/** SHA-256 of bytes, lowercase hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The reference to bytes already stored under `hash`. */
export function blobReference(hash: string, mediaType: string, size: number, name?: string): BlobReferenceContent {
  const ref: BlobReferenceContent = { $type: BLOB_REFERENCE_TYPE, hash, mediaType, size };
  if (name !== undefined) ref.name = name;
  return ref;
}

/** A base64 `data:` URI's media type and bytes; undefined when it is not one. */
export function decodeDataUri(uri: string): { mediaType: string; bytes: Buffer } | undefined {
  const comma = uri.indexOf(",");
  if (!uri.startsWith("data:") || comma < 0) return undefined;
  const head = uri.slice(5, comma);
  const params = head.split(";");
  if (params[params.length - 1]?.toLowerCase() !== "base64") return undefined;
  const mediaType = (params[0] || "application/octet-stream").trim().toLowerCase();
  return { mediaType, bytes: Buffer.from(uri.slice(comma + 1), "base64") };
}

/** Bytes a base64 `data:` URI holds, from its length alone (no decoding). */
export function dataUriByteLength(uri: string): number {
  const comma = uri.indexOf(",");
  if (comma < 0) return 0;
  const chars = uri.length - comma - 1;
  const padding = uri.endsWith("==") ? 2 : uri.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((chars * 3) / 4) - padding);
}

function dataUri(mediaType: string, bytes: Uint8Array): string {
  return `data:${mediaType};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`;
}

/** True when a message holds a reference content. */
function hasReference(message: ChatMessage): boolean {
  return message.contents.some(isBlobReference);
}

/**
 * The messages with every reference content replaced by an inline `data` content of its bytes
 * (annotations and additional properties kept): the form the model clients send. The same array
 * comes back when there is no reference. A reference without a reader, or whose blob is gone,
 * fails with a clear error (the model would otherwise answer without seeing the file). Bytes read
 * once per hash per call.
 */
export async function resolveBlobReferences(
  messages: readonly ChatMessage[],
  blobs: BlobReader | undefined,
): Promise<readonly ChatMessage[]> {
  if (!messages.some(hasReference)) return messages;
  if (!blobs)
    throw new BlobReferenceError(
      "the messages hold a file kept in the blob store (a statebag.blobReference content), but this request has no blob reader to read it with",
      "run the agent with { blobs: store.blobs.reader(owner) } (the chat handler does), or pass the bytes inline as a data content",
    );
  const read = new Map<string, Promise<Uint8Array | undefined>>();
  const resolve = async (ref: BlobReferenceContent): Promise<DataContent> => {
    let bytes = read.get(ref.hash);
    if (!bytes) read.set(ref.hash, (bytes = blobs.read(ref.hash)));
    const found = await bytes;
    if (!found)
      throw new BlobReferenceError(
        `the file ${ref.name ? JSON.stringify(ref.name.slice(0, 80)) : ref.hash.slice(0, 12)} (${ref.mediaType}, ${ref.size} bytes) is no longer in the blob store`,
        "it was erased or swept; remove the message that refers to it, or store the file again",
      );
    const data: DataContent = { $type: "data", uri: dataUri(ref.mediaType, found) };
    if (ref.name !== undefined) data.name = ref.name;
    if (ref.annotations !== undefined) data.annotations = ref.annotations;
    if (ref.additionalProperties !== undefined) data.additionalProperties = ref.additionalProperties;
    return data;
  };
  return Promise.all(
    messages.map(async (message) =>
      hasReference(message)
        ? {
            ...message,
            contents: await Promise.all(
              message.contents.map((c): AIContent | Promise<AIContent> => (isBlobReference(c) ? resolve(c) : c)),
            ),
          }
        : message,
    ),
  );
}

export interface OffloadOptions {
  /** Inline contents of at least this many bytes become references. Default 4096. */
  thresholdBytes?: number;
}

export interface OffloadResult {
  messages: ChatMessage[];
  /** Contents replaced by a reference. */
  offloaded: number;
  /** Bytes moved out of the messages. */
  bytes: number;
}

/**
 * The messages with every inline base64 `data` content of at least `thresholdBytes` bytes put into
 * the blob store and replaced by a reference (name, annotations and additional properties kept).
 * Messages without one come back as they were (same objects). Idempotent: the same bytes are
 * stored once, so a run cut short can simply run again.
 */
export async function offloadDataContents(
  messages: readonly ChatMessage[],
  blobs: BlobWriter,
  options: OffloadOptions = {},
): Promise<OffloadResult> {
  const threshold = options.thresholdBytes ?? 4096;
  let offloaded = 0;
  let bytes = 0;
  const out: ChatMessage[] = [];
  for (const message of messages) {
    if (!message.contents.some((c) => isOffloadable(c, threshold))) {
      out.push(message);
      continue;
    }
    const contents: AIContent[] = [];
    for (const content of message.contents) {
      if (!isOffloadable(content, threshold)) {
        contents.push(content);
        continue;
      }
      const decoded = decodeDataUri(content.uri)!;
      const hash = await blobs.write(decoded.bytes, decoded.mediaType, content.name);
      const ref = blobReference(hash, decoded.mediaType, decoded.bytes.byteLength, content.name);
      if (content.annotations !== undefined) ref.annotations = content.annotations;
      if (content.additionalProperties !== undefined) ref.additionalProperties = content.additionalProperties;
      contents.push(ref);
      offloaded++;
      bytes += decoded.bytes.byteLength;
    }
    out.push({ ...message, contents });
  }
  return { messages: out, offloaded, bytes };
}

function isOffloadable(content: AIContent, threshold: number): content is DataContent {
  return (
    content.$type === "data" &&
    typeof content.uri === "string" &&
    decodeDataUriHead(content.uri) &&
    dataUriByteLength(content.uri) >= threshold
  );
}

/** True for a `data:` URI with a `;base64` payload (its head read, not its bytes). */
function decodeDataUriHead(uri: string): boolean {
  const comma = uri.indexOf(",");
  return uri.startsWith("data:") && comma > 0 && /;base64$/i.test(uri.slice(0, comma));
}

/**
 * Every blob hash a value refers to: each `statebag.blobReference` found anywhere in it (a
 * session's state bag, a message log's messages). Added to `into`. Iterative, linear in the size
 * of the value.
 */
export function collectBlobReferences(value: unknown, into: Set<string> = new Set()): Set<string> {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      for (const item of node) if (typeof item === "object" && item !== null) stack.push(item);
      continue;
    }
    if (isBlobReference(node)) into.add(node.hash);
    for (const key of Object.keys(node)) {
      const item = (node as Record<string, unknown>)[key];
      if (typeof item === "object" && item !== null) stack.push(item);
    }
  }
  return into;
}

/** The blob hashes a session refers to (its whole state bag). */
export function referencedBlobs(session: AgentSession, into?: Set<string>): Set<string> {
  return collectBlobReferences(session.stateBag, into);
}

/**
 * The session with every reference in its histories (each `messages` array of a state bag value)
 * replaced by the inline bytes it names (a new session; the given one is not changed): a document
 * that carries its files wherever it goes (`statebag export` writes this). The blob store verifies
 * each blob's SHA-256 as it is read.
 */
export async function inlineSessionReferences(
  session: AgentSession,
  blobs: BlobReader | undefined,
): Promise<AgentSession> {
  let stateBag: AgentSession["stateBag"] | undefined;
  for (const key of Object.keys(session.stateBag)) {
    const value = session.stateBag[key] as unknown as { messages?: unknown };
    if (!Array.isArray(value?.messages)) continue;
    const messages = value.messages as ChatMessage[];
    const resolved = await resolveBlobReferences(messages, blobs);
    if (resolved === messages) continue;
    stateBag ??= { ...session.stateBag };
    Object.defineProperty(stateBag, key, {
      value: { ...value, messages: resolved },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return stateBag ? { ...session, stateBag } : session;
}
