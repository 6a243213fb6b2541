/**
 * Answering tool approvals against a session store, so an approved tool runs exactly once even when
 * the answering process is retried after a save conflict or dies half way.
 *
 * One atomic run cannot promise that: the tool's side effect happens before the run's single save,
 * so a save that conflicts (or a crash before it) would leave the request pending and a retry would
 * run the tool again. Here the work is split into saves that each survive a retry:
 *
 *   1. record the answers and claim the round: every call of it gets this call's token
 *      (`startedBy`), so the calls that will run are claimed before anything has run (a conflict
 *      just reloads and records again);
 *   2. run the claimed calls and merge their results into the latest stored session (a conflict
 *      merges again; the results are in hand, nothing runs twice);
 *   3. continue the conversation with an ordinary run (`withSession`, retried on conflict): it finds
 *      every result already stored and only calls the model.
 *
 * The claim is also what keeps two answerers of the same round apart: only its holder continues.
 * Another call answering the same requests at the same time records nothing new, claims nothing,
 * writes nothing and ends with a `ToolApprovalError`: `tool-approval-in-progress` while the holder
 * is at work, `tool-approval-answered` once the round is closed. Without that, it would run the
 * model again on a conversation already continued (a second reply, even a new approval request).
 * A holder that fails after step 2 (a model error, an abort) gives its claim back, so a retry can
 * continue at once.
 *
 * A process that dies leaves its claim; once the claim is older than the agent's
 * `toolClaimTimeoutMs`, another call may continue the round, and a claimed call without a result is
 * reported to the model as having an unknown outcome. It is never run a second time. Tools get the
 * model's call id, a stable idempotency key for side effects of their own.
 */
import { randomUUID } from "node:crypto";
import type { ToolApprovalRequestContent } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { SessionStore } from "../stores/types.js";
import { withSession } from "../stores/with-session.js";
import type { ChatClientAgent, RunOptions } from "./agent.js";
import type { AgentResponse } from "./response.js";
import { quoted } from "../core/json.js";
import {
  recordAnswers,
  runTool,
  ToolApprovalError,
  toolApprovalState,
  unanswered,
  willRun,
  type PendingToolCall,
  type ToolApprovalAnswer,
  type ToolApprovalState,
} from "./approvals.js";
import type { FunctionResultContent } from "../core/messages.js";

export interface AnswerToolApprovalsOptions extends Omit<RunOptions, "approvals"> {
  /**
   * Send the results to the model once every request is answered (step 3). Default true. With
   * false, the results are stored and the round is left unclaimed: the application continues it
   * (`agent.run([], session)`).
   */
  continue?: boolean;
  /** Reloads after a save conflict, per step. Default 5. */
  retries?: number;
  /** Time to live of the saved revisions, in ms (as `withSession`). */
  ttlMs?: number;
}

export interface AnswerToolApprovalsResult {
  /** The continued run's response; absent when requests still wait or `continue` is false. */
  response?: AgentResponse;
  /** Requests of the round still waiting for an answer (empty once the round could run). */
  pendingApprovals: ToolApprovalRequestContent[];
  /** Ids of the calls this call ran. */
  executed: string[];
  /** The session's stored revision afterwards. */
  revision: number;
}

/**
 * Answers pending tool approval requests of a stored session and, once all are answered, runs the
 * approved calls exactly once and continues the conversation. Answers are matched by request id or
 * call id. Repeating an answer already recorded (a retry after a crash) is accepted; a different
 * answer to an answered request, or an id the session does not hold, is a `ToolApprovalError`.
 * When another call answers the same round at the same time, one of them continues the
 * conversation; the other writes nothing and throws `ToolApprovalError` (`tool-approval-in-progress`
 * while the first is at work, `tool-approval-answered` once the round is closed).
 */
