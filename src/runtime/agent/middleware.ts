/**
 * A middleware chain: functions wrapping a core call, first one outermost, each calling `next()`
 * at most once. The agent runs every run through its chain (`RunMiddleware` in agent.ts): before
 * `next()` a middleware sees the session as it was; after `next()` resolves, the run has committed.
 */

import { ConfigurationError } from "../core/errors.js";

/** One link of a chain: does its work around `next()`, the rest of the chain and the core call. */
export type Middleware<C, R> = (context: C, next: () => Promise<R>) => Promise<R>;

/** Runs `core` inside `middleware`, first one outermost. */
export function runMiddleware<C, R>(
  middleware: readonly Middleware<C, R>[],
  context: C,
  core: () => Promise<R>,
): Promise<R> {
  const call = (index: number): Promise<R> => {
    if (index === middleware.length) return core();
    let called = false;
    return middleware[index](context, () => {
      if (called)
        return Promise.reject(
          new ConfigurationError(
            `run middleware ${index + 1} of ${middleware.length} called next() twice`,
            "call next() once per run: a second call would run the model and save the session again; keep its first result if you need it twice",
          ),
        );
      called = true;
      return call(index + 1);
    });
  };
  return call(0);
}
