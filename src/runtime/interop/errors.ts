/** Errors for reading and writing other frameworks' session formats. */
import { StatebagError } from "../core/errors.js";
import type { ValidationProblem } from "../core/problems.js";
import { jsonPointer } from "../core/json.js";
import { quoted, shownText } from "../core/json.js";
import type { InteropFormat } from "./foreign.js";
import { familyOf, isSessionShape, type SessionShape } from "./shapes.js";

const FORMAT_NAMES: Record<InteropFormat, string> = {
  dotnet: "Agent Framework .NET",
  python: "Agent Framework Python",
};

/** The family's name, and the shape's own name where it is not the family's current one. */
export function formatName(format: InteropFormat | SessionShape): string {
  const family = FORMAT_NAMES[familyOf(format)];
  return format === "dotnet" || format === "python" || !isSessionShape(format) ? family : `${family} (${format})`;
}

/**
 * A document in another framework's format could not be read (or a statebag session cannot be
 * written in it). Says what is wrong, where (`pointer`, a JSON pointer into the document) and how
 * to fix it.
 */
export class InteropError extends StatebagError {
  /** The document's family (`dotnet` or `python`). */
  readonly format: InteropFormat;
  /** The shape being read or written (`dotnet-thread`, `durable`, ...). */
  readonly shape: SessionShape | InteropFormat;
  constructor(
    shape: SessionShape | InteropFormat,
    readonly direction: "import" | "export",
    readonly pointer: string,
    /** What is wrong, without the "cannot import ..." frame and the pointer. */
    readonly problem: string,
    hint?: string,
    cause?: unknown,
  ) {
    super(
      direction === "import" ? "interop-import" : "interop-export",
      `cannot ${direction} ${direction === "import" ? "from" : "to"} the ${formatName(shape)} session format: ${problem} (at ${pointer === "" ? "the document root" : shownPointer(pointer)})`,
      { hint, cause },
    );
    this.shape = shape;
    this.format = familyOf(shape);
  }
}

/**
 * @internal The same error told about the shape the caller reads (`dotnet-thread`, ...) at the
 * place in that shape's document: used where a shape is read by converting it to another.
 */
export function reframe(error: unknown, shape: SessionShape, sourcePointer: (pointer: string) => string): unknown {
  if (!(error instanceof InteropError) || error.shape === shape) return error;
  return new InteropError(
    shape,
    error.direction,
    sourcePointer(error.pointer),
    error.problem,
    error.hint,
    error.cause ?? error,
  );
}

/** @internal Builds the JSON pointer of a path. */
export const at = (path: readonly (string | number)[]) => jsonPointer(path);

const MAX_SHOWN = 80;
const MAX_POINTER = 512;

/** @internal A string as an error message shows it: quoted, escaped and cut like every statebag message (`quoted`). */
export function shown(text: string, max = MAX_SHOWN): string {
  return quoted(text, max);
}

/** @internal Text as an error message shows it unquoted: escaped and cut like every statebag message (`shownText`). */
export function escaped(text: string, max = 300): string {
  return shownText(text, max);
}

/** @internal A JSON pointer as an error message shows it (bounded, escaped). */
export function shownPointer(pointer: string): string {
  return shown(pointer, MAX_POINTER);
}

/** @internal How a found value reads in an error message ("an array", "null", a short string). */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return shown(value, 40);
  return typeof value === "object" ? "an object" : `${typeof value} ${String(value)}`;
}

/** @internal A validation problem's sentence for a line that names its place already. */
export function problemText(problem: ValidationProblem): string {
  return problem.reason ?? problem.message;
}
