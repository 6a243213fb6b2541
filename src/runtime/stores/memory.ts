/**
 * In-process store for tests and ephemeral apps. It keeps serialized text, not objects, so a
 * caller can never mutate a stored session through a shared reference and every load migrates and
 * validates exactly like the durable stores do.
 */
import { StatebagError } from "../core/errors.js";
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import {
  defaultMessageCodec,
  defaultSessionCodec,
  loadStoredSession,
  serializeMessages,
  serializeRow,
  storedText,
} from "./codec.js";
import {
  checkDelete,
  checkId,
  checkLast,
  checkOperationId,
  checkReplace,
  checkSave,
  checkScan,
  checkTrim,
  compareIds,
  scanItem,
  scanPage,
  sessionId,
} from "./common.js";
import { ConflictError, SessionOwnerError, logConflict } from "./errors.js";
import { checkRange, checkWindow } from "./window.js";
import { eraseOwnerSessions } from "./erasure.js";
import {
  checkList,
  checkMeta,
  encodeCursor,
  labelsMatch,
  metaProtectionOf,
  plaintextMeta,
  plaintextOwnerError,
  readMeta,
  storedMeta,
  usesContext,
} from "./listing.js";
import { checkRetention, purgeRetention } from "./retention.js";
import { MemoryStreamBuffer } from "./memory-stream-buffer.js";
import { chunkCodec } from "./stream-common.js";
import type { BlobOptions, BlobStore } from "../blobs/blob-store.js";
import { MemoryBlobBackend } from "../blobs/memory.js";
import { storeBlobs } from "./blobs.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  EraseOptions,
  EraseReceipt,
  ListItem,
  ListOptions,
  ListPage,
  MessageCodec,
  MessageLog,
  MessageLogSnapshot,
  MessageLogWindow,
  MessageRange,
  MessageWindowOptions,
  ReplaceOptions,
  RetentionOptions,
  RetentionPolicy,
  SaveOptions,
  ScanOptions,
  ScanPage,
  SessionCodec,
  SessionStore,
  SetupResult,
  StoredSession,
  TrimOptions,
} from "./types.js";

export interface MemoryStoreOptions {
  codec?: SessionCodec;
  messageCodec?: MessageCodec;
  /** What `purgeExpired()` removes besides expired sessions. */
  retention?: RetentionOptions;
  /** The budgets and chunk size of `store.blobs` (kept in memory too). */
  blobs?: BlobOptions;
}

interface Row {
  revision: number;
  text: string;
  expiresAt: number | undefined;
  owner: string | undefined;
  title: string | undefined;
  labels: Record<string, string> | undefined;
  /** Epoch ms; `updatedAt` never goes backwards, even when the clock does. */
  createdAt: number;
  updatedAt: number;
}

interface Log {
  version: number;
  messages: string[];
  /** Messages ever written (appends, replacements): the position after the newest. */
  end?: number;
  ops: Set<string>;
}

