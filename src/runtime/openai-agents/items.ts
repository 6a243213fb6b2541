/**
 * Agents SDK items <-> statebag chat messages, exact in both directions.
 *
 * An item becomes one `ChatMessage`. The kinds statebag has fields for map onto them: a user,
 * assistant or system message's text (a string, or parts that carry `text`) becomes text contents,
 * a `function_call` a `functionCall` content, a `function_call_result` a `functionResult` content
 * (role `tool`). Whatever such an item carries that statebag has no field for (`type`, `status`,
 * `providerData`, a part's `type`, arguments text that is not canonical JSON) rides along in the
 * message's or content's `additionalProperties`, so the same item comes back. Every other item
 * (reasoning, hosted and computer tool calls, refusals, images, compaction markers, future kinds)
 * is kept verbatim as one tagged content `{ "$type": "openai-agents.item", "item": {...} }`.
 *
 * Exactness is checked, not assumed: `itemToMessage` maps the item, maps the message back, and
 * keeps the item verbatim unless that gives the same JSON. What cannot be stored as JSON
 * (a `Uint8Array`, a function, `NaN`) is refused with a typed error before anything is written.
 */
import { StatebagError } from "../core/errors.js";
import { describeValue, jsonEqual, jsonPointer } from "../core/json.js";
import type { AdditionalProperties, AIContent, ChatMessage } from "../core/messages.js";
import type { JsonValue } from "../core/tagged.js";
import type { AgentItem } from "./types.js";

/** The `$type` of a content holding an item statebag has no fields for, exactly as the SDK gave it. */
export const OPENAI_AGENTS_ITEM_TYPE = "openai-agents.item";

/** `additionalProperties` keys this mapping writes (namespaced, so they never meet an app's keys). */
const FORM = "openaiAgents.form";
const EXTRA = "openaiAgents.extra";
const PART = "openaiAgents.part";
const RAW_ARGUMENTS = "openaiAgents.arguments";

/** A content keeping one Agents SDK item verbatim. */
export interface OpenAIAgentsItemContent {
  $type: typeof OPENAI_AGENTS_ITEM_TYPE;
  $version?: 1;
  item: { [key: string]: JsonValue };
}

/** An item holds a value JSON cannot carry, so storing it would change it. Nothing was written. */
export class OpenAIAgentsItemError extends StatebagError {
  constructor(
    /** JSON pointer of the value, from the item list given. */
    readonly pointer: string,
    what: string,
  ) {
    super("json-value", `Agents SDK item value at ${pointer} cannot be stored: ${what}; nothing was saved`, {
      hint: "store binary data as base64 text (or a file id / URL) in the item, as the Responses API accepts it",
    });
  }
}

