/**
 * Peers measured in the same run, on the same conversations:
 *
 *   peer.openai-agents.load.1000        deserializeSession(text) vs RunState.fromString(agent, text) of the
 *                                        OpenAI Agents JS SDK, each on its own text of the same 1,000-message
 *                                        conversation (ratio < 1: statebag is faster)
 *   peer.openai-agents.fromString.1000  RunState.fromString vs JSON.parse of its own text (compare with load.1000,
 *                                        statebag's load vs JSON.parse of its own text)
 *   peer.langgraph.<sqlite|postgres>.saveload
 *                                        statebag's store: save + update (compare-and-swap) + load of 1,000
 *                                        sessions of 20 messages, vs LangGraph JS's checkpoint saver on the same
 *                                        database: put (first checkpoint) + put (the next step's checkpoint) +
 *                                        getTuple, for 1,000 threads holding the same messages
 *
 * The peers are not statebag's dependencies: they live in bench/peers (its own package.json and lock,
 * `npm ci --prefix bench/peers`), kept out of the root install because LangGraph's SQLite saver
 * builds better-sqlite3 natively. Without them these cases are skipped, with the command to run.
 * Each peer's input is built the way its docs build it (an Agent and a RunState; LangChain message
 * objects in a checkpoint's `messages` channel), and both sides are checked to hold the same
 * messages before anything is timed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import type { AgentSession, AIContent, ChatMessage } from "../../src/index.js";
import { deserializeSession, serializeSession } from "../../src/runtime/persistence/serialization.js";
import { openStore } from "../../src/stores.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { compare, compareWithSetup, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession, makeSessions } from "../sessions.js";
import { PG_URL } from "../stores-probe.js";
import { unreachable } from "./stores.js";

const PEERS_DIR = new URL("../peers/", import.meta.url);
const INSTALL = "npm ci --prefix bench/peers";

/** A peer package from bench/peers/node_modules, or undefined when it is not installed. */
async function peer(name: string): Promise<any | undefined> {
  let resolved: string;
  try {
    resolved = createRequire(new URL("package.json", PEERS_DIR)).resolve(name);
  } catch {
    return undefined;
  }
  return import(pathToFileURL(resolved).href);
}

function history(session: AgentSession): ChatMessage[] {
  return (session.stateBag[HISTORY_KEY] as unknown as { messages: ChatMessage[] }).messages;
}

function texts(contents: readonly AIContent[], type: "text" | "reasoning"): string[] {
  return contents.filter((c) => c.$type === type).map((c) => (c as { text: string }).text);
}

/** What both sides must hold: every text, call and result, in order. */
function fingerprint(messages: readonly ChatMessage[]): string[] {
  const out: string[] = [];
  for (const message of messages)
    for (const content of message.contents) {
      if (content.$type === "text" || content.$type === "reasoning")
        out.push(`${message.role}:${content.$type}:${(content as { text: string }).text}`);
      else if (content.$type === "functionCall")
        out.push(
          `call:${(content as { callId: string }).callId}:${JSON.stringify((content as { arguments: unknown }).arguments)}`,
        );
      else if (content.$type === "functionResult")
        out.push(
          `result:${(content as { callId: string }).callId}:${JSON.stringify((content as { result: unknown }).result)}`,
        );
    }
  return out;
}

function sameMessages(name: string, ours: string[], theirs: string[]): void {
  if (ours.length !== theirs.length || ours.some((v, i) => v !== theirs[i])) {
    const at = ours.findIndex((v, i) => v !== theirs[i]);
    throw new Error(
      `${name}: the peer's document does not hold the same messages (first difference at ${at}: ${ours[at]} vs ${theirs[at]})`,
    );
  }
}

// --- OpenAI Agents JS: a RunState whose input is the conversation so far -------------------------

