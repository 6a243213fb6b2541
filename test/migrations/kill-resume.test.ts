/**
 * A bulk migration killed at a random point (SIGKILL: no cleanup, no finally) and run again ends
 * with every session at the latest versions, its content intact, none migrated twice (test.Visits
 * adds 1 per migration: a double migration would show), and none half-written (every stored text
 * loads, strictly).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deserializeSession } from "../../src/runtime/persistence/serialization.js";
import type { MigrateStoreReport } from "../../src/runtime/stores/migrate.js";
import { available, postgresBackend, redisBackend, sleep, sqliteBackend, type Backend } from "../stores/helpers.js";
import { canonical, expectedV2, testRegistry, v1Session } from "./helpers.js";
import { seededStore, type SeededStore } from "./store-helpers.js";

const WORKER = fileURLToPath(new URL("./workers/bulk-migrate.ts", import.meta.url));
const registry = testRegistry();

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  report?: MigrateStoreReport;
}

/** Runs the worker; with `killAfter`, SIGKILLs it once it reports that many sessions done. */
function runWorker(
  url: string,
  args: { batchSize: number; delayMs: number; startAfter?: string; killAfter?: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", WORKER, url, String(args.batchSize), String(args.delayMs), args.startAfter ?? ""],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const lines: string[] = [];
    let buffer = "";
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        lines.push(line);
        if (
          args.killAfter !== undefined &&
          !child.killed &&
          (JSON.parse(line) as { done?: number }).done! >= args.killAfter
        )
          child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`worker exited ${code}: ${stderr}`));
      const last = lines.length ? (JSON.parse(lines[lines.length - 1]) as { report?: MigrateStoreReport }) : {};
      resolve({ code, signal, lines, report: last.report });
    });
  });
}

/** Every stored session, classified by the version of its test.Visits value (and checked to load strictly). */
async function census(s: SeededStore, count: number): Promise<{ migrated: string[]; old: string[] }> {
  // A write the killed process had already sent still lands on a database server: let it.
  await sleep(300);
  const migrated: string[] = [];
  const old: string[] = [];
  const stored = await s.dump();
  expect(stored.size).toBe(count);
  for (const [id, { text }] of stored) {
    deserializeSession(text, { registry, strict: true }); // complete, valid documents only
    const visits = JSON.parse(text).session.stateBag.visits;
    (visits.$version === 2 ? migrated : old).push(id);
  }
  return { migrated, old };
}

const idOf = (i: number) => `k-${String(i).padStart(5, "0")}`;

describe.each(
  [
    { backend: sqliteBackend, count: 2000 },
    { backend: postgresBackend(), count: 1000 },
    { backend: redisBackend(), count: 1000 },
  ].filter((c) => available(c.backend)),
)(
  "bulk migration killed midway on $backend.name ($count sessions)",
  ({ backend, count }: { backend: Backend; count: number }) => {
    let s: SeededStore;
    let seededRevisions: Map<string, number>;

    beforeAll(async () => {
      s = await seededStore(backend);
      for (let i = 0; i < count; i++) await s.seed(v1Session(idOf(i), i));
      seededRevisions = new Map([...(await s.dump())].map(([id, v]) => [id, v.revision]));
    }, 120_000);
    afterAll(async () => s?.done());

    it("killed twice (once while resuming), then re-run from the start: every session migrated exactly once", async () => {
      // 1. Killed after about a quarter of the sessions.
      const killed = await runWorker(s.url, { batchSize: 50, delayMs: 1, killAfter: Math.floor(count / 4) });
      expect(killed.signal).toBe("SIGKILL");
      expect(killed.report).toBeUndefined();
      const afterKill = await census(s, count);
      expect(afterKill.migrated.length).toBeGreaterThanOrEqual(Math.floor(count / 4));
      expect(afterKill.old.length).toBeGreaterThan(0);
      // Migrated sessions form a prefix in id order (one session at a time, in scan order).
      expect([...afterKill.migrated].sort()).toEqual(
        Array.from({ length: afterKill.migrated.length }, (_, i) => idOf(i)),
      );

      // 2. Resumed after the last session the killed run reported done, and killed again.
      const lastCursor = (JSON.parse(killed.lines[killed.lines.length - 1]) as { cursor: string }).cursor;
      const resumed = await runWorker(s.url, {
        batchSize: 50,
        delayMs: 1,
        startAfter: lastCursor,
        killAfter: Math.floor(count / 4),
      });
      expect(resumed.signal).toBe("SIGKILL");
      const firstResumed = JSON.parse(resumed.lines[0]) as { cursor: string };
      expect(firstResumed.cursor > lastCursor).toBe(true); // it skipped what the first run had done
      const afterSecondKill = await census(s, count);
      expect(afterSecondKill.migrated.length).toBeGreaterThanOrEqual(Math.floor(count / 2));
      expect(afterSecondKill.old.length).toBeGreaterThan(0);

      // 3. Run again from the start, to the end: already-migrated sessions are "unchanged", never migrated twice.
      const rerun = await runWorker(s.url, { batchSize: 200, delayMs: 0 });
      expect(rerun.code).toBe(0);
      expect(rerun.report).toMatchObject({
        scanned: count,
        migrated: afterSecondKill.old.length,
        unchanged: afterSecondKill.migrated.length,
        failedCount: 0,
        conflicts: 0,
      });

      // 4. And once more: nothing to do, nothing written.
      const before = await s.dump();
      const again = await runWorker(s.url, { batchSize: 200, delayMs: 0 });
      expect(again.report).toMatchObject({ scanned: count, migrated: 0, unchanged: count, failedCount: 0 });
      const after = await s.dump();
      for (const [id, v] of after) expect(v.revision).toBe(before.get(id)!.revision);

      // Content intact, each session migrated exactly once (visits = n + 1, not n + 2), every text complete.
      for (let i = 0; i < count; i++) {
        const id = idOf(i);
        const stored = after.get(id)!;
        expect(stored.revision).toBeGreaterThan(seededRevisions.get(id)!);
        expect(canonical(deserializeSession(stored.text, { registry, strict: true }))).toEqual(
          canonical(expectedV2(id, i)),
        );
      }
    }, 180_000);
  },
);
