/**
 * A LangGraph thread, as LangGraph's own SQLite/PostgreSQL savers stored it, into a statebag chat
 * session, with an account of what had no statebag field and how it was kept.
 *
 * Works on the serializer's JSON (LangGraph's `JsonPlusSerializer` writes LangChain messages as
 * `{"lc":1,"type":"constructor","id":[...],"kwargs":{...}}`), so it needs no LangGraph package. The
 * latest checkpoint of the root namespace gives the conversation: its `messages` channel becomes the
 * session's history; its other channels and its metadata are kept verbatim in the state bag under
 * `langgraph.import`; older checkpoints, pending writes and subgraph namespaces stay in the source
 * tables and are counted in the report.
 */
import type { AIContent, ChatMessage } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { JsonValue } from "../core/tagged.js";
import { channelToChatMessages } from "./messages.js";

/** The state bag key the import keeps the latest checkpoint's other channels and metadata under. */
export const LANGGRAPH_IMPORT_KEY = "langgraph.import";
export const LANGGRAPH_IMPORT_TYPE = "statebag.LangGraphImport";
export const DEFAULT_IMPORT_HISTORY_KEY = "statebag.chatHistory";

/** One thread as read from the source tables. */
export interface SourceThread {
  threadId: string;
  checkpointId: string;
  /** Channel name -> the value as the serializer wrote it (`type` "json": its JSON text, parsed). */
  channels: { channel: string; type: string; json?: JsonValue; base64?: string }[];
  /** The checkpoint's metadata, as JSON. */
  metadata?: JsonValue;
  /** How many checkpoints the thread has in all namespaces (the imported one included). */
  checkpoints: number;
  /** The namespaces other than the root one (subgraphs). */
  namespaces: number;
  /** Pending writes stored against the imported checkpoint. */
  pendingWrites: number;
}

/** One line of the loss report: what had no statebag field, how often, and how it was kept. */
export interface ImportLoss {
  what: string;
  count: number;
  kept: string;
}

export interface ConvertedThread {
  session: AgentSession;
  messages: number;
  /** The thread's owner, when its checkpoint metadata names one (a string `owner`). */
  owner?: string;
  losses: ImportLoss[];
}

const ROLE_OF: Readonly<Record<string, string>> = {
  HumanMessage: "user",
  HumanMessageChunk: "user",
  AIMessage: "assistant",
  AIMessageChunk: "assistant",
  SystemMessage: "system",
  SystemMessageChunk: "system",
  ToolMessage: "tool",
  ToolMessageChunk: "tool",
  FunctionMessage: "tool",
};

type JsonObject = { [key: string]: JsonValue };
const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

class Losses {
  readonly byWhat = new Map<string, ImportLoss>();
  add(what: string, kept: string, count = 1): void {
    const found = this.byWhat.get(what);
    if (found) found.count += count;
    else this.byWhat.set(what, { what, count, kept });
  }
}

const KEPT_KWARGS = "additionalProperties.langchain.kwargs of the message";

/**
 * One serialized LangChain message as a chat message: the exact mapping when there is one, else
 * its text, tool calls and results as statebag contents and the whole of its kwargs kept verbatim.
 */
