/**
 * History kept outside the session, in a store (for long conversations, or apps that keep only an id): the
 * messages live in a store's message log; the session's bag holds the storage id and how many of
 * the log's messages it has committed.
 *
 * When a turn reaches the log depends on how the app keeps sessions (`commit`):
 *
 * - `"session"` (default, for apps that save sessions, e.g. with `withSession`): an outbox. The log
 *   and the session are two records, and only the session is saved with compare-and-swap, so a run
 *   never writes its own messages to the log. It records them in the session (`pending`), the app
 *   saves the session, and the NEXT run (or a reader) applies the committed `pending` to the log,
 *   idempotently by its operation id. A run whose save fails (conflict, outage, crash) leaves
 *   nothing in the log; two runs racing on one session cannot interleave (the session CAS picks
 *   one); messages a lost save left in the log lie beyond `messageCount`, are never shown, and are
 *   cut off by the next write.
 * - `"run"` (for apps that keep only the conversation id and never save sessions): the log is the
 *   record. The turn is appended when the run commits (idempotently, by the run's operation id),
 *   and every run reads the whole log, so turns from other processes are never cut off. A
 *   reduction replaces the log only if nobody wrote to it since this run read it; otherwise this
 *   run's turn is appended and the next run reduces.
 *
 * What a run reads (issue #25): with `window`, only the log's newest messages (one windowed read,
 * whatever the log's length); without it, the whole log, but a warm process keeps the decoded log
 * (`cacheBytes`, per storage id and log version) and reads only what was appended since, reloading
 * the whole log when it changed otherwise (a replacement, trim or deletion by anyone). Either way a
 * run writes only its new messages.
 *
 * In both modes the provider never truncates or replaces a log it has not read: a session without
 * this provider's state adopts the log under its storage id (an app that kept only the id
 * creates a session with that id, and one log read brings the history back), and a
 * session moved here from an in-memory history carries its messages into an empty log.
 */
import type { ChatMessage } from "../../core/messages.js";
import type { AgentSession } from "../../core/session.js";
import { ProviderSessionState } from "../../core/state-bag.js";
import { StoredChatHistoryStateType } from "../../../generated/descriptors.js";
import { ConfigurationError, StatebagError } from "../../core/errors.js";
import { quoted } from "../../core/json.js";
import { ConflictError } from "../../stores/errors.js";
import type { MessageLog, MessageLogSnapshot } from "../../stores/types.js";
import type {
  LogEntryRef,
  StoredChatHistoryState,
  StoredHistoryTree,
} from "../../builtins/stored-chat-history-state.js";
import type { ForkOrigin } from "../../builtins/chat-history-state.js";
import { HistoryBranchError, type HistoryTreeNode, type MessageSiblings } from "./history-branches.js";
import {
  appendToTree,
  childrenOf,
  depthOf,
  linearTree,
  parentRef,
  pathSegments,
  TreeReader,
  withIds,
} from "./stored-branches.js";
import {
  ChatHistoryProvider,
  foreignHistoryStates,
  HistoryProviderMismatchError,
  type HistoryView,
} from "./chat-history-provider.js";
import type { ProviderContext } from "./provider.js";
import { DEFAULT_LOG_CACHE_BYTES, estimatedBytes, LogCache } from "./log-cache.js";
import { keepLastMessages, type ChatReducer } from "./reducers.js";

export { storedChatHistoryMigrations } from "../../builtins/stored-chat-history-state.js";
export type {
  LogEntryRef,
  LogRun,
  PendingLogWrite,
  StoredChatHistoryState,
  StoredHistoryTree,
} from "../../builtins/stored-chat-history-state.js";

/** When a run's messages are written to the log (see the module comment). */
export type StoredHistoryCommit = "session" | "run";

export interface StoredChatHistoryOptions {
  /** Where the messages live: `store.messages` of any statebag store. */
  log: MessageLog;
  /** State bag key. Default `"statebag.storedChatHistory"`. */
  key?: string;
  /** The log id for a new session. Default: the session's id, so an app needs to keep only one id. */
  storageIdFor?: (session: Readonly<AgentSession>) => string;
  /** Shrinks the stored history after each run. */
  reducer?: ChatReducer;
  /**
   * `"session"` (default): the turn reaches the log after the app saved the session. `"run"`: the
   * turn is appended to the log when the run commits, for apps that never save sessions.
   */
  commit?: StoredHistoryCommit;
  /**
   * Show the model only the log's newest `window` messages (fewer when the oldest would be a
   * function result without its call), read with one windowed read: a run costs the same on a log
   * of any length. The log keeps every message (a run only appends); pair it with a
   * `RollingSummaryProvider` for what falls out of the window. Not with `reducer`.
   */
  window?: number;
  /**
   * Without `window`: how many bytes of decoded logs this provider keeps between runs (least
   * recently used first out), so a run on a log it read before reads only what was appended since.
   * Default 16 MiB; 0 turns it off.
   */
  cacheBytes?: number;
}

