/**
 * statebag's own stores against the published store contract: `storeConformance` from
 * `statebag/testing` (src/runtime/testing/), run unchanged on every backend (memory, SQLite with
 * both drivers, PostgreSQL, Redis, and the Redis Cluster and PgBouncer the tests start), through the
 * public API only (`openStore` from `statebag/stores`). The contract's cases live in the kit;
 * backend-specific behaviour is tested in each backend's own file.
 */
import * as vitest from "vitest";
import { openStore, type SessionStore } from "../../src/stores.js";
import { storeConformance } from "../../src/testing.js";
import { allBackends, scaleOutBackends } from "./helpers.js";

for (const backend of [...allBackends, ...scaleOutBackends]) {
  const cleanups = new Map<SessionStore, () => Promise<void>>();
  storeConformance({
    name: `${backend.name} store`,
    runner: vitest,
    async open({ codec, messageCodec, blobs }) {
      const { url, cleanup } = await backend.location();
      try {
        const store = await openStore(url, { codec, messageCodec, blobs });
        cleanups.set(store, cleanup);
        return store;
      } catch (error) {
        await cleanup();
        throw error;
      }
    },
    ...(["memory", "sqlite", "sqlite-better", "postgres", "postgres-pgbouncer", "redis", "redis-cluster"].includes(
      backend.name,
    )
      ? {}
      : { skip: { blobs: "blobs on this backend land next" } }),
    async close(store) {
      try {
        await store.close();
      } finally {
        await cleanups.get(store)?.();
        cleanups.delete(store);
      }
    },
  });
}
