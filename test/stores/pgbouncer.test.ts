/**
 * PostgreSQL behind PgBouncer in transaction pooling mode (a local PgBouncer the test starts):
 * `?pgbouncer=true` sends unnamed statements and everything works under concurrency; named
 * statements fail with an error that names the fix; a pooler that is down is StoreUnavailableError.
 * The conformance suite runs through the same PgBouncer (conformance.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/runtime/core/errors.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { ConflictError, StoreUnavailableError } from "../../src/runtime/stores/errors.js";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { PostgresSessionStore } from "../../src/runtime/stores/postgres/store.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import {
  counterOf,
  counterSession,
  PG_URL,
  pgBouncer,
  pgBouncerBackend,
  scaleOutBackends,
  uniqueName,
} from "./helpers.js";
import { startPgBouncer, type PgBouncerHandle } from "./servers.js";

const user = (text: string): ChatMessage => ({ role: "user", contents: [{ $type: "text", text }] });

describe("?pgbouncer= in a PostgreSQL store URL", () => {
  it("accepts true and false, refuses anything else", async () => {
    for (const value of ["true", "false"]) await (await openStore(`postgres://u@h/db?pgbouncer=${value}`)).close();
    await expect(openStore("postgres://u:sekret@h/db?pgbouncer=1")).rejects.toThrow(
      /\?pgbouncer= .* must be true or false/,
    );
    await expect(openStore("postgres://u:sekret@h/db?pgbouncer=1")).rejects.not.toThrow(/sekret/);
  });
});

describe.skipIf(!scaleOutBackends.includes(pgBouncerBackend))(
  "PostgreSQL behind PgBouncer (transaction pooling)",
  () => {
    let bouncer: PgBouncerHandle;
    let schema: string;
    let admin: PostgresSessionStore;
    beforeAll(async () => {
      bouncer = await pgBouncer.acquire();
      schema = `sbtest_${uniqueName()}`;
      // Set up directly on PostgreSQL: the pooled stores below share these tables.
      admin = new PostgresSessionStore({ connectionString: PG_URL, schema, max: 1 });
      await admin.setup();
    });
    afterAll(async () => {
      await admin?.dropSchema();
      await admin?.close();
      await pgBouncer.release();
    });

    it("with ?pgbouncer=true: concurrent compare-and-swap turns and message-log transactions all land", async () => {
      const store = await openStore(`${bouncer.url}?pgbouncer=true&schema=${schema}`, { maxConnections: 12 });
      try {
        // 12 client connections share PgBouncer's 5 server connections, switching per transaction.
        const ids = Array.from({ length: 24 }, (_, i) => `turn-${i}`);
        for (let round = 0; round < 3; round++) {
          await Promise.all(
            ids.map((id) =>
              withSession(store, id, (session) => {
                const bag = session.stateBag as Record<string, unknown>;
                const value = (bag.counter as { value: number } | undefined)?.value ?? 0;
                bag.counter = { $type: "test.Counter", value: value + 1 };
              }),
            ),
          );
        }
        for (const id of ids) expect(counterOf((await store.get(id))!.session)).toBe(3);
        // Contention on one session: every increment lands once (conflicts retried).
        await Promise.all(
          Array.from({ length: 10 }, () =>
            withSession(
              store,
              "hot",
              (session) => {
                const bag = session.stateBag as Record<string, unknown>;
                bag.counter = {
                  $type: "test.Counter",
                  value: ((bag.counter as { value: number } | undefined)?.value ?? 0) + 1,
                };
              },
              { onConflict: "retry", retries: 50, retryDelayMs: () => Math.random() * 5 },
            ),
          ),
        );
        expect(counterOf((await store.get("hot"))!.session)).toBe(10);
        // Multi-statement transactions (replace) next to single-statement appends.
        const log = store.messages;
        await Promise.all(
          Array.from({ length: 20 }, (_, i) => log.appendMessages("log", [user(`m${i}`)], { operationId: `op-${i}` })),
        );
        const seen = await log.readMessages("log");
        expect(seen.messages).toHaveLength(20);
        await log.replaceMessages("log", [user("summary")], { expectedVersion: seen.version, operationId: "reduce" });
        await expect(
          log.replaceMessages("log", [user("stale")], { expectedVersion: seen.version }),
        ).rejects.toBeInstanceOf(ConflictError);
        expect(await log.getMessages("log")).toEqual([user("summary")]);
        expect((await store.scan({ limit: 1000 })).items.length).toBe(ids.length + 1);
      } finally {
        await store.close();
      }
    });

    it("without it, a named statement lost between server connections fails with the fix (nothing half-written)", async () => {
      const store = await openStore(`${bouncer.url}?schema=${schema}`, { maxConnections: 12 });
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            store.save(counterSession(`named-${i}`, 1), { expectedRevision: null }).then(
              () => undefined,
              (e: unknown) => e,
            ),
          ),
        );
        const failures = outcomes.filter(Boolean);
        expect(failures.length).toBeGreaterThan(0);
        for (const error of failures) {
          expect(error).toBeInstanceOf(ConfigurationError);
          expect((error as ConfigurationError).message).toMatch(/lost a prepared statement/);
          expect((error as ConfigurationError).hint).toMatch(/\?pgbouncer=true/);
        }
        // A failed save wrote nothing: the session is absent, not half there.
        for (const [i, outcome] of outcomes.entries()) {
          if (outcome) expect(await admin.get(`named-${i}`)).toBeUndefined();
          else expect(counterOf((await admin.get(`named-${i}`))!.session)).toBe(1);
        }
      } finally {
        await store.close();
      }
    });
  },
);

describe.skipIf(!scaleOutBackends.includes(pgBouncerBackend))("PgBouncer down", () => {
  it("is StoreUnavailableError, and the store works again once it is back", async () => {
    const u = new URL(PG_URL);
    const target = {
      host: u.hostname,
      port: Number(u.port || 5432),
      database: u.pathname.slice(1),
      user: decodeURIComponent(u.username) || "postgres",
    };
    let own = await startPgBouncer(target);
    const schema = `sbtest_${uniqueName()}`;
    const admin = new PostgresSessionStore({ connectionString: PG_URL, schema, max: 1 });
    await admin.setup();
    const store = await openStore(`${own.url}?pgbouncer=true&schema=${schema}`, { connectTimeoutMs: 1000 });
    try {
      const r1 = await store.save(counterSession("s", 1), { expectedRevision: null });
      await own.stop();
      const error = await store.get("s").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as StoreUnavailableError).code).toBe("store-unavailable");
      await expect(store.save(counterSession("s", 2), { expectedRevision: r1 })).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      // Back on the same port: the next call reconnects.
      own = await startPgBouncer({ ...target, port: target.port }, own.port);
      expect(await store.save(counterSession("s", 2), { expectedRevision: r1 })).toBeGreaterThan(r1);
    } finally {
      await store.close();
      await own.stop();
      await admin.dropSchema();
      await admin.close();
    }
  });
});
