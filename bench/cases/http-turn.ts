/**
 * http.turn.<sqlite|postgres|redis>.1000: one chat turn through `createChatHandler` (POST /chat
 * with a user message as useChat sends it, the response's UI message stream read to its end) on a
 * stored 1,000-message chat, against the same turn through `withSession` + `agent.runStream` (its
 * updates read to their end) on a 1,000-message session of the same store.
 *
 * The handler's turn is what a chat server does on every request, from the Request the framework
 * hands over (built before the clock starts: an app serving the turn with withSession gets one
 * too) to the response's last byte: read the body, read the chat (owner check), open the turn's
 * stream in the store's stream buffer with the user's message as its first chunk (the busy lock
 * and the message's durability), run the agent, send the UI chunks, commit the answer with
 * compare-and-swap; the buffer's last chunks and the stream's end follow the response. The
 * baseline is load, run, save. Both sides use the same agent and the bench model (streaming, in
 * word-sized updates), whose own time is taken out of every sample (bench/bench-model.ts).
 *
 * Before every timed turn the handler's previous turn is waited for to its very end (its stream's
 * last append and finish come after the response's end) and its side's session is put back to its
 * 1,000 messages (untimed), so on both sides the turn reads the row written last and no sample
 * carries the work of the one before. Sides alternate which goes first.
 *
 * http.turn.<kind>.1000.idle: the same samples of the handler's turn, timed on to `handler.idle()`
 * (the stream's last append and finish included, which the client does not wait for), against the
 * same baseline: what the turn costs the server, not only what the user waits for.
 */
import { ChatClientAgent } from "../../src/runtime/agent/agent.js";
import type { ChatMessage } from "../../src/runtime/core/messages.js";
import type { AgentSession } from "../../src/runtime/core/session.js";
import { createChatHandler } from "../../src/runtime/http/handler.js";
import type { SessionStore } from "../../src/runtime/stores/types.js";
import { withSession } from "../../src/runtime/stores/with-session.js";
import { BenchModel } from "../bench-model.js";
import { median, result, skipped, type BenchContext, type CaseOutcome } from "../harness.js";
import { HISTORY_KEY, makeSession } from "../sessions.js";
import { makeSides } from "../stores-probe.js";
import { storeUrls, unreachable } from "./stores.js";
import { TURN_KINDS } from "./turns.js";

const OWNER = "ada";
const CHAT_ID = "bench-chat";
const TEXT = "What is the weather like in Lisbon today?";

function historyOf(session: AgentSession): ChatMessage[] {
  return (session.stateBag[HISTORY_KEY] as unknown as { messages: ChatMessage[] }).messages;
}

/** Puts `session` back as stored (untimed), whatever revision the last turn left. */
async function putBack(
  store: SessionStore,
  session: AgentSession,
  meta?: { owner: string; labels: Record<string, string> },
) {
  const stored = await store.get(session.id);
  await store.save(session, { expectedRevision: stored?.revision ?? null, ...(meta ? { meta } : {}) });
}

/** Reads a response body to its end; returns the bytes read. */
async function drain(response: Response): Promise<number> {
  if (response.status !== 200) throw new Error(`POST /chat answered ${response.status}: ${await response.text()}`);
  const reader = response.body!.getReader();
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return bytes;
    bytes += value.byteLength;
  }
}

export async function httpTurnCases(ctx: BenchContext): Promise<CaseOutcome[]> {
  const out: CaseOutcome[] = [];
  const samples = ctx.quick ? 15 : 41;
  for (const kind of TURN_KINDS) {
    const name = `http.turn.${kind}.1000`;
    const reason = await unreachable(kind);
    if (reason) {
      out.push(
        skipped(name, `server not reachable: ${reason}`),
        skipped(`${name}.idle`, `server not reachable: ${reason}`),
      );
      continue;
    }
    ctx.log(`${name} (${samples} turns per side)`);
    const { ours, raw } = await makeSides(kind, kind === "sqlite" ? undefined : storeUrls[kind]);
    try {
      const store = ours.store!;
      const client = new BenchModel({ usage: true });
      client.expected = 1001;
      const agent = new ChatClientAgent({ client, name: "bench" });
      const handler = createChatHandler({ agent, store, owner: (request) => request.headers.get("x-owner") ?? "" });
      const chatMeta = { owner: OWNER, labels: { "statebag.type": "chat" } };
      const chat = makeSession({ messages: 1000, id: `ui-chat/${CHAT_ID}` });
      const plain = makeSession({ messages: 1000, id: "bench-plain" });
      let turn = 0;
      // The Request as the framework hands it to the route: built before the clock starts, since an
      // app answering the turn with withSession + runStream gets one just the same (reading its
      // body is the handler's, and timed).
      const request = () => {
        const id = `u-${++turn}`;
        const body = JSON.stringify({
          id: CHAT_ID,
          messages: [{ id, role: "user", parts: [{ type: "text", text: TEXT }] }],
          trigger: "submit-message",
        });
        return new Request("http://bench.test/api/chat", {
          method: "POST",
          headers: { "content-type": "application/json", "x-owner": OWNER },
          body,
        });
      };
      const handlerTurn = async (posted = request()) => {
        await drain(await handler(posted));
      };
      const plainTurn = async () => {
        await withSession(store, plain.id, async (session) => {
          for await (const _ of agent.runStream(TEXT, session));
        });
      };
      // Each side's session is put back right before its own turn: the row a turn reads is then
      // the one written last on both sides (putting both back first favoured whichever came second).
      // The handler's last turn is over first, its stream's tail included (its last append and its
      // finish follow the response's end): no sample carries work of the one before (untimed).
      const reset = async (side?: 0 | 1) => {
        await handler.idle();
        if (side !== 1) await putBack(store, chat, chatMeta);
        if (side !== 0) await putBack(store, plain);
      };
      const times: [number[], number[]] = [[], []];
      const untilIdle: number[] = [];
      for (let i = -5; i < samples; i++) {
        for (const side of i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const)) {
          await reset(side);
          const posted = side === 0 ? request() : undefined;
          client.spent = 0;
          const start = performance.now();
          await (posted ? handlerTurn(posted) : plainTurn());
          const ms = performance.now() - start - client.spent;
          if (i >= 0) times[side].push(ms);
          if (side === 0) {
            await handler.idle();
            if (i >= 0) untilIdle.push(performance.now() - start - client.spent);
          }
        }
      }
      // Both sides stored the turn: 1,002 messages each (checked once, untimed).
      await reset();
      await handlerTurn();
      await plainTurn();
      for (const id of [chat.id, plain.id]) {
        // The handler's commit may land just after the last chunk was read: wait for it.
        for (let tries = 0; ; tries++) {
          const stored = await store.get(id);
          const historyLength = stored ? historyOf(stored.session).length : 0;
          if (historyLength === 1002) break;
          if (tries > 100) throw new Error(`${id}: a turn stored ${historyLength} messages, expected 1,002`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      const baseline = "withSession + agent.runStream, same store and model (model time out)";
      out.push(result(name, baseline, { ours_ms: median(times[0]), baseline_ms: median(times[1]) }));
      out.push(result(`${name}.idle`, baseline, { ours_ms: median(untilIdle), baseline_ms: median(times[1]) }));
    } finally {
      await ours.close();
      await raw.close();
    }
  }
  return out;
}
