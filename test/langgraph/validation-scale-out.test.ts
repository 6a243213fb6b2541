/**
 * LangGraph's checkpointer validation suite against the saver on the servers the tests start
 * themselves: a three-node Redis Cluster and PostgreSQL behind PgBouncer (transaction pooling).
 */
import { describe } from "vitest";
import { available, pgBouncerBackend, redisClusterBackend } from "../stores/helpers.js";
import { validateOn } from "./validation.js";

for (const backend of [redisClusterBackend, pgBouncerBackend])
  describe.runIf(available(backend))(backend.name, () => {
    validateOn(backend);
  });
