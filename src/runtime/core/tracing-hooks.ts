/**
 * What the rest of statebag calls to report to tracing: the hidden handle a traced store carries
 * (`withSession` and `migrateStore` find it there and open their spans through it) and the
 * migration count a codec reports while it loads. No Node built-ins and no OpenTelemetry here:
 * a store that is not traced pays one property lookup. @internal
 */

/** The property under which a traced store carries its `StoreTracing`. */
export const STORE_TRACING: unique symbol = Symbol.for("statebag.storeTracing") as never;

/** What `withSession` reports while it runs. */
export interface SessionProbe {
  /** Attempt `n` (1 for the first run) starts: its loads and saves carry `statebag.cas.attempt = n`. */
  attempt(n: number): void;
  /** The save of attempt `n` was refused by the compare-and-swap and the session is run again. */
  conflict(n: number): void;
}

/** What `migrateStore` reports about one session. */
export interface MigrationProbe {
  /** Attempt `n` (1 for the first) starts. */
  attempt(n: number): void;
  /** The stored text loaded (with `migrations` values migrated) into `session`. */
  loaded(text: string, session: { stateBag?: Record<string, unknown> }, migrations: number): void;
  /** The session failed (it is left as stored), with this problem code. */
  failed(code: string | undefined): void;
}

export interface StoreTracing {
  withSession<T>(id: string, run: (probe: SessionProbe) => Promise<T>): Promise<T>;
  migrateStore<T>(run: () => Promise<T>): Promise<T>;
  migrateSession<T extends string>(id: string, run: (probe: MigrationProbe) => Promise<T>): Promise<T>;
  /**
   * One operation of statebag/http's chat server (`send`, `turn`, `resume`, `stop`, `list`, `get`,
   * `delete`) on the session `id` (hashed, as every span names a session): the store calls it makes
   * nest under it.
   */
  chat?<T>(operation: string, id: string | undefined, run: () => Promise<T>): Promise<T>;
}

/** The tracing of a store wrapped by `tracedStore`, or undefined. */
export function tracingOf(store: object): StoreTracing | undefined {
  return (store as { [STORE_TRACING]?: StoreTracing })[STORE_TRACING];
}

/** The load being observed (set around one synchronous `codec.deserialize` call). */
let currentLoad: { migrations?: number } | undefined;

/** `deserializeSession`'s `onMigrated` for statebag's codecs: counts what the observed load migrated. */
export function noteMigrations(migrated: readonly unknown[]): void {
  if (currentLoad !== undefined) currentLoad.migrations = (currentLoad.migrations ?? 0) + migrated.length;
}

/** Runs `load` (synchronous) with `record` receiving its migration count. */
export function observeLoad<T>(record: { migrations?: number }, load: () => T): T {
  const previous = currentLoad;
  currentLoad = record;
  try {
    return load();
  } finally {
    currentLoad = previous;
  }
}
