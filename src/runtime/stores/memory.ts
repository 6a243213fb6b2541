/**
 * In-process store for tests and ephemeral apps. It keeps serialized text, not objects, so a
 * caller can never mutate a stored session through a shared reference and every load migrates and
 * validates exactly like the durable stores do.
 */
import type { ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import { defaultMessageCodec, defaultSessionCodec, loadStoredSession, serializeMessages } from "./codec.js";
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
import { ConflictError, logConflict } from "./errors.js";
import type {
  AppendOptions,
  AppendResult,
  DeleteOptions,
  MessageCodec,
  MessageLog,
  MessageLogSnapshot,
  ReplaceOptions,
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
}

interface Row {
  revision: number;
  text: string;
  expiresAt: number | undefined;
}

interface Log {
  version: number;
  messages: string[];
  ops: Set<string>;
}

export class MemorySessionStore implements SessionStore {
  readonly kind = "memory" as const;
  readonly url = "memory:";
  readonly messages: MessageLog;
  private readonly rows = new Map<string, Row>();
  private readonly logs = new Map<string, Log>();
  private counter = 0;
  private readonly codec: SessionCodec;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.codec = options.codec ?? defaultSessionCodec();
    this.messages = new MemoryMessageLog(this.logs, options.messageCodec ?? defaultMessageCodec, () => ++this.counter, () => this.check());
  }

  private check(): void {
    if (this.closed) throw new Error("this memory store was closed");
  }

  private live(id: string, now = Date.now()): Row | undefined {
    const row = this.rows.get(id);
    if (row && row.expiresAt !== undefined && row.expiresAt <= now) {
      this.rows.delete(id);
      return undefined;
    }
    return row;
  }

  async setup(): Promise<SetupResult> {
    return { version: 1, changed: false };
  }

  async get(id: string): Promise<StoredSession | undefined> {
    this.check();
    const row = this.live(checkId(id));
    if (!row) return undefined;
    return { session: loadStoredSession(this.codec, id, row.text, this.url), revision: row.revision };
  }

  async save(session: AgentSession, options: SaveOptions): Promise<number> {
    this.check();
    const id = sessionId(session);
    const { expected, ttlMs } = checkSave(options);
    const text = this.codec.serialize(session);
    const current = this.live(id)?.revision ?? null;
    if (current !== expected) throw new ConflictError(id, expected, current);
    const revision = ++this.counter;
    this.rows.set(id, { revision, text, expiresAt: ttlMs === undefined ? undefined : Date.now() + ttlMs });
    return revision;
  }

  async delete(id: string, options?: DeleteOptions): Promise<boolean> {
    this.check();
    checkId(id);
    const expected = checkDelete(options);
    const current = this.live(id)?.revision ?? null;
    if (expected !== undefined && current !== expected) throw new ConflictError(id, expected, current);
    return this.rows.delete(id);
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
      if (!includeText) return scanItem(id, row.revision);
      return scanItem(id, row.revision, row.text, row.expiresAt === undefined ? undefined : Math.max(1, row.expiresAt - now));
    });
    return scanPage(items, limit);
  }

  async purgeExpired(): Promise<number> {
    const now = Date.now();
    let removed = 0;
    for (const id of [...this.rows.keys()]) if (!this.live(id, now)) removed++;
    return removed;
  }

  async close(): Promise<void> {
    this.closed = true;
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

  async appendMessages(storageId: string, messages: readonly ChatMessage[], options: AppendOptions): Promise<AppendResult> {
    this.check();
    checkId(storageId, "storageId");
    const operationId = checkOperationId(options?.operationId);
    const texts = serializeMessages(this.codec, messages);
    const existing = this.logs.get(storageId);
    if (existing?.ops.has(operationId)) return { applied: false, version: existing.version };
    const log = this.log(storageId);
    log.ops.add(operationId);
    for (const text of texts) log.messages.push(text); // no push(...texts): a long batch overflows the stack
    log.version = this.nextVersion();
    return { applied: true, version: log.version };
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    this.check();
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    const texts = this.logs.get(storageId)?.messages ?? [];
    const slice = last === undefined ? texts : last === 0 ? [] : texts.slice(-last);
    return slice.map((t) => this.codec.deserialize(t));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    this.check();
    checkId(storageId, "storageId");
    const log = this.logs.get(storageId);
    return { messages: (log?.messages ?? []).map((t) => this.codec.deserialize(t)), version: log?.version ?? 0 };
  }

  async replaceMessages(storageId: string, messages: readonly ChatMessage[], options: ReplaceOptions = {}): Promise<number> {
    this.check();
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages);
    const existing = this.logs.get(storageId);
    if (operationId !== undefined && existing?.ops.has(operationId)) return existing.version;
    const version = existing?.version ?? 0;
    if (expected !== undefined && expected !== version) throw logConflict(storageId, expected, version);
    const log = this.log(storageId);
    if (operationId !== undefined) log.ops.add(operationId);
    log.messages = texts;
    log.version = this.nextVersion();
    return log.version;
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    this.check();
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    const log = this.logs.get(storageId);
    const version = log?.version ?? 0;
    if (expectedVersion !== undefined && expectedVersion !== version) throw logConflict(storageId, expectedVersion, version);
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
