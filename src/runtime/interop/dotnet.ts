/**
 * Agent Framework for .NET: the serialized `ChatClientAgentSession`.
 *
 * ```json
 * {"conversationId": "conv_1", "stateBag": {"InMemoryChatHistoryProvider": {"messages": [...]}, "<key>": <raw JSON>}}
 * ```
 *
 * Mapping (.NET -> statebag):
 * - `conversationId` -> `conversationId` (and kind `hosted`).
 * - `stateBag.InMemoryChatHistoryProvider` (`{"messages": [...]}`) -> the history state
 *   (`statebag.chatHistory`, `InMemoryChatHistoryState` v2). Messages already have the MEAI shape;
 *   MEAI's defaults are applied (`role` "user", empty `contents`) as System.Text.Json does.
 *   Export writes `{"messages": [...]}` only, what .NET reads; the history's statebag-only
 *   `droppedMessageCount` travels in the metadata (below) when it is not 0.
 * - every other key: a `$type`-tagged value is kept as it is; anything else (.NET bag values are
 *   untagged raw JSON) is wrapped as a `statebag.ForeignState` (format "dotnet") and unwrapped on
 *   export, so it comes back byte-for-byte.
 * - unknown top-level members are kept (under `statebag.dotnet.envelope`) and written back.
 *
 * The .NET form has no session id and no kind; with `{ metadata: true }` export records them (and
 * an object-shaped conversation id, which .NET cannot hold) under the bag key `statebag.session`,
 * a key .NET keeps as raw JSON because no provider reads it, so statebag -> .NET -> statebag loses
 * nothing statebag models. By default the document is a bare .NET one.
 *
 * Every object carrying a `$type` is written with `$type` first: System.Text.Json's polymorphic
 * reader requires that by default, and stores like PostgreSQL `jsonb` reorder keys.
 */
import { chatMessageFromMeai, type ChatMessage } from "../core/messages.js";
import { InMemoryChatHistoryProvider } from "../agent/providers/in-memory-chat-history.js";
import {
  createSessionData,
  type AgentSession,
  type ServiceSessionId,
  type SessionKind,
  type StateBag,
} from "../core/session.js";
import { isTaggedValue, type JsonObject, type JsonValue, type TaggedValue } from "../core/tagged.js";
import { pointerSegment } from "../core/json.js";
import { InteropError, at, describe, shown } from "./errors.js";
import {
  SESSION_INFO_KEY,
  droppedCountOf,
  envelopeKey,
  foreignState,
  isForeignState,
  isHistoryState,
  type SessionInfo,
} from "./foreign.js";
import { cloneJson, defineOwn, isPlainObject, typeFirst, type JsonRecord } from "./json-util.js";
import { decodeImported, readDocument, type SessionCodecOptions } from "./session-codec.js";
import type { SessionShape } from "./shapes.js";
import { liftDotnetApprovals, lowerDotnetApprovals } from "./dotnet-approvals.js";
import { isEmptyRuntimeEntry } from "./dotnet-harness.js";

/** The document `ChatClientAgent.SerializeSession` writes. */
export interface DotnetSessionJson {
  conversationId?: string;
  stateBag: { [providerKey: string]: JsonValue };
  [extra: string]: JsonValue | undefined;
}

export interface DotnetInteropOptions {
  /** The .NET history provider's key. Default `"InMemoryChatHistoryProvider"` (its class name). */
  dotnetHistoryKey?: string;
  /** statebag's history key. Default `"statebag.chatHistory"`. */
  historyKey?: string;
}

export interface ImportDotnetOptions extends DotnetInteropOptions, SessionCodecOptions {
  /** The statebag session id (the .NET form has none). Default: the one recorded at export, else a new UUID. */
  id?: string;
  /** Receives notes on what import left out on purpose (an empty `*_Runtime` entry, ...). */
  notes?: string[];
}

export interface ExportDotnetOptions extends DotnetInteropOptions {
  /**
   * Record what .NET has no field for (the session id and kind, an object conversation id, the
   * history's dropped count) under `stateBag["statebag.session"]`. Default false: the document is
   * exactly what Agent Framework writes.
   */
  metadata?: boolean;
}

/**
 * @internal How an older or another agent's shape uses this reader: its name for messages, and
 * where a pointer into the converted document sits in the original one.
 */
export interface ReaderContext {
  shape: SessionShape;
  sourcePointer: (pointer: string) => string;
}

export const DOTNET_DEFAULT_HISTORY_KEY = "InMemoryChatHistoryProvider";
/** Where `FileSystemAgentSessionStore` kept a session (agent, user, conversation), recorded on import from the store. */
export const DOTNET_FS_STORE_KEY = "statebag.dotnet.fsStore";

type Path = (string | number)[];

const KNOWN_TOP_LEVEL = new Set(["conversationId", "stateBag"]);
/** Earlier .NET session shapes (before `stateBag`), which .NET itself cannot read any more. */
const LEGACY_KEYS = ["storeState", "chatHistoryProviderState", "aiContextProviderState"];

