/**
 * langgraph.* (issue #38): what the statebag checkpointer (`createStatebagSaver`) costs a LangGraph
 * graph, against LangGraph's own savers on the same work.
 *
 * Workload (one sample): a new thread of 10 supersteps, each what the Pregel loop does with a saver:
 * `put` (a checkpoint whose `messages` channel grew by a user and an assistant message; only that
 * channel in newVersions), `putWrites` (the node's write of its two messages) and `getTuple` (the
 * next step's read). Messages are LangChain objects; both sides are checked to give back the same
 * messages before anything is timed.
 *
 *   langgraph.memory.steps10     saver on statebag's memory store vs LangGraph's MemorySaver
 *   langgraph.sqlite.steps10     saver on statebag's SQLite store vs LangGraph's SqliteSaver (bench/peers)
 *   langgraph.postgres.steps10   saver on statebag's PostgreSQL store vs LangGraph's PostgresSaver (bench/peers)
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { emptyCheckpoint, MemorySaver, uuid6 } from "@langchain/langgraph-checkpoint";
import { createStatebagSaver } from "../../src/langgraph.js";
import { openStore } from "../../src/stores.js";
import { compareWithSetup, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { PG_URL } from "../stores-probe.js";
import { unreachable } from "./stores.js";

const STEPS = 10;
const INSTALL = "npm run bench:peers";

interface Saver {
  put(config: unknown, checkpoint: unknown, metadata: unknown, versions: unknown): Promise<any>;
  putWrites(config: unknown, writes: [string, unknown][], taskId: string): Promise<void>;
  getTuple(config: unknown): Promise<any>;
}

async function peer(name: string): Promise<any | undefined> {
  try {
    const resolved = createRequire(new URL("../peers/package.json", import.meta.url)).resolve(name);
    return await import(pathToFileURL(resolved).href);
  } catch {
    return undefined;
  }
}

function turn(step: number): BaseMessage[] {
  return [
    new HumanMessage({ content: `What is the weather like in Lisbon today? (${step})`, id: `h${step}` }),
    new AIMessage({ content: `Sunny, 24 degrees, light wind from the north-west. (${step})`, id: `a${step}` }),
  ];
}

/** One thread of STEPS supersteps; returns the message count read back last (checked, and kept live). */
async function thread(saver: Saver, threadId: string): Promise<number> {
  let config: any = { configurable: { thread_id: threadId, checkpoint_ns: "" } };
  const messages: BaseMessage[] = [];
  let read = 0;
  for (let step = 1; step <= STEPS; step++) {
    const mine = turn(step);
    messages.push(...mine);
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: [...messages] },
      channel_versions: { messages: step },
    };
    config = await saver.put(config, checkpoint, { source: "loop", step, parents: {} }, { messages: step });
    await saver.putWrites(config, [["messages", mine]], `task-${step}`);
    const tuple = await saver.getTuple(config);
    read = tuple.checkpoint.channel_values.messages.length + tuple.pendingWrites.length;
  }
  return read;
}

async function one(
  ctx: BenchContext,
  name: string,
  baselineName: string,
  ours: Saver,
  theirs: Saver,
): Promise<CaseOutcome> {
  const oursThread = await thread(ours, `check-a-${name}`);
  const theirsThread = await thread(theirs, `check-b-${name}`);
  if (oursThread !== STEPS * 2 + 1 || theirsThread !== oursThread)
    throw new Error(`${name}: the savers read back different threads (${oursThread} vs ${theirsThread})`);
  ctx.log(`${name} (${STEPS} supersteps per thread, ${ctx.slowSamples} rounds)`);
  let round = 0;
  const timing = await compareWithSetup(
    { setup: () => void round++, run: () => thread(ours, `r${round}-${randomBytes(4).toString("hex")}`) },
    { run: () => thread(theirs, `r${round}-${randomBytes(4).toString("hex")}`) },
    ctx.slowSamples,
  );
  return result(name, `LangGraph ${baselineName} put+putWrites+getTuple`, timing);
}

export async function langgraphCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  {
    const store = await openStore("memory:");
    try {
      out.push(
        await one(ctx, "langgraph.memory.steps10", "MemorySaver", await createStatebagSaver(store), new MemorySaver()),
      );
    } finally {
      await store.close();
    }
  }
  const [sqlitePeer, postgresPeer] = await Promise.all([
    peer("@langchain/langgraph-checkpoint-sqlite"),
    peer("@langchain/langgraph-checkpoint-postgres"),
  ]);
  if (!sqlitePeer) out.push(skipped("langgraph.sqlite.steps10", `peer not installed: ${INSTALL}`));
  else {
    const dir = mkdtempSync(join(tmpdir(), "statebag-lg-bench-"));
    const store = await openStore(`sqlite:${join(dir, "sessions.db")}`);
    const theirs = sqlitePeer.SqliteSaver.fromConnString(join(dir, "langgraph.db"));
    try {
      out.push(await one(ctx, "langgraph.sqlite.steps10", "SqliteSaver", await createStatebagSaver(store), theirs));
    } finally {
      await store.close();
      theirs.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const reason = await unreachable("postgres");
  if (!postgresPeer || reason)
    out.push(
      skipped(
        "langgraph.postgres.steps10",
        postgresPeer ? `server not reachable: ${reason}` : `peer not installed: ${INSTALL}`,
      ),
    );
  else {
    const schema = `bench_lg_${randomBytes(4).toString("hex")}`;
    const store = await openStore(`${PG_URL}?schema=${schema}`);
    await store.setup();
    const theirs = postgresPeer.PostgresSaver.fromConnString(PG_URL, { schema: `${schema}_lg` });
    await theirs.setup();
    try {
      out.push(await one(ctx, "langgraph.postgres.steps10", "PostgresSaver", await createStatebagSaver(store), theirs));
    } finally {
      await store.close();
      await theirs.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await theirs.pool.query(`DROP SCHEMA IF EXISTS "${schema}_lg" CASCADE`);
      await theirs.end();
    }
  }
  return out;
}
