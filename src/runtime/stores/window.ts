/** The options of `MessageLog.readMessageWindow`, checked (shared by the backends). */
import { ConfigurationError } from "../core/errors.js";
import type { MessageWindowOptions } from "./types.js";

export function checkWindow(options: MessageWindowOptions | undefined): { last: number } | { from: number } {
  const { last, from } = options ?? {};
  const count = (value: unknown): value is number =>
    typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
  if ((last === undefined) === (from === undefined)) {
    throw new ConfigurationError(
      `readMessageWindow takes exactly one of last and from, got ${JSON.stringify(options ?? {})}`,
    );
  }
  if (last !== undefined) {
    if (!count(last)) throw new ConfigurationError(`last must be a non-negative integer, got ${JSON.stringify(last)}`);
    return { last };
  }
  if (!count(from)) throw new ConfigurationError(`from must be a non-negative integer, got ${JSON.stringify(from)}`);
  return { from };
}
