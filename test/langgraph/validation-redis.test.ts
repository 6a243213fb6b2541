/**
 * LangGraph's checkpointer validation suite against the saver on the redis store (a fresh
 * key prefix per group of cases, removed after it). Skipped off CI when no server runs.
 */
import { describe } from "vitest";
import { redisBackend, serverUp } from "../stores/helpers.js";
import { validateOn } from "./validation.js";

describe.runIf(serverUp.redis)("redis", () => {
  validateOn(redisBackend());
});
