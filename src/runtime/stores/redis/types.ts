/**
 * The few parts of the Redis driver's API the Redis store uses, as structural types. statebag's
 * public declarations must not name the driver package (an optional dependency): an app without
 * it that compiles with `skipLibCheck: false` would otherwise fail on statebag's own .d.ts files.
 * The driver's `Redis` and `Cluster` classes satisfy these shapes; it is loaded at run time (drivers.ts).
 */

/**
 * Extra Redis driver connection options, passed through unchanged (the driver's `RedisOptions`). The
 * names statebag reads itself are typed; anything else is the driver's business.
 */
export interface RedisDriverOptions {
  username?: string;
  password?: string;
  /** TLS options for `tls.connect` (an object turns TLS on). */
  tls?: object;
  [option: string]: unknown;
}

/** Extra Redis Cluster driver options, passed through unchanged (the driver's `ClusterOptions`). */
export interface RedisClusterDriverOptions {
  [option: string]: unknown;
}

/** A Redis connection as the store uses it: a standalone client, or a Cluster client (which routes each command by key). */
export interface RedisClientLike {
  /** "wait", "connecting", "connect", "ready", "close", "reconnecting", "end". */
  readonly status: string;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  once(event: string, listener: (...args: unknown[]) => void): unknown;
  off(event: string, listener: (...args: unknown[]) => void): unknown;
  connect(): Promise<unknown>;
  quit(): Promise<unknown>;
  disconnect(): void;
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
  hget(key: string, field: string): Promise<string | null>;
  hkeys(key: string): Promise<string[]>;
  hset(key: string, ...fieldsAndValues: (string | number)[]): Promise<number>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  /** The same with the values as bytes (a binary session row). */
  hmgetBuffer(key: string, ...fields: string[]): Promise<(Buffer | null)[]>;
  exists(...keys: string[]): Promise<number>;
  type(key: string): Promise<string>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
  zrange(key: string, start: number, stop: number): Promise<string[]>;
  del(...keys: string[]): Promise<number>;
  unlink(...keys: string[]): Promise<number>;
  scan(cursor: string, ...args: (string | number)[]): Promise<[cursor: string, keys: string[]]>;
  select(db: number): Promise<unknown>;
  config(subcommand: "GET", parameter: string): Promise<unknown>;
  /** Commands queued and written together (on a cluster: to one node), each with its own reply. */
  pipeline(): RedisPipelineLike;
  /** A MULTI ... EXEC transaction, its commands written together (standalone only in this store). */
  multi(): RedisTransactionLike;
}

/**
 * A transaction: the commands queued between MULTI and EXEC. `exec` gives each queued command's
 * error or reply, in order, once EXEC answered; it rejects when EXEC did not answer with them (a
 * connection lost, a deadline, a command refused while queued: EXECABORT, nothing ran).
 */
export interface RedisTransactionLike {
  script(subcommand: "LOAD", lua: string): RedisTransactionLike;
  evalsha(sha: string, numberOfKeys: number, ...args: (string | number | Buffer)[]): RedisTransactionLike;
  exec(): Promise<[error: Error | null, reply: unknown][] | null>;
}

/** A pipeline of the store's read scripts: `exec` gives each command's error or reply, in order. */
export interface RedisPipelineLike {
  sbMeta(key: string): RedisPipelineLike;
  exec(): Promise<[error: Error | null, reply: unknown][] | null>;
}

/** A Redis Cluster client: also lists its masters (for key scans, which are per node). */
export interface RedisClusterLike extends RedisClientLike {
  nodes(role: "master"): RedisClientLike[];
  /** The driver's slot map: slot -> node keys ("host:port"), the master first (empty until connected). */
  readonly slots: readonly (readonly string[] | undefined)[];
}

export type RedisClientConstructor = new (url: string, options: RedisDriverOptions) => RedisClientLike;
export type RedisClusterConstructor = new (
  nodes: { host: string; port: number }[],
  options: RedisClusterDriverOptions,
) => RedisClusterLike;
