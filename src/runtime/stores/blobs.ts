/**
 * How a session store gets its `blobs`: in its own backend by default, or elsewhere when
 * `blobs.url` names a folder or an S3 bucket; sealed and keyed by the store's keyring when its
 * session codec encrypts.
 */
import type { BlobOptions, BlobStore } from "../blobs/blob-store.js";
import { type BlobBackend, ChunkedBlobStore } from "../blobs/chunked.js";
import { fileURLToPath } from "node:url";
import { FolderBlobBackend } from "../blobs/folder.js";
import { parseS3Url, S3BlobBackend } from "../blobs/s3.js";
import { ConfigurationError } from "../core/errors.js";
import { redactUrl } from "./url.js";
import { blobProtectionFor } from "./blob-sealer.js";
import type { SessionCodec } from "./types.js";

/** The blob store of a session store: `own` is its backend's, used unless `options.url` points elsewhere. */
export function storeBlobs(
  options: BlobOptions | undefined,
  codec: SessionCodec | undefined,
  own: { backend: BlobBackend; where: string },
): BlobStore {
  if (options !== undefined && (typeof options !== "object" || options === null))
    throw new ConfigurationError(
      "the store's blobs option must be an object: { maxBytes?, maxBytesPerOwner?, chunkSize?, url? }",
    );
  const { url, chunkSize, maxBytes, maxBytesPerOwner } = options ?? {};
  return new ChunkedBlobStore({
    ...(url === undefined ? own : elsewhere(url)),
    limits: {
      ...(maxBytes === undefined ? {} : { maxBytes }),
      ...(maxBytesPerOwner === undefined ? {} : { maxBytesPerOwner }),
    },
    ...(chunkSize === undefined ? {} : { chunkSize }),
    ...blobProtectionFor(codec),
  });
}

/** The backend `blobs.url` names: a folder (`file:`) or an S3 bucket (`s3:`). */
function elsewhere(url: unknown): { backend: BlobBackend; where: string } {
  const text = typeof url === "string" ? url : "";
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === "file") {
    let path: string;
    try {
      path = fileURLToPath(text);
    } catch (error) {
      throw new ConfigurationError(
        `blobs.url ${JSON.stringify(redactUrl(text).slice(0, 200))} is not a file URL of an absolute path (${(error as Error).message})`,
        "write it as file:///absolute/path/to/blobs",
      );
    }
    const backend = new FolderBlobBackend(path);
    return { backend, where: `folder ${backend.root}` };
  }
  if (scheme === "s3") {
    const { location, clientConfig, where } = parseS3Url(text);
    return { backend: new S3BlobBackend(location, undefined, clientConfig, where), where };
  }
  throw new ConfigurationError(
    `blobs.url ${JSON.stringify(redactUrl(text).slice(0, 200))} names no blob store statebag knows`,
    "use file:///absolute/path for a folder, s3://bucket/prefix?region=... for an S3 bucket, or leave blobs.url out to keep blobs in the store's own backend",
  );
}

/**
 * Takes `?blobs=<url>` (percent-encoded: a folder `file:///...` or a bucket `s3://...`) out of a
 * store URL, so the CLI and the studio reach blobs kept elsewhere with the store URL alone.
 */
export function takeBlobsParam(url: string): { url: string; blobsUrl: string | undefined } {
  const query = url.indexOf("?");
  if (query < 0) return { url, blobsUrl: undefined };
  const hash = url.indexOf("#", query);
  const kept: string[] = [];
  let blobsUrl: string | undefined;
  for (const part of url.slice(query + 1, hash < 0 ? undefined : hash).split("&")) {
    const eq = part.indexOf("=");
    if ((eq < 0 ? part : part.slice(0, eq)) !== "blobs") {
      kept.push(part);
      continue;
    }
    if (blobsUrl !== undefined) throw new ConfigurationError("?blobs= is given twice in the store URL");
    try {
      blobsUrl = decodeURIComponent(eq < 0 ? "" : part.slice(eq + 1));
    } catch {
      throw new ConfigurationError(
        "?blobs= in the store URL has a malformed %-escape",
        "percent-encode the blob store's URL (encodeURIComponent)",
      );
    }
    if (blobsUrl === "")
      throw new ConfigurationError(
        "?blobs= in the store URL is empty",
        "give file:///path or s3://bucket/prefix, encoded",
      );
  }
  if (blobsUrl === undefined) return { url, blobsUrl };
  const rest = kept.filter((p) => p !== "").join("&");
  return { url: url.slice(0, query) + (rest ? `?${rest}` : "") + (hash < 0 ? "" : url.slice(hash)), blobsUrl };
}
