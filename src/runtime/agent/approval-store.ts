/**
 * Answering tool approvals against a session store, so an approved tool runs exactly once even when
 * the answering process is retried after a save conflict or dies half way.
 *
 * One atomic run cannot promise that: the tool's side effect happens before the run's single save,
 * so a save that conflicts (or a crash before it) would leave the request pending and a retry would
 * run the tool again. Here the work is split into saves that each survive a retry:
 *
 *   1. record the answers and claim the calls that will run (nothing has run yet, so a conflict
 *      just reloads and records again);
 *   2. run the claimed calls and merge their results into the latest stored session (a conflict
 *      merges again; the results are in hand, nothing runs twice);
 *   3. continue the conversation with an ordinary run (`withSession`, retried on conflict): it finds
 *      every result already stored and only calls the model.
 *
 * A process that dies between 1 and 2 leaves a claim without a result; once the claim is older than
 * the agent's `toolClaimTimeoutMs`, the call is reported to the model as having an unknown outcome.
 * It is never run a second time. Tools get the model's call id, a stable idempotency key for side
 * effects of their own.
 */
import { randomUUID } from "node:crypto";
import type { ToolApprovalRequestContent } from "../core/messages.js";
import type { AgentSession } from "../core/session.js";
import type { SessionStore } from "../stores/types.js";
import { withSession } from "../stores/with-session.js";
import type { AgentResponse, ChatClientAgent, RunOptions } from "./agent.js";
import { recordAnswers, runTool, toolApprovalState, unanswered, willRun, type ToolApprovalAnswer, type ToolApprovalState } from "./approvals.js";
import type { FunctionResultContent } from "../core/messages.js";

export interface AnswerToolApprovalsOptions extends Omit<RunOptions, "approvals"> {
  /** Send the results to the model once every request is answered (step 3). Default true. */
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
 */
export async function answerToolApprovals(
  store: SessionStore,
  sessionId: string,
  agent: ChatClientAgent,
  answers: readonly ToolApprovalAnswer[],
  options: AnswerToolApprovalsOptions = {},
): Promise<AnswerToolApprovalsResult> {
  const retries = options.retries ?? 5;
  const claim = randomUUID();
  const runnable = (name: string) => agent.tools.some((t) => t.name === name && t.execute);

  // 1. Record the answers; claim the calls that will run.
  let state!: ToolApprovalState;
  let revision = await update(store, sessionId, retries, options.ttlMs, (session) => {
    state = recordAnswers(toolApprovalState.read(session), answers, { repeatIsRetry: true });
    if (unanswered(state).length === 0) {
      const now = new Date().toISOString();
      for (const entry of state.pending) {
        // Tools a context provider adds exist only inside a run: step 3 runs those, atomically.
        if (willRun(entry) && !entry.result && entry.startedBy === undefined && runnable(entry.call.name)) {
          entry.startedAt = now;
          entry.startedBy = claim;
        }
      }
    }
    toolApprovalState.write(session, state);
  });
  const waiting = unanswered(state);
  if (waiting.length) return { pendingApprovals: structuredClone(waiting), executed: [], revision };

  // 2. Run what this call claimed; merge the results into whatever is stored now. An abort stops
  // before the next call: the results already in hand are still saved, and the claims on calls
  // that never started are released, so neither is reported as an unknown outcome later.
  const results = new Map<string, FunctionResultContent>();
  const claimed = state.pending.filter((entry) => entry.startedBy === claim);
  for (const entry of claimed) {
    if (options.signal?.aborted) break;
    const tool = agent.tools.find((t) => t.name === entry.call.name && t.execute)!;
    results.set(entry.call.callId, await runTool(tool, entry.call, { sessionId, callId: entry.call.callId, signal: options.signal }));
  }
  if (claimed.length) {
    revision = await update(store, sessionId, retries, options.ttlMs, (session) => {
      const latest = toolApprovalState.read(session);
      if (!latest) return;
      const merged = structuredClone(latest);
      for (const entry of merged.pending) {
        if (entry.startedBy !== claim || entry.result) continue;
        const result = results.get(entry.call.callId);
        if (result) entry.result = result;
        else {
          delete entry.startedBy;
          delete entry.startedAt;
        }
      }
      toolApprovalState.write(session, merged);
    });
  }
  options.signal?.throwIfAborted();
  const executed = [...results.keys()];
  if (options.continue === false) return { pendingApprovals: [], executed, revision };

  // 3. Continue: every result is stored, so a retried run only repeats the model call.
  const { ttlMs: _ttl, retries: _retries, continue: _continue, ...runOptions } = options;
  const done = await withSession(store, sessionId, (session) => agent.run([], session, runOptions), { onConflict: "retry", retries, create: false, ttlMs: options.ttlMs });
  return { response: done.value, pendingApprovals: done.value.pendingApprovals ?? [], executed, revision: done.revision };
}

/** Load, change, save with compare-and-swap; on a conflict, load the fresh copy and change it again. */
async function update(store: SessionStore, id: string, retries: number, ttlMs: number | undefined, change: (session: AgentSession) => void): Promise<number> {
  return (await withSession(store, id, change, { onConflict: "retry", retries, create: false, ttlMs })).revision;
}