/** What one run read: the history it showed the model and the log it came from. */
interface RunView {
  operationId: string;
  storageId: string;
  /**
   * What the model is shown: `history[0..length)`. With `appendOnly`, `history` is the warm
   * cache's array, shared (read only; it may hold more messages than `length`).
   */
  history: readonly ChatMessage[];
  length: number;
  appendOnly: boolean;
  /** How many messages the committed history holds (more than `history` with a window). */
  count: number;
  /** The log's version when read (for replacements in `"run"` mode). */
  version: number;
  /** Messages carried over from another provider's state, not yet in the (empty) log. */
  carried: boolean;
  /** The carried-over messages (all of them: `history` may show only the window). */
  carriedMessages?: ChatMessage[];
  /** This run's own messages, once `addMessages` has them. */
  turn?: ChatMessage[];
  /** A branched history: its tree (the settled state's), and the entry this run's messages follow (`null`: none). */
  tree?: StoredHistoryTree;
  parent?: LogEntryRef | null;
  forkedFrom?: ForkOrigin;
}

export class StoredChatHistoryProvider extends ChatHistoryProvider {
  static readonly defaultKey = "statebag.storedChatHistory";
  readonly key: string;
  readonly commit: StoredHistoryCommit;
  readonly state: ProviderSessionState<StoredChatHistoryState>;
  private readonly log: MessageLog;
  private readonly storageIdFor: (session: Readonly<AgentSession>) => string;
  private readonly reducer?: ChatReducer;
  private readonly window?: number;
  private readonly shape?: ChatReducer;
  private readonly cache?: LogCache;
  /**
   * The current run's view per session object (runs on one session object are serialized), so a
   * run reads the log once. Checked against the run's operation id before use.
   */
  private readonly runs = new WeakMap<object, RunView>();

  constructor(options: StoredChatHistoryOptions) {
    super();
    const commit = options.commit ?? "session";
    if (commit !== "session" && commit !== "run") {
      throw new ConfigurationError(
        `StoredChatHistoryProvider commit must be "session" or "run", got ${JSON.stringify(commit)}`,
        'use "run" when the app never saves sessions',
      );
    }
    this.commit = commit;
    this.key = options.key ?? StoredChatHistoryProvider.defaultKey;
    this.log = options.log;
    this.reducer = options.reducer;
    this.storageIdFor = options.storageIdFor ?? ((session) => session.id);
    if (options.window !== undefined) {
      if (!Number.isSafeInteger(options.window) || options.window < 1) {
        throw new ConfigurationError(
          `StoredChatHistoryProvider window must be a positive integer, got ${JSON.stringify(options.window)}`,
        );
      }
      if (options.reducer) {
        throw new ConfigurationError(
          "StoredChatHistoryProvider takes a window or a reducer, not both",
          "a windowed log keeps every message and shows the model the newest `window` of them",
        );
      }
      this.window = options.window;
      this.shape = keepLastMessages(options.window);
    }
    const cacheBytes = options.cacheBytes ?? DEFAULT_LOG_CACHE_BYTES;
    if (!Number.isSafeInteger(cacheBytes) || cacheBytes < 0) {
      throw new ConfigurationError(
        `StoredChatHistoryProvider cacheBytes must be a non-negative integer, got ${JSON.stringify(options.cacheBytes)}`,
      );
    }
    if (cacheBytes > 0) this.cache = new LogCache(cacheBytes);
    this.state = new ProviderSessionState(this.key, StoredChatHistoryStateType, {
      initial: () => ({ $type: "StoredChatHistoryState", $version: 2, storageId: "", messageCount: 0 }),
    });
  }

  async getMessages(context: ProviderContext): Promise<ChatMessage[]> {
    const view = await this.view(context);
    return view.history.slice(0, view.length);
  }

  /** @internal The run's history without a copy: the warm cache's array, when it came from there. */
  override async historyView(context: ProviderContext): Promise<HistoryView> {
    // A subclass that changes what getMessages returns is asked through it.
    if (this.getMessages !== StoredChatHistoryProvider.prototype.getMessages) return super.historyView(context);
    const view = await this.view(context);
    return { messages: view.history, length: view.length, appendOnly: view.appendOnly };
  }

