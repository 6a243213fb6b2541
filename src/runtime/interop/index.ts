/**
 * Agent Framework interop: read every session document shape Agent Framework has written (.NET,
 * Python, the Python file store, the durable entity state) and write each of them back.
 *
 * `importSession(text, { from })` and `exportSession(session, { to })` are what the CLI calls
 * (`statebag import --from dotnet-thread <file>`, `statebag export --to python`);
 * `detectSessionShape(doc)` tells which shape a document is. Errors are
 * `InteropError`s (or `JsonParseError`s for text that is not JSON) naming the JSON pointer of the
 * problem and a hint.
 */
import { StatebagError } from "../core/errors.js";
import { type BranchesLeftOut, branchesLeftOut } from "../builtins/branches-left-out.js";
import type { AgentSession } from "../core/session.js";
import { checkShapeFits, detectSessionShape, isStatebagDocument } from "./detect.js";
import {
  exportDotnetSession,
  importDotnetSession,
  type ExportDotnetOptions,
  type ImportDotnetOptions,
} from "./dotnet.js";
import {
  dotnetFromCurrent,
  dotnetToCurrent,
  isDotnetLegacyShape,
  type DotnetGenerationOptions,
} from "./dotnet-generations.js";
import { exportDurableState, importDurableState } from "./durable.js";
import { InteropError, reframe } from "./errors.js";
import { checkEncodedSize, checkWritesBack, documentLimit, documentText } from "./limits.js";
import type { InteropFormat } from "./foreign.js";
import type { JsonRecord } from "./json-util.js";
import {
  exportPythonSession,
  importPythonSession,
  type ExportPythonOptions,
  type ImportPythonOptions,
} from "./python.js";
import { sessionToSnapshot, snapshotToSession } from "./python-file-store.js";
import { decodeMsgpackDocument, loadMsgpack } from "./python-msgpack.js";
import { pythonSessionToThread, pythonThreadToSession } from "./python-generations.js";
import { readDocument } from "./session-codec.js";
import { SHAPE_NAMES, familyOf, isSessionShape, shapeInfo, type SessionShape } from "./shapes.js";
import type { JsonLimits } from "../json/safe-json.js";
import { exportAguiSnapshot, importAguiSnapshot, importWorkflowCheckpoint } from "./ag-ui.js";

/** The two families (today's .NET and Python documents); every shape is in `SHAPE_NAMES`. */
export const INTEROP_FORMATS: readonly InteropFormat[] = ["dotnet", "python"];

/** The Python history source id of the Feb 12 - 17 2026 releases. */
export const PYTHON_MEMORY_HISTORY_KEY = "memory";

export interface ImportSessionOptions extends ImportDotnetOptions, ImportPythonOptions, DotnetGenerationOptions {
  from: SessionShape;
}

export interface ExportSessionOptions extends ExportDotnetOptions, ExportPythonOptions, DotnetGenerationOptions {
  to: SessionShape;
  /** Indentation of the JSON text. Default 2; 0 writes one line. Dropped when it alone would take the text over `limits.maxBytes`. */
  indent?: number;
  /**
   * The size limit the document is written within (`maxBytes`, default `DEFAULT_JSON_LIMITS.maxBytes`):
   * the one its reader applies, so whatever is written can be imported again with the same limits.
   */
  limits?: Pick<JsonLimits, "maxBytes">;
  /**
   * Agent Framework histories are lists: only the active path of a branched history is written.
   * Called with the branches left out (regenerated answers, edited messages and what followed),
   * when there are any; see `branchesLeftOut` (statebag/ui-messages).
   */
  onBranchesLeftOut?: (report: BranchesLeftOut) => void;
}

function checkShape(shape: unknown, option: "from" | "to"): asserts shape is SessionShape {
  if (!isSessionShape(shape)) {
    throw new StatebagError(
      "interop-format",
      `unknown session format ${JSON.stringify(String(shape).slice(0, 60))} in { ${option}: ... }`,
      {
        hint: `use one of ${SHAPE_NAMES.map((f) => JSON.stringify(f)).join(", ")}`,
      },
    );
  }
}

/** Which family a parsed document looks like, if any: `"statebag"`, `"dotnet"` or `"python"`. */
export function detectSessionFormat(doc: unknown): InteropFormat | "statebag" | undefined {
  if (isStatebagDocument(doc)) return "statebag";
  const detected = detectSessionShape(doc);
  if (!detected) return undefined;
  return familyOf(detected.shape);
}

