/**
 * Decoded message logs kept warm between runs of one process (`StoredChatHistoryProvider`'s
 * `cacheBytes`): per storage id, the log's messages as of one version, with the log's length and
 * end position, so a run reads only what was appended since. Least recently used entries go first
 * once the entries' estimated size passes the bound; a log larger than the bound is not kept.
 *
 * An entry's array only ever grows at its end (a pure append), and only while the entry is
 * current; any other change to the log replaces the entry with a new array. So a reader that took
 * the array and its length at some point keeps seeing exactly that prefix.
 */
import type { ChatMessage } from "../../core/messages.js";

export interface CachedLog {
  version: number;
  /** The log's end position (`MessageLogWindow.end`); undefined for a backend without positions. */
  end: number | undefined;
  /** How many messages of `messages` are the log at `version` (the array may not be shared beyond it). */
  length: number;
  messages: ChatMessage[];
  /** Estimated size of the decoded messages (their JSON length). */
  bytes: number;
}

/** The default bound: small; set `cacheBytes` to what the process can spare. */
export const DEFAULT_LOG_CACHE_BYTES = 16 * 1024 * 1024;

export function estimatedBytes(messages: readonly ChatMessage[], from = 0): number {
  let bytes = 0;
  for (let i = from; i < messages.length; i++) bytes += JSON.stringify(messages[i]).length;
  return bytes;
}

export class LogCache {
  private readonly entries = new Map<string, CachedLog>();
  private total = 0;

  constructor(readonly maxBytes: number) {}

  /** The entry of a log, now the most recently used. */
  get(storageId: string): CachedLog | undefined {
    const entry = this.entries.get(storageId);
    if (entry) {
      this.entries.delete(storageId);
      this.entries.set(storageId, entry);
    }
    return entry;
  }

  /** Keeps (or replaces) a log's entry; evicts the least recently used ones beyond the bound. */
  set(storageId: string, entry: CachedLog): void {
    this.delete(storageId);
    if (entry.bytes > this.maxBytes) return;
    this.entries.set(storageId, entry);
    this.total += entry.bytes;
    for (const [id, old] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(id);
      this.total -= old.bytes;
    }
  }

  /** Records messages appended to a current entry (in place: see the module comment). */
  grow(
    storageId: string,
    entry: CachedLog,
    added: readonly ChatMessage[],
    version: number,
    end: number | undefined,
  ): void {
    for (const message of added) entry.messages.push(message); // no push(...added): a long batch overflows the stack
    const bytes = estimatedBytes(added);
    entry.length = entry.messages.length;
    entry.version = version;
    entry.end = end;
    entry.bytes += bytes;
    if (this.entries.get(storageId) === entry) this.total += bytes;
    if (entry.bytes > this.maxBytes) this.delete(storageId);
    else this.set(storageId, entry);
  }

  delete(storageId: string): void {
    const entry = this.entries.get(storageId);
    if (!entry) return;
    this.entries.delete(storageId);
    this.total -= entry.bytes;
  }

  /** Estimated bytes held. */
  get size(): number {
    return this.total;
  }
}
