/**
 * A closed store refuses every call with the same coded error on every backend (`store-closed`,
 * with a hint), so an application can tell "I closed this" from a failing server.
 */
import { describe, expect, it } from "vitest";
import { StatebagError } from "../../src/runtime/core/errors.js";
import { createSessionData } from "../../src/runtime/core/session.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { memoryBackend, postgresBackend, redisBackend, sqliteBackend, type Backend } from "./helpers.js";

const backends: Backend[] = [memoryBackend, sqliteBackend, postgresBackend(), redisBackend()];

describe.each(backends)("a closed $name store", (backend) => {
  it("refuses load and save with store-closed, a hint, and nothing saved by the refused call", async () => {
    const { url, cleanup } = await backend.location();
    try {
      const store = await openStore(url);
      const session = createSessionData({ id: "closed-probe" });
      await store.save(session, { expectedRevision: null });
      await store.close();

      for (const call of [
        () => store.get("closed-probe"),
        () => store.save(createSessionData({ id: "after-close" }), { expectedRevision: null }),
      ]) {
        const error = await call().then(
          () => undefined,
          (failure: unknown) => failure,
        );
        expect(error).toBeInstanceOf(StatebagError);
        expect((error as StatebagError).code).toBe("store-closed");
        expect((error as StatebagError).hint).toMatch(/openStore/);
      }

      if (backend.durable) {
        const reopened = await openStore(url);
        try {
          expect(await reopened.get("closed-probe")).toBeDefined();
          expect(await reopened.get("after-close")).toBeUndefined();
        } finally {
          await reopened.close();
        }
      }
    } finally {
      await cleanup();
    }
  });
});
