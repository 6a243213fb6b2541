/**
 * The codecs stores use by default. Sessions go through statebag's serializer (full validation on
 * write, migrations on read); a store never calls JSON.stringify/parse on a session itself.
 */
import { StatebagError } from "../core/errors.js";
import { describeValue, quoted, shortPointer } from "../core/json.js";
import type { ChatMessage } from "../core/messages.js";
import type { TypeRegistry } from "../registry/registry.js";
import { formatProblems, type ValidationProblem } from "../core/problems.js";
import type { JsonLimits } from "../json/safe-json.js";
import {
  SessionValidationError,
  deserializeMessage,
  deserializeSession,
  serializeMessage,
} from "../persistence/serialization.js";
import { writeSession } from "../persistence/save.js";
import type { AgentSession } from "../core/session.js";
import { isTaggedValue } from "../core/tagged.js";
import { markContextFree } from "./listing.js";
import { noteMigrations } from "../core/tracing-hooks.js";
import type { MessageCodec, MessageCodecContext, SessionCodec, SessionCodecContext } from "./types.js";
import { WrittenTexts, type WrittenCacheOptions } from "./written-texts.js";

export interface SessionCodecOptions {
  /** The types sessions may hold (default: statebag's `defaultRegistry()`). */
  registry?: TypeRegistry;
  /** Refuse unknown `$type`s and newer versions instead of keeping them verbatim (default false). */
  strict?: boolean;
  /** Also read bare `JSON.stringify(session)` documents with no envelope (default false). */
  allowBare?: boolean;
  /** Parse limits, applied alike when saving and when loading (default: `DEFAULT_JSON_LIMITS`). */
  limits?: JsonLimits;
  /**
   * Load with `deserializeSession(text, { quarantine: true })`: a value that fails validation or
   * migration is set aside in `session.quarantine` instead of making the session unloadable, and
   * saves write it back unchanged (default false).
   */
  quarantine?: boolean;
  /**
   * The texts this codec wrote recently, kept to recognize a row read back unchanged: such a read
   * is parsed but not checked again (its every value was checked when it was written, under the
   * same registry and limits), which is most of what a chat turn's load costs besides the parse.
   * Any other text is checked in full. Bounded by characters (default 16 Mi) and by age (default
   * 5 minutes: the text of a deleted session stays in this process's memory no longer); `false`
   * keeps nothing and checks every read (default: on).
   */
  writtenCache?: WrittenCacheOptions;
}

/** Thrown by the fallback codecs for a value that is not a storable session or message. */
export class InvalidStoredValueError extends StatebagError {
  constructor(what: string, problem: string, pointer: string) {
    super("session-invalid", `${what} is not storable: ${problem} at "${pointer}"`, {
      hint: "fix the value before saving; stores refuse to write invalid data",
    });
  }
}

/**
 * A stored session whose id is not the key it is stored under (a row copied, renamed or written by
 * another program). Loading it would hand the caller a session that saves under another key, so
 * every load refuses it: `store.get`, `withSession`, bulk migrations and `statebag inspect`.
 * `key` and `documentId` keep the exact values; the message shows them escaped and cut.
 */
export class StoredSessionIdError extends StatebagError {
  /** Where the id is in the stored (envelope) document. */
  readonly pointer = "/session/id";
  constructor(
    readonly key: string,
    readonly documentId: unknown,
    /** The store, as its (password-free) URL, when known. */
    readonly store?: string,
  ) {
    super("session-invalid", storedIdMessage(key, documentId, store), { hint: storedIdHint(key, documentId) });
  }

  /** The same finding as a validation problem, for reports that list problems (`statebag inspect`). */
  toProblem(): ValidationProblem {
    return {
      code: "session",
      pointer: this.pointer,
      expected: `the key it is stored under, ${quoted(this.key)}`,
      found: shownId(this.documentId),
      message: storedIdMessage(this.key, this.documentId, this.store),
      hint: storedIdHint(this.key, this.documentId),
    };
  }
}

function shownId(id: unknown): string {
  return typeof id === "string" ? quoted(id) : describeValue(id);
}

function storedIdMessage(key: string, documentId: unknown, store: string | undefined): string {
  return `the session stored under the key ${quoted(key)}${store ? ` in ${store}` : ""} has the id ${shownId(documentId)}; a stored session's id must be its key`;
}

function storedIdHint(key: string, documentId: unknown): string {
  const other = typeof documentId === "string" ? ` ${quoted(documentId)}` : "";
  return `the row was written or copied under another key (statebag saves a session under its own id): delete the row ${quoted(key)}, or save the document under its own id${other}`;
}

/**
 * The one load rule for stored sessions: the document under `key` must be the session with that
 * id. Throws `StoredSessionIdError` otherwise.
 */
export function checkStoredSessionId(key: string, session: { id?: unknown } | undefined, store?: string): void {
  const id = session?.id;
  if (id !== key) throw new StoredSessionIdError(key, id, store);
}

/**
 * How every store loads a session row: the codec's `deserialize`, then the id rule. The codec gets
 * the key too, so a codec that does not read documents (the CLI's raw-text codec) can answer with it.
 */