/** The conversation as Agents SDK protocol items (what `run(agent, history)` keeps in a RunState). */
function agentItems(messages: readonly ChatMessage[]): unknown[] {
  const items: unknown[] = [];
  for (const message of messages) {
    for (const content of message.contents) {
      if (content.$type === "functionCall") {
        const call = content as { callId: string; name: string; arguments: unknown };
        items.push({
          type: "function_call",
          callId: call.callId,
          name: call.name,
          arguments: JSON.stringify(call.arguments),
          status: "completed",
        });
      } else if (content.$type === "functionResult") {
        const toolResult = content as { callId: string; result: unknown };
        items.push({
          type: "function_call_result",
          callId: toolResult.callId,
          name: "get_weather",
          status: "completed",
          output: { type: "text", text: JSON.stringify(toolResult.result) },
        });
      }
    }
    for (const text of texts(message.contents, "reasoning"))
      items.push({ type: "reasoning", content: [{ type: "input_text", text }] });
    const said = texts(message.contents, "text");
    if (said.length === 0) continue;
    items.push(
      message.role === "user"
        ? { type: "message", role: "user", content: said.map((text) => ({ type: "input_text", text })) }
        : {
            type: "message",
            role: "assistant",
            status: "completed",
            content: said.map((text) => ({ type: "output_text", text })),
          },
    );
  }
  return items;
}

/** The same fingerprint, read back from the peer's restored items. */
function agentFingerprint(items: readonly any[]): string[] {
  const out: string[] = [];
  for (const item of items) {
    if (item.type === "function_call") out.push(`call:${item.callId}:${JSON.stringify(JSON.parse(item.arguments))}`);
    else if (item.type === "function_call_result")
      out.push(`result:${item.callId}:${JSON.stringify(JSON.parse(item.output.text))}`);
    else if (item.type === "reasoning") for (const part of item.content) out.push(`assistant:reasoning:${part.text}`);
    else if (item.type === "message") for (const part of item.content) out.push(`${item.role}:text:${part.text}`);
  }
  return out;
}

/** statebag's fingerprint in the peer's item order (reasoning before the text of the same message). */
function orderedFingerprint(messages: readonly ChatMessage[]): string[] {
  const out: string[] = [];
  for (const message of messages) {
    for (const entry of fingerprint([
      {
        ...message,
        contents: message.contents.filter((c) => c.$type === "functionCall" || c.$type === "functionResult"),
      },
    ]))
      out.push(entry);
    for (const text of texts(message.contents, "reasoning")) out.push(`assistant:reasoning:${text}`);
    for (const text of texts(message.contents, "text")) out.push(`${message.role}:text:${text}`);
  }
  return out;
}

async function openAIAgentsCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const names = ["peer.openai-agents.load.1000", "peer.openai-agents.fromString.1000"];
  const sdk = await peer("@openai/agents-core");
  if (!sdk) return names.map((n) => skipped(n, `peer not installed: ${INSTALL}`));
  const session = makeSession({ messages: 1000 });
  const ours = serializeSession(session);
  const agent = new sdk.Agent({ name: "assistant", instructions: "You are a helpful assistant." });
  const state = new sdk.RunState(new sdk.RunContext(), agentItems(history(session)), agent, 10);
  const theirs: string = state.toString();
  const restored = await sdk.RunState.fromString(agent, theirs);
  sameMessages(
    "openai-agents",
    orderedFingerprint(history(deserializeSession(ours))),
    agentFingerprint(restored._originalInput),
  );
  ctx.log(
    `peer.openai-agents.load.1000 (ours ${(ours.length / 1024).toFixed(0)} KiB, RunState ${(theirs.length / 1024).toFixed(0)} KiB)`,
  );
  return [
    result(
      names[0],
      "OpenAI Agents RunState.fromString",
      await compare(
        () => deserializeSession(ours),
        () => sdk.RunState.fromString(agent, theirs),
        ctx.fast,
      ),
    ),
    result(
      names[1],
      "JSON.parse (its own text)",
      await compare(
        () => sdk.RunState.fromString(agent, theirs),
        () => JSON.parse(theirs),
        ctx.fast,
      ),
    ),
  ];
}

// --- LangGraph JS checkpoint savers ---------------------------------------------------------------

const THREADS = 1000;
const MESSAGES = 20;

