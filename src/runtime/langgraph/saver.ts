/**
 * `createStatebagSaver`: LangGraph's `BaseCheckpointSaver` over any statebag `SessionStore`.
 *
 * One thread is one session (see document.ts), so everything statebag does for sessions covers
 * threads: saves are compare-and-swap (a put that loses a race re-reads and re-applies, never
 * overwrites), the store's codec encrypts and validates the body, a checkpoint metadata `owner`
 * becomes the session's `meta.owner` (`store.list({ owner })`, retention and `eraseOwner` see the
 * thread), and `statebag migrate` rewrites it like any session. One saver applies its calls on a
 * thread in the order they were made (LangGraph does not await a put before the step's writes).
 *
 * `@langchain/langgraph-checkpoint` is an optional peer: the subclass is built when the factory
 * first runs, from the package imported then, so loading statebag never needs it.
 */
import { ConfigurationError, type StatebagError } from "../core/errors.js";
import { createSessionData } from "../core/session.js";
import { importOptional, importPackage } from "../core/optional-dependency.js";
import type { SessionStore } from "../stores/types.js";
import {
  LANGGRAPH_STATE_KEY,
  type Namespace,
  type StoredCheckpoint,
  type StoredWrite,
  type Thread,
  decodeValue,
  emptyThread,
  encodeValue,
  namespaceOf,
  readThread,
  threadState,
  versionKey,
} from "./document.js";
import type {
  LangGraphChannelVersion,
  LangGraphCheckpoint,
  LangGraphCheckpointMetadata,
  LangGraphCheckpointTuple,
  LangGraphConfig,
  LangGraphListOptions,
  LangGraphPendingWrite,
  LangGraphSerializer,
  StatebagSaver,
} from "./types.js";

export const LANGGRAPH_CHECKPOINT_PACKAGE = "@langchain/langgraph-checkpoint";

export interface StatebagSaverOptions {
  /** The serializer for channel values and metadata (default: LangGraph's `JsonPlusSerializer`). */
  serde?: LangGraphSerializer;
  /** Prepended to a thread id to make its session id (default `"langgraph:"`). */
  idPrefix?: string;
  /** Time to live of a thread, renewed by every save (absent: kept until deleted or erased). */
  ttlMs?: number;
  /** How often a save that lost a compare-and-swap race is re-applied before it fails (default 100). */
  maxConflictRetries?: number;
}

/** What the saver uses of `@langchain/langgraph-checkpoint`, described without its types. */
interface CheckpointModule {
  BaseCheckpointSaver: abstract new (serde?: LangGraphSerializer) => BaseSaverLike;
  WRITES_IDX_MAP: Record<string, number>;
  writesSortKey(taskPath: string, taskId?: string, idx?: number): readonly [string, string, number];
  compareWritesSortKeys(a: readonly [string, string, number], b: readonly [string, string, number]): number;
  copyCheckpoint(checkpoint: LangGraphCheckpoint): LangGraphCheckpoint;
  maxChannelVersion(...versions: LangGraphChannelVersion[]): LangGraphChannelVersion;
  TASKS: string;
}

interface BaseSaverLike {
  serde: LangGraphSerializer;
  getNextVersion(current: number | undefined): number;
}

let loaded: Promise<(store: SessionStore, options: StatebagSaverOptions) => StatebagSaver> | undefined;

/**
 * A LangGraph checkpointer keeping threads in `store`. Resolves once `@langchain/langgraph-checkpoint`
 * is loaded; rejects with `MissingDependencyError` (`npm i @langchain/langgraph-checkpoint`) without it.
 */
export async function createStatebagSaver(
  store: SessionStore,
  options: StatebagSaverOptions = {},
): Promise<StatebagSaver> {
  checkOptions(options);
  loaded ??= importOptional(LANGGRAPH_CHECKPOINT_PACKAGE, "statebag/langgraph (createStatebagSaver)", () =>
    importPackage<CheckpointModule>(LANGGRAPH_CHECKPOINT_PACKAGE),
  ).then(defineSaver);
  let make: (store: SessionStore, options: StatebagSaverOptions) => StatebagSaver;
  try {
    make = await loaded;
  } catch (error) {
    loaded = undefined; // a package installed later is picked up by the next call
    throw error;
  }
  return make(store, options);
}

