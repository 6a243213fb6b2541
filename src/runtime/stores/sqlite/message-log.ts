/**
 * The SQLite store's message log: a header row per storage id (`statebag_message_logs`: version,
 * next sequence number), its messages and its applied operation ids, in the tables sql.ts creates.
 */
import type { ChatMessage } from "../../core/messages.js";
import { serializeMessages } from "../codec.js";
import { checkId, checkLast, checkOperationId, checkReplace, checkTrim } from "../common.js";
import { checkRange, checkWindow } from "../window.js";
import { logConflict } from "../errors.js";
import type {
  AppendOptions,
  AppendResult,
  MessageCodec,
  MessageLog,
  MessageLogSnapshot,
  MessageLogWindow,
  MessageRange,
  MessageWindowOptions,
  ReplaceOptions,
  TrimOptions,
} from "../types.js";
import type { Access, Statements } from "./sql.js";

/** What the log uses of its store (SqliteSessionStore): `run` (open, transaction, lock waits, error mapping). */
export interface SqliteLogStore {
  run<T>(operation: string, access: Access, fn: (s: Statements) => T): Promise<T>;
}

export class SqliteMessageLog implements MessageLog {
  constructor(
    private readonly store: SqliteLogStore,
    private readonly codec: MessageCodec,
  ) {}

  async appendMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    checkId(storageId, "storageId");
    const operationId = checkOperationId(options?.operationId);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    return this.store.run("appendMessages", "write", (s): AppendResult => {
      if (s.opInsert.run(storageId, operationId).changes === 0) {
        return { applied: false, version: s.logVersion.get(storageId)?.version ?? 0 };
      }
      const version = s.bump.get()!.value;
      const end = s.logUpsert.get(storageId, version, texts.length)!.next_seq;
      let seq = end - texts.length;
      for (const text of texts) s.msgInsert.run(storageId, seq++, text);
      return { applied: true, version };
    });
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    const rows = await this.store.run("getMessages", "read", (s) =>
      last === undefined ? s.msgAll.all(storageId) : s.msgLast.all(storageId, last),
    );
    return rows.map((r) => this.codec.deserialize(r.body, { logId: storageId }));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const { rows, version } = await this.store.run("readMessages", "snapshot", (s) => ({
      version: s.logVersion.get(storageId)?.version ?? 0,
      rows: s.msgAll.all(storageId),
    }));
    return { messages: rows.map((r) => this.codec.deserialize(r.body, { logId: storageId })), version };
  }

  async readMessageWindow(storageId: string, options: MessageWindowOptions): Promise<MessageLogWindow> {
    checkId(storageId, "storageId");
    const window = checkWindow(options);
    const { rows, version, length, end } = await this.store.run("readMessageWindow", "snapshot", (s) => {
      const log = s.logVersion.get(storageId);
      if (!log) return { rows: [], version: 0, length: 0, end: 0 };
      // Positions are the rows' seq: contiguous, the newest at next_seq - 1.
      const first = s.msgFirst.get(storageId)?.first ?? log.next_seq;
      const from = "last" in window ? log.next_seq - window.last : window.from;
      return {
        rows: s.msgFrom.all(storageId, Math.max(from, first)),
        version: log.version,
        length: log.next_seq - first,
        end: log.next_seq,
      };
    });
    return { messages: rows.map((r) => this.codec.deserialize(r.body, { logId: storageId })), version, length, end };
  }

  async readMessageRange(storageId: string, range: MessageRange): Promise<MessageLogWindow> {
    checkId(storageId, "storageId");
    const { start, count } = checkRange(range);
    const { rows, version, length, end } = await this.store.run("readMessageRange", "snapshot", (s) => {
      const log = s.logVersion.get(storageId);
      if (!log) return { rows: [], version: 0, length: 0, end: 0 };
      // The rows' seq are contiguous: index i is seq first + i.
      const first = s.msgFirst.get(storageId)?.first ?? log.next_seq;
      return {
        rows: count === 0 ? [] : s.msgRange.all(storageId, first + start, first + start + count),
        version: log.version,
        length: log.next_seq - first,
        end: log.next_seq,
      };
    });
    return { messages: rows.map((r) => this.codec.deserialize(r.body, { logId: storageId })), version, length, end };
  }

  async replaceMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: ReplaceOptions = {},
  ): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    return this.store.run("replaceMessages", "write", (s): number => {
      const current = s.logVersion.get(storageId)?.version ?? 0;
      if (operationId !== undefined && s.opInsert.run(storageId, operationId).changes === 0) return current;
      if (expected !== undefined && expected !== current) throw logConflict(storageId, expected, current);
      const version = s.bump.get()!.value;
      const end = s.logUpsert.get(storageId, version, texts.length)!.next_seq;
      s.msgClear.run(storageId);
      let seq = end - texts.length;
      for (const text of texts) s.msgInsert.run(storageId, seq++, text);
      return version;
    });
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    return this.store.run("trimMessages", "write", (s): number => {
      const log = s.logVersion.get(storageId);
      const current = log?.version ?? 0;
      if (expectedVersion !== undefined && expectedVersion !== current)
        throw logConflict(storageId, expectedVersion, current);
      if (!log) return 0;
      const removed = s.msgTrim.run(storageId, log.next_seq - keepLast).changes;
      if (removed > 0) s.logUpsert.get(storageId, s.bump.get()!.value, 0);
      return removed;
    });
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    return this.store.run("deleteMessages", "write", (s): boolean => {
      s.msgClear.run(storageId);
      s.opsDelete.run(storageId);
      return s.logDelete.run(storageId).changes === 1;
    });
  }
}
