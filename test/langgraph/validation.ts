/**
 * Runs LangGraph's published checkpointer validation suite (`@langchain/langgraph-checkpoint-validation`,
 * unmodified) against `createStatebagSaver` on one statebag backend. The suite is written for vitest
 * with globals on; the only adaptation is handing it vitest's functions as globals, for the files
 * that run it (the rest of the test suite keeps explicit imports).
 */
import * as vitest from "vitest";
import { createStatebagSaver } from "../../src/langgraph.js";
import type { OpenStoreOptions } from "../../src/runtime/open-store/open-store.js";
import { type Backend, freshStore } from "../stores/helpers.js";

const { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } = vitest;
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test });

const { validate } = await import("@langchain/langgraph-checkpoint-validation");

/**
 * Registers the validation suite for `backend`. One fresh store location per backend (removed after
 * the suite); each group of cases gets its own saver on it with its own id prefix, so groups see
 * nothing of each other (a listing without a thread id walks only its prefix) without paying for a
 * new schema, key space or cluster connection per group.
 */
export function validateOn(backend: Backend, options?: { label: string; open: OpenStoreOptions }): void {
  let fresh: Awaited<ReturnType<typeof freshStore>> | undefined;
  let groups = 0;
  validate({
    // Not "MemorySaver": the suite skips a case for that name; the saver must pass every case.
    checkpointerName: `StatebagSaver(${backend.name}${options ? `, ${options.label}` : ""})`,
    async beforeAll() {
      fresh = await freshStore(backend, options?.open);
    },
    beforeAllTimeout: 60_000,
    async afterAll() {
      await fresh?.done();
    },
    async createCheckpointer() {
      if (fresh === undefined) throw new Error("the store was not opened (beforeAll failed)");
      // The structural StatebagSaver type is accepted where LangGraph's class is asked for.
      return createStatebagSaver(fresh.store, { idPrefix: `group${++groups}:` });
    },
  });
}