function checkOptions(options: StatebagSaverOptions): void {
  if (options.idPrefix !== undefined && typeof options.idPrefix !== "string")
    throw new ConfigurationError("createStatebagSaver: idPrefix must be a string", 'for example "langgraph:"');
  if (
    options.maxConflictRetries !== undefined &&
    (!Number.isInteger(options.maxConflictRetries) || options.maxConflictRetries < 0)
  )
    throw new ConfigurationError(
      `createStatebagSaver: maxConflictRetries must be a non-negative integer, got ${String(options.maxConflictRetries)}`,
      "leave it out for the default (100)",
    );
}

/** A thread id as LangGraph passes it (`configurable.thread_id`): a string, or a number taken as its text. */
function threadIdOf(config: LangGraphConfig, what: string): string | undefined {
  const id = config.configurable?.thread_id;
  if (id === undefined || id === null) return undefined;
  if (typeof id === "string" && id !== "") return id;
  if (typeof id === "number" && Number.isFinite(id)) return String(id);
  throw new ConfigurationError(
    `${what}: configurable.thread_id must be a non-empty string, got ${typeof id === "string" ? '""' : typeof id}`,
    'pass { configurable: { thread_id: "<conversation id>" } } to invoke/stream',
  );
}

function requireThreadId(config: LangGraphConfig, what: string): string {
  const id = threadIdOf(config, what);
  if (id === undefined)
    throw new ConfigurationError(
      `${what}: the config has no configurable.thread_id, so the saver does not know which thread to keep`,
      'pass { configurable: { thread_id: "<conversation id>" } } to invoke/stream',
    );
  return id;
}

function namespaceArg(config: LangGraphConfig): string {
  const ns = config.configurable?.checkpoint_ns ?? "";
  if (typeof ns !== "string")
    throw new ConfigurationError(
      `configurable.checkpoint_ns must be a string, got ${typeof ns}`,
      'leave it out for the root graph ("")',
    );
  return ns;
}

function checkpointIdArg(config: LangGraphConfig): string | undefined {
  const id = config.configurable?.checkpoint_id ?? config.configurable?.thread_ts;
  if (id === undefined || id === null || id === "") return undefined;
  if (typeof id !== "string")
    throw new ConfigurationError(
      `configurable.checkpoint_id must be a string, got ${typeof id}`,
      "pass the id a put returned",
    );
  return id;
}

/** Metadata values compared like JSON (LangGraph's filters name plain values). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The thread's owner: the checkpoint metadata's `owner`, else the run config's `metadata.owner`
 * (`graph.invoke(input, { configurable: { thread_id }, metadata: { owner } })`).
 */
function ownerOf(
  method: string,
  config: LangGraphConfig,
  metadata: LangGraphCheckpointMetadata | undefined,
): string | undefined {
  const given = (metadata as { owner?: unknown } | undefined)?.owner;
  const owner = given !== undefined ? given : config.metadata?.owner;
  if (owner === undefined) return undefined;
  if (typeof owner !== "string" || owner === "")
    throw new ConfigurationError(
      `${method}: the thread's owner (metadata.owner) must be a non-empty string, got ${typeof owner === "string" ? '""' : typeof owner}`,
      'pass { metadata: { owner: "<user id>" } } in the config of invoke/stream',
    );
  return owner;
}

function latestId(ns: Namespace): string | undefined {
  let best: string | undefined;
  for (const id of ns.checkpoints.keys()) if (best === undefined || id > best) best = id;
  return best;
}

