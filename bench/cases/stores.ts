/**
 * store.<sqlite|sqlite-better|postgres|redis>.saveload (sqlite: the built-in node:sqlite driver,
 * sqlite-better: the optional better-sqlite3 driver): 1,000 sessions of 20 messages saved (create), updated
 * (compare-and-swap) and loaded one call at a time through statebag's store, against the raw
 * driver running the same statements with the same JSON. The measurement itself is the stores'
 * probe (bench/stores-probe.ts); this case reports its total time per side.
 *
 * A backend whose server is not reachable is skipped (reported, not failed). Servers:
 * STATEBAG_BENCH_PG_URL / STATEBAG_BENCH_REDIS_URL, else the local defaults of the probe.
 */
import { driverInstalled } from "../../src/runtime/stores/drivers.js";
import { openStore } from "../../src/stores.js";
import { result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { PG_URL, probeStore, REDIS_URL, type ProbeKind } from "../stores-probe.js";

export const storeUrls: Record<Exclude<ProbeKind, "sqlite" | "sqlite-better">, string> = {
  postgres: PG_URL,
  redis: REDIS_URL,
};

const RAW_DRIVER: Record<ProbeKind, string> = {
  sqlite: "node:sqlite",
  "sqlite-better": "better-sqlite3",
  postgres: "pg",
  redis: "ioredis",
};

/** Why a server (or the optional driver) cannot be used, or undefined when it answers. */
export async function unreachable(kind: ProbeKind): Promise<string | undefined> {
  if (kind === "sqlite") return undefined;
  if (kind === "sqlite-better")
    return driverInstalled("better-sqlite3")
      ? undefined
      : "better-sqlite3 is not installed (npm i --no-save better-sqlite3)";
  const store = await openStore(storeUrls[kind], { connectTimeoutMs: 2000 });
  try {
    await store.scan({ limit: 1 });
    return undefined;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "store-not-set-up") return undefined; // reachable; the probe sets up its own tables
    return error instanceof Error ? error.message.split("\n")[0] : String(error);
  } finally {
    await store.close().catch(() => {});
  }
}

export async function storeCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  for (const kind of ["sqlite", "sqlite-better", "postgres", "redis"] as const) {
    const name = `store.${kind}.saveload`;
    const reason = await unreachable(kind);
    if (reason) {
      out.push(skipped(name, `server not reachable: ${reason}`));
      continue;
    }
    ctx.log(`${name} (1,000 sessions x 20 messages, ${ctx.quick ? 1 : 5} round${ctx.quick ? "" : "s"})`);
    const probe = await probeStore(kind, {
      sessions: 1000,
      messages: 20,
      rounds: ctx.quick ? 1 : 5,
      ...(kind === "postgres" || kind === "redis" ? { url: storeUrls[kind] } : {}),
    });
    out.push(
      result(name, `raw ${RAW_DRIVER[kind]}, same statements`, {
        ours_ms: probe.ours.totalMs,
        baseline_ms: probe.raw.totalMs,
      }),
    );
  }
  return out;
}