  async addMessages(context: ProviderContext, added: readonly ChatMessage[]): Promise<void> {
    const view = await this.view(context);
    // Every message gets an id: a branch names its parent by it.
    const turn = withIds(added);
    view.turn = turn;
    if (view.tree) {
      const history = view.history.slice(0, view.length);
      const reduced = this.reducer ? await this.reducer([...history, ...turn]) : undefined;
      if (reduced && reduced.length !== history.length + turn.length) {
        // A reduction rewrites the log as the reduced active path: the other branches go with it.
        this.state.write(context.state, {
          $type: "StoredChatHistoryState",
          $version: 2,
          storageId: view.storageId,
          messageCount: 0,
          pending: { operationId: context.operationId, mode: "replace", messages: reduced },
          ...(view.forkedFrom ? { forkedFrom: view.forkedFrom } : {}),
        });
        return;
      }
      this.state.write(context.state, {
        $type: "StoredChatHistoryState",
        $version: 2,
        storageId: view.storageId,
        messageCount: view.count,
        pending: { operationId: context.operationId, mode: "append", messages: turn },
        tree: appendToTree(view.tree, view.parent ?? undefined, view.count, turn.length),
        ...(view.forkedFrom ? { forkedFrom: view.forkedFrom } : {}),
      });
      return;
    }
    // Carried-over messages are not in the log yet: they go with this turn's write.
    let next: StoredChatHistoryState = view.carried
      ? {
          $type: "StoredChatHistoryState",
          $version: 2,
          storageId: view.storageId,
          messageCount: 0,
          pending: {
            operationId: context.operationId,
            mode: "append",
            messages: [...(view.carriedMessages ?? view.history.slice(0, view.length)), ...turn],
          },
        }
      : {
          $type: "StoredChatHistoryState",
          $version: 2,
          storageId: view.storageId,
          messageCount: view.count,
          pending: { operationId: context.operationId, mode: "append", messages: turn },
        };
    if (this.reducer) {
      const reduced = await this.reducer([...view.history.slice(0, view.length), ...turn]);
      if (reduced.length !== view.count + turn.length) {
        next = {
          ...next,
          messageCount: 0,
          pending: { operationId: context.operationId, mode: "replace", messages: reduced },
        };
      }
    }
    this.state.write(context.state, next);
  }

  /** In `"run"` mode, writes the turn to the log; the session then records no pending write. */
  override async committing(context: ProviderContext): Promise<void> {
    if (this.commit !== "run") return;
    const state = this.state.read(context.state);
    const view = this.runs.get(context.session);
    if (
      !state?.pending ||
      state.pending.operationId !== context.operationId ||
      view?.operationId !== context.operationId
    )
      return;
    const { storageId, pending } = state;
    const options = { operationId: pending.operationId };
    if (pending.mode === "append" && !view.carried) {
      await this.log.appendMessages(storageId, pending.messages, options);
    } else {
      // A carried-over history or a reduction: only onto the log exactly as this run read it.
      try {
        await this.log.replaceMessages(storageId, pending.messages, { ...options, expectedVersion: view.version });
      } catch (error) {
        // Someone appended meanwhile: keep their messages, add this turn, reduce next time.
        if (!(error instanceof ConflictError) || view.carried || !view.turn) throw error;
        await this.log.appendMessages(storageId, view.turn, options);
      }
    }
    const count = pending.mode === "append" ? state.messageCount + pending.messages.length : pending.messages.length;
    this.state.write(context.state, { $type: "StoredChatHistoryState", $version: 2, storageId, messageCount: count });
  }

  /** The committed history, read without writing anything. */
  async listMessages(session: AgentSession): Promise<ChatMessage[]> {
    const state = this.state.read(session);
    if (state?.tree && state.pending?.mode !== "replace") {
      const reader = new TreeReader(this.log, session.id, state, state.tree);
      return structuredClone(await reader.readPath(pathSegments(state.tree, state.tree.active)));
    }
    if (!state) {
      const adopted = await this.adopt(session, true);
      return structuredClone(adopted.history.slice(0, adopted.length));
    }
    if (state.pending?.mode === "replace") return [...state.pending.messages];
    const log = (await this.readLog(state.storageId)).messages;
    // A copy: the warm cache shares its decoded messages between runs, and a caller may edit these.
    return structuredClone(this.commit === "run" && !state.pending ? log : committedView(log, state).history);
  }

