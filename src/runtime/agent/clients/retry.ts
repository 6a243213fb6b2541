/**
 * One retry policy for every model client: `maxRetries` more attempts (default 2) for a
 * `ModelServiceError` marked retryable, with exponential backoff (0.5 s doubling to 8 s, minus up to
 * a quarter of jitter) unless the service said how long to wait. A stream is retried only while
 * nothing of it has reached the caller: text already shown cannot be taken back.
 */
import { ConfigurationError } from "../../core/errors.js";
import { ModelServiceError } from "./model-service-error.js";

export const DEFAULT_MAX_RETRIES = 2;

/** The wait before retry number `attempt` (1-based). Tests replace `delayMs`. @internal */
export const retryTiming: { delayMs: (attempt: number, error: ModelServiceError) => number } = {
  delayMs: (attempt, error) => {
    const asked = error.details.retryAfterMs;
    if (asked !== undefined && asked >= 0 && asked <= 60_000) return asked;
    return Math.min(500 * 2 ** (attempt - 1), 8_000) * (1 - Math.random() * 0.25);
  },
};

export function checkMaxRetries(value: number | undefined, client: string): number {
  if (value === undefined) return DEFAULT_MAX_RETRIES;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new ConfigurationError(
      `${client}: maxRetries must be a non-negative integer, got ${String(value)}`,
      "pass 0 to turn retries off",
    );
  return value;
}

const retryable = (error: unknown): error is ModelServiceError =>
  error instanceof ModelServiceError && error.details.retryable;

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => (clearTimeout(timer), reject(signal!.reason));
    const timer = setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Runs `attempt` until it succeeds, fails for good, or the retries are spent. */
export async function withRetries<T>(
  maxRetries: number,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!retryable(error) || n > maxRetries || signal?.aborted) throw error;
      await sleep(retryTiming.delayMs(n, error), signal);
    }
  }
}

/** A stream that is opened again after a retryable failure, as long as it has yielded nothing. */
export async function* streamWithRetries<T>(
  maxRetries: number,
  signal: AbortSignal | undefined,
  open: () => AsyncIterable<T>,
): AsyncGenerator<T> {
  for (let n = 1; ; n++) {
    let yielded = false;
    try {
      for await (const value of open()) {
        yielded = true;
        yield value;
      }
      return;
    } catch (error) {
      if (yielded || !retryable(error) || n > maxRetries || signal?.aborted) throw error;
      await sleep(retryTiming.delayMs(n, error), signal);
    }
  }
}
