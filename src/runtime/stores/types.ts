/**
 * The session store contract. A store keeps each session as one serialized document under its
 * id, with a revision for compare-and-swap, so two requests working on the same session can never
 * silently overwrite each other (the lost update LangGraph and Mastra stores allow).
 *
 * Every backend (memory, SQLite, PostgreSQL, Redis) passes the same conformance suite
 * (test/stores/conformance.test.ts).
 */
import type { AgentSession } from "../core/session.js";
import type { ChatMessage } from "../core/messages.js";
import type { BlobStore } from "../blobs/blob-store.js";
import type { StreamBuffer } from "./stream-buffer.js";

/**
 * Turns a session into stored text and back. `serialize` must validate (a store never writes an
 * invalid session); `deserialize` must migrate older documents to the current shape. Both run
 * outside any transaction or lock, except that the SQLite store calls a codec that uses its
 * context (any codec but statebag's defaults) inside its write transaction, where the revision
 * of the row it writes is drawn.
 */
export interface SessionCodec {
  /** `context`: what the store knows about the row besides the session (its owner), when it knows it. */
  serialize(session: AgentSession, context?: SessionCodecContext): string;
  /**
   * `key`: the id the text is stored under, when a store loads a row. The store then checks that
   * the returned session has that id (a codec need not). `context`: the row's owner, as given to
   * `serialize` when the row was written.
   */
  deserialize(text: string, key?: string, context?: SessionCodecContext): AgentSession;
}

/**
 * What a store passes a `SessionCodec` besides the session, for example as the associated data of
 * an encrypting codec (so a body copied to another owner's row no longer decrypts). The same
 * values on write and on the matching read.
 */
export interface SessionCodecContext {
  /** The row's owner (`SessionMeta.owner`); absent for an unowned session. */
  owner?: string;
  /**
   * The revision the row is written under (`serialize`) or stored at (`deserialize`), when the
   * store knows it: every built-in store passes it, so an encrypting codec binds it and an older
   * body copied back over a newer row of the same session no longer opens. (A codec given it on
   * `serialize` sees the revision the save will commit if it succeeds.)
   */
  revision?: number;
}

/** The same for one chat message of a message log. */
export interface MessageCodec {
  serialize(message: ChatMessage, context?: MessageCodecContext): string;
  deserialize(text: string, context?: MessageCodecContext): ChatMessage;
}

/** What a store passes a `MessageCodec` besides the message. */
export interface MessageCodecContext {
  /** The message log's storage id. */
  logId: string;
  /**
   * The message's position in the log, when the store keeps one and knows it at that point
   * (stores differ: absent means "not known", never "0").
   */
  seq?: number;
}

/**
 * Store metadata kept beside the session, outside the state bag, in indexed columns or structures
 * (never parsed out of the stored body): who the session belongs to, and what to show in a list.
 */
export interface SessionMeta {
  /**
   * The tenant (user, account) the session belongs to. Set when the session is created and never
   * changed afterwards: a save naming another owner is refused (`SessionOwnerError`). Absent: an
   * unowned session, which no `list` call returns.
   */
  owner?: string;
  /** A display title. */
  title?: string;
  /** Free-form string labels, filterable by `list` (all given labels must match). */
  labels?: Readonly<Record<string, string>>;
}

/** Metadata as stored: `SessionMeta` plus the times the store set (ISO 8601, UTC, millisecond precision). */
export interface StoredSessionMeta extends SessionMeta {
  /** When the session was first saved (for sessions stored before metadata existed: their first save since). */
  createdAt: string;
  /** When the session was last saved. */
  updatedAt: string;
}

/** A loaded session and the revision it was loaded at (pass it back as `expectedRevision`). */
export interface StoredSession {
  session: AgentSession;
  /** Monotonically increasing integer; a newer save of the same id always has a greater one. */
  revision: number;
  /** The store's metadata of the session. */
  meta: StoredSessionMeta;
}

export interface SaveOptions {
  /**
   * The revision this save replaces: the one `get` returned. `null` means "the session must not
   * exist yet" (create-if-absent). Leaving it out means the same as `null`: a store never
   * overwrites blindly. A mismatch throws `ConflictError` and writes nothing.
   */
  expectedRevision: number | null;
  /** Time to live of this revision, in milliseconds (absent: kept until deleted). */
  ttlMs?: number;
  /**
   * Metadata. On create: sets owner, title and labels. On update: an omitted field keeps its
   * stored value; a given `title` or `labels` replaces it (`labels: {}` clears them); an `owner`
   * other than the stored one (including an owner for an unowned session) is refused with
   * `SessionOwnerError` and nothing is written: a session never changes tenant.
   */
  meta?: SessionMeta;
}

