/** The options of `MessageLog.readMessageWindow`, checked (shared by the backends). */
import { ConfigurationError } from "../core/errors.js";
import type { MessageRange, MessageWindowOptions } from "./types.js";

/** The range of `MessageLog.readMessageRange`, checked (shared by the backends). */
export function checkRange(range: MessageRange | undefined): MessageRange {
  const { start, count } = range ?? ({} as Partial<MessageRange>);
  for (const [name, value] of [
    ["start", start],
    ["count", count],
  ] as const) {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
      throw new ConfigurationError(
        `readMessageRange ${name} must be a non-negative integer, got ${JSON.stringify(value)}`,
        "pass { start, count }: the index of the first message (0: the oldest) and how many",
      );
  }
  return { start: start!, count: count! };
}

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
