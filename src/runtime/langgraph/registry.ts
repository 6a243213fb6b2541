/**
 * The two `$type`s `statebag/langgraph` writes, for stores that load strictly. A default
 * (non-strict) store keeps values of unregistered types verbatim, so nothing is needed there; a
 * strict store refuses them until they are registered: `registerLangGraphTypes(registry)` on the
 * registry the store's codec uses. Registered, a thread is validated on every save and load, down
 * to each chat message's contents (the `AIContent` family, through slots), and migrates with them.
 */
import type { TypeRegistry } from "../registry/registry.js";
import { LANGGRAPH_THREAD_TYPE } from "./document.js";
import { LANGGRAPH_IMPORT_TYPE } from "./import.js";

const chatMessage = {
  type: "object",
  properties: {
    role: { type: "string" },
    contents: { type: "array", items: {} },
    messageId: { type: "string" },
    authorName: { type: "string" },
    createdAt: { type: "string" },
    additionalProperties: { type: "object" },
  },
  required: ["role", "contents"],
};

const storedValue = {
  type: "object",
  properties: {
    serde: { type: "string" },
    text: { type: "string" },
    base64: { type: "string" },
    messages: { type: "array", items: chatMessage },
  },
  required: ["serde"],
};

/** Registers `statebag.LangGraphThread` (the saver's threads) and `statebag.LangGraphImport` (what an import kept). */
export function registerLangGraphTypes(registry: TypeRegistry): void {
  registry.register({
    $type: LANGGRAPH_THREAD_TYPE,
    version: 1,
    name: "LangGraphThread",
    schema: {
      type: "object",
      properties: {
        threadId: { type: "string" },
        namespaces: {
          type: "array",
          items: {
            type: "object",
            properties: {
              ns: { type: "string" },
              checkpoints: {
                type: "array",
                items: {
                  type: "object",
                  properties: {
                    id: { type: "string" },
                    checkpoint: storedValue,
                    metadata: storedValue,
                    parent: { type: "string" },
                  },
                  required: ["id", "checkpoint", "metadata"],
                },
              },
              blobs: {
                type: "array",
                items: {
                  type: "object",
                  properties: { channel: { type: "string" }, version: { type: "string" }, value: storedValue },
                  required: ["channel", "version"],
                },
              },
              writes: {
                type: "array",
                items: {
                  type: "object",
                  properties: {
                    checkpoint: { type: "string" },
                    task: { type: "string" },
                    idx: { type: "integer" },
                    channel: { type: "string" },
                    value: storedValue,
                    path: { type: "string" },
                  },
                  required: ["checkpoint", "task", "idx", "channel", "value", "path"],
                },
              },
            },
            required: ["ns", "checkpoints", "blobs", "writes"],
          },
        },
      },
      required: ["threadId", "namespaces"],
    },
    slots: [
      { path: ["namespaces", "*", "blobs", "*", "value", "messages", "*", "contents", "*"], family: "AIContent" },
      { path: ["namespaces", "*", "writes", "*", "value", "messages", "*", "contents", "*"], family: "AIContent" },
    ],
  });
  registry.register({
    $type: LANGGRAPH_IMPORT_TYPE,
    version: 1,
    name: "LangGraphImport",
    schema: {
      type: "object",
      properties: {
        threadId: { type: "string" },
        checkpointId: { type: "string" },
        channels: {
          type: "array",
          items: {
            type: "object",
            properties: { channel: { type: "string" }, type: { type: "string" }, json: {}, base64: { type: "string" } },
            required: ["channel", "type"],
          },
        },
        metadata: {},
      },
      required: ["threadId", "checkpointId", "channels"],
    },
  });
}