export interface DeleteOptions {
  /** Delete only if the stored revision is this one (else `ConflictError`). Absent: delete whatever is there. */
  expectedRevision?: number;
}

export interface ScanOptions {
  /** The `cursor` of the previous page; absent for the first page. Opaque. */
  cursor?: string;
  /** Page size, 1..1000 (default 100). */
  limit?: number;
  /** Also return each session's stored text (for migrations and tools). */
  includeText?: boolean;
}

export interface ScanItem {
  id: string;
  revision: number;
  /** The stored text, exactly as written, when `includeText` was set. */
  text?: string;
  /**
   * With `includeText`: the session's remaining time to live in milliseconds, when it was saved
   * with a `ttlMs` (absent: kept until deleted). A rewrite (a bulk migration) passes it back to
   * `save` so the session expires when it would have.
   */
  ttlMs?: number;
  /**
   * The session's store metadata (owner, title, labels, createdAt, updatedAt), from the store's
   * columns or structures, never parsed out of the body: a bulk tool passes `meta.owner` on to a
   * codec that binds the owner, and retention reads the times. Every built-in store sets it.
   */
  meta?: StoredSessionMeta;
  /**
   * Set when the store protects owners and titles (an encrypting codec) and this row still holds
   * its owner or title in plaintext (written before): `migrate --reencrypt` rewrites it.
   */
  plaintextMeta?: boolean;
}

export interface ScanPage {
  /** Sessions in ascending id order (binary order of the id's UTF-8 bytes on SQL/Redis stores). */
  items: ScanItem[];
  /** Pass to the next `scan` call; absent when this is the last page. */
  cursor?: string;
}

/**
 * What `list` returns: one owner's sessions, a page at a time, from the metadata alone (bodies are
 * never loaded).
 *
 * Consistency under concurrent writes: a session that exists, unchanged, for the whole listing is
 * returned exactly once (never skipped, never repeated). A session saved during the listing is
 * returned at most once under `order: "updatedAt desc"` (it moves ahead of the cursor and may be
 * missed) and exactly once under `order: "id"` as long as it exists for the whole listing; a
 * session created or deleted during the listing may or may not appear.
 */
export interface ListOptions {
  /** Whose sessions (required: a listing never crosses owners; unowned sessions are listed by none). */
  owner: string;
  /** Only sessions carrying all these labels with these values. */
  labels?: Readonly<Record<string, string>>;
  /** Only sessions last saved strictly before this instant (ISO 8601). */
  updatedBefore?: string;
  /** Only sessions last saved strictly after this instant (ISO 8601). */
  updatedAfter?: string;
  /** Newest first (default; ties by id), or ascending id (the order `scan` uses). */
  order?: "updatedAt desc" | "id";
  /** The `cursor` of the previous page (same options otherwise); absent for the first page. Opaque. */
  cursor?: string;
  /** Page size, 1..1000 (default 100). */
  limit?: number;
}

export interface ListItem {
  id: string;
  revision: number;
  meta: StoredSessionMeta;
  /** Remaining time to live in milliseconds, when saved with a `ttlMs`. */
  ttlMs?: number;
}

export interface ListPage {
  items: ListItem[];
  /** Pass to the next `list` call; absent when this is the last page. */
  cursor?: string;
}

export interface SetupResult {
  /** The store's own storage-format version after setup. */
  version: number;
  /** True when this call created or upgraded something. */
  changed: boolean;
}

export type StoreKind = "memory" | "sqlite" | "postgres" | "redis";

/**
 * How long a session is kept: it is removed by `purgeExpired()` once it is older than `maxAgeMs`
 * (counted from `meta.createdAt`) or idle for longer than `maxIdleMs` (counted from
 * `meta.updatedAt`). A rule with neither keeps sessions until deleted (an exemption).
 */
export interface RetentionRule {
  maxAgeMs?: number;
  maxIdleMs?: number;
}

/** A retention rule for the sessions carrying all of `match`'s labels. */
export interface LabelRetentionRule extends RetentionRule {
  match: Readonly<Record<string, string>>;
}

