/** The SQLite store's default driver: Node's built-in `node:sqlite` (`DatabaseSync`), no install or native build. */
import type { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { resultCodeName, type SqliteConnection, type SqliteDriver, type SqliteStatement } from "./driver.js";

type NodeSqlite = typeof import("node:sqlite");
let nodeSqlite: NodeSqlite | undefined;

/**
 * Loads `node:sqlite`. On Node 22 loading it prints "ExperimentalWarning: SQLite is an experimental
 * feature" to every user of the default store; that one warning is dropped while the module loads,
 * every other warning passes through.
 */
function load(): NodeSqlite {
  if (nodeSqlite) return nodeSqlite;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const text = typeof warning === "string" ? warning : warning.message;
    if (type === "ExperimentalWarning" && text.startsWith("SQLite is an experimental feature")) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    nodeSqlite = process.getBuiltinModule("node:sqlite") as NodeSqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
  return nodeSqlite;
}

class NodeSqliteConnection implements SqliteConnection {
  constructor(private readonly db: DatabaseSync) {}

  prepare<R>(sql: string): SqliteStatement<R> {
    return this.db.prepare(sql) as unknown as SqliteStatement<R>;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  get inTransaction(): boolean {
    // `isTransaction` is missing before Node 22.16: assume open, and let a needless ROLLBACK fail quietly.
    return (this.db as { isTransaction?: boolean }).isTransaction ?? true;
  }

  close(): void {
    this.db.close();
  }
}

export const nodeSqliteDriver: SqliteDriver = {
  name: "node:sqlite",
  canOpenImmutable: true,
  open(path, { readOnly, immutable, busyTimeoutMs }) {
    const { DatabaseSync } = load();
    // node:sqlite opens `file:` URIs, which is how SQLite takes `immutable`.
    const db = new DatabaseSync(immutable ? `${pathToFileURL(path).href}?immutable=1` : path, { readOnly });
    try {
      db.exec(`PRAGMA busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
    } catch (error) {
      db.close();
      throw error;
    }
    return new NodeSqliteConnection(db);
  },
  resultCode(error) {
    const { code, errcode } = error as { code?: unknown; errcode?: unknown };
    return code === "ERR_SQLITE_ERROR" && typeof errcode === "number" ? resultCodeName(errcode) : undefined;
  },
};
