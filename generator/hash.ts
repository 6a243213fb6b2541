/** The content hash the no-op cache and the frozen-schema lock both use. */
import { createHash } from "node:crypto";

export function hash(text: string | Buffer): string {
  return createHash("sha256").update(text).digest("hex");
}