/**
 * Retention by owner and label. For each session the first rule that applies wins: the rule of its
 * owner (`owners[meta.owner]`), else the first of `labels` whose `match` labels it all carries,
 * else `default` (absent: kept).
 */
export interface RetentionPolicy {
  default?: RetentionRule;
  owners?: Readonly<Record<string, RetentionRule>>;
  labels?: readonly LabelRetentionRule[];
}

/** A store's retention: one rule for every session, or a policy by owner and label. */
export type RetentionOptions = RetentionRule | RetentionPolicy;

/**
 * What `eraseOwner` returns once nothing of the owner is left: a record an app can keep of an
 * erasure request, naming the owner only by its SHA-256 (so the record holds no personal id).
 */
export interface EraseReceipt {
  /** SHA-256 of the owner id (UTF-8), lowercase hex. */
  owner: string;
  /** Sessions this call removed (a re-run after an interrupted one counts only what was left). */
  sessions: number;
  /** Message logs this call removed (each session's log, and any other log its stored history named). */
  messageLogs: number;
  /**
   * Stream buffers (`store.streams`: running or kept replies) of the erased sessions this call
   * removed. Every built-in store sets it; absent from a store without stream buffers.
   */
  streams?: number;
  /** Blobs (files of the owner's chats, `store.blobs`) this call removed, and their bytes. Set by a store with a blob store. */
  blobs?: number;
  blobBytes?: number;
  /** ISO 8601. */
  startedAt: string;
  finishedAt: string;
  /** Always true: `eraseOwner` returns only once the owner has no session left (otherwise it throws; run it again). */
  complete: true;
}

export interface EraseOptions {
  /** Called after each removed session with the counts so far. */
  onProgress?: (progress: { sessions: number; messageLogs: number; streams?: number }) => void;
}

/**
 * History kept outside the session, in the store (for long conversations or apps that keep only an id): an
 * append-only log of chat messages per storage id, idempotent per operation id, with whole-log
 * replacement and trimming for history reduction.
 *
 * Every mutation gives the log a new `version` (monotonically increasing; 0 means an empty log
 * that was never written or was deleted). Pass a version you read as `expectedVersion` to
 * `replaceMessages`/`trimMessages` so a reducer never drops messages appended after it read.
 */
export interface MessageLog {
  /**
   * Appends `messages` (in order) at the end of the log, atomically. A second call with the same
   * `operationId` for the same `storageId` changes nothing and returns `applied: false`, so an
   * append can be retried safely after a timeout. Operation ids are kept until `deleteMessages`.
   */
  appendMessages(storageId: string, messages: readonly ChatMessage[], options: AppendOptions): Promise<AppendResult>;
  /** The log's messages, oldest first (`last`: only the newest `last` of them). Empty when absent. */
  getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]>;
  /** The messages and the version they were read at, from one consistent read. */
  readMessages(storageId: string): Promise<MessageLogSnapshot>;
  /**
   * Part of the log, with its version and length, from one consistent read: the newest `last`
   * messages, or those at positions `from` and after (see `MessageLogWindow.end`). A history that
   * shows the model a window, or keeps a decoded log warm, reads this instead of the whole log.
   * Optional: callers fall back to `readMessages` when a log does not have it.
   */
  readMessageWindow?(storageId: string, options: MessageWindowOptions): Promise<MessageLogWindow>;
  /**
   * `count` messages from index `start` (0: the oldest message the log holds; fewer at the log's
   * end), with the log's version and length, from one consistent read. A branched history reads
   * its active path with it, run by run: only those messages, whatever the log's length. Indexes
   * stay put while the log is only appended to. Optional: callers fall back to `readMessages`.
   */
  readMessageRange?(storageId: string, range: MessageRange): Promise<MessageLogWindow>;
  /** Replaces the whole log (a reduction: summary + recent messages). Returns the new version. */
  replaceMessages(storageId: string, messages: readonly ChatMessage[], options?: ReplaceOptions): Promise<number>;
  /** Keeps only the newest `keepLast` messages; returns how many were removed. */
  trimMessages(storageId: string, options: TrimOptions): Promise<number>;
  /** Removes the log, its messages and its recorded operation ids. Returns whether it existed. */
  deleteMessages(storageId: string): Promise<boolean>;
}

export interface AppendOptions {
  /** Unique per logical append (for example the run or turn id): retries reuse it. */
  operationId: string;
}