export function loadStoredSession(
  codec: SessionCodec,
  key: string,
  row: string | Uint8Array,
  store?: string,
  context?: SessionCodecContext,
): AgentSession {
  let session: AgentSession;
  const binary = binaryRowsOf(codec);
  if (binary !== undefined) session = binary.deserializeRow(row, key, context);
  else {
    const text = storedText(row);
    session = context === undefined ? codec.deserialize(text, key) : codec.deserialize(text, key, context);
  }
  checkStoredSessionId(key, session, store);
  return session;
}

/**
 * A codec whose rows the built-in stores keep as bytes (SQLite BLOB, PostgreSQL bytea, Redis
 * binary string): the encrypting session codec (a binary row: a fixed header and the ciphertext).
 * `serialize`/`deserialize` stay the text forms for stores that keep text. @internal
 */
export interface BinaryRowCodec {
  /**
   * The row to store, as bytes. With `transient`, the bytes may be a view of a buffer the codec
   * reuses for its next transient row: only for a store that writes them before anything else runs
   * and keeps no reference (see `serializeRow`).
   */
  serializeRow(session: AgentSession, context?: SessionCodecContext, transient?: boolean): Buffer;
  /** A stored row: bytes as stored, or text (rows written before, or by a text store). */
  deserializeRow(row: string | Uint8Array, key: string, context?: SessionCodecContext): AgentSession;
}

/** The codec's binary rows, when it writes them. @internal */
export function binaryRowsOf(codec: SessionCodec): BinaryRowCodec | undefined {
  const candidate = codec as Partial<BinaryRowCodec>;
  return typeof candidate.serializeRow === "function" && typeof candidate.deserializeRow === "function"
    ? (candidate as BinaryRowCodec)
    : undefined;
}

/**
 * What a store writes for a session: bytes for a codec of binary rows, else the codec's text.
 * `transient: true` lets the codec build the bytes in a buffer it reuses (no allocation of a
 * session's size per save): the row is then valid only until the next transient row is made, so
 * only a store that hands it to a synchronous write at once and keeps no reference may ask for it
 * (SQLite, inside its write transaction). A store that sends the row later (a network client that
 * may queue it) must not. @internal
 */
export function serializeRow(
  codec: SessionCodec,
  session: AgentSession,
  context?: SessionCodecContext,
  transient = false,
): string | Buffer {
  const binary = binaryRowsOf(codec);
  if (binary !== undefined) return binary.serializeRow(session, context, transient);
  return context === undefined ? codec.serialize(session) : codec.serialize(session, context);
}

/**
 * A stored row as text (a scan's `text`): text as it is; bytes as a binary string (one character
 * per byte), which the codec of binary rows reads back. @internal
 */
export function storedText(row: string | Uint8Array): string {
  if (typeof row === "string") return row;
  return Buffer.from(row.buffer, row.byteOffset, row.length).toString("latin1");
}

function checkSession(value: unknown): AgentSession {
  const fail = (problem: string, pointer: string) => {
    throw new InvalidStoredValueError("session", problem, pointer);
  };
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail("expected an object", "");
  const session = value as Record<string, unknown>;
  if (typeof session.id !== "string" || session.id.length === 0) fail("id must be a non-empty string", "/id");
  if (session.kind !== undefined && session.kind !== "local" && session.kind !== "hosted")
    fail('kind must be "local" or "hosted"', "/kind");
  if (session.conversationId !== undefined) {
    const conversationId = session.conversationId;
    const ok =
      typeof conversationId === "string" ||
      (typeof conversationId === "object" &&
        conversationId !== null &&
        !Array.isArray(conversationId) &&
        Object.values(conversationId).every((v) => typeof v === "string"));
    if (!ok) fail("conversationId must be a string or an object of strings", "/conversationId");
  }
  const bag = session.stateBag;
  if (typeof bag !== "object" || bag === null || Array.isArray(bag)) fail("stateBag must be an object", "/stateBag");
  for (const [key, state] of Object.entries(bag as object)) {
    if (!isTaggedValue(state)) fail('each state must be an object with a string "$type"', `/stateBag/${key}`);
  }
  return value as AgentSession;
}

/**
 * Structural check + bare JSON, with no registry: for tests and tools that must not depend on the
 * registry. Stores use `defaultSessionCodec()`.
 */
export const structuralSessionCodec: SessionCodec = markContextFree({
  serialize(session) {
    checkSession(session);
    return JSON.stringify(session);
  },
  deserialize(text) {
    return checkSession(JSON.parse(text));
  },
} satisfies SessionCodec);

/**
 * The codec a store uses when none is given: `serializeSession(session, { validate: true })`
 * (every tagged value validated, so nothing is stored that could not be loaded again) and
 * `deserializeSession(text)` (safe parse, envelope check, migrations, validation).
 */
