/**
 * The LangGraph shapes the saver speaks, written out structurally so statebag's declarations
 * compile without `@langchain/langgraph-checkpoint` installed (it is an optional peer). They mirror
 * that package's `BaseCheckpointSaver` surface closely enough that a `StatebagSaver` is accepted
 * wherever LangGraph asks for a checkpointer (`graph.compile({ checkpointer })`).
 */

/** A channel version: LangGraph's default is an increasing integer; savers may use strings. */
export type LangGraphChannelVersion = number | string;

/** LangGraph's `RunnableConfig`, as far as a saver reads it. */
export interface LangGraphConfig {
  // biome-ignore lint/suspicious/noExplicitAny: mirrors LangChain's RunnableConfig, whose configurable is Record<string, any>
  configurable?: Record<string, any>;
  // biome-ignore lint/suspicious/noExplicitAny: mirrors LangChain's RunnableConfig
  metadata?: Record<string, any>;
  // biome-ignore lint/suspicious/noExplicitAny: the rest of RunnableConfig (callbacks, signal, ...) passes through untouched
  [key: string]: any;
}

/** LangGraph's `Checkpoint` (format version `v`, currently 4). */
export interface LangGraphCheckpoint {
  v: number;
  id: string;
  ts: string;
  channel_values: Record<string, unknown>;
  channel_versions: Record<string, LangGraphChannelVersion>;
  versions_seen: Record<string, Record<string, LangGraphChannelVersion>>;
}

/** LangGraph's `CheckpointMetadata`: `owner` (a string) is what the saver stores as the thread's `meta.owner`. */
export type LangGraphCheckpointMetadata = {
  source: "input" | "loop" | "update" | "fork";
  step: number;
  parents: Record<string, string>;
  counters_since_delta_snapshot?: Record<string, [number, number]>;
} & object;

/** `[taskId, channel, value]`. */
export type LangGraphPendingWrite = [string, string, unknown];

export interface LangGraphCheckpointTuple {
  config: LangGraphConfig;
  checkpoint: LangGraphCheckpoint;
  metadata?: LangGraphCheckpointMetadata;
  parentConfig?: LangGraphConfig;
  pendingWrites?: LangGraphPendingWrite[];
}

export interface LangGraphListOptions {
  limit?: number;
  before?: LangGraphConfig;
  // biome-ignore lint/suspicious/noExplicitAny: LangGraph's filter type
  filter?: Record<string, any>;
}

/** LangGraph's `SerializerProtocol` (the saver's `serde`). */
export interface LangGraphSerializer {
  // biome-ignore lint/suspicious/noExplicitAny: LangGraph's signature
  dumpsTyped(data: any): Promise<[string, Uint8Array]>;
  // biome-ignore lint/suspicious/noExplicitAny: LangGraph's signature
  loadsTyped(type: string, data: Uint8Array | string): Promise<any>;
}

/** LangGraph's `DeltaChannelHistory`. */
export interface LangGraphDeltaChannelHistory {
  writes: LangGraphPendingWrite[];
  seed?: unknown;
}

/**
 * A LangGraph checkpoint saver kept in a statebag store: at run time an instance of a subclass of
 * `BaseCheckpointSaver` (so `instanceof BaseCheckpointSaver` holds), typed here without that package.
 */
export interface StatebagSaver {
  serde: LangGraphSerializer;
  toJSON(): string;
  get(config: LangGraphConfig): Promise<LangGraphCheckpoint | undefined>;
  getTuple(config: LangGraphConfig): Promise<LangGraphCheckpointTuple | undefined>;
  list(config: LangGraphConfig, options?: LangGraphListOptions): AsyncGenerator<LangGraphCheckpointTuple>;
  put(
    config: LangGraphConfig,
    checkpoint: LangGraphCheckpoint,
    metadata: LangGraphCheckpointMetadata,
    newVersions: Record<string, LangGraphChannelVersion>,
  ): Promise<LangGraphConfig>;
  putWrites(config: LangGraphConfig, writes: [string, unknown][], taskId: string, taskPath?: string): Promise<void>;
  deleteThread(threadId: string): Promise<void>;
  getDeltaChannelHistory(options: {
    config: LangGraphConfig;
    channels: string[];
  }): Promise<Record<string, LangGraphDeltaChannelHistory>>;
  getNextVersion(current: number | undefined): number;
  /** The statebag session id a thread is stored under (`idPrefix` + thread id). */
  sessionIdOf(threadId: string): string;
}
