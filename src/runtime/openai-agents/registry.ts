/**
 * The two `$type`s `statebag/openai-agents` writes, for stores that load strictly. A default
 * (non-strict) store keeps values of unregistered types verbatim, so nothing is needed there; a
 * strict store refuses them until they are registered:
 * `registerOpenAIAgentsTypes(registry)` on the registry the store's codec uses.
 */
import type { TypeRegistry } from "../registry/registry.js";
import { OPENAI_AGENTS_ITEM_TYPE } from "./items.js";
import { OPENAI_AGENTS_RUN_STATE_TYPE } from "./session.js";

/** Registers the item content (`AIContent` family) and the kept run state (`ProviderState`). */
export function registerOpenAIAgentsTypes(registry: TypeRegistry): void {
  registry.register({
    $type: OPENAI_AGENTS_ITEM_TYPE,
    family: "AIContent",
    version: 1,
    name: "OpenAIAgentsItemContent",
    schema: {
      type: "object",
      properties: { item: { type: "object" } },
      required: ["item"],
    },
  });
  registry.register({
    $type: OPENAI_AGENTS_RUN_STATE_TYPE,
    version: 1,
    name: "OpenAIAgentsRunState",
    schema: {
      type: "object",
      properties: { state: { type: "string", minLength: 1 }, savedAt: { type: "string" } },
      required: ["state", "savedAt"],
    },
  });
}
