/**
 * Opening stores for CLI commands: the URL rules (`--store`, `$STATEBAG_STORE`, the default SQLite
 * file), the keyring of an encrypted store (`--keyring`, `$STATEBAG_KEYRING`, the config's
 * "keyring"), a read-only codec that hands commands the stored text as it is, and closing.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { Option } from "commander";
import type { TypeRegistry } from "../runtime/registry/registry.js";
import type { AgentSession } from "../runtime/core/session.js";
import { quoted } from "../runtime/core/json.js";
import { StatebagError } from "../runtime/core/errors.js";
import type { EncryptedMessageCodec, EncryptedSessionCodec } from "../runtime/stores/encryption/codec.js";
import { encryptedKeyId, isEncryptedText } from "../runtime/stores/encryption/envelope.js";
import { EncryptedStoreError } from "../runtime/stores/encryption/errors.js";
import { createKeyring, type Keyring } from "../runtime/stores/encryption/keyring.js";
import { markContextFree, usesContext } from "../runtime/stores/listing.js";
import type {
  MessageCodec,
  MessageCodecContext,
  ScanItem,
  SessionCodec,
  SessionCodecContext,
  SessionStore,
} from "../runtime/stores/types.js";
import { messageOf, storeUrl, type CommandContext } from "./context.js";
import { CliError, EXIT, type CliEnvironment } from "./io.js";

/** Where a command's keyring file may come from besides $STATEBAG_KEYRING: `--keyring`, the config's "keyring". */
export interface KeyringChoice {
  option?: string;
  /** The project config's "keyring" (already absolute). */
  configured?: string;
}

/** The `--keyring <file>` option of every command that opens a store. */
export function keyringOption(): Option {
  return new Option(
    "--keyring <file>",
    'the keyring of an encrypted store, a JSON file {"current", "keys", "store"} (default: $STATEBAG_KEYRING, else the config\'s "keyring"; without one, encrypted rows are refused)',
  );
}

/** The keyring sources of one command invocation. */
export function cliKeyring(options: { keyring?: string }, context: CommandContext): KeyringChoice {
  return { option: options.keyring, configured: context.project()?.keyring };
}

/** A loaded keyring file: the keys (derived, never printed) and the logical store name rows are bound to. */
export interface CliKeyring {
  file: string;
  keyring: Keyring;
  store: string;
  /** The key id stored owners are formed with (`encryptionCodecs`' `ownerKey`), when the file pins one. */
  ownerKey?: string;
}

const KEYRING_FIX =
  'pass --keyring <file> (or set STATEBAG_KEYRING=<file>, or "keyring" in statebag.config.json); the file is {"current": "k1", "keys": {"k1": "<32 bytes, base64>"}, "store": "<the store name your application passes to encryptionCodecs>"}';
const MAX_KEYRING_BYTES = 1024 * 1024;

/** The keyring file to use: `--keyring`, else $STATEBAG_KEYRING, else the config's; undefined when none. */
function keyringFile(
  choice: KeyringChoice | undefined,
  environment: CliEnvironment,
): { file: string; source: string } | undefined {
  if (choice?.option !== undefined) {
    if (choice.option.trim() === "")
      throw new CliError(EXIT.usage, "--keyring is empty", { fix: "pass the path of the keyring file" });
    return { file: resolve(environment.cwd, choice.option), source: "--keyring" };
  }
  const env = environment.env.STATEBAG_KEYRING;
  if (env !== undefined && env.trim() !== "")
    return { file: resolve(environment.cwd, env), source: "$STATEBAG_KEYRING" };
  if (choice?.configured !== undefined) return { file: choice.configured, source: 'the config\'s "keyring"' };
  return undefined;
}

/**
 * Reads and checks a keyring file. Errors name the file, the JSON key and key ids, never key
 * material: not even the JSON parser's message, which quotes the text around the error.
 */