export async function answerToolApprovals(
  store: SessionStore,
  sessionId: string,
  agent: ChatClientAgent,
  answers: readonly ToolApprovalAnswer[],
  options: AnswerToolApprovalsOptions = {},
): Promise<AnswerToolApprovalsResult> {
  const retries = options.retries ?? 5;
  const proceed = options.continue !== false;
  const claim = randomUUID();
  const runnable = (name: string) => agent.tools.some((t) => t.name === name && t.execute);
  // Calls step 2 runs: approved, no result yet, a tool of the agent's own (tools a context provider
  // adds exist only inside a run: step 3 runs those, atomically).
  const runsHere = (entry: PendingToolCall) => willRun(entry) && !entry.result && runnable(entry.call.name);

  // 1. Record the answers; claim the round. Nothing new to record and nothing to claim (another
  // call got here first) writes nothing.
  let state!: ToolApprovalState;
  let revision = await update(store, sessionId, retries, options.ttlMs, (session) => {
    const before = toolApprovalState.read(session);
    state = recordAnswers(before, answers, { repeatIsRetry: true });
    let changed = state.pending.some(
      (entry, i) => entry.response !== undefined && before?.pending[i]?.response === undefined,
    );
    if (unanswered(state).length === 0) {
      const now = new Date().toISOString();
      for (const entry of state.pending) {
        if (entry.startedBy !== undefined) continue;
        // Without a continuation nothing is held past step 2: only the calls it runs are claimed.
        if (!proceed && !runsHere(entry)) continue;
        entry.startedAt = now;
        entry.startedBy = claim;
        changed = true;
      }
    }
    if (changed) toolApprovalState.write(session, state);
    return changed;
  });
  const waiting = unanswered(state);
  if (waiting.length) return { pendingApprovals: structuredClone(waiting), executed: [], revision };
  const round = new Set(state.pending.flatMap((entry) => (entry.request ? [entry.request.requestId] : [])));

  // 2. Run what this call claimed; merge the results into whatever is stored now. An abort stops
  // before the next call: the results already in hand are still saved, and the claims are given
  // back, so calls that never started are not reported as an unknown outcome later.
  const results = new Map<string, FunctionResultContent>();
  const claimed = state.pending.filter((entry) => entry.startedBy === claim && runsHere(entry));
  for (const entry of claimed) {
    if (options.signal?.aborted) break;
    const tool = agent.tools.find((t) => t.name === entry.call.name && t.execute)!;
    results.set(
      entry.call.callId,
      await runTool(tool, entry.call, { sessionId, callId: entry.call.callId, signal: options.signal }),
    );
  }
  // Stopping here (no continuation, or aborted) gives the claims back with the results.
  const stopping = !proceed || options.signal?.aborted === true;
  if (claimed.length > 0 || stopping) {
    revision = await update(store, sessionId, retries, options.ttlMs, (session) => {
      const latest = toolApprovalState.read(session);
      if (!latest?.pending.some((entry) => entry.startedBy === claim)) return false;
      const merged = structuredClone(latest);
      for (const entry of merged.pending) {
        if (entry.startedBy !== claim) continue;
        const result = results.get(entry.call.callId);
        if (result && !entry.result) entry.result = result;
        if (stopping) {
          delete entry.startedBy;
          delete entry.startedAt;
        }
      }
      toolApprovalState.write(session, merged);
      return true;
    });
  }
  const executed = [...results.keys()];
  if (!proceed) {
    options.signal?.throwIfAborted();
    return { pendingApprovals: [], executed, revision };
  }

  // 3. Continue, only while this call holds the round (it is still open and nobody else's claim is
  // live): every result is stored, so a retried run only repeats the model call.
  const { ttlMs: _ttl, retries: _retries, continue: _continue, ...runOptions } = options;
  try {
    options.signal?.throwIfAborted();
    const done = await withSession(
      store,
      sessionId,
      (session) => {
        const latest = toolApprovalState.read(session);
        const open = latest?.pending.find((entry) => entry.request && round.has(entry.request.requestId));
        if (!latest || !open) throw roundClosed(round);
        const now = Date.now();
        for (const entry of latest.pending) {
          if (entry.startedBy === undefined || entry.startedBy === claim) continue;
          const age = now - Date.parse(entry.startedAt ?? "");
          if (Number.isFinite(age) && age < agent.toolClaimTimeoutMs)
            throw roundInProgress(entry, agent.toolClaimTimeoutMs);
        }
        // The run sees the round as nobody's: ours is this very run; a stale claim on a call step 2
        // never runs was only a continuation's, so the call runs as in any round.
        const mine = structuredClone(latest);
        for (const entry of mine.pending) {
          if (
            entry.startedBy === claim ||
            (entry.startedBy !== undefined && !entry.result && !runnable(entry.call.name))
          ) {
            delete entry.startedBy;
            delete entry.startedAt;
          }
        }
        toolApprovalState.write(session, mine);
        return agent.run([], session, runOptions);
      },
      { onConflict: "retry", retries, create: false, ttlMs: options.ttlMs },
    );
    return {
      response: done.value,
      pendingApprovals: done.value.pendingApprovals ?? [],
      executed,
      revision: done.revision,
    };
  } catch (error) {
    await release(store, sessionId, retries, options.ttlMs, claim).catch(() => undefined);
    throw error;
  }
}

