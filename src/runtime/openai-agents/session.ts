/**
 * `StatebagSession`: the OpenAI Agents SDK's `Session` over any statebag `SessionStore`.
 *
 * Design: the conversation lives in the session document itself, as the same
 * `InMemoryChatHistoryState` (key `statebag.chatHistory`) a statebag agent writes, one message per
 * item (see items.ts), not in the store's message log. Why:
 * - `popItem` and `clearSession` remove items, and `addItems` must never lose a concurrent
 *   writer's items: on the document all three are one compare-and-swap of one row (a
 *   `ConflictError` reloads and reapplies), while on the log a pop is a read plus a versioned
 *   replacement of the whole log, no cheaper and with two places to keep consistent;
 * - a `RunState` waiting for approval is kept in the same document (`saveRunState`), so the
 *   history and the pending run are saved, encrypted, owned, listed, expired, erased and migrated
 *   together, as one session any statebag tool (`statebag migrate`, `eraseOwner`, retention,
 *   `list`) already handles;
 * - the SDK reads the whole history each turn anyway (`getItems()` without a limit).
 * A very long conversation makes every save rewrite it; keep such sessions short with the SDK's
 * compaction, or use a statebag agent with `StoredChatHistoryProvider` (the log) instead.
 *
 * The SDK is never imported here (its types are structural, types.ts); only `loadRunState` loads it.
 */
import { randomUUID } from "node:crypto";
import { ConfigurationError } from "../core/errors.js";
import type { ChatMessage } from "../core/messages.js";
import { quoted } from "../core/json.js";
import { createSessionData, type AgentSession } from "../core/session.js";
import type { TaggedValue } from "../core/tagged.js";
import { ConflictError, SessionOwnerError } from "../stores/errors.js";
import type { SessionStore, StoredSession } from "../stores/types.js";
import { itemToMessage, messagesToItems, messageToItems } from "./items.js";
import { loadRunStateWith, type RunStateAgent } from "./run-state.js";
import type { AgentItem, AgentsSession, SerializableRunState } from "./types.js";

/** The state bag key of the conversation: the one a statebag agent's default history provider uses. */
export const OPENAI_AGENTS_HISTORY_KEY = "statebag.chatHistory";
/** The state bag key of a run waiting for approval (`saveRunState`). */
export const OPENAI_AGENTS_RUN_STATE_KEY = "openai-agents.runState";
/** The `$type` of the value under `OPENAI_AGENTS_RUN_STATE_KEY`. */
export const OPENAI_AGENTS_RUN_STATE_TYPE = "openai-agents.RunState";

/** A run interrupted for approval, as kept in the state bag: the SDK's own string form. */
export interface OpenAIAgentsRunStateValue {
  $type: typeof OPENAI_AGENTS_RUN_STATE_TYPE;
  $version?: 1;
  /** `RunState.toString()`, exactly. */
  state: string;
  /** When it was saved (ISO 8601). */
  savedAt: string;
}

export interface StatebagSessionOptions {
  /** The store the session lives in (any statebag store: memory, SQLite, PostgreSQL, Redis, encrypted or not). */
  store: SessionStore;
  /** The statebag session id. Default: a new UUID (read it back with `getSessionId()`). */
  sessionId?: string;
  /**
   * The tenant. A session this object creates is stored with this owner (`meta.owner`: listing,
   * retention and `eraseOwner` cover it); another owner's session reads as empty, and every
   * change to it (add, pop, clear, run state) is refused with `SessionOwnerError`, nothing written.
   */
  owner?: string;
  /** Time to live of each save, in milliseconds (absent: kept until deleted). */
  ttlMs?: number;
  /** How often a save is retried after another writer changed the session first. Default 50. */
  maxConflictRetries?: number;
}

/** What a mutation makes of the stored messages and run state (undefined: change nothing). */
type Change<R> = (
  messages: ChatMessage[],
  bag: AgentSession["stateBag"],
) => { messages: ChatMessage[]; result: R } | undefined;

