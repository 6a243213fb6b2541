/**
 * migrate.bulk.<sqlite|postgres|redis>: `migrateStore` over 1,000 stored sessions of 20 messages
 * whose history state is at version 1 (before `droppedMessageCount`), against the loop an
 * application would write by hand: page through the store, JSON.parse, patch the value, save with
 * compare-and-swap, no validation. Both sides use the same store statements (the baseline's store
 * has a pass-through codec), so the ratio is what loading, migrating and validating every session
 * costs on top of the reads and writes.
 *
 * Every timed run gets freshly seeded data in its own location (temp file, PostgreSQL schema,
 * Redis key prefix), removed afterwards. Unreachable servers are skipped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serializeSession } from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { migrateStore, openStore, type SessionCodec, type SessionStore } from "../../src/stores.js";
import { compareWithSetup, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSessions } from "../sessions.js";
import { storeUrls, unreachable } from "./stores.js";

const SESSIONS = 1000;
const MESSAGES = 20;

/** Writes and reads envelopes with no validation or migration: what a hand-written loop does. */
const passThrough: SessionCodec = {
  serialize: (session) => serializeSession(session, { validate: false }),
  deserialize: (text) => (JSON.parse(text) as { session: AgentSession }).session,
};

/** The sessions as the previous release stored them: history state version 1. */
function versionOneSessions(): AgentSession[] {
  return makeSessions(SESSIONS, MESSAGES, "bulk").map((s) => {
    const { messages } = s.stateBag[HISTORY_KEY] as unknown as { messages: unknown[] };
    return { ...s, stateBag: { [HISTORY_KEY]: { $type: "InMemoryChatHistoryState", messages } } } as AgentSession;
  });
}

interface Location {
  url: string;
  cleanup(): Promise<void>;
}

let counter = 0;

async function location(kind: "sqlite" | "postgres" | "redis", dir: string): Promise<Location> {
  const suffix = `${process.pid}_${++counter}`;
  if (kind === "sqlite") return { url: `sqlite:${join(dir, `bulk-${suffix}.db`)}`, cleanup: async () => {} };
  if (kind === "postgres") {
    const schema = `bench_bulk_${suffix}`;
    const base = storeUrls.postgres;
    return {
      url: `${base}${base.includes("?") ? "&" : "?"}schema=${schema}`,
      cleanup: async () => {
        const pg = (await import("pg")).default;
        const client = new pg.Client({ connectionString: base });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await client.end();
      },
    };
  }
  const prefix = `bench-bulk-${suffix}:`;
  const base = storeUrls.redis;
  return {
    url: `${base}${base.includes("?") ? "&" : "?"}prefix=${prefix}`,
    cleanup: async () => {
      const { Redis } = await import("ioredis");
      const redis = new Redis(base);
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
      redis.disconnect();
    },
  };
}

async function seeded(
  kind: "sqlite" | "postgres" | "redis",
  dir: string,
  sessions: readonly AgentSession[],
): Promise<Location> {
  const where = await location(kind, dir);
  const store = await openStore(where.url, { codec: passThrough });
  await store.setup();
  for (const session of sessions) await store.save(session, { expectedRevision: null });
  await store.close();
  return where;
}

/** The hand-written migration: parse, patch, save with compare-and-swap. */
async function rawLoop(store: SessionStore): Promise<number> {
  let cursor: string | undefined;
  let written = 0;
  do {
    const page = await store.scan({ cursor, limit: 100, includeText: true });
    for (const item of page.items) {
      const doc = JSON.parse(item.text!) as { session: AgentSession };
      const state = doc.session.stateBag[HISTORY_KEY] as { $version?: number; droppedMessageCount?: number };
      if (state.$version === undefined) {
        state.$version = 2;
        state.droppedMessageCount = 0;
        await store.save(doc.session, { expectedRevision: item.revision });
        written++;
      }
    }
    cursor = page.cursor;
  } while (cursor !== undefined);
  return written;
}

export async function bulkMigrateCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  const sessions = versionOneSessions();
  const dir = mkdtempSync(join(tmpdir(), "statebag-bench-bulk-"));
  try {
    for (const kind of ["sqlite", "postgres", "redis"] as const) {
      const name = `migrate.bulk.${kind}`;
      const reason = await unreachable(kind);
      if (reason) {
        out.push(skipped(name, `server not reachable: ${reason}`));
        continue;
      }
      ctx.log(
        `${name} (${SESSIONS} sessions x ${MESSAGES} messages, ${ctx.slowSamples} sample${ctx.slowSamples === 1 ? "" : "s"})`,
      );
      let ours: { where: Location; store: SessionStore } | undefined;
      let raw: { where: Location; store: SessionStore } | undefined;
      const cleanup = async (side: typeof ours) => {
        if (!side) return;
        await side.store.close();
        await side.where.cleanup();
      };
      try {
        const timing = await compareWithSetup(
          {
            setup: async () => {
              await cleanup(ours);
              const where = await seeded(kind, dir, sessions);
              ours = { where, store: await openStore(where.url) };
            },
            run: async () => {
              const report = await migrateStore(ours!.store);
              if (report.migrated !== SESSIONS || report.failedCount !== 0)
                throw new Error(
                  `${name}: migrateStore migrated ${report.migrated} of ${SESSIONS} (${report.failedCount} failed)`,
                );
            },
          },
          {
            setup: async () => {
              await cleanup(raw);
              const where = await seeded(kind, dir, sessions);
              raw = { where, store: await openStore(where.url, { codec: passThrough }) };
            },
            run: async () => {
              const written = await rawLoop(raw!.store);
              if (written !== SESSIONS) throw new Error(`${name}: the raw loop wrote ${written} of ${SESSIONS}`);
            },
          },
          ctx.slowSamples,
        );
        out.push(result(name, "hand-written scan/parse/patch/save loop", timing));
      } finally {
        await cleanup(ours);
        await cleanup(raw);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
