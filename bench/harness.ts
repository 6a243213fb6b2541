/**
 * Timing: each case and its baseline run side by side in the same process, interleaved sample by
 * sample (ours, baseline, baseline, ours, ...) so drift (JIT warm-up, CPU frequency, GC pressure)
 * hits both equally; the reported figure is the median per-operation time over all samples.
 */
import { performance } from "node:perf_hooks";

export type Task = () => unknown;

export interface TimingOptions {
  /** Samples per side (the median is taken over these). */
  samples: number;
  /** Untimed runs per side before sampling. */
  warmup: number;
  /**
   * A sample repeats the operation until it took at least this long, so microsecond operations
   * are not lost in timer resolution. Set 0 for one operation per sample (slow cases).
   */
  minSampleMs: number;
}

export interface CaseResult {
  case: string;
  ours_ms: number;
  baseline: string;
  baseline_ms: number;
  ratio: number;
  /** Bytes stored by each side, for cases that measure size too. */
  ours_bytes?: number;
  baseline_bytes?: number;
}

export interface SkippedCase {
  case: string;
  reason: string;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/** Keeps results alive so the optimizer cannot drop the work that produced them. */
let sink: unknown;
export function blackhole(value: unknown): void {
  sink = value;
}
export function lastSink(): unknown {
  return sink;
}

/** Runs `task` `times` times and returns the elapsed milliseconds. */
async function runBatch(task: Task, times: number, async: boolean): Promise<number> {
  const start = performance.now();
  if (async) {
    for (let i = 0; i < times; i++) sink = await task();
  } else {
    for (let i = 0; i < times; i++) sink = task();
  }
  return performance.now() - start;
}

interface Side {
  task: Task;
  async: boolean;
  batch: number;
  samples: number[];
}

async function prepare(task: Task, options: TimingOptions): Promise<Side> {
  // The first call tells whether the task is asynchronous and how long it takes cold.
  const t0 = performance.now();
  const first = task();
  const async = isPromise(first);
  if (async) sink = await first;
  else sink = first;
  let once = performance.now() - t0;
  for (let i = 1; i < options.warmup; i++) once = Math.min(once, await runBatch(task, 1, async));
  const batch =
    options.minSampleMs > 0
      ? Math.max(1, Math.min(100_000, Math.ceil(options.minSampleMs / Math.max(once, 0.0005))))
      : 1;
  return { task, async, batch, samples: [] };
}

/** Median per-operation milliseconds of `ours` and `baseline`, measured interleaved. */
export async function compare(
  ours: Task,
  baseline: Task,
  options: TimingOptions,
): Promise<{ ours_ms: number; baseline_ms: number }> {
  const oursSide = await prepare(ours, options);
  const baselineSide = await prepare(baseline, options);
  for (let i = 0; i < options.samples; i++) {
    const order = i % 2 === 0 ? [oursSide, baselineSide] : [baselineSide, oursSide];
    for (const side of order) side.samples.push((await runBatch(side.task, side.batch, side.async)) / side.batch);
  }
  return { ours_ms: median(oursSide.samples), baseline_ms: median(baselineSide.samples) };
}

/** Median of a task that needs fresh setup before every timed run (cold generator runs, store loads). */
export async function compareWithSetup(
  ours: { setup?: () => unknown; run: Task },
  baseline: { setup?: () => unknown; run: Task },
  samples: number,
): Promise<{ ours_ms: number; baseline_ms: number }> {
  const oursTimes: number[] = [];
  const baselineTimes: number[] = [];
  for (let i = 0; i < samples; i++) {
    const order: [typeof ours, number[]][] =
      i % 2 === 0
        ? [
            [ours, oursTimes],
            [baseline, baselineTimes],
          ]
        : [
            [baseline, baselineTimes],
            [ours, oursTimes],
          ];
    for (const [side, out] of order) {
      await side.setup?.();
      const start = performance.now();
      sink = await side.run();
      out.push(performance.now() - start);
    }
  }
  return { ours_ms: median(oursTimes), baseline_ms: median(baselineTimes) };
}

/** Rounds for display and JSON: 3 significant digits below 1, 4 above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (value === 0) return 0;
  const digits = Math.abs(value) < 1 ? 3 : 4;
  return Number(value.toPrecision(digits));
}

export function result(name: string, baseline: string, timing: { ours_ms: number; baseline_ms: number }): CaseResult {
  return {
    case: name,
    ours_ms: round(timing.ours_ms),
    baseline,
    baseline_ms: round(timing.baseline_ms),
    ratio: round(timing.ours_ms / timing.baseline_ms),
  };
}

/** What every case module gets. */
export interface BenchContext {
  quick: boolean;
  /** Timing for fast in-process operations (microseconds to tens of milliseconds). */
  fast: TimingOptions;
  /** Repetitions for slow operations (whole processes, store round trips). */
  slowSamples: number;
  /** Repository root. */
  root: string;
  /** Progress line on stderr. */
  log(line: string): void;
}

export type CaseOutcome = CaseResult | SkippedCase;

export function isSkipped(outcome: CaseOutcome): outcome is SkippedCase {
  return (outcome as SkippedCase).reason !== undefined;
}

export function skipped(name: string, reason: string): SkippedCase {
  return { case: name, reason };
}
