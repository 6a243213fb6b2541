/**
 * concurrency.<sqlite|postgres|redis>.8writers: 8 writers at once, each on its own session (20
 * messages), each doing get + compare-and-swap save in a loop, through statebag's store against
 * the raw driver with the same 8 writers (same pool size: 10 PostgreSQL connections, one Redis
 * connection, one SQLite file in WAL mode). Reported per operation (wall time / operations), so a
 * store that serializes what the driver runs in parallel, or contends on a shared key, shows here.
 * The two sides never run at the same time; rounds alternate which goes first.
 */
import type { AgentSession } from "../../src/runtime/core/session.js";
import { median, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { makeSessions } from "../sessions.js";
import { makeSides, type ProbeKind, type Side } from "../stores-probe.js";
import { storeUrls, unreachable } from "./stores.js";

const KINDS = ["sqlite", "postgres", "redis"] as const satisfies readonly ProbeKind[];
const RAW: Record<(typeof KINDS)[number], string> = { sqlite: "node:sqlite", postgres: "pg", redis: "ioredis" };
const WRITERS = 8;

/** Wall time of 8 writers, each doing `ops` get + CAS update on its own session. */
async function writers(side: Side, sessions: AgentSession[], ops: number): Promise<number> {
  const start = performance.now();
  await Promise.all(
    sessions.map(async (s) => {
      for (let n = 0; n < ops; n++) {
        const { session, revision } = await side.loadWithRevision(s.id);
        await side.update(session, revision);
      }
    }),
  );
  return performance.now() - start;
}

export async function concurrencyCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  const ops = ctx.quick ? 50 : 200;
  const rounds = ctx.quick ? 3 : 7;
  for (const kind of KINDS) {
    const name = `concurrency.${kind}.${WRITERS}writers`;
    const reason = await unreachable(kind);
    if (reason) {
      out.push(skipped(name, `server not reachable: ${reason}`));
      continue;
    }
    ctx.log(`${name} (${WRITERS} writers x ${ops} get+CAS, ${rounds} rounds)`);
    const { ours, raw } = await makeSides(kind, kind === "sqlite" ? undefined : storeUrls[kind]);
    try {
      const sessions = makeSessions(WRITERS, 20, "conc");
      for (const session of sessions) {
        await ours.save(session);
        await raw.save(session);
      }
      await writers(ours, sessions, 10); // warm-up: JIT, prepared statements, connections
      await writers(raw, sessions, 10);
      const times: [number[], number[]] = [[], []];
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? [0, 1] : [1, 0])
          times[side].push((await writers(side === 0 ? ours : raw, sessions, ops)) / (WRITERS * ops));
      }
      out.push(
        result(name, `raw ${RAW[kind]}, same ${WRITERS} writers (per get+CAS)`, {
          ours_ms: median(times[0]),
          baseline_ms: median(times[1]),
        }),
      );
    } finally {
      await ours.close();
      await raw.close();
    }
  }
  return out;
}
