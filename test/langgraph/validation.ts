/**
 * Runs LangGraph's published checkpointer validation suite (`@langchain/langgraph-checkpoint-validation`,
 * unmodified) against `createStatebagSaver` on one statebag backend. The suite is written for vitest
 * with globals on; the only adaptation is handing it vitest's functions as globals, for the files
 * that run it (the rest of the test suite keeps explicit imports).
 */
import * as vitest from "vitest";
import { createStatebagSaver, type StatebagSaver } from "../../src/langgraph.js";
import type { OpenStoreOptions } from "../../src/runtime/stores/open.js";
import { type Backend, freshStore } from "../stores/helpers.js";

const { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } = vitest;
Object.assign(globalThis, { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test });

const { validate } = await import("@langchain/langgraph-checkpoint-validation");

/** Registers the validation suite for `backend`: each of its groups gets a saver on a fresh, empty store location. */
export function validateOn(backend: Backend, options?: { label: string; open: OpenStoreOptions }): void {
  const done = new Map<StatebagSaver, () => Promise<void>>();
  validate({
    // Not "MemorySaver": the suite skips a case for that name; the saver must pass every case.
    checkpointerName: `StatebagSaver(${backend.name}${options ? `, ${options.label}` : ""})`,
    async createCheckpointer() {
      const fresh = await freshStore(backend, options?.open);
      const saver = await createStatebagSaver(fresh.store);
      done.set(saver, fresh.done);
      // The structural StatebagSaver type is accepted where LangGraph's class is asked for.
      return saver;
    },
    async destroyCheckpointer(saver) {
      const close = done.get(saver as StatebagSaver);
      done.delete(saver as StatebagSaver);
      await close?.();
    },
  });
}
