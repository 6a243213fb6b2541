/**
 * `statebag import --from langgraph-sqlite|langgraph-postgres`: tables LangGraph's own savers wrote
 * become statebag chat sessions holding the same conversation, with a dry run that writes nothing,
 * a re-run that imports nothing twice, and a loss report naming what had no statebag field.
 *
 * The tables come from the real SqliteSaver/PostgresSaver when bench/peers is installed
 * (`npm run bench:peers`); the SQLite case also runs on tables written here with SqliteSaver's exact
 * DDL and serializer format (from its source), so it runs without the peers too.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { pathToFileURL } from "node:url";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { emptyCheckpoint, JsonPlusSerializer, uuid6 } from "@langchain/langgraph-checkpoint";
import { afterAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import { openStore } from "../../src/stores.js";
import { cli, REPO } from "../cli/helpers.js";
import { PG_URL, serverUp, uniqueName } from "../stores/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "statebag-lg-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A LangGraph saver package from bench/peers, or undefined when the peers are not installed. */
async function peer(name: string): Promise<any | undefined> {
  try {
    const resolved = createRequire(join(REPO, "bench/peers/package.json")).resolve(name);
    return await import(pathToFileURL(resolved).href);
  } catch {
    return undefined;
  }
}
const sqlitePeer = await peer("@langchain/langgraph-checkpoint-sqlite");
const postgresPeer = await peer("@langchain/langgraph-checkpoint-postgres");
if (!sqlitePeer || !postgresPeer)
  console.warn(
    "[statebag tests] LangGraph's own savers are not installed (npm run bench:peers): import runs on DDL-built tables only",
  );

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  turns: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }),
});

/** Three turns of a chat graph on `saver`, in two threads; returns what LangGraph itself reads back. */
async function runChats(saver: any): Promise<Record<string, [string, string][]>> {
  const graph = new StateGraph(State)
    .addNode("model", (s: typeof State.State) => ({
      messages: [new AIMessage({ content: `reply ${s.turns + 1}`, response_metadata: { model: "stub" } })],
      turns: s.turns + 1,
    }))
    .addEdge(START, "model")
    .addEdge("model", END)
    .compile({ checkpointer: saver });
  const out: Record<string, [string, string][]> = {};
  for (const thread of ["alpha", "beta"]) {
    const config = { configurable: { thread_id: thread } };
    for (const text of ["one", "two", "three"]) await graph.invoke({ messages: [new HumanMessage(text)] }, config);
    const state = await graph.getState(config);
    out[thread] = state.values.messages.map((m: BaseMessage) => [m.getType(), String(m.content)]);
  }
  return out;
}

const asPairs = (messages: ChatMessage[]) =>
  messages.map((m) => [
    m.role === "user" ? "human" : m.role === "assistant" ? "ai" : m.role,
    m.contents.map((c) => (c.$type === "text" ? c.text : "")).join(""),
  ]);

/** The import's checks, the same for every source. */
async function checkImport(from: string, input: string, expected: Record<string, [string, string][]>) {
  const storeUrl = `sqlite:${join(dir, `${uniqueName()}.db`)}`;
  const dry = await cli(["import", "--from", from, input, "--store", storeUrl, "--dry-run", "--json"]);
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.json()).toMatchObject({ ok: true, dryRun: true, threads: 2, wouldImport: 2, imported: 0 });

  const run = await cli(["import", "--from", from, input, "--store", storeUrl, "--json"]);
  expect(run.code, run.stderr).toBe(0);
  const report = run.json();
  expect(report).toMatchObject({ ok: true, threads: 2, imported: 2, exists: 0, failed: 0 });
  const losses = Object.fromEntries(report.losses.map((l: { what: string }) => [l.what, l]));
  expect(losses["channel turns"]).toMatchObject({
    threads: 2,
    kept: 'verbatim in stateBag["langgraph.import"].channels',
  });
  expect(losses["older checkpoints"].count).toBeGreaterThan(0);
  expect(losses["message field response_metadata"]).toMatchObject({ count: 6, threads: 2 });

  const store = await openStore(storeUrl);
  try {
    for (const thread of ["alpha", "beta"]) {
      const stored = await store.get(thread);
      const history = stored!.session.stateBag["statebag.chatHistory"] as unknown as { messages: ChatMessage[] };
      expect(asPairs(history.messages)).toEqual(expected[thread]);
      expect(history.messages[1].additionalProperties?.langchain).toMatchObject({
        kwargs: { response_metadata: { model: "stub" } },
      });
      const kept = stored!.session.stateBag["langgraph.import"] as unknown as {
        channels: { channel: string; json: unknown }[];
      };
      expect(kept.channels.find((c) => c.channel === "turns")?.json).toBe(3);
    }
  } finally {
    await store.close();
  }

  // Resumable: a re-run finds every thread there and writes nothing.
  const again = await cli(["import", "--from", from, input, "--store", storeUrl, "--json"]);
  expect(again.json()).toMatchObject({ ok: true, imported: 0, exists: 2 });
  const text = await cli(["import", "--from", from, input, "--store", storeUrl]);
  expect(text.stdout).toContain("what had no statebag field, and how it was kept:");
}

