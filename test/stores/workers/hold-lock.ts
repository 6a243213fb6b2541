/**
 * Child process for the SQLite lock tests: takes the database's write lock (BEGIN IMMEDIATE) through
 * its own connection, prints "locked", and holds it until the parent sends "release" (then prints
 * "released" and exits).
 *
 *   node --import tsx hold-lock.ts <dbPath>
 */
import { DatabaseSync } from "node:sqlite";

const db = new DatabaseSync(process.argv[2]);
db.exec("BEGIN IMMEDIATE");
process.stdout.write("locked\n");
process.once("message", () => {
  db.exec("ROLLBACK");
  db.close();
  process.stdout.write("released\n");
  process.disconnect?.();
});