function defineSaver(mod: CheckpointModule): (store: SessionStore, options: StatebagSaverOptions) => StatebagSaver {
  const Base = mod.BaseCheckpointSaver;

  class Saver extends Base {
    readonly #store: SessionStore;
    readonly #prefix: string;
    readonly #ttlMs: number | undefined;
    readonly #retries: number;
    /** Per thread: the settling of the last put/putWrites called on it (see #inOrder). */
    readonly #tails = new Map<string, Promise<void>>();

    constructor(store: SessionStore, options: StatebagSaverOptions) {
      super(options.serde);
      this.#store = store;
      this.#prefix = options.idPrefix ?? "langgraph:";
      this.#ttlMs = options.ttlMs;
      this.#retries = options.maxConflictRetries ?? 100;
    }

    sessionIdOf(threadId: string): string {
      return this.#prefix + threadId;
    }

    async #load(threadId: string): Promise<Thread | undefined> {
      const stored = await this.#store.get(this.sessionIdOf(threadId));
      return stored === undefined ? undefined : readThread(stored.session);
    }

    /**
     * Runs `work` once every put/putWrites this saver was called with earlier on the same thread has
     * settled. LangGraph sends a step's checkpoint and its tasks' writes without awaiting one another;
     * applied in call order, a new thread is created by its first checkpoint (with the run's owner),
     * never by a write that overtook it, and one process's writers stop colliding on the revision.
     */
    #inOrder<T>(threadId: string, work: () => Promise<T>): Promise<T> {
      const previous = this.#tails.get(threadId);
      const run = previous === undefined ? work() : previous.then(work);
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      this.#tails.set(threadId, tail);
      void tail.then(() => {
        if (this.#tails.get(threadId) === tail) this.#tails.delete(threadId);
      });
      return run;
    }

    /**
     * Applies `change` to the thread's latest stored state and saves it with compare-and-swap; a save
     * that lost a race re-reads and applies `change` again, so concurrent puts never drop each other.
     */
    async #update(threadId: string, owner: string | undefined, change: (thread: Thread) => void): Promise<void> {
      const id = this.sessionIdOf(threadId);
      for (let attempt = 0; ; attempt++) {
        const stored = await this.#store.get(id);
        const thread = stored === undefined ? emptyThread(threadId) : readThread(stored.session);
        change(thread);
        const session = stored?.session ?? createSessionData({ id });
        session.stateBag[LANGGRAPH_STATE_KEY] = threadState(thread) as unknown as (typeof session.stateBag)[string];
        try {
          await this.#store.save(session, {
            expectedRevision: stored?.revision ?? null,
            ttlMs: this.#ttlMs,
            meta: owner === undefined ? undefined : { owner },
          });
          return;
        } catch (error) {
          if ((error as StatebagError | undefined)?.code !== "conflict" || attempt >= this.#retries) throw error;
          // Spread the retries of writers that keep colliding (parallel tasks of one superstep).
          if (attempt > 2) await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, attempt * 2)));
        }
      }
    }

    async #tuple(thread: Thread, ns: Namespace, record: StoredCheckpoint): Promise<LangGraphCheckpointTuple> {
      const checkpoint = (await decodeValue(this.serde, record.checkpoint)) as LangGraphCheckpoint;
      const values: Record<string, unknown> = {};
      for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
        const blob = ns.blobs.get(channel)?.get(versionKey(version));
        if (blob?.value !== undefined) values[channel] = await decodeValue(this.serde, blob.value);
      }
      checkpoint.channel_values = values;
      if (checkpoint.v < 4 && record.parent !== undefined)
        await this.#migratePendingSends(checkpoint, ns, record.parent);
      const writes = [...(ns.writes.get(record.id) ?? [])];
      const keyOf = (w: StoredWrite) => mod.writesSortKey(w.path, w.task, w.idx);
      writes.sort((a, b) => mod.compareWritesSortKeys(keyOf(a), keyOf(b)));
      const pendingWrites: LangGraphPendingWrite[] = [];
      for (const write of writes)
        pendingWrites.push([write.task, write.channel, await decodeValue(this.serde, write.value)]);
      const tuple: LangGraphCheckpointTuple = {
        config: { configurable: { thread_id: thread.threadId, checkpoint_ns: ns.ns, checkpoint_id: record.id } },
        checkpoint,
        metadata: (await decodeValue(this.serde, record.metadata)) as LangGraphCheckpointMetadata,
        pendingWrites,
      };
      if (record.parent !== undefined)
        tuple.parentConfig = {
          configurable: { thread_id: thread.threadId, checkpoint_ns: ns.ns, checkpoint_id: record.parent },
        };
      return tuple;
    }

    /**
     * Checkpoints of format < 4 (written by older LangGraph versions, or imported) kept pending sends
     * as the parent's writes to the tasks channel; format 4 has them as a channel value. Done on read,
     * as LangGraph's own savers do, so old threads resume.
     */
    async #migratePendingSends(checkpoint: LangGraphCheckpoint, ns: Namespace, parentId: string): Promise<void> {
      const sends: unknown[] = [];
      for (const write of ns.writes.get(parentId) ?? [])
        if (write.channel === mod.TASKS) sends.push(await decodeValue(this.serde, write.value));
      checkpoint.channel_values[mod.TASKS] = sends;
      checkpoint.channel_versions ??= {};
      const versions = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions[mod.TASKS] =
        versions.length > 0 ? mod.maxChannelVersion(...versions) : this.getNextVersion(undefined);
    }

    async getTuple(config: LangGraphConfig): Promise<LangGraphCheckpointTuple | undefined> {
      const threadId = threadIdOf(config, "getTuple");
      if (threadId === undefined) return undefined;
      const ns = namespaceArg(config);
      const checkpointId = checkpointIdArg(config);
      const thread = await this.#load(threadId);
      const space = thread?.namespaces.get(ns);
      if (thread === undefined || space === undefined) return undefined;
      const id = checkpointId ?? latestId(space);
      const record = id === undefined ? undefined : space.checkpoints.get(id);
      return record === undefined ? undefined : this.#tuple(thread, space, record);
    }

    /** The thread ids `list` walks: one, an owner's (from the store's owner index), or every thread in the store. */
    async *#threadIds(config: LangGraphConfig, owner: unknown): AsyncGenerator<string> {
      const one = threadIdOf(config, "list");
      if (one !== undefined) {
        yield one;
        return;
      }
      const prefix = this.#prefix;
      let cursor: string | undefined;
      do {
        const page =
          typeof owner === "string"
            ? await this.#store.list({ owner, order: "id", cursor, limit: 1000 })
            : await this.#store.scan({ cursor, limit: 1000 });
        for (const item of page.items) if (item.id.startsWith(prefix)) yield item.id.slice(prefix.length);
        cursor = page.cursor;
      } while (cursor !== undefined);
    }

    async *list(config: LangGraphConfig, options: LangGraphListOptions = {}): AsyncGenerator<LangGraphCheckpointTuple> {
      const { before, filter } = options;
      let limit = options.limit;
      const nsFilter = config.configurable?.checkpoint_ns;
      const idFilter = checkpointIdArg(config);
      const beforeId = before === undefined ? undefined : checkpointIdArg(before);
      for await (const threadId of this.#threadIds(config, filter?.owner)) {
        let thread: Thread | undefined;
        try {
          thread = await this.#load(threadId);
        } catch (error) {
          // Listing every thread: a session under the prefix that holds no thread is not one; skip it.
          if (config.configurable?.thread_id === undefined && (error as StatebagError).code === "session-invalid")
            continue;
          throw error;
        }
        if (thread === undefined) continue;
        for (const space of thread.namespaces.values()) {
          if (nsFilter !== undefined && space.ns !== nsFilter) continue;
          const ids = [...space.checkpoints.keys()].sort().reverse();
          for (const id of ids) {
            if (idFilter !== undefined && id !== idFilter) continue;
            if (beforeId !== undefined && id >= beforeId) continue;
            const record = space.checkpoints.get(id) as StoredCheckpoint;
            if (filter !== undefined) {
              const metadata = (await decodeValue(this.serde, record.metadata)) as Record<string, unknown>;
              if (!Object.entries(filter).every(([k, v]) => sameValue(metadata?.[k], v))) continue;
            }
            if (limit !== undefined) {
              if (limit <= 0) return;
              limit -= 1;
            }
            yield await this.#tuple(thread, space, record);
          }
        }
      }
    }

    async put(
      config: LangGraphConfig,
      checkpoint: LangGraphCheckpoint,
      metadata: LangGraphCheckpointMetadata,
      newVersions: Record<string, LangGraphChannelVersion>,
    ): Promise<LangGraphConfig> {
      const threadId = requireThreadId(config, "put");
      return this.#inOrder(threadId, () => this.#put(threadId, config, checkpoint, metadata, newVersions));
    }

    async #put(
      threadId: string,
      config: LangGraphConfig,
      checkpoint: LangGraphCheckpoint,
      metadata: LangGraphCheckpointMetadata,
      newVersions: Record<string, LangGraphChannelVersion>,
    ): Promise<LangGraphConfig> {
      const ns = namespaceArg(config);
      const parent = checkpointIdArg(config);
      if (typeof checkpoint?.id !== "string" || checkpoint.id === "")
        throw new ConfigurationError(
          "put: the checkpoint has no id",
          "pass a checkpoint LangGraph made (emptyCheckpoint())",
        );
      const copy = mod.copyCheckpoint(checkpoint);
      const values = copy.channel_values ?? {};
      copy.channel_values = {};
      const blobs: { channel: string; version: string; value?: Awaited<ReturnType<typeof encodeValue>> }[] = [];
      for (const [channel, version] of Object.entries(newVersions ?? {})) {
        const value = Object.hasOwn(values, channel) ? await encodeValue(this.serde, values[channel]) : undefined;
        blobs.push(
          value === undefined
            ? { channel, version: versionKey(version) }
            : { channel, version: versionKey(version), value },
        );
      }
      const owner = ownerOf("put", config, metadata);
      // The owner a run names in its config (LangGraph JS does not copy config.metadata into the
      // checkpoint's metadata) is recorded in the metadata too, as Python's savers merge it, so
      // list({}, { filter: { owner } }) finds the run's checkpoints.
      const stored =
        owner !== undefined && (metadata as { owner?: unknown }).owner === undefined
          ? { ...metadata, owner }
          : metadata;
      const record: StoredCheckpoint = {
        id: checkpoint.id,
        checkpoint: await encodeValue(this.serde, copy),
        metadata: await encodeValue(this.serde, stored),
      };
      if (parent !== undefined) record.parent = parent;
      await this.#update(threadId, owner, (thread) => {
        const space = namespaceOf(thread, ns);
        for (const blob of blobs) {
          let byVersion = space.blobs.get(blob.channel);
          if (byVersion === undefined) space.blobs.set(blob.channel, (byVersion = new Map()));
          byVersion.set(blob.version, blob);
        }
        space.checkpoints.set(record.id, record);
      });
      return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
    }

    async putWrites(
      config: LangGraphConfig,
      writes: [string, unknown][],
      taskId: string,
      taskPath?: string,
    ): Promise<void> {
      const threadId = requireThreadId(config, "putWrites");
      return this.#inOrder(threadId, () => this.#putWrites(threadId, config, writes, taskId, taskPath));
    }

    async #putWrites(
      threadId: string,
      config: LangGraphConfig,
      writes: [string, unknown][],
      taskId: string,
      taskPath?: string,
    ): Promise<void> {
      const ns = namespaceArg(config);
      const checkpointId = checkpointIdArg(config);
      if (checkpointId === undefined)
        throw new ConfigurationError(
          "putWrites: the config has no configurable.checkpoint_id",
          "pass the config a put returned",
        );
      if (typeof taskId !== "string")
        throw new ConfigurationError(`putWrites: taskId must be a string, got ${typeof taskId}`, "pass the task's id");
      const encoded: StoredWrite[] = [];
      for (let i = 0; i < writes.length; i++) {
        const [channel, value] = writes[i];
        encoded.push({
          checkpoint: checkpointId,
          task: taskId,
          idx: mod.WRITES_IDX_MAP[channel] ?? i,
          channel,
          value: await encodeValue(this.serde, value),
          path: taskPath ?? "",
        });
      }
      // The run's owner too (its config's metadata.owner): a write that finds no thread creates it.
      await this.#update(threadId, ownerOf("putWrites", config, undefined), (thread) => {
        const space = namespaceOf(thread, ns);
        const list = space.writes.get(checkpointId) ?? [];
        for (const write of encoded) {
          const at = list.findIndex((x) => x.task === write.task && x.idx === write.idx);
          // A regular write is kept once (a retried task repeats it); a special one (an error, an interrupt) is replaced.
          if (at >= 0) {
            if (write.idx >= 0) continue;
            list[at] = write;
          } else list.push(write);
        }
        space.writes.set(checkpointId, list);
      });
    }

    async deleteThread(threadId: string): Promise<void> {
      if (typeof threadId !== "string" && typeof threadId !== "number")
        throw new ConfigurationError(
          `deleteThread: the thread id must be a string, got ${typeof threadId}`,
          "pass the thread_id",
        );
      await this.#store.delete(this.sessionIdOf(String(threadId)));
    }
  }

  return (store, options) => new Saver(store, options) as unknown as StatebagSaver;
}