/**
 * `Item`: the SDK's item type. It defaults to `any` so a `StatebagSession` is the SDK's `Session`
 * (`getItems` returns `AgentInputItem[]` there) without statebag's declarations naming the SDK;
 * write `new StatebagSession<AgentInputItem>(...)` for the exact type.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above: the SDK's own item type, which statebag cannot name
export class StatebagSession<Item extends AgentItem = any> implements AgentsSession<Item> {
  readonly store: SessionStore;
  readonly sessionId: string;
  readonly owner?: string;
  private readonly ttlMs?: number;
  private readonly maxConflictRetries: number;
  /**
   * The session as this object last read or wrote it. A change starts from it instead of reading
   * the row again: the save's compare-and-swap refuses it if anyone wrote since, and the change is
   * then redone from a fresh read. (Reads never use it: they must see other writers.)
   */
  private last?: { revision: number; session: AgentSession };

  constructor(options: StatebagSessionOptions) {
    if (options === null || typeof options !== "object" || options.store === undefined) {
      throw new ConfigurationError(
        "new StatebagSession(options) needs { store }",
        'pass a statebag store: new StatebagSession({ store: await openStore("sqlite:./sessions.db"), sessionId })',
      );
    }
    this.store = options.store;
    this.sessionId = options.sessionId ?? randomUUID();
    if (options.owner !== undefined) this.owner = options.owner;
    if (options.ttlMs !== undefined) this.ttlMs = options.ttlMs;
    this.maxConflictRetries = options.maxConflictRetries ?? 50;
  }

  async getSessionId(): Promise<string> {
    return this.sessionId;
  }

  /** The items, oldest first; with `limit`, only the newest `limit` (none for `limit <= 0`), as `MemorySession` does. */
  async getItems(limit?: number): Promise<Item[]> {
    if (limit !== undefined && limit <= 0) return [];
    const messages = historyOf((await this.load())?.session);
    if (limit === undefined) return messagesToItems(messages) as Item[];
    // Each message this class writes is one item: read only the tail's messages (more when a
    // message written elsewhere stands for several items).
    let take = Math.min(limit, messages.length);
    for (;;) {
      const items = messagesToItems(messages.slice(messages.length - take));
      if (items.length >= limit || take === messages.length)
        return items.slice(Math.max(0, items.length - limit)) as Item[];
      take = Math.min(messages.length, take * 2);
    }
  }

  /** Appends the items in order. Concurrent `addItems` calls never lose each other's items. */
  async addItems(items: Item[]): Promise<void> {
    if (!Array.isArray(items)) {
      throw new ConfigurationError("addItems(items) needs an array of Agents SDK items", "pass AgentInputItem[]");
    }
    if (items.length === 0) return;
    const added = items.map((item, i) => itemToMessage(item, i));
    await this.change((messages) => ({ messages: [...messages, ...added], result: undefined }));
  }

  /** Removes and returns the newest item (undefined when there is none). */
  async popItem(): Promise<Item | undefined> {
    return this.change<Item | undefined>((messages) => {
      const last = messages.at(-1);
      if (last === undefined) return undefined;
      const items = messageToItems(last);
      const popped = items.pop();
      // A message written elsewhere may stand for several items: the others stay, one message each.
      const rest = items.map((item, i) => itemToMessage(item, i));
      return { messages: [...messages.slice(0, -1), ...rest], result: popped as Item | undefined };
    });
  }

  /** Removes every item and any run waiting for approval. The session (its id, owner, other state) stays. */
  async clearSession(): Promise<void> {
    await this.change((messages, bag) => {
      if (messages.length === 0 && !Object.hasOwn(bag, OPENAI_AGENTS_RUN_STATE_KEY)) return undefined;
      delete bag[OPENAI_AGENTS_RUN_STATE_KEY];
      return { messages: [], result: undefined };
    });
  }

  /**
   * Keeps a run interrupted for approval (`result.state` when `result.interruptions` is not empty)
   * in this session, so another process can resume it after a restart with `loadRunState`.
   * Replaces any run kept before.
   */
  async saveRunState(state: SerializableRunState | string): Promise<void> {
    const text = typeof state === "string" ? state : state.toString();
    if (typeof text !== "string" || text === "") {
      throw new ConfigurationError(
        "saveRunState(state) needs a RunState (or its toString() form)",
        "pass result.state from a run that stopped for approval",
      );
    }
    const value: OpenAIAgentsRunStateValue = {
      $type: OPENAI_AGENTS_RUN_STATE_TYPE,
      state: text,
      savedAt: new Date().toISOString(),
    };
    await this.change((messages, bag) => {
      bag[OPENAI_AGENTS_RUN_STATE_KEY] = value as unknown as TaggedValue;
      return { messages, result: undefined };
    });
  }

  /** The kept run's string form (`RunState.toString()`), or undefined when none is kept. */
  async getRunStateString(): Promise<string | undefined> {
    const value = (await this.load())?.session.stateBag[OPENAI_AGENTS_RUN_STATE_KEY];
    return value?.$type === OPENAI_AGENTS_RUN_STATE_TYPE && typeof value.state === "string" ? value.state : undefined;
  }

  /**
   * The kept run as an SDK `RunState` for `agent` (`RunState.fromString(agent, text)`, loaded from
   * `@openai/agents-core` now), or undefined when none is kept. Approve or reject its
   * interruptions and pass it to `run(agent, state, { session })`; then `clearRunState()`.
   */
  async loadRunState<S = unknown>(agent: RunStateAgent): Promise<S | undefined> {
    const text = await this.getRunStateString();
    return text === undefined ? undefined : loadRunStateWith<S>(agent, text);
  }

  /** Forgets the kept run (after it was resumed or abandoned). Returns whether one was kept. */
  async clearRunState(): Promise<boolean> {
    return this.change((messages, bag) => {
      if (!Object.hasOwn(bag, OPENAI_AGENTS_RUN_STATE_KEY)) return undefined;
      delete bag[OPENAI_AGENTS_RUN_STATE_KEY];
      return { messages, result: true };
    }).then((r) => r ?? false);
  }

  /** The stored session, or undefined when absent or another owner's. */
  private async load(): Promise<StoredSession | undefined> {
    const stored = await this.store.get(this.sessionId);
    if (stored === undefined) return undefined;
    if (this.owner !== undefined && stored.meta.owner !== this.owner) return undefined;
    this.last = { revision: stored.revision, session: stored.session };
    return stored;
  }

  /** Read, change, compare-and-swap; on a conflict, again from the fresh copy. */
  private async change<R>(apply: Change<R>): Promise<R | undefined> {
    for (let attempt = 0; ; attempt++) {
      const cached = this.last;
      const stored = cached ?? (await this.store.get(this.sessionId));
      // Another owner's session: refused before anything of it is read (the store would refuse the save too).
      if (stored !== undefined && cached === undefined && this.owner !== undefined) {
        if ((stored as StoredSession).meta.owner !== this.owner)
          throw new SessionOwnerError(this.sessionId, this.owner);
      }
      const session = stored ? structuredClone(stored.session) : createSessionData({ id: this.sessionId });
      const outcome = apply(historyOf(session), session.stateBag);
      if (outcome === undefined) {
        // "Nothing to change" is only true of the stored session, not of a copy that may be stale.
        if (cached === undefined) return undefined;
        this.last = undefined;
        continue;
      }
      const current = session.stateBag[OPENAI_AGENTS_HISTORY_KEY];
      session.stateBag[OPENAI_AGENTS_HISTORY_KEY] = {
        ...(current ?? { $type: "InMemoryChatHistoryState", droppedMessageCount: 0 }),
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: outcome.messages,
        branches: [],
        branchPoints: [],
      } as TaggedValue;
      try {
        const revision = await this.store.save(session, {
          expectedRevision: stored?.revision ?? null,
          ...(this.ttlMs === undefined ? {} : { ttlMs: this.ttlMs }),
          ...(this.owner === undefined ? {} : { meta: { owner: this.owner } }),
        });
        this.last = { revision, session };
        return outcome.result;
      } catch (error) {
        this.last = undefined;
        if (!(error instanceof ConflictError) || attempt >= this.maxConflictRetries) throw error;
        // A conflict on the first try from the copy this object kept is no sign of contention: redo at once.
        if (cached !== undefined) continue;
        // Spread retries of writers that collided, so they do not collide again in lockstep.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
      }
    }
  }
}

/** The messages of a session's history, after checking it is one this session can keep. */
function historyOf(session: AgentSession | undefined): ChatMessage[] {
  const value = session?.stateBag[OPENAI_AGENTS_HISTORY_KEY];
  if (value === undefined) return [];
  if (value.$type !== "InMemoryChatHistoryState" || !Array.isArray(value.messages)) {
    throw new ConfigurationError(
      `session ${quoted(session?.id ?? "")} keeps ${quoted(OPENAI_AGENTS_HISTORY_KEY)} as ${quoted(String(value.$type))}, not a history StatebagSession can use`,
      "open a session whose history is kept in the session (a statebag agent's default history), or use another session id",
    );
  }
  return [...(value.messages as ChatMessage[])];
}
