/**
 * Loading a session whose history state was written five versions ago, two ways:
 *
 * - `migrate.lazy5.1000`: five steps that evolve the state itself (renames, new fields with
 *   defaults, a restructured counter), as provider states usually evolve (see the built-in
 *   history's v1 -> v2). This measures what statebag's migration machinery adds to a load.
 * - `migrate.lazy5rewrite.1000`: five steps of which four rewrite every one of the 1,000 messages
 *   (renames inside messages, epoch ms -> ISO-8601). Most of that time is the steps' own work, a
 *   full pass over the data each; shown so the cost of such migrations is known.
 *
 * A bench-only provider state, `bench.History`, holds the session's 1,000 messages (same slots as
 * the built-in history: every content is validated). Its latest version is 6; the stored document
 * is at version 1. The baseline is loading the same session already stored at version 6 with the
 * same registry: the ratio is the cost of the lazy migration on top of an ordinary load.
 */
import { defineMigration } from "../../src/runtime/registry/migrations.js";
import { TypeRegistry } from "../../src/runtime/registry/registry.js";
import { defaultRegistry } from "../../src/runtime/validation/default-registry.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { compare, result, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";

type Msg = Record<string, unknown>;
const each = (v: { [k: string]: unknown }, key: string, f: (m: Msg) => Msg) => ({
  ...v,
  [key]: (v[key] as Msg[]).map(f),
});

/** v1 -> v6, state-level steps (the message list is carried over untouched). */
const stateSteps = [
  // 1 -> 2: the list was called "items".
  defineMigration({
    type: "bench.History",
    from: 1,
    to: 2,
    up: ({ items, ...rest }) => ({ ...rest, messages: items }),
  }),
  // 2 -> 3: a reducer counter was added.
  defineMigration({ type: "bench.History", from: 2, to: 3, up: (v) => ({ ...v, droppedMessageCount: 0 }) }),
  // 3 -> 4: "title" was renamed "label".
  defineMigration({
    type: "bench.History",
    from: 3,
    to: 4,
    up: ({ title, ...rest }) => ({ ...rest, label: title ?? "" }),
  }),
  // 4 -> 5: the counter became an object.
  defineMigration({
    type: "bench.History",
    from: 4,
    to: 5,
    up: ({ droppedMessageCount, ...rest }) => ({ ...rest, reduction: { dropped: droppedMessageCount } }),
  }),
  // 5 -> 6: a "pinned" list was added.
  defineMigration({ type: "bench.History", from: 5, to: 6, up: (v) => ({ ...v, pinned: [] }) }),
];

/** v1 -> v6, one rewrite of every message per step. */
const rewriteSteps = [
  // 1 -> 2: the list was called "items".
  defineMigration({
    type: "bench.History",
    from: 1,
    to: 2,
    up: ({ items, ...rest }) => ({ ...rest, messages: items }),
  }),
  // 2 -> 3: "author" became "authorName".
  defineMigration({
    type: "bench.History",
    from: 2,
    to: 3,
    up: (v) => each(v, "messages", ({ author, ...m }) => (author === undefined ? m : { ...m, authorName: author })),
  }),
  // 3 -> 4: "time" (epoch ms) became "createdAt" (ISO-8601).
  defineMigration({
    type: "bench.History",
    from: 3,
    to: 4,
    up: (v) =>
      each(v, "messages", ({ time, ...m }) =>
        time === undefined ? m : { ...m, createdAt: new Date(time as number).toISOString() },
      ),
  }),
  // 4 -> 5: "contents" became required.
  defineMigration({
    type: "bench.History",
    from: 4,
    to: 5,
    up: (v) => each(v, "messages", (m) => ({ ...m, contents: m.contents ?? [] })),
  }),
  // 5 -> 6: "id" became "messageId".
  defineMigration({
    type: "bench.History",
    from: 5,
    to: 6,
    up: (v) => each(v, "messages", ({ id, ...m }) => (id === undefined ? m : { ...m, messageId: id })),
  }),
];

function registry(steps: typeof stateSteps): TypeRegistry {
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

/** The same session at version 6 (current) and as version 1 would have stored it (state-level chain). */
function stateDocuments(): { current: string; old: string } {
  const base = makeSession({ messages: 1000 });
  const messages = (base.stateBag[HISTORY_KEY] as unknown as { messages: Msg[] }).messages;
  const history = {
    $type: "bench.History",
    $version: 6,
    messages,
    label: "support chat",
    reduction: { dropped: 0 },
    pinned: [],
  };
  const current: AgentSession = { ...base, stateBag: { history: history as never } };
  const old = { ...base, stateBag: { history: { $type: "bench.History", items: messages, title: "support chat" } } };
  return {
    current: JSON.stringify({ format: "statebag.session", formatVersion: 1, session: current }),
    old: JSON.stringify({ format: "statebag.session", formatVersion: 1, session: old }),
  };
}

/** The same session at version 6 (current) and as version 1 would have stored it (message rewrites). */
function rewriteDocuments(): { current: string; old: string } {
  const base = makeSession({ messages: 1000 });
  const messages = (base.stateBag[HISTORY_KEY] as unknown as { messages: Msg[] }).messages;
  const current: AgentSession = {
    ...base,
    stateBag: { history: { $type: "bench.History", $version: 6, messages: messages as never } },
  };
  const v1 = messages.map(({ authorName, createdAt, messageId, ...m }) => ({
    ...m,
    ...(authorName !== undefined ? { author: authorName } : {}),
    ...(createdAt !== undefined ? { time: Date.parse(createdAt as string) } : {}),
    ...(messageId !== undefined ? { id: messageId } : {}),
  }));
  const old = { ...base, stateBag: { history: { $type: "bench.History", items: v1 } } };
  return {
    current: JSON.stringify({ format: "statebag.session", formatVersion: 1, session: current }),
    old: JSON.stringify({ format: "statebag.session", formatVersion: 1, session: old }),
  };
}

export async function migrationCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const outcomes: CaseOutcome[] = [];
  for (const [name, steps, docs] of [
    ["migrate.lazy5.1000", stateSteps, stateDocuments()],
    ["migrate.lazy5rewrite.1000", rewriteSteps, rewriteDocuments()],
  ] as const) {
    const reg = registry(steps);
    const { current, old } = docs;
    // The migrated document must equal the current one (up to timestamp formatting), or the bench is wrong.
    const migrated = deserializeSession(old, { registry: reg, strict: true });
    const expected = deserializeSession(current, { registry: reg, strict: true });
    const norm = (s: AgentSession) =>
      JSON.stringify(s, (k, v) =>
        k === "createdAt"
          ? new Date(v).getTime()
          : v && typeof v === "object" && !Array.isArray(v)
            ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
            : v,
      );
    if (norm(migrated) !== norm(expected))
      throw new Error(`${name}: the migrated session differs from the current one`);
    serializeSession(migrated, { registry: reg });
    ctx.log(name);
    outcomes.push(
      result(
        name,
        "load.1000 (no migration)",
        await compare(
          () => deserializeSession(old, { registry: reg }),
          () => deserializeSession(current, { registry: reg }),
          ctx.fast,
        ),
      ),
    );
  }
  return outcomes;
}
