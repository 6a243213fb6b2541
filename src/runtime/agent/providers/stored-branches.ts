/**
 * The branches of a history kept in message logs (`StoredChatHistoryProvider`): a tree of runs of
 * log entries (see builtins/stored-chat-history-state.ts). An entry is named by its run and offset;
 * the active path is a short list of segments (part of a run each), read with `readMessageRange`
 * segment by segment, so a branch, a switch or a fork never copies or reads the shared prefix, and
 * reading the path reads only its own entries whatever the log's length.
 */
import { randomUUID } from "node:crypto";
import { StatebagError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";
import type { ChatMessage } from "../../core/messages.js";
import type {
  LogEntryRef,
  StoredChatHistoryState,
  StoredHistoryTree,
} from "../../builtins/stored-chat-history-state.js";
import type { MessageLog } from "../../stores/types.js";
import { HistoryBranchError, messageIdAt, MessageNotFoundError } from "./history-branches.js";

/** Part of a run on a path: entries `from` to `from + count - 1` of run `run`. */
export interface Segment {
  run: number;
  from: number;
  count: number;
}

/** A tree for a linear history of `count` log entries. */
export function linearTree(count: number): StoredHistoryTree {
  return count > 0 ? { runs: [{ start: 0, count }], active: { run: 0, offset: count - 1 } } : { runs: [] };
}

/** The segments from the root to `ref` (inclusive), root first; `undefined`: the empty path. */
export function pathSegments(tree: StoredHistoryTree, ref: LogEntryRef | undefined): Segment[] {
  const segments: Segment[] = [];
  for (let at = ref, steps = 0; at; steps++) {
    const run = tree.runs[at.run];
    if (!run || at.offset >= run.count || steps > tree.runs.length)
      throw new HistoryBranchError(
        "a stored history's tree names an entry it does not have",
        "repair the session's StoredChatHistoryState",
      );
    segments.push({ run: at.run, from: 0, count: at.offset + 1 });
    at = run.parent;
  }
  return segments.reverse();
}

/** The children of an entry (`undefined`: the root's), oldest first. */
export function childrenOf(tree: StoredHistoryTree, ref: LogEntryRef | undefined): LogEntryRef[] {
  const children: LogEntryRef[] = [];
  if (ref && ref.offset + 1 < tree.runs[ref.run].count) children.push({ run: ref.run, offset: ref.offset + 1 });
  tree.runs.forEach((run, i) => {
    const parent = run.parent;
    if (ref ? parent?.run === ref.run && parent.offset === ref.offset : parent === undefined)
      children.push({ run: i, offset: 0 });
  });
  return children;
}

export function parentRef(tree: StoredHistoryTree, ref: LogEntryRef): LogEntryRef | undefined {
  return ref.offset > 0 ? { run: ref.run, offset: ref.offset - 1 } : tree.runs[ref.run].parent;
}

export function depthOf(tree: StoredHistoryTree, ref: LogEntryRef): number {
  return pathSegments(tree, ref).reduce((n, s) => n + s.count, 0) - 1;
}

const sameRef = (a: LogEntryRef | undefined, b: LogEntryRef | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.run === b.run && a.offset === b.offset);

/** Reads log entries for one history: its own log (with the pending append beyond `messageCount`) and its fork sources. */
export class TreeReader {
  constructor(
    private readonly log: MessageLog,
    private readonly sessionId: string,
    private readonly state: StoredChatHistoryState,
    private readonly tree: StoredHistoryTree,
  ) {}

  /** Entries `from` to `from + count - 1` of run `run`. */
  async read(run: number, from: number, count: number): Promise<ChatMessage[]> {
    if (count <= 0) return [];
    const runSpan = this.tree.runs[run];
    const storageId = runSpan.storageId ?? this.state.storageId;
    const start = runSpan.start + from;
    const out: ChatMessage[] = [];
    let logCount = count;
    // The own log's entries beyond messageCount are the pending append (not in the log yet).
    if (runSpan.storageId === undefined && this.state.pending?.mode === "append") {
      logCount = Math.max(0, Math.min(count, this.state.messageCount - start));
    }
    if (logCount > 0) {
      const read = this.log.readMessageRange
        ? (await this.log.readMessageRange(storageId, { start, count: logCount })).messages
        : (await this.log.readMessages(storageId)).messages.slice(start, start + logCount);
      if (read.length < logCount) {
        throw new StatebagError(
          "history-fork-source-missing",
          `session ${quoted(this.sessionId)} reads ${logCount} message(s) from index ${start} of the message log ${quoted(storageId)}, which holds fewer: ${runSpan.storageId !== undefined ? "the log this session was forked from was deleted or rewritten" : "the log was trimmed or deleted"}`,
          {
            hint:
              runSpan.storageId !== undefined
                ? "a fork shares its source's messages: keep the source's message log (store.delete keeps it; retention and erasure of the source remove it), or fork again from a session that has them"
                : "a branched history's log is only appended to: restore it, or start the session again",
          },
        );
      }
      for (const message of read) out.push(message);
    }
    for (let i = out.length; i < count; i++)
      out.push(this.state.pending!.messages[start + i - this.state.messageCount]);
    return out;
  }

  async messageAt(ref: LogEntryRef): Promise<ChatMessage> {
    return (await this.read(ref.run, ref.offset, 1))[0];
  }

  async idAt(ref: LogEntryRef): Promise<string> {
    const message = await this.messageAt(ref);
    return message.messageId ?? messageIdAt(message, depthOf(this.tree, ref));
  }

  /** The messages of a path, root first; with `last`, only its newest `last` (fewer reads on a long path). */
  async readPath(segments: readonly Segment[], last?: number): Promise<ChatMessage[]> {
    const parts: ChatMessage[][] = [];
    let want = last ?? Number.POSITIVE_INFINITY;
    for (let i = segments.length - 1; i >= 0 && want > 0; i--) {
      const segment = segments[i];
      const take = Math.min(segment.count, want);
      parts.push(await this.read(segment.run, segment.from + segment.count - take, take));
      want -= take;
    }
    const out: ChatMessage[] = [];
    for (let i = parts.length - 1; i >= 0; i--) for (const message of parts[i]) out.push(message);
    return out;
  }

  /**
   * The entry named `id`: searched on the active path from its newest end (in pages, so naming a
   * recent message reads little of a long path), then on the other runs. A `statebag-<n>` name is
   * the message without an id at depth n.
   */
  async find(id: string): Promise<LogEntryRef> {
    const positional = /^statebag-(\d+)$/.exec(id);
    const depth = positional ? Number(positional[1]) : undefined;
    const active = pathSegments(this.tree, this.tree.active);
    const onPath = new Set<number>();
    let at = active.reduce((n, s) => n + s.count, 0);
    const PAGE = 256;
    for (let i = active.length - 1; i >= 0; i--) {
      const segment = active[i];
      onPath.add(segment.run);
      at -= segment.count;
      for (let end = segment.count; end > 0; end -= PAGE) {
        const from = Math.max(0, end - PAGE);
        if (depth !== undefined && (depth < at + from || depth >= at + end)) continue;
        const page = await this.read(segment.run, from, end - from);
        for (let j = page.length - 1; j >= 0; j--) {
          const message = page[j];
          if (message.messageId === id || (message.messageId === undefined && depth === at + from + j))
            return { run: segment.run, offset: from + j };
        }
      }
    }
    for (let run = 0; run < this.tree.runs.length; run++) {
      const runSpan = this.tree.runs[run];
      const base = runSpan.parent ? depthOf(this.tree, runSpan.parent) + 1 : 0;
      const skip = onPath.has(run) ? (active.find((s) => s.run === run)?.count ?? 0) : 0;
      if (skip >= runSpan.count) continue;
      const page = await this.read(run, skip, runSpan.count - skip);
      const found = page.findIndex(
        (m, k) => m.messageId === id || (m.messageId === undefined && depth === base + skip + k),
      );
      if (found >= 0) return { run, offset: skip + found };
    }
    throw new MessageNotFoundError(this.sessionId, id);
  }

  /** The newest leaf under `ref`: through the newest child at each step. */
  newestLeaf(ref: LogEntryRef): LogEntryRef {
    let at = ref;
    for (let steps = 0; steps <= this.tree.runs.length + this.totalEntries(); steps++) {
      const children = childrenOf(this.tree, at);
      if (children.length === 0) return at;
      at = children[children.length - 1];
    }
    return at;
  }

  private totalEntries(): number {
    return this.tree.runs.reduce((n, r) => n + r.count, 0);
  }

  isActive(ref: LogEntryRef): boolean {
    return pathSegments(this.tree, this.tree.active).some((s) => s.run === ref.run && ref.offset < s.from + s.count);
  }
}

/**
 * The tree after appending `count` entries at the own log's index `at` under `parent` (undefined:
 * as first messages): the parent's run grows when they continue it at the log's end, else a new run.
 */
export function appendToTree(
  tree: StoredHistoryTree,
  parent: LogEntryRef | undefined,
  at: number,
  count: number,
): StoredHistoryTree {
  if (count === 0) return parent ? { ...tree, active: parent } : { runs: tree.runs };
  const runs = tree.runs.map((r) => ({ ...r }));
  const last = parent ? runs[parent.run] : undefined;
  if (
    parent &&
    last &&
    last.storageId === undefined &&
    parent.offset === last.count - 1 &&
    last.start + last.count === at &&
    !runs.some((r) => sameRef(r.parent, parent))
  ) {
    last.count += count;
    return { runs, active: { run: parent.run, offset: last.count - 1 } };
  }
  runs.push({ start: at, count, ...(parent ? { parent: { ...parent } } : {}) });
  return { runs, active: { run: runs.length - 1, offset: count - 1 } };
}

/** Gives each message an id (its own when it has one). */
export function withIds(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => (m.messageId === undefined ? { ...m, messageId: `msg-${randomUUID()}` } : m));
}
