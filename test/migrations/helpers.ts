/**
 * Shared pieces of the migration tests: golden fixtures, stored sessions as older code wrote them,
 * and a registry with a test type whose migration is deliberately not idempotent in content (it
 * adds 1), so a value migrated twice would show it.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import { defineMigration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { defaultSessionCodec } from "../../src/runtime/stores/codec.js";

export const REPO = path.resolve(fileURLToPath(new URL("../..", import.meta.url)));
export const FIXTURES = path.join(REPO, "test/fixtures");
export const SCHEMAS = path.join(REPO, "schemas");

export function fixture<T = Record<string, any>>(type: string, version: number): T {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, type, `v${version}.json`), "utf8")) as T;
}

/** `{"format":"statebag.session","formatVersion":1,"session":...}` */
export function envelope(session: unknown): string {
  return JSON.stringify({ format: "statebag.session", formatVersion: 1, session });
}

/**
 * statebag's registry plus `test.Visits`, now at v2 (`{ visits, lastPage }`); v1 was `{ count }`.
 * Its 1 -> 2 step also adds one visit: a value migrated twice would be off by one.
 */
export function testRegistry(): TypeRegistry {
  const registry = TypeRegistry.compose(defaultRegistry());
  registry.register({
    $type: "test.Visits",
    version: 2,
    schema: Type.Object({ visits: Type.Integer({ minimum: 0 }), lastPage: Type.String() }),
  });
  registry.addMigration(
    defineMigration<{ count: number; page: string }, { visits: number; lastPage: string }>({
      type: "test.Visits",
      from: 1,
      to: 2,
      up: (v) => ({ visits: v.count + 1, lastPage: v.page }),
    }),
  );
  return registry;
}

export function testCodec() {
  return defaultSessionCodec({ registry: testRegistry() });
}

/**
 * A session as the previous release stored it: chat history and rolling summary at v1 (from the
 * golden fixtures, made distinct per `n`), and a `test.Visits` v1 counter of `n`.
 */
export function v1Session(id: string, n: number): AgentSession {
  const history = fixture("InMemoryChatHistoryState", 1);
  history.messages.push({ role: "user", contents: [{ $type: "text", text: `note ${n} for ${id}` }] });
  const summary = fixture("RollingSummaryState", 1);
  summary.turns = n;
  return {
    id,
    kind: "local",
    stateBag: {
      "statebag.chatHistory": history as never,
      "statebag.rollingSummary": summary as never,
      visits: { $type: "test.Visits", count: n, page: `/p/${n}` },
    },
  };
}

/** What `v1Session(id, n)` must become after migration (exactly once). */
export function expectedV2(id: string, n: number): AgentSession {
  const old = v1Session(id, n);
  const history = old.stateBag["statebag.chatHistory"] as unknown as { messages: unknown[] };
  const summary = old.stateBag["statebag.rollingSummary"] as unknown as {
    summary: string;
    recentMessages: unknown[];
    turns: number;
  };
  return {
    id,
    kind: "local",
    stateBag: {
      "statebag.chatHistory": {
        $type: "InMemoryChatHistoryState",
        $version: 3,
        messages: history.messages,
        droppedMessageCount: 0,
        branches: [],
        branchPoints: [],
      } as never,
      "statebag.rollingSummary": {
        $type: "RollingSummaryState",
        $version: 2,
        summary: summary.summary,
        recentMessages: summary.recentMessages,
        turnCount: n,
      } as never,
      visits: { $type: "test.Visits", $version: 2, visits: n + 1, lastPage: `/p/${n}` },
    },
  };
}

/** Sorted keys at every depth: compares documents whatever order their keys were written in. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  );
}
