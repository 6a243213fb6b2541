/**
 * The .NET session shapes other than today's `ChatClientAgent` session: the earlier generations of
 * `ChatClientAgent`'s own document and the documents of other .NET agents. Each is read by turning
 * it into today's document (`{"conversationId"?, "stateBag": {...}}`) and back, member by member;
 * the conversion is exact both ways, so the .NET reader and writer do the rest.
 *
 * | shape                   | members                                                        |
 * | ----------------------- | -------------------------------------------------------------- |
 * | `dotnet-thread`         | `conversationId`, `storeState`, `aiContextProviderState`      |
 * | `dotnet-provider-state` | `conversationId`, `chatHistoryProviderState`, `aiContextProviderState` |
 * | `dotnet-a2a`            | `contextId` (the conversation), `taskId`, `taskState`, `stateBag` |
 * | `dotnet-a2a-thread`     | `contextId` (the conversation), `taskId`                       |
 * | `dotnet-copilot-studio` | `serviceSessionId` (the conversation), `stateBag`              |
 * | `dotnet-service-thread` | `serviceThreadId` (the conversation)                           |
 * | `dotnet-github-copilot` | `sessionId` (the Copilot session: the conversation), `stateBag` |
 *
 * The older `ChatClientAgent` shapes held one history store's state and one context provider's
 * state. The history's `{"messages": [...]}` becomes today's `InMemoryChatHistoryProvider` state;
 * any other store state, and the context provider's state, move under bag keys named after the
 * member they came from (`storeState`, `chatHistoryProviderState`, `aiContextProviderState`;
 * configurable), which is where writing the old shape again finds them. Members a shape does not
 * map (an A2A `taskId`, fields added later) are kept verbatim and written back.
 */
import { SESSION_INFO_KEY } from "./foreign.js";
import { InteropError, at, describe, shown } from "./errors.js";
import { cloneJson, defineOwn, isPlainObject, type JsonRecord } from "./json-util.js";
import { DOTNET_DEFAULT_HISTORY_KEY } from "./dotnet.js";
import type { SessionShape } from "./shapes.js";

export type DotnetLegacyShape =
  | "dotnet-thread"
  | "dotnet-provider-state"
  | "dotnet-a2a"
  | "dotnet-a2a-thread"
  | "dotnet-copilot-studio"
  | "dotnet-service-thread"
  | "dotnet-github-copilot";

export interface DotnetGenerationOptions {
  /** The .NET history provider key today's document uses. Default `"InMemoryChatHistoryProvider"`. */
  dotnetHistoryKey?: string;
  /** Bag key for a pre-2026 context provider's state. Default `"aiContextProviderState"`. */
  contextProviderKey?: string;
  /** Bag key for a history store state that is not `{"messages": [...]}`. Default: the member's name. */
  storeStateKey?: string;
}

interface Layout {
  /** The member holding the service's conversation id, if any. */
  idMember?: string;
  /** The member holding one history store's state (old `ChatClientAgent` shapes). */
  storeMember?: string;
  /** Whether the shape carries today's `stateBag`. */
  stateBag: boolean;
  /** Whether the shape has a single context provider state (`aiContextProviderState`). */
  contextProvider: boolean;
}

const LAYOUTS: Record<DotnetLegacyShape, Layout> = {
  "dotnet-thread": { idMember: "conversationId", storeMember: "storeState", stateBag: false, contextProvider: true },
  "dotnet-provider-state": {
    idMember: "conversationId",
    storeMember: "chatHistoryProviderState",
    stateBag: false,
    contextProvider: true,
  },
  "dotnet-a2a": { idMember: "contextId", stateBag: true, contextProvider: false },
  "dotnet-a2a-thread": { idMember: "contextId", stateBag: false, contextProvider: false },
  "dotnet-copilot-studio": { idMember: "serviceSessionId", stateBag: true, contextProvider: false },
  "dotnet-service-thread": { idMember: "serviceThreadId", stateBag: false, contextProvider: false },
  "dotnet-github-copilot": { idMember: "sessionId", stateBag: true, contextProvider: false },
};

export function isDotnetLegacyShape(shape: SessionShape): shape is DotnetLegacyShape {
  return Object.hasOwn(LAYOUTS, shape);
}

function isHistoryOnly(value: unknown): value is { messages: unknown[] } {
  return isPlainObject(value) && Array.isArray(value.messages) && Object.keys(value).length === 1;
}

/**
 * An older or other agent's .NET document as today's document, and where a pointer into the
 * result sits in the original. Throws for a member of the wrong type.
 */