function importHistory(value: JsonRecord, path: Path, context: ReaderContext): ChatMessage[] {
  const messages = value.messages as unknown[];
  const fail = (where: Path, problem: string, hint?: string) =>
    new InteropError(context.shape, "import", context.sourcePointer(at(where)), problem, hint);
  return messages.map((message, i) => {
    const here = [...path, "messages", i];
    if (!isPlainObject(message))
      throw fail(
        here,
        `expected a ChatMessage object, found ${describe(message)}`,
        'a message is {"role": "user", "contents": [{"$type": "text", "text": "..."}]}',
      );
    if (message.role !== undefined && typeof message.role !== "string")
      throw fail([...here, "role"], `expected a string role, found ${describe(message.role)}`);
    if (message.contents !== undefined) {
      if (!Array.isArray(message.contents))
        throw fail([...here, "contents"], `expected an array of contents, found ${describe(message.contents)}`);
      message.contents.forEach((content, j) => {
        if (!isTaggedValue(content)) {
          throw fail(
            [...here, "contents", j],
            'expected an AIContent object with a "$type" discriminator',
            'MEAI contents are {"$type": "text", "text": "..."}, {"$type": "functionCall", ...}, ...',
          );
        }
      });
    }
    return chatMessageFromMeai(cloneJson(message) as unknown as Parameters<typeof chatMessageFromMeai>[0]);
  });
}

/** Reads a .NET session document (text or parsed) into a statebag session. */
export function importDotnetSession(
  json: string | object,
  options: ImportDotnetOptions = {},
  context: ReaderContext = { shape: "dotnet", sourcePointer: (p) => p },
): AgentSession {
  const doc = readDocument(json, options);
  const dotnetHistoryKey = options.dotnetHistoryKey ?? DOTNET_DEFAULT_HISTORY_KEY;
  const historyKey = options.historyKey ?? InMemoryChatHistoryProvider.defaultKey;
  const fail = (path: Path, problem: string, hint?: string) =>
    new InteropError(context.shape, "import", context.sourcePointer(at(path)), problem, hint);
  const hint = '.NET sessions are {"conversationId"?: string, "stateBag": {"<providerKey>": ...}}';
  if (!isPlainObject(doc)) throw fail([], `expected an object, found ${describe(doc)}`, hint);
  if (!Object.hasOwn(doc, "stateBag")) {
    const legacy = LEGACY_KEYS.find((k) => Object.hasOwn(doc, k));
    if (legacy) {
      throw fail(
        [legacy],
        `this is a pre-"stateBag" .NET session ("${legacy}"), a shape Agent Framework itself no longer reads`,
        `import it with { from: "${legacy === "chatHistoryProviderState" ? "dotnet-provider-state" : "dotnet-thread"}" } (or without --from on the command line), which brings it to today's shape`,
      );
    }
    if (doc.type === "session" || "session_id" in doc)
      throw fail(
        ["stateBag"],
        'missing "stateBag"',
        'this looks like a Python session ("type": "session"): import it with { from: "python" }',
      );
    throw fail(["stateBag"], 'missing "stateBag"', hint);
  }
  if (!isPlainObject(doc.stateBag))
    throw fail(["stateBag"], `expected an object, found ${describe(doc.stateBag)}`, hint);
  let conversationId: ServiceSessionId | undefined;
  if (doc.conversationId !== undefined && doc.conversationId !== null) {
    if (typeof doc.conversationId !== "string")
      throw fail(["conversationId"], `expected a string, found ${describe(doc.conversationId)}`, hint);
    conversationId = doc.conversationId;
  }

  const bag: StateBag = {};
  let info: SessionInfo | undefined;
  let hasHistory = false;
  const put = (key: string, value: TaggedValue, path: Path) => {
    if (Object.hasOwn(bag, key))
      throw fail(
        path,
        `two state bag entries map to the statebag key ${shown(key)}`,
        `import with another historyKey (now ${shown(historyKey)})`,
      );
    defineOwn(bag as JsonRecord, key, value);
  };
  for (const key of Object.keys(doc.stateBag)) {
    const value = doc.stateBag[key];
    const path = ["stateBag", key];
    if (key === SESSION_INFO_KEY && isPlainObject(value) && value.$type === "statebag.SessionInfo") {
      info = value as unknown as SessionInfo;
    } else if (key === dotnetHistoryKey && isPlainObject(value) && !isTaggedValue(value) && "messages" in value) {
      if (!Array.isArray(value.messages))
        throw fail([...path, "messages"], `expected an array of messages, found ${describe(value.messages)}`);
      if (Object.keys(value).length !== 1) {
        // A history state with more than .NET's one member: keep it whole rather than drop parts.
        put(key, foreignState("dotnet", cloneJson(value) as JsonObject) as unknown as TaggedValue, path);
      } else {
        put(
          historyKey,
          {
            $type: "InMemoryChatHistoryState",
            $version: 3,
            messages: importHistory(value, path, context),
            droppedMessageCount: 0,
            branches: [],
            branchPoints: [],
          },
          path,
        );
        hasHistory = true;
      }
    } else if (isEmptyRuntimeEntry(key, value)) {
      // Live objects (running tasks) .NET re-creates: no data to keep.
      options.notes?.push(
        `dropped the state bag entry ${shown(key)}: a *_Runtime entry holds live objects, not data (.NET re-creates it)`,
      );
    } else if (isTaggedValue(value)) {
      put(key, cloneJson(value), path);
    } else {
      put(key, foreignState("dotnet", cloneJson(value as JsonValue)) as unknown as TaggedValue, path);
    }
  }
  liftDotnetApprovals(bag, context.shape, context.sourcePointer);
  const extras: JsonRecord = {};
  for (const key of Object.keys(doc)) if (!KNOWN_TOP_LEVEL.has(key)) defineOwn(extras, key, cloneJson(doc[key]));
  if (Object.keys(extras).length > 0)
    put(envelopeKey("dotnet"), foreignState("dotnet", extras as JsonObject) as unknown as TaggedValue, []);

  if (conversationId === undefined && isPlainObject(info?.conversationId))
    conversationId = cloneJson(info.conversationId);
  if (hasHistory && droppedCountOf(info) > 0)
    (bag[historyKey] as JsonRecord).droppedMessageCount = droppedCountOf(info);
  const kind: SessionKind | undefined =
    info?.kind ?? (conversationId !== undefined ? "hosted" : hasHistory ? "local" : undefined);
  const id = options.id ?? (typeof info?.id === "string" && info.id !== "" ? info.id : undefined);
  const session = createSessionData({ id, kind, conversationId, stateBag: bag });
  const historyPrefix = `/stateBag/${pointerSegment(historyKey)}/`;
  return decodeImported(
    session,
    context.shape,
    (pointer) => {
      if (hasHistory && pointer.startsWith(historyPrefix))
        return context.sourcePointer(
          `/stateBag/${pointerSegment(dotnetHistoryKey)}/${pointer.slice(historyPrefix.length)}`,
        );
      return context.sourcePointer(pointer);
    },
    options,
  );
}