export function loadCliKeyring(choice: KeyringChoice | undefined, environment: CliEnvironment): CliKeyring | undefined {
  const found = keyringFile(choice, environment);
  if (found === undefined) return undefined;
  const { file, source } = found;
  const fail = (message: string, fix: string, cause?: unknown): never => {
    throw new CliError(EXIT.usage, `the keyring file ${file} (${source}) ${message}`, {
      where: file,
      fix,
      ...(cause !== undefined ? { cause } : {}),
    });
  };
  let size: number;
  let mode: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) fail("is not a file", KEYRING_FIX);
    size = st.size;
    mode = st.mode;
  } catch (error) {
    if (error instanceof CliError) throw error;
    return fail("does not exist or cannot be read", KEYRING_FIX);
  }
  if (size > MAX_KEYRING_BYTES) fail(`is ${size} bytes: a keyring file is a small JSON object`, KEYRING_FIX);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    fail("is not valid JSON", "check the file's syntax (its contents are not printed: they are key material)");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return fail("must hold a JSON object", KEYRING_FIX);
  const spec = value as Record<string, unknown>;
  for (const key of Object.keys(spec)) {
    if (key !== "current" && key !== "keys" && key !== "store" && key !== "ownerKey" && key !== "$comment")
      fail(`has an unknown key ${quoted(key, 40)}`, 'the keys are "current", "keys", "store" and "ownerKey"');
  }
  const store = spec.store;
  if (typeof store !== "string" || store.length === 0 || store.length > 200) {
    fail(
      'has no "store": the logical store name every row is bound to (1-200 characters)',
      'add "store": the name your application passes to encryptionCodecs({ keyring, store }), e.g. "store": "sessions"',
    );
  }
  if (typeof spec.current !== "string")
    fail('has no "current": the key id new rows are written under', 'add e.g. "current": "k1" (an id in "keys")');
  if (typeof spec.keys !== "object" || spec.keys === null || Array.isArray(spec.keys))
    fail('has no "keys" object', 'add "keys": {"k1": "<32 bytes, base64>"}');
  let keyring: Keyring;
  try {
    keyring = createKeyring({ current: spec.current as string, keys: spec.keys as Record<string, string> });
  } catch (error) {
    if (!(error instanceof StatebagError)) throw error;
    return fail(`is not usable: ${messageOf(error)}`, error.hint ?? KEYRING_FIX, error);
  }
  const ownerKey = spec.ownerKey;
  if (ownerKey !== undefined && (typeof ownerKey !== "string" || !keyring.has(ownerKey)))
    fail(
      'has an "ownerKey" that is not a key id in "keys"',
      'set "ownerKey" to the key id your application passes to encryptionCodecs({ ownerKey }), or leave it out',
    );
  if (process.platform !== "win32" && (mode & 0o077) !== 0) {
    environment.stderr.write(
      `warning: the keyring file ${file} can be read by other users (mode ${(mode & 0o777).toString(8)}); restrict it: chmod 600 ${file}\n`,
    );
  }
  return { file, keyring, store: store as string, ...(ownerKey !== undefined ? { ownerKey: ownerKey as string } : {}) };
}

/** The error for an encrypted row read without a keyring: a configuration error (exit 2), never the ciphertext. */
function encryptedWithoutKeyring(what: string, url: string): CliError {
  const cause = new EncryptedStoreError(`${what} in ${url}`, KEYRING_FIX);
  return new CliError(EXIT.usage, `${what} in ${url} is encrypted, and no keyring was given`, {
    fix: KEYRING_FIX,
    cause,
  });
}

/** A session codec that refuses encrypted rows (no keyring was given) and otherwise is `inner`. */
function refuseEncryptedSessions(inner: SessionCodec, url: string): SessionCodec {
  const codec: SessionCodec = {
    serialize: (session: AgentSession, context?: SessionCodecContext) =>
      context === undefined ? inner.serialize(session) : inner.serialize(session, context),
    deserialize(text: string, key?: string, context?: SessionCodecContext): AgentSession {
      if (isEncryptedText(text)) throw encryptedWithoutKeyring(`the session ${quoted(key ?? "", 200)}`, url);
      return context === undefined ? inner.deserialize(text, key) : inner.deserialize(text, key, context);
    },
  };
  return usesContext(inner) ? codec : markContextFree(codec);
}

