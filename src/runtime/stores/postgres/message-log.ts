/**
 * The PostgreSQL store's message log: a header row per storage id (`statebag_message_logs`: version,
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
import type { PgPoolClient } from "./driver.js";
import { TRANSACTION, type PostgresStatements, type Row } from "./sql.js";

/** What the log uses of its store (PostgresSessionStore): its statements and `withClient` (pool, setup check, error mapping). */
export interface PostgresLogStore {
  readonly sql: PostgresStatements;
  withClient<T>(operation: string, write: boolean, fn: (client: PgPoolClient) => Promise<T>): Promise<T>;
}

export class PostgresMessageLog implements MessageLog {
  constructor(
    private readonly store: PostgresLogStore,
    private readonly codec: MessageCodec,
  ) {}

  private get sql() {
    return this.store.sql;
  }

  /** Runs `fn` in a transaction. */
  private tx<T>(operation: string, fn: (c: PgPoolClient) => Promise<T>): Promise<T> {
    return this.store.withClient(operation, true, async (c) => {
      await c.query(TRANSACTION.begin);
      try {
        const result = await fn(c);
        await c.query(TRANSACTION.commit);
        return result;
      } catch (error) {
        await c.query(TRANSACTION.rollback).catch(() => undefined);
        throw error;
      }
    });
  }

  async appendMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    checkId(storageId, "storageId");
    const operationId = checkOperationId(options?.operationId);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    return this.store.withClient("appendMessages", true, async (c) => {
      const { rows } = await c.query<Row>({
        ...this.sql.append,
        values: [storageId, operationId, texts, texts.length],
      });
      if (rows.length === 1) return { applied: true, version: Number(rows[0].version) };
      const current = await c.query<Row>(this.sql.logVersion, [storageId]);
      return { applied: false, version: current.rows.length ? Number(current.rows[0].version) : 0 };
    });
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    const { rows } = await this.store.withClient("getMessages", false, (c) =>
      last === undefined
        ? c.query<Row>(this.sql.msgAll, [storageId])
        : c.query<Row>(this.sql.msgLast, [storageId, last]),
    );
    return rows.map((r) => this.codec.deserialize(r.body as string, { logId: storageId }));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const { rows } = await this.store.withClient("readMessages", false, (c) =>
      c.query<Row>(this.sql.msgRead, [storageId]),
    );
    const bodies = (rows[0]?.bodies ?? []) as string[];
    return {
      messages: bodies.map((b) => this.codec.deserialize(b, { logId: storageId })),
      version: Number(rows[0]?.version ?? 0),
    };
  }

  async readMessageWindow(storageId: string, options: MessageWindowOptions): Promise<MessageLogWindow> {
    checkId(storageId, "storageId");
    const window = checkWindow(options);
    const params = "last" in window ? [storageId, null, window.last] : [storageId, window.from, null];
    const { rows } = await this.store.withClient("readMessageWindow", false, (c) =>
      c.query<Row>(this.sql.msgWindow, params),
    );
    const row = rows[0];
    if (row?.version === null || row?.version === undefined) return { messages: [], version: 0, length: 0, end: 0 };
    const end = Number(row.next_seq);
    const bodies = (row.bodies ?? []) as string[];
    return {
      messages: bodies.map((b) => this.codec.deserialize(b, { logId: storageId })),
      version: Number(row.version),
      // Positions are the rows' seq: contiguous, the newest at next_seq - 1.
      length: row.first === null || row.first === undefined ? 0 : end - Number(row.first),
      end,
    };
  }

  async readMessageRange(storageId: string, range: MessageRange): Promise<MessageLogWindow> {
    checkId(storageId, "storageId");
    const { start, count } = checkRange(range);
    const { rows } = await this.store.withClient("readMessageRange", false, (c) =>
      c.query<Row>(this.sql.msgRange, [storageId, start, count]),
    );
    const row = rows[0];
    if (row?.version === null || row?.version === undefined) return { messages: [], version: 0, length: 0, end: 0 };
    const end = Number(row.next_seq);
    const bodies = (row.bodies ?? []) as string[];
    return {
      messages: bodies.map((b) => this.codec.deserialize(b, { logId: storageId })),
      version: Number(row.version),
      // The rows' seq are contiguous, the newest at next_seq - 1: index i is seq first + i.
      length: row.first === null || row.first === undefined ? 0 : end - Number(row.first),
      end,
    };
  }

  async replaceMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: ReplaceOptions = {},
  ): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    return this.tx("replaceMessages", async (c) => {
      if (operationId !== undefined && (await c.query(this.sql.opInsert, [storageId, operationId])).rowCount === 0) {
        const current = await c.query<Row>(this.sql.logVersion, [storageId]);
        return current.rows.length ? Number(current.rows[0].version) : 0;
      }
      await c.query(this.sql.logEnsure, [storageId]);
      const locked = (await c.query<Row>(this.sql.logLock, [storageId])).rows[0];
      const current = Number(locked.version);
      if (expected !== undefined && expected !== current) throw logConflict(storageId, expected, current);
      const bumped = (await c.query<Row>(this.sql.logBump, [storageId, texts.length])).rows[0];
      await c.query(this.sql.msgClear, [storageId]);
      await c.query({ ...this.sql.msgInsert, values: [storageId, Number(bumped.next_seq) - texts.length, texts] });
      return Number(bumped.version);
    });
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    return this.tx("trimMessages", async (c) => {
      const locked = (await c.query<Row>(this.sql.logLock, [storageId])).rows[0];
      const current = locked ? Number(locked.version) : 0;
      if (expectedVersion !== undefined && expectedVersion !== current)
        throw logConflict(storageId, expectedVersion, current);
      if (!locked) return 0;
      const removed = (await c.query(this.sql.msgTrim, [storageId, Number(locked.next_seq) - keepLast])).rowCount ?? 0;
      if (removed > 0) await c.query(this.sql.logBump, [storageId, 0]);
      return removed;
    });
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    return this.tx("deleteMessages", async (c) => {
      // Lock the header first so a concurrent append either completes before or starts after.
      const locked = (await c.query<Row>(this.sql.logLock, [storageId])).rows[0];
      await c.query(this.sql.msgClear, [storageId]);
      await c.query(this.sql.opsDelete, [storageId]);
      await c.query(this.sql.logDelete, [storageId]);
      return locked !== undefined && Number(locked.version) > 0;
    });
  }
}