export interface AppendResult {
  /** False when this operation id was already applied (nothing was appended). */
  applied: boolean;
  /** The log's version after this append (the current version when not applied). */
  version: number;
}

export interface MessageLogSnapshot {
  messages: ChatMessage[];
  version: number;
}

/** Exactly one of `last` and `from`. */
export interface MessageWindowOptions {
  /** The newest `last` messages. */
  last?: number;
  /** The messages at positions `from` and after (positions as `MessageLogWindow.end` counts them). */
  from?: number;
}

/** Messages `start` to `start + count - 1` of a log, by index from its oldest message. */
export interface MessageRange {
  start: number;
  count: number;
}

export interface MessageLogWindow extends MessageLogSnapshot {
  /** How many messages the whole log holds (the window may hold fewer). */
  length: number;
  /**
   * The position after the log's newest message: how many messages appends and replacements have
   * written to the log since it was created, so the log holds positions `end - length` to
   * `end - 1`. Appends move it forward by what they add; trims and replacements never renumber
   * the messages that stay; it starts again at 0 after `deleteMessages`. Undefined when the
   * backend keeps no positions (Redis): `from` then reads the whole log.
   */
  end?: number;
}

export interface ReplaceOptions {
  /** Replace only if the log is still at this version (else `ConflictError`). */
  expectedVersion?: number;
  /** Makes the replacement idempotent like an append (a repeat returns the current version). */
  operationId?: string;
}

export interface TrimOptions {
  keepLast: number;
  expectedVersion?: number;
}

export interface SessionStore {
  readonly kind: StoreKind;
  /** Where the store points, with any password replaced by `***` (safe to log). */
  readonly url: string;
  /** The chat message log kept in the same backend. */
  readonly messages: MessageLog;
  /**
   * Buffers of running replies (resumable streams) kept in the same backend. Every built-in store
   * has one; a store without it gives the chat server no cross-process resume or stop.
   */
  readonly streams?: StreamBuffer;
  /**
   * Files (images, PDFs, audio) kept once beside the sessions, by SHA-256 and owner, in the same
   * backend (encrypted when the sessions are). Every built-in store has one; see `BlobStore`.
   */
  readonly blobs?: BlobStore;
  /** What `purgeExpired()` removes besides TTL-expired sessions (`openStore(url, { retention })`, `?retentionMaxAge=`). */
  readonly retention?: RetentionPolicy;

  /** Creates or upgrades the store's tables. Explicit for PostgreSQL; SQLite does it on open; a no-op elsewhere. */
  setup(): Promise<SetupResult>;
  /** The session and its revision, or `undefined` when absent (or expired). Migrates on load. */
  get(id: string): Promise<StoredSession | undefined>;
  /**
   * Validates and serializes `session`, then writes it under `session.id` if the stored revision
   * is still `expectedRevision` (`null`: only if absent). Returns the new revision, or throws
   * `ConflictError` carrying the current one; nothing is written on any error.
   */
  save(session: AgentSession, options: SaveOptions): Promise<number>;
  /** Deletes a session and its stream buffers; returns whether a session was there. */
  delete(id: string, options?: DeleteOptions): Promise<boolean>;
  /** One page of stored sessions, for migrations and tools. Expired sessions are skipped. */
  scan(options?: ScanOptions): Promise<ScanPage>;
  /**
   * One page of one owner's sessions with their metadata (never their bodies), newest first or by
   * id, filtered by labels and update time. Expired sessions are skipped. See `ListOptions` for
   * what a listing guarantees while others write.
   */
  list(options: ListOptions): Promise<ListPage>;
  /**
   * Removes expired sessions now (they are already invisible), and, when the store has a
   * `retention`, the sessions it no longer keeps (with their message logs and stream buffers);
   * returns how many sessions. Expired stream buffers go too (`streams.purgeExpired`, not counted).
   */
  purgeExpired(): Promise<number>;
  /**
   * Removes every session of `owner` (found as `list` finds them), each session's message log and
   * any other log its stored history names, its stream buffers, and the owner's index entries. Tool-approval records
   * live in the sessions and go with them. Idempotent: an interrupted call leaves a consistent
   * store, and running it again finishes the work. Returns once nothing of the owner is left.
   * Sessions the owner creates while it runs may survive it: stop the owner's traffic first.
   */
  eraseOwner(owner: string, options?: EraseOptions): Promise<EraseReceipt>;
  /** Releases connections. The store must not be used afterwards. */
  close(): Promise<void>;
}