  /**
   * The history this run shows the model, read once per run. A pending write from an earlier
   * (saved) run is applied to the log first; the staged state then records it as applied.
   */
  private async view(context: ProviderContext): Promise<RunView> {
    const cached = this.runs.get(context.session);
    if (cached?.operationId === context.operationId) return cached;
    const state = this.state.read(context.state);
    let view: RunView;
    if ((state?.tree && state.pending?.mode !== "replace") || context.branchFrom !== undefined) {
      view = await this.treeView(context, state);
    } else if (state) {
      const { history, length, appendOnly, count, version } =
        (this.window !== undefined && (await this.windowed(state))) || (await this.flushed(state));
      view = {
        operationId: context.operationId,
        storageId: state.storageId,
        history,
        length,
        appendOnly,
        count,
        version,
        carried: false,
      };
      if (state.pending)
        this.state.write(context.state, {
          $type: "StoredChatHistoryState",
          $version: 2,
          storageId: state.storageId,
          messageCount: count,
        });
    } else {
      const adopted = await this.adopt(context.session);
      view = { operationId: context.operationId, ...adopted };
      // Record the adopted log now, so a session saved after this run keeps reading it.
      if (adopted.count > 0 && !adopted.carried) {
        this.state.write(context.state, {
          $type: "StoredChatHistoryState",
          $version: 2,
          storageId: adopted.storageId,
          messageCount: adopted.count,
        });
      }
    }
    this.runs.set(context.session, view);
    return view;
  }

  /** A branched run's view: the state settled (its pending write in the log), the path it follows read run by run. */
  private async treeView(context: ProviderContext, current: StoredChatHistoryState | undefined): Promise<RunView> {
    const state = await this.settled(context.session, current);
    if (state !== current) this.state.write(context.state, state);
    const tree = state.tree!;
    const reader = new TreeReader(this.log, context.session.id, state, tree);
    const parent =
      context.branchFrom === undefined
        ? tree.active
        : context.branchFrom === null
          ? undefined
          : await reader.find(context.branchFrom);
    const read = await reader.readPath(pathSegments(tree, parent), this.window);
    const history = this.shape ? (this.shape(read) as ChatMessage[]) : read;
    return {
      operationId: context.operationId,
      storageId: state.storageId,
      history,
      length: history.length,
      appendOnly: false,
      count: state.messageCount,
      version: 0,
      carried: false,
      tree,
      parent: parent ?? null,
      ...(state.forkedFrom ? { forkedFrom: state.forkedFrom } : {}),
    };
  }