export function defaultSessionCodec(options: SessionCodecOptions = {}): SessionCodec {
  const { registry, strict, allowBare, limits, quarantine } = options;
  const written = options.writtenCache === false ? undefined : new WrittenTexts(options.writtenCache);
  // One set of options for both directions: whatever serialize accepts, deserialize reads back.
  // The codec context (owner) is accepted and ignored.
  return markContextFree<SessionCodec>({
    serialize: (session) => {
      const { text, current } = writeSession(session, { validate: true, registry, strict, limits });
      // Only a text the fused check accepted loads back as it is; a session's key is its id.
      if (written !== undefined) {
        if (current) written.remember(session.id, text);
        else written.forget(session.id);
      }
      return text;
    },
    deserialize: (text, key) => {
      if (key !== undefined && written?.holds(key, text))
        return (JSON.parse(text) as { session: AgentSession }).session;
      return deserializeSession(text, { registry, strict, allowBare, limits, quarantine, onMigrated: noteMigrations });
    },
  });
}

export interface MessageCodecOptions {
  /** The types messages may hold (default: statebag's `defaultRegistry()`). */
  registry?: TypeRegistry;
  /** Refuse unknown content `$type`s and newer versions instead of keeping them verbatim (default false). */
  strict?: boolean;
  /** Parse limits, applied alike when saving and when loading (default: a session's, `DEFAULT_JSON_LIMITS`). */
  limits?: JsonLimits;
}

/**
 * A message-log row that cannot be read (or a message that cannot be written): which log, which
 * position when the store knows it, where in the message (`pointer`, RFC 6901 from the message)
 * and every problem, as a session load reports them. Never holds the row's text.
 */
export class InvalidStoredMessageError extends StatebagError {
  /** The pointer of the first problem, from the message root. */
  readonly pointer: string;
  readonly problems: readonly ValidationProblem[];
  constructor(
    readonly direction: "read" | "write",
    readonly logId: string | undefined,
    readonly seq: number | undefined,
    readonly validation: SessionValidationError,
    /** On a write: the message's place in the batch appended (nothing of the batch was written). */
    readonly batch?: { index: number; of: number },
  ) {
    const first = validation.problems[0];
    const pointer = first?.pointer ?? "";
    const shown = shortPointer(pointer);
    const where = `${logId === undefined ? "a message log" : `message log ${quoted(logId)}`}${seq === undefined ? "" : ` at position ${seq}`}`;
    const which = batch === undefined ? "a message" : `message ${batch.index} of ${batch.of}`;
    const summary =
      direction === "read"
        ? `a message in ${where} cannot be read (at "${shown}" in the message)`
        : `${which} for ${where} cannot be written (at "${shown}" in the message)`;
    const detail = formatProblems(validation.problems, 20, validation.problemCount);
    super("invalid-message", `${summary}: ${detail}`, {
      cause: validation,
      hint:
        direction === "read"
          ? "fix the row at the pointers listed; the rest of the log is intact: read the newer messages with getMessages(id, { last }) or readMessageWindow, or rewrite the log with replaceMessages (or drop the older ones with trimMessages)"
          : "fix the message at the pointers listed; stores refuse to write what could not be read back",
    });
    this.pointer = pointer;
    this.problems = validation.problems;
  }
}

/**
 * A message codec: messages are held to exactly what a message in a stored session's history is
 * held to, on write and on read (JSON limits, duplicate keys, every content validated, older
 * contents migrated, unknown `$type`s kept or, with `strict`, refused). Invalid rows throw
 * `InvalidStoredMessageError`; the codec context (log id, position) names the row.
 */
export function messageCodec(options: MessageCodecOptions = {}): MessageCodec {
  const { registry, strict, limits } = options;
  const rethrow = (direction: "read" | "write", error: unknown, context: MessageCodecContext | undefined): never => {
    if (error instanceof SessionValidationError)
      throw new InvalidStoredMessageError(direction, context?.logId, context?.seq, error);
    throw error;
  };
  return {
    serialize(message, context) {
      try {
        return serializeMessage(message, { registry, strict, limits });
      } catch (error) {
        return rethrow("write", error, context);
      }
    },
    deserialize(text, context) {
      try {
        return deserializeMessage(text, { registry, strict, limits, onMigrated: noteMigrations }) as ChatMessage;
      } catch (error) {
        return rethrow("read", error, context);
      }
    },
  };
}

/** The message codec stores use when none is given: `messageCodec()` (default registry and limits). */
export const defaultMessageCodec: MessageCodec = messageCodec();

/** Serializes a batch of messages, naming the index of a refused one. */
export function serializeMessages(
  codec: MessageCodec,
  messages: readonly ChatMessage[],
  context?: MessageCodecContext,
): string[] {
  if (!Array.isArray(messages)) throw new InvalidStoredValueError("message list", "expected an array", "");
  return messages.map((m, i) => {
    try {
      return context === undefined ? codec.serialize(m) : codec.serialize(m, context);
    } catch (error) {
      // The codec's own typed error, with the message's place in the batch.
      if (error instanceof InvalidStoredMessageError)
        throw new InvalidStoredMessageError("write", error.logId, error.seq, error.validation, {
          index: i,
          of: messages.length,
        });
      const reason = error instanceof Error ? error.message : String(error);
      throw new StatebagError("invalid-message", `chat message ${i} of ${messages.length} was refused: ${reason}`, {
        cause: error,
      });
    }
  });
}
