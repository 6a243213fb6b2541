/**
 * No lost updates across processes: 8 separate processes each apply 100 increments to one
 * session's counter through SQLite, PostgreSQL and Redis. Every increment is either saved or
 * reported as a conflict, and the final counter equals the number saved.
 */
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/runtime/open-store/open-store.js";
import { counterOf, counterSession, durableBackends, type Backend } from "./helpers.js";

const PROCESSES = 8;
const INCREMENTS = 100;
const MAX_RETRIES = 200;
const worker = fileURLToPath(new URL("./workers/increment.ts", import.meta.url));

interface WorkerResult {
  saved: number;
  conflicts: number;
  gaveUp: number;
}

/** Starts a worker; resolves `ready` once it is connected, `done` with its counts. */
function startWorker(url: string, id: string): { ready: Promise<void>; go: () => void; done: Promise<WorkerResult> } {
  const child = fork(worker, [url, id, String(INCREMENTS), String(MAX_RETRIES)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const ready = new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`worker exited early with ${code}: ${err}`)));
  });
  const done = new Promise<WorkerResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`worker exited with ${code}: ${err}`));
      else resolve(JSON.parse(out.trim()) as WorkerResult);
    });
  });
  return { ready, go: () => child.send("go"), done };
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe.each(durableBackends)("$name: 8 processes x 100 increments", (backend: Backend) => {
  it("loses no update", async () => {
    const { url, cleanup } = await backend.location();
    cleanups.push(cleanup);
    const store = await openStore(url);
    const id = "counter";
    await store.save(counterSession(id, 0), { expectedRevision: null });

    const workers = Array.from({ length: PROCESSES }, () => startWorker(url, id));
    await Promise.all(workers.map((w) => w.ready));
    const started = performance.now();
    for (const w of workers) w.go();
    const results = await Promise.all(workers.map((w) => w.done));
    const seconds = (performance.now() - started) / 1000;

    const saved = results.reduce((sum, r) => sum + r.saved, 0);
    const gaveUp = results.reduce((sum, r) => sum + r.gaveUp, 0);
    const conflicts = results.reduce((sum, r) => sum + r.conflicts, 0);
    const final = await store.get(id);
    await store.close();

    console.log(
      `${backend.name}: saved ${saved}, gave up ${gaveUp}, conflicts retried ${conflicts}, ${seconds.toFixed(1)} s`,
    );
    expect(saved + gaveUp).toBe(PROCESSES * INCREMENTS);
    expect(counterOf(final!.session)).toBe(saved);
    expect(saved).toBeGreaterThan(0);
  }, 120_000);
});
