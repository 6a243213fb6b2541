/**
 * Agent Framework interop: read and write the .NET and Python session documents.
 *
 * `importSession(text, { from })` and `exportSession(session, { to })` are what the CLI calls
 * (`statebag import --from dotnet <file>`, `statebag export --to python`). Errors are
 * `InteropError`s (or `JsonParseError`s for text that is not JSON) naming the JSON pointer of the
 * problem and a hint.
 */
import { StatebagError } from "../core/errors.js";
import type { AgentSession } from "../core/session.js";
import { exportDotnetSession, importDotnetSession, type ExportDotnetOptions, type ImportDotnetOptions } from "./dotnet.js";
import type { InteropFormat } from "./foreign.js";
import { isPlainObject } from "./json-util.js";
import { exportPythonSession, importPythonSession, type ExportPythonOptions, type ImportPythonOptions } from "./python.js";

export const INTEROP_FORMATS: readonly InteropFormat[] = ["dotnet", "python"];

export interface ImportSessionOptions extends ImportDotnetOptions, ImportPythonOptions {
  from: InteropFormat;
}

export interface ExportSessionOptions extends ExportDotnetOptions, ExportPythonOptions {
  to: InteropFormat;
  /** Indentation of the JSON text. Default 2; 0 writes one line. */
  indent?: number;
}

function checkFormat(format: unknown, option: "from" | "to"): asserts format is InteropFormat {
  if (!INTEROP_FORMATS.includes(format as InteropFormat)) {
    throw new StatebagError("interop-format", `unknown session format ${JSON.stringify(format)} in { ${option}: ... }`, {
      hint: `use one of ${INTEROP_FORMATS.map((f) => JSON.stringify(f)).join(", ")}`,
    });
  }
}

/** Which format a parsed document looks like, if any: `"statebag"`, `"dotnet"` or `"python"`. */
export function detectSessionFormat(doc: unknown): InteropFormat | "statebag" | undefined {
  if (!isPlainObject(doc)) return undefined;
  if (typeof doc.id === "string" && isPlainObject(doc.stateBag)) return "statebag";
  if (isPlainObject(doc.stateBag)) return "dotnet";
  if (doc.type === "session" || typeof doc.session_id === "string") return "python";
  return undefined;
}

/** Reads another framework's session document (JSON text or parsed) into a statebag session. */
export function importSession(text: string | object, options: ImportSessionOptions): AgentSession {
  checkFormat(options.from, "from");
  return options.from === "dotnet" ? importDotnetSession(text, options) : importPythonSession(text, options);
}

/** Writes a statebag session as another framework's session document (JSON text). */
export function exportSession(session: AgentSession, options: ExportSessionOptions): string {
  checkFormat(options.to, "to");
  const doc = options.to === "dotnet" ? exportDotnetSession(session, options) : exportPythonSession(session, options);
  return JSON.stringify(doc, null, options.indent ?? 2);
}

export { FOREIGN_CONTENT_TYPE, FOREIGN_STATE_TYPE, SESSION_INFO_KEY, foreignContent, foreignState, isForeignContent, isForeignState } from "./foreign.js";
export type { ForeignContent, ForeignState, InteropFormat, SessionInfo } from "./foreign.js";
export { InteropError } from "./errors.js";
export { DOTNET_DEFAULT_HISTORY_KEY, exportDotnetSession, importDotnetSession } from "./dotnet.js";
export type { DotnetInteropOptions, DotnetSessionJson, ExportDotnetOptions, ImportDotnetOptions } from "./dotnet.js";
export {
  PYTHON_DEFAULT_HISTORY_KEY,
  PYTHON_ORIGINAL_KEY,
  STATEBAG_ORIGINAL_KEY,
  contentFromPython,
  contentToPython,
  exportPythonSession,
  importPythonSession,
  messagesFromPython,
  messagesToPython,
} from "./python.js";
export type { ExportPythonOptions, ImportPythonOptions, PythonInteropOptions, PythonSessionJson } from "./python.js";
export type { SessionCodecOptions as InteropDecodeOptions } from "./session-codec.js";
