/** The SQLite store's default driver: Node's built-in `node:sqlite` (`DatabaseSync`), no install or native build. */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { StatebagError } from "../../core/errors.js";
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
  let loaded: NodeSqlite | undefined;
  try {
    // Node 20 has no node:sqlite (getBuiltinModule answers undefined; before 20.16 it is missing too).
    loaded =
      typeof process.getBuiltinModule === "function"
        ? (process.getBuiltinModule("node:sqlite") as NodeSqlite | undefined)
        : undefined;
  } catch {
    loaded = undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
  if (typeof loaded?.DatabaseSync !== "function") throw new NodeSqliteMissingError();
  nodeSqlite = loaded;
  return nodeSqlite;
}

/**
 * The default SQLite driver is not in this Node: node:sqlite is built into Node 22.13+ (23.4+).
 * Node 20 installs statebag with only an engine warning, so this is where it is caught.
 */
export class NodeSqliteMissingError extends StatebagError {
  /** The Node version that lacks it. */
  readonly nodeVersion = process.versions.node;
  constructor() {
    super(
      "driver-missing",
      `the SQLite store's default driver, node:sqlite, is not built into Node ${process.versions.node}: it needs Node 22.13 or newer`,
      {
        hint: 'upgrade Node to 22.13+ (24 LTS recommended), or use the optional better-sqlite3 driver: npm i better-sqlite3 and add ?driver=better-sqlite3 to the sqlite: store URL (openStore option sqliteDriver: "better-sqlite3")',
      },
    );
  }
}

class NodeSqliteConnection implements SqliteConnection {
  constructor(private readonly db: DatabaseSync) {}

  prepare<R>(sql: string): SqliteStatement<R> {
    return this.db.prepare(sql) as unknown as SqliteStatement<R>;
  }

  prepareTuples<R extends readonly unknown[]>(sql: string): SqliteStatement<R> {
    const statement = this.db.prepare(sql) as StatementSync & { setReturnArrays?: (enabled: boolean) => void };
    // setReturnArrays is in Node 22.16+ / 24: before, the row objects' values, in column order.
    if (typeof statement.setReturnArrays === "function") {
      statement.setReturnArrays(true);
      return statement as unknown as SqliteStatement<R>;
    }
    return {
      get: (...params) => {
        const row = statement.get(...(params as SQLInputValue[]));
        return row === undefined ? undefined : (Object.values(row) as unknown as R);
      },
      all: (...params) =>
        statement.all(...(params as SQLInputValue[])).map((row) => Object.values(row) as unknown as R),
      run: (...params) => statement.run(...(params as SQLInputValue[])) as { changes: number },
    };
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
  load() {
    load();
  },
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