/** Writes a statebag session as a .NET session document. */
export function exportDotnetSession(session: AgentSession, options: ExportDotnetOptions = {}): DotnetSessionJson {
  const dotnetHistoryKey = options.dotnetHistoryKey ?? DOTNET_DEFAULT_HISTORY_KEY;
  const historyKey = options.historyKey ?? InMemoryChatHistoryProvider.defaultKey;
  const metadata = options.metadata === true;
  const fail = (path: Path, problem: string, hint?: string) =>
    new InteropError("dotnet", "export", at(path), problem, hint);
  const bag: JsonRecord = {};
  let extras: JsonRecord = {};
  let dropped = 0;
  const put = (key: string, value: unknown) => {
    if (Object.hasOwn(bag, key))
      throw fail(
        ["stateBag", key],
        `two state bag entries map to the .NET key ${shown(key)}`,
        `export with another dotnetHistoryKey (now ${shown(dotnetHistoryKey)}) or rename one of them`,
      );
    defineOwn(bag, key, value);
  };
  const stateBag = lowerDotnetApprovals(session.stateBag);
  for (const key of Object.keys(stateBag)) {
    const value = stateBag[key];
    if (key === DOTNET_FS_STORE_KEY) continue; // where the session was stored, not session data
    if (key === envelopeKey("dotnet") && isForeignState(value, "dotnet") && isPlainObject(value.value)) {
      extras = cloneJson(value.value);
    } else if (key === historyKey && isHistoryState(value)) {
      // .NET's history is { messages } and nothing else; statebag's own fields go to the metadata.
      put(dotnetHistoryKey, { messages: typeFirst(value.messages) });
      dropped = typeof value.droppedMessageCount === "number" ? value.droppedMessageCount : 0;
    } else if (isForeignState(value, "dotnet")) {
      put(key, cloneJson(value.value)); // raw, exactly as .NET wrote it
    } else if (key === SESSION_INFO_KEY) {
      throw fail(
        ["stateBag", key],
        `the key ${shown(key)} is reserved for session metadata`,
        "rename that provider's key",
      );
    } else {
      put(key, typeFirst(value));
    }
  }
  const doc: JsonRecord = {};
  const info: SessionInfo = { $type: "statebag.SessionInfo", id: session.id };
  if (session.kind !== undefined) info.kind = session.kind;
  if (dropped > 0) info.historyDroppedMessageCount = dropped;
  if (typeof session.conversationId === "string") doc.conversationId = session.conversationId;
  else if (session.conversationId !== undefined) {
    if (!metadata)
      throw fail(
        ["conversationId"],
        "the conversation id is an object of named ids; the .NET form holds a string only",
        "export with metadata ({ metadata: true }, --with-metadata) to keep it, or use a single string id",
      );
    info.conversationId = cloneJson(session.conversationId);
  }
  if (metadata) put(SESSION_INFO_KEY, info);
  doc.stateBag = bag;
  for (const key of Object.keys(extras)) if (!KNOWN_TOP_LEVEL.has(key)) defineOwn(doc, key, extras[key]);
  return doc as DotnetSessionJson;
}