/**
 * Reads an Agent Framework session document of the given shape (JSON text or parsed) into a
 * statebag session. The document is read within `options.limits`; a session that could not be
 * written back within the same size limit (its statebag document, or its document in `from`'s
 * shape) is refused up front with an `InteropSizeError`, so what imports can be saved, exported
 * and imported again.
 */
export function importSession(input: string | object, options: ImportSessionOptions): AgentSession {
  const session = importWithin(input, options);
  const shape = options.from;
  checkWritesBack(session, shape, documentLimit(options.limits), () =>
    shapeInfo(shape).writable ? exportSessionDocument(session, { ...options, to: shape }) : undefined,
  );
  return session;
}

function importWithin(input: string | object, options: ImportSessionOptions): AgentSession {
  const shape = options.from;
  checkShape(shape, "from");
  // Parsed once and held to the limits; a chat message or another shape's document is refused
  // here, before a reader could keep it as unknown members of an empty session.
  const text = readDocument(input, options) as object;
  checkShapeFits(shape, text);
  switch (shape) {
    case "dotnet":
      return importDotnetSession(text, options);
    case "python":
      return importPythonSession(text, options);
    case "python-memory":
      return importPythonSession(
        text,
        { ...options, pythonHistoryKey: options.pythonHistoryKey ?? PYTHON_MEMORY_HISTORY_KEY },
        { shape, sourcePointer: (p) => p },
      );
    case "python-thread": {
      const { doc, sourcePointer } = pythonThreadToSession(
        readDocument(text, options),
        options.id,
        options.pythonHistoryKey,
      );
      return importPythonSession(doc, options, { shape, sourcePointer });
    }
    case "python-file-store":
      return importPythonSession(snapshotToSession(readDocument(text, options)), options, {
        shape,
        sourcePointer: (p) => p,
      });
    case "durable":
    case "durable-2-preview":
      return importDurableState(text, { ...options, preview: shape === "durable-2-preview" });
    case "ag-ui-snapshot":
      return importAguiSnapshot(text, options);
    case "workflow-checkpoint":
      return importWorkflowCheckpoint(text, options);
    default: {
      const { doc, sourcePointer } = dotnetToCurrent(shape, readDocument(text, options), options);
      return importDotnetSession(doc, options, { shape, sourcePointer });
    }
  }
}

/** Writes a statebag session as an Agent Framework document of the given shape (the parsed document). */
export function exportSessionDocument(session: AgentSession, options: ExportSessionOptions): JsonRecord {
  const shape = options.to;
  checkShape(shape, "to");
  if (options.onBranchesLeftOut) {
    const report = branchesLeftOut(session, options.historyKey);
    if (report) options.onBranchesLeftOut(report);
  }
  try {
    switch (shape) {
      case "dotnet":
        return exportDotnetSession(session, options) as unknown as JsonRecord;
      case "python":
        return exportPythonSession(session, options) as unknown as JsonRecord;
      case "python-memory":
        return exportPythonSession(session, {
          ...options,
          pythonHistoryKey: options.pythonHistoryKey ?? PYTHON_MEMORY_HISTORY_KEY,
        }) as unknown as JsonRecord;
      case "python-thread":
        return pythonSessionToThread(
          exportPythonSession(session, options) as unknown as JsonRecord,
          options.pythonHistoryKey,
        );
      case "python-file-store":
        return sessionToSnapshot(exportPythonSession(session, options) as unknown as JsonRecord);
      case "durable":
      case "durable-2-preview":
        return exportDurableState(session, { historyKey: options.historyKey, preview: shape === "durable-2-preview" });
      case "ag-ui-snapshot":
        return exportAguiSnapshot(session, { historyKey: options.historyKey });
      case "workflow-checkpoint":
        throw new InteropError(
          "workflow-checkpoint",
          "export",
          "",
          "statebag does not write workflow checkpoints (their values are Python pickles)",
          "export the session --to python or --to python-file-store",
        );
      default:
        if (isDotnetLegacyShape(shape))
          return dotnetFromCurrent(shape, exportDotnetSession(session, options) as unknown as JsonRecord, options);
        throw new Error(`unreachable: ${shape}`);
    }
  } catch (error) {
    throw reframe(error, shape, (p) => p);
  }
}

