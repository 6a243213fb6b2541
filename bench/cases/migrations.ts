/**
 * migrate.lazy5.1000: loading a session whose history state was written five versions ago.
 *
 * A bench-only provider state, `bench.History`, holds the session's 1,000 messages (same slots as
 * the built-in history: every content is validated). Its latest version is 6; the stored document
 * is at version 1, so loading runs five migration steps, each of which rewrites every message
 * (renames, a type change, defaults), then validates the result. The baseline is loading the same
 * session already stored at version 6 with the same registry: the ratio is the cost of the lazy
 * migration on top of an ordinary load.
 */
import { defineMigration } from "../../src/runtime/migrations.js";
import { defaultRegistry, TypeRegistry } from "../../src/runtime/registry.js";
import { deserializeSession, serializeSession } from "../../src/runtime/serialization.js";
import type { AgentSession } from "../../src/runtime/session.js";
import { compare, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";

type Msg = Record<string, unknown>;
const each = (v: { [k: string]: unknown }, key: string, f: (m: Msg) => Msg) => ({ ...v, [key]: (v[key] as Msg[]).map(f) });

/** v1 -> v6, one rewrite of every message per step. */
const steps = [
  // 1 -> 2: the list was called "items".
  defineMigration({ type: "bench.History", from: 1, to: 2, up: ({ items, ...rest }) => ({ ...rest, messages: items }) }),
  // 2 -> 3: "author" became "authorName".
  defineMigration({ type: "bench.History", from: 2, to: 3, up: (v) => each(v, "messages", ({ author, ...m }) => (author === undefined ? m : { ...m, authorName: author })) }),
  // 3 -> 4: "time" (epoch ms) became "createdAt" (ISO-8601).
  defineMigration({ type: "bench.History", from: 3, to: 4, up: (v) => each(v, "messages", ({ time, ...m }) => (time === undefined ? m : { ...m, createdAt: new Date(time as number).toISOString() })) }),
  // 4 -> 5: "contents" became required.
  defineMigration({ type: "bench.History", from: 4, to: 5, up: (v) => each(v, "messages", (m) => ({ ...m, contents: m.contents ?? [] })) }),
  // 5 -> 6: "id" became "messageId".
  defineMigration({ type: "bench.History", from: 5, to: 6, up: (v) => each(v, "messages", ({ id, ...m }) => (id === undefined ? m : { ...m, messageId: id })) }),
];

function registry(): TypeRegistry {
  const reg = TypeRegistry.compose(defaultRegistry());
  // The message schema is the built-in history's (same validation work as load.1000).
  const history = defaultRegistry().get("InMemoryChatHistoryState")!.schema as { properties: { messages: object } };
  reg.register({
    $type: "bench.History",
    version: 6,
    schema: { type: "object", properties: { messages: history.properties.messages }, required: ["messages"] },
    slots: [{ path: ["messages", "*", "contents", "*"], family: "AIContent" }],
    open: true,
  });
  reg.addMigration(...steps);
  return reg;
}

/** The same session at version 6 (current) and as version 1 would have stored it. */
function documents(): { current: string; old: string } {
  const base = makeSession({ messages: 1000 });
  const messages = (base.stateBag[HISTORY_KEY] as unknown as { messages: Msg[] }).messages;
  const current: AgentSession = { ...base, stateBag: { history: { $type: "bench.History", $version: 6, messages: messages as never } } };
  const v1 = messages.map(({ authorName, createdAt, messageId, ...m }) => ({
    ...m,
    ...(authorName !== undefined ? { author: authorName } : {}),
    ...(createdAt !== undefined ? { time: Date.parse(createdAt as string) } : {}),
    ...(messageId !== undefined ? { id: messageId } : {}),
  }));
  const old = { ...base, stateBag: { history: { $type: "bench.History", items: v1 } } };
  return { current: JSON.stringify({ format: "statebag.session", formatVersion: 1, session: current }), old: JSON.stringify({ format: "statebag.session", formatVersion: 1, session: old }) };
}

export async function migrationCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const reg = registry();
  const { current, old } = documents();
  // The migrated document must equal the current one (up to timestamp formatting), or the bench is wrong.
  const migrated = deserializeSession(old, { registry: reg, strict: true });
  const expected = deserializeSession(current, { registry: reg, strict: true });
  const norm = (s: AgentSession) =>
    JSON.stringify(s, (k, v) =>
      k === "createdAt" ? new Date(v).getTime() : v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v,
    );
  if (norm(migrated) !== norm(expected)) throw new Error("migrate.lazy5: the migrated session differs from the current one");
  serializeSession(migrated, { registry: reg });
  ctx.log("migrate.lazy5.1000");
  return [result("migrate.lazy5.1000", "load.1000 (no migration)", await compare(() => deserializeSession(old, { registry: reg }), () => deserializeSession(current, { registry: reg }), ctx.fast))];
}