describe("statebag import --from langgraph-sqlite", () => {
  it.runIf(sqlitePeer)("imports the tables LangGraph's SqliteSaver wrote", async () => {
    const file = join(dir, "real.db");
    const saver = sqlitePeer.SqliteSaver.fromConnString(file);
    const expected = await runChats(saver);
    saver.db.close();
    await checkImport("langgraph-sqlite", file, expected);
  });

  it("imports tables written with SqliteSaver's DDL and serializer format", async () => {
    const file = join(dir, "ddl.db");
    const db = new DatabaseSync(file);
    // The DDL of @langchain/langgraph-checkpoint-sqlite 1.x (SqliteSaver.setup).
    db.exec(`CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
      checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,
      PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
      CREATE TABLE IF NOT EXISTS writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
      checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT,
      value BLOB, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));`);
    const serde = new JsonPlusSerializer();
    const insert = db.prepare(
      "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, '', ?, ?, ?, ?, ?)",
    );
    const expected: Record<string, [string, string][]> = {};
    for (const thread of ["alpha", "beta"]) {
      const messages: BaseMessage[] = [];
      let parent: string | null = null;
      for (const [i, text] of ["one", "two", "three"].entries()) {
        messages.push(
          new HumanMessage(text),
          new AIMessage({ content: `reply ${i + 1}`, response_metadata: { model: "stub" } }),
        );
        // SqliteSaver.put: the whole checkpoint (channel values inside) and the metadata through serde.dumpsTyped.
        const checkpoint = {
          ...emptyCheckpoint(),
          id: uuid6(-1),
          channel_values: { messages: [...messages], turns: i + 1 },
        };
        const [type, body] = await serde.dumpsTyped(checkpoint);
        const [, meta] = await serde.dumpsTyped({ source: "loop", step: i, parents: {} });
        insert.run(thread, checkpoint.id, parent, type, body, meta);
        parent = checkpoint.id;
      }
      expected[thread] = messages.map((m) => [m.getType(), String(m.content)]);
    }
    db.close();
    await checkImport("langgraph-sqlite", file, expected);
  });

  it("refuses a SQLite file without LangGraph's tables, and a missing file, with a fix", async () => {
    const file = join(dir, "other.db");
    new DatabaseSync(file).close();
    const r = await cli(["import", "--from", "langgraph-sqlite", file, "--store", `sqlite:${join(dir, "x.db")}`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no LangGraph checkpoints table");
    const missing = await cli(["import", "--from", "langgraph-sqlite", join(dir, "nope.db"), "--store", "sqlite:x.db"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no such file");
  });
});

describe.runIf(serverUp.postgres && postgresPeer)("statebag import --from langgraph-postgres", () => {
  it("imports the tables LangGraph's PostgresSaver wrote (its schema from ?schema=)", async () => {
    const schema = `lgimport_${uniqueName()}`;
    const saver = postgresPeer.PostgresSaver.fromConnString(PG_URL, { schema });
    try {
      await saver.setup();
      const expected = await runChats(saver);
      await checkImport("langgraph-postgres", `${PG_URL}?schema=${schema}`, expected);
    } finally {
      await saver.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await saver.end();
    }
  });
});