function convertMessage(value: JsonValue, losses: Losses): ChatMessage | undefined {
  const exact = channelToChatMessages([value]);
  if (exact !== undefined) {
    const kwargs = (exact[0].additionalProperties?.langchain as JsonObject | undefined)?.kwargs;
    if (isObject(kwargs))
      for (const [key, argument] of Object.entries(kwargs))
        if (!isEmpty(argument)) losses.add(`message field ${key}`, KEPT_KWARGS.replace(".kwargs", `.kwargs.${key}`));
    return exact[0];
  }
  if (!isObject(value) || !Array.isArray(value.id) || !isObject(value.kwargs)) {
    losses.add(
      "a messages entry that is not a serialized LangChain message",
      "not imported (it stays in the source tables)",
    );
    return undefined;
  }
  const cls = String(value.id[value.id.length - 1]);
  const kwargs = value.kwargs;
  const role = cls === "ChatMessage" && typeof kwargs.role === "string" ? kwargs.role : ROLE_OF[cls];
  if (role === undefined) {
    losses.add(`message of class ${cls}`, "not imported (no chat message form; it stays in the source tables)");
    return undefined;
  }
  const contents: AIContent[] = [];
  const content = kwargs.content;
  if (role === "tool" && typeof kwargs.tool_call_id === "string")
    contents.push({ $type: "functionResult", callId: kwargs.tool_call_id, result: content ?? null });
  else if (typeof content === "string") contents.push({ $type: "text", text: content });
  else if (Array.isArray(content)) {
    for (const block of content) {
      if (typeof block === "string") contents.push({ $type: "text", text: block });
      else if (isObject(block) && block.type === "text" && typeof block.text === "string")
        contents.push({ $type: "text", text: block.text });
      else
        losses.add(
          `content block of type ${isObject(block) ? String(block.type) : typeof block}`,
          `${KEPT_KWARGS}.content`,
        );
    }
  }
  if (Array.isArray(kwargs.tool_calls))
    for (const call of kwargs.tool_calls)
      if (isObject(call) && typeof call.id === "string" && typeof call.name === "string")
        contents.push({
          $type: "functionCall",
          callId: call.id,
          name: call.name,
          ...(isObject(call.args) ? { arguments: call.args } : {}),
        });
  if (cls !== "HumanMessage" && cls !== "AIMessage" && cls !== "SystemMessage" && cls !== "ToolMessage")
    losses.add(`message class ${cls}`, "additionalProperties.langchain.path of the message");
  const message: ChatMessage = { role, contents };
  if (typeof kwargs.id === "string") message.messageId = kwargs.id;
  if (typeof kwargs.name === "string") message.authorName = kwargs.name;
  message.additionalProperties = { langchain: { path: value.id, kwargs } };
  return message;
}

function isEmpty(v: JsonValue): boolean {
  return v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

/** The statebag session for one thread (id `id`), and its losses. */
export function convertThread(thread: SourceThread, options: { id: string; historyKey?: string }): ConvertedThread {
  const losses = new Losses();
  const messages: ChatMessage[] = [];
  const others: { channel: string; type: string; json?: JsonValue; base64?: string }[] = [];
  for (const ch of thread.channels) {
    if (ch.channel === "messages" && ch.type === "json" && Array.isArray(ch.json)) {
      for (const item of ch.json) {
        const message = convertMessage(item, losses);
        if (message !== undefined) messages.push(message);
      }
    } else {
      others.push(ch);
      losses.add(`channel ${ch.channel}`, `verbatim in stateBag["${LANGGRAPH_IMPORT_KEY}"].channels`);
    }
  }
  const history = options.historyKey ?? DEFAULT_IMPORT_HISTORY_KEY;
  const session: AgentSession = {
    id: options.id,
    kind: "local",
    stateBag: {
      [history]: {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages,
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      } as never,
    },
  };
  const kept: JsonObject = {
    $type: LANGGRAPH_IMPORT_TYPE,
    $version: 1,
    threadId: thread.threadId,
    checkpointId: thread.checkpointId,
    channels: others as unknown as JsonValue,
  };
  if (thread.metadata !== undefined) {
    kept.metadata = thread.metadata;
    losses.add("checkpoint metadata", `verbatim in stateBag["${LANGGRAPH_IMPORT_KEY}"].metadata`);
  }
  session.stateBag[LANGGRAPH_IMPORT_KEY] = kept as never;
  if (thread.checkpoints > 1)
    losses.add(
      "older checkpoints",
      "not imported (history of the thread; it stays in the source tables)",
      thread.checkpoints - 1,
    );
  if (thread.namespaces > 0)
    losses.add("subgraph namespaces", "not imported (their checkpoints stay in the source tables)", thread.namespaces);
  if (thread.pendingWrites > 0)
    losses.add(
      "pending writes of the latest checkpoint",
      "not imported (they stay in the source tables)",
      thread.pendingWrites,
    );
  const owner =
    isObject(thread.metadata) && typeof thread.metadata.owner === "string" && thread.metadata.owner !== ""
      ? thread.metadata.owner
      : undefined;
  return {
    session,
    messages: messages.length,
    ...(owner !== undefined ? { owner } : {}),
    losses: [...losses.byWhat.values()],
  };
}