/** The conversation as LangChain messages, as a LangGraph chat graph keeps them in `messages`. */
function langchainMessages(lc: any, messages: readonly ChatMessage[]): unknown[] {
  const out: unknown[] = [];
  for (const message of messages) {
    const text = texts(message.contents, "text").join("\n");
    const calls = message.contents.filter((c) => c.$type === "functionCall") as {
      callId: string;
      name: string;
      arguments: Record<string, unknown>;
    }[];
    const results = message.contents.filter((c) => c.$type === "functionResult") as {
      callId: string;
      result: unknown;
    }[];
    const reasoning = texts(message.contents, "reasoning");
    if (message.role === "user") out.push(new lc.HumanMessage({ content: text, id: message.messageId }));
    else if (message.role === "tool")
      for (const row of results)
        out.push(
          new lc.ToolMessage({ content: JSON.stringify(row.result), tool_call_id: row.callId, id: message.messageId }),
        );
    else
      out.push(
        new lc.AIMessage({
          content: text,
          id: message.messageId,
          tool_calls: calls.map((c) => ({ id: c.callId, name: c.name, args: c.arguments, type: "tool_call" })),
          additional_kwargs: reasoning.length ? { reasoning_content: reasoning.join("\n") } : {},
        }),
      );
  }
  return out;
}

function langchainFingerprint(messages: readonly any[]): string[] {
  const out: string[] = [];
  for (const message of messages) {
    const type = message._getType();
    if (type === "tool") {
      out.push(`result:${message.tool_call_id}:${JSON.stringify(JSON.parse(message.content))}`);
      continue;
    }
    for (const call of message.tool_calls ?? []) out.push(`call:${call.id}:${JSON.stringify(call.args)}`);
    if (message.additional_kwargs?.reasoning_content)
      out.push(`assistant:reasoning:${message.additional_kwargs.reasoning_content}`);
    if (message.content !== "") out.push(`${type === "human" ? "user" : "assistant"}:text:${message.content}`);
  }
  return out;
}

/** statebag's fingerprint in LangChain's message order (calls, reasoning, then text). */
function langchainOrderedFingerprint(messages: readonly ChatMessage[]): string[] {
  const out: string[] = [];
  for (const message of messages) {
    for (const content of message.contents) {
      if (content.$type === "functionCall")
        out.push(
          `call:${(content as { callId: string }).callId}:${JSON.stringify((content as { arguments: unknown }).arguments)}`,
        );
      if (content.$type === "functionResult")
        out.push(
          `result:${(content as { callId: string }).callId}:${JSON.stringify((content as { result: unknown }).result)}`,
        );
    }
    const reasoning = texts(message.contents, "reasoning");
    if (reasoning.length) out.push(`assistant:reasoning:${reasoning.join("\n")}`);
    const text = texts(message.contents, "text").join("\n");
    if (text !== "") out.push(`${message.role}:text:${text}`);
  }
  return out;
}

interface Saver {
  put(config: unknown, checkpoint: unknown, metadata: unknown, versions: unknown): Promise<any>;
  getTuple(config: unknown): Promise<any>;
}

/** put + put + getTuple per thread, the way a two-step graph run and a later read use a saver. */
async function langgraphRun(
  checkpoint: any,
  saver: Saver,
  threads: { id: string; messages: unknown[]; next: unknown[] }[],
  prefix: string,
): Promise<number> {
  let checked = 0;
  for (const thread of threads) {
    const config = { configurable: { thread_id: `${prefix}${thread.id}`, checkpoint_ns: "" } };
    const first = {
      ...checkpoint.emptyCheckpoint(),
      id: checkpoint.uuid6(-1),
      channel_values: { messages: thread.messages },
      channel_versions: { messages: 1 },
    };
    const saved = await saver.put(config, first, { source: "loop", step: 0, parents: {} }, { messages: 1 });
    const second = {
      ...checkpoint.emptyCheckpoint(),
      id: checkpoint.uuid6(-1),
      channel_values: { messages: thread.next },
      channel_versions: { messages: 2 },
    };
    await saver.put(saved, second, { source: "loop", step: 1, parents: {} }, { messages: 2 });
    const tuple = await saver.getTuple(config);
    checked += tuple.checkpoint.channel_values.messages.length;
  }
  return checked;
}

