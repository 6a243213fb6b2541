/**
 * LangGraph's checkpointer validation suite against the saver on the memory and SQLite stores
 * (both drivers' file format is the same; the default node:sqlite driver runs it).
 */
import { memoryBackend, sqliteBackend } from "../stores/helpers.js";
import { validateOn } from "./validation.js";

validateOn(memoryBackend);
validateOn(sqliteBackend);