/** Writes a statebag session as an Agent Framework document of the given shape (JSON text). */
export function exportSession(session: AgentSession, options: ExportSessionOptions): string {
  const doc = exportSessionDocument(session, options);
  return documentText(doc, options.indent ?? 2, documentLimit(options.limits), options.to);
}

/**
 * Reads a msgpack session document (a `FileSessionStore(..., serialization_format="msgpack")`
 * snapshot, or any shape's document written as msgpack) into a statebag session. Loads the
 * optional `@msgpack/msgpack` package on first use.
 */
export async function importSessionMsgpack(bytes: Uint8Array, options: ImportSessionOptions): Promise<AgentSession> {
  checkShape(options.from, "from");
  const codec = await loadMsgpack();
  return importSession(decodeMsgpackDocument(codec, bytes, options.from, options.limits) as object, options);
}

/** Writes a statebag session as a msgpack document of the given shape (what msgspec writes: see python-msgpack.ts). */
export async function exportSessionMsgpack(session: AgentSession, options: ExportSessionOptions): Promise<Uint8Array> {
  const codec = await loadMsgpack();
  const bytes = codec.encode(exportSessionDocument(session, options));
  checkEncodedSize(bytes, documentLimit(options.limits), options.to);
  return bytes;
}

export { checkShapeFits, describeNonSession, detectSessionShape, isStatebagDocument } from "./detect.js";
export type { ShapeDetection } from "./detect.js";
export { SHAPES, SHAPE_NAMES, familyOf, isSessionShape, shapeInfo } from "./shapes.js";
export type { SessionShape, ShapeInfo } from "./shapes.js";
export { dotnetFromCurrent, dotnetToCurrent } from "./dotnet-generations.js";
export type { DotnetGenerationOptions, DotnetLegacyShape } from "./dotnet-generations.js";
export { PYTHON_THREAD_STORE_KEY, pythonSessionToThread, pythonThreadToSession } from "./python-generations.js";
export {
  PYTHON_MAX_SESSION_ID_LENGTH,
  PYTHON_SNAPSHOT_VERSION,
  isLiteralSafeKey,
  keyFromFileName,
  listSnapshotFiles,
  sessionFileName,
  sessionToSnapshot,
  snapshotToSession,
  writeSnapshotFile,
} from "./python-file-store.js";
export type { SnapshotFile } from "./python-file-store.js";
export { MSGPACK_EXTENSION, keyFromFileStem, sessionFileStem } from "./python-file-store.js";
export type { SnapshotFormat } from "./python-file-store.js";
export { decodeMsgpackDocument, loadMsgpack } from "./python-msgpack.js";
export type { MsgpackCodec } from "./python-msgpack.js";
export {
  PYTHON_HISTORY_SOURCE_ID,
  detectHistoryFile,
  exportPythonHistoryJsonl,
  exportPythonHistoryMsgpack,
  historyFileKey,
  historyFileName,
  importPythonHistory,
  readHistoryJsonl,
  readHistoryMsgpack,
} from "./python-history.js";
export type { HistoryFormat } from "./python-history.js";
export { PYTHON_TOOL_APPROVAL_KEY } from "./python-approvals.js";
export {
  PYTHON_COMPACTION_STATE_KEY,
  PYTHON_MESSAGE_INJECTION_KEY,
  compactionView,
  includedMessages,
  sessionCompactionView,
} from "./python-compaction.js";
export type { CompactionAnnotation } from "./python-compaction.js";
export { AGUI_ORIGINAL_KEY, AGUI_SNAPSHOT_KEY, exportAguiSnapshot, importAguiSnapshot } from "./ag-ui.js";
export {
  DURABLE_DEFAULT_SCHEMA_VERSION,
  DURABLE_STATE_KEY,
  checkDurableVersion,
  exportDurableState,
  importDurableState,
} from "./durable.js";
export type { DurableExportOptions, DurableImportOptions } from "./durable.js";
export { resolveStoredHistory } from "./stored-history.js";
export {
  FOREIGN_CONTENT_TYPE,
  FOREIGN_STATE_TYPE,
  SESSION_INFO_KEY,
  foreignContent,
  foreignState,
  isForeignContent,
  isForeignState,
} from "./foreign.js";
export type { ForeignContent, ForeignState, InteropFormat, SessionInfo } from "./foreign.js";
export { InteropError } from "./errors.js";
export { InteropSizeError, type SizedDocument } from "./limits.js";
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