/** save + update + load per session through statebag's store. */
async function statebagRun(store: SessionStore, sessions: AgentSession[], prefix: string): Promise<number> {
  let checked = 0;
  for (const stored of sessions) {
    const session = { ...stored, id: `${prefix}${stored.id}` };
    const revision = await store.save(session, { expectedRevision: null });
    await store.save(session, { expectedRevision: revision });
    checked += history((await store.get(session.id))!.session).length;
  }
  return checked;
}

async function langgraphCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const kinds = ["sqlite", "postgres"] as const;
  const [checkpoint, lc, sqliteSaver, postgresSaver] = await Promise.all([
    peer("@langchain/langgraph-checkpoint"),
    peer("@langchain/core/messages"),
    peer("@langchain/langgraph-checkpoint-sqlite"),
    peer("@langchain/langgraph-checkpoint-postgres"),
  ]);
  if (!checkpoint || !lc)
    return kinds.map((k) => skipped(`peer.langgraph.${k}.saveload`, `peer not installed: ${INSTALL}`));
  const sessions = makeSessions(THREADS, MESSAGES, "peer");
  const threads = sessions.map((s) => ({
    id: s.id,
    messages: langchainMessages(lc, history(s).slice(0, MESSAGES - 2)),
    next: langchainMessages(lc, history(s)),
  }));
  const out: CaseOutcome[] = [];
  for (const kind of kinds) {
    const name = `peer.langgraph.${kind}.saveload`;
    const saverModule = kind === "sqlite" ? sqliteSaver : postgresSaver;
    if (!saverModule) {
      out.push(skipped(name, `peer not installed: ${INSTALL}`));
      continue;
    }
    const reason = await unreachable(kind);
    if (reason) {
      out.push(skipped(name, `server not reachable: ${reason}`));
      continue;
    }
    const dir = mkdtempSync(join(tmpdir(), "statebag-peer-"));
    const schema = `bench_peer_${randomBytes(4).toString("hex")}`;
    const store = await openStore(
      kind === "sqlite" ? `sqlite:${join(dir, "sessions.db")}` : `${PG_URL}?schema=${schema}`,
    );
    let saver: Saver & { setup?(): Promise<void>; end?(): Promise<void>; db?: { close(): void } };
    if (kind === "sqlite") saver = sqliteSaver.SqliteSaver.fromConnString(join(dir, "sessions.db"));
    else {
      saver = postgresSaver.PostgresSaver.fromConnString(PG_URL, { schema });
      await store.setup?.();
    }
    await saver.setup?.();
    try {
      // Same messages on both sides, checked through each side's own read path.
      await statebagRun(store, sessions.slice(0, 1), "check-");
      await langgraphRun(checkpoint, saver, threads.slice(0, 1), "check-");
      const ours = history((await store.get(`check-${sessions[0].id}`))!.session);
      const theirs = (
        await saver.getTuple({ configurable: { thread_id: `check-${threads[0].id}`, checkpoint_ns: "" } })
      ).checkpoint.channel_values.messages;
      sameMessages(name, langchainOrderedFingerprint(ours), langchainFingerprint(theirs));
      ctx.log(
        `${name} (${THREADS} threads x ${MESSAGES} messages, ${ctx.slowSamples} round${ctx.slowSamples === 1 ? "" : "s"})`,
      );
      let round = 0;
      const timing = await compareWithSetup(
        { setup: () => void round++, run: () => statebagRun(store, sessions, `r${round}-`) },
        { run: () => langgraphRun(checkpoint, saver, threads, `r${round}-`) },
        ctx.slowSamples,
      );
      out.push(
        result(name, `LangGraph ${kind === "sqlite" ? "SqliteSaver" : "PostgresSaver"} put+put+getTuple`, timing),
      );
    } finally {
      await store.close();
      if (kind === "postgres") {
        await saver.end?.();
        const { Client } = (await import("pg")).default;
        const client = new Client({ connectionString: PG_URL });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      } else saver.db?.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

export async function peerCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  return [...(await openAIAgentsCases(ctx)), ...(await langgraphCases(ctx))];
}
