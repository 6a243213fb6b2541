/** The error for UI messages that cannot be converted: what, where (a JSON pointer) and how to fix it. */
import { StatebagError } from "../core/errors.js";
import { boundedPointer, describeValue, jsonPointer, shortPointer } from "../core/json.js";

export class UIMessageError extends StatebagError {
  /** JSON pointer into the input (the `UIMessage[]`, or the history) of the offending value. */
  readonly pointer: string;
  constructor(
    path: readonly (string | number)[],
    readonly problem: string,
    hint: string,
  ) {
    const pointer = jsonPointer(path);
    super("invalid-message", `cannot convert UI messages: ${problem} (at ${shortPointer(pointer)})`, { hint });
    this.pointer = boundedPointer(pointer);
  }
}

/** "expected X, found <a short, escaped description>" */
export function expected(
  path: readonly (string | number)[],
  what: string,
  found: unknown,
  hint: string,
): UIMessageError {
  return new UIMessageError(path, `expected ${what}, found ${describeValue(found)}`, hint);
}

/** The same error at its place in a larger document (`prefix` leads to the messages array). */
export function within(prefix: readonly (string | number)[], error: unknown): unknown {
  const pointer = (error as { pointer?: unknown }).pointer;
  if (!(error instanceof StatebagError) || typeof pointer !== "string") return error;
  const rest =
    pointer === ""
      ? []
      : pointer
          .slice(1)
          .split("/")
          .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const problem = error instanceof UIMessageError ? error.problem : error.message;
  return new UIMessageError([...prefix, ...rest], problem, error.hint);
}
