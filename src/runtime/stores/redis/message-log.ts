/**
 * The Redis store's message log: per storage id a list of serialized messages, a header with its
 * version and a set of applied operation ids (keys.ts), each change one script (scripts.ts). The
 * codecs get the log id; never a position (`seq`): trims and replacements renumber a Redis list, so
 * a position given on write would not be the one on read.
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
import type { RedisKeys } from "./keys.js";
import { runAppend, runRead, runReplace, runTrim, type ScriptedClient } from "./scripts.js";

/** What the log uses of its store (RedisSessionStore): the key layout and `call` (connection, format check, error mapping). */
export interface RedisLogStore {
  readonly keys: RedisKeys;
  call<T>(operation: string, write: boolean, fn: (client: ScriptedClient) => Promise<T>): Promise<T>;
}

export class RedisMessageLog implements MessageLog {
  constructor(
    private readonly store: RedisLogStore,
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
    const keys = this.store.keys.of(storageId);
    return this.store.call("appendMessages", true, (c) => runAppend(c, { keys, operationId, messages: texts }));
  }

  async getMessages(storageId: string, options?: { last?: number }): Promise<ChatMessage[]> {
    checkId(storageId, "storageId");
    const last = checkLast(options?.last);
    if (last === 0) return [];
    const texts = await this.store.call("getMessages", false, (c) =>
      c.lrange(this.store.keys.of(storageId).list, last === undefined ? 0 : -last, -1),
    );
    return texts.map((text) => this.codec.deserialize(text, { logId: storageId }));
  }

  async readMessages(storageId: string): Promise<MessageLogSnapshot> {
    checkId(storageId, "storageId");
    const keys = this.store.keys.of(storageId);
    const { version, messages } = await this.store.call("readMessages", false, (c) => runRead(c, keys));
    return { messages: messages.map((text) => this.codec.deserialize(text, { logId: storageId })), version };
  }

  /**
   * A Redis list keeps no positions (`end` is undefined, and `from` reads the whole log). The
   * header's version, read before and after the list, makes the read consistent: every change
   * bumps it in the same script that changes the list, so an unchanged version means nothing
   * changed in between (the commands of one connection run in order).
   */
  async readMessageWindow(storageId: string, options: MessageWindowOptions): Promise<MessageLogWindow> {
    checkId(storageId, "storageId");
    const window = checkWindow(options);
    const keys = this.store.keys.of(storageId);
    const last = "last" in window ? window.last : undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const [before, length, texts, after] = await this.store.call("readMessageWindow", false, (c) => {
        const client = c as typeof c & { llen(key: string): Promise<number> };
        return Promise.all([
          client.hget(keys.hdr, "v"),
          client.llen(keys.list),
          last === 0 ? Promise.resolve([] as string[]) : client.lrange(keys.list, last === undefined ? 0 : -last, -1),
          client.hget(keys.hdr, "v"),
        ]);
      });
      if (before !== after) continue;
      return {
        messages: texts.map((text) => this.codec.deserialize(text, { logId: storageId })),
        version: Number(before ?? 0),
        length,
      };
    }
    // Written to all the time: one atomic read of the whole log.
    const { messages, version } = await this.readMessages(storageId);
    return {
      messages: last === undefined ? messages : last === 0 ? [] : messages.slice(-last),
      version,
      length: messages.length,
    };
  }

  /** `readMessageWindow`'s consistent read (the version before and after), of one index range of the list. */
  async readMessageRange(storageId: string, range: MessageRange): Promise<MessageLogWindow> {
    checkId(storageId, "storageId");
    const { start, count } = checkRange(range);
    const keys = this.store.keys.of(storageId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const [before, length, texts, after] = await this.store.call("readMessageRange", false, (c) => {
        const client = c as typeof c & { llen(key: string): Promise<number> };
        return Promise.all([
          client.hget(keys.hdr, "v"),
          client.llen(keys.list),
          count === 0 ? Promise.resolve([] as string[]) : client.lrange(keys.list, start, start + count - 1),
          client.hget(keys.hdr, "v"),
        ]);
      });
      if (before !== after) continue;
      return {
        messages: texts.map((t) => this.codec.deserialize(t, { logId: storageId })),
        version: Number(before ?? 0),
        length,
      };
    }
    // Written to all the time: one atomic read of the whole log.
    const { messages, version } = await this.readMessages(storageId);
    return { messages: messages.slice(start, start + count), version, length: messages.length };
  }

  async replaceMessages(
    storageId: string,
    messages: readonly ChatMessage[],
    options: ReplaceOptions = {},
  ): Promise<number> {
    checkId(storageId, "storageId");
    const { expected, operationId } = checkReplace(options);
    const texts = serializeMessages(this.codec, messages, { logId: storageId });
    const keys = this.store.keys.of(storageId);
    const reply = await this.store.call("replaceMessages", true, (c) =>
      runReplace(c, { keys, expected, operationId, messages: texts }),
    );
    if (reply.status === "replaced") return reply.version;
    throw logConflict(storageId, expected!, reply.current);
  }

  async trimMessages(storageId: string, options: TrimOptions): Promise<number> {
    checkId(storageId, "storageId");
    const { keepLast, expectedVersion } = checkTrim(options);
    const keys = this.store.keys.of(storageId);
    const reply = await this.store.call("trimMessages", true, (c) =>
      runTrim(c, { keys, keepLast, expected: expectedVersion }),
    );
    if (reply.status === "trimmed") return reply.removed;
    throw logConflict(storageId, expectedVersion!, reply.current);
  }

  async deleteMessages(storageId: string): Promise<boolean> {
    checkId(storageId, "storageId");
    const keys = this.store.keys.of(storageId);
    const removed = await this.store.call("deleteMessages", true, (c) => c.del(keys.list, keys.hdr, keys.ops));
    return removed > 0;
  }
}