/** A JSON copy of `value` (undefined members dropped as JSON does), or a typed error naming the first non-JSON value. */
export function jsonCopy(value: unknown, path: (string | number)[] = []): JsonValue {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    throw new OpenAIAgentsItemError(jsonPointer(path), `the number ${String(value)} has no JSON form`);
  }
  if (Array.isArray(value)) {
    return value.map((v, i) => {
      if (v === undefined) throw new OpenAIAgentsItemError(jsonPointer([...path, i]), "undefined in an array");
      return jsonCopy(v, [...path, i]);
    });
  }
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new OpenAIAgentsItemError(
        jsonPointer(path),
        `a ${proto?.constructor?.name ?? "non-plain"} object is not JSON`,
      );
    }
    const out: { [key: string]: JsonValue } = {};
    for (const [key, field] of Object.entries(value)) {
      if (field === undefined) continue;
      Object.defineProperty(out, key, {
        value: jsonCopy(field, [...path, key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  throw new OpenAIAgentsItemError(jsonPointer(path), `${describeValue(value)} (${typeof value}) is not JSON`);
}

type JsonObject = { [key: string]: JsonValue };

function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function without(item: JsonObject, keys: readonly string[]): JsonObject {
  const rest: JsonObject = {};
  for (const [key, value] of Object.entries(item)) if (!keys.includes(key)) rest[key] = value;
  return rest;
}

function withProps(props: AdditionalProperties): { additionalProperties?: AdditionalProperties } {
  return Object.keys(props).length === 0 ? {} : { additionalProperties: props };
}

/** The statebag form of a message item, when its content is text only. */
function mapMessage(item: JsonObject): ChatMessage | undefined {
  const role = item.role;
  if (role !== "user" && role !== "assistant" && role !== "system") return undefined;
  if (item.type !== undefined && item.type !== "message") return undefined;
  let contents: AIContent[];
  let form: string;
  if (typeof item.content === "string") {
    contents = [{ $type: "text", text: item.content }];
    form = "text";
  } else if (Array.isArray(item.content)) {
    contents = [];
    for (const part of item.content) {
      if (!isObject(part) || typeof part.text !== "string") return undefined;
      contents.push({ $type: "text", text: part.text, additionalProperties: { [PART]: without(part, ["text"]) } });
    }
    form = "parts";
  } else {
    return undefined;
  }
  const mapped = ["role", "content"];
  const message: ChatMessage = { role, contents };
  if (typeof item.id === "string") {
    message.messageId = item.id;
    mapped.push("id");
  }
  const extra = without(item, mapped);
  return {
    ...message,
    additionalProperties: { [FORM]: form, ...(Object.keys(extra).length ? { [EXTRA]: extra } : {}) },
  };
}

function mapFunctionCall(item: JsonObject): ChatMessage | undefined {
  if (typeof item.callId !== "string" || typeof item.name !== "string" || typeof item.arguments !== "string") {
    return undefined;
  }
  const props: AdditionalProperties = {};
  let args: JsonObject | undefined;
  try {
    const parsed: unknown = JSON.parse(item.arguments);
    if (isObject(parsed)) args = parsed;
  } catch {
    // Not JSON: kept as text below.
  }
  if (args === undefined || JSON.stringify(args) !== item.arguments) props[RAW_ARGUMENTS] = item.arguments;
  const content: AIContent = {
    $type: "functionCall",
    callId: item.callId,
    name: item.name,
    ...(args === undefined ? {} : { arguments: args }),
    ...withProps(props),
  };
  const extra = without(item, ["type", "callId", "name", "arguments"]);
  return {
    role: "assistant",
    contents: [content],
    additionalProperties: { [FORM]: "function_call", ...(Object.keys(extra).length ? { [EXTRA]: extra } : {}) },
  };
}

function mapFunctionResult(item: JsonObject): ChatMessage | undefined {
  if (typeof item.callId !== "string" || item.output === undefined) return undefined;
  const extra = without(item, ["type", "callId", "output"]);
  return {
    role: "tool",
    contents: [{ $type: "functionResult", callId: item.callId, result: item.output }],
    additionalProperties: { [FORM]: "function_call_result", ...(Object.keys(extra).length ? { [EXTRA]: extra } : {}) },
  };
}

function verbatim(item: JsonObject): ChatMessage {
  const type = typeof item.type === "string" ? item.type : "";
  const role = typeof item.role === "string" ? item.role : /_(result|output)$/.test(type) ? "tool" : "assistant";
  const content: OpenAIAgentsItemContent = { $type: OPENAI_AGENTS_ITEM_TYPE, item };
  return { role, contents: [content as unknown as AIContent] };
}

/** The message an item is stored as (see the module comment). `index` places errors in the list given. */
export function itemToMessage(item: AgentItem, index = 0): ChatMessage {
  const json = jsonCopy(item, [index]);
  if (!isObject(json))
    throw new OpenAIAgentsItemError(jsonPointer([index]), `${describeValue(json)} is not an item object`);
  const mapped =
    json.type === "function_call"
      ? mapFunctionCall(json)
      : json.type === "function_call_result"
        ? mapFunctionResult(json)
        : mapMessage(json);
  if (mapped !== undefined) {
    const back = messageToItems(mapped);
    if (back.length === 1 && jsonEqual(back[0], json)) return mapped;
  }
  return verbatim(json);
}

/** True when `message` keeps an item verbatim (a statebag field would have lost part of it). */
export function isVerbatimItemMessage(message: ChatMessage): boolean {
  return (
    message.contents.length === 1 && (message.contents[0]?.$type as string | undefined) === OPENAI_AGENTS_ITEM_TYPE
  );
}

function textOf(contents: readonly AIContent[]): string {
  return contents.map((c) => (c.$type === "text" || c.$type === "reasoning" ? (c.text ?? "") : "")).join("");
}

/**
 * The items a stored message stands for: exactly the item it was made from when this module wrote
 * it, and for any other statebag message (written by a statebag agent, imported) the nearest
 * items: text as a message item, each function call and result as its own item.
 */
export function messageToItems(message: ChatMessage): AgentItem[] {
  if (isVerbatimItemMessage(message)) {
    return [structuredClone((message.contents[0] as unknown as OpenAIAgentsItemContent).item)];
  }
  const props = message.additionalProperties ?? {};
  const form = props[FORM];
  const extra = isObject(props[EXTRA]) ? (props[EXTRA] as JsonObject) : {};
  const first = message.contents[0];
  if (form === "text") {
    return [{ ...structuredClone(extra), role: message.role, content: textOf(message.contents), ...idOf(message) }];
  }
  if (form === "parts") {
    const content = message.contents.map((c) => {
      const part = isObject(c.additionalProperties?.[PART]) ? (c.additionalProperties[PART] as JsonObject) : {};
      return { ...structuredClone(part), text: c.$type === "text" ? c.text : "" };
    });
    return [{ ...structuredClone(extra), role: message.role, content, ...idOf(message) }];
  }
  if (form === "function_call" && first?.$type === "functionCall") {
    const raw = first.additionalProperties?.[RAW_ARGUMENTS];
    return [
      {
        ...structuredClone(extra),
        type: "function_call",
        callId: first.callId,
        name: first.name,
        arguments: typeof raw === "string" ? raw : JSON.stringify(first.arguments ?? {}),
      },
    ];
  }
  if (form === "function_call_result" && first?.$type === "functionResult") {
    return [
      {
        ...structuredClone(extra),
        type: "function_call_result",
        callId: first.callId,
        output: structuredClone(first.result ?? null),
      },
    ];
  }
  return nearestItems(message);
}

function idOf(message: ChatMessage): { id?: string } {
  return message.messageId === undefined ? {} : { id: message.messageId };
}

/** A statebag message this module did not write, as the items an Agents SDK run reads best. */
function nearestItems(message: ChatMessage): AgentItem[] {
  const items: AgentItem[] = [];
  const text = textOf(message.contents.filter((c) => c.$type === "text"));
  if (text !== "" || message.contents.length === 0) {
    if (message.role === "assistant") {
      items.push({
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text }],
        ...idOf(message),
      });
    } else {
      items.push({
        type: "message",
        role: message.role === "system" ? "system" : "user",
        content: text,
        ...idOf(message),
      });
    }
  }
  for (const content of message.contents) {
    if (content.$type === "functionCall") {
      items.push({
        type: "function_call",
        callId: content.callId,
        name: content.name,
        arguments: JSON.stringify(content.arguments ?? {}),
      });
    } else if (content.$type === "functionResult") {
      // The SDK's result item names its function; a statebag result does not, so the call's name is looked up by the caller.
      items.push({
        type: "function_call_result",
        callId: content.callId,
        name: "",
        status: "completed",
        output: resultText(content.result),
      });
    } else if ((content.$type as string) === OPENAI_AGENTS_ITEM_TYPE) {
      items.push(structuredClone((content as unknown as OpenAIAgentsItemContent).item));
    }
  }
  return items;
}

function resultText(result: JsonValue | undefined): string {
  return typeof result === "string" ? result : JSON.stringify(result ?? null);
}

/**
 * Items of a whole history. A function result statebag stored without its function's name (a
 * message this module did not write) gets the name of its call.
 */
export function messagesToItems(messages: readonly ChatMessage[]): AgentItem[] {
  const names = new Map<string, string>();
  const out: AgentItem[] = [];
  for (const message of messages) {
    const exact = isVerbatimItemMessage(message) || message.additionalProperties?.[FORM] !== undefined;
    for (const item of messageToItems(message)) {
      if (item.type === "function_call" && typeof item.callId === "string") names.set(item.callId, item.name);
      else if (!exact && item.type === "function_call_result" && item.name === "")
        item.name = names.get(item.callId) ?? "";
      out.push(item);
    }
  }
  return out;
}