/** The same for message logs. */
function refuseEncryptedMessages(inner: MessageCodec, url: string): MessageCodec {
  const codec: MessageCodec = {
    serialize: (message, context?: MessageCodecContext) =>
      context === undefined ? inner.serialize(message) : inner.serialize(message, context),
    deserialize(text: string, context?: MessageCodecContext) {
      if (isEncryptedText(text))
        throw encryptedWithoutKeyring(`a message of the log ${quoted(context?.logId ?? "", 200)}`, url);
      return context === undefined ? inner.deserialize(text) : inner.deserialize(text, context);
    },
  };
  return usesContext(inner as unknown as SessionCodec) ? codec : markContextFree(codec);
}

export interface OpenedStore {
  store: SessionStore;
  /** The URL as given (password redacted by the store). */
  url: string;
  /**
   * Set when a dry run found no store to read (no SQLite file, no tables): it reads an empty
   * in-memory store instead, and this says why (for the report).
   */
  empty?: string;
  /** Set when the store was opened with a keyring: the encrypting codecs (for `migrateEncryption`). */
  encryption?: {
    codec: EncryptedSessionCodec & SessionCodec;
    messageCodec: EncryptedMessageCodec & MessageCodec;
    store: string;
    file: string;
  };
  close(): Promise<void>;
}

/** Opens the store a command was pointed at. */
export async function openCliStore(
  option: string | undefined,
  environment: CliEnvironment,
  options: {
    codec?: SessionCodec;
    registry?: TypeRegistry;
    configured?: string;
    readOnly?: boolean;
    dryRun?: boolean;
    /** `--keyring` and the config's "keyring" ($STATEBAG_KEYRING is always read). */
    keyring?: KeyringChoice;
    /** With a keyring: also read plaintext rows (the `migrate --encrypt` window only). */
    acceptPlaintext?: boolean;
  } = {},
): Promise<OpenedStore> {
  // `configured`: the project config's store URL, used after --store and $STATEBAG_STORE.
  const url = storeUrl(option, environment, options.configured);
  const cliKeyring = loadCliKeyring(options.keyring, environment);
  const { defaultSessionCodec, defaultMessageCodec } = await import("../stores.js");
  const inner =
    options.codec ?? (options.registry ? defaultSessionCodec({ registry: options.registry }) : defaultSessionCodec());
  const { redactUrl } = await import("../runtime/stores/url.js");
  let codecs: Codecs;
  let encryption: OpenedStore["encryption"];
  if (cliKeyring) {
    const { encryptionCodecs } = await import("../runtime/stores/encryption/codec.js");
    const { codec, messageCodec } = encryptionCodecs({
      keyring: cliKeyring.keyring,
      store: cliKeyring.store,
      inner,
      ...(cliKeyring.ownerKey !== undefined ? { ownerKey: cliKeyring.ownerKey } : {}),
      ...(options.acceptPlaintext ? { acceptPlaintext: true } : {}),
    });
    codecs = { codec, messageCodec };
    encryption = { codec, messageCodec, store: cliKeyring.store, file: cliKeyring.file };
  } else {
    // Without a keyring an encrypted row is a configuration error, never ciphertext read as a session.
    codecs = {
      codec: refuseEncryptedSessions(inner, redactUrl(url)),
      messageCodec: refuseEncryptedMessages(defaultMessageCodec, redactUrl(url)),
    };
  }
  const opened = options.dryRun
    ? await openForDryRun(url, codecs)
    : await openPlain(url, codecs, options.readOnly === true);
  return encryption ? { ...opened, encryption } : opened;
}

