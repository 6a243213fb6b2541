/**
 * LangChain messages <-> statebag chat messages, on the JSON LangGraph's serializer writes for them
 * (`{"lc":1,"type":"constructor","id":[...,"messages","HumanMessage"],"kwargs":{...}}`).
 *
 * A message maps when its class is one of Human/AI/System/Tool and its content is a string: role,
 * text, tool calls, tool results, id and name become statebag fields, and every other kwarg
 * (`additional_kwargs`, `response_metadata`, `usage_metadata`, ...) rides along verbatim in
 * `additionalProperties.langchain`. A mapping is kept only when mapping back gives the very same
 * JSON, checked value by value, so nothing is ever lost: a channel that does not map as a whole is
 * kept as the serializer wrote it.
 */
import type { AIContent, ChatMessage } from "../core/messages.js";
import type { JsonValue } from "../core/tagged.js";

type Json = JsonValue;
type JsonObject = { [key: string]: Json };

const ROLE_OF: Readonly<Record<string, string>> = {
  HumanMessage: "user",
  AIMessage: "assistant",
  SystemMessage: "system",
  ToolMessage: "tool",
};
const CLASS_OF: Readonly<Record<string, string>> = {
  user: "HumanMessage",
  assistant: "AIMessage",
  system: "SystemMessage",
  tool: "ToolMessage",
};

/** What `additionalProperties.langchain` holds: the class path and the kwargs statebag has no field for. */
interface LangChainExtra {
  path: string[];
  kwargs: JsonObject;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Deep equality of JSON values (key order ignored, as it is for the revived objects). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const key of ka) if (!Object.hasOwn(b, key) || !jsonEqual(a[key], b[key])) return false;
    return true;
  }
  return false;
}

/** One serialized LangChain message as a chat message, or undefined when it has no lossless mapping. */
function toChat(value: Json): ChatMessage | undefined {
  if (!isObject(value) || value.lc !== 1 || value.type !== "constructor") return undefined;
  const path = value.id;
  if (!Array.isArray(path) || path.length < 2 || !path.every((p) => typeof p === "string")) return undefined;
  if (path[path.length - 2] !== "messages") return undefined;
  const role = ROLE_OF[path[path.length - 1] as string];
  const kwargs = value.kwargs;
  if (role === undefined || !isObject(kwargs) || typeof kwargs.content !== "string") return undefined;
  const rest: JsonObject = { ...kwargs };
  delete rest.content;
  const contents: AIContent[] = [];
  if (role === "tool") {
    if (typeof kwargs.tool_call_id !== "string") return undefined;
    contents.push({ $type: "functionResult", callId: kwargs.tool_call_id, result: kwargs.content });
    delete rest.tool_call_id;
  } else {
    contents.push({ $type: "text", text: kwargs.content });
  }
  if (role === "assistant" && Array.isArray(kwargs.tool_calls)) {
    for (const call of kwargs.tool_calls) {
      if (!isObject(call) || typeof call.id !== "string" || typeof call.name !== "string" || !isObject(call.args))
        return undefined;
      const known = new Set(["id", "name", "args", "type"]);
      if (Object.keys(call).some((k) => !known.has(k))) return undefined;
      if (call.type !== undefined && call.type !== "tool_call") return undefined;
      contents.push({ $type: "functionCall", callId: call.id, name: call.name, arguments: call.args });
    }
    // Whether each call carried `type` is kept, so the mapping back is exact.
    rest.tool_calls = kwargs.tool_calls.map((call) => ((call as JsonObject).type === undefined ? 0 : 1));
  }
  const message: ChatMessage = { role, contents };
  if (typeof kwargs.id === "string") {
    message.messageId = kwargs.id;
    delete rest.id;
  }
  if (typeof kwargs.name === "string") {
    message.authorName = kwargs.name;
    delete rest.name;
  }
  const extra: LangChainExtra = { path: path as string[], kwargs: rest };
  message.additionalProperties = { langchain: extra as unknown as Json };
  return message;
}

/** A chat message this module wrote back to the serializer's JSON. */
function fromChat(message: ChatMessage): Json | undefined {
  const extra = message.additionalProperties?.langchain as unknown as LangChainExtra | undefined;
  if (!isObject(extra) || !Array.isArray(extra.path) || !isObject(extra.kwargs)) return undefined;
  if (CLASS_OF[message.role] !== extra.path[extra.path.length - 1]) return undefined;
  const kwargs: JsonObject = { ...extra.kwargs };
  const [first, ...others] = message.contents;
  if (message.role === "tool") {
    if (first?.$type !== "functionResult") return undefined;
    kwargs.content = first.result as Json;
    kwargs.tool_call_id = first.callId;
  } else {
    if (first?.$type !== "text") return undefined;
    kwargs.content = first.text;
  }
  if (message.role === "assistant" && Array.isArray(extra.kwargs.tool_calls)) {
    const typed = extra.kwargs.tool_calls;
    if (typed.length !== others.length) return undefined;
    kwargs.tool_calls = others.map((c, i) => {
      const call = c as { callId: string; name: string; arguments?: JsonObject };
      const out: JsonObject = { id: call.callId, name: call.name, args: call.arguments ?? {} };
      if (typed[i] === 1) out.type = "tool_call";
      return out;
    });
  } else if (others.length > 0) return undefined;
  if (message.messageId !== undefined) kwargs.id = message.messageId;
  if (message.authorName !== undefined) kwargs.name = message.authorName;
  return { lc: 1, type: "constructor", id: extra.path, kwargs };
}

/**
 * A channel's serialized JSON as chat messages when it is a list of LangChain messages that all map
 * losslessly; undefined otherwise (the caller then keeps the serializer's bytes).
 */
export function channelToChatMessages(value: Json): ChatMessage[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const out: ChatMessage[] = [];
  for (const item of value) {
    const message = toChat(item);
    if (message === undefined || !jsonEqual(fromChat(message), item)) return undefined;
    out.push(message);
  }
  return out;
}

/** The serializer's JSON for chat messages `channelToChatMessages` produced (undefined: not such messages). */
export function chatMessagesToChannel(messages: readonly ChatMessage[]): Json[] | undefined {
  const out: Json[] = [];
  for (const message of messages) {
    const json = fromChat(message);
    if (json === undefined) return undefined;
    out.push(json);
  }
  return out;
}