export class MemorySessionStore implements SessionStore {
  readonly kind = "memory" as const;
  readonly url = "memory:";
  readonly messages: MessageLog;
  readonly streams: MemoryStreamBuffer;
  readonly blobs: BlobStore;
  readonly retention?: RetentionPolicy;
  private readonly rows = new Map<string, Row>();
  /** Session ids by owner, so a listing reads only that owner's rows. */
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly logs = new Map<string, Log>();
  private counter = 0;
  private readonly codec: SessionCodec;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.codec = options.codec ?? defaultSessionCodec();
    this.retention = checkRetention(options.retention);
    this.messages = new MemoryMessageLog(
      this.logs,
      options.messageCodec ?? defaultMessageCodec,
      () => ++this.counter,
      () => this.check(),
    );
    this.streams = new MemoryStreamBuffer(chunkCodec(this.codec), () => this.check());
    this.blobs = storeBlobs(options.blobs, this.codec, { backend: new MemoryBlobBackend(), where: this.url });
  }

  private check(): void {
    if (this.closed)
      throw new StatebagError("store-closed", "this memory store was closed", {
        hint: "open a new store with openStore() (a memory store's sessions went with it)",
      });
  }

  private live(id: string, now = Date.now()): Row | undefined {
    const row = this.rows.get(id);
    if (row && row.expiresAt !== undefined && row.expiresAt <= now) {
      this.remove(id);
      return undefined;
    }
    return row;
  }

  private remove(id: string): boolean {
    const row = this.rows.get(id);
    if (!row) return false;
    this.rows.delete(id);
    if (row.owner !== undefined) {
      const ids = this.byOwner.get(row.owner)!;
      ids.delete(id);
      if (ids.size === 0) this.byOwner.delete(row.owner);
    }
    return true;
  }

  async setup(): Promise<SetupResult> {
    return { version: 1, changed: false };
  }

  async get(id: string): Promise<StoredSession | undefined> {
    this.check();
    const row = this.live(checkId(id));
    if (!row) return undefined;
    return {
      session: loadStoredSession(this.codec, id, row.text, this.url, {
        owner: this.rowMeta(id, row).owner,
        revision: row.revision,
      }),
      revision: row.revision,
      meta: this.rowMeta(id, row),
    };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    this.check();
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const meta = checkMeta(options);
    // The owner the row will have: the given one, else (an update) the stored one, which a codec
    // binding the owner needs to see (it never changes for a given revision).
    // Protected owners and titles (an encrypting codec): stored in their protected forms, the codec
    // still sees the plaintext owner.
    const protection = metaProtectionOf(this.codec);
    let owner = meta.owner;
    if (owner === undefined && expected !== null && usesContext(this.codec)) {
      const stored = this.live(id)?.owner;
      owner = stored === undefined || protection === undefined ? stored : protection.readOwner(stored);
    }
    // The revision the row is written under: the counter's next value (nothing in between draws one).
    // A codec of binary rows: kept as their binary string (what a scan of any store returns).
    const text = storedText(serializeRow(this.codec, session, { owner, revision: this.counter + 1 }));
    const row = this.live(id);
    const current = row?.revision ?? null;
    if (current !== expected) throw new ConflictError(id, expected, current);
    const rowOwner =
      row?.owner === undefined || protection === undefined ? row?.owner : protection.readOwner(row.owner);
    if (row && meta.owner !== undefined && meta.owner !== rowOwner) throw new SessionOwnerError(id, meta.owner);
    // A row written before protection (plaintext owner or title) gets the protected forms now.
    const storedOwner = rowOwner === undefined ? meta.owner : rowOwner;
    const protectOwner = (o: string | undefined) =>
      o === undefined || protection === undefined ? o : protection.owner(o);
    // A given title is sealed; a stored one is resealed only when it is plaintext or under an older key.
    const protectTitle = (given: string | undefined, stored: string | undefined) =>
      protection === undefined
        ? (given ?? stored)
        : given !== undefined
          ? protection.title(id, given)
          : stored === undefined || protection.isProtectedTitle(stored)
            ? stored
            : protection.title(id, protection.readTitle(id, stored));
    if (row?.owner !== undefined && protectOwner(storedOwner) !== row.owner) this.remove(id);
    const revision = ++this.counter;
    const now = Date.now();
    const next: Row = row
      ? {
          ...row,
          revision,
          text,
          expiresAt: ttlMs === undefined ? undefined : now + ttlMs,
          owner: protectOwner(storedOwner),
          title: protectTitle(meta.title, row.title),
          labels: meta.labels ?? row.labels,
          updatedAt: Math.max(now, row.updatedAt),
        }
      : {
          revision,
          text,
          expiresAt: ttlMs === undefined ? undefined : now + ttlMs,
          owner: protectOwner(meta.owner),
          title: protectTitle(meta.title, undefined),
          labels: meta.labels,
          createdAt: now,
          updatedAt: now,
        };
    this.rows.set(id, next);
    if (next.owner !== undefined) {
      let ids = this.byOwner.get(next.owner);
      if (!ids) this.byOwner.set(next.owner, (ids = new Set()));
      ids.add(id);
    }
    return revision;
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    this.check();
    checkId(id);
    const expected = checkDelete(options);
    const current = this.live(id)?.revision ?? null;
    if (expected !== undefined && current !== expected) throw new ConflictError(id, expected, current);
    // The session's stream buffers go with it (whether or not a session row was there).
    await this.streams.deleteForSession(id);
    return this.remove(id);
  }

  async scan(options?: ScanOptions): Promise<ScanPage> {
    this.check();
    const { cursor, limit, includeText } = checkScan(options);
    const now = Date.now();
    const ids = [...this.rows.keys()]
      .filter((id) => (cursor === undefined || compareIds(id, cursor) > 0) && this.live(id, now))
      .sort(compareIds);
    const items = ids.slice(0, limit + 1).map((id) => {
      const row = this.rows.get(id)!;
      const item = includeText
        ? scanItem(
            id,
            row.revision,
            row.text,
            row.expiresAt === undefined ? undefined : Math.max(1, row.expiresAt - now),
          )
        : scanItem(id, row.revision);
      item.meta = this.rowMeta(id, row, false);
      if (plaintextMeta(metaProtectionOf(this.codec), row.owner, row.title)) item.plaintextMeta = true;
      return item;
    });
    return scanPage(items, limit);
  }

  async list(options: ListOptions): Promise<ListPage> {
    this.check();
    const { owner, labels, updatedBefore, updatedAfter, order, cursor, limit } = checkList(options);
    const now = Date.now();
    const byTime = order === "updatedAt desc";
    const after = (id: string, row: Row): boolean => {
      if (!cursor) return true;
      if (!byTime) return compareIds(id, cursor.id) > 0;
      const cursorUpdated = Number(cursor.updated);
      return row.updatedAt < cursorUpdated || (row.updatedAt === cursorUpdated && compareIds(id, cursor.id) < 0);
    };
    const rows: [string, Row][] = [];
    const protection = metaProtectionOf(this.codec);
    if (
      protection !== undefined &&
      cursor === undefined &&
      protection.otherForms(owner).some((o) => this.byOwner.has(o))
    )
      throw plaintextOwnerError(this.url);
    for (const id of this.byOwner.get(protection === undefined ? owner : protection.owner(owner)) ?? []) {
      const row = this.live(id, now);
      if (!row || !after(id, row) || !labelsMatch(row.labels, labels)) continue;
      if (updatedBefore !== undefined && !(row.updatedAt < updatedBefore)) continue;
      if (updatedAfter !== undefined && !(row.updatedAt > updatedAfter)) continue;
      rows.push([id, row]);
    }
    // Newest first, ties by descending id (as the SQL stores' index runs); or ascending id.
    rows.sort(([a, ra], [b, rb]) =>
      !byTime ? compareIds(a, b) : ra.updatedAt !== rb.updatedAt ? rb.updatedAt - ra.updatedAt : compareIds(b, a),
    );
    const items: ListItem[] = rows.slice(0, limit).map(([id, row]) => {
      const item: ListItem = { id, revision: row.revision, meta: this.rowMeta(id, row, false) };
      if (row.expiresAt !== undefined) item.ttlMs = Math.max(1, row.expiresAt - now);
      return item;
    });
    if (rows.length <= limit) return { items };
    const [lastId, last] = rows[limit - 1];
    return { items, cursor: encodeCursor({ order, updated: String(last.updatedAt), id: lastId }) };
  }

  private rowMeta(id: string, row: Row, strict = true) {
    const { owner, title } = readMeta(metaProtectionOf(this.codec), id, row.owner, row.title, strict);
    return storedMeta(owner, title, row.labels, row.createdAt, row.updatedAt);
  }

  async purgeExpired(): Promise<number> {
    const now = Date.now();
    let removed = 0;
    for (const id of [...this.rows.keys()]) if (!this.live(id, now)) removed++;
    await this.streams.purgeExpired(); // stream buffers are not sessions: not counted
    return this.retention ? removed + (await purgeRetention(this, this.retention)).sessions : removed;
  }

  async eraseOwner(owner: string, options?: EraseOptions): Promise<EraseReceipt> {
    this.check();
    return eraseOwnerSessions(this, owner, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.streams.close();
    await this.blobs.close();
  }
}