interface Codecs {
  codec: SessionCodec;
  messageCodec: MessageCodec;
}

async function openPlain(url: string, codecs: Codecs, readOnly: boolean): Promise<OpenedStore> {
  const { openStore } = await import("../stores.js");
  // readOnly: commands that only read open a SQLite file read-only (it may sit on a read-only mount).
  const store = await openStore(url, { ...codecs, ...(readOnly ? { readOnly: true } : {}) });
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
async function openForDryRun(url: string, codecs: Codecs): Promise<OpenedStore> {
  const { openStore } = await import("../stores.js");
  const { redactUrl } = await import("../runtime/stores/url.js");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  const empty = async (reason: string): Promise<OpenedStore> => {
    const store = await openStore("memory:", codecs);
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
    store = await openStore(url, { ...codecs, ...(readOnly ? { readOnly: true } : {}) });
    // PostgreSQL connects on the first call: one small read finds a schema without tables.
    if (scheme === "postgres" || scheme === "postgresql") await store.scan({ limit: 1 });
  } catch (error) {
    await store?.close().catch(() => undefined);
    if (isMissingTables(error))
      return empty(
        scheme === "sqlite"
          ? "the SQLite file has no statebag tables yet"
          : "the store has no statebag tables yet (statebag store setup creates them)",
      );
    throw error;
  }
  return { store, url: store.url, close: () => store.close() };
}

/**
 * A store that was never set up (as opposed to one of another storage format, which a dry run
 * must report). The stores tell these apart only in their message; the CLI tests pin both.
 */
function isMissingTables(error: unknown): boolean {
  return (
    (error as { code?: unknown })?.code === "store-not-set-up" &&
    /\bno statebag tables\b|\bno SQLite file\b/.test((error as Error).message)
  );
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

/**
 * For `statebag migrate` (type migrations) on an encrypted store: the inner codec of the
 * encrypting one. Reading hands over the decrypted text and returns a placeholder (the bulk
 * migration loads the text itself, reporting every migrated value); writing is the real codec's.
 */
export class PlaintextCapture implements SessionCodec {
  #last: { key: string; text: string } | undefined;
  constructor(private readonly real: SessionCodec) {}
  serialize(session: AgentSession, context?: SessionCodecContext): string {
    return context === undefined ? this.real.serialize(session) : this.real.serialize(session, context);
  }
  deserialize(text: string, key = ""): AgentSession {
    this.#last = { key, text };
    return { id: key, stateBag: {} };
  }
  /** The decrypted text `store.get(key)` just read (consumed). */
  take(key: string): string | undefined {
    const last = this.#last;
    this.#last = undefined;
    return last?.key === key ? last.text : undefined;
  }
}

/**
 * `migrateStore`'s `readText` for a CLI store: with a keyring, each session's decrypted text and
 * the revision it was read at, through `store.get` (which binds the row's owner); the
 * compare-and-swap save is then on that revision. Without one, an encrypted row stops the run.
 */
export function scanTextReader(
  opened: OpenedStore,
  capture: PlaintextCapture,
): (item: ScanItem) => Promise<ScanItem | undefined> {
  if (!opened.encryption) {
    return async (item) => {
      if (typeof item.text === "string" && isEncryptedText(item.text))
        throw encryptedWithoutKeyring(`the session ${quoted(item.id, 200)}`, opened.url);
      return item;
    };
  }
  return async (item) => {
    const stored = await opened.store.get(item.id);
    if (stored === undefined) return undefined;
    const text = capture.take(item.id);
    if (text === undefined)
      throw new CliError(
        EXIT.runtime,
        `the store did not read the session ${quoted(item.id, 200)} through the keyring's codec`,
      );
    return { ...item, text, revision: stored.revision };
  };
}

/** The key id of an encrypted stored text (undefined for plaintext), for reports. */
export function storedKeyId(text: string): string | undefined {
  return encryptedKeyId(text);
}