  /**
   * The session's state as a tree with nothing pending: a pending write of an earlier (saved) run
   * is applied to the log first, and a linear history becomes a tree of one run. Branches need
   * the session saved (commit "session").
   */
  private async settled(
    session: Readonly<AgentSession>,
    current: StoredChatHistoryState | undefined,
  ): Promise<StoredChatHistoryState & { tree: StoredHistoryTree }> {
    if (this.commit === "run") {
      throw new HistoryBranchError(
        `session ${quoted(session.id)} keeps its history with commit: "run", where the log is the record and the session is never saved: it cannot hold branches`,
        'use commit: "session" (the default) and save the session (withSession) to regenerate, edit, switch or fork',
      );
    }
    let state = current;
    if (!state) {
      const adopted = await this.adopt(session, true);
      if (adopted.carried)
        throw new HistoryBranchError(
          `session ${quoted(session.id)} still holds its history in an in-memory history state`,
          "run one turn with this agent first: it moves the history into the message log",
        );
      state = {
        $type: "StoredChatHistoryState",
        $version: 2,
        storageId: adopted.storageId,
        messageCount: adopted.count,
      };
    }
    if (state.tree && !state.pending) return state as StoredChatHistoryState & { tree: StoredHistoryTree };
    // A linear history is a tree of one run (nothing read): its pending append continues that run.
    if (!state.tree && state.pending?.mode !== "replace")
      state = { ...state, tree: linearTree(state.messageCount + (state.pending?.messages.length ?? 0)) };
    if (!state.pending) return state as StoredChatHistoryState & { tree: StoredHistoryTree };
    if (!state.tree || state.pending.mode === "replace") {
      const { count } = await this.flushed({ ...state, tree: undefined });
      return {
        $type: "StoredChatHistoryState",
        $version: 2,
        storageId: state.storageId,
        messageCount: count,
        tree: linearTree(count),
        ...(state.forkedFrom ? { forkedFrom: state.forkedFrom } : {}),
      };
    }
    const { storageId, messageCount } = state;
    const pending = state.pending!;
    const pendingCount = pending.messages.length;
    for (let attempt = 0; ; attempt++) {
      try {
        const seen = this.log.readMessageRange
          ? await this.log.readMessageRange(storageId, { start: messageCount, count: pendingCount })
          : await (async () => {
              const all = await this.log.readMessages(storageId);
              return { ...all, messages: all.messages.slice(messageCount), length: all.messages.length };
            })();
        if (seen.length === messageCount) {
          await this.log.appendMessages(storageId, pending.messages, { operationId: pending.operationId });
        } else if (
          !(
            seen.length >= messageCount + pendingCount &&
            pending.messages.every((m, i) => sameMessage(m, seen.messages[i]))
          )
        ) {
          // A lost save's leftovers after the committed entries: cut them off, onto the log as read.
          const all = await this.log.readMessages(storageId);
          if (all.messages.length < messageCount)
            throw new StatebagError(
              "history-fork-source-missing",
              `the message log ${quoted(storageId)} of session ${quoted(session.id)} holds ${all.messages.length} message(s), fewer than the ${messageCount} its branches name`,
              { hint: "a branched history's log is only appended to: restore it, or start the session again" },
            );
          await this.log.replaceMessages(storageId, [...all.messages.slice(0, messageCount), ...pending.messages], {
            expectedVersion: all.version,
            operationId: pending.operationId,
          });
        }
        const { pending: _applied, ...rest } = state;
        return { ...rest, messageCount: messageCount + pendingCount } as StoredChatHistoryState & {
          tree: StoredHistoryTree;
        };
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt >= 2) throw error;
      }
    }
  }

  /** The settled state and a reader of its entries, for the branch operations (no run). */
  private async branches(session: AgentSession) {
    const state = await this.settled(session, this.state.read(session));
    const tree = state.tree;
    return { state, tree, reader: new TreeReader(this.log, session.id, state, tree) };
  }

  override get supportsBranches(): boolean {
    return this.commit === "session";
  }

  override async parentOf(session: AgentSession, messageId: string): Promise<string | null> {
    const { tree, reader } = await this.branches(session);
    const parent = parentRef(tree, await reader.find(messageId));
    return parent ? reader.idAt(parent) : null;
  }

  override async siblings(session: AgentSession, messageId: string): Promise<MessageSiblings> {
    const { tree, reader } = await this.branches(session);
    const ref = await reader.find(messageId);
    const parent = parentRef(tree, ref);
    const children = childrenOf(tree, parent);
    const siblingIds = await Promise.all(children.map((c) => reader.idAt(c)));
    return {
      messageId,
      parentId: parent ? await reader.idAt(parent) : null,
      index: children.findIndex((c) => c.run === ref.run && c.offset === ref.offset),
      count: children.length,
      siblingIds,
    };
  }

  override async pathTail(session: AgentSession, count: number, messageId?: string): Promise<ChatMessage[]> {
    const { tree, reader } = await this.branches(session);
    const ref = messageId === undefined ? tree.active : await reader.find(messageId);
    if (!ref) return [];
    const messages = await reader.readPath(pathSegments(tree, ref), count);
    const first = depthOf(tree, ref) - messages.length + 1;
    return structuredClone(messages.map((m, i) => ({ ...m, messageId: m.messageId ?? `statebag-${first + i}` })));
  }

  override async messageTree(session: AgentSession): Promise<HistoryTreeNode[]> {
    const { tree, reader } = await this.branches(session);
    const ids: string[][] = [];
    const runs: ChatMessage[][] = [];
    for (let run = 0; run < tree.runs.length; run++) {
      const messages = await reader.read(run, 0, tree.runs[run].count);
      const base = tree.runs[run].parent ? depthOf(tree, tree.runs[run].parent!) + 1 : 0;
      runs.push(messages);
      ids.push(messages.map((m, i) => m.messageId ?? `statebag-${base + i}`));
    }
    const nodes: HistoryTreeNode[] = [];
    runs.forEach((messages, run) =>
      messages.forEach((message, offset) => {
        const parent = parentRef(tree, { run, offset });
        nodes.push({
          message: structuredClone(message),
          parentId: parent ? ids[parent.run][parent.offset] : null,
          active: reader.isActive({ run, offset }),
        });
      }),
    );
    return nodes;
  }

  override async switchBranch(session: AgentSession, messageId: string): Promise<void> {
    const { state, tree, reader } = await this.branches(session);
    const leaf = reader.newestLeaf(await reader.find(messageId));
    this.state.write(session, { ...state, tree: { ...tree, active: leaf } });
  }

  override async rewind(session: AgentSession, messageId: string): Promise<void> {
    const { state, tree, reader } = await this.branches(session);
    this.state.write(session, { ...state, tree: { ...tree, active: await reader.find(messageId) } });
  }

  /**
   * The fork's history names the source's log entries (never copied): its runs are the source's
   * path up to `messageId`, each with the log it is in. With a reducer (which rewrites a log) the
   * fork gets a copy instead, in its own log.
   */
  override async fork(
    session: AgentSession,
    messageId: string,
    target: AgentSession,
    origin: ForkOrigin,
  ): Promise<void> {
    const { state, tree, reader } = await this.branches(session);
    const segments = pathSegments(tree, await reader.find(messageId));
    const storageId = this.storageIdFor(target);
    const sources = new Set(tree.runs.map((r) => r.storageId ?? state.storageId));
    if (sources.has(storageId))
      throw new HistoryBranchError(
        `the fork of session ${quoted(session.id)} would keep its messages in the log ${quoted(storageId)}, which the source's history reads`,
        "give the fork an id of its own (ForkOptions.id), or a storageIdFor that names a new log",
      );
    let next: StoredChatHistoryState;
    if (this.reducer) {
      const messages = await reader.readPath(segments);
      next = {
        $type: "StoredChatHistoryState",
        $version: 2,
        storageId,
        messageCount: 0,
        pending: { operationId: `fork-${origin.forkedAt}-${storageId}`, mode: "append", messages },
        tree: linearTree(messages.length),
        forkedFrom: origin,
      };
    } else {
      const runs = segments.map((s, i) => {
        const run = tree.runs[s.run];
        return {
          storageId: run.storageId ?? state.storageId,
          start: run.start + s.from,
          count: s.count,
          ...(i > 0 ? { parent: { run: i - 1, offset: segments[i - 1].count - 1 } } : {}),
        };
      });
      next = {
        $type: "StoredChatHistoryState",
        $version: 2,
        storageId,
        messageCount: 0,
        tree: { runs, active: { run: runs.length - 1, offset: runs[runs.length - 1].count - 1 } },
        forkedFrom: origin,
      };
    }
    this.state.write(target, next);
  }

  override forkedFrom(session: AgentSession): ForkOrigin | undefined {
    const origin = this.state.read(session)?.forkedFrom;
    return origin ? { ...origin } : undefined;
  }

  /**
   * The history of a session that has no state under this provider's key: the log under its
   * storage id (one read), or, when that log is empty, the messages an in-memory history provider
   * kept in the session. Both non-empty and different: refused, naming where the history is.
   */
  private async adopt(
    session: Readonly<AgentSession>,
    /** The whole history, not what the model sees of it (`listMessages`). */
    whole = false,
  ): Promise<{
    storageId: string;
    history: readonly ChatMessage[];
    length: number;
    appendOnly: boolean;
    carriedMessages?: ChatMessage[];
    count: number;
    version: number;
    carried: boolean;
  }> {
    const storageId = this.storageIdFor(session);
    const foreign = foreignHistoryStates(session, this.key);
    const otherLog = foreign.find((f) => f.$type === "StoredChatHistoryState");
    if (otherLog) {
      throw new HistoryProviderMismatchError(
        session.id,
        otherLog,
        "StoredChatHistoryProvider",
        `this provider uses the key "${this.key}"`,
        `give the provider the session's key: new StoredChatHistoryProvider({ log, key: ${JSON.stringify(otherLog.key)} })`,
      );
    }
    const inMemory = foreign.filter(
      (f) => Array.isArray(f.value.messages) && (f.value.messages as unknown[]).length > 0,
    );
    const shown = (history: ChatMessage[]) => all(whole ? history : this.shown(history));
    if (inMemory.length === 0 && !whole && this.window !== undefined && this.log.readMessageWindow) {
      const window = await this.log.readMessageWindow(storageId, { last: this.window });
      return {
        storageId,
        ...all(this.shape!(window.messages) as ChatMessage[]),
        count: window.length,
        version: window.version,
        carried: false,
      };
    }
    if (inMemory.length === 0) {
      // The log as read, shared when it is the warm cache's (what the model sees of it, with a window).
      const log = await this.readLogShared(storageId);
      const history = whole || !this.shape ? log : all(this.shown(log.history.slice(0, log.length)));
      return { storageId, ...history, count: log.length, version: log.version, carried: false };
    }
    const snapshot = await this.readLog(storageId);
    if (inMemory.length > 1) {
      throw new HistoryProviderMismatchError(
        session.id,
        inMemory[0],
        "StoredChatHistoryProvider",
        `the session holds in-memory histories under ${inMemory.map((f) => `"${f.key}"`).join(" and ")}, and which one is current is not recorded`,
        "remove the stale one from session.stateBag before running it with a StoredChatHistoryProvider",
      );
    }
    const source = inMemory[0];
    const messages = source.value.messages as ChatMessage[];
    // Carried over: all of it goes to the log with the first turn (in addMessages, so no window here).
    if (snapshot.messages.length === 0) {
      const carried = structuredClone(messages);
      return {
        storageId,
        ...shown(carried),
        carriedMessages: carried,
        count: messages.length,
        version: snapshot.version,
        carried: true,
      };
    }
    // The log already took these messages over (an earlier carry-over whose session was not saved).
    if (snapshot.messages.length >= messages.length && messages.every((m, i) => sameMessage(m, snapshot.messages[i]))) {
      return {
        storageId,
        ...shown(snapshot.messages),
        count: snapshot.messages.length,
        version: snapshot.version,
        carried: false,
      };
    }
    throw new HistoryProviderMismatchError(
      session.id,
      source,
      "StoredChatHistoryProvider",
      `it holds ${messages.length} message(s) there, and the message log ${quoted(storageId)} already holds ${snapshot.messages.length} other message(s); statebag merges or drops neither`,
      "run the session with an agent whose history is an InMemoryChatHistoryProvider, or move the log aside (store.messages.deleteMessages, or a storageIdFor naming an empty log) to carry the in-memory history over",
    );
  }

  /**
   * Applies a pending write of an earlier, committed run to the log (idempotently) and returns the
   * committed history and the log's version after it.
   */
  private async flushed(state: StoredChatHistoryState): Promise<ShownHistory & { count: number; version: number }> {
    const { storageId, pending } = state;
    for (let attempt = 0; ; attempt++) {
      if (!pending) {
        const log = await this.readLogShared(storageId);
        // In "run" mode the log is the record: every message in it is history.
        const length = this.commit === "run" ? log.length : Math.min(log.length, state.messageCount);
        // Shared (no copy) unless a window cuts it.
        const history = this.shape
          ? all(this.shown(log.history.slice(0, length)))
          : { history: log.history, length, appendOnly: log.appendOnly };
        return { ...history, count: length, version: log.version };
      }
      const snapshot = await this.readLog(storageId);
      const view = committedView(snapshot.messages, state);
      if (view.applied)
        return { ...all(this.shown(view.history)), count: view.history.length, version: snapshot.version };
      try {
        let version: number;
        if (pending.mode === "append" && snapshot.messages.length === state.messageCount) {
          version = (await this.log.appendMessages(storageId, pending.messages, { operationId: pending.operationId }))
            .version;
        } else {
          // A replacement, or an append that must also cut off a lost save's leftovers: onto the
          // log as just read, never blindly.
          version = await this.log.replaceMessages(storageId, view.history, {
            expectedVersion: snapshot.version,
            operationId: pending.operationId,
          });
        }
        return { ...all(this.shown(view.history)), count: view.history.length, version };
      } catch (error) {
        // Another reader applied it meanwhile: look again.
        if (!(error instanceof ConflictError) || attempt >= 2) throw error;
      }
    }
  }

  /** What the model sees of a committed history: all of it, or its window. */
  private shown(history: ChatMessage[]): ChatMessage[] {
    return this.shape ? (this.shape(history) as ChatMessage[]) : history;
  }

  /**
   * `flushed` with a window: the committed history's newest messages and its length, from a
   * windowed read (and the pending append applied). Undefined when only the whole log can tell
   * (no windowed read, a log shorter than the state's count, leftovers to cut off): `flushed` then.
   */
  private async windowed(
    state: StoredChatHistoryState,
  ): Promise<(ShownHistory & { count: number; version: number }) | undefined> {
    const read = this.log.readMessageWindow?.bind(this.log);
    const windowSize = this.window!;
    const { storageId, pending, messageCount } = state;
    if (!read || pending?.mode === "replace") return undefined;
    const pendingCount = pending?.messages.length ?? 0;
    for (let attempt = 0; attempt < 3; attempt++) {
      let window = await read(storageId, { last: windowSize + pendingCount });
      if (this.commit === "run" && !pending)
        return { ...all(this.shape!(window.messages) as ChatMessage[]), count: window.length, version: window.version };
      const length = window.length;
      if (length < messageCount) return undefined;
      const need = length - Math.max(0, messageCount - windowSize);
      if (need > window.messages.length) {
        // Messages beyond the committed ones (a lost save's leftovers): read back to the window.
        window = await read(storageId, { last: need });
        if (window.length !== length || window.messages.length !== need) continue;
      }
      const base = length - window.messages.length; // the log position of w.messages[0]
      const committed = window.messages.slice(Math.max(0, messageCount - windowSize) - base, messageCount - base);
      if (!pending)
        return { ...all(this.shape!(committed) as ChatMessage[]), count: messageCount, version: window.version };
      const tail = window.messages.slice(messageCount - base);
      const history = [...committed, ...pending.messages];
      if (tail.length >= pendingCount && pending.messages.every((m, i) => sameMessage(m, tail[i]))) {
        return {
          ...all(this.shape!(history) as ChatMessage[]),
          count: messageCount + pendingCount,
          version: window.version,
        };
      }
      if (length !== messageCount) return undefined;
      const { version } = await this.log.appendMessages(storageId, pending.messages, {
        operationId: pending.operationId,
      });
      return { ...all(this.shape!(history) as ChatMessage[]), count: messageCount + pendingCount, version };
    }
    return undefined;
  }

  /**
   * The whole log, through the warm cache when the log has windowed reads: unchanged since the
   * cached version, one small read; grown by appends only (same oldest position, length grown by
   * what the end moved, the cached newest message still in its place), only the new messages;
   * anything else, the whole log again.
   */
  private async readLog(storageId: string): Promise<MessageLogSnapshot> {
    const log = await this.readLogShared(storageId);
    // A copy of a shared array: callers may change what they get.
    return {
      messages: log.appendOnly ? log.history.slice(0, log.length) : (log.history as ChatMessage[]),
      version: log.version,
    };
  }

  /**
   * `readLog` without its copy: the log is `history[0..length)`; with `appendOnly` the array is the
   * warm cache's (shared: read only, it only grows at its end), otherwise this read's own.
   */
  private async readLogShared(storageId: string): Promise<ShownHistory & { version: number }> {
    const read = this.log.readMessageWindow?.bind(this.log);
    if (!this.cache || !read) {
      const { messages, version } = await this.log.readMessages(storageId);
      return { ...all(messages), version };
    }
    const entry = this.cache.get(storageId);
    if (entry) {
      // What the entry held before the read: another run of this process may grow it meanwhile.
      const { version, end, length } = entry;
      const overlap = end !== undefined && length > 0;
      const tail = await read(storageId, end === undefined ? { last: 0 } : { from: overlap ? end - 1 : end });
      // The array only grows at its end, so its first `length` messages are still that version.
      if (tail.version === version && tail.length === length)
        return { history: entry.messages, length, appendOnly: true, version };
      if (
        end !== undefined &&
        tail.end !== undefined &&
        tail.end >= end &&
        tail.length - length === tail.end - end &&
        (!overlap || (tail.messages.length > 0 && sameMessage(tail.messages[0], entry.messages[length - 1])))
      ) {
        const added = overlap ? tail.messages.slice(1) : tail.messages;
        if (this.cache.get(storageId) === entry && entry.version === version && entry.messages.length === length) {
          // Grown in place: the cache's array, now with the new messages at its end.
          this.cache.grow(storageId, entry, added, tail.version, tail.end);
          return { history: entry.messages, length: length + added.length, appendOnly: true, version: tail.version };
        }
        const messages = entry.messages.slice(0, length);
        for (const message of added) messages.push(message);
        return { ...all(messages), version: tail.version };
      }
    }
    // The whole log through readMessages (what a log without windows, or a wrapper, serves), and
    // its end position from a read of no messages: kept only when both saw the same version.
    const head = await read(storageId, { last: 0 });
    const snapshot = await this.log.readMessages(storageId);
    const end = head.version === snapshot.version && head.length === snapshot.messages.length ? head.end : undefined;
    const { messages, version } = snapshot;
    this.cache.set(storageId, { version, end, length: messages.length, messages, bytes: estimatedBytes(messages) });
    // The cache's array (kept or not, nothing but a pure append changes it).
    return { history: messages, length: messages.length, appendOnly: true, version };
  }
}

/** A history as a run shows it: `history[0..length)`, shared and read only when `appendOnly`. */
interface ShownHistory {
  history: readonly ChatMessage[];
  length: number;
  appendOnly: boolean;
}

/** A history array of its own (not shared). */
function all(history: ChatMessage[]): ShownHistory {
  return { history, length: history.length, appendOnly: false };
}

/** The history a state commits to, given the log as it is, and whether the log already holds it. */
function committedView(
  log: readonly ChatMessage[],
  state: StoredChatHistoryState,
): { history: ChatMessage[]; applied: boolean } {
  const { pending, messageCount } = state;
  if (!pending) return { history: log.slice(0, messageCount), applied: true };
  if (pending.mode === "replace") {
    return {
      history: pending.messages,
      applied: log.length >= pending.messages.length && pending.messages.every((m, i) => sameMessage(m, log[i])),
    };
  }
  // The first `messageCount` messages are the log's own; only the pending tail needs comparing.
  const applied =
    log.length >= messageCount + pending.messages.length &&
    pending.messages.every((m, i) => sameMessage(m, log[messageCount + i]));
  return { history: [...log.slice(0, messageCount), ...pending.messages], applied };
}

function sameMessage(a: ChatMessage, b: ChatMessage | undefined): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
