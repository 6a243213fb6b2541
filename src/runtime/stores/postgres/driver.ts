/**
 * The part of the `pg` package the PostgreSQL store uses, as structural types. statebag's
 * declarations must not import "pg": `pg` is an optional peer dependency, and an app without it
 * that compiles with `skipLibCheck: false` would fail on a type import of the package (issue #20).
 * A real `pg.Pool` and `pg.PoolClient` fit these types (test/stores/declarations.test.ts checks it).
 */

/** One statement: `name` makes `pg` prepare it once per connection. */
export interface PgQueryConfig {
  name?: string;
  text: string;
  values?: unknown[];
}

export interface PgQueryResult<R> {
  rows: R[];
  rowCount: number | null;
}

/** A connection checked out of a pool. */
export interface PgPoolClient {
  // `R extends object`: pg's own constraint (QueryResultRow), so pg.PoolClient fits this type.
  query<R extends object = Record<string, unknown>>(
    query: string | PgQueryConfig,
    values?: unknown[],
  ): Promise<PgQueryResult<R>>;
  /** `true` (or an error) destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
}

/** A `pg.Pool` (yours, passed as `pool`, or the one the store creates from the connection string). */
export interface PgPool {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** The pool settings the store passes to `new pg.Pool(...)`. */
export interface PgPoolConfig {
  connectionString?: string;
  max?: number;
  connectionTimeoutMillis?: number;
  query_timeout?: number;
  idleTimeoutMillis?: number;
  keepAlive?: boolean;
  application_name?: string;
}

/** What the store takes from `require("pg")`. */
export interface PgModule {
  Pool: new (config: PgPoolConfig) => PgPool;
}
