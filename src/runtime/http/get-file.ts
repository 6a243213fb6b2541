/**
 * `GET ${base}/chat/:id/files/:hash`: a file of the chat, kept in the store's blob store (a
 * `statebag.blobReference` content of its history; `toUIMessages` gives its `file` part this URL).
 * The owner's only: another owner's chat, a hash the chat does not refer to, or a blob that was
 * erased are all the same 404. One byte range (`Range: bytes=a-b`, `a-`, `-n`) is answered 206 with
 * `Content-Range`; an unsatisfiable one 416. The content type is the reference's; the file is sent
 * `nosniff`, with a sandboxing Content-Security-Policy, and as an attachment unless it is a raster
 * image (an uploaded HTML or SVG file never runs script on the app's origin).
 */
import { BLOB_REFERENCE_TYPE } from "../blobs/references.js";
import type { BlobReferenceContent } from "../core/messages.js";
import { checkChatId } from "./ai-sdk-ui.js";
import { chatNotFound } from "./chat-error.js";
import { historyOf } from "./chat-flow.js";
import { HttpProblem, problemResponse } from "./problem.js";
import { ownerOf, type Route } from "./request.js";

const HASH = /^[0-9a-f]{64}$/;
/** Shown inline: images a browser renders without running anything. Everything else is downloaded. */
const INLINE = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]);
/** A media type as a header may carry it (type/subtype, no parameters a client could inject). */
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

const fileNotFound = () => new HttpProblem("http-file-not-found");

export const getFile: Route = async (context, request, url, id) => {
  const owner = await ownerOf(context, request);
  const hash = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
  const chatId = checkChatId(id);
  if (!HASH.test(hash)) throw fileNotFound();
  // The view: a file of the message a running turn answers is the chat's too.
  const stored = await context.chats.view(owner, chatId);
  if (!stored) throw chatNotFound();
  const reference = findReference(historyOf(stored.session, context.chats.historyKey), hash);
  if (!reference) throw fileNotFound();
  const blobs = context.chats.blobs;
  if (!blobs) throw fileNotFound();

  const etag = `"${hash}"`;
  const headers: Record<string, string> = {
    "content-type": safeMediaType(reference.mediaType),
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    "content-disposition": disposition(reference),
    "cache-control": "private, no-cache",
    "accept-ranges": "bytes",
    etag,
  };
  const info = await blobs.stat(hash, { owner });
  if (!info) throw fileNotFound(); // erased or swept: gone for good
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch?.split(",").some((t) => t.trim() === etag || t.trim() === `W/${etag}`))
    return new Response(null, { status: 304, headers });

  const rangeHeader = request.headers.get("range");
  const ifRange = request.headers.get("if-range");
  const range =
    rangeHeader !== null && (ifRange === null || ifRange.trim() === etag)
      ? parseRange(rangeHeader, info.size)
      : undefined;
  if (range === "unsatisfiable")
    return problemResponse(
      new HttpProblem("http-range-not-satisfiable", { detail: `The file has ${info.size} bytes.` }),
      { "content-range": `bytes */${info.size}` },
    );
  const read = await blobs.get(hash, {
    owner,
    signal: request.signal,
    ...(range ? { range: { start: range[0], end: range[1] + 1 } } : {}),
  });
  if (!read) throw fileNotFound();
  if (!range)
    return new Response(read.stream, { status: 200, headers: { ...headers, "content-length": String(info.size) } });
  return new Response(read.stream, {
    status: 206,
    headers: {
      ...headers,
      "content-length": String(read.end - read.start),
      "content-range": `bytes ${read.start}-${read.end - 1}/${info.size}`,
    },
  });
};

function findReference(
  history: readonly { contents: readonly unknown[] }[],
  hash: string,
): BlobReferenceContent | undefined {
  for (let i = history.length - 1; i >= 0; i--)
    for (const content of history[i].contents) {
      const reference = content as Partial<BlobReferenceContent> | null;
      if (
        reference?.$type === BLOB_REFERENCE_TYPE &&
        reference.hash === hash &&
        typeof reference.mediaType === "string"
      )
        return reference as BlobReferenceContent;
    }
  return undefined;
}

function safeMediaType(mediaType: string): string {
  const type = mediaType.trim().toLowerCase();
  if (!MEDIA_TYPE.test(type)) return "application/octet-stream";
  return type === "text/plain" ? "text/plain; charset=utf-8" : type;
}

/** `inline` for raster images, `attachment` otherwise; the name as RFC 6266/5987 give it (ASCII fallback plus UTF-8). */
function disposition(reference: BlobReferenceContent): string {
  const kind = INLINE.has(reference.mediaType.trim().toLowerCase()) ? "inline" : "attachment";
  const name = (reference.name ?? "").replace(/[\u0000-\u001f\u007f]/g, "").slice(0, 200);
  if (name === "") return kind;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/**
 * One range of `Range: bytes=...` against a file of `size` bytes: `[first, last]` inclusive,
 * `"unsatisfiable"`, or undefined (no usable range: several ranges, another unit, a malformed
 * header; RFC 9110 lets the server answer the whole file then).
 */
export function parseRange(header: string, size: number): [number, number] | "unsatisfiable" | undefined {
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (!Number.isSafeInteger(suffix)) return undefined;
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return [Math.max(0, size - suffix), size - 1];
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return undefined;
  if (match[2] !== "" && Number(match[2]) < start) return undefined; // invalid: ignored
  if (start >= size) return "unsatisfiable";
  return [start, end];
}
