/**
 * LangGraph's checkpointer validation suite against the saver on the postgres store (a fresh
 * schema per group of cases, removed after it). Skipped off CI when no server runs.
 */
import { describe } from "vitest";
import { postgresBackend, serverUp } from "../stores/helpers.js";
import { validateOn } from "./validation.js";

describe.runIf(serverUp.postgres)("postgres", () => {
  validateOn(postgresBackend());
});
