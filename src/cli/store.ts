/**
 * Opening stores for CLI commands: the URL rules (`--store`, `$STATEBAG_STORE`, the default SQLite
 * file), a read-only codec that hands commands the stored text as it is, and closing.
 */
import { existsSync } from "node:fs";
import type { TypeRegistry } from "../runtime/persistence/registry.js";
import type { AgentSession } from "../runtime/core/session.js";
import type { SessionCodec, SessionStore } from "../runtime/stores/types.js";
import { storeUrl } from "./context.js";
import { CliError, EXIT, type CliEnvironment } from "./io.js";

export interface OpenedStore {
  store: SessionStore;
  /** The URL as given (password redacted by the store). */
  url: string;
  /**
   * Set when a dry run found no store to read (no SQLite file, no tables): it reads an empty
   * in-memory store instead, and this says why (for the report).
   */
  empty?: string;
  close(): Promise<void>;
}

/** Opens the store a command was pointed at. */
export async function openCliStore(
  option: string | undefined,
  environment: CliEnvironment,
  options: { codec?: SessionCodec; registry?: TypeRegistry; configured?: string; readOnly?: boolean; dryRun?: boolean } = {},
): Promise<OpenedStore> {
  // `configured`: the project config's store URL, used after --store and $STATEBAG_STORE.
  const url = storeUrl(option, environment, options.configured);
  const { openStore, defaultSessionCodec } = await import("../stores.js");
  const codec = options.codec ?? (options.registry ? defaultSessionCodec({ registry: options.registry }) : undefined);
  if (options.dryRun) return openForDryRun(url, codec);
  // readOnly: commands that only read open a SQLite file read-only (it may sit on a read-only mount).
  const store = await openStore(url, { ...(codec ? { codec } : {}), ...(options.readOnly ? { readOnly: true } : {}) });
  return {
    store,
    url: store.url,
    close: () => store.close(),
  };
}

/**
 * A dry run opens nothing for writing: SQLite read-only (no file, folder or table is created),
 * PostgreSQL without setup (no DDL), Redis as it is (it needs no setup). A store that does not
 * exist yet holds no sessions, so the dry run reads an empty in-memory store in its place.
 */
async function openForDryRun(url: string, codec: SessionCodec | undefined): Promise<OpenedStore> {
  const { openStore } = await import("../stores.js");
  const { redactUrl } = await import("../runtime/stores/url.js");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  const empty = async (reason: string): Promise<OpenedStore> => {
    const store = await openStore("memory:", codec ? { codec } : {});
    return { store, url: redactUrl(url), empty: reason, close: () => store.close() };
  };
  let readOnly = false;
  if (scheme === "sqlite") {
    const { parseSqliteUrl } = await import("../runtime/stores/sqlite/url.js");
    const { path } = parseSqliteUrl(url);
    // An in-memory database is private to this process: nothing outlives the run.
    readOnly = path !== ":memory:";
    if (readOnly && !existsSync(path)) return empty(`there is no SQLite file at ${path} yet`);
  }
  let store: SessionStore | undefined;
  try {
    store = await openStore(url, { ...(codec ? { codec } : {}), ...(readOnly ? { readOnly: true } : {}) });
    // PostgreSQL connects on the first call: one small read finds a schema without tables.
    if (scheme === "postgres" || scheme === "postgresql") await store.scan({ limit: 1 });
  } catch (error) {
    await store?.close().catch(() => undefined);
    if (isMissingTables(error)) return empty(scheme === "sqlite" ? "the SQLite file has no statebag tables yet" : "the store has no statebag tables yet (statebag store setup creates them)");
    throw error;
  }
  return { store, url: store.url, close: () => store.close() };
}

/**
 * A store that was never set up (as opposed to one of another storage format, which a dry run
 * must report). The stores tell these apart only in their message; the CLI tests pin both.
 */
function isMissingTables(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "store-not-set-up" && /\bno statebag tables\b|\bno SQLite file\b/.test((error as Error).message);
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
  deserialize(text: string, key = ""): AgentSession {
    this.last = text;
    // The key as id: the store's id rule passes, and the command checks the text itself.
    return { id: key, stateBag: {} };
  }
}
