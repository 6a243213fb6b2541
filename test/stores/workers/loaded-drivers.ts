/**
 * Child process for the lazy-loading test: imports the stores, uses a SQLite store through the
 * default driver, and prints which optional driver packages ended up loaded.
 *
 *   node --import tsx loaded-drivers.ts <dbPath>
 */
import { createRequire } from "node:module";
import { openStore } from "../../../src/stores.js";

const store = await openStore(`sqlite:${process.argv[2]}`);
await store.get("x");
await store.close();
const loaded = Object.keys(createRequire(import.meta.url).cache);
const drivers = ["pg", "ioredis", "better-sqlite3"].filter((name) =>
  loaded.some((path) => path.includes(`/node_modules/${name}/`)),
);
process.stdout.write(JSON.stringify(drivers) + "\n");
