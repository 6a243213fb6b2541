/**
 * Opening stores for CLI commands: the URL rules (`--store`, `$STATEBAG_STORE`, the default SQLite
 * file), a read-only codec that hands commands the stored text as it is, and closing.
 */
import type { TypeRegistry } from "../runtime/persistence/registry.js";
import type { AgentSession } from "../runtime/core/session.js";
import type { SessionCodec, SessionStore } from "../runtime/stores/types.js";
import { storeUrl } from "./context.js";
import { CliError, EXIT, type CliEnvironment } from "./io.js";

export interface OpenedStore {
  store: SessionStore;
  /** The URL as given (password redacted by the store). */
  url: string;
  close(): Promise<void>;
}

/** Opens the store a command was pointed at. */
export async function openCliStore(option: string | undefined, environment: CliEnvironment, options: { codec?: SessionCodec; registry?: TypeRegistry; configured?: string; readOnly?: boolean } = {}): Promise<OpenedStore> {
  // `configured`: the project config's store URL, used after --store and $STATEBAG_STORE.
  const url = storeUrl(option, environment, options.configured);
  const { openStore, defaultSessionCodec } = await import("../stores.js");
  const codec = options.codec ?? (options.registry ? defaultSessionCodec({ registry: options.registry }) : undefined);
  // readOnly: commands that only read open a SQLite file read-only (it may sit on a read-only mount).
  const store = await openStore(url, { ...(codec ? { codec } : {}), ...(options.readOnly ? { readOnly: true } : {}) });
  return {
    store,
    url: store.url,
    close: () => store.close(),
  };
}

/**
 * A codec that does not interpret what it reads: `deserialize` records the stored text and
 * returns a placeholder, so a command sees exactly what is stored, even when it would not load.
 * Writing through it is refused.
 */
export class RawTextCodec implements SessionCodec {
  last: string | undefined;
  serialize(): string {
    throw new CliError(EXIT.runtime, "this command opened the store read-only");
  }
  deserialize(text: string): AgentSession {
    this.last = text;
    return { id: "", stateBag: {} };
  }
}
