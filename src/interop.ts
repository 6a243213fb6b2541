/**
 * `statebag/interop`: read every session document shape Microsoft Agent Framework has written
 * (.NET, Python, the Python file store, durable entity state) into a statebag session, and write a
 * session back in any of them. Content and state statebag has no type for travel as "foreign"
 * values, so a round trip loses nothing.
 */
export {
  INTEROP_FORMATS,
  PYTHON_MEMORY_HISTORY_KEY,
  detectSessionFormat,
  exportSession,
  exportSessionDocument,
  importSession,
} from "./runtime/interop/index.js";
export type { ExportSessionOptions, ImportSessionOptions, InteropDecodeOptions } from "./runtime/interop/index.js";
export { detectSessionShape } from "./runtime/interop/detect.js";
export type { ShapeDetection } from "./runtime/interop/detect.js";
export { SHAPES, SHAPE_NAMES, familyOf, isSessionShape, shapeInfo } from "./runtime/interop/shapes.js";
export type { SessionShape, ShapeInfo } from "./runtime/interop/shapes.js";
export type { DotnetGenerationOptions, DotnetLegacyShape } from "./runtime/interop/dotnet-generations.js";
export { InteropError } from "./runtime/interop/errors.js";
// A document over the size limit statebag reads and writes with (an export, or an import it could not write back)
export { InteropSizeError } from "./runtime/interop/limits.js";
export type { SizedDocument } from "./runtime/interop/limits.js";
// A session whose history lives in a store's message log, with that history put back in (for export)
export { resolveStoredHistory } from "./runtime/interop/stored-history.js";

// One family at a time
export { DOTNET_DEFAULT_HISTORY_KEY, exportDotnetSession, importDotnetSession } from "./runtime/interop/dotnet.js";
export type {
  DotnetInteropOptions,
  DotnetSessionJson,
  ExportDotnetOptions,
  ImportDotnetOptions,
} from "./runtime/interop/dotnet.js";
export { PYTHON_DEFAULT_HISTORY_KEY, exportPythonSession, importPythonSession } from "./runtime/interop/python.js";
export type {
  ExportPythonOptions,
  ImportPythonOptions,
  PythonInteropOptions,
  PythonSessionJson,
} from "./runtime/interop/python.js";

// The Python file store's directory of session snapshots
export {
  keyFromFileName,
  listSnapshotFiles,
  sessionFileName,
  writeSnapshotFile,
} from "./runtime/interop/python-file-store.js";
export type { SnapshotFile } from "./runtime/interop/python-file-store.js";
// msgpack (an optional peer, @msgpack/msgpack): FileSessionStore msgpack snapshots, FileHistoryProvider histories
export { exportSessionMsgpack, importSessionMsgpack } from "./runtime/interop/index.js";
export { MSGPACK_EXTENSION, keyFromFileStem, sessionFileStem } from "./runtime/interop/python-file-store.js";
export { loadMsgpack } from "./runtime/interop/python-msgpack.js";
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
} from "./runtime/interop/python-history.js";
export type { HistoryFormat } from "./runtime/interop/python-history.js";
// Python session-state keys: the approval round (tool_approval), compaction annotations
export { PYTHON_TOOL_APPROVAL_KEY } from "./runtime/interop/python-approvals.js";
export {
  PYTHON_COMPACTION_STATE_KEY,
  PYTHON_MESSAGE_INJECTION_KEY,
  compactionView,
  includedMessages,
  sessionCompactionView,
} from "./runtime/interop/python-compaction.js";
export type { CompactionAnnotation } from "./runtime/interop/python-compaction.js";

// What statebag keeps of content and state it has no type for
export {
  FOREIGN_CONTENT_TYPE,
  FOREIGN_STATE_TYPE,
  SESSION_INFO_KEY,
  foreignContent,
  foreignState,
  isForeignContent,
  isForeignState,
} from "./runtime/interop/foreign.js";
export type { ForeignContent, ForeignState, InteropFormat, SessionInfo } from "./runtime/interop/foreign.js";

// .NET 2026 state-bag keys: compaction groups and harness tools (read-only views of kept state)
export { DOTNET_HARNESS_KEYS, dotnetCompaction, dotnetHarnessState } from "./runtime/interop/dotnet-harness.js";
export type {
  CompactionGroupKind,
  CompactionMessageInfo,
  DotnetHarnessState,
  DotnetTodoItem,
} from "./runtime/interop/dotnet-harness.js";
// .NET stores: FileSystemAgentSessionStore trees and Cosmos chat-history exports
export {
  COSMOS_KEY,
  DOTNET_FS_STORE_KEY,
  listDotnetFsStore,
  readCosmosChatHistory,
  withFsStoreOwner,
} from "./runtime/interop/maf-stores.js";
export type { CosmosConversation, FsStoreEntry } from "./runtime/interop/maf-stores.js";
