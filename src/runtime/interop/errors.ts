/** Errors for reading and writing other frameworks' session formats. */
import { StatebagError, jsonPointer } from "../core/errors.js";
import type { InteropFormat } from "./foreign.js";

const FORMAT_NAMES: Record<InteropFormat, string> = { dotnet: "Agent Framework .NET", python: "Agent Framework Python" };

export function formatName(format: InteropFormat): string {
  return FORMAT_NAMES[format];
}

/**
 * A document in another framework's format could not be read (or a statebag session cannot be
 * written in it). Says what is wrong, where (`pointer`, a JSON pointer into the document) and how
 * to fix it.
 */
export class InteropError extends StatebagError {
  constructor(
    readonly format: InteropFormat,
    readonly direction: "import" | "export",
    readonly pointer: string,
    problem: string,
    hint?: string,
    cause?: unknown,
  ) {
    super(
      direction === "import" ? "interop-import" : "interop-export",
      `cannot ${direction} ${direction === "import" ? "from" : "to"} the ${formatName(format)} session format: ${problem} (at ${pointer === "" ? "the document root" : JSON.stringify(pointer)})`,
      { hint, cause },
    );
  }
}

/** @internal Builds the JSON pointer of a path. */
export const at = (path: readonly (string | number)[]) => jsonPointer(path);

/** @internal How a found value reads in an error message ("an array", "null", a short string). */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? value.slice(0, 40) + "..." : value);
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

/** @internal A validation problem's sentence without the pointer the validator puts in front of it. */
export function problemText(message: string, pointer: string): string {
  return pointer !== "" && message.startsWith(pointer) ? message.slice(pointer.length).replace(/^:?\s*/, "") : message;
}