export function dotnetToCurrent(
  shape: DotnetLegacyShape,
  doc: unknown,
  options: DotnetGenerationOptions = {},
): { doc: JsonRecord; sourcePointer: (pointer: string) => string } {
  const layout = LAYOUTS[shape];
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError(shape, "import", at(path), problem, hint);
  if (!isPlainObject(doc))
    throw fail(
      [],
      `expected an object, found ${describe(doc)}`,
      "the serialized session or thread state is a JSON object",
    );
  const historyKey = options.dotnetHistoryKey ?? DOTNET_DEFAULT_HISTORY_KEY;
  const contextKey = options.contextProviderKey ?? "aiContextProviderState";
  const bag: JsonRecord = {};
  const moved = new Map<string, string>(); // today's pointer prefix -> the original's
  const out: JsonRecord = {};
  if (layout.stateBag) {
    if (!Object.hasOwn(doc, "stateBag"))
      throw fail(
        ["stateBag"],
        'missing "stateBag"',
        `${shape} documents always carry "stateBag" (use the matching "-thread" shape for the older form)`,
      );
    if (!isPlainObject(doc.stateBag)) throw fail(["stateBag"], `expected an object, found ${describe(doc.stateBag)}`);
    for (const key of Object.keys(doc.stateBag)) defineOwn(bag, key, doc.stateBag[key]);
  }
  for (const key of Object.keys(doc)) {
    const value = doc[key];
    if (key === "stateBag" && layout.stateBag) continue;
    if (key === layout.idMember) {
      if (value === null) continue; // written as absent; .NET omits nulls
      if (typeof value !== "string") throw fail([key], `expected a string conversation id, found ${describe(value)}`);
      out.conversationId = value;
    } else if (
      (key === layout.storeMember || (key === "aiContextProviderState" && layout.contextProvider)) &&
      value === null
    ) {
    } else if (key === layout.storeMember) {
      const target = isHistoryOnly(value) ? historyKey : (options.storeStateKey ?? key);
      put(bag, target, value, [key], fail);
      moved.set(`/stateBag/${escapePointerSegment(target)}`, `/${escapePointerSegment(key)}`);
    } else if (key === "aiContextProviderState" && layout.contextProvider) {
      put(bag, contextKey, value, [key], fail);
      moved.set(`/stateBag/${escapePointerSegment(contextKey)}`, `/${escapePointerSegment(key)}`);
    } else if (key === SESSION_INFO_KEY && !layout.stateBag) {
      put(bag, SESSION_INFO_KEY, value, [key], fail); // statebag's metadata, written at the top level of bag-less shapes
    } else if (key === "conversationId" || key === "stateBag") {
      // A member today's document would read differently: keep it apart, verbatim.
      defineOwn(out, `statebag.${shape}.${key}`, cloneJson(value));
    } else {
      defineOwn(out, key, cloneJson(value));
    }
  }
  out.stateBag = bag;
  const sourcePointer = (pointer: string) => {
    for (const [prefix, original] of moved)
      if (pointer === prefix || pointer.startsWith(prefix + "/")) return original + pointer.slice(prefix.length);
    if (!layout.stateBag && pointer.startsWith("/stateBag/")) return pointer.slice("/stateBag".length);
    if (pointer === "/conversationId" && layout.idMember) return `/${escapePointerSegment(layout.idMember)}`;
    return pointer;
  };
  return { doc: out, sourcePointer };
}

/** Today's .NET document (as the .NET writer made it) in an older or other agent's shape. */
export function dotnetFromCurrent(
  shape: DotnetLegacyShape,
  current: JsonRecord,
  options: DotnetGenerationOptions = {},
): JsonRecord {
  const layout = LAYOUTS[shape];
  const fail = (path: (string | number)[], problem: string, hint?: string) =>
    new InteropError(shape, "export", at(path), problem, hint);
  const historyKey = options.dotnetHistoryKey ?? DOTNET_DEFAULT_HISTORY_KEY;
  const contextKey = options.contextProviderKey ?? "aiContextProviderState";
  const bag = isPlainObject(current.stateBag) ? current.stateBag : {};
  const out: JsonRecord = {};
  if (typeof current.conversationId === "string") {
    if (!layout.idMember) throw fail(["conversationId"], "this shape has no conversation id");
    defineOwn(out, layout.idMember, current.conversationId);
  }
  const rest: JsonRecord = {};
  for (const key of Object.keys(bag)) {
    const value = bag[key];
    if (layout.storeMember && (key === historyKey || key === (options.storeStateKey ?? layout.storeMember))) {
      if (Object.hasOwn(out, layout.storeMember))
        throw fail(
          ["stateBag", key],
          `two state bag entries map to ${shown(layout.storeMember)}`,
          "the older shape holds one history store's state",
        );
      defineOwn(out, layout.storeMember, value);
    } else if (layout.contextProvider && key === contextKey) {
      defineOwn(out, "aiContextProviderState", value);
    } else if (layout.stateBag) {
      defineOwn(rest, key, value);
    } else if (key === SESSION_INFO_KEY) {
      defineOwn(out, SESSION_INFO_KEY, value);
    } else {
      throw fail(
        ["stateBag", key],
        `the state under ${shown(key)} has no place in the ${shape} shape`,
        layout.contextProvider
          ? `it holds one history store and one context provider state: export to "dotnet" (today's shape) instead, or import with contextProviderKey set to this key`
          : `export to "dotnet" (today's shape) instead`,
      );
    }
  }
  if (layout.stateBag) defineOwn(out, "stateBag", rest);
  for (const key of Object.keys(current)) {
    if (key === "conversationId" || key === "stateBag") continue;
    const prefix = `statebag.${shape}.`;
    defineOwn(out, key.startsWith(prefix) ? key.slice(prefix.length) : key, current[key]);
  }
  return out;
}

function put(
  bag: JsonRecord,
  key: string,
  value: unknown,
  path: (string | number)[],
  fail: (path: (string | number)[], problem: string, hint?: string) => Error,
): void {
  if (Object.hasOwn(bag, key))
    throw fail(
      path,
      `this state and another map to the same bag key ${shown(key)}`,
      "import with another contextProviderKey / storeStateKey",
    );
  defineOwn(bag, key, value);
}

function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}
