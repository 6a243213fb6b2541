/** The optional `better-sqlite3` driver for the SQLite store (`?driver=better-sqlite3`), loaded on first use. */
import type BetterSqlite3 from "better-sqlite3";
import { loadDriver } from "../drivers.js";
import type { SqliteConnection, SqliteDriver, SqliteStatement } from "./driver.js";

class BetterSqliteConnection implements SqliteConnection {
  constructor(private readonly db: BetterSqlite3.Database) {}

  prepare<R>(sql: string): SqliteStatement<R> {
    return this.db.prepare(sql) as unknown as SqliteStatement<R>;
  }

  prepareTuples<R extends readonly unknown[]>(sql: string): SqliteStatement<R> {
    return this.db.prepare(sql).raw(true) as unknown as SqliteStatement<R>;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  close(): void {
    this.db.close();
  }
}

export const betterSqliteDriver: SqliteDriver = {
  name: "better-sqlite3",
  // Its bundled SQLite is built without URI filenames, so `immutable` cannot be asked for.
  canOpenImmutable: false,
  load() {
    loadDriver("better-sqlite3");
  },
  open(path, { readOnly, busyTimeoutMs }) {
    const Database = loadDriver<typeof BetterSqlite3>("better-sqlite3");
    // fileMustExist: a read-only open never creates the file (node:sqlite behaves the same).
    return new BetterSqliteConnection(
      new Database(path, { readonly: readOnly, fileMustExist: readOnly, timeout: Math.trunc(busyTimeoutMs) }),
    );
  },
  resultCode(error) {
    const code = (error as { code?: unknown }).code;
    // better-sqlite3 names extended codes (SQLITE_BUSY_SNAPSHOT); the store branches on the primary one.
    return typeof code === "string" && code.startsWith("SQLITE_")
      ? (/^SQLITE_[A-Z]+/.exec(code)?.[0] ?? code)
      : undefined;
  },
};