function roundClosed(round: ReadonlySet<string>): ToolApprovalError {
  const id = [...round][0];
  return new ToolApprovalError(
    "tool-approval-answered",
    `approval request ${quoted(id)} was answered and its round closed by another call while this one was answering it; this call saved nothing more`,
    "another process answered the same requests and continued the conversation: reload the session to see its reply",
    id,
  );
}

function roundInProgress(entry: PendingToolCall, timeoutMs: number): ToolApprovalError {
  const id = entry.request?.requestId ?? entry.call.callId;
  return new ToolApprovalError(
    "tool-approval-in-progress",
    `the round of approval request ${quoted(id)} is being answered by another call (it claimed the round at ${entry.startedAt}); this call changed nothing`,
    `reload the session later to see the outcome; if that process stopped, the round can be continued once its claim is older than ${timeoutMs} ms`,
    id,
  );
}

/**
 * After step 2, a failure gives the claim back (results stay), so a retry continues at once instead
 * of waiting for the claim to go stale. A call with neither result nor release keeps its claim: it
 * may have run.
 */
async function release(
  store: SessionStore,
  id: string,
  retries: number,
  ttlMs: number | undefined,
  claim: string,
): Promise<void> {
  await update(store, id, retries, ttlMs, (session) => {
    const latest = toolApprovalState.read(session);
    if (!latest?.pending.some((entry) => entry.startedBy === claim)) return false;
    const next = structuredClone(latest);
    for (const entry of next.pending) {
      if (entry.startedBy !== claim) continue;
      delete entry.startedBy;
      delete entry.startedAt;
    }
    toolApprovalState.write(session, next);
    return true;
  });
}

/** Thrown out of `withSession` to skip a save that would change nothing. */
class Unchanged {
  constructor(readonly revision: number) {}
}

/**
 * Load, change, save with compare-and-swap; on a conflict, load the fresh copy and change it again.
 * `change` returns false when it changed nothing: then nothing is saved (the revision stays).
 */
async function update(
  store: SessionStore,
  id: string,
  retries: number,
  ttlMs: number | undefined,
  change: (session: AgentSession) => boolean,
): Promise<number> {
  try {
    const done = await withSession(
      store,
      id,
      (session, context) => {
        if (!change(session)) throw new Unchanged(context.revision!);
      },
      { onConflict: "retry", retries, create: false, ttlMs },
    );
    return done.revision;
  } catch (error) {
    if (error instanceof Unchanged) return error.revision;
    throw error;
  }
}
