/**
 * How a session store gets its `blobs`: in its own backend by default, or elsewhere when
 * `blobs.url` names a folder or an S3 bucket; sealed and keyed by the store's keyring when its
 * session codec encrypts.
 */
import type { BlobOptions, BlobStore } from "../blobs/blob-store.js";
import { type BlobBackend, ChunkedBlobStore } from "../blobs/chunked.js";
import { ConfigurationError } from "../core/errors.js";
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
  if (url !== undefined)
    throw new ConfigurationError(
      `blobs.url is not supported yet (got ${JSON.stringify(String(url).slice(0, 40))})`,
      "leave it out: blobs are kept in the store's own backend",
    );
  return new ChunkedBlobStore({
    ...own,
    limits: {
      ...(maxBytes === undefined ? {} : { maxBytes }),
      ...(maxBytesPerOwner === undefined ? {} : { maxBytesPerOwner }),
    },
    ...(chunkSize === undefined ? {} : { chunkSize }),
    ...blobProtectionFor(codec),
  });
}
