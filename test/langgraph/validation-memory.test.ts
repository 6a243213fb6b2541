/**
 * LangGraph's checkpointer validation suite against the saver on the memory and SQLite stores
 * (both drivers' file format is the same; the default node:sqlite driver runs it), and on a strict
 * store whose registry has the saver's types (registerLangGraphTypes): every value the suite writes
 * validates against them.
 */
import { registerLangGraphTypes } from "../../src/langgraph.js";
import { defaultRegistry, TypeRegistry } from "../../src/index.js";
import { defaultSessionCodec } from "../../src/stores.js";
import { memoryBackend, sqliteBackend } from "../stores/helpers.js";
import { validateOn } from "./validation.js";

validateOn(memoryBackend);
validateOn(sqliteBackend);

const registry = TypeRegistry.compose(defaultRegistry());
registerLangGraphTypes(registry);
validateOn(memoryBackend, {
  label: "strict, types registered",
  open: { codec: defaultSessionCodec({ strict: true, registry }) },
});