class MemoryMessageLog implements MessageLog {
  constructor(
    private readonly logs: Map<string, Log>,
    private readonly codec: MessageCodec,
    private readonly nextVersion: () => number,
    private readonly check: () => void,
  ) {}

  private log(storageId: string): Log {
    let log = this.logs.get(storageId);
    if (!log) this.logs.set(storageId, (log = { version: 0, messages: [], ops: new Set() }));
    return log;
  }

  async appendMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    this.check();
    checkId(storageId, "storageId");
    const operationId = checkOperationId(options?.operationId);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    const existing = this.logs.get(storageId);
    if (existing?.ops.has(operationId)) return { applied: false, version: existing.version };
    const log = this.log(storageId);
    log.ops.add(operationId);
    for (const text of texts) log.messages.push(text); // no push(...texts): a long batch overflows the stack
    log.end = (log.end ?? 0) + texts.length;
    log.version = this.nextVersion();
    return { applied: true, version: log.version };
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    this.check();
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    const texts = this.logs.get(storageId)?.messages ?? [];
    const slice = last === undefined ? texts : last === 0 ? [] : texts.slice(-last);
    return slice.map((t) => this.codec.deserialize(t, { logId: storageId }));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    this.check();
    checkId(storageId, "storageId");
    const log = this.logs.get(storageId);
    return {
      messages: (log?.messages ?? []).map((t) => this.codec.deserialize(t, { logId: storageId })),
      version: log?.version ?? 0,
    };
  }

  async readMessageRange(storageId: string, range: MessageRange): Promise<MessageLogWindow> {
    this.check();
    checkId(storageId, "storageId");
    const { start, count } = checkRange(range);
    const log = this.logs.get(storageId);
    const texts = log?.messages ?? [];
    return {
      messages: texts.slice(start, start + count).map((t) => this.codec.deserialize(t, { logId: storageId })),
      version: log?.version ?? 0,
      length: texts.length,
      end: log?.end ?? texts.length,
    };
  }

  async readMessageWindow(storageId: string, options: MessageWindowOptions): Promise<MessageLogWindow> {
    this.check();
    checkId(storageId, "storageId");
    const window = checkWindow(options);
    const log = this.logs.get(storageId);
    const texts = log?.messages ?? [];
    const end = log?.end ?? texts.length;
    const from = Math.max(0, "last" in window ? texts.length - window.last : window.from - (end - texts.length));
    return {
      messages: texts.slice(from).map((t) => this.codec.deserialize(t, { logId: storageId })),
      version: log?.version ?? 0,
      length: texts.length,
      end,
    };
  }

  async replaceMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: ReplaceOptions = {},
  ): Promise<number> {
    this.check();
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    const existing = this.logs.get(storageId);
    if (operationId !== undefined && existing?.ops.has(operationId)) return existing.version;
    const version = existing?.version ?? 0;
    if (expected !== undefined && expected !== version) throw logConflict(storageId, expected, version);
    const log = this.log(storageId);
    if (operationId !== undefined) log.ops.add(operationId);
    log.messages = texts;
    log.end = (log.end ?? 0) + texts.length;
    log.version = this.nextVersion();
    return log.version;
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    this.check();
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    const log = this.logs.get(storageId);
    const version = log?.version ?? 0;
    if (expectedVersion !== undefined && expectedVersion !== version)
      throw logConflict(storageId, expectedVersion, version);
    if (!log || log.messages.length <= keepLast) return 0;
    const removed = log.messages.length - keepLast;
    log.messages = keepLast === 0 ? [] : log.messages.slice(-keepLast);
    log.version = this.nextVersion();
    return removed;
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    this.check();
    checkId(storageId, "storageId");
    return this.logs.delete(storageId);
  }
}
